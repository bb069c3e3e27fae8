//===- Comm.cpp - World and collectives of zero-runtime -------------------===//
//
// The world of data-parallel ranks and the collectives over it, on MPI.
//
// Reductions have one fixed order: every element of a result is combined in
// rank order, x_0 op x_1 op ... op x_{N-1}, by exactly one rank, and copied
// to the others. A reduce-scatter is therefore an MPI_Alltoall of the blocks
// (rank q receives block q of every rank) followed by a local reduction of
// the N received blocks in rank order; an all-reduce is that reduce-scatter
// over the buffer padded to a multiple of N followed by an MPI_Allgather of
// the reduced blocks. MPI's own reductions (MPI_Allreduce,
// MPI_Reduce_scatter_block) are not used: their order depends on the
// algorithm Open MPI picks for the message size and world size, so
// all_reduce could differ from all_gather(reduce_scatter) in the last bit,
// and a ZeRO stage would not train bit-identically to plain data parallelism.
//
// Reduce-scatter and all-reduce exchange their blocks in segments of at most
// s elements per block, so the receive buffer (N*s elements, from the
// runtime's allocator in the ZRT_COMM category) stays within the comm bucket
// however large the buffer is. A segment takes piece [j, j+s) of every block
// straight from the caller's buffer through an MPI datatype whose extent is
// the block stride; only segments that reach into the padding of an
// all-reduce are packed into a second buffer (the padding exists only there,
// and reading or writing it in the caller's buffers would be out of bounds).
//
// Every MPI call is made under the world's mutex (MPI is initialized with
// MPI_THREAD_SERIALIZED), on a duplicate of MPI_COMM_WORLD with
// MPI_ERRORS_RETURN, and its return code is checked.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"

#include "zero/runtime.h"

#include "BFloat16.h"

// MPI through a table filled at run time (a world of one never opens it).
#include "Mpi.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
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
namespace {

//===----------------------------------------------------------------------===//
// The world
//===----------------------------------------------------------------------===//

enum class State {
  Uninitialized, // not set up yet
  Local,         // no MPI: this process alone
  Mpi,           // on MPI, `comm` is live
  Finalized      // the runtime finalized MPI (zrt_shutdown)
};

struct World {
  /// Guards set-up and tear-down and serializes every MPI call.
  std::mutex mutex;
  std::atomic<State> state{State::Uninitialized};
  std::atomic<int> rank{0};
  std::atomic<int> size{1};
  bool ownsMpi = false;
  /// Live only in State::Mpi. (Value-initialized, not MPI_COMM_NULL: the
  /// MPI library is opened only when the world needs it.)
  MPI_Comm comm{};
  /// MPI_Query_thread's answer: any thread may call MPI under the mutex.
  std::atomic<bool> threadsAllowed{true};
  /// Carries the questions ranks ask each other when a collective times
  /// out (which collective each has reached), apart from the collectives.
  MPI_Comm control{};
  /// Collectives this rank has started, and the name of the latest.
  int64_t sequence = 0;
  const char *collective = "";
  /// The backend whose device communicator (NCCL) has been made, if one
  /// has: finalizeWorld closes it.
  Backend *device = nullptr;
};

World &world() {
  // Leaked on purpose, as the allocator's state is: a fatal error during
  // static destruction must still find it.
  static World *instance = new World();
  return *instance;
}

std::string mpiErrorString(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

void check(int rc, const char *what) {
  if (rc != MPI_SUCCESS)
    throw Error(std::string(what) + " failed: " + mpiErrorString(rc));
}

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

/// Marks the start of a collective (for the timeout's message).
void startCollective(World &w, const char *name) {
  ++w.sequence;
  w.collective = name;
  // Test hook (integration_tests/zero-run/stall.test): the rank named by
  // ZERO_TEST_STALL_RANK stops itself (SIGSTOP) at its collective number
  // ZERO_TEST_STALL_AT, as a stalled rank would.
  static const char *stallRank = std::getenv("ZERO_TEST_STALL_RANK");
  static const char *stallAt = std::getenv("ZERO_TEST_STALL_AT");
  if (stallRank && stallAt && std::atoi(stallRank) == w.rank.load() &&
      std::atoll(stallAt) == w.sequence)
    ::raise(SIGSTOP);
}

/// Waits for `request` of the current collective, with the deadline; `what`
/// names the MPI call that posted it in error messages.
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

void alltoall(World &w, const void *send, int sendCount, MPI_Datatype sendType,
              void *recv, int recvCount, MPI_Datatype recvType) {
  MPI_Request request;
  check(MPI_Ialltoall(send, sendCount, sendType, recv, recvCount, recvType,
                      w.comm, &request),
        "MPI_Ialltoall");
  waitFor(w, request, "MPI_Ialltoall");
}

void allgather(World &w, const void *send, int sendCount,
               MPI_Datatype sendType, void *recv, int recvCount,
               MPI_Datatype recvType) {
  MPI_Request request;
  check(MPI_Iallgather(send, sendCount, sendType, recv, recvCount, recvType,
                       w.comm, &request),
        "MPI_Iallgather");
  waitFor(w, request, "MPI_Iallgather");
}

//===----------------------------------------------------------------------===//
// Buffers, datatypes, arguments
//===----------------------------------------------------------------------===//

/// The communication arena (zrt_comm_reserve): buffers of growing sizes,
/// of which the largest (the last one reserved) holds the scratch of one
/// thread's collectives, stacked, each piece at the next kArenaAlignment
/// boundary. A reservation larger than every buffer adds one and leaves
/// the others as they are, so it never waits for the collective that may
/// be using one; all are freed together on release. One thread at a time
/// owns the arena (the communication thread while it runs a collective,
/// or the caller of a blocking one, which runs after every started one);
/// another thread's scratch is allocated as without the arena.
class CommArena {
public:
  static constexpr std::size_t kArenaAlignment = ZRT_COMM_ARENA_ALIGNMENT;

  /// A piece of `bytes` for the calling thread, or null when another
  /// thread owns the arena or the piece does not fit; `mark` is what
  /// giveBack restores.
  void *take(std::size_t bytes, std::size_t &mark) {
    std::lock_guard<std::mutex> lock(mutex);
    if (buffers.empty() ||
        (depth > 0 && owner != std::this_thread::get_id()))
      return nullptr;
    // A collective's pieces stay in the buffer its first one took: the
    // largest when it began.
    if (depth == 0) {
      current = buffers.size() - 1;
      used = 0;
    }
    auto [base, size] = buffers[current];
    std::size_t offset = (used + kArenaAlignment - 1) / kArenaAlignment *
                         kArenaAlignment;
    if (offset > size || bytes > size - offset)
      return nullptr;
    owner = std::this_thread::get_id();
    ++depth;
    mark = used;
    used = offset + bytes;
    return static_cast<char *>(base) + offset;
  }

  /// Returns the piece taken with `mark` (pieces come back in reverse).
  void giveBack(std::size_t mark) {
    std::lock_guard<std::mutex> lock(mutex);
    used = mark;
    if (--depth == 0)
      idle.notify_all();
  }

  void reserve(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    if (bytes == 0 || (!buffers.empty() && bytes <= buffers.back().second))
      return;
    // A collective may be using the current largest buffer: it keeps it,
    // and the next one takes the new buffer.
    buffers.emplace_back(allocateCommBuffer(bytes), bytes);
  }

  void release() {
    std::unique_lock<std::mutex> lock(mutex);
    idle.wait(lock, [&] { return depth == 0; });
    for (auto &[base, size] : buffers)
      freeCommBuffer(base);
    buffers.clear();
  }

private:
  std::mutex mutex;
  std::condition_variable idle;
  /// Each buffer and its size, in the order reserved (growing sizes).
  std::vector<std::pair<void *, std::size_t>> buffers;
  /// The buffer the owner's pieces are in, and the bytes they take.
  std::size_t current = 0, used = 0;
  int depth = 0;
  std::thread::id owner;
};

CommArena &commArena() {
  static CommArena *instance = new CommArena();
  return *instance;
}

/// A ZRT_COMM temporary, from the arena while it has room, else allocated;
/// given back on scope exit (also when an MPI error unwinds the call).
class Scratch {
public:
  explicit Scratch(std::size_t bytes) {
    if (!bytes)
      return;
    ptr = commArena().take(bytes, mark);
    fromArena = ptr != nullptr;
    if (!ptr)
      ptr = allocateCommBuffer(bytes);
  }
  ~Scratch() {
    if (fromArena)
      commArena().giveBack(mark);
    else if (ptr)
      freeCommBuffer(ptr);
  }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  template <typename T> T *as() const { return static_cast<T *>(ptr); }

private:
  void *ptr = nullptr;
  bool fromArena = false;
  std::size_t mark = 0;
};

/// A bf16 element as its bits: what goes on the wire. Sums of bf16 blocks
/// are accumulated in f32 (reduceInRankOrder) and rounded to bf16 once.
struct BF16 {
  uint16_t bits = 0;
};

float toFloat(BF16 x) { return bf16ToFloat(x.bits); }
BF16 toBF16(float f) { return BF16{floatToBF16(f)}; }

template <typename T> MPI_Datatype mpiType();
template <> MPI_Datatype mpiType<float>() { return MPI_FLOAT; }
template <> MPI_Datatype mpiType<double>() { return MPI_DOUBLE; }
template <> MPI_Datatype mpiType<BF16>() { return MPI_UINT16_T; }

/// Piece [j, j + n) of every block of a buffer of blocks `blockLength`
/// elements apart, as one element of an MPI datatype whose extent is the
/// block stride: MPI then reads or writes block r's piece at r * stride.
/// When the piece is the whole block it is simply n elements.
template <typename T> class Pieces {
public:
  Pieces(int64_t n, int64_t blockLength) {
    if (n == blockLength) {
      type = mpiType<T>();
      count = static_cast<int>(n);
      return;
    }
    MPI_Datatype contiguous = MPI_DATATYPE_NULL;
    check(MPI_Type_contiguous(static_cast<int>(n), mpiType<T>(), &contiguous),
          "MPI_Type_contiguous");
    int rc = MPI_Type_create_resized(
        contiguous, 0, static_cast<MPI_Aint>(blockLength * sizeof(T)), &type);
    MPI_Type_free(&contiguous);
    check(rc, "MPI_Type_create_resized");
    rc = MPI_Type_commit(&type);
    if (rc != MPI_SUCCESS)
      MPI_Type_free(&type);
    check(rc, "MPI_Type_commit");
    owned = true;
    count = 1;
  }
  ~Pieces() {
    if (owned)
      MPI_Type_free(&type);
  }
  Pieces(const Pieces &) = delete;
  Pieces &operator=(const Pieces &) = delete;

  MPI_Datatype type = MPI_DATATYPE_NULL;
  int count = 0;

private:
  bool owned = false;
};

constexpr std::size_t kDefaultBucketBytes = ZRT_COMM_BUCKET_BYTES;
std::atomic<std::size_t> bucketBytes{kDefaultBucketBytes};

/// Elements per block in one segment: the receive buffer of N blocks holds
/// at most the bucket, at least one element per block, at most what an MPI
/// count (int) can say.
/// A reduction's scratch by runtime.h's formula (zrt_comm_scratch, which
/// zero-memory-report predicts with): the bytes of its buffers, and its
/// segment, the elements of each rank's block it moves at a time.
struct ReductionScratch {
  int pieces = 0;
  int64_t bytes[2] = {0, 0};
  int64_t segment = 0;
};
ReductionScratch reductionScratch(zrt_collective kind, int worldSize,
                                  int64_t count, std::size_t elementBytes) {
  ReductionScratch r;
  r.pieces = zrt_comm_scratch(kind, worldSize, count,
                              static_cast<int64_t>(elementBytes),
                              static_cast<int64_t>(bucketBytes.load()),
                              r.bytes);
  if (r.pieces < 0)
    throw Error("count = " + std::to_string(count) +
                " is too large: the scratch size overflows");
  if (r.pieces > 0)
    r.segment = r.bytes[0] / (int64_t(worldSize) * int64_t(elementBytes));
  return r;
}

/// How many of the n elements from `start` lie below `length`.
int64_t validLength(int64_t start, int64_t n, int64_t length) {
  return std::clamp<int64_t>(length - start, 0, n);
}

/// Validates a collective's buffers; returns false when there is nothing to
/// do (count 0 is a counted no-op).
bool checkBuffers(const void *in, const void *out, int64_t count) {
  if (count < 0)
    throw Error("count = " + std::to_string(count) + " is negative");
  if (count == 0)
    return false;
  if (!in)
    throw Error("in is NULL");
  if (!out)
    throw Error("out is NULL");
  return true;
}

/// count * factor elements of `elementBytes` as a byte count, or an error.
std::size_t byteSize(int64_t count, int64_t factor, std::size_t elementBytes) {
  __int128 bytes = (__int128)count * factor * (__int128)elementBytes;
  if (bytes > (__int128)(SIZE_MAX / 2))
    throw Error("count = " + std::to_string(count) +
                " is too large: the buffer size overflows");
  return static_cast<std::size_t>(bytes);
}

uintptr_t addr(const void *p) { return reinterpret_cast<uintptr_t>(p); }

bool overlap(const void *a, std::size_t aBytes, const void *b,
             std::size_t bBytes) {
  return addr(a) < addr(b) + bBytes && addr(b) < addr(a) + aBytes;
}

template <typename T> void combine(Op op, T &acc, T x) {
  if (op == Op::Sum) {
    acc += x;
  } else if (acc == acc && (x != x || x > acc)) {
    // Max: a NaN stays once it is there (the first in rank order wins),
    // otherwise a strictly greater value replaces the accumulator.
    acc = x;
  }
}

/// dst[i] = recv[i] op recv[n + i] op ... op recv[(N-1)n + i] for i <
/// valid: the received pieces of ranks 0..N-1, combined in rank order.
template <typename T>
void reduceInRankOrder(Op op, T *dst, int64_t valid, const T *recv, int64_t n,
                       int worldSize) {
  if (valid <= 0)
    return;
  if constexpr (std::is_same_v<T, BF16>) {
    // f32 accumulation in rank order, one rounding per element.
    for (int64_t i = 0; i < valid; ++i) {
      float acc = toFloat(recv[i]);
      for (int r = 1; r < worldSize; ++r)
        combine(op, acc, toFloat(recv[r * n + i]));
      dst[i] = toBF16(acc);
    }
  } else {
    std::memcpy(dst, recv, std::size_t(valid) * sizeof(T));
    for (int r = 1; r < worldSize; ++r) {
      const T *src = recv + r * n;
      if (op == Op::Sum) {
        for (int64_t i = 0; i < valid; ++i)
          dst[i] += src[i];
      } else {
        for (int64_t i = 0; i < valid; ++i)
          combine(op, dst[i], src[i]);
      }
    }
  }
}

/// The live world for a collective: set up, and able to communicate if it
/// has more than one rank. The caller holds w.mutex.
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

/// Test hook: a world of one runs the collectives of device memory
/// through the backend's device collectives (NCCL with one rank) instead
/// of copying, which is the only way a machine with one GPU runs that path
/// (unittests/RuntimeCudaTest.cpp).
bool deviceWorldOfOne() {
  const char *v = std::getenv("ZERO_TEST_NCCL_WORLD_OF_ONE");
  return v && *v && std::strcmp(v, "0") != 0;
}

/// The backend whose device collectives a collective over `N` ranks runs
/// on (its buffers are device memory and the world has several ranks, or
/// the hook asks for it), else null: MPI's, or a world of one's copy.
Backend *deviceFor(int N) {
  return N > 1 || deviceWorldOfOne() ? deviceCollectives(N) : nullptr;
}

/// The mark of the compute stream the next device collective on this
/// thread waits for (Backend::markCompute; -1: none).
thread_local int64_t startMark = -1;

/// A collective of device memory: the backend's (NCCL on a communication
/// stream), after the compute work queued before it was started; its
/// communicator is made on the first one, from an id rank 0 broadcasts
/// over MPI. Waited for here with the deadline of every collective: past
/// it, the communicator is aborted and the job ends as timedOut ends it.
/// The caller holds w.mutex.
void runOnDevice(World &w, Backend &b, const DeviceCollective &c) {
  int64_t mark = startMark;
  startMark = -1;
  const int N = w.size.load();
  if (w.device != &b) {
    if (w.device)
      throw Error(std::string("device collectives of backend '") + b.name() +
                  "' after those of '" + w.device->name() +
                  "': one communicator a world (zrt_shutdown first)");
    b.openCollectives(w.rank.load(), N, [&](void *data, std::size_t bytes) {
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
  int64_t handle = b.collectiveStart(c, mark);
  const double timeout = commTimeout.load();
  Clock::time_point start = Clock::now();
  useconds_t sleep = 50;
  while (!b.collectiveDone(handle)) {
    double waited = secondsSince(start);
    if (N > 1 && waited > 0.1)
      answerQueries(w);
    if (timeout > 0 && waited > timeout) {
      b.abortCollectives();
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

template <typename T> DType dtypeOf() {
  if constexpr (std::is_same_v<T, float>)
    return DType::F32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::F64;
  else
    return DType::BF16;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

template <typename T>
uint64_t allReduceImpl(Op op, const T *in, T *out, int64_t count) {
  if (!checkBuffers(in, out, count))
    return 0;
  std::size_t bytes = byteSize(count, 1, sizeof(T));
  if (in != out && overlap(in, bytes, out, bytes))
    throw Error("in and out overlap (in place needs out == in)");
  std::unique_lock<std::mutex> lock;
  World &w = worldForCollective(lock);
  startCollective(w, "all_reduce");
  const int N = w.size.load(), q = w.rank.load();
  Backend *device = deviceFor(N);
  if (N == 1 && !(device && deviceWorldOfOne())) {
    if (in != out)
      copyRuntimeBuffer(out, in, bytes);
    return 0;
  }
  if (device) {
    runOnDevice(w, *device,
                {DeviceCollective::Kind::AllReduce, dtypeOf<T>(),
                 op == Op::Max, in, out, count});
    return zrt_collective_bytes_sent(ZRT_ALL_REDUCE, N, count, sizeof(T));
  }
  const MPI_Datatype element = mpiType<T>();
  const int64_t L = count;
  const int64_t c = (L + N - 1) / N; // block length of the padded buffer
  const ReductionScratch scratch =
      reductionScratch(ZRT_ALL_REDUCE, N, L, sizeof(T));
  const int64_t s = scratch.segment;
  const bool padded = scratch.pieces == 2;
  Scratch recv(static_cast<std::size_t>(scratch.bytes[0]));
  Scratch pack(padded ? static_cast<std::size_t>(scratch.bytes[1]) : 0);
  T *recvT = recv.as<T>(), *packT = pack.as<T>();

  // A segment is exchanged straight from (to) the caller's buffer when no
  // block's piece reaches into the padding.
  auto direct = [&](int64_t j, int64_t n) { return (N - 1) * c + j + n <= L; };

  // Reduce-scatter: rank q reduces block q, writing the valid part of it
  // to out. With out == in, the piece written was sent in this segment and
  // later segments read other pieces, so in place is safe.
  for (int64_t j = 0; j < c; j += s) {
    const int64_t n = std::min(s, c - j);
    if (direct(j, n)) {
      Pieces<T> pieces(n, c);
      alltoall(w, in + j, pieces.count, pieces.type, recvT,
                         static_cast<int>(n), element);
    } else {
      for (int r = 0; r < N; ++r) {
        const int64_t start = r * c + j, v = validLength(start, n, L);
        if (v > 0)
          std::memcpy(packT + r * n, in + start, std::size_t(v) * sizeof(T));
        std::fill(packT + r * n + v, packT + (r + 1) * n, T());
      }
      alltoall(w, packT, static_cast<int>(n), element, recvT,
                         static_cast<int>(n), element);
    }
    const int64_t own = q * c + j;
    const int64_t v = validLength(own, n, L);
    if (v > 0)
      reduceInRankOrder(op, out + own, v, recvT, n, N);
  }

  // All-gather of the reduced blocks, in place in out.
  for (int64_t j = 0; j < c; j += s) {
    const int64_t n = std::min(s, c - j);
    if (direct(j, n)) {
      Pieces<T> pieces(n, c);
      allgather(w, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out + j,
                          pieces.count, pieces.type);
    } else {
      const int64_t own = q * c + j, ownValid = validLength(own, n, L);
      if (ownValid > 0)
        std::memcpy(packT + q * n, out + own,
                    std::size_t(ownValid) * sizeof(T));
      std::fill(packT + q * n + ownValid, packT + (q + 1) * n, T());
      allgather(w, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, packT,
                          static_cast<int>(n), element);
      for (int r = 0; r < N; ++r) {
        const int64_t start = r * c + j, v = validLength(start, n, L);
        if (r != q && v > 0)
          std::memcpy(out + start, packT + r * n, std::size_t(v) * sizeof(T));
      }
    }
  }
  return zrt_collective_bytes_sent(ZRT_ALL_REDUCE, N, count, sizeof(T));
}

template <typename T>
uint64_t reduceScatterImpl(const T *in, T *out, int64_t count) {
  if (!checkBuffers(in, out, count))
    return 0;
  std::unique_lock<std::mutex> lock;
  World &w = worldForCollective(lock);
  startCollective(w, "reduce_scatter");
  const int N = w.size.load();
  const std::size_t blockBytes = byteSize(count, 1, sizeof(T));
  const std::size_t inBytes = byteSize(count, N, sizeof(T));
  if (overlap(in, inBytes, out, blockBytes)) {
    uintptr_t offset = addr(out) - addr(in);
    if (addr(out) < addr(in) || offset % blockBytes != 0)
      throw Error("out overlaps in other than at a block boundary (in place "
                  "needs out == in + q * count, 0 <= q < N)");
  }
  Backend *device = deviceFor(N);
  if (N == 1 && !(device && deviceWorldOfOne())) {
    if (in != out)
      copyRuntimeBuffer(out, in, blockBytes);
    return 0;
  }
  if (device) {
    runOnDevice(w, *device,
                {DeviceCollective::Kind::ReduceScatter, dtypeOf<T>(), false,
                 in, out, count});
    return zrt_collective_bytes_sent(ZRT_REDUCE_SCATTER, N, count, sizeof(T));
  }
  const MPI_Datatype element = mpiType<T>();
  const int64_t c = count;
  const ReductionScratch scratch =
      reductionScratch(ZRT_REDUCE_SCATTER, N, c, sizeof(T));
  const int64_t s = scratch.segment;
  Scratch recv(static_cast<std::size_t>(scratch.bytes[0]));
  T *recvT = recv.as<T>();
  // With out == in + b*count, the piece written in a segment was sent in
  // that segment; later segments read other pieces.
  for (int64_t j = 0; j < c; j += s) {
    const int64_t n = std::min(s, c - j);
    Pieces<T> pieces(n, c);
    alltoall(w, in + j, pieces.count, pieces.type, recvT,
                       static_cast<int>(n), element);
    reduceInRankOrder(Op::Sum, out + j, n, recvT, n, N);
  }
  return zrt_collective_bytes_sent(ZRT_REDUCE_SCATTER, N, count, sizeof(T));
}

template <typename T>
uint64_t allGatherImpl(const T *in, T *out, int64_t count) {
  if (!checkBuffers(in, out, count))
    return 0;
  std::unique_lock<std::mutex> lock;
  World &w = worldForCollective(lock);
  startCollective(w, "all_gather");
  const int N = w.size.load(), q = w.rank.load();
  const std::size_t blockBytes = byteSize(count, 1, sizeof(T));
  const std::size_t outBytes = byteSize(count, N, sizeof(T));
  const bool inPlace = in == out + q * count;
  if (!inPlace && overlap(in, blockBytes, out, outBytes))
    throw Error("in and out overlap (in place needs in == out + rank * "
                "count)");
  Backend *device = deviceFor(N);
  if (N == 1 && !(device && deviceWorldOfOne())) {
    if (!inPlace)
      copyRuntimeBuffer(out, in, blockBytes);
    return 0;
  }
  if (device) {
    runOnDevice(w, *device,
                {DeviceCollective::Kind::AllGather, dtypeOf<T>(), false, in,
                 out, count});
    return zrt_collective_bytes_sent(ZRT_ALL_GATHER, N, count, sizeof(T));
  }
  const MPI_Datatype element = mpiType<T>();
  const int64_t c = count;
  // No temporary: segments only keep counts within an int.
  const int64_t s = std::min<int64_t>(c, INT_MAX);
  for (int64_t j = 0; j < c; j += s) {
    const int64_t n = std::min(s, c - j);
    Pieces<T> pieces(n, c);
    if (inPlace)
      allgather(w, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out + j,
                          pieces.count, pieces.type);
    else
      allgather(w, in + j, static_cast<int>(n), element, out + j,
                          pieces.count, pieces.type);
  }
  return zrt_collective_bytes_sent(ZRT_ALL_GATHER, N, count, sizeof(T));
}

template <typename T>
uint64_t allReduceScalarImpl(Op op, T *value, bool counted = true) {
  std::unique_lock<std::mutex> lock;
  World &w = worldForCollective(lock);
  startCollective(w, "scalar_all_reduce");
  const int N = w.size.load();
  if (N == 1)
    return 0;
  // Uncounted: the simulated link's own exchange, which is no part of the
  // step (and would otherwise take scratch at moments that depend on
  // timing).
  // The value is the host's; so is its scratch where the runtime's
  // buffers are device memory (outside the categories, as predicted).
  counted = counted && runtimeBuffersOnHost();
  Scratch all(counted ? static_cast<std::size_t>(
                            reductionScratch(ZRT_SCALAR_ALL_REDUCE, N, 1,
                                             sizeof(T))
                                .bytes[0])
                      : 0);
  std::vector<T> uncounted(counted ? 0 : N);
  T *allT = counted ? all.as<T>() : uncounted.data();
  allgather(w, value, 1, mpiType<T>(), allT, 1, mpiType<T>());
  T acc = allT[0];
  for (int r = 1; r < N; ++r)
    combine(op, acc, allT[r]);
  *value = acc;
  return zrt_collective_bytes_sent(ZRT_SCALAR_ALL_REDUCE, N, 1, sizeof(T));
}

} // namespace

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
    device->closeCollectives();
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

uint64_t allReduce(DType dtype, Op op, const void *in, void *out,
                   int64_t count) {
  if (dtype == DType::F32)
    return allReduceImpl(op, static_cast<const float *>(in),
                         static_cast<float *>(out), count);
  if (dtype == DType::BF16)
    return allReduceImpl(op, static_cast<const BF16 *>(in),
                         static_cast<BF16 *>(out), count);
  return allReduceImpl(op, static_cast<const double *>(in),
                       static_cast<double *>(out), count);
}

uint64_t reduceScatter(DType dtype, const void *in, void *out, int64_t count) {
  if (dtype == DType::F32)
    return reduceScatterImpl(static_cast<const float *>(in),
                             static_cast<float *>(out), count);
  if (dtype == DType::BF16)
    return reduceScatterImpl(static_cast<const BF16 *>(in),
                             static_cast<BF16 *>(out), count);
  return reduceScatterImpl(static_cast<const double *>(in),
                           static_cast<double *>(out), count);
}

uint64_t allGather(DType dtype, const void *in, void *out, int64_t count) {
  if (dtype == DType::F32)
    return allGatherImpl(static_cast<const float *>(in),
                         static_cast<float *>(out), count);
  if (dtype == DType::BF16)
    return allGatherImpl(static_cast<const BF16 *>(in),
                         static_cast<BF16 *>(out), count);
  return allGatherImpl(static_cast<const double *>(in),
                       static_cast<double *>(out), count);
}

uint64_t allReduceScalar(DType dtype, Op op, void *value) {
  if (dtype == DType::F32)
    return allReduceScalarImpl(op, static_cast<float *>(value));
  return allReduceScalarImpl(op, static_cast<double *>(value));
}

void allReduceMaxUncounted(double *value) {
  allReduceScalarImpl(Op::Max, value, /*counted=*/false);
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
  return !runtimeBuffersOnHost() && (size() > 1 || deviceWorldOfOne());
}

void setStartMark(int64_t mark) { startMark = mark; }

int64_t takeStartMark() {
  int64_t mark = startMark;
  startMark = -1;
  return mark;
}

std::size_t setBucketBytes(std::size_t bytes) {
  return bucketBytes.exchange(bytes ? bytes : kDefaultBucketBytes);
}

} // namespace comm

void reserveCommArena(std::size_t bytes) { comm::commArena().reserve(bytes); }
void releaseCommArena() { comm::commArena().release(); }

} // namespace zero::runtime
