//===- CudaHooks.cpp - What generated code for target=cuda calls ----------===//
//
// What a step lowered with target=cuda calls besides the rest of runtime.h,
// and what a driver uses to reach the buffers of a backend whose memory the
// host cannot touch: the copies (zrt_copy_start, which offloading steps of
// either target call, included), the compute stream and its settings, and
// the hooks MLIR's gpu-to-LLVM lowering calls (mgpuModuleLoad,
// mgpuLaunchKernel, ...), which load kernel images into the selected
// backend and launch them on its compute stream, timed per kernel for
// zrt_get_kernel_stats.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

using namespace zero::runtime;

namespace {

/// Launches and seconds per kernel (zrt_get_kernel_stats), by the function
/// handle generated code launches. Entries (and their names) stay for the
/// process's life; a reset zeroes their counts.
class KernelProfile {
public:
  void name(void *function, const char *kernel) {
    std::lock_guard<std::mutex> lock(mutex);
    if (index.try_emplace(function, entries.size()).second)
      entries.push_back(Entry{kernel, 0, 0.0});
  }
  void record(void *function, double seconds) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = index.find(function);
    if (it == index.end())
      return;
    ++entries[it->second].launches;
    entries[it->second].seconds += seconds;
  }
  void reset() {
    std::lock_guard<std::mutex> lock(mutex);
    for (Entry &e : entries)
      e.launches = 0, e.seconds = 0;
  }
  std::size_t count() {
    std::lock_guard<std::mutex> lock(mutex);
    return entries.size();
  }
  bool get(std::size_t i, zrt_kernel_stats &out) {
    std::lock_guard<std::mutex> lock(mutex);
    if (i >= entries.size())
      return false;
    out = zrt_kernel_stats{entries[i].name.c_str(), entries[i].launches,
                           entries[i].seconds};
    return true;
  }

private:
  struct Entry {
    std::string name;
    uint64_t launches;
    double seconds;
  };
  std::mutex mutex;
  std::unordered_map<void *, std::size_t> index;
  std::deque<Entry> entries; // stable: names are handed out
};

KernelProfile &kernelProfile() {
  static KernelProfile *instance = new KernelProfile();
  return *instance;
}

/// A backend's kernels; throws Error naming the backend where it runs none.
Kernels &kernelsOf(const Backend &b) {
  if (!b.kernels)
    throw Error(format(
        "this step was compiled for target=cuda, and the runtime's backend "
        "is \"%s\", which runs no GPU kernels: run it with the \"cuda\" "
        "backend (zrt_init(\"cuda\", ...); zero-run and compiled binaries "
        "choose it from the step), or compile the step for target=cpu",
        b.name));
  return *b.kernels;
}

/// A kernel image recorded by mgpuModuleLoad (a global constructor, which
/// runs before zrt_init chooses a device), loaded into the backend's
/// context at its first mgpuModuleGetFunction. Generated code asks for the
/// function at every launch, so functions are kept by name.
struct KernelModule {
  const void *data;
  size_t size;
  std::mutex mutex;
  Kernels *loadedBy = nullptr;
  void *loaded = nullptr;
  std::unordered_map<std::string, void *> functions;

  KernelModule(const void *data, size_t size) : data(data), size(size) {}

  void *function(const char *name) {
    Backend &b = backend();
    std::lock_guard<std::mutex> lock(mutex);
    if (!loadedBy || loadedBy != b.kernels) {
      if (!data)
        throw Error("the kernel module's image is NULL");
      Kernels &k = kernelsOf(b);
      loaded = k.loadModule(data);
      loadedBy = &k;
      functions.clear();
    }
    auto it = functions.find(name);
    if (it != functions.end())
      return it->second;
    void *f = loadedBy->moduleFunction(loaded, name);
    functions.emplace(name, f);
    kernelProfile().name(f, name);
    return f;
  }
};

/// The arguments of a copy entry point: whether there is anything to
/// copy; throws Error for a negative count or a null pointer.
bool checkCopy(const void *dst, const void *src, int64_t bytes) {
  if (bytes < 0)
    throw Error(format("bytes = %lld is negative", static_cast<long long>(bytes)));
  if (bytes > 0 && (!dst || !src))
    throw Error(std::string(!dst ? "dst" : "src") + " is NULL");
  return bytes > 0;
}

/// One of the copy entry points: checks the arguments, then has the
/// backend's compute copy.
void copyEntry(const char *name, void *dst, const void *src, int64_t bytes,
               void (Compute::*copy)(void *, const void *, std::size_t)) {
  if (!guarded(name, [&] {
        if (checkCopy(dst, src, bytes))
          (backend().compute.*copy)(dst, src, static_cast<size_t>(bytes));
      }))
    reportFatal();
}

} // namespace

void zero::runtime::resetKernelProfile() { kernelProfile().reset(); }

//===----------------------------------------------------------------------===//
// C ABI
//===----------------------------------------------------------------------===//

extern "C" {

void zrt_copy_to_host(void *dst, const void *src, int64_t bytes) {
  copyEntry("zrt_copy_to_host", dst, src, bytes, &Compute::copyToHost);
}

void zrt_copy_from_host(void *dst, const void *src, int64_t bytes) {
  copyEntry("zrt_copy_from_host", dst, src, bytes, &Compute::copyFromHost);
}

void zrt_copy(void *dst, const void *src, int64_t bytes) {
  copyEntry("zrt_copy", dst, src, bytes, &Compute::copy);
}

int64_t zrt_copy_start(const void *src, void *dst, int64_t bytes) {
  int64_t request = kCopyRequestTag | kNoCopy;
  if (!guarded("zrt_copy_start", [&] {
        if (checkCopy(dst, src, bytes))
          request = kCopyRequestTag | backend().compute.copyStart(
                                          dst, src, static_cast<size_t>(bytes));
      }))
    reportFatal();
  return request;
}

int zrt_host_accessible(void) {
  int result = 1;
  if (!guarded("zrt_host_accessible", [&] {
        result = backend().deviceMemory.hostAccessible() ? 1 : 0;
      }))
    reportFatal();
  return result;
}

void zrt_synchronize(void) {
  if (!guarded("zrt_synchronize", [] { backend().compute.synchronize(); }))
    reportFatal();
}

int zrt_set_tf32(int enable) {
  int previous = 0;
  if (!guarded("zrt_set_tf32", [&] {
        previous = backend().compute.setTf32(enable != 0) ? 1 : 0;
      }))
    reportFatal();
  return previous;
}

void *zrt_gpu_stream(void) {
  void *stream = nullptr;
  if (!guarded("zrt_gpu_stream",
               [&] { stream = kernelsOf(backend()).stream(); }))
    reportFatal();
  return stream;
}

void *mgpuModuleLoad(void *data, size_t size) {
  // Never fails: a global constructor has nobody to report to (a NULL
  // module is reported at its first function).
  return new (std::nothrow) KernelModule(data, size);
}

void *mgpuModuleLoadJIT(void *data, int opt_level) {
  (void)opt_level;
  // PTX text (gpu-format=isa), NUL-terminated: the driver compiles it.
  return new (std::nothrow)
      KernelModule(data, data ? std::strlen(static_cast<char *>(data)) : 0);
}

void mgpuModuleUnload(void *module) {
  // A global destructor, after zrt_shutdown: the loaded module goes with
  // the backend's context; only the record is freed here.
  delete static_cast<KernelModule *>(module);
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  void *f = nullptr;
  if (!guarded("mgpuModuleGetFunction", [&] {
        if (!module)
          throw Error("the kernel module is NULL (out of memory at start-up)");
        if (!name)
          throw Error("the kernel name is NULL");
        f = static_cast<KernelModule *>(module)->function(name);
      }))
    reportFatal();
  return f;
}

void mgpuLaunchKernel(void *function, intptr_t grid_x, intptr_t grid_y,
                      intptr_t grid_z, intptr_t block_x, intptr_t block_y,
                      intptr_t block_z, int32_t shared_bytes, void *stream,
                      void **params, void **extra, size_t param_count) {
  (void)param_count;
  if (!guarded("mgpuLaunchKernel", [&] {
        Backend &b = backend();
        // A backend without kernels says so before anything else.
        Kernels &k = kernelsOf(b);
        void *computeStream = k.stream();
        if (!function)
          throw Error("the kernel function is NULL");
        if (extra)
          throw Error("kernel parameters in `extra` are not supported");
        if (stream != computeStream)
          throw Error("the launch's stream is not the runtime's compute "
                      "stream (zrt_gpu_stream)");
        const int64_t grid[3] = {grid_x, grid_y, grid_z};
        const int64_t block[3] = {block_x, block_y, block_z};
        const bool sync = syncTiming.load(std::memory_order_relaxed);
        if (sync)
          b.compute.synchronize();
        auto start = std::chrono::steady_clock::now();
        k.launch(function, grid, block, shared_bytes, params);
        if (sync)
          b.compute.synchronize();
        kernelProfile().record(
            function, std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());
      }))
    reportFatal();
}

size_t zrt_kernel_stats_count(void) { return kernelProfile().count(); }

int zrt_get_kernel_stats(size_t index, zrt_kernel_stats *out) {
  return guarded("zrt_get_kernel_stats",
                 [&] {
                   if (!out)
                     throw Error("out is NULL");
                   if (!kernelProfile().get(index, *out))
                     throw Error(format("index %zu is out of range (%zu "
                                        "kernels)",
                                        index, kernelProfile().count()));
                 })
             ? 0
             : 1;
}

} // extern "C"
