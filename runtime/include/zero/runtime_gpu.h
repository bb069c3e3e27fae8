/*===- runtime_gpu.h - zero-mlir runtime: target=cuda --------------*- C -*-===*
 *
 * What generated code for target=cuda calls besides the other parts: copies
 * between host and runtime memory, the compute stream, the mgpu* kernel
 * entry points.
 *
 * A part of the runtime's C ABI; zero/runtime.h includes every part and
 * states the conventions they share.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZERO_RUNTIME_GPU_H
#define ZERO_RUNTIME_GPU_H

#include "runtime_setup.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZERO_RUNTIME_GPU_H */
