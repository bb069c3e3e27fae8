//===- Backend.h - zero-runtime backend interface ---------------*- C++ -*-===//
//
// The internal interface behind the C ABI. runtime.h's entry points validate
// arguments, count bytes, calls and FLOPs, and time GEMMs; a Backend only
// provides memory, copies, arithmetic and (on a GPU) kernel launches. Two
// are built: the CPU backend (OpenBLAS, host memory) and the CUDA backend
// (CudaBackend.cpp: device memory, cuBLASLt and kernels on one compute
// stream, the CUDA libraries opened at run time; its NCCL collectives in
// Nccl.cpp). Collectives are not part of it: the world and the MPI
// collectives are in Comm.h, which copies through the backend where a world
// of one rank only copies.
//
// Backends may throw (zero::runtime::Error for invalid input, std::bad_alloc
// for exhausted memory); the C ABI layer catches everything.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_BACKEND_H
#define ZERO_RUNTIME_LIB_BACKEND_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace zero::runtime {

/// An error with a one-line message for zrt_last_error or the fatal handler.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Element types of the collectives (all three) and of the GEMMs (f32, f64;
/// BF16 for a GEMM means bf16 A and B into an f32 C, or a bf16 one with
/// GemmArgs::bf16C, see Backend::nativeBf16Gemm).
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

/// One collective of backend memory across the world's ranks, as a device
/// library takes it (NCCL): `count` elements in each rank's `in` for an
/// all-reduce and an all-gather, in each rank's `out` for a reduce-scatter
/// (so a reduce-scatter reads count * N elements, an all-gather writes
/// them). In place as runtime.h's collectives allow it.
struct DeviceCollective {
  enum class Kind { AllReduce, ReduceScatter, AllGather };
  Kind kind;
  DType dtype;
  /// An all-reduce's maximum instead of its sum.
  bool max = false;
  const void *in;
  void *out;
  int64_t count;
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
  /// Throws std::bad_alloc. The caching layer in Memory.cpp calls it only
  /// on a cache miss and keeps freed blocks for reuse.
  virtual Block allocate(std::size_t bytes, std::size_t alignment,
                         bool zeroed) = 0;

  /// Sets `bytes` bytes at `ptr`, inside a block from allocate(), to zero:
  /// how a reused block is zero-filled again.
  virtual void fillZero(void *ptr, std::size_t bytes) = 0;

  /// Returns a block from allocate() to the system. Never throws.
  virtual void deallocate(const Block &block) noexcept = 0;

  /// Returns to the system what the backend holds beyond its live blocks
  /// (the CUDA backend's empty segments). Never throws.
  virtual void trim() noexcept {}

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

  /// Whether the host may read and write this backend's blocks directly.
  /// If not (device memory), drivers and the runtime go through the copies
  /// below.
  virtual bool hostAccessible() const { return true; }

  /// Copies `bytes` bytes of backend memory at `src` to host memory at
  /// `dst`, after the work queued before it; returns when the bytes are
  /// there.
  virtual void copyToHost(void *dst, const void *src, std::size_t bytes);

  /// Copies `bytes` bytes of host memory at `src` into backend memory at
  /// `dst`, ahead of the work queued after it; `src` may be reused as soon
  /// as this returns.
  virtual void copyFromHost(void *dst, const void *src, std::size_t bytes);

  /// Copies `bytes` bytes between two places of backend memory (they do not
  /// overlap), in order with the queued work.
  virtual void copy(void *dst, const void *src, std::size_t bytes);

  /// Waits for every piece of work queued so far.
  virtual void synchronize() {}

  /// Where host-space blocks (ZRT_SPACE_HOST) come from: host memory next
  /// to this backend's. A backend of host memory is its own.
  virtual Backend &hostMemory() { return *this; }

  /// The memory this backend's device has free and in all, as its driver
  /// reports them, for an out-of-memory error to say; false where there is
  /// no such figure (host memory).
  virtual bool deviceMemoryInfo(std::size_t &free, std::size_t &total) {
    (void)free;
    (void)total;
    return false;
  }

  /// Starts copying `bytes` bytes from `src` to `dst` (blocks of this
  /// backend or of hostMemory(), in either direction) after the work
  /// queued before it; returns a handle (>= 0) for copyWait. The default
  /// copies before returning.
  virtual int64_t copyStart(void *dst, const void *src, std::size_t bytes);

  /// Waits until the copy of `handle` is complete.
  virtual void copyWait(int64_t handle) { (void)handle; }

  /// The compute stream generated kernels are launched on (a CUstream).
  /// Throws Error on a backend without kernels.
  virtual void *stream();

  /// Loads a kernel image (a fat binary, a cubin or NUL-terminated PTX text)
  /// and returns its handle; throws Error on failure.
  virtual void *loadModule(const void *image);

  /// The kernel `name` of a module from loadModule(); throws Error if the
  /// module has none of that name.
  virtual void *moduleFunction(void *module, const char *name);

  /// Launches `function` on stream() with the kernel's parameters.
  virtual void launch(void *function, const int64_t grid[3],
                      const int64_t block[3], int32_t sharedBytes,
                      void **params);

  /// Collectives of this backend's memory across several ranks, for a
  /// backend whose memory the MPI collectives cannot touch (the CUDA
  /// backend's NCCL). Comm.cpp calls these with the world's lock held, on
  /// the thread that runs the collective.
  ///
  /// Whether the backend has them (built with the library's headers).
  virtual bool hasDeviceCollectives() const { return false; }
  /// Makes the communicator of rank `rank` of `size`, once per process:
  /// `broadcast` sends `bytes` at `data` from rank 0 to every rank (the
  /// world's MPI). Throws Error with one line.
  virtual void openCollectives(
      int rank, int size,
      const std::function<void(void *data, std::size_t bytes)> &broadcast);
  /// A point in the compute stream's order, for collectiveStart: taken
  /// when a collective is started, so that it runs after the work queued
  /// before the start and not after what was queued before the
  /// communication thread got to it. -1 where the backend has none.
  virtual int64_t markCompute() { return -1; }
  /// Gives back a mark no collective consumed. Never throws.
  virtual void dropMark(int64_t mark) noexcept { (void)mark; }
  /// Queues `c` on the communication stream after the compute stream's
  /// work up to `mark` (markCompute(), which this consumes; -1: all the
  /// work queued so far) and returns a handle for collectiveDone.
  virtual int64_t collectiveStart(const DeviceCollective &c, int64_t mark);
  /// Whether the collective of `handle` has completed on the device (the
  /// handle is then spent). Throws Error when the communicator failed.
  virtual bool collectiveDone(int64_t handle);
  /// Ends the communicator without its peers (one stalled or failed):
  /// what it has queued never completes. Never throws.
  virtual void abortCollectives() noexcept {}
  /// Frees the communicator at the end of a run, every collective on it
  /// completed (zrt_shutdown, before MPI is finalized); the next
  /// openCollectives makes a new one. Throws Error with one line.
  virtual void closeCollectives() {}

  /// Whether f32 GEMMs may use TF32 tensor cores (10-bit mantissa
  /// products, f32 accumulation); returns the previous setting. Only the
  /// CUDA backend has TF32; elsewhere it stays false.
  virtual bool setTf32(bool enable) {
    (void)enable;
    return false;
  }
};

/// The process-wide CPU backend (never destroyed, so blocks it handed out
/// stay releasable during static destruction).
Backend &cpuBackend();
/// Makes `backend` selectable by zrt_init as `name`, besides "cpu" and
/// "cuda": for tests that link the runtime statically and need a backend
/// of their own (runtime/test/device-comm-test.cpp: device collectives
/// without a GPU). `backend` must outlive the process's use of it.
void registerTestBackend(const char *name, Backend &backend);

/// The process-wide CUDA backend, initialized on first use (the CUDA driver
/// and cuBLASLt opened with dlopen, the device chosen, a context and the
/// compute stream created). Throws Error with one line when that fails (no
/// driver, no device, the library missing, a runtime built without the
/// CUDA headers).
Backend &cudaBackend();

} // namespace zero::runtime

#endif // ZERO_RUNTIME_LIB_BACKEND_H
