//===- CudaSymbols.h - CUDA libraries opened at run time --------*- C++ -*-===//
//
// Every entry point the runtime calls in the CUDA driver, cuBLASLt and NCCL,
// as tables filled with dlsym when the CUDA backend is first selected (and
// NCCL's when its first collective of device memory runs), so the runtime
// links nothing of CUDA: a CPU program needs no CUDA library, and a training
// binary built where the CUDA toolkit is runs where only the driver and the
// libraries are (the nvidia-* Python packages, for example, on
// LD_LIBRARY_PATH). The headers give the types and the versioned symbol
// names (cuMemAlloc is cuMemAlloc_v2), so what is looked up is exactly what
// the header declares.
//
// Only built with ZERO_RUNTIME_HAVE_CUDA (the CUDA headers found at
// configure time); defines ZERO_RUNTIME_HAVE_NCCL where they have nccl.h.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_BACKENDS_CUDA_CUDASYMBOLS_H
#define ZERO_RUNTIME_LIB_BACKENDS_CUDA_CUDASYMBOLS_H

#ifdef ZERO_RUNTIME_HAVE_CUDA

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda.h>
// NCCL, for collectives over several ranks, where the toolkit has it.
#if __has_include(<nccl.h>)
#include <nccl.h>
#define ZERO_RUNTIME_HAVE_NCCL 1
#endif

namespace zero::runtime {

/// Entry points of the CUDA driver API, typed by the header's declarations.
struct DriverApi {
#define ZERO_CU_FN(fn) decltype(&fn) fn##_ = nullptr;
#define ZERO_CU_FUNCTIONS(X)                                                   \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxSetCurrent)                                                           \
  X(cuStreamCreate)                                                            \
  X(cuStreamSynchronize)                                                       \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemGetInfo)                                                              \
  X(cuMemsetD8Async)                                                           \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuMemcpyAsync)                                                             \
  X(cuMemHostAlloc)                                                            \
  X(cuMemFreeHost)                                                             \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventQuery)                                                              \
  X(cuStreamWaitEvent)                                                         \
  X(cuModuleLoadData)                                                          \
  X(cuModuleGetFunction)                                                       \
  X(cuLaunchKernel)
  ZERO_CU_FUNCTIONS(ZERO_CU_FN)
#undef ZERO_CU_FN
};

/// Entry points of cuBLASLt.
struct LtApi {
#define ZERO_LT_FN(fn) decltype(&fn) fn##_ = nullptr;
#define ZERO_LT_FUNCTIONS(X)                                                   \
  X(cublasLtGetVersion)                                                        \
  X(cublasLtGetStatusName)                                                     \
  X(cublasLtCreate)                                                            \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)                                          \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmul)
  ZERO_LT_FUNCTIONS(ZERO_LT_FN)
#undef ZERO_LT_FN
};

#ifdef ZERO_RUNTIME_HAVE_NCCL
/// Entry points of NCCL.
struct NcclApi {
#define ZERO_NCCL_FN(fn) decltype(&fn) fn##_ = nullptr;
#define ZERO_NCCL_FUNCTIONS(X)                                                 \
  X(ncclGetVersion)                                                            \
  X(ncclGetErrorString)                                                        \
  X(ncclGetLastError)                                                          \
  X(ncclGetUniqueId)                                                           \
  X(ncclCommInitRank)                                                          \
  X(ncclCommAbort)                                                             \
  X(ncclCommFinalize)                                                          \
  X(ncclCommDestroy)                                                           \
  X(ncclCommGetAsyncError)                                                     \
  X(ncclAllReduce)                                                             \
  X(ncclReduceScatter)                                                         \
  X(ncclAllGather)
  ZERO_NCCL_FUNCTIONS(ZERO_NCCL_FN)
#undef ZERO_NCCL_FN
};
#endif

/// Each opens its library (the driver as libcuda.so.1, cuBLASLt and NCCL
/// by the major version of the headers the runtime was built with), fills
/// the table and returns the library's handle. Throws Error with one line
/// naming what is missing: the library, or an entry point of it.
void *openDriver(DriverApi &cu);
void *openCublasLt(LtApi &lt);
#ifdef ZERO_RUNTIME_HAVE_NCCL
void *openNccl(NcclApi &nccl);
#endif

} // namespace zero::runtime

#endif // ZERO_RUNTIME_HAVE_CUDA

#endif // ZERO_RUNTIME_LIB_BACKENDS_CUDA_CUDASYMBOLS_H
