//===- Comm.cpp - World of zero-runtime -----------------------------------===//
//
// The world of data-parallel ranks on MPI, or the process alone: its set-up
// and shutdown, the waits for a collective with a deadline, the report that
// ends a job whose rank stalled, and a collective started on a Communicator
// and waited for: MPI's, or the backend's (NCCL), which is made here on its
// first collective. Which one runs a collective is Dispatch.cpp's choice;
// the collectives on MPI, in their fixed reduction order, are
// mpi/MpiCollectives.cpp's; what the three share is CommInternal.h.
//
// Every MPI call is made under the world's mutex (MPI is initialized with
// MPI_THREAD_SERIALIZED), on a duplicate of MPI_COMM_WORLD with
// MPI_ERRORS_RETURN, and its return code is checked.
//
//===----------------------------------------------------------------------===//

#include "comm/CommInternal.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <sys/uio.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

namespace zero::runtime {
namespace comm {

//===----------------------------------------------------------------------===//
// The world
//===----------------------------------------------------------------------===//

World &world() {
  // Leaked on purpose, as the allocator's state is: a fatal error during
  // static destruction must still find it.
  static World *instance = new World();
  return *instance;
}

namespace {

std::string mpiErrorString(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

} // namespace

void check(int rc, const char *what) {
  if (rc != MPI_SUCCESS)
    throw Error(std::string(what) + " failed: " + mpiErrorString(rc));
}

namespace {

/// Whether an MPI launcher started this process (runtime.h lists the
/// variables): only then is MPI initialized, so that a plain run never
/// starts Open MPI's singleton machinery.
bool launchedByMpi() {
  for (const char *name :
       {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    const char *value = std::getenv(name);
    if (value && *value)
      return true;
  }
  return false;
}

/// Sets the world up; the caller holds w.mutex.
void initLocked(World &w) {
  if (w.state.load() != State::Uninitialized)
    return;
  // MPI is opened only when a launcher started the process or the
  // application has it loaded (and may have initialized it): otherwise the
  // world is this process alone, and no MPI library is needed.
  if (!launchedByMpi() && !mpi::loaded()) {
    w.rank.store(0);
    w.size.store(1);
    w.state.store(State::Local);
    return;
  }
  mpi::open();
  int initialized = 0, finalized = 0;
  check(MPI_Initialized(&initialized), "MPI_Initialized");
  check(MPI_Finalized(&finalized), "MPI_Finalized");
  if (finalized)
    throw Error("MPI was finalized before zero-runtime set its world up");
  if (!initialized) {
    if (!launchedByMpi()) {
      w.rank.store(0);
      w.size.store(1);
      w.state.store(State::Local);
      return;
    }
    int provided = MPI_THREAD_SINGLE;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided),
          "MPI_Init_thread");
    w.ownsMpi = true;
    // Errors of calls without a communicator (datatypes) are raised on
    // MPI_COMM_WORLD; report them instead of letting MPI abort. Only when
    // MPI is ours: an application's setting is its own.
    check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
          "MPI_Comm_set_errhandler");
  }
  MPI_Comm comm = MPI_COMM_NULL;
  check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
  int rank = 0, size = 1;
  int rc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_rank(comm, &rank);
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_size(comm, &size);
  if (rc != MPI_SUCCESS) {
    MPI_Comm_free(&comm);
    check(rc, "MPI_Comm_rank/size");
  }
  MPI_Comm control = MPI_COMM_NULL;
  rc = MPI_Comm_dup(comm, &control);
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_set_errhandler(control, MPI_ERRORS_RETURN);
  if (rc != MPI_SUCCESS) {
    if (control != MPI_COMM_NULL)
      MPI_Comm_free(&control);
    MPI_Comm_free(&comm);
    check(rc, "MPI_Comm_dup");
  }
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Query_thread(&provided) == MPI_SUCCESS)
    w.threadsAllowed.store(provided >= MPI_THREAD_SERIALIZED);
  else
    w.threadsAllowed.store(false);
  w.comm = comm;
  w.control = control;
  w.rank.store(rank);
  w.size.store(size);
  w.state.store(State::Mpi);
}

} // namespace

World &worldForCollective(std::unique_lock<std::mutex> &lock) {
  World &w = world();
  lock = std::unique_lock<std::mutex>(w.mutex);
  initLocked(w);
  if (w.state.load() == State::Finalized && w.size.load() > 1)
    throw Error("the MPI world was finalized by zrt_shutdown: no collective "
                "over " +
                std::to_string(w.size.load()) + " ranks can run after it");
  return w;
}

namespace {

//===----------------------------------------------------------------------===//
// Waiting with a deadline
//===----------------------------------------------------------------------===//
//
// Every collective is posted nonblocking and waited for here: polled
// (MPI_Test drives Open MPI's progress), yielding the core between polls,
// for the first millisecond, then
// with sleeps that grow from 50 us to 10 ms, so a rank that waits long
// leaves its core to others. After 100 ms of waiting, a rank answers its
// peers' questions on the control communicator. When the deadline passes
// (zrt_set_comm_timeout), it asks every other rank which collective it has
// reached, waits a few seconds for the answers, and ends the job with one
// line naming the collective and the ranks that did not answer or are
// behind.

constexpr int kQueryTag = 7301, kReplyTag = 7302;

std::atomic<double> commTimeout{600.0};

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Answers every question waiting on the control communicator with this
/// rank's sequence number.
void answerQueries(World &w) {
  for (;;) {
    int flag = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, kQueryTag, w.control, &flag, &status) !=
            MPI_SUCCESS ||
        !flag)
      return;
    int64_t theirs = 0;
    MPI_Recv(&theirs, 1, MPI_INT64_T, status.MPI_SOURCE, kQueryTag, w.control,
             MPI_STATUS_IGNORE);
    // Eight bytes go eagerly: this send does not wait for the receiver.
    MPI_Send(&w.sequence, 1, MPI_INT64_T, status.MPI_SOURCE, kReplyTag,
             w.control);
  }
}

/// Between polls: for the first millisecond of a wait a yield of the core
/// (a spin when no other thread wants it), then sleeps of 50 us until
/// 100 ms, then doubling up to 10 ms. A scheduled step has a
/// communication thread beside each rank's compute thread; where ranks
/// share cores, a spinning poll took the core from a compute thread
/// (docs/decisions/0022-collectives-wait-with-a-deadline.md).
void backOff(double waited, useconds_t &sleep) {
  if (waited < 1e-3) {
    std::this_thread::yield();
    return;
  }
  if (waited < 0.1) {
    ::usleep(50);
    return;
  }
  ::usleep(sleep);
  sleep = std::min<useconds_t>(sleep * 2, 10000);
}

[[noreturn]] void timedOut(World &w, double timeout) {
  const int N = w.size.load(), q = w.rank.load();
  const int64_t mine = w.sequence;
  std::vector<int64_t> theirs(N, -1);
  std::vector<MPI_Request> sends(N, MPI_REQUEST_NULL),
      recvs(N, MPI_REQUEST_NULL);
  for (int r = 0; r < N; ++r) {
    if (r == q)
      continue;
    MPI_Irecv(&theirs[r], 1, MPI_INT64_T, r, kReplyTag, w.control, &recvs[r]);
    MPI_Isend(&mine, 1, MPI_INT64_T, r, kQueryTag, w.control, &sends[r]);
  }
  // Answers come within milliseconds from a rank that is alive (it is
  // waiting too, and answers while it waits); a few seconds cover a loaded
  // machine.
  const double grace = std::min(5.0, std::max(1.0, timeout));
  // Each answer is taken only from a receive that completed without error
  // (once the first rank ends the job, the others' receives may fail).
  std::vector<char> answered(N, 0);
  answered[q] = 1;
  Clock::time_point start = Clock::now();
  useconds_t sleep = 1000;
  for (int pending = N - 1; pending > 0 && secondsSince(start) <= grace;) {
    answerQueries(w);
    for (int r = 0; r < N; ++r) {
      if (answered[r] || recvs[r] == MPI_REQUEST_NULL)
        continue;
      int flag = 0;
      MPI_Status status;
      if (MPI_Test(&recvs[r], &flag, &status) != MPI_SUCCESS) {
        recvs[r] = MPI_REQUEST_NULL;
        continue;
      }
      if (flag) {
        answered[r] = status.MPI_ERROR == MPI_SUCCESS ? 1 : 0;
        --pending;
      }
    }
    backOff(secondsSince(start) + 0.1, sleep);
  }
  std::string missing, behind;
  for (int r = 0; r < N; ++r) {
    if (r == q)
      continue;
    if (!answered[r])
      missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    else if (theirs[r] < mine)
      behind += (behind.empty() ? "" : ", ") + std::to_string(r);
  }
  char head[256];
  std::snprintf(head, sizeof head,
                "zero-runtime: rank %d: %s (collective %lld of this rank) "
                "did not complete within %g s (--comm-timeout): ",
                q, w.collective, static_cast<long long>(mine), timeout);
  std::string line = head;
  if (!missing.empty())
    line += "rank(s) " + missing +
            " did not answer (stalled or unreachable)";
  if (!behind.empty())
    line += std::string(missing.empty() ? "" : "; ") + "rank(s) " + behind +
            " are at an earlier collective";
  if (missing.empty() && behind.empty())
    line += "every rank answered from this collective or a later one";
  line += "; ending the job";
  terminate(line.c_str());
}

} // namespace

void startCollective(World &w, const char *name) {
  ++w.sequence;
  w.collective = name;
  // A stalled rank, where a test asks for one (TestHooks.h).
  if (stallHere(w.rank.load(), w.sequence))
    ::raise(SIGSTOP);
}

void waitFor(World &w, MPI_Request &request, const char *what) {
  const double timeout = commTimeout.load();
  Clock::time_point start = Clock::now();
  useconds_t sleep = 50;
  for (;;) {
    int flag = 0;
    check(MPI_Test(&request, &flag, MPI_STATUS_IGNORE), what);
    if (flag)
      return;
    double waited = secondsSince(start);
    // Questions come only from a rank whose deadline passed, which all the
    // ranks it waits with have been waiting for too: no probe for them on
    // the step's short waits.
    if (waited > 0.1)
      answerQueries(w);
    if (timeout > 0 && waited > timeout)
      timedOut(w, timeout);
    backOff(waited, sleep);
  }
}

//===----------------------------------------------------------------------===//
// Collectives on a communicator
//===----------------------------------------------------------------------===//

Backend *deviceFor(int N) {
  return N > 1 || ncclWorldOfOne() ? deviceCollectives(N) : nullptr;
}

namespace {

/// The mark of the compute stream the next device collective on this
/// thread waits for (Communicator::markCompute; -1: none).
thread_local int64_t startMark = -1;

} // namespace

void runOnDevice(World &w, Backend &b, const CollectiveArgs &c) {
  Communicator &communicator = *b.communicator;
  int64_t mark = startMark;
  startMark = -1;
  const int N = w.size.load();
  if (w.device != &b) {
    if (w.device)
      throw Error(std::string("device collectives of backend '") + b.name +
                  "' after those of '" + w.device->name +
                  "': one communicator a world (zrt_shutdown first)");
    communicator.open(w.rank.load(), N, [&](void *data, std::size_t bytes) {
      if (N == 1)
        return;
      MPI_Request request;
      check(MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, 0, w.comm,
                       &request),
            "MPI_Ibcast (NCCL's id)");
      waitFor(w, request, "MPI_Ibcast (NCCL's id)");
    });
    w.device = &b;
  }
  runOn(w, communicator, c, mark);
}

void runOn(World &w, Communicator &communicator, const CollectiveArgs &c,
           int64_t mark) {
  const int N = w.size.load();
  int64_t handle = communicator.start(c, mark);
  const double timeout = commTimeout.load();
  Clock::time_point start = Clock::now();
  useconds_t sleep = 50;
  while (!communicator.done(handle)) {
    double waited = secondsSince(start);
    if (N > 1 && waited > 0.1)
      answerQueries(w);
    if (timeout > 0 && waited > timeout) {
      communicator.abort();
      // Only a device's communicator leaves a collective to poll (MPI's
      // completes it in start()): a world of one here is the test hook's.
      if (N == 1) {
        char line[160];
        std::snprintf(line, sizeof line,
                      "%s on the device did not complete within %g s "
                      "(--comm-timeout)",
                      w.collective, timeout);
        throw Error(line);
      }
      timedOut(w, timeout);
    }
    backOff(waited, sleep);
  }
}

//===----------------------------------------------------------------------===//
// Interface
//===----------------------------------------------------------------------===//

void initWorld() {
  World &w = world();
  // Once set up, rank and size are read without the lock, which a
  // collective on another thread may hold for a long time.
  if (w.state.load() != State::Uninitialized)
    return;
  std::lock_guard<std::mutex> lock(w.mutex);
  initLocked(w);
}

void finalizeWorld() {
  World &w = world();
  std::lock_guard<std::mutex> lock(w.mutex);
  const bool mpi = w.state.load() == State::Mpi;
  // MPI_Finalize waits for every rank; a barrier with a deadline first, so
  // that a rank that stalled ends the job instead of hanging it here.
  if (mpi && w.size.load() > 1) {
    startCollective(w, "shutdown barrier");
    MPI_Request request;
    check(MPI_Ibarrier(w.comm, &request), "MPI_Ibarrier");
    waitFor(w, request, "MPI_Ibarrier");
  }
  // Every collective has completed (the runtime waited for its started
  // ones): the device communicator goes before the MPI that made it.
  if (Backend *device = std::exchange(w.device, nullptr))
    device->communicator->close();
  if (!mpi)
    return;
  MPI_Comm comm = w.comm, control = w.control;
  w.comm = MPI_COMM_NULL;
  w.control = MPI_COMM_NULL;
  bool owns = w.ownsMpi;
  // An MPI the application initialized stays usable: the next call that
  // needs the world duplicates MPI_COMM_WORLD again.
  w.state.store(owns ? State::Finalized : State::Uninitialized);
  check(MPI_Comm_free(&control), "MPI_Comm_free");
  check(MPI_Comm_free(&comm), "MPI_Comm_free");
  if (owns)
    check(MPI_Finalize(), "MPI_Finalize");
}

bool threadsAllowed() {
  initWorld();
  World &w = world();
  return w.state.load() != State::Mpi || w.threadsAllowed.load();
}

int rank() {
  initWorld();
  return world().rank.load();
}

int size() {
  initWorld();
  return world().size.load();
}

int currentRank() { return world().rank.load(); }
int currentSize() { return world().size.load(); }

void terminate(const char *line) noexcept {
  if (line && *line) {
    // One write, so that the lines of several failing ranks do not mix.
    char newline = '\n';
    struct iovec parts[2] = {{const_cast<char *>(line), std::strlen(line)},
                             {&newline, 1}};
    std::fflush(stderr);
    ssize_t ignored = ::writev(STDERR_FILENO, parts, 2);
    (void)ignored;
  }
  // Under MPI, MPI_Abort also for a world of one: a rank that exits
  // without MPI_Finalize makes mpirun wait seconds before it gives up.
  if (world().state.load() == State::Mpi)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

void broadcast(void *data, std::size_t bytes, int root) {
  std::unique_lock<std::mutex> lock;
  World &w = worldForCollective(lock);
  startCollective(w, "broadcast");
  const int N = w.size.load();
  if (root < 0 || root >= N)
    throw Error("broadcast root " + std::to_string(root) +
                " is not a rank of a world of " + std::to_string(N));
  if (bytes > 0 && !data)
    throw Error("broadcast of " + std::to_string(bytes) + " bytes from NULL");
  if (N == 1)
    return;
  char *p = static_cast<char *>(data);
  for (std::size_t done = 0; done < bytes;) {
    int n = static_cast<int>(std::min<std::size_t>(bytes - done, INT_MAX));
    MPI_Request request;
    check(MPI_Ibcast(p + done, n, MPI_BYTE, root, w.comm, &request),
          "MPI_Ibcast");
    waitFor(w, request, "MPI_Ibcast");
    done += static_cast<std::size_t>(n);
  }
}

double setTimeout(double seconds) { return commTimeout.exchange(seconds); }

bool onDeviceCollectives() {
  return !runtimeBuffersOnHost() && (size() > 1 || ncclWorldOfOne());
}

void setStartMark(int64_t mark) { startMark = mark; }

int64_t takeStartMark() {
  int64_t mark = startMark;
  startMark = -1;
  return mark;
}

} // namespace comm
} // namespace zero::runtime
