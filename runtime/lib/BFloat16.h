//===- BFloat16.h - bf16 <-> f32 conversions --------------------*- C++ -*-===//
//
// bf16 as its 16 bits: the upper half of an f32. Shared by the runtime's
// collectives and GEMM and by the driver (initialization, data); header-only
// and private to the runtime and the driver.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_BFLOAT16_H
#define ZERO_RUNTIME_BFLOAT16_H

#include <cstdint>
#include <cstring>

namespace zero::runtime {

/// The f32 with these bf16 bits (exact).
inline float bf16ToFloat(uint16_t bits) {
  uint32_t u = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// `f` rounded to bf16, to nearest even, as arith.truncf does; a NaN stays
/// a (quiet) NaN.
inline uint16_t floatToBF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

} // namespace zero::runtime

#endif // ZERO_RUNTIME_BFLOAT16_H
