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
 * The declarations are by topic in the headers this one includes; a client
 * includes this one:
 *   runtime_setup.h        set-up and errors (and ZRT_API, ZRT_NORETURN)
 *   runtime_memory.h       memory
 *   runtime_gpu.h          generated code for target=cuda
 *   runtime_compute.h      GEMM, threads
 *   runtime_collectives.h  world and collectives
 *   runtime_nvme.h         NVMe offload
 *   runtime_trace.h        tracing
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZERO_RUNTIME_H
#define ZERO_RUNTIME_H

#include "runtime_setup.h"
#include "runtime_memory.h"
#include "runtime_gpu.h"
#include "runtime_compute.h"
#include "runtime_collectives.h"
#include "runtime_nvme.h"
#include "runtime_trace.h"

#endif /* ZERO_RUNTIME_H */
