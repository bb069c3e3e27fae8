//===- CudaSymbols.cpp - CUDA libraries opened at run time ----------------===//
//
// Fills the tables of CudaSymbols.h with dlopen and dlsym.
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/CudaSymbols.h"

#ifdef ZERO_RUNTIME_HAVE_CUDA

#include "Types.h"

#include <dlfcn.h>

#include <string>

namespace zero::runtime {
namespace {

#define ZERO_STR2(x) #x
#define ZERO_STR(x) ZERO_STR2(x)

/// The versioned name a header macro expands to ("cuMemAlloc_v2").
#define ZERO_CU_NAME(fn) ZERO_STR(fn)

/// The library cuBLASLt is looked up as: the major version of the headers
/// the runtime was built with.
const std::string kCublasLtLibrary =
    "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);

#ifdef ZERO_RUNTIME_HAVE_NCCL
/// The library NCCL is looked up as: the major version of its header.
const std::string kNcclLibrary = "libnccl.so." + std::to_string(NCCL_MAJOR);
#endif

/// Opens `library`; throws Error with one line naming it and `what` it is
/// when that fails, with `hint` on where it may be.
void *openLibrary(const std::string &library, const char *what,
                  const char *hint) {
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    throw Error("cannot open " + std::string(what) + " (" + library +
                "): " + (why ? why : "not found") + "; " + hint);
  }
  return handle;
}

/// Looks `name` up in `handle` into `out`; throws Error when `library`
/// lacks it.
template <typename F>
void resolve(void *handle, const std::string &library, const char *name,
             F &out) {
  out = reinterpret_cast<F>(dlsym(handle, name));
  if (!out)
    throw Error(library + " has no " + name +
                ": the library is older than the headers the runtime was "
                "built with");
}

} // namespace

void *openDriver(DriverApi &cu) {
  void *driverLib =
      openLibrary("libcuda.so.1", "the CUDA driver",
                  "is the NVIDIA driver installed (no GPU here?)");
#define ZERO_CU_RESOLVE(fn)                                                    \
  resolve(driverLib, "libcuda.so.1", ZERO_CU_NAME(fn), cu.fn##_);
  ZERO_CU_FUNCTIONS(ZERO_CU_RESOLVE)
#undef ZERO_CU_RESOLVE
  return driverLib;
}

void *openCublasLt(LtApi &lt) {
  void *ltLib = openLibrary(
      kCublasLtLibrary, "cuBLASLt",
      "put its directory on LD_LIBRARY_PATH (the CUDA toolkit's lib64, or "
      "the nvidia-cublas Python package's nvidia/cu13/lib)");
#define ZERO_LT_RESOLVE(fn) resolve(ltLib, kCublasLtLibrary, #fn, lt.fn##_);
  ZERO_LT_FUNCTIONS(ZERO_LT_RESOLVE)
#undef ZERO_LT_RESOLVE
  return ltLib;
}

#ifdef ZERO_RUNTIME_HAVE_NCCL
void *openNccl(NcclApi &nccl) {
  void *ncclLib = openLibrary(
      kNcclLibrary, "NCCL",
      "put its directory on LD_LIBRARY_PATH (the CUDA toolkit's lib, or "
      "the nvidia-nccl Python package's nvidia/nccl/lib)");
#define ZERO_NCCL_RESOLVE(fn) resolve(ncclLib, kNcclLibrary, #fn, nccl.fn##_);
  ZERO_NCCL_FUNCTIONS(ZERO_NCCL_RESOLVE)
#undef ZERO_NCCL_RESOLVE
  return ncclLib;
}
#endif

} // namespace zero::runtime

#endif // ZERO_RUNTIME_HAVE_CUDA
