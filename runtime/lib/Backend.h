//===- Backend.h - zero-runtime backend interface ---------------*- C++ -*-===//
//
// The internal interface behind the C ABI. runtime.h's entry points validate
// arguments, count bytes, calls and FLOPs, and time GEMMs; a Backend only
// provides memory and arithmetic. The CPU backend (OpenBLAS) is the one built
// today; a CUDA backend (cudaMalloc/pinned memory, cuBLASLt on a stream)
// implements the same interface, so generated code and zero-run never change
// when it arrives. Collectives are not part of it: the world and the MPI
// collectives are in Comm.h (NCCL ones will sit behind the same entry
// points).
//
// Backends may throw (zero::runtime::Error for invalid input, std::bad_alloc
// for exhausted memory); the C ABI layer catches everything.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_BACKEND_H
#define ZERO_RUNTIME_LIB_BACKEND_H

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace zero::runtime {

/// An error with a one-line message for zrt_last_error or the fatal handler.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Element types of the collectives (all three) and of the GEMMs (f32, f64).
enum class DType { F32, F64, BF16 };

inline int32_t dtypeBytes(DType t) {
  return t == DType::F32 ? 4 : t == DType::F64 ? 8 : 2;
}

/// One validated GEMM: C = A*B + beta*C, row-major, with m, n, k >= 1, each
/// leading dimension at least its row length, and non-null matrices. The
/// pointers point to float or double as the DType says; beta is converted to
/// the element type by the backend.
struct GemmArgs {
  /// Whether A is stored k x m (B: n x k) and read transposed.
  bool transA, transB;
  int64_t m, n, k;
  const void *a;
  int64_t lda;
  const void *b;
  int64_t ldb;
  double beta;
  void *c;
  int64_t ldc;
};

/// A validated batched GEMM: batch >= 2 products as in GemmArgs, matrix i
/// starting `stride * i` elements after the first; strides are >= 0 and the
/// C matrices do not overlap.
struct BatchedGemmArgs {
  int64_t batch;
  GemmArgs first;
  int64_t strideA, strideB, strideC;
};

/// A block of backend memory: `ptr` is what the caller sees, `handle` what
/// the backend needs to release it (for the CPU backend, the base pointer
/// that malloc or calloc returned).
struct Block {
  void *ptr = nullptr;
  void *handle = nullptr;
};

/// Which GEMM kernels run, and why (zrt_get_gemm_backend).
struct GemmKernelInfo {
  /// The library and its build ("OpenBLAS 0.3.21 ... DYNAMIC_ARCH ...").
  std::string library;
  /// The kernels in use ("Cooperlake") and those the library picked for
  /// this CPU by itself.
  std::string kernel, detected;
  /// "blas" (the library's own pick), "cpu-features" (the runtime's pick
  /// from the CPU's instruction sets), "OPENBLAS_CORETYPE" or
  /// "ZERO_BLAS_KERNEL" (set in the environment).
  std::string chosenBy;
};

class Backend {
public:
  virtual ~Backend() = default;

  /// "cpu", "cuda", ...
  virtual const char *name() const = 0;

  /// Applies zrt_init's settings. numThreads <= 0 keeps the current count.
  /// The first call also chooses the GEMM kernels; throws Error when the
  /// environment asks for kernels this CPU cannot run.
  virtual void configure(int numThreads) = 0;

  /// Which GEMM kernels run (valid after configure()).
  virtual GemmKernelInfo gemmKernel() const = 0;

  /// Returns `bytes` bytes (bytes >= 1) aligned to `alignment`, a power of
  /// two >= 64: zero-filled if `zeroed`, with unspecified contents otherwise
  /// (so a backend need not pay for zeroing what the caller overwrites).
  /// Throws std::bad_alloc. The caching layer in Runtime.cpp calls it only
  /// on a cache miss and keeps freed blocks for reuse.
  virtual Block allocate(std::size_t bytes, std::size_t alignment,
                         bool zeroed) = 0;

  /// Sets `bytes` bytes at `ptr`, inside a block from allocate(), to zero:
  /// how a reused block is zero-filled again.
  virtual void fillZero(void *ptr, std::size_t bytes) = 0;

  /// Returns a block from allocate() to the system. Never throws.
  virtual void deallocate(const Block &block) noexcept = 0;

  /// Runs one validated GEMM. Throws Error for arguments the backend cannot
  /// take (for example sizes beyond its integer range).
  virtual void gemm(DType dtype, const GemmArgs &args) = 0;

  /// Runs a validated batched GEMM.
  virtual void gemmBatched(DType dtype, const BatchedGemmArgs &args) = 0;
};

/// The process-wide CPU backend (never destroyed, so blocks it handed out
/// stay releasable during static destruction).
Backend &cpuBackend();

} // namespace zero::runtime

#endif // ZERO_RUNTIME_LIB_BACKEND_H
