//===- CommQueue.cpp - The communication thread ---------------------------===//

#include "comm/CommQueue.h"

#ifdef __linux__
#include <sys/prctl.h>
#endif

namespace zero::runtime {

CommQueue &CommQueue::get() {
  static CommQueue *instance = new CommQueue();
  return *instance;
}

int64_t CommQueue::submit(Work work) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!thread.joinable()) {
    stopping = false;
    thread = std::thread([this] { loop(); });
  }
  queue.push_back(std::move(work));
  ++issued;
  workReady.notify_one();
  return issued;
}

void CommQueue::loop() {
#ifdef __linux__
  // The simulated link sleeps until each collective's modelled end: with
  // the default timer slack (50 us) every wake-up would come late, and a
  // step of a hundred small collectives would run a few milliseconds
  // behind the model.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    // Work submitted while runHere runs waits for it: tickets complete in
    // order.
    workReady.wait(lock, [&] {
      return (stopping || !queue.empty()) && !runningHere;
    });
    if (queue.empty())
      return; // stopping, and nothing left
    Work work = std::move(queue.front());
    queue.pop_front();
    bool skip = failedTicket != 0;
    lock.unlock();
    std::string error = skip ? std::string() : work();
    lock.lock();
    ++completed;
    if (!error.empty() && failedTicket == 0) {
      failedTicket = completed;
      failure = std::move(error);
    }
    workDone.notify_all();
  }
}

std::string CommQueue::takeFailure() {
  failedTicket = 0;
  return std::move(failure);
}

std::string CommQueue::runHere(const Work &work) {
  std::unique_lock<std::mutex> lock(mutex);
  workDone.wait(lock, [&] { return completed >= issued && !runningHere; });
  if (failedTicket != 0)
    return takeFailure();
  const int64_t ticket = ++issued;
  runningHere = true;
  lock.unlock();
  std::string error = work();
  lock.lock();
  runningHere = false;
  ++completed;
  workReady.notify_one();
  if (!error.empty() && failedTicket == 0) {
    failedTicket = ticket;
    failure = error;
  }
  workDone.notify_all();
  return error.empty() ? "" : takeFailure();
}

std::string CommQueue::wait(int64_t ticket) {
  std::unique_lock<std::mutex> lock(mutex);
  if (ticket <= 0 || ticket > issued)
    return "zrt_wait: request " + std::to_string(ticket) +
           " was never started (requests are numbered from 1; " +
           std::to_string(issued) + " started so far)";
  workDone.wait(lock, [&] { return completed >= ticket; });
  if (failedTicket != 0 && failedTicket <= ticket)
    return takeFailure();
  return "";
}

int64_t CommQueue::lastTicket() {
  std::lock_guard<std::mutex> lock(mutex);
  return issued;
}

std::string CommQueue::drain() {
  std::string error;
  std::thread finished;
  {
    std::unique_lock<std::mutex> lock(mutex);
    workDone.wait(lock, [&] { return completed >= issued; });
    if (failedTicket != 0)
      error = takeFailure();
    stopping = true;
    workReady.notify_one();
    finished = std::move(thread);
  }
  if (finished.joinable())
    finished.join();
  return error;
}

} // namespace zero::runtime
