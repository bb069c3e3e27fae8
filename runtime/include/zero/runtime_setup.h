/*===- runtime_setup.h - zero-mlir runtime: set-up -----------------*- C -*-===*
 *
 * Backend selection, init and shutdown, and the error channel (the last
 * error, the fatal handler); and ZRT_API and ZRT_NORETURN, which every part
 * of the ABI uses.
 *
 * A part of the runtime's C ABI; zero/runtime.h includes every part and
 * states the conventions they share.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZERO_RUNTIME_SETUP_H
#define ZERO_RUNTIME_SETUP_H

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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZERO_RUNTIME_SETUP_H */
