//===- ThreadPool.h - The runtime's one pool of threads ---------*- C++ -*-===//
//
// Every parallel part of a step runs on this pool: the generated loop nests
// that zrt_parallel_for dispatches and the CPU backend's GEMMs, which it
// splits into single-threaded OpenBLAS calls. One pool, so no second set of
// threads (OpenBLAS's own) spins on the cores while the other works
// (docs/decisions/0021-one-pool-of-threads.md).
//
// A job is `chunks` calls task(context, i), i < chunks; with T threads,
// the calling thread runs chunks 0, T, 2T, ... and worker w chunks w, w + T,
// ... Every worker takes part
// in every job (those without a chunk only acknowledge it), so a job's
// fields stay unchanged until all workers have read them. Idle workers spin
// for a short while, then sleep on a condition variable.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_THREADPOOL_H
#define ZERO_RUNTIME_LIB_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace zero::runtime {

class ThreadPool {
public:
  using Task = void (*)(void *context, int64_t chunk);

  /// The process-wide pool (never destroyed: workers may still be asleep
  /// during static destruction).
  static ThreadPool &get();

  /// Sets the number of threads, the caller included (>= 1); waits for a
  /// running job first.
  void resize(int threads);

  /// The number of threads a job can use, the caller included.
  int threads() const { return numThreads.load(std::memory_order_relaxed); }

  /// Runs task(context, i) for every i < chunks
  /// and returns when all have returned. A job started while another runs
  /// (another thread's, or from inside a task) runs its chunks one after
  /// another on the calling thread instead.
  void run(int64_t chunks, Task task, void *context);

private:
  ThreadPool() = default;
  void stopWorkers();
  void workerLoop(int64_t index, uint64_t seen);

  std::atomic<int> numThreads{1};
  /// Held for the whole of a job, and by resize().
  std::mutex jobMutex;
  std::vector<std::thread> workers;

  // The current job: written before `generation` is bumped, read by workers
  // after they see the new generation.
  Task task = nullptr;
  void *context = nullptr;
  int64_t chunks = 0;
  /// Participant p runs chunks p, p + stride, ... (stride: workers + 1).
  int64_t stride = 1;
  std::atomic<uint64_t> generation{0};
  /// Workers that finished (or skipped) their part of the current job.
  std::atomic<int64_t> acknowledged{0};
  std::atomic<bool> stopping{false};

  std::mutex sleepMutex;
  std::condition_variable wake;
  int sleepers = 0;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_LIB_THREADPOOL_H
