//===- device-comm-test.cpp - Device collectives without a GPU ------------===//
//
// The part of the runtime's device collectives (NCCL on the CUDA backend)
// that is not NCCL's, run where there is no GPU: a backend whose memory the
// host may not touch (so the collectives take the device path of Comm.cpp),
// backed by host memory, with device collectives that record what they are
// given. ctest runs it under mpirun with 1, 2 and 4 ranks and without it.
//
//   device-comm-test check N   the world has N ranks; the communicator is
//                              made once, on the first collective, from an
//                              id rank 0 broadcasts (every rank receives
//                              rank 0's bytes); a started collective waits
//                              for the mark of the compute stream taken at
//                              its start, a blocking one for none; a start
//                              of no elements gives its mark back; the wait
//                              polls until the device says done; a world
//                              of one copies unless ZERO_TEST_NCCL_WORLD_OF_ONE
//                              is set; zrt_shutdown closes the communicator
//                              once, after the last collective. Exits 0 if
//                              all pass.
//   device-comm-test stall     the collectives never complete: past the
//                              deadline (1 s) the communicator is aborted
//                              and the job ends with status 1 and the
//                              timeout's line, on every rank
//   device-comm-test second    a device collective on a second backend after
//                              one on the first ends the job with the line
//                              that says one communicator a world
//
// It links the runtime statically, for registerTestBackend.
//
//===----------------------------------------------------------------------===//

#include "CollectiveCalls.h"
#include "zero/runtime.h"

#include "Backend.h"
#include "RankCheck.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

using namespace zero::runtime;

namespace {

int failures = 0, checks = 0, rank = 0;

/// Host memory the host may not touch, so the collectives take the device
/// path of comm/Comm.cpp: the CPU backend's blocks.
class HiddenHostMemory final : public Allocator {
public:
  bool hostAccessible() const override { return false; }
  Block allocate(std::size_t bytes, std::size_t alignment,
                 bool zeroed) override {
    return cpu.allocate(bytes, alignment, zeroed);
  }
  void fillZero(void *ptr, std::size_t bytes) override {
    cpu.fillZero(ptr, bytes);
  }
  void deallocate(const Block &block) noexcept override {
    cpu.deallocate(block);
  }

  Allocator &cpu = cpuBackend().deviceMemory;
};

/// A backend of hidden host memory and the CPU's compute, whose
/// communicator records its calls. A collective's result is a world of
/// one's (a copy): the test checks the calls, not the values.
class FakeDevice final : public Communicator {
public:
  explicit FakeDevice(const char *name)
      : backend{name, cpuBackend().compute, memory, memory, nullptr, this} {}

  void
  open(int r, int size,
       const std::function<void(void *, std::size_t)> &broadcast) override {
    ++opens;
    openedRank = r;
    openedSize = size;
    // As NCCL's id: 128 bytes only rank 0 knows.
    std::memset(id, 0, sizeof id);
    if (r == 0)
      std::snprintf(id, sizeof id, "fake id of pid %ld", long(getpid()));
    broadcast(id, sizeof id);
  }
  int64_t markCompute() override {
    issued.push_back(++lastMark);
    return lastMark;
  }
  void dropMark(int64_t mark) noexcept override { dropped.push_back(mark); }
  int64_t start(const CollectiveArgs &c, int64_t mark) override {
    startedWith.push_back(mark);
    kinds.push_back(c.kind);
    std::size_t b = std::size_t(dtypeBytes(c.dtype));
    std::size_t n = std::size_t(c.count);
    if (c.kind == CollectiveArgs::Kind::ReduceScatter)
      std::memmove(c.out, static_cast<const char *>(c.in) + openedRank * n * b,
                   n * b);
    else if (c.kind == CollectiveArgs::Kind::AllGather)
      std::memmove(static_cast<char *>(c.out) + openedRank * n * b, c.in,
                   n * b);
    else
      std::memmove(c.out, c.in, n * b);
    pollsLeft = 3;
    return ++lastHandle;
  }
  bool done(int64_t handle) override {
    ++polls;
    if (handle != lastHandle)
      throw Error("polled handle " + std::to_string(handle) + ", started " +
                  std::to_string(lastHandle));
    if (stall)
      return false;
    return pollsLeft-- <= 0;
  }
  void abort() noexcept override {
    std::fprintf(stderr, "device-comm-test: rank %d: communicator aborted\n",
                 rank);
  }
  void close() override {
    ++closes;
    closedAfter = kinds.size();
  }

  HiddenHostMemory memory;
  Backend backend;
  bool stall = false;
  int opens = 0, openedRank = -1, openedSize = -1, pollsLeft = 0, closes = 0;
  std::size_t closedAfter = 0;
  int64_t lastMark = 0, lastHandle = 0, polls = 0;
  char id[128] = {};
  std::vector<int64_t> issued, dropped, startedWith;
  std::vector<CollectiveArgs::Kind> kinds;
};

FakeDevice &fake() {
  static FakeDevice *device = new FakeDevice("fake-device");
  return *device;
}

int runChecks(int expected) {
  const int N = zrt_world_size();
  CHECK(N == expected, "world of %d ranks, expected %d", N, expected);
  FakeDevice &d = fake();
  auto *in = static_cast<float *>(zrt_alloc(4 * N * sizeof(float), ZRT_GRADS));
  auto *out = static_cast<float *>(zrt_alloc(4 * N * sizeof(float), ZRT_GRADS));
  bool device = N > 1 || std::getenv("ZERO_TEST_NCCL_WORLD_OF_ONE");

  // Started: the mark taken at the start is the one the collective waits
  // for, and the wait polls until the device says done.
  int64_t request = coll::allReduceSumStart<float>(in, out, 4);
  zrt_wait(request);
  if (!device) {
    CHECK(d.opens == 0 && d.kinds.empty() && d.issued.empty(),
          "a world of one copies: %d opens, %zu collectives, %zu marks",
          d.opens, d.kinds.size(), d.issued.size());
    return failures ? 1 : 0;
  }
  CHECK(d.opens == 1 && d.openedRank == rank && d.openedSize == N,
        "opened %d times as rank %d of %d", d.opens, d.openedRank,
        d.openedSize);
  CHECK(d.issued.size() == 1 && d.startedWith.size() == 1 &&
            d.startedWith[0] == d.issued[0],
        "the started all-reduce waited for mark %lld, issued %lld",
        d.startedWith.empty() ? -2LL : (long long)d.startedWith[0],
        d.issued.empty() ? -2LL : (long long)d.issued[0]);
  CHECK(d.polls >= 4, "%lld polls (the device said done at the 4th)",
        (long long)d.polls);

  // Blocking: no mark, it waits for everything queued.
  coll::allGather<float>(in, out, 4);
  CHECK(d.startedWith.size() == 2 && d.startedWith[1] == -1,
        "the blocking all-gather waited for mark %lld",
        d.startedWith.size() < 2 ? -2LL : (long long)d.startedWith[1]);
  // No elements: nothing runs and the start's mark goes back.
  zrt_wait(coll::reduceScatterSumStart<float>(in, out, 0));
  CHECK(d.startedWith.size() == 2 && d.issued.size() == 2 &&
            d.dropped.size() == 1 && d.dropped[0] == d.issued[1],
        "a start of no elements: %zu collectives, %zu marks, %zu dropped",
        d.startedWith.size(), d.issued.size(), d.dropped.size());
  // Two started at once complete in order, each with its own mark.
  int64_t first = coll::reduceScatterSumStart<float>(in, out, 4);
  int64_t second = coll::allGatherStart<float>(in, out, 4);
  zrt_wait(second);
  zrt_wait(first);
  CHECK(d.startedWith.size() == 4 && d.issued.size() == 4 &&
            d.startedWith[2] == d.issued[2] && d.startedWith[3] == d.issued[3],
        "two started collectives and their marks");
  CHECK(d.kinds.size() == 4 &&
            d.kinds[2] == CollectiveArgs::Kind::ReduceScatter &&
            d.kinds[3] == CollectiveArgs::Kind::AllGather,
        "the kinds in the order started");
  CHECK(d.opens == 1, "the communicator was made %d times", d.opens);
  zrt_free(in);
  zrt_free(out);

  // Every rank received rank 0's id: gathered on the CPU backend.
  if (zrt_init("cpu", 1) != 0) {
    std::fprintf(stderr, "zrt_init(cpu): %s\n", zrt_last_error());
    return 1;
  }
  std::vector<float> mine(32), all(32 * std::size_t(N));
  std::memcpy(mine.data(), d.id, sizeof d.id);
  coll::allGather<float>(mine.data(), all.data(), 32);
  for (int r = 0; r < N; ++r)
    CHECK(std::memcmp(all.data() + 32 * r, all.data(), sizeof d.id) == 0,
          "rank %d holds another id than rank 0's", r);
  CHECK(std::strncmp(d.id, "fake id of pid ", 15) == 0, "the id is '%.40s'",
        d.id);
  return failures ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  registerTestBackend(fake().backend);
  if (zrt_init("fake-device", 1) != 0) {
    std::fprintf(stderr, "device-comm-test: zrt_init: %s\n", zrt_last_error());
    return 1;
  }
  rank = zrt_world_rank();
  if (mode == "check" && argc == 3) {
    int expected = std::atoi(argv[2]);
    bool device = expected > 1 || std::getenv("ZERO_TEST_NCCL_WORLD_OF_ONE");
    runChecks(expected);
    CHECK(fake().closes == 0, "the communicator was closed before the end");
    zrt_shutdown();
    // zrt_shutdown closes the communicator once, after every collective;
    // a world that made none closes none.
    FakeDevice &d = fake();
    CHECK(d.closes == (device ? 1 : 0) && d.closedAfter == d.kinds.size(),
          "closed %d times, after %zu of %zu collectives", d.closes,
          d.closedAfter, d.kinds.size());
    if (failures == 0 && rank == 0)
      std::printf("device-comm-test: %d ranks: all %d checks passed\n",
                  expected, checks);
    return failures ? 1 : 0;
  }
  if (mode == "stall") {
    fake().stall = true;
    zrt_set_comm_timeout(1.0);
    float x[4] = {1, 2, 3, 4}, y[4];
    int64_t request = coll::allReduceSumStart<float>(x, y, 4);
    zrt_wait(request);
    std::fprintf(stderr, "rank %d: the stalled collective returned\n", rank);
    return 0;
  }
  if (mode == "second") {
    // A device collective made the world's communicator on fake-device;
    // one on another backend before zrt_shutdown is an error.
    float x[4] = {1, 2, 3, 4}, y[4];
    coll::allReduceSum<float>(x, y, 4);
    static FakeDevice other("fake-device-2");
    registerTestBackend(other.backend);
    if (zrt_init("fake-device-2", 1) != 0) {
      std::fprintf(stderr, "device-comm-test: zrt_init: %s\n", zrt_last_error());
      return 1;
    }
    coll::allReduceSum<float>(x, y, 4);
    std::fprintf(stderr, "rank %d: the second backend's collective ran\n",
                 rank);
    return 0;
  }
  std::fprintf(stderr, "usage: device-comm-test check N | stall | second\n");
  return 2;
}
