//===- Runtime.cpp - The zero-runtime C ABI -------------------------------===//
//
// What runtime.h promises that belongs to no part of its own: backend
// selection, zrt_init and zrt_shutdown, the parallel loops and the world's
// rank and size. The rest of the C ABI is one file per part (declared
// together in RuntimeInternal.h): the error channel (Errors.cpp), the
// allocator (Memory.cpp), GEMMs (Gemm.cpp), collectives (Collectives.cpp),
// what target=cuda code calls (CudaHooks.cpp), the NVMe tier
// (NvmeEntryPoints.cpp) and tracing (Tracing.cpp); the MPI world is in
// Comm.cpp, the collectives themselves in MpiCollectives.cpp. C++
// exceptions are used inside and stop at `guarded`, which every entry point
// goes through.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include "comm/Comm.h"
#include "comm/CommQueue.h"
#include "Nvme.h"
#include "ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace zero::runtime;

namespace {

//===----------------------------------------------------------------------===//
// Backend selection
//===----------------------------------------------------------------------===//

std::atomic<Backend *> activeBackend{nullptr};
std::mutex initMutex;

/// registerTestBackend's backends (guarded by initMutex).
std::vector<Backend *> &testBackends() {
  static auto *backends = new std::vector<Backend *>();
  return *backends;
}

void init(const char *name, int numThreads) {
  std::string requested = name ? name : "cpu";
  Backend *backend = nullptr;
  if (requested == "cpu")
    backend = &cpuBackend();
  else if (requested == "cuda")
    backend = &cudaBackend();
  else {
    std::lock_guard<std::mutex> lock(initMutex);
    for (Backend *b : testBackends())
      if (requested == b->name)
        backend = b;
  }
  if (!backend)
    throw Error("unknown backend \"" + requested + "\" (built: cpu, cuda)");
  {
    std::lock_guard<std::mutex> lock(initMutex);
    backend->compute.configure(numThreads);
    activeBackend.store(backend);
  }
  comm::initWorld();
}

} // namespace

Backend &zero::runtime::backend() {
  if (Backend *b = activeBackend.load())
    return *b;
  std::lock_guard<std::mutex> lock(initMutex);
  if (!activeBackend.load()) {
    cpuBackend().compute.configure(0);
    activeBackend.store(&cpuBackend());
  }
  return *activeBackend.load();
}

void zero::runtime::registerTestBackend(Backend &backend) {
  std::lock_guard<std::mutex> lock(initMutex);
  testBackends().push_back(&backend);
}

//===----------------------------------------------------------------------===//
// C ABI
//===----------------------------------------------------------------------===//

extern "C" {

int zrt_init(const char *backendName, int num_threads) {
  return guarded("zrt_init", [&] { init(backendName, num_threads); }) ? 0 : 1;
}

void zrt_shutdown(void) {
  if (!guarded("zrt_shutdown", [] {
        {
          std::lock_guard<std::mutex> lock(initMutex);
          activeBackend.store(nullptr);
        }
        NvmeStore::get().close();
        releaseCachedBlocks();
        std::string error = CommQueue::get().drain();
        if (!error.empty())
          throw Error("a started collective failed: " + error);
        comm::finalizeWorld();
      }))
    reportFatal();
}

namespace {
/// zrt_parallel_for's ranges: chunk i of `chunks` over [0, n).
struct ParallelRanges {
  zrt_parallel_body body;
  void *context;
  int64_t n, chunks;

  static void run(void *self, int64_t i) {
    auto *r = static_cast<ParallelRanges *>(self);
    // i * n cannot overflow: i < chunks <= threads, n < 2^63 / threads is
    // checked by the caller.
    int64_t begin = i * r->n / r->chunks, end = (i + 1) * r->n / r->chunks;
    if (begin < end)
      r->body(r->context, begin, end);
  }
};
} // namespace

void zrt_parallel_for(int64_t n, zrt_parallel_body body, void *context) {
  if (!guarded("zrt_parallel_for", [&] {
        if (!body)
          throw Error("body is NULL");
        if (n <= 0)
          return;
        backend();
        ThreadPool &pool = ThreadPool::get();
        int64_t threads = pool.threads();
        if (threads <= 1 || n == 1 ||
            n > std::numeric_limits<int64_t>::max() / threads) {
          body(context, 0, n);
          return;
        }
        ParallelRanges ranges{body, context, n, std::min<int64_t>(n, threads)};
        pool.run(ranges.chunks, &ParallelRanges::run, &ranges);
      }))
    reportFatal();
}

int zrt_get_num_threads(void) {
  int threads = 1;
  if (!guarded("zrt_get_num_threads", [&] {
        backend();
        threads = ThreadPool::get().threads();
      }))
    reportFatal();
  return threads;
}

int zrt_world_rank(void) {
  int rank = 0;
  if (!guarded("zrt_world_rank", [&] { rank = comm::rank(); }))
    reportFatal();
  return rank;
}

int zrt_world_size(void) {
  int size = 1;
  if (!guarded("zrt_world_size", [&] { size = comm::size(); }))
    reportFatal();
  return size;
}

void zrt_abort(const char *message) { comm::terminate(message); }

void zrt_abort_all(const char *message) {
  int rank = 0, size = 1;
  // A world that cannot be set up is a world of this rank alone.
  if (guarded("zrt_abort_all", [&] {
        rank = comm::rank();
        size = comm::size();
      }) &&
      size > 1 && rank != 0)
    std::this_thread::sleep_for(
        std::chrono::seconds(ZRT_ABORT_ALL_GRACE_SECONDS));
  comm::terminate(message);
}

} // extern "C"
