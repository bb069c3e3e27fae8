/*===- runtime.h - zero-mlir runtime C ABI ------------------------*- C -*-===*
 *
 * The C ABI that lowered training steps and zero-run call: backend set-up,
 * allocation with per-category accounting, GEMM with call and FLOP counters,
 * and the fatal-error channel for calls from generated code. The header is
 * C99 (and C++) compatible and names no backend: the CPU backend (OpenBLAS)
 * and later a CUDA one (cuBLASLt, NCCL) sit behind the same entry points.
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

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Set-up and errors
 *===----------------------------------------------------------------------===*/

/* Selects and initializes a backend. `backend` is "cpu" (NULL means "cpu");
 * "cuda" is recognized but not built yet and fails. `num_threads` > 0 sets
 * the number of BLAS threads; <= 0 keeps the current (initially OpenBLAS's
 * default, which honours OPENBLAS_NUM_THREADS). Calling it again is safe:
 * it re-selects the backend and applies `num_threads`; allocations and
 * counters survive. Returns 0 on success, nonzero on failure with
 * zrt_last_error() set. */
ZRT_API int zrt_init(const char *backend, int num_threads);

/* Deselects the backend and returns the block cache to the system
 * (zrt_release_cached). Live allocations stay valid and accounted and can
 * still be freed; counters are kept. A later call that needs a backend
 * initializes "cpu" again. */
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
 * crash signal, no core dump). */
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
 * system allocator adds (headers, alignment padding). */
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

/*===----------------------------------------------------------------------===*
 * GEMM
 *===----------------------------------------------------------------------===*/

/* C[m,n] = A[m,k] * B[k,n] + beta * C[m,n], row-major, the semantics of
 * linalg.matmul with beta = 1 (it accumulates into its init). lda, ldb and
 * ldc are the row strides in elements and must be at least k, n and n (and
 * at least 1); rows must be contiguous. As in BLAS, beta == 0 overwrites C
 * without reading it (NaN in C does not propagate). m == 0 or n == 0 is a
 * no-op; k == 0 only scales C by beta (A and B are not read). A matrix with
 * a single row may have any leading dimension. Invalid arguments (negative
 * sizes, a leading dimension shorter than a row, NULL matrices, sizes beyond
 * the backend's integer range) go to the fatal handler. */
ZRT_API void zrt_gemm_f32(int64_t m, int64_t n, int64_t k, const float *a,
                          int64_t lda, const float *b, int64_t ldb, float beta,
                          float *c, int64_t ldc);
ZRT_API void zrt_gemm_f64(int64_t m, int64_t n, int64_t k, const double *a,
                          int64_t lda, const double *b, int64_t ldb,
                          double beta, double *c, int64_t ldc);

/* linalg.batch_matmul: for i < batch, C_i = A_i * B_i + beta * C_i with
 * A_i = a + i * stride_a, B_i = b + i * stride_b, C_i = c + i * stride_c
 * (strides in elements), each product as in zrt_gemm_*. Strides must be
 * >= 0; a stride of 0 for A or B reuses one matrix for the whole batch; the
 * C matrices must not overlap. With batch <= 1 the strides are ignored.
 * batch == 0 is a no-op. */
ZRT_API void zrt_gemm_batched_f32(int64_t batch, int64_t m, int64_t n,
                                  int64_t k, const float *a, int64_t stride_a,
                                  int64_t lda, const float *b, int64_t stride_b,
                                  int64_t ldb, float beta, float *c,
                                  int64_t stride_c, int64_t ldc);
ZRT_API void zrt_gemm_batched_f64(int64_t batch, int64_t m, int64_t n,
                                  int64_t k, const double *a, int64_t stride_a,
                                  int64_t lda, const double *b,
                                  int64_t stride_b, int64_t ldb, double beta,
                                  double *c, int64_t stride_c, int64_t ldc);

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

/* Clears the totals and the per-shape breakdown. */
ZRT_API void zrt_reset_gemm_stats(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZERO_RUNTIME_H */
