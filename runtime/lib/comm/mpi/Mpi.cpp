//===- Mpi.cpp - MPI, opened at run time ----------------------------------===//
//
// The table of Mpi.h, filled with dlsym from the MPI library the runtime was
// built against: first by its soname (the loader's search path, or the copy
// an application already loaded), then at the path the build linked. Opened
// with RTLD_GLOBAL, as Open MPI's own plugins expect of their host library.
//
//===----------------------------------------------------------------------===//

#define ZERO_MPI_NO_REDIRECT
#include "comm/mpi/Mpi.h"

#include "Types.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#ifndef ZERO_MPI_SONAME
#error "ZERO_MPI_SONAME (the MPI library's soname) must be defined"
#endif
#ifndef ZERO_MPI_LIBRARY
#error "ZERO_MPI_LIBRARY (the MPI library's path) must be defined"
#endif

namespace zero::runtime::mpi {
namespace {

struct Library {
  std::mutex mutex;
  void *handle = nullptr;
  Api api;
};

Library &library() {
  // Leaked on purpose: MPI is used during static destruction (the fatal
  // path) and must stay reachable.
  static Library *instance = new Library();
  return *instance;
}

} // namespace

bool loaded() {
  Library &lib = library();
  {
    std::lock_guard<std::mutex> lock(lib.mutex);
    if (lib.handle)
      return true;
  }
  void *h = dlopen(ZERO_MPI_SONAME, RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    h = dlopen(ZERO_MPI_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return false;
  dlclose(h);
  return true;
}

void open() {
  Library &lib = library();
  std::lock_guard<std::mutex> lock(lib.mutex);
  if (lib.handle)
    return;
  void *h = dlopen(ZERO_MPI_SONAME, RTLD_NOW | RTLD_GLOBAL);
  std::string why = h ? "" : dlerror();
  if (!h)
    h = dlopen(ZERO_MPI_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
  if (!h)
    throw Error(std::string("cannot open the MPI library (") + ZERO_MPI_SONAME +
                "): " + why +
                "; install the MPI this runtime was built with (Debian: "
                "libopenmpi3) or put its directory on LD_LIBRARY_PATH");
  Api api;
#define ZERO_MPI_RESOLVE(fn)                                                   \
  api.fn = reinterpret_cast<decltype(api.fn)>(dlsym(h, #fn));                  \
  if (!api.fn)                                                                 \
    throw Error(std::string(ZERO_MPI_SONAME) + " has no " #fn);
  ZERO_MPI_FUNCTIONS(ZERO_MPI_RESOLVE)
#undef ZERO_MPI_RESOLVE
  lib.api = api;
  lib.handle = h;
}

const Api &api() { return library().api; }

void *predefined(const char *name) {
  void *handle = library().handle;
  void *p = handle ? dlsym(handle, name) : nullptr;
  // Only the runtime's own names come here, all of them MPI's predefined
  // objects: a miss is a library of another MPI.
  if (!p)
    throw Error(std::string("the MPI library has no ") + name +
                " (an MPI other than the one this runtime was built with?)");
  return p;
}

} // namespace zero::runtime::mpi
