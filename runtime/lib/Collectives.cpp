//===- Collectives.cpp - Collectives of the C ABI -------------------------===//
//
// The collective entry points (zrt_collective_run, _start, _scalar,
// zrt_broadcast_bytes), zrt_wait, the communication arena, the simulated
// link and the collectives' counters; the MPI world is in Comm.cpp, the
// collectives themselves in MpiCollectives.cpp, the communication thread in
// CommQueue.cpp.
//
// A blocking collective runs on the calling thread after every started one;
// a started one is checked here (what needs no world), then queued for the
// communication thread. Either way it is counted, and traced on the link,
// only if it succeeds; a failure goes to the fatal handler on a thread of
// the caller's (the one that called a blocking collective, or the one that
// waits for a started one), never on the communication thread.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include "comm/Comm.h"
#include "comm/CommQueue.h"
#include "Nvme.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

using namespace zero::runtime;

namespace {

const char *collectiveName(int collective) {
  switch (collective) {
  case ZRT_ALL_REDUCE:
    return "all_reduce";
  case ZRT_REDUCE_SCATTER:
    return "reduce_scatter";
  case ZRT_ALL_GATHER:
    return "all_gather";
  case ZRT_SCALAR_ALL_REDUCE:
    return "scalar_all_reduce";
  default:
    return "unknown";
  }
}

class CommCounters {
public:
  void record(zrt_collective kind, uint64_t bytes, double seconds) {
    std::lock_guard<std::mutex> lock(mutex);
    ++totals.calls[kind];
    totals.bytes_sent[kind] += bytes;
    totals.seconds[kind] += seconds;
  }

  void recordWait(double seconds) {
    std::lock_guard<std::mutex> lock(mutex);
    totals.wait_seconds += seconds;
  }

  zrt_comm_stats get() {
    std::lock_guard<std::mutex> lock(mutex);
    return totals;
  }

  void reset() {
    std::lock_guard<std::mutex> lock(mutex);
    totals = zrt_comm_stats{};
  }

private:
  std::mutex mutex;
  zrt_comm_stats totals = {};
};

CommCounters &commCounters() {
  static CommCounters *instance = new CommCounters();
  return *instance;
}

/// zrt_set_sim_link: one link, one collective at a time.
class SimLink {
public:
  void set(double bytesPerSecond, double latency) {
    if (!(bytesPerSecond >= 0) || !(latency >= 0) || std::isinf(latency))
      throw Error(format("the link needs a bandwidth >= 0 (or INFINITY) and "
                         "a finite latency >= 0; got %g bytes/s and %g s",
                         bytesPerSecond, latency));
    if (bytesPerSecond == 0 && latency != 0)
      throw Error("a link with latency needs a bandwidth > 0 (INFINITY for "
                  "latency only)");
    std::lock_guard<std::mutex> lock(mutex);
    on = bytesPerSecond != 0;
    bandwidth = bytesPerSecond;
    this->latency = latency;
    freeAt = Clock::time_point();
  }

  /// Sleeps until the modelled end of a collective called at `issued` that
  /// sent `bytes`. The link is one for all ranks: the collective starts
  /// when the last rank has called it and the link is free, so every rank
  /// ends it at the same time. The ranks' issue times are compared on the
  /// machine's monotonic clock (one more scalar all-reduce per collective,
  /// counted neither in bytes sent nor in memory): the simulated link
  /// assumes the ranks share a machine.
  void complete(Clock::time_point issued, uint64_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!on || comm::currentSize() <= 1)
        return;
    }
    double last =
        std::chrono::duration<double>(issued.time_since_epoch()).count();
    comm::allReduceMaxUncounted(&last);
    Clock::time_point end;
    {
      std::lock_guard<std::mutex> lock(mutex);
      double seconds = latency + (std::isinf(bandwidth)
                                      ? 0.0
                                      : static_cast<double>(bytes) / bandwidth);
      Clock::time_point lastIssued(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(last)));
      end = std::max({issued, lastIssued, freeAt}) +
            std::chrono::duration_cast<Clock::duration>(
                std::chrono::duration<double>(seconds));
      freeAt = end;
    }
    std::this_thread::sleep_until(end);
  }

private:
  std::mutex mutex;
  bool on = false;
  double bandwidth = 0, latency = 0;
  Clock::time_point freeAt;
};

SimLink &simLink() {
  static SimLink *instance = new SimLink();
  return *instance;
}

/// Runs one collective: `fn` returns the bytes sent; the link model is
/// applied and the call counted if it succeeds. Returns "" or the failure
/// as "<entry>: <message>".
template <typename Fn>
std::string runCollective(const char *entry, zrt_collective kind,
                          Clock::time_point issued, Fn &fn) {
  // A mark of a start no collective consumed (no elements, or it failed
  // before it ran) goes back.
  struct DropUnusedMark {
    ~DropUnusedMark() {
      if (int64_t mark = comm::takeStartMark(); mark >= 0)
        if (Communicator *communicator = backend().communicator)
          communicator->dropMark(mark);
    }
  } dropUnusedMark;
  if (guarded(entry, [&] {
        Clock::time_point begin = Clock::now();
        uint64_t bytes = fn();
        simLink().complete(issued, bytes);
        Clock::time_point end = Clock::now();
        std::chrono::duration<double> elapsed = end - begin;
        commCounters().record(kind, bytes, elapsed.count());
        tracer().record(ZRT_TRACE_COLLECTIVE, kind, begin, end, bytes);
      }))
    return "";
  return lastError;
}

/// A failure from runCollective or the queue, on the calling thread: into
/// lastError, then to the fatal handler.
void reportCollectiveFailure(const std::string &error) {
  std::snprintf(lastError, kErrorCapacity, "%s", error.c_str());
  reportFatal();
}

/// A blocking collective entry point: runs after every started one, on the
/// calling thread.
template <typename Fn>
void collective(const char *entry, zrt_collective kind, Fn &&fn) {
  Clock::time_point issued = Clock::now();
  uint64_t sent = 0;
  auto counted = [&] {
    uint64_t bytes = fn();
    sent = bytes;
    return bytes;
  };
  std::string error = CommQueue::get().runHere(
      [&] { return runCollective(entry, kind, issued, counted); });
  if (!error.empty())
    reportCollectiveFailure(error);
  if (tracer().on())
    tracer().record(ZRT_TRACE_BLOCKED, kind, issued, Clock::now(), sent);
}

/// A *_start entry point: the arguments that need no world are checked
/// here; the collective is queued for the communication thread (or run
/// here, when MPI allows no second thread). Returns the request, or 0 after
/// the fatal handler returned.
template <typename Fn>
int64_t startCollective(const char *entry, zrt_collective kind,
                        const void *in, const void *out, int64_t count,
                        Fn fn) {
  int64_t mark = -1;
  if (!guarded(entry, [&] {
        if (count < 0)
          throw Error("count = " + std::to_string(count) + " is negative");
        if (count > 0 && (!in || !out))
          throw Error(std::string(!in ? "in" : "out") + " is NULL");
        comm::initWorld();
        // On device memory: the point of the compute stream the collective
        // waits for is now, not when the communication thread gets to it.
        if (comm::onDeviceCollectives())
          if (Communicator *communicator = backend().communicator)
            mark = communicator->markCompute();
      })) {
    reportFatal();
    return 0;
  }
  Clock::time_point issued = Clock::now();
  CommQueue &queue = CommQueue::get();
  if (!comm::threadsAllowed()) {
    std::string error = queue.runHere([&] {
      comm::setStartMark(mark);
      return runCollective(entry, kind, issued, fn);
    });
    if (!error.empty()) {
      reportCollectiveFailure(error);
      return 0;
    }
    tracer().noteRequest(queue.lastTicket(), kind);
    return queue.lastTicket();
  }
  int64_t request = queue.submit([entry, kind, issued, fn, mark]() mutable {
    comm::setStartMark(mark);
    return runCollective(entry, kind, issued, fn);
  });
  tracer().noteRequest(request, kind);
  return request;
}

/// A collective's descriptor, decoded: what it runs and the name its
/// errors carry ("zrt_collective_run(all_reduce sum f32)").
struct Collective {
  zrt_collective kind = ZRT_ALL_REDUCE;
  comm::Op op = comm::Op::Sum;
  DType dtype = DType::F32;
  const char *entry = "";
};

/// The entry points that take a descriptor.
enum class EntryPoint { Run, Start, Scalar };

/// `entry`'s name for one valid descriptor ("zrt_collective_run(all_reduce
/// sum f32)"). Every name is made once, on the first call (a collective is
/// a hot path, and a started one reports its name from the communication
/// thread, so the names live as long as the process).
const char *collectiveEntry(EntryPoint entry, unsigned kind,
                            unsigned reduction, unsigned type) {
  constexpr unsigned kEntries = 3, kReductions = ZRT_REDUCE_MAX + 1,
                     kTypes = ZRT_ELEMENT_BF16 + 1;
  static const std::vector<std::string> *names = [] {
    static const char *const entries[] = {
        "zrt_collective_run", "zrt_collective_start", "zrt_collective_scalar"};
    static const char *const reductions[] = {"", " sum", " max"};
    static const char *const types[] = {"f32", "f64", "bf16"};
    auto *all = new std::vector<std::string>();
    for (unsigned e = 0; e < kEntries; ++e)
      for (unsigned k = 0; k < ZRT_NUM_COLLECTIVES; ++k)
        for (unsigned r = 0; r < kReductions; ++r)
          for (unsigned t = 0; t < kTypes; ++t)
            all->push_back(format("%s(%s%s %s)", entries[e],
                                  collectiveName(static_cast<int>(k)),
                                  reductions[r], types[t]));
    return all;
  }();
  unsigned index =
      ((static_cast<unsigned>(entry) * ZRT_NUM_COLLECTIVES + kind) *
           kReductions +
       reduction) *
          kTypes +
      type;
  return (*names)[index].c_str();
}

/// Decodes `op` (runtime.h, zrt_make_collective_op) for `entry` (the
/// scalar one takes scalars by value, the others buffers); throws an Error naming what is
/// wrong with it.
Collective decodeCollective(EntryPoint entry, zrt_collective_op op) {
  const bool scalar = entry == EntryPoint::Scalar;
  const uint32_t kind = op & 0xff, reduction = (op >> 8) & 0xff,
                 type = (op >> 16) & 0xff;
  if ((op >> 24) != 0 || kind >= ZRT_NUM_COLLECTIVES ||
      reduction > ZRT_REDUCE_MAX || type > ZRT_ELEMENT_BF16)
    throw Error(format("descriptor 0x%08x names no collective (kind %u, "
                       "reduction %u, element type %u)",
                       op, kind, reduction, type));
  Collective c;
  c.kind = static_cast<zrt_collective>(kind);
  c.op = reduction == ZRT_REDUCE_MAX ? comm::Op::Max : comm::Op::Sum;
  c.dtype = type == ZRT_ELEMENT_F32   ? DType::F32
            : type == ZRT_ELEMENT_F64 ? DType::F64
                                      : DType::BF16;
  if ((c.kind == ZRT_SCALAR_ALL_REDUCE) != scalar)
    throw Error(scalar ? "takes a scalar all-reduce; collectives on buffers "
                         "go to zrt_collective_run or zrt_collective_start"
                       : "takes collectives on buffers; a scalar all-reduce "
                         "goes to zrt_collective_scalar");
  bool reduces = c.kind != ZRT_ALL_GATHER;
  if (!reduces && reduction != ZRT_REDUCE_NONE)
    throw Error("an all-gather takes no reduction (ZRT_REDUCE_NONE)");
  if (reduces && reduction == ZRT_REDUCE_NONE)
    throw Error(format("%s needs a reduction (ZRT_REDUCE_SUM or "
                       "ZRT_REDUCE_MAX)",
                       collectiveName(kind)));
  if (c.kind == ZRT_REDUCE_SCATTER && reduction != ZRT_REDUCE_SUM)
    throw Error("a reduce_scatter sums (ZRT_REDUCE_SUM); its max is not "
                "supported");
  if (scalar && c.dtype == DType::BF16)
    throw Error("a scalar all-reduce takes f32 or f64 (a bf16 scalar is an "
                "all-reduce of one element)");
  c.entry = collectiveEntry(entry, kind, reduction, type);
  return c;
}

/// Runs the collective `c` on buffers; the bytes sent.
uint64_t runOnWorld(const Collective &c, const void *in, void *out,
                    int64_t count) {
  switch (c.kind) {
  case ZRT_ALL_REDUCE:
    return comm::allReduce(c.dtype, c.op, in, out, count);
  case ZRT_REDUCE_SCATTER:
    return comm::reduceScatter(c.dtype, in, out, count);
  default:
    return comm::allGather(c.dtype, in, out, count);
  }
}

template <typename T>
T scalarAllReduce(const char *entry, comm::Op op, T value) {
  T result = value;
  collective(entry, ZRT_SCALAR_ALL_REDUCE, [&] {
    T v = value;
    uint64_t bytes = comm::allReduceScalar(
        sizeof(T) == 4 ? DType::F32 : DType::F64, op, &v);
    result = v;
    return bytes;
  });
  return result;
}

} // namespace

//===----------------------------------------------------------------------===//
// The selected backend, for the collectives (Comm.h)
//===----------------------------------------------------------------------===//

void zero::runtime::copyRuntimeBuffer(void *dst, const void *src,
                                      std::size_t bytes) {
  backend().compute.copy(dst, src, bytes);
}

bool zero::runtime::runtimeBuffersOnHost() {
  return backend().deviceMemory.hostAccessible();
}

Backend *zero::runtime::deviceCollectives(int ranks) {
  Backend &b = backend();
  if (b.deviceMemory.hostAccessible())
    return nullptr;
  if (!b.communicator)
    throw Error(format("collectives over %d ranks on the \"%s\" backend need "
                       "NCCL, and this zero-runtime was built without "
                       "nccl.h: rebuild it where the CUDA toolkit has NCCL, "
                       "run a target=cuda step on one rank, or compile it "
                       "for target=cpu",
                       ranks, b.name));
  return &b;
}

//===----------------------------------------------------------------------===//
// C ABI
//===----------------------------------------------------------------------===//

extern "C" {

void zrt_collective_run(zrt_collective_op op, const void *in, void *out,
                        int64_t count) {
  Collective c;
  if (!guarded("zrt_collective_run",
               [&] { c = decodeCollective(EntryPoint::Run, op); })) {
    reportFatal();
    return;
  }
  collective(c.entry, c.kind, [&] { return runOnWorld(c, in, out, count); });
}

int64_t zrt_collective_start(zrt_collective_op op, const void *in, void *out,
                             int64_t count) {
  Collective c;
  if (!guarded("zrt_collective_start", [&] {
        c = decodeCollective(EntryPoint::Start, op);
      })) {
    reportFatal();
    return 0;
  }
  return startCollective(c.entry, c.kind, in, out, count,
                         [=] { return runOnWorld(c, in, out, count); });
}

void zrt_wait(int64_t request) {
  if (request > 0 && (request & kCopyRequestTag)) {
    if (!guarded("zrt_wait", [&] {
          int64_t handle = request & ~kCopyRequestTag;
          if (handle != kNoCopy)
            backend().compute.copyWait(handle);
        }))
      reportFatal();
    return;
  }
  if (request & NvmeStore::kRequestTag) {
    std::string error = NvmeStore::get().wait(request);
    if (!error.empty()) {
      setLastError("zrt_wait", error.c_str());
      reportFatal();
    }
    return;
  }
  Clock::time_point begin = Clock::now();
  std::string error = CommQueue::get().wait(request);
  Clock::time_point end = Clock::now();
  std::chrono::duration<double> waited = end - begin;
  commCounters().recordWait(waited.count());
  if (tracer().on())
    tracer().record(ZRT_TRACE_WAIT, tracer().takeRequest(request), begin,
                    end, 0);
  if (!error.empty())
    reportCollectiveFailure(error);
}

void zrt_comm_reserve(int64_t bytes) {
  if (!guarded("zrt_comm_reserve", [&] {
        if (bytes < 0)
          throw Error("bytes = " + std::to_string(bytes) + " is negative");
        reserveCommArena(static_cast<std::size_t>(bytes));
      }))
    reportFatal();
}

void zrt_comm_release(void) {
  if (!guarded("zrt_comm_release", [&] { releaseCommArena(); }))
    reportFatal();
}

int zrt_set_sim_link(double bytes_per_second, double latency_seconds) {
  return guarded("zrt_set_sim_link",
                 [&] { simLink().set(bytes_per_second, latency_seconds); })
             ? 0
             : 1;
}

double zrt_collective_scalar(zrt_collective_op op, double value) {
  Collective c;
  if (!guarded("zrt_collective_scalar", [&] {
        c = decodeCollective(EntryPoint::Scalar, op);
      })) {
    reportFatal();
    return value;
  }
  if (c.dtype == DType::F32)
    return scalarAllReduce(c.entry, c.op, static_cast<float>(value));
  return scalarAllReduce(c.entry, c.op, value);
}

int zrt_broadcast_bytes(void *data, size_t bytes, int root) {
  return guarded("zrt_broadcast_bytes",
                 [&] { comm::broadcast(data, bytes, root); })
             ? 0
             : 1;
}

size_t zrt_set_comm_bucket_bytes(size_t bytes) {
  return comm::setBucketBytes(bytes);
}

double zrt_set_comm_timeout(double seconds) {
  return comm::setTimeout(seconds);
}

const char *zrt_collective_name(zrt_collective collective) {
  return collectiveName(enumValue(collective));
}

void zrt_get_comm_stats(zrt_comm_stats *out) {
  if (out &&
      !guarded("zrt_get_comm_stats", [&] { *out = commCounters().get(); }))
    reportFatal();
}

void zrt_reset_comm_stats(void) {
  if (!guarded("zrt_reset_comm_stats", [&] { commCounters().reset(); }))
    reportFatal();
}

} // extern "C"
