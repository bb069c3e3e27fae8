/*===- runtime.h - zero-mlir runtime C ABI ------------------------*- C -*-===*
 *
 * The C ABI that lowered training steps and zero-run call: backend set-up,
 * allocation with per-category accounting, GEMM with call and FLOP counters,
 * collectives over the data-parallel ranks (MPI) with call, byte and time
 * counters, and the fatal-error channel for calls from generated code. The
 * header is C99 (and C++) compatible and names no backend: the CPU backend
 * (OpenBLAS, MPI) and later a CUDA one (cuBLASLt, NCCL) sit behind the same
 * entry points.
 *
 * Conventions:
 *  - Every entry point is thread-safe.
 *  - No entry point lets a C++ exception escape. Entry points with a return
 *    channel report failure through it and set zrt_last_error(); entry points
 *    without one (the GEMMs, the _mlir_memref_to_llvm_* hooks, zrt_free) call
 *    the fatal handler (zrt_set_fatal_handler).
 *  - Sizes, leading dimensions and strides are counted in elements, matrices
 *    are row-major.
 *  - Before zrt_init (or after zrt_shutdown) the first call that needs a
 *    backend initializes the "cpu" backend with its default thread count.
 *    Likewise the first call that needs the world of ranks sets it up.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZERO_RUNTIME_H
#define ZERO_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define ZRT_API
#else
#define ZRT_API __attribute__((visibility("default")))
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ZRT_NORETURN __attribute__((noreturn))
#else
#define ZRT_NORETURN
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Set-up and errors
 *===----------------------------------------------------------------------===*/

/* Selects and initializes a backend. `backend` is "cpu" (NULL means "cpu")
 * or "cuda": device memory, cuBLASLt GEMMs and generated kernels in order
 * on one compute stream of one GPU (the device ZERO_CUDA_DEVICE names, else
 * the rank's local rank modulo the devices it sees). The CUDA driver
 * (libcuda.so.1) and cuBLASLt (libcublasLt.so.13) are opened at run time,
 * so nothing of CUDA is needed by a program that selects "cpu"; selecting
 * "cuda" where they or a device are missing fails with a line that says
 * which. `num_threads` > 0 sets
 * the number of threads for GEMMs and parallel loops (see "Threads"); <= 0
 * keeps the current (initially OpenBLAS's default count, which honours
 * OPENBLAS_NUM_THREADS and OMP_NUM_THREADS). Calling it again is safe:
 * it re-selects the backend and applies `num_threads`; allocations and
 * counters survive. It also sets up the world of data-parallel ranks if
 * that has not happened yet (see "World and collectives" below; under
 * mpirun this is where MPI is initialized). Returns 0 on success, nonzero
 * on failure with zrt_last_error() set. */
ZRT_API int zrt_init(const char *backend, int num_threads);

/* Deselects the backend and returns the block cache to the system
 * (zrt_release_cached). Live allocations stay valid and accounted and can
 * still be freed; counters are kept. A later call that needs a backend
 * initializes "cpu" again. If the runtime initialized MPI, zrt_shutdown
 * finalizes it; like MPI_Finalize it is then collective (every rank must
 * call it) and final for the world: zrt_world_rank and zrt_world_size keep
 * their values, but collectives over more than one rank go to the fatal
 * handler from then on (MPI cannot be initialized twice in a process). A
 * driver must call it on every rank before a normal exit: under mpirun a
 * rank that exits without finalizing makes the job fail. */
ZRT_API void zrt_shutdown(void);

/* The message of the most recent failure on the calling thread (including
 * the message passed to the fatal handler), or "" if there was none.
 * Successful calls leave it unchanged. The pointer stays valid until the
 * next failure on the same thread. Never NULL. */
ZRT_API const char *zrt_last_error(void);

/* Called with a one-line message (no trailing newline) when a call without a
 * return channel fails: invalid GEMM arguments, an allocation by generated
 * code that cannot be satisfied, freeing a pointer the runtime does not own,
 * an invalid category. The runtime holds no lock and owns no resource of the
 * failing call while the handler runs, so a handler may longjmp or (from
 * C++) throw out of it. If the handler returns, the failing call does
 * nothing (allocation hooks return NULL). */
typedef void (*zrt_fatal_handler)(const char *message);

/* Installs `handler`; NULL restores the default, which prints
 * "zero-runtime: error: <message>" to stderr and calls exit(1) (no abort: no
 * crash signal, no core dump). In a world of more than one rank it prints
 * "zero-runtime: error: rank <r> of <N>: <message>" instead. Whenever the
 * runtime's world is on MPI (see "World and collectives"), it ends the job
 * with MPI_Abort(MPI_COMM_WORLD, 1) instead of exit(1), so that ranks
 * blocked in a collective do not wait forever for the failed one (and a
 * world of one under mpirun ends at once); mpirun then exits with status 1.
 * Collectives go to the fatal handler on invalid arguments and on MPI
 * errors (checked return codes, never MPI's own abort). */
ZRT_API void zrt_set_fatal_handler(zrt_fatal_handler handler);

/*===----------------------------------------------------------------------===*
 * Memory
 *===----------------------------------------------------------------------===*/

/* What an allocation holds; every byte allocated through the runtime counts
 * towards exactly one category. */
typedef enum zrt_category {
  ZRT_PARAMS = 0,
  ZRT_GRADS = 1,
  ZRT_OPTIMIZER_STATES = 2,
  ZRT_ACTIVATIONS = 3, /* activations and temporaries */
  ZRT_COMM = 4,        /* communication buffers */
  ZRT_NUM_CATEGORIES = 5
} zrt_category;

/* "params", "grads", "optimizer_states", "activations", "comm"; "unknown"
 * for any other value. The string is static. */
ZRT_API const char *zrt_category_name(zrt_category category);

/* Block cache. Freed blocks are not returned to the system: the runtime
 * keeps them, keyed by size class, and hands them out again to later
 * requests of the same class (a caching allocator), because a training step
 * frees and reallocates the same temporaries every step. A request of
 * `bytes` gets a block of its size class: `bytes` rounded up to a multiple
 * of 64 below 128 KiB (0 bytes: 64) and of 4096 from 128 KiB on; a cached
 * block serves it only if its address has the alignment asked for. Cached
 * blocks are kept until zrt_release_cached or zrt_shutdown, with no other
 * bound (the working set of a step is stable); only when the system cannot
 * satisfy an allocation is the cache released and the allocation tried
 * once more. Caching changes no byte count of zrt_memory_stats except its
 * cached_bytes, reserved_bytes and reserved_peak. */

/* Allocates `bytes` bytes aligned to 64 bytes, zero-filled (also when the
 * block is a reused one: callers may rely on it), and counts them to
 * `category`. `bytes` may be 0 (a unique pointer that must still be freed).
 * Returns NULL with zrt_last_error() set if memory is exhausted or
 * `category` is invalid. */
ZRT_API void *zrt_alloc(size_t bytes, zrt_category category);

/* Frees a block from zrt_alloc or the _mlir_memref_to_llvm_* hooks (the two
 * are interchangeable), uncounts it from the category it was counted to and
 * puts it into the block cache. NULL is a no-op. A pointer that is not a
 * live runtime allocation (never allocated here, an interior pointer, or
 * already freed, whether its block is cached or not) goes to the fatal
 * handler and is left alone. */
ZRT_API void zrt_free(void *ptr);

/* Returns every cached block to the system (cached_bytes becomes 0). Live
 * blocks are not affected. */
ZRT_API void zrt_release_cached(void);

/* Memory spaces. ZRT_SPACE_DEVICE is the selected backend's memory, where
 * the step's buffers live; ZRT_SPACE_HOST is host memory next to it, where
 * zero-offload's optimizer=host keeps the optimizer states (ZeRO-Offload).
 * With the CUDA backend host blocks are page-locked (cuMemHostAlloc), so
 * copies to and from them run asynchronously; with the CPU backend both
 * spaces are the same memory, and the runtime counts them apart, so a step
 * compiled with optimizer=host reports what a device would hold. */
typedef enum zrt_space {
  ZRT_SPACE_DEVICE = 0,
  ZRT_SPACE_HOST = 1
} zrt_space;

/* As zrt_alloc, in host memory (ZRT_SPACE_HOST), counted to `category`
 * among the host_* figures of zrt_memory_stats. zrt_free frees it. */
ZRT_API void *zrt_alloc_host(size_t bytes, zrt_category category);

/* Byte counts of live blocks (current, peak, current_total, peak_total) are
 * exactly the sizes requested, without headers, padding or size-class
 * rounding, and do not depend on the block cache. peak_total is the peak of
 * current_total, not the sum of the per-category peaks. num_allocs and
 * num_frees count successful calls of all allocation and free entry points
 * since the process started.
 *
 * The last three fields say what the runtime really holds from the system:
 * reserved_bytes is the size-class capacity of the live blocks plus
 * cached_bytes, the capacity of the freed blocks kept in the cache;
 * reserved_peak is the peak of reserved_bytes. They leave out what the
 * system allocator adds (headers, alignment padding).
 *
 * current, peak, current_total and peak_total count device memory
 * (ZRT_SPACE_DEVICE); the host_* fields count host memory (ZRT_SPACE_HOST)
 * the same way. num_allocs, num_frees and the cache figures cover both. */
typedef struct zrt_memory_stats {
  uint64_t current[ZRT_NUM_CATEGORIES];
  uint64_t peak[ZRT_NUM_CATEGORIES];
  uint64_t current_total;
  uint64_t peak_total;
  uint64_t num_allocs;
  uint64_t num_frees;
  uint64_t cached_bytes;
  uint64_t reserved_bytes;
  uint64_t reserved_peak;
  uint64_t host_current[ZRT_NUM_CATEGORIES];
  uint64_t host_peak[ZRT_NUM_CATEGORIES];
  uint64_t host_current_total;
  uint64_t host_peak_total;
} zrt_memory_stats;

/* A consistent snapshot of the counters (taken under one lock). NULL is a
 * no-op. */
ZRT_API void zrt_get_memory_stats(zrt_memory_stats *out);

/* Sets every peak (per category, total and reserved) to its current
 * value. */
ZRT_API void zrt_reset_peaks(void);

/* The allocation hooks of MLIR's finalize-memref-to-llvm with
 * use-generic-functions=1. They count to the generated-code category
 * (zrt_set_generated_category, initially ZRT_ACTIVATIONS). They do NOT
 * zero-fill: the contents of the block are unspecified (a reused block
 * keeps what it held), as memref.alloc's are; generated code writes what it
 * allocates before reading it. _mlir_memref_to_llvm_alloc aligns to 64
 * bytes; the aligned variant to max(alignment, 64), and `alignment` must be
 * a power of two (C's aligned_alloc rule that `size` be a multiple of it is
 * not needed). The bytes counted are `size`, exactly as generated code
 * requests them. Failures (memory exhausted, bad alignment, foreign pointer)
 * go to the fatal handler. */
ZRT_API void *_mlir_memref_to_llvm_alloc(size_t size);
ZRT_API void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
ZRT_API void _mlir_memref_to_llvm_free(void *ptr);

/* Sets the category that later allocations by generated code count to (one
 * process-wide setting, not per thread). An invalid category goes to the
 * fatal handler and leaves the setting unchanged. */
ZRT_API void zrt_set_generated_category(zrt_category category);

/* Sets the memory space later allocations by generated code come from
 * (initially ZRT_SPACE_DEVICE; zero-alloc-categories brackets the host
 * buffers of zero.copy_start with it). An invalid space goes to the fatal
 * handler and leaves the setting unchanged. */
ZRT_API void zrt_set_generated_space(zrt_space space);

/* Starts copying `bytes` bytes from `src` to `dst`, one of them device
 * memory and the other host memory (ZRT_SPACE_HOST), or both runtime
 * buffers of any space: zero.copy_start's lowering. The copy begins after
 * the work queued on the backend before it; returns a request that
 * zrt_wait completes, after which `dst` holds the bytes and `src` may
 * change. The CPU backend copies before returning; the CUDA backend copies
 * on a stream of its own. Invalid arguments go to the fatal handler. */
ZRT_API int64_t zrt_copy_start(const void *src, void *dst, int64_t bytes);

/*===----------------------------------------------------------------------===*
 * Generated code for target=cuda
 *===----------------------------------------------------------------------===*/

/* What a step lowered with target=cuda calls besides the rest of this
 * header (docs/decisions/0036-cuda-every-loop-nest-a-kernel.md), and what a driver uses to reach
 * the buffers of a backend whose memory the host cannot touch. Generated
 * host code never reads or writes a buffer itself: loop nests are kernels,
 * launched on the stream zrt_gpu_stream() returns.
 *
 * zrt_copy_to_host copies `bytes` bytes of runtime memory at `src` (a
 * scalar the host needs: the loss, a clipping coefficient) to host memory
 * at `dst` after the work queued before it, and returns when they are
 * there. zrt_copy_from_host copies host memory into runtime memory ahead
 * of the work queued after it (`src` may be reused on return). With the
 * CPU backend both are a memcpy. Invalid arguments go to the fatal
 * handler. */
ZRT_API void zrt_copy_to_host(void *dst, const void *src, int64_t bytes);
ZRT_API void zrt_copy_from_host(void *dst, const void *src, int64_t bytes);
/* Copies `bytes` bytes between two runtime buffers that do not overlap, in
 * order with the queued work (a driver's out-parameter copies). */
ZRT_API void zrt_copy(void *dst, const void *src, int64_t bytes);

/* 1 if the host may read and write the selected backend's blocks directly
 * (cpu), 0 if they are device memory (cuda): then a driver goes through the
 * copies above. */
ZRT_API int zrt_host_accessible(void);

/* Waits for the work queued on the backend so far (a no-op on the CPU). */
ZRT_API void zrt_synchronize(void);

/* Lets f32 GEMMs use TF32 tensor cores (CUDA backend; products of 10-bit
 * mantissas, f32 accumulation); returns the previous setting. Off by
 * default. The CPU backend has no TF32: it stays 0. */
ZRT_API int zrt_set_tf32(int enable);

/* The stream kernels are launched on: the CUDA backend's compute stream,
 * where its GEMMs, copies and zero fills run too. With any other backend
 * the step cannot run: the fatal handler gets a line saying so. */
ZRT_API void *zrt_gpu_stream(void);

/* The entry points MLIR's gpu-to-LLVM lowering calls (upstream's CUDA
 * runtime wrappers have the same names and types). mgpuModuleLoad runs in a
 * global constructor, before main and zrt_init: it only records the image
 * (a fat binary from gpu-module-to-binary) and returns its handle, so it
 * never fails; the image is loaded into the CUDA backend's context at the
 * module's first mgpuModuleGetFunction, whose functions are then kept by
 * name. mgpuModuleUnload forgets the record. mgpuLaunchKernel launches on
 * the compute stream (another stream is refused). Failures (no CUDA
 * backend selected, a kernel the image lacks, a launch the device refuses)
 * go to the fatal handler with one line. */
ZRT_API void *mgpuModuleLoad(void *data, size_t size);
/* The same for PTX text (gpu-format=isa), which the driver compiles when it
 * loads it. */
ZRT_API void *mgpuModuleLoadJIT(void *data, int opt_level);
ZRT_API void mgpuModuleUnload(void *module);
ZRT_API void *mgpuModuleGetFunction(void *module, const char *name);
ZRT_API void mgpuLaunchKernel(void *function, intptr_t grid_x, intptr_t grid_y,
                              intptr_t grid_z, intptr_t block_x,
                              intptr_t block_y, intptr_t block_z,
                              int32_t shared_bytes, void *stream,
                              void **params, void **extra,
                              size_t param_count);

/*===----------------------------------------------------------------------===*
 * GEMM
 *===----------------------------------------------------------------------===*/

/* C[m,n] = op(A) * op(B) + beta * C[m,n], row-major, the semantics of
 * linalg.matmul with beta = 1 (it accumulates into its init). op(A) is the
 * m x k matrix A, or with trans_a != 0 the transpose of the k x m matrix A
 * (likewise op(B) is k x n, or the transpose of an n x k B): a transposed
 * operand is read in place, never copied. lda, ldb and ldc are the row
 * strides in elements and must be at least the row length of the matrix as
 * stored (A: k, or m when transposed; B: n, or k; C: n) and at least 1;
 * rows must be contiguous. As in BLAS, beta == 0 overwrites C
 * without reading it (NaN in C does not propagate). m == 0 or n == 0 is a
 * no-op; k == 0 only scales C by beta (A and B are not read). A matrix with
 * a single row may have any leading dimension. Invalid arguments (negative
 * sizes, a leading dimension shorter than a row, NULL matrices, sizes beyond
 * the backend's integer range) go to the fatal handler. */
ZRT_API void zrt_gemm_f32(int32_t trans_a, int32_t trans_b, int64_t m,
                          int64_t n, int64_t k, const float *a, int64_t lda,
                          const float *b, int64_t ldb, float beta, float *c,
                          int64_t ldc);
ZRT_API void zrt_gemm_f64(int32_t trans_a, int32_t trans_b, int64_t m,
                          int64_t n, int64_t k, const double *a, int64_t lda,
                          const double *b, int64_t ldb, double beta, double *c,
                          int64_t ldc);

/* linalg.batch_matmul: for i < batch, C_i = A_i * B_i + beta * C_i with
 * A_i = a + i * stride_a, B_i = b + i * stride_b, C_i = c + i * stride_c
 * (strides in elements), each product as in zrt_gemm_*. Strides must be
 * >= 0; a stride of 0 for A or B reuses one matrix for the whole batch; the
 * C matrices must not overlap. With batch <= 1 the strides are ignored.
 * batch == 0 is a no-op. */
ZRT_API void zrt_gemm_batched_f32(int32_t trans_a, int32_t trans_b,
                                  int64_t batch, int64_t m, int64_t n,
                                  int64_t k, const float *a, int64_t stride_a,
                                  int64_t lda, const float *b, int64_t stride_b,
                                  int64_t ldb, float beta, float *c,
                                  int64_t stride_c, int64_t ldc);
ZRT_API void zrt_gemm_batched_f64(int32_t trans_a, int32_t trans_b,
                                  int64_t batch, int64_t m, int64_t n,
                                  int64_t k, const double *a, int64_t stride_a,
                                  int64_t lda, const double *b,
                                  int64_t stride_b, int64_t ldb, double beta,
                                  double *c, int64_t stride_c, int64_t ldc);

/* Mixed precision: A and B are bf16 (their bits as uint16_t), C and beta
 * f32, otherwise as zrt_gemm_f32 and zrt_gemm_batched_f32 (C = A*B + beta*C
 * accumulated in f32). The CPU backend widens A and B exactly into f32
 * temporaries (counted to ZRT_ACTIVATIONS, freed before the call returns:
 * the A and B sizes, one matrix for a stride of 0) and runs the f32 GEMM;
 * the stats count the call as an f32 GEMM. */
ZRT_API void zrt_gemm_bf16_f32(int32_t trans_a, int32_t trans_b, int64_t m,
                               int64_t n, int64_t k, const uint16_t *a,
                               int64_t lda, const uint16_t *b, int64_t ldb,
                               float beta, float *c, int64_t ldc);
ZRT_API void zrt_gemm_batched_bf16_f32(int32_t trans_a, int32_t trans_b,
                                       int64_t batch, int64_t m, int64_t n,
                                       int64_t k, const uint16_t *a,
                                       int64_t stride_a, int64_t lda,
                                       const uint16_t *b, int64_t stride_b,
                                       int64_t ldb, float beta, float *c,
                                       int64_t stride_c, int64_t ldc);

/* Mixed precision with a bf16 result: A, B and C bf16, beta f32;
 * C = A*B + beta*C with the products and the sum accumulated in f32 and
 * rounded once to bf16 (to nearest even, as arith.truncf), which is what a
 * bf16 matmul into an f32 buffer followed by its rounding computes, without
 * the f32 buffer. The CUDA backend runs it in cuBLASLt (a bf16 D); the CPU
 * backend widens A and B (and C unless beta is 0) into f32 temporaries,
 * multiplies into an f32 temporary and rounds it into C (all counted to
 * ZRT_ACTIVATIONS and freed before the call returns). zero-linalg-to-runtime
 * forms these calls for target=cuda (bf16-results). */
ZRT_API void zrt_gemm_bf16_bf16(int32_t trans_a, int32_t trans_b, int64_t m,
                                int64_t n, int64_t k, const uint16_t *a,
                                int64_t lda, const uint16_t *b, int64_t ldb,
                                float beta, uint16_t *c, int64_t ldc);
ZRT_API void zrt_gemm_batched_bf16_bf16(int32_t trans_a, int32_t trans_b,
                                        int64_t batch, int64_t m, int64_t n,
                                        int64_t k, const uint16_t *a,
                                        int64_t stride_a, int64_t lda,
                                        const uint16_t *b, int64_t stride_b,
                                        int64_t ldb, float beta, uint16_t *c,
                                        int64_t stride_c, int64_t ldc);

/* Totals over all GEMM calls since the last reset: `calls` counts entry
 * point calls (a batched call is one call), `flops` adds 2*m*n*k per call
 * (times batch for batched calls), `seconds` is the wall time spent inside
 * the calls (steady clock). Calls rejected as invalid are not counted. */
typedef struct zrt_gemm_stats {
  uint64_t calls;
  uint64_t flops;
  double seconds;
} zrt_gemm_stats;

/* A snapshot of the totals. NULL is a no-op. */
ZRT_API void zrt_get_gemm_stats(zrt_gemm_stats *out);

/* One entry of the per-shape breakdown: calls and time for one
 * (dtype_bytes, batch, m, n, k). dtype_bytes is 4 for f32, 8 for f64;
 * unbatched calls have batch = 1 and share the entry of batched calls with
 * batch 1. */
typedef struct zrt_gemm_shape {
  int32_t dtype_bytes;
  int64_t batch, m, n, k;
  uint64_t calls;
  double seconds;
} zrt_gemm_shape;

/* Number of distinct shapes seen since the last reset. */
ZRT_API size_t zrt_gemm_shape_count(void);

/* Copies entry `index` (< zrt_gemm_shape_count(), in order of first
 * appearance) to `out`. Returns 0, or nonzero with zrt_last_error() set if
 * `index` is out of range or `out` is NULL. */
ZRT_API int zrt_get_gemm_shape(size_t index, zrt_gemm_shape *out);

/* Clears the totals and the per-shape breakdown, and the kernel profile's
 * counts below. */
ZRT_API void zrt_reset_gemm_stats(void);

/* Device timing. A GPU backend queues GEMMs and kernels and returns at once,
 * so their seconds above are the host's time to queue them. With `enable`,
 * every GEMM and every kernel launch first waits for the work queued before
 * it and then for itself, so that the seconds are the device's (the step
 * then runs without overlap between host and device, slower; its results
 * do not change). Returns the previous setting. On the CPU the waits are
 * no-ops: the seconds are the work's anyway. */
ZRT_API int zrt_set_sync_timing(int enable);

/* Generated code's kernels (target=cuda), one entry per kernel in the order
 * they were first asked for: launches since the last zrt_reset_gemm_stats
 * and the seconds spent in them (the device's only with sync timing on).
 * `name` stays valid for the process's life. */
typedef struct zrt_kernel_stats {
  const char *name;
  uint64_t launches;
  double seconds;
} zrt_kernel_stats;

/* The number of kernels known (0 for a CPU step). */
ZRT_API size_t zrt_kernel_stats_count(void);

/* Copies entry `index` to `out`; returns 0, or nonzero with
 * zrt_last_error() set if `index` is out of range or `out` NULL. */
ZRT_API int zrt_get_kernel_stats(size_t index, zrt_kernel_stats *out);

/* Which GEMM kernels run, and why. The CPU backend chooses them when it is
 * first configured: OpenBLAS picks kernels by CPU model, and one it does not
 * know gets generic SSE kernels, so the runtime switches to the most capable
 * kernel set the CPU's instruction sets allow (Cooperlake, SkylakeX,
 * Haswell, Sandybridge) when that is more capable than OpenBLAS's pick, and
 * checks it on a GEMM with an exact result. The environment decides
 * instead: ZERO_BLAS_KERNEL=blas keeps OpenBLAS's pick, ZERO_BLAS_KERNEL=NAME
 * forces a kernel set (zrt_init fails if the CPU cannot run it), and a set
 * OPENBLAS_CORETYPE is left as OpenBLAS applied it (unless
 * ZERO_BLAS_KERNEL=auto asks for the choice by instruction sets anyway). */
typedef struct zrt_gemm_backend {
  const char *library;   /* "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..." */
  const char *kernel;    /* the kernel set in use, "Cooperlake" */
  const char *detected;  /* the set OpenBLAS picked by itself */
  const char *chosen_by; /* "blas", "cpu-features", "OPENBLAS_CORETYPE" or
                            "ZERO_BLAS_KERNEL" */
} zrt_gemm_backend;

/* Fills `out`; its strings stay valid until the next call. Returns 0, or
 * nonzero with zrt_last_error() set (`out` NULL). */
ZRT_API int zrt_get_gemm_backend(zrt_gemm_backend *out);

/*===----------------------------------------------------------------------===*
 * Threads
 *===----------------------------------------------------------------------===*/

/* The body of a parallel loop: runs iterations [begin, end) of a loop whose
 * iterations are independent, reading its operands through `context`. */
typedef void (*zrt_parallel_body)(void *context, int64_t begin, int64_t end);

/* Runs body(context, begin, end) over [0, n) cut into contiguous ranges,
 * one per runtime thread (at most n), and returns when every range is done;
 * the calling thread takes the first. Generated code calls it for loop
 * nests whose outer iterations are independent (zero-parallel-loop-
 * functions). The runtime has one pool of threads for these loops and for
 * GEMMs (zrt_init's num_threads; OpenBLAS itself runs single-threaded), so
 * no idle BLAS thread competes with a loop for a core. A call made while
 * another is running (from another thread, or from inside a body) runs its
 * whole range on the calling thread. n <= 0 is a no-op; a NULL body goes
 * to the fatal handler. */
ZRT_API void zrt_parallel_for(int64_t n, zrt_parallel_body body,
                              void *context);

/* The number of threads GEMMs and parallel loops use, the caller included
 * (initializes the default backend if none is). */
ZRT_API int zrt_get_num_threads(void);

/*===----------------------------------------------------------------------===*
 * World and collectives
 *===----------------------------------------------------------------------===*/

/* The world is the set of data-parallel ranks: every process of an MPI job,
 * or the process alone. It is set up by zrt_init, or by the first call of a
 * function of this section, whichever comes first:
 *  - If MPI is already initialized (by the application), the runtime uses
 *    it (on a duplicate of MPI_COMM_WORLD) and never finalizes it.
 *  - Otherwise, if the process was started by an MPI launcher (mpirun or
 *    mpiexec of Open MPI, MPICH's Hydra, srun with PMI or PMIx: detected by
 *    the environment variables OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK or
 *    PMI_SIZE), the runtime calls MPI_Init_thread asking for
 *    MPI_THREAD_SERIALIZED and zrt_shutdown finalizes MPI.
 *  - Otherwise MPI is not touched: the world is this process alone (rank 0
 *    of 1), so a plain `./zero-run` works without mpirun.
 * The runtime serializes its own MPI calls under a lock, so any thread may
 * call the collectives. The runtime's communicator has MPI_ERRORS_RETURN
 * set; every MPI return code is checked.
 *
 * Rules for callers, as for any MPI collective: every rank calls the same
 * collectives in the same order with the same `count` (and the same
 * zrt_set_comm_bucket_bytes setting); a rank that leaves the sequence makes
 * the others wait, up to the deadline of zrt_set_comm_timeout: then every
 * waiting rank ends the job (one line naming the collective and the ranks
 * that did not arrive, MPI_Abort). Waiting ranks poll for a millisecond,
 * then sleep between polls (50 us, growing to 10 ms after 100 ms) instead
 * of spinning. Buffers are the backend's memory (on the CUDA backend a
 * world of one rank copies on the compute stream, and more ranks run
 * NCCL's collectives on a communication stream, after the compute work
 * queued before the start; NCCL's reductions are not in rank order, so the
 * reduction order below holds on host memory only. zero-compile does not
 * build GPU steps for several ranks yet: NCCL has run on no machine with
 * several GPUs), contiguous, `count` elements of
 * the descriptor's element type. `count` may be 0 (no effect, pointers may be
 * NULL, the call is counted with 0 bytes); a negative count, a NULL buffer
 * with count > 0, a size overflow or an overlap of `in` and `out` other
 * than the in-place forms named below go to the fatal handler.
 *
 * Reduction order. Every element of a reduced result is combined in rank
 * order, ((x_0 op x_1) op x_2) op ... op x_{N-1}, starting from x_0 itself
 * (no identity element: a world of one rank returns x_0 bit for bit,
 * -0.0 included), by exactly one rank, and copied from there to the others.
 * So results are deterministic, bitwise equal on every rank, and
 * all_reduce(x) == all_gather(reduce_scatter(x)) bit for bit. Sum is the
 * IEEE addition of the element type. Max keeps the first NaN in rank order
 * if there is one, and otherwise the first of equal values (so max(-0.0,
 * +0.0) is the one from the lower rank).
 *
 * Algorithms and bytes counted (b = element size, N = world size, per call
 * and per rank; what a ring or pairwise-exchange algorithm sends, and
 * exactly what this implementation hands to MPI, padding included):
 *  - reduce-scatter: MPI_Alltoall of the N blocks, then the local reduction
 *    in rank order: (N-1)*count*b bytes.
 *  - all-gather: MPI_Allgather: (N-1)*count*b bytes.
 *  - all-reduce: the buffer, padded with zeros to N*ceil(count/N) elements,
 *    is reduce-scattered and all-gathered as above (the padding is never
 *    read from `in` nor written to `out`): 2*(N-1)*ceil(count/N)*b bytes.
 *  - scalar all-reduce: MPI_Allgather of the N values, then the reduction
 *    in rank order on every rank: (N-1)*b bytes.
 * A world of one rank sends 0 bytes and makes no MPI call: the collectives
 * are copies.
 *
 * Temporary memory. Reduce-scatter and all-reduce exchange their blocks in
 * segments so that their receive buffer holds at most the comm bucket
 * (zrt_set_comm_bucket_bytes): with c = the block length (count for
 * reduce-scatter, ceil(count/N) for all-reduce) and
 * s = min(c, max(1, bucket / (N*b))), each call allocates N*s*b bytes from
 * the runtime's allocator, counted to ZRT_COMM; an all-reduce whose count
 * is not a multiple of N allocates a second buffer of N*s*b bytes for the
 * padded blocks. A scalar all-reduce allocates N*b bytes; an all-gather
 * allocates nothing. Everything is freed before the call returns (its
 * blocks stay in the block cache), so the ZRT_COMM peak of a call is
 * exactly that, and a world of one rank allocates nothing. */

/* This process's rank in the world, 0 <= rank < zrt_world_size(). Sets the
 * world up if needed; a failure to do so goes to the fatal handler (and
 * then 0 is returned). */
ZRT_API int zrt_world_rank(void);

/* The number of ranks in the world (1 without an MPI launcher). A driver
 * that was compiled for a given number of ranks checks it here and ends the
 * job with zrt_abort if it differs. Failure as for zrt_world_rank (1 is
 * returned). */
ZRT_API int zrt_world_size(void);

/* Prints `message` and a newline to stderr as one write (nothing if it is
 * NULL or empty; the runtime adds no prefix, so a driver passes its own
 * "zero-run: error: ..." line) and ends the process without returning:
 * when the world is on MPI with MPI_Abort(MPI_COMM_WORLD, 1), which ends
 * every rank of the job (mpirun exits with status 1), otherwise with
 * exit(1). Meant for drivers that fail on one rank only (a file that cannot
 * be read), where returning from main would leave the other ranks blocked
 * in their next collective. It does not call the fatal handler and does not
 * set the world up (a rank that fails before zrt_init exits with status 1,
 * which also makes mpirun end the job). */
ZRT_API ZRT_NORETURN void zrt_abort(const char *message);

/* As zrt_abort, for a failure every rank meets alike (a bad option, a step
 * that does not fit the run, an output directory it cannot use): rank 0
 * prints `message` and ends the job, and every other rank prints nothing
 * and waits to be ended, so that the job shows the line once. A rank other
 * than 0 that is still running after ZRT_ABORT_ALL_GRACE_SECONDS (rank 0
 * did not meet the failure after all) prints it and ends the job itself.
 * Sets the world up if it is not yet. */
#define ZRT_ABORT_ALL_GRACE_SECONDS 10
ZRT_API ZRT_NORETURN void zrt_abort_all(const char *message);

/* The kinds of collective (and of the counters below). */
typedef enum zrt_collective {
  ZRT_ALL_REDUCE = 0,
  ZRT_REDUCE_SCATTER = 1,
  ZRT_ALL_GATHER = 2,
  ZRT_SCALAR_ALL_REDUCE = 3,
  ZRT_NUM_COLLECTIVES = 4
} zrt_collective;

/* How a reduction combines (see "Reduction order"); an all-gather takes
 * ZRT_REDUCE_NONE. A reduce-scatter sums. */
typedef enum zrt_reduction {
  ZRT_REDUCE_NONE = 0,
  ZRT_REDUCE_SUM = 1,
  ZRT_REDUCE_MAX = 2
} zrt_reduction;

/* The element types of the collectives: f32, f64, and bf16 (its bits as
 * uint16_t: bf16 on the wire; a sum accumulates each element's N values in
 * f32, in rank order, and rounds once to bf16, to nearest even, so the
 * all-reduce still equals the all-gather of the reduce-scatter bit for
 * bit). */
typedef enum zrt_element_type {
  ZRT_ELEMENT_F32 = 0,
  ZRT_ELEMENT_F64 = 1,
  ZRT_ELEMENT_BF16 = 2
} zrt_element_type;

/* A collective's descriptor: its kind (bits 0-7), reduction (bits 8-15)
 * and element type (bits 16-23), one 32-bit value that generated code
 * passes as a constant (IREE's iree_hal_collective_op_t is the model).
 * The compiler builds it with zrt_make_collective_op, as callers do. */
typedef uint32_t zrt_collective_op;

static inline zrt_collective_op
zrt_make_collective_op(zrt_collective kind, zrt_reduction reduction,
                       zrt_element_type element_type) {
  return (zrt_collective_op)kind | (zrt_collective_op)reduction << 8 |
         (zrt_collective_op)element_type << 16;
}

/* Bytes of one element of `element_type`; 0 for any other value. */
static inline int64_t zrt_element_bytes(zrt_element_type element_type) {
  switch (element_type) {
  case ZRT_ELEMENT_F32:
    return 4;
  case ZRT_ELEMENT_F64:
    return 8;
  case ZRT_ELEMENT_BF16:
    return 2;
  }
  return 0;
}

/* The bytes one rank sends in a collective of `kind` on `world` ranks, by
 * the formulas of "Algorithms and bytes counted": `count` is the count
 * argument of the entry point (elements per rank for a gather's input and
 * a reduce-scatter's output, the whole buffer for an all-reduce, 1 for a
 * scalar). The runtime counts this, and the compiler's cost model
 * (zero-schedule) predicts with it. Sizes that exceed 64 bits wrap; the
 * runtime refuses such calls before it counts them. */
static inline uint64_t zrt_collective_bytes_sent(zrt_collective kind,
                                                 int64_t world, int64_t count,
                                                 int64_t element_bytes) {
  uint64_t peers = (uint64_t)(world - 1), b = (uint64_t)element_bytes;
  if (world <= 1 || count <= 0 || element_bytes <= 0)
    return 0;
  switch (kind) {
  case ZRT_ALL_GATHER:
  case ZRT_REDUCE_SCATTER:
    return peers * (uint64_t)count * b;
  case ZRT_ALL_REDUCE:
    return 2 * peers * (uint64_t)(count / world + (count % world != 0)) * b;
  case ZRT_SCALAR_ALL_REDUCE:
    return peers * b;
  default:
    return 0;
  }
}

/* Runs the collective `op` describes on this rank's `in` and `out`
 * (`count` elements of its element type, as below), blocking:
 *  - ZRT_ALL_REDUCE with ZRT_REDUCE_SUM or ZRT_REDUCE_MAX: out[i] =
 *    x_0[i] op ... op x_{N-1}[i] for i < count, where x_r is `in` on rank
 *    r; every rank gets the whole result. In place: out == in.
 *  - ZRT_REDUCE_SCATTER with ZRT_REDUCE_SUM: `in` has N*count elements on
 *    every rank; `out` (count elements) gets this rank's slice of their
 *    sum, elements [rank*count, (rank+1)*count). In place: out == in +
 *    q*count for any block q in [0, N): q == rank keeps the shard where it
 *    was, q == 0 is MPI's in-place convention.
 *  - ZRT_ALL_GATHER with ZRT_REDUCE_NONE: `in` has count elements; `out`
 *    (N*count elements) gets rank r's `in` at out + r*count, on every
 *    rank. In place: in == out + rank*count.
 * A descriptor outside these (a scalar kind, a reduce-scatter's max, an
 * unknown value) goes to the fatal handler. Counted as its kind. */
ZRT_API void zrt_collective_run(zrt_collective_op op, const void *in,
                                void *out, int64_t count);

/* All-reduce of one scalar (`op` of kind ZRT_SCALAR_ALL_REDUCE, sum or
 * max, f32 or f64), returned on every rank: `value` combined over the
 * ranks in rank order, bitwise equal to what zrt_collective_run's
 * all-reduce computes for count == 1. An f32 travels as the double that
 * holds it exactly and is reduced as an f32 (the result converts back
 * exactly). For what generated code and drivers reduce as scalars (loss
 * averaging, partial norms, peaks); counted as ZRT_SCALAR_ALL_REDUCE. */
ZRT_API double zrt_collective_scalar(zrt_collective_op op, double value);

/* Copies `bytes` bytes at `data` from rank `root` to every other rank
 * (MPI_Bcast semantics; every rank passes the same `bytes` and `root`).
 * For set-up, not for training steps: ranks that wait poll with growing
 * sleeps (50 us up to 10 ms) instead of spinning, so a rank that compiles
 * or reads a file meanwhile keeps its core. Not counted in
 * zrt_comm_stats. A world of one rank returns at once. Returns 0, or
 * nonzero with zrt_last_error() set (invalid root, NULL data with bytes > 0,
 * an MPI error). */
ZRT_API int zrt_broadcast_bytes(void *data, size_t bytes, int root);

/* Sets the comm bucket: the most bytes the receive buffer of one exchange
 * segment holds (see "Temporary memory"), and returns the previous value.
 * 0 restores the default, 16 MiB. Process-wide; it decides how calls are
 * split into MPI calls, so every rank must use the same value. */
ZRT_API size_t zrt_set_comm_bucket_bytes(size_t bytes);

/* Sets the deadline, in seconds, of every wait for a collective (and for
 * zrt_broadcast_bytes and zrt_shutdown's final barrier) and returns the
 * previous one; <= 0 waits forever. The default is 600 s: longer than any
 * step or compilation a rank waits for, short enough that a job with a
 * stalled rank ends. When it passes, the rank asks every other rank which
 * collective it has reached (they answer while they wait), then writes one
 * line naming its collective and the ranks that did not answer or are
 * behind, and ends the job with MPI_Abort. Process-wide. */
ZRT_API double zrt_set_comm_timeout(double seconds);

/* Asynchronous collectives. zrt_collective_start has the semantics and
 * the in-place forms of zrt_collective_run for the same descriptor, but only
 * queues the collective and returns a request (a positive number); the
 * collective runs on the runtime's communication thread, and zrt_wait
 * returns once it has completed. Until then the caller must neither write
 * `in` nor read or write `out`, and must keep both allocated. Collectives,
 * started and blocking alike, run in the order they were called, one at a
 * time: a blocking collective called while started ones are pending runs
 * after them. The rules for callers above apply to that order (every rank
 * starts the same collectives in the same order), and each collective
 * reduces exactly as its blocking form does, so results are bitwise those
 * of the blocking calls. Requests complete in order: waiting for request r
 * also completes every earlier one. Invalid arguments (as for the blocking
 * forms) and MPI errors go to the fatal handler, from the first zrt_wait
 * for the failed request or a later one (or the next blocking collective);
 * requests queued behind a failed one are dropped until then, and a
 * deadline that passes ends the job as for the blocking forms. A negative
 * count, a NULL buffer or an invalid descriptor goes to the fatal handler
 * from zrt_collective_start itself (which then returns 0). Waiting for a request twice is allowed; a
 * request that was never returned goes to the fatal handler. When the
 * application initialized MPI with less than MPI_THREAD_SERIALIZED,
 * zrt_collective_start runs the collective before it returns.
 *
 * Counted like the blocking forms (calls, bytes, and `seconds` from the
 * moment the communication thread begins the collective to its completion);
 * the time callers spend blocked in zrt_wait is counted apart, in
 * zrt_comm_stats.wait_seconds. */
ZRT_API int64_t zrt_collective_start(zrt_collective_op op, const void *in,
                                     void *out, int64_t count);

/* The communication arena: buffers that the collectives take their
 * scratch from (the receive buffers of reductions, ZRT_COMM) instead of
 * allocating it while they run. zrt_comm_reserve(bytes) adds a buffer of
 * `bytes` unless one of at least that size is already reserved; a
 * collective stacks its pieces in the largest buffer when it begins, each
 * at the next 64-byte boundary, while they fit (a piece that does not fit
 * is allocated as without the arena). zrt_comm_release waits until no
 * collective is using the arena and frees every buffer. Without the arena,
 * a started collective's scratch comes and goes when the communication
 * thread runs it, so whether it counts at the step's peak depends on
 * timing; with it, the bytes are held from one fixed point of the program
 * to another. The lowered step (zero-comm-buffers) reserves before
 * each started reduction that needs more than the reservations before it
 * while some are in flight, and releases after the wait that completes
 * the last of them; zero-memory-report predicts the same. A reservation
 * never waits: the collective using a buffer keeps it. `bytes` < 0, or no
 * memory for a buffer, goes to the fatal handler. */
ZRT_API void zrt_comm_reserve(int64_t bytes);
ZRT_API void zrt_comm_release(void);

/* Blocks until `request` has completed: a started collective (and every
 * collective started before it), or a started NVMe transfer
 * (zrt_nvme_read_start, zrt_nvme_write_start; those complete in any
 * order). */
ZRT_API void zrt_wait(int64_t request);

/* A simulated interconnect, for measuring overlap on a machine whose ranks
 * share memory (where MPI moves bytes with the cores that compute, so
 * communication cannot hide behind computation). With a link set, every
 * collective over more than one rank, blocking or started, completes no
 * earlier than
 *     begin + latency_seconds + bytes / bytes_per_second
 * where bytes is what this rank sends (the counted bytes) and begin is the
 * later of the moment the last rank called it and the moment the link
 * finished the previous collective (one link for all ranks, one collective
 * at a time, so every rank completes it at the same moment; the ranks'
 * call times are compared on the machine's monotonic clock with one more
 * scalar all-reduce, uncounted, so the ranks must share a machine). The collective
 * really runs, on MPI, before that; the rest of the time the calling (or
 * communication) thread sleeps, without spinning. It is a model of a link,
 * not a measurement of one. bytes_per_second may be INFINITY (latency
 * only); 0 for both turns the model off (the default). Returns 0, or
 * nonzero with zrt_last_error() set for a negative or NaN value or a zero
 * bandwidth with a nonzero latency. Process-wide; every rank should set the
 * same link. */
ZRT_API int zrt_set_sim_link(double bytes_per_second, double latency_seconds);

/*===------------------------------------------------------------------===
 * NVMe offload (zero-offload's optimizer=nvme and params=nvme)
 *===------------------------------------------------------------------===*/

/* Offloaded tensors live in extents of one file per rank,
 * `dir`/zero-rank<R>.nvme, read and written with io_uring through a
 * descriptor opened with O_DIRECT (no page-cache copy stays in RAM). An
 * extent starts at a multiple of 4096 bytes and reserves its size rounded
 * up to 4096; the file holds exactly the reserved extents.
 *
 * zrt_nvme_open creates (or truncates) this rank's file. Returns 0, or
 * nonzero with zrt_last_error() set: `dir` is no directory, its file system
 * refuses O_DIRECT (tmpfs), or io_uring is unavailable. zrt_nvme_close (and
 * zrt_shutdown) waits for transfers in flight, closes the file and removes
 * it. */
ZRT_API int zrt_nvme_open(const char *dir);
ZRT_API void zrt_nvme_close(void);

/* Reserves an extent for `bytes` that reads as zeros, counted to
 * `category` on NVMe (zrt_nvme_stats.reserved). Returns its handle (>= 1),
 * or 0 with zrt_last_error() set (no store open, no space left). */
ZRT_API int64_t zrt_nvme_alloc(size_t bytes, zrt_category category);

/* Blocking transfers for drivers (initialization, checkpoints, dumps): the
 * extent's first `bytes` into `out` (at most its size), or all of its
 * bytes from `in` (`bytes` = its size); any alignment, through a staging
 * buffer of at most 4 MiB of the runtime's own, which no category counts
 * (drivers transfer between steps; the step's figures stay its own).
 * Return 0, or nonzero with zrt_last_error() set. */
ZRT_API int zrt_nvme_read(int64_t extent, void *out, size_t bytes);
ZRT_API int zrt_nvme_write(int64_t extent, const void *in, size_t bytes);

/* Started transfers, for generated code: the whole reserved extent into or
 * from `buffer`, which must be aligned to 4096 bytes and hold `bytes` = the
 * reserved size. Return a request for zrt_wait; the buffer must stay
 * untouched until then. Invalid arguments and I/O errors go to the fatal
 * handler (from zrt_wait for I/O errors). */
ZRT_API int64_t zrt_nvme_read_start(int64_t extent, void *buffer,
                                    int64_t bytes);
ZRT_API int64_t zrt_nvme_write_start(int64_t extent, const void *buffer,
                                     int64_t bytes);

/* What the store holds and has moved: reserved bytes per category, the
 * file's size and the bytes the file system allocated for it, and, since
 * the last reset, bytes and calls of the started and blocking transfers
 * and the seconds callers spent blocked in zrt_wait for transfers. All
 * zero when no store is open. */
typedef struct zrt_nvme_stats {
  uint64_t reserved[ZRT_NUM_CATEGORIES];
  uint64_t file_bytes;
  uint64_t disk_bytes;
  uint64_t read_bytes;
  uint64_t written_bytes;
  uint64_t reads;
  uint64_t writes;
  double wait_seconds;
} zrt_nvme_stats;

/* A snapshot of the store's figures. NULL is a no-op. */
ZRT_API void zrt_get_nvme_stats(zrt_nvme_stats *out);

/* Clears the transfer counters (not the reserved bytes). */
ZRT_API void zrt_reset_nvme_stats(void);

/* The scratch a collective takes while it runs (ZRT_COMM; from the
 * communication arena where it fits): the bytes of each buffer, in the
 * order it takes them, written to pieces[0..1]; returns how many (0-2), or
 * -1 when a size overflows int64. On a world of `world` ranks, with
 * `element_bytes`-byte elements and a bucket of `bucket_bytes`
 * (zrt_set_comm_bucket_bytes; its default ZRT_COMM_BUCKET_BYTES), a
 * reduction moves one segment of each rank's block at a time, the segment
 * min(block, max(1, bucket_bytes / (world * element_bytes))) elements:
 *   ZRT_REDUCE_SCATTER of `count` elements per rank: world segments;
 *   ZRT_ALL_REDUCE of `count` elements (blocks of ceil(count / world)):
 *     world segments, and as many again when count is not a multiple of
 *     world (the padded blocks are packed);
 *   ZRT_SCALAR_ALL_REDUCE: world elements;
 *   ZRT_ALL_GATHER, a world of one, count 0: nothing.
 * The runtime sizes its buffers with it, and zero-memory-report predicts
 * them with it. */
#define ZRT_COMM_BUCKET_BYTES ((int64_t)16 << 20)
#define ZRT_COMM_ARENA_ALIGNMENT 64
static inline int zrt_comm_scratch(zrt_collective kind, int64_t world,
                                   int64_t count, int64_t element_bytes,
                                   int64_t bucket_bytes, int64_t pieces[2]) {
  int64_t group, segment, block, bytes;
  if (world <= 1 || element_bytes <= 0 || kind == ZRT_ALL_GATHER)
    return 0;
  if (kind == ZRT_SCALAR_ALL_REDUCE) {
    if (__builtin_mul_overflow(world, element_bytes, &bytes))
      return -1;
    pieces[0] = bytes;
    return 1;
  }
  if ((kind != ZRT_REDUCE_SCATTER && kind != ZRT_ALL_REDUCE) || count <= 0)
    return 0;
  block = kind == ZRT_REDUCE_SCATTER ? count
                                     : count / world + (count % world != 0);
  if (__builtin_mul_overflow(world, element_bytes, &group))
    return -1;
  segment = bucket_bytes / group;
  if (segment < 1)
    segment = 1;
  if (segment > 2147483647)
    segment = 2147483647;
  if (segment > block)
    segment = block;
  if (__builtin_mul_overflow(group, segment, &bytes))
    return -1;
  pieces[0] = pieces[1] = bytes;
  return kind == ZRT_ALL_REDUCE && count % world != 0 ? 2 : 1;
}

/* The flat layout of a tensor of `numel` elements on a world of `world`
 * ranks (docs/zero-form.md): viewed 1-D and zero-padded to *padded, the
 * least multiple of `world` at or above `numel`; rank r owns elements
 * [r * shard, (r + 1) * shard) of it, with *shard = padded / world. The
 * same for its gradient and optimizer states. Returns 0, or -1 (nothing
 * written) when numel < 0, world < 1 or padded overflows int64.
 * zero-partition lays parameters out with it, and checkpoint readers check
 * a manifest's layout against it. */
static inline int zrt_flat_layout(int64_t numel, int64_t world,
                                  int64_t *padded, int64_t *shard) {
  int64_t rounded;
  if (numel < 0 || world < 1 ||
      __builtin_add_overflow(numel, (world - numel % world) % world, &rounded))
    return -1;
  *padded = rounded;
  *shard = rounded / world;
  return 0;
}

/* "all_reduce", "reduce_scatter", "all_gather", "scalar_all_reduce";
 * "unknown" for any other value. The string is static. */
ZRT_API const char *zrt_collective_name(zrt_collective collective);

/* Totals per kind since the last reset, on this rank: `calls` counts entry
 * point calls (count == 0 and worlds of one rank included), `bytes_sent`
 * the bytes this rank sends by the formulas above, `seconds` the wall time
 * the collectives ran (steady clock; it includes waiting for the other
 * ranks and a simulated link's time; for a started collective, from the
 * moment the communication thread begins it). Calls rejected as invalid
 * are not counted. */
typedef struct zrt_comm_stats {
  uint64_t calls[ZRT_NUM_COLLECTIVES];
  uint64_t bytes_sent[ZRT_NUM_COLLECTIVES];
  double seconds[ZRT_NUM_COLLECTIVES];
  /* Time spent blocked in zrt_wait, all kinds together. */
  double wait_seconds;
} zrt_comm_stats;

/* A consistent snapshot of the counters. NULL is a no-op. */
ZRT_API void zrt_get_comm_stats(zrt_comm_stats *out);

/* Clears the counters. */
ZRT_API void zrt_reset_comm_stats(void);

/*===------------------------------------------------------------------===
 * Tracing (zero-run --trace)
 *===------------------------------------------------------------------===*/

/* What a trace event is. */
typedef enum zrt_trace_kind {
  /* A GEMM call (zrt_gemm_*), on the calling thread. */
  ZRT_TRACE_GEMM = 0,
  /* A collective on the link: from the moment it begins (the
   * communication thread takes it up, or a blocking call runs it) to its
   * completion, a simulated link's time included. */
  ZRT_TRACE_COLLECTIVE = 1,
  /* The calling thread blocked in a blocking collective, from the call to
   * its return (the started collectives before it included). */
  ZRT_TRACE_BLOCKED = 2,
  /* The calling thread blocked in zrt_wait, from the call to its return. */
  ZRT_TRACE_WAIT = 3
} zrt_trace_kind;

typedef struct zrt_trace_event {
  zrt_trace_kind kind;
  /* The collective's kind (COLLECTIVE, BLOCKED, WAIT); ZRT_NUM_COLLECTIVES
   * for a GEMM. */
  zrt_collective collective;
  /* Seconds since zrt_trace_start (steady clock). */
  double begin, end;
  /* COLLECTIVE and BLOCKED: the bytes this rank sent. WAIT: 0. */
  uint64_t bytes;
  /* GEMM: 2 * batch * m * n * k; its shape. 0 otherwise. */
  uint64_t flops;
  int64_t batch, m, n, k;
} zrt_trace_event;

/* Clears the trace and starts recording, with times from now on. Cheap
 * when off: the recording points test one flag. */
ZRT_API void zrt_trace_start(void);

/* Stops recording; the events stay until the next zrt_trace_start. */
ZRT_API void zrt_trace_stop(void);

/* The number of events recorded. */
ZRT_API size_t zrt_trace_count(void);

/* Copies event `index` (in the order recorded) into `out`. Returns 0, or
 * nonzero with zrt_last_error() set for an index out of range or a NULL
 * `out`. */
ZRT_API int zrt_trace_get(size_t index, zrt_trace_event *out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZERO_RUNTIME_H */
