/*===- runtime_compute.h - zero-mlir runtime: compute --------------*- C -*-===*
 *
 * GEMMs with call and FLOP counters, the kernel profile, and the parallel
 * loops generated code runs on the runtime's threads.
 *
 * A part of the runtime's C ABI; zero/runtime.h includes every part and
 * states the conventions they share.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZERO_RUNTIME_COMPUTE_H
#define ZERO_RUNTIME_COMPUTE_H

#include "runtime_setup.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZERO_RUNTIME_COMPUTE_H */
