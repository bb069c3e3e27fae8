//===- CommQueue.h - The communication thread ------------------*- C++ -*-===//
//
// Asynchronous collectives (runtime.h, "Asynchronous collectives") run on one
// communication thread, in the order they were started. Every rank starts
// the same collectives in the same order, so the FIFO keeps the ranks'
// sequences matched without any tag or matching logic; the collectives
// themselves are the blocking ones of Comm.h, so a started collective
// reduces in exactly the order its blocking form does and the results are
// bit-identical.
//
// A ticket is the 1-based number of a submission; work completes in ticket
// order, so waiting for ticket t is waiting until t tickets have run. Work
// reports failure by returning a message; after a failure the later work is
// not run (its collectives could only mismatch the other ranks') until the
// failure is reported: the first wait for the failed ticket or a later one
// (or the next runHere) returns the message, once.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_COMM_COMMQUEUE_H
#define ZERO_RUNTIME_LIB_COMM_COMMQUEUE_H

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace zero::runtime {

class CommQueue {
public:
  /// Returns "" on success, else a one-line message.
  using Work = std::function<std::string()>;

  /// The process-wide queue (never destroyed: its thread may still sleep on
  /// it during static destruction).
  static CommQueue &get();

  /// Queues `work` and returns its ticket. Starts the thread if needed.
  int64_t submit(Work work);

  /// Waits for the submitted work, then runs `work` on the calling thread
  /// as the next ticket and returns as wait() would for it (without running
  /// it after a failure). For blocking collectives, which thus keep their
  /// place in the order, and for an MPI that allows no second thread.
  std::string runHere(const Work &work);

  /// Blocks until ticket `ticket` has run. Returns "", or the message of
  /// an unreported failure at `ticket` or before. A ticket that was never
  /// issued is an error message too.
  std::string wait(int64_t ticket);

  /// The latest ticket issued.
  int64_t lastTicket();

  /// Waits for every submitted ticket and ends the thread (zrt_shutdown);
  /// a later submit starts a new one. Returns as wait() does.
  std::string drain();

private:
  CommQueue() = default;
  void loop();
  /// Returns the failure and clears it; the caller holds `mutex`.
  std::string takeFailure();

  std::mutex mutex;
  std::condition_variable workReady, workDone;
  std::deque<Work> queue;
  std::thread thread;
  bool stopping = false;
  /// runHere is running work on its caller's thread.
  bool runningHere = false;
  int64_t issued = 0, completed = 0;
  /// The failed ticket not reported yet (0: none) and its message.
  int64_t failedTicket = 0;
  std::string failure;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_LIB_COMM_COMMQUEUE_H
