//===- ThreadPool.cpp - The runtime's one pool of threads -----------------===//

#include "ThreadPool.h"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace zero::runtime {
namespace {

/// How long an idle worker keeps polling for the next job before it
/// sleeps. A step's parallel parts follow each other within microseconds
/// (a loop nest, a GEMM, a few calls of glue), and waking a sleeping
/// thread costs about as much as a small loop nest; between steps (data,
/// logging, collectives) and in a process that stopped computing, the
/// workers sleep and leave the cores to others.
constexpr std::chrono::microseconds kSpin{100};

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

} // namespace

ThreadPool &ThreadPool::get() {
  static ThreadPool *pool = new ThreadPool();
  return *pool;
}

void ThreadPool::stopWorkers() {
  {
    std::lock_guard<std::mutex> lock(sleepMutex);
    stopping.store(true);
  }
  wake.notify_all();
  for (std::thread &worker : workers)
    worker.join();
  workers.clear();
  stopping.store(false);
}

void ThreadPool::resize(int threads) {
  if (threads < 1)
    threads = 1;
  std::lock_guard<std::mutex> job(jobMutex);
  if (threads == numThreads.load() &&
      workers.size() == static_cast<std::size_t>(threads - 1))
    return;
  stopWorkers();
  numThreads.store(threads);
  // Workers start from the generation now current: a job posted before a
  // new thread first runs is still seen as new.
  uint64_t current = generation.load();
  for (int64_t i = 1; i < threads; ++i)
    workers.emplace_back([this, i, current] { workerLoop(i, current); });
}

void ThreadPool::workerLoop(int64_t index, uint64_t seen) {
  for (;;) {
    auto deadline = std::chrono::steady_clock::now() + kSpin;
    unsigned polls = 0;
    while (generation.load(std::memory_order_acquire) == seen &&
           !stopping.load(std::memory_order_relaxed)) {
      relax();
      // The clock is read every 64 polls only.
      if (++polls % 64 == 0 && std::chrono::steady_clock::now() > deadline) {
        std::unique_lock<std::mutex> lock(sleepMutex);
        ++sleepers;
        wake.wait(lock, [&] {
          return generation.load(std::memory_order_acquire) != seen ||
                 stopping.load();
        });
        --sleepers;
        break;
      }
    }
    if (stopping.load())
      return;
    seen = generation.load(std::memory_order_acquire);
    for (int64_t c = index; c < chunks; c += stride)
      task(context, c);
    acknowledged.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::run(int64_t numChunks, Task job, void *jobContext) {
  std::unique_lock<std::mutex> lock(jobMutex, std::try_to_lock);
  if (!lock.owns_lock() || workers.empty() || numChunks <= 1) {
    for (int64_t i = 0; i < numChunks; ++i)
      job(jobContext, i);
    return;
  }
  task = job;
  context = jobContext;
  chunks = numChunks;
  const auto numWorkers = static_cast<int64_t>(workers.size());
  stride = numWorkers + 1;
  acknowledged.store(0, std::memory_order_relaxed);
  generation.fetch_add(1, std::memory_order_acq_rel);
  {
    std::lock_guard<std::mutex> sleep(sleepMutex);
    if (sleepers > 0)
      wake.notify_all();
  }
  for (int64_t c = 0; c < numChunks; c += stride)
    job(jobContext, c);
  while (acknowledged.load(std::memory_order_acquire) < numWorkers)
    relax();
}

} // namespace zero::runtime
