//===- Builtins.cpp - Compiler builtins the generated code may call -------===//
//
// __truncsfbf2 (f32 to bf16, round to nearest even), which compiler-rt and
// GCC 13's libgcc define and Debian 12's GCC 12 libgcc does not. The
// lowering expands every bf16 conversion of the step into integer code
// (zero-expand-bf16), but LLVM's own optimizations can still bring one
// back: InstCombine turns a select of two i16-to-bf16 bitcasts into a
// select of bf16 values, and when the vectorizer makes that a <2 x bfloat>
// on a CPU without bf16 instructions, type legalization computes it in f32
// and calls this builtin to round back (exactly: every value came from
// bf16). Without a definition, such a step fails to load (zero-run) or to
// link (zero-compile). The runtime is in every process that runs a step,
// so it defines the builtin, weak, in case a newer libgcc or compiler-rt
// is linked too.
//
//===----------------------------------------------------------------------===//

#include "BFloat16.h"

#include <cstdint>
#include <cstring>

// Calling convention: the bf16 result is returned in the low 16 bits of the
// first floating-point return register (xmm0 on x86-64, s0/h0 on AArch64),
// the same register a float is returned in. GCC 12 has no __bf16 type, so
// the function returns a float whose low 16 bits are the result; moving its
// bits into the register involves no floating-point arithmetic.
#if defined(__x86_64__) || defined(__aarch64__)
extern "C" __attribute__((visibility("default"), weak)) float
__truncsfbf2(float x) {
  uint32_t bits = zero::runtime::floatToBF16(x);
  float result;
  std::memcpy(&result, &bits, sizeof result);
  return result;
}
#endif
