//===- Types.h - What every layer of zero-runtime shares --------*- C++ -*-===//
//
// The runtime's error type and the element types of its GEMMs and
// collectives: what the C ABI's files, the backends (backends/) and the
// communicators (comm/) all name. Nothing else belongs here.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_TYPES_H
#define ZERO_RUNTIME_LIB_TYPES_H

#include <cstdint>
#include <stdexcept>

namespace zero::runtime {

/// An error with a one-line message for zrt_last_error or the fatal handler.
/// Every layer may throw it; the C ABI layer catches everything.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Element types of the collectives (all three) and of the GEMMs (f32, f64;
/// BF16 for a GEMM means bf16 A and B into an f32 C, or a bf16 one with
/// GemmArgs::bf16C, see Compute::nativeBf16Gemm).
enum class DType { F32, F64, BF16 };

inline int32_t dtypeBytes(DType t) {
  return t == DType::F32 ? 4 : t == DType::F64 ? 8 : 2;
}

} // namespace zero::runtime

#endif // ZERO_RUNTIME_LIB_TYPES_H
