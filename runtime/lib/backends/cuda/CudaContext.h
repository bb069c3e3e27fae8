//===- CudaContext.h - The CUDA backend's context ---------------*- C++ -*-===//
//
// What the CUDA backend's parts share: its compute (CudaBackend.cpp), its
// memory (CudaMemory.cpp) and its NCCL communicator (comm/nccl/Nccl.cpp):
// the driver's entry points, the one context they make current on each
// thread that calls them, the compute stream every use of device memory is
// ordered on, and the driver's errors as messages. The backend fills it when
// it opens the driver.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_BACKENDS_CUDA_CUDACONTEXT_H
#define ZERO_RUNTIME_LIB_BACKENDS_CUDA_CUDACONTEXT_H

#ifdef ZERO_RUNTIME_HAVE_CUDA

#include "Types.h"
#include "backends/cuda/CudaSymbols.h"

#include <string>

namespace zero::runtime {

class CudaContext {
public:
  std::string errorText(CUresult r) const {
    const char *name = nullptr, *text = nullptr;
    if (cu.cuGetErrorName_)
      cu.cuGetErrorName_(r, &name);
    if (cu.cuGetErrorString_)
      cu.cuGetErrorString_(r, &text);
    std::string out = name ? name : "CUDA error " + std::to_string(int(r));
    if (text)
      out += std::string(" (") + text + ")";
    return out;
  }

  void check(CUresult r, const std::string &what) const {
    if (r != CUDA_SUCCESS)
      throw Error(what + " failed: " + errorText(r));
  }

  /// The runtime's context is current on the calling thread (the driver's,
  /// the communication thread's).
  void makeCurrent() {
    if (currentOn != this) {
      check(cu.cuCtxSetCurrent_(context), "cuCtxSetCurrent");
      currentOn = this;
    }
  }

  /// A pointer to device memory as the driver takes it.
  static CUdeviceptr device(const void *ptr) {
    return reinterpret_cast<CUdeviceptr>(ptr);
  }

  bool makeCurrentNoThrow() noexcept {
    if (currentOn == this)
      return true;
    if (cu.cuCtxSetCurrent_(context) != CUDA_SUCCESS)
      return false;
    currentOn = this;
    return true;
  }

  DriverApi cu;
  CUcontext context = nullptr;
  CUstream computeStream = nullptr;

private:
  static inline thread_local CudaContext *currentOn = nullptr;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_HAVE_CUDA

#endif // ZERO_RUNTIME_LIB_BACKENDS_CUDA_CUDACONTEXT_H
