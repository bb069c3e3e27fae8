//===- Compute.h - GEMMs, copies and kernels of a backend -------*- C++ -*-===//
//
// The second of the runtime's three interfaces (Backend.h): what runs on a
// backend's memory. Compute is every backend's: GEMMs, the copies between
// its memory and the host's in the order of its work, waiting for that work,
// and the host threads' settings. Kernels is the part only a GPU backend
// has: a compute stream, kernel images and launches. runtime.h's entry
// points validate arguments, count and time; these only compute.
//
// Both may throw (Error for invalid input); the C ABI layer catches
// everything.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_COMPUTE_H
#define ZERO_RUNTIME_LIB_COMPUTE_H

#include "Types.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace zero::runtime {

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
  /// With DType::BF16: C is bf16 (the f32 result rounded once, to nearest
  /// even) instead of f32. Only backends with a native bf16 GEMM take it.
  bool bf16C = false;
};

/// A validated batched GEMM: batch >= 2 products as in GemmArgs, matrix i
/// starting `stride * i` elements after the first; strides are >= 0 and the
/// C matrices do not overlap.
struct BatchedGemmArgs {
  int64_t batch;
  GemmArgs first;
  int64_t strideA, strideB, strideC;
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

class Compute {
public:
  virtual ~Compute() = default;

  /// Applies zrt_init's settings. numThreads <= 0 keeps the current count.
  /// The first call also chooses the GEMM kernels; throws Error when the
  /// environment asks for kernels this CPU cannot run.
  virtual void configure(int numThreads) = 0;

  /// Which GEMM kernels run (valid after configure()).
  virtual GemmKernelInfo gemmKernel() const = 0;

  /// Runs one validated GEMM. Throws Error for arguments the backend cannot
  /// take (for example sizes beyond its integer range).
  virtual void gemm(DType dtype, const GemmArgs &args) = 0;

  /// Runs a validated batched GEMM.
  virtual void gemmBatched(DType dtype, const BatchedGemmArgs &args) = 0;

  /// Whether gemm() and gemmBatched() take DType::BF16 (bf16 A and B, f32 C
  /// and beta) themselves. If not, the runtime widens A and B into f32
  /// temporaries on the host first (the CPU backend: Debian's OpenBLAS has
  /// no bf16 GEMM).
  virtual bool nativeBf16Gemm() const { return false; }

  /// Whether f32 GEMMs may use TF32 tensor cores (10-bit mantissa
  /// products, f32 accumulation); returns the previous setting. Only the
  /// CUDA backend has TF32; elsewhere it stays false.
  virtual bool setTf32(bool /*enable*/) { return false; }

  /// Waits for every piece of work queued so far.
  virtual void synchronize() {}

  /// Copies `bytes` bytes of the backend's memory at `src` to host memory
  /// at `dst`, after the work queued before it; returns when the bytes are
  /// there.
  virtual void copyToHost(void *dst, const void *src, std::size_t bytes) = 0;

  /// Copies `bytes` bytes of host memory at `src` into the backend's memory
  /// at `dst`, ahead of the work queued after it; `src` may be reused as
  /// soon as this returns.
  virtual void copyFromHost(void *dst, const void *src, std::size_t bytes) = 0;

  /// Copies `bytes` bytes between two places of the backend's memory (they
  /// do not overlap), in order with the queued work.
  virtual void copy(void *dst, const void *src, std::size_t bytes) = 0;

  /// Starts copying `bytes` bytes from `src` to `dst` (blocks of either of
  /// the backend's memory spaces, in either direction) after the work
  /// queued before it; returns a handle (>= 0) for copyWait. A backend of
  /// host memory copies before returning.
  virtual int64_t copyStart(void *dst, const void *src, std::size_t bytes) = 0;

  /// Waits until the copy of `handle` is complete.
  virtual void copyWait(int64_t handle) = 0;
};

/// The GPU kernels of a backend that has them (the CUDA backend): target=cuda
/// code loads its kernel images and launches them on the compute stream
/// through CudaHooks.cpp.
class Kernels {
public:
  virtual ~Kernels() = default;

  /// The compute stream generated kernels are launched on (a CUstream).
  virtual void *stream() = 0;

  /// Loads a kernel image (a fat binary, a cubin or NUL-terminated PTX text)
  /// and returns its handle; throws Error on failure.
  virtual void *loadModule(const void *image) = 0;

  /// The kernel `name` of a module from loadModule(); throws Error if the
  /// module has none of that name.
  virtual void *moduleFunction(void *module, const char *name) = 0;

  /// Launches `function` on stream() with the kernel's parameters.
  virtual void launch(void *function, const int64_t grid[3],
                      const int64_t block[3], int32_t sharedBytes,
                      void **params) = 0;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_LIB_COMPUTE_H
