//===- RuntimeParallelTest.cpp - zrt_parallel_for and the thread pool -----===//

#include "RuntimeTestSupport.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace zero::runtime::test;

namespace {

using RuntimeParallel = RuntimeFixture;

/// Records every range a body was called with and the threads it ran on.
struct Recorder {
  std::vector<std::atomic<int>> visits;
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::set<std::thread::id> threads;

  explicit Recorder(int64_t n) : visits(n) {}

  static void body(void *self, int64_t begin, int64_t end) {
    auto *r = static_cast<Recorder *>(self);
    for (int64_t i = begin; i < end; ++i)
      r->visits[i].fetch_add(1);
    std::lock_guard<std::mutex> lock(r->mutex);
    r->ranges.push_back({begin, end});
    r->threads.insert(std::this_thread::get_id());
  }
};

// Every iteration runs exactly once, in one contiguous range per thread
// (at most n of them), the caller taking the first.
TEST_F(RuntimeParallel, CoversTheRangeOncePerIteration) {
  for (int threads : {1, 2, 3, 5}) {
    ASSERT_EQ(zrt_init("cpu", threads), 0);
    EXPECT_EQ(zrt_get_num_threads(), threads);
    for (int64_t n : {1, 2, 3, 4, 7, 1000, 100003}) {
      SCOPED_TRACE(testing::Message() << "threads=" << threads << " n=" << n);
      Recorder r(n);
      zrt_parallel_for(n, &Recorder::body, &r);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(r.visits[i].load(), 1) << "iteration " << i;
      EXPECT_EQ(r.ranges.size(), size_t(std::min<int64_t>(n, threads)));
      EXPECT_LE(r.threads.size(), r.ranges.size());
      std::sort(r.ranges.begin(), r.ranges.end());
      EXPECT_EQ(r.ranges.front().first, 0);
      EXPECT_EQ(r.ranges.back().second, n);
      for (size_t i = 1; i < r.ranges.size(); ++i)
        EXPECT_EQ(r.ranges[i - 1].second, r.ranges[i].first);
    }
  }
  ASSERT_EQ(zrt_init("cpu", 1), 0);
}

// The ranges of one call run on distinct threads at the same time: each
// body waits until all have started (it would wait forever if they ran one
// after another; the test's timeout catches that).
TEST_F(RuntimeParallel, RangesRunConcurrently) {
  ASSERT_EQ(zrt_init("cpu", 3), 0);
  struct Barrier {
    std::atomic<int> started{0};
    static void body(void *self, int64_t, int64_t) {
      auto *b = static_cast<Barrier *>(self);
      b->started.fetch_add(1);
      while (b->started.load() < 3)
        std::this_thread::yield();
    }
  } barrier;
  zrt_parallel_for(3, &Barrier::body, &barrier);
  EXPECT_EQ(barrier.started.load(), 3);
  ASSERT_EQ(zrt_init("cpu", 1), 0);
}

// A call from inside a body, and calls from several threads at once, run
// completely (the inner or concurrent one on its calling thread).
TEST_F(RuntimeParallel, NestedAndConcurrentCallsComplete) {
  ASSERT_EQ(zrt_init("cpu", 2), 0);
  struct Outer {
    std::atomic<int64_t> inner{0};
    static void innerBody(void *self, int64_t begin, int64_t end) {
      static_cast<Outer *>(self)->inner.fetch_add(end - begin);
    }
    static void body(void *self, int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        zrt_parallel_for(10, &Outer::innerBody, self);
    }
  } outer;
  zrt_parallel_for(8, &Outer::body, &outer);
  EXPECT_EQ(outer.inner.load(), 80);

  std::vector<std::thread> callers;
  std::vector<std::unique_ptr<Recorder>> recorders;
  for (int t = 0; t < 4; ++t)
    recorders.push_back(std::make_unique<Recorder>(5000));
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&, t] {
      for (int rep = 0; rep < 50; ++rep)
        zrt_parallel_for(5000, &Recorder::body, recorders[t].get());
    });
  for (std::thread &c : callers)
    c.join();
  for (auto &r : recorders)
    for (auto &v : r->visits)
      ASSERT_EQ(v.load(), 50);
  ASSERT_EQ(zrt_init("cpu", 1), 0);
}

// Resizing the pool between calls, many times, loses no call.
TEST_F(RuntimeParallel, ResizeBetweenCalls) {
  for (int rep = 0; rep < 20; ++rep) {
    ASSERT_EQ(zrt_init("cpu", 1 + rep % 4), 0);
    Recorder r(64);
    zrt_parallel_for(64, &Recorder::body, &r);
    for (auto &v : r.visits)
      ASSERT_EQ(v.load(), 1);
  }
  ASSERT_EQ(zrt_init("cpu", 1), 0);
}

TEST_F(RuntimeParallel, EmptyRangeAndNullBody) {
  Recorder r(1);
  zrt_parallel_for(0, &Recorder::body, &r);
  zrt_parallel_for(-5, &Recorder::body, &r);
  EXPECT_TRUE(r.ranges.empty());
  EXPECT_EQ(fatalMessageOf([] { zrt_parallel_for(4, nullptr, nullptr); }),
            "zrt_parallel_for: body is NULL");
}

} // namespace
