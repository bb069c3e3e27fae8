//===- RuntimeCommTest.cpp - Collectives in a world of one ----------------===//
//
// The collectives' C ABI without mpirun: the world is this process alone,
// collectives are copies that send 0 bytes and allocate nothing, and
// invalid arguments go to the fatal handler. Worlds of 2 and 4 ranks are
// tested under mpirun by collectives-test.cpp.
//
//===----------------------------------------------------------------------===//

#include "CollectiveCalls.h"
#include "RuntimeTestSupport.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

extern "C" {
size_t zrt_c99_sizeof_comm_stats(void);
size_t zrt_c99_offsetof_comm_stats_seconds(void);
int zrt_c99_comm_smoke(void);
}

using namespace zero::runtime::test;

namespace {

using RuntimeComm = RuntimeFixture;

template <typename T> bool sameBits(const std::vector<T> &a,
                                    const std::vector<T> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// Values whose bits a copy must keep: signed zeros, a NaN with payload,
/// infinities, a denormal.
template <typename T> std::vector<T> specialValues() {
  return {T(1.5),
          T(-0.0),
          T(0.0),
          std::numeric_limits<T>::quiet_NaN(),
          -std::numeric_limits<T>::infinity(),
          std::numeric_limits<T>::denorm_min(),
          T(-3.25)};
}

/// Every kind of collective was called `calls` times, with 0 bytes.
void expectCalls(uint64_t allReduce, uint64_t reduceScatter, uint64_t allGather,
                 uint64_t scalar) {
  zrt_comm_stats s = commStats();
  EXPECT_EQ(s.calls[ZRT_ALL_REDUCE], allReduce);
  EXPECT_EQ(s.calls[ZRT_REDUCE_SCATTER], reduceScatter);
  EXPECT_EQ(s.calls[ZRT_ALL_GATHER], allGather);
  EXPECT_EQ(s.calls[ZRT_SCALAR_ALL_REDUCE], scalar);
  for (int k = 0; k < ZRT_NUM_COLLECTIVES; ++k) {
    EXPECT_EQ(s.bytes_sent[k], 0u) << zrt_collective_name(zrt_collective(k));
    EXPECT_GE(s.seconds[k], 0.0);
  }
}

// Without an MPI launcher the world is this process alone, and MPI is not
// started.
TEST_F(RuntimeComm, WorldOfOneWithoutMpirun) {
  EXPECT_EQ(zrt_world_rank(), 0);
  EXPECT_EQ(zrt_world_size(), 1);
}

TEST_F(RuntimeComm, CollectiveNames) {
  EXPECT_STREQ(zrt_collective_name(ZRT_ALL_REDUCE), "all_reduce");
  EXPECT_STREQ(zrt_collective_name(ZRT_REDUCE_SCATTER), "reduce_scatter");
  EXPECT_STREQ(zrt_collective_name(ZRT_ALL_GATHER), "all_gather");
  EXPECT_STREQ(zrt_collective_name(ZRT_SCALAR_ALL_REDUCE),
               "scalar_all_reduce");
  EXPECT_STREQ(zrt_collective_name(ZRT_NUM_COLLECTIVES), "unknown");
  EXPECT_STREQ(zrt_collective_name(static_cast<zrt_collective>(-1)),
               "unknown");
}

// In a world of one every collective copies x_0 bit for bit (the reduction
// starts from x_0, not from an identity that would turn -0.0 into +0.0),
// out of place and in place, sends nothing and allocates nothing.
TEST_F(RuntimeComm, CollectivesAreCopies) {
  const std::vector<float> in = specialValues<float>();
  const int64_t n = static_cast<int64_t>(in.size());
  std::vector<float> out(in.size(), 7.0f);
  coll::allReduceSum<float>(in.data(), out.data(), n);
  EXPECT_TRUE(sameBits(out, in));
  out.assign(in.size(), 7.0f);
  coll::allReduceMax<float>(in.data(), out.data(), n);
  EXPECT_TRUE(sameBits(out, in));
  out.assign(in.size(), 7.0f);
  coll::reduceScatterSum<float>(in.data(), out.data(), n);
  EXPECT_TRUE(sameBits(out, in));
  out.assign(in.size(), 7.0f);
  coll::allGather<float>(in.data(), out.data(), n);
  EXPECT_TRUE(sameBits(out, in));

  std::vector<float> buffer = in;
  coll::allReduceSum<float>(buffer.data(), buffer.data(), n);
  coll::reduceScatterSum<float>(buffer.data(), buffer.data(), n);
  coll::allGather<float>(buffer.data(), buffer.data(), n);
  EXPECT_TRUE(sameBits(buffer, in));
  expectCalls(3, 2, 2, 0);
  EXPECT_EQ(memoryStats().peak[ZRT_COMM], 0u);
  EXPECT_EQ(memoryStats().num_allocs, start.num_allocs);
}

TEST_F(RuntimeComm, CollectivesAreCopiesF64) {
  const std::vector<double> in = specialValues<double>();
  const int64_t n = static_cast<int64_t>(in.size());
  std::vector<double> out(in.size(), 7.0);
  coll::allReduceSum<double>(in.data(), out.data(), n);
  EXPECT_TRUE(sameBits(out, in));
  out.assign(in.size(), 7.0);
  coll::allReduceMax<double>(in.data(), out.data(), n);
  EXPECT_TRUE(sameBits(out, in));
  out.assign(in.size(), 7.0);
  coll::reduceScatterSum<double>(in.data(), out.data(), n);
  EXPECT_TRUE(sameBits(out, in));
  out.assign(in.size(), 7.0);
  coll::allGather<double>(in.data(), out.data(), n);
  EXPECT_TRUE(sameBits(out, in));
  expectCalls(2, 1, 1, 0);
  EXPECT_EQ(memoryStats().peak[ZRT_COMM], 0u);
}

// runtime.h's formula for a collective's scratch, which the runtime sizes
// its buffers with and zero-memory-report predicts with.
TEST(CommScratch, FollowsTheSegmentsOfTheBucket) {
  int64_t p[2] = {-1, -1};
  // A reduce-scatter of 100 f32 per rank on 2 ranks: 2 blocks of 100.
  EXPECT_EQ(zrt_comm_scratch(ZRT_REDUCE_SCATTER, 2, 100, 4,
                             ZRT_COMM_BUCKET_BYTES, p), 1);
  EXPECT_EQ(p[0], 800);
  // An all-reduce of 7: blocks of 4, padded, so a second buffer to pack.
  EXPECT_EQ(zrt_comm_scratch(ZRT_ALL_REDUCE, 2, 7, 4, ZRT_COMM_BUCKET_BYTES,
                             p), 2);
  EXPECT_EQ(p[0], 32);
  EXPECT_EQ(p[1], 32);
  EXPECT_EQ(zrt_comm_scratch(ZRT_ALL_REDUCE, 2, 8, 4, ZRT_COMM_BUCKET_BYTES,
                             p), 1);
  // A bucket smaller than one element per rank: segments of one element;
  // a 64-byte bucket on 2 ranks of f64: segments of 4 elements.
  EXPECT_EQ(zrt_comm_scratch(ZRT_REDUCE_SCATTER, 2, 100, 4, 1, p), 1);
  EXPECT_EQ(p[0], 8);
  EXPECT_EQ(zrt_comm_scratch(ZRT_REDUCE_SCATTER, 2, 100, 8, 64, p), 1);
  EXPECT_EQ(p[0], 64);
  // The 16 MiB bucket bounds a large reduction's scratch.
  EXPECT_EQ(zrt_comm_scratch(ZRT_REDUCE_SCATTER, 4, int64_t(1) << 30, 4,
                             ZRT_COMM_BUCKET_BYTES, p), 1);
  EXPECT_EQ(p[0], ZRT_COMM_BUCKET_BYTES);
  EXPECT_EQ(zrt_comm_scratch(ZRT_SCALAR_ALL_REDUCE, 3, 1, 8,
                             ZRT_COMM_BUCKET_BYTES, p), 1);
  EXPECT_EQ(p[0], 24);
  // Nothing for gathers, a world of one, or nothing to reduce; -1 when a
  // size overflows.
  EXPECT_EQ(zrt_comm_scratch(ZRT_ALL_GATHER, 2, 100, 4, ZRT_COMM_BUCKET_BYTES,
                             p), 0);
  EXPECT_EQ(zrt_comm_scratch(ZRT_REDUCE_SCATTER, 1, 100, 4,
                             ZRT_COMM_BUCKET_BYTES, p), 0);
  EXPECT_EQ(zrt_comm_scratch(ZRT_ALL_REDUCE, 2, 0, 4, ZRT_COMM_BUCKET_BYTES,
                             p), 0);
  EXPECT_EQ(zrt_comm_scratch(ZRT_SCALAR_ALL_REDUCE, INT64_MAX / 2, 1, 8,
                             ZRT_COMM_BUCKET_BYTES, p), -1);
}

// The communication arena holds ZRT_COMM bytes from zrt_comm_reserve to
// zrt_comm_release: a smaller reservation keeps the buffer, a larger one
// adds a buffer beside it, the release frees both; a negative size is a
// fatal error that names the call.
TEST_F(RuntimeComm, CommArenaHoldsItsBytesBetweenReserveAndRelease) {
  zrt_comm_reserve(1000);
  EXPECT_EQ(memoryStats().current[ZRT_COMM], 1000u);
  zrt_comm_reserve(600);
  zrt_comm_reserve(0);
  EXPECT_EQ(memoryStats().current[ZRT_COMM], 1000u);
  zrt_comm_reserve(4000);
  EXPECT_EQ(memoryStats().current[ZRT_COMM], 5000u);
  zrt_comm_release();
  EXPECT_EQ(memoryStats().current[ZRT_COMM], 0u);
  EXPECT_EQ(memoryStats().peak[ZRT_COMM], 5000u);
  zrt_comm_release(); // nothing reserved: nothing to do
  EXPECT_EQ(fatalMessageOf([] { zrt_comm_reserve(-1); }),
            "zrt_comm_reserve: bytes = -1 is negative");
  EXPECT_EQ(memoryStats().current[ZRT_COMM], 0u);
}

// Scalars come back unchanged (bits included) and count apart.
TEST_F(RuntimeComm, ScalarsReturnTheValue) {
  float negZero = coll::scalarSum<float>(-0.0f);
  EXPECT_TRUE(std::signbit(negZero) && negZero == 0.0f);
  EXPECT_EQ(coll::scalarSum<float>(2.5f), 2.5f);
  EXPECT_EQ(coll::scalarMax<float>(-1.0f), -1.0f);
  EXPECT_EQ(coll::scalarSum<double>(0.1), 0.1);
  EXPECT_TRUE(std::isnan(coll::scalarMax<double>(
      std::numeric_limits<double>::quiet_NaN())));
  expectCalls(0, 0, 0, 5);
  EXPECT_EQ(memoryStats().peak[ZRT_COMM], 0u);
}

// count == 0 does nothing, accepts NULL buffers, and is still a call.
TEST_F(RuntimeComm, CountZeroIsANoOp) {
  coll::allReduceSum<float>(nullptr, nullptr, 0);
  coll::allReduceMax<double>(nullptr, nullptr, 0);
  coll::reduceScatterSum<float>(nullptr, nullptr, 0);
  coll::allGather<double>(nullptr, nullptr, 0);
  expectCalls(2, 1, 1, 0);
}

// A descriptor outside the collectives the runtime runs goes to the fatal
// handler with what is wrong with it, and is not counted.
TEST_F(RuntimeComm, InvalidDescriptorsAreFatal) {
  float buffer[8] = {};
  auto op = [](zrt_collective kind, zrt_reduction reduction,
               zrt_element_type type) {
    return zrt_make_collective_op(kind, reduction, type);
  };
  EXPECT_EQ(fatalMessageOf([&] {
              zrt_collective_run(0x07000000u, buffer, buffer, 1);
            }),
            "zrt_collective_run: descriptor 0x07000000 names no collective "
            "(kind 0, reduction 0, element type 0)");
  EXPECT_EQ(fatalMessageOf([&] {
              zrt_collective_run(9, buffer, buffer, 1);
            }),
            "zrt_collective_run: descriptor 0x00000009 names no collective "
            "(kind 9, reduction 0, element type 0)");
  EXPECT_EQ(fatalMessageOf([&] {
              zrt_collective_run(op(ZRT_ALL_GATHER, ZRT_REDUCE_SUM,
                                    ZRT_ELEMENT_F32),
                                 buffer, buffer, 1);
            }),
            "zrt_collective_run: an all-gather takes no reduction "
            "(ZRT_REDUCE_NONE)");
  EXPECT_EQ(fatalMessageOf([&] {
              zrt_collective_run(op(ZRT_ALL_REDUCE, ZRT_REDUCE_NONE,
                                    ZRT_ELEMENT_F32),
                                 buffer, buffer, 1);
            }),
            "zrt_collective_run: all_reduce needs a reduction "
            "(ZRT_REDUCE_SUM or ZRT_REDUCE_MAX)");
  EXPECT_EQ(fatalMessageOf([&] {
              zrt_collective_start(op(ZRT_REDUCE_SCATTER, ZRT_REDUCE_MAX,
                                      ZRT_ELEMENT_F64),
                                   buffer, buffer, 1);
            }),
            "zrt_collective_start: a reduce_scatter sums (ZRT_REDUCE_SUM); "
            "its max is not supported");
  EXPECT_EQ(fatalMessageOf([&] {
              zrt_collective_run(op(ZRT_SCALAR_ALL_REDUCE, ZRT_REDUCE_SUM,
                                    ZRT_ELEMENT_F32),
                                 buffer, buffer, 1);
            }),
            "zrt_collective_run: takes collectives on buffers; a scalar "
            "all-reduce goes to zrt_collective_scalar");
  EXPECT_EQ(fatalMessageOf([&] {
              zrt_collective_scalar(op(ZRT_ALL_REDUCE, ZRT_REDUCE_SUM,
                                       ZRT_ELEMENT_F64),
                                    1.0);
            }),
            "zrt_collective_scalar: takes a scalar all-reduce; collectives "
            "on buffers go to zrt_collective_run or zrt_collective_start");
  EXPECT_EQ(fatalMessageOf([&] {
              zrt_collective_scalar(op(ZRT_SCALAR_ALL_REDUCE, ZRT_REDUCE_SUM,
                                       ZRT_ELEMENT_BF16),
                                    1.0);
            }),
            "zrt_collective_scalar: a scalar all-reduce takes f32 or f64 (a "
            "bf16 scalar is an all-reduce of one element)");
  expectCalls(0, 0, 0, 0);
}

// The bytes-sent formula the compiler's cost model shares (runtime.h)
// against the closed forms of "Algorithms and bytes counted".
TEST(RuntimeCommFormula, BytesSentAreTheClosedForms) {
  EXPECT_EQ(zrt_collective_bytes_sent(ZRT_ALL_GATHER, 4, 10, 4), 3u * 10 * 4);
  EXPECT_EQ(zrt_collective_bytes_sent(ZRT_REDUCE_SCATTER, 3, 7, 2), 2u * 7 * 2);
  // ceil(10 / 4) = 3 elements a block, reduce-scattered and gathered.
  EXPECT_EQ(zrt_collective_bytes_sent(ZRT_ALL_REDUCE, 4, 10, 8),
            2u * 3 * 3 * 8);
  EXPECT_EQ(zrt_collective_bytes_sent(ZRT_SCALAR_ALL_REDUCE, 5, 1, 8), 4u * 8);
  EXPECT_EQ(zrt_collective_bytes_sent(ZRT_ALL_REDUCE, 1, 10, 4), 0u);
  EXPECT_EQ(zrt_collective_bytes_sent(ZRT_ALL_GATHER, 4, 0, 4), 0u);
}

// Invalid arguments go to the fatal handler and are not counted.
TEST_F(RuntimeComm, InvalidArgumentsAreFatal) {
  float buffer[8] = {};
  EXPECT_EQ(fatalMessageOf([&] {
              coll::allReduceSum<float>(buffer, buffer, -1);
            }),
            "zrt_collective_run(all_reduce sum f32): count = -1 is negative");
  EXPECT_EQ(fatalMessageOf([&] {
              coll::allGather<float>(nullptr, buffer, 2);
            }),
            "zrt_collective_run(all_gather f32): in is NULL");
  EXPECT_EQ(fatalMessageOf([&] {
              coll::reduceScatterSum<float>(buffer, nullptr, 2);
            }),
            "zrt_collective_run(reduce_scatter sum f32): out is NULL");
  EXPECT_EQ(fatalMessageOf([&] {
              coll::allReduceMax<float>(buffer, buffer + 1, 4);
            }),
            "zrt_collective_run(all_reduce max f32): in and out overlap (in place needs out "
            "== in)");
  EXPECT_EQ(fatalMessageOf([&] {
              coll::reduceScatterSum<float>(buffer + 1, buffer, 4);
            }),
            "zrt_collective_run(reduce_scatter sum f32): out overlaps in other than at a "
            "block boundary (in place needs out == in + q * count, 0 <= q < "
            "N)");
  EXPECT_EQ(fatalMessageOf([&] {
              coll::allGather<float>(buffer + 2, buffer, 4);
            }),
            "zrt_collective_run(all_gather f32): in and out overlap (in place needs in == "
            "out + rank * count)");
  EXPECT_CONTAINS(fatalMessageOf([&] {
                    coll::allReduceSum<double>(reinterpret_cast<double *>(buffer),
                                           reinterpret_cast<double *>(buffer),
                                           INT64_MAX / 2);
                  }),
                  "the buffer size overflows");
  expectCalls(0, 0, 0, 0);
}

// Started collectives in a world of one are copies, counted like the
// blocking forms; requests are numbered in order and may be waited for in
// any order, and twice.
TEST_F(RuntimeComm, StartedCollectivesAreCopies) {
  std::vector<float> in = specialValues<float>();
  std::vector<float> a(in.size()), b(in.size()), c(in.size());
  std::vector<double> d = specialValues<double>(), e(d.size());
  const int64_t n = static_cast<int64_t>(in.size());
  int64_t r1 = coll::allReduceSumStart<float>(in.data(), a.data(), n);
  int64_t r2 = coll::reduceScatterSumStart<float>(in.data(), b.data(), n);
  int64_t r3 = coll::allGatherStart<float>(in.data(), c.data(), n);
  int64_t r4 = coll::allGatherStart<double>(d.data(), e.data(), n);
  EXPECT_GT(r1, 0);
  EXPECT_EQ(r2, r1 + 1);
  EXPECT_EQ(r3, r2 + 1);
  EXPECT_EQ(r4, r3 + 1);
  zrt_wait(r2);
  zrt_wait(r4);
  zrt_wait(r1);
  EXPECT_TRUE(sameBits(a, in));
  EXPECT_TRUE(sameBits(b, in));
  EXPECT_TRUE(sameBits(c, in));
  EXPECT_TRUE(sameBits(e, d));
  expectCalls(1, 1, 2, 0);
  EXPECT_GE(commStats().wait_seconds, 0.0);
}

// A start with a negative count or a NULL buffer is fatal at once; an
// error found while the collective runs is fatal from the wait, once, and
// later collectives work again.
TEST_F(RuntimeComm, StartedCollectiveErrors) {
  float buffer[8] = {};
  EXPECT_EQ(fatalMessageOf([&] {
              coll::allGatherStart<float>(buffer, buffer + 4, -2);
            }),
            "zrt_collective_start(all_gather f32): count = -2 is negative");
  EXPECT_EQ(fatalMessageOf([&] {
              coll::reduceScatterSumStart<double>(nullptr, nullptr, 3);
            }),
            "zrt_collective_start(reduce_scatter sum f64): in is NULL");
  int64_t bad = coll::allGatherStart<float>(buffer + 2, buffer, 4);
  EXPECT_EQ(fatalMessageOf([&] { zrt_wait(bad); }),
            "zrt_collective_start(all_gather f32): in and out overlap (in place needs "
            "in == out + rank * count)");
  EXPECT_EQ(fatalMessageOf([&] { zrt_wait(bad); }), "<no fatal error>");
  EXPECT_CONTAINS(fatalMessageOf([&] { zrt_wait(bad + 100); }),
                  "zrt_wait: request");
  EXPECT_CONTAINS(fatalMessageOf([&] { zrt_wait(0); }), "was never started");
  float x = 2.0f, y = 0.0f;
  zrt_wait(coll::allReduceSumStart<float>(&x, &y, 1));
  EXPECT_EQ(y, 2.0f);
}

// While tracing, each GEMM, collective (on the link and, for a blocking
// one, the caller blocked) and wait is one event, in order, with its kind,
// shape or bytes; nothing is recorded before the start or after the stop.
TEST_F(RuntimeComm, TraceRecordsTheStep) {
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4] = {};
  float x = 1.0f, y = 0.0f;
  coll::allReduceSum<float>(&x, &y, 1); // before the start: not recorded
  zrt_trace_start();
  zrt_gemm_f32(0, 0, 2, 2, 3, a, 3, b, 2, 0.0f, c, 2);
  coll::allReduceSum<float>(&x, &y, 1);
  zrt_wait(coll::allGatherStart<float>(&x, &y, 1));
  zrt_trace_stop();
  coll::allReduceSum<float>(&x, &y, 1); // after the stop: not recorded
  ASSERT_EQ(zrt_trace_count(), 5u);
  std::vector<zrt_trace_event> events(5);
  for (size_t i = 0; i < events.size(); ++i)
    ASSERT_EQ(zrt_trace_get(i, &events[i]), 0);
  EXPECT_EQ(events[0].kind, ZRT_TRACE_GEMM);
  EXPECT_EQ(events[0].flops, 2u * 2 * 2 * 3);
  EXPECT_EQ(events[0].m, 2);
  EXPECT_EQ(events[0].k, 3);
  EXPECT_EQ(events[1].kind, ZRT_TRACE_COLLECTIVE);
  EXPECT_EQ(events[1].collective, ZRT_ALL_REDUCE);
  EXPECT_EQ(events[2].kind, ZRT_TRACE_BLOCKED);
  EXPECT_EQ(events[2].collective, ZRT_ALL_REDUCE);
  EXPECT_EQ(events[3].kind, ZRT_TRACE_COLLECTIVE);
  EXPECT_EQ(events[3].collective, ZRT_ALL_GATHER);
  EXPECT_EQ(events[4].kind, ZRT_TRACE_WAIT);
  EXPECT_EQ(events[4].collective, ZRT_ALL_GATHER);
  for (const zrt_trace_event &e : events) {
    EXPECT_GE(e.begin, 0.0);
    EXPECT_GE(e.end, e.begin);
    EXPECT_EQ(e.bytes, 0u); // a world of one sends nothing
  }
  // The blocked caller's span contains the collective's.
  EXPECT_LE(events[2].begin, events[1].begin);
  EXPECT_GE(events[2].end, events[1].end);
  zrt_trace_event e;
  EXPECT_NE(zrt_trace_get(5, &e), 0);
  EXPECT_CONTAINS(zrt_last_error(), "index 5 is past the 5 events recorded");
  EXPECT_NE(zrt_trace_get(0, nullptr), 0);
  // A new start clears the trace.
  zrt_trace_start();
  zrt_trace_stop();
  EXPECT_EQ(zrt_trace_count(), 0u);
}

// The simulated link refuses what is not a link.
TEST_F(RuntimeComm, SimLinkArguments) {
  EXPECT_NE(zrt_set_sim_link(-1.0, 0.0), 0);
  EXPECT_CONTAINS(zrt_last_error(), "zrt_set_sim_link");
  EXPECT_NE(zrt_set_sim_link(1e9, -1.0), 0);
  EXPECT_NE(zrt_set_sim_link(0.0, 1e-6), 0);
  EXPECT_NE(zrt_set_sim_link(1e9, std::numeric_limits<double>::infinity()), 0);
  EXPECT_EQ(zrt_set_sim_link(std::numeric_limits<double>::infinity(), 1e-6),
            0);
  // A world of one sends nothing and waits for no link.
  float x = 1.0f, y = 0.0f;
  coll::allReduceSum<float>(&x, &y, 1);
  EXPECT_EQ(y, 1.0f);
  EXPECT_EQ(zrt_set_sim_link(0.0, 0.0), 0);
}

// The comm bucket setter returns the previous value; 0 is the default.
TEST_F(RuntimeComm, BucketSetting) {
  EXPECT_EQ(zrt_set_comm_bucket_bytes(4096), size_t(16) << 20);
  EXPECT_EQ(zrt_set_comm_bucket_bytes(1), 4096u);
  EXPECT_EQ(zrt_set_comm_bucket_bytes(0), 1u);
  EXPECT_EQ(zrt_set_comm_bucket_bytes(0), size_t(16) << 20);
}

TEST_F(RuntimeComm, ResetClearsCounters) {
  float x = 1.0f;
  coll::allReduceSum<float>(&x, &x, 1);
  coll::scalarSum<float>(x);
  EXPECT_EQ(commStats().calls[ZRT_ALL_REDUCE], 1u);
  zrt_reset_comm_stats();
  expectCalls(0, 0, 0, 0);
  zrt_get_comm_stats(nullptr); // a no-op
}

// Without MPI, shutting down keeps the world of one working.
TEST_F(RuntimeComm, ShutdownKeepsWorldOfOne) {
  zrt_shutdown();
  EXPECT_EQ(zrt_world_size(), 1);
  float in = 3.0f, out = 0.0f;
  coll::allReduceSum<float>(&in, &out, 1);
  EXPECT_EQ(out, 3.0f);
  ASSERT_EQ(zrt_init("cpu", 1), 0) << zrt_last_error();
  EXPECT_EQ(zrt_world_size(), 1);
}

// zrt_abort prints the driver's line verbatim and exits with status 1
// (without MPI there is no other rank to end).
TEST_F(RuntimeComm, AbortPrintsTheLineAndExits1) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(zrt_abort("zero-run: error: cannot read 'x.bin'"),
              ::testing::ExitedWithCode(1),
              "^zero-run: error: cannot read 'x.bin'\n$");
  EXPECT_EXIT(zrt_abort(nullptr), ::testing::ExitedWithCode(1), "^$");
}

// runtime.h compiled as C99 sees the same layout and works from C.
TEST_F(RuntimeComm, C99ClientAgrees) {
  EXPECT_EQ(zrt_c99_sizeof_comm_stats(), sizeof(zrt_comm_stats));
  EXPECT_EQ(zrt_c99_offsetof_comm_stats_seconds(),
            offsetof(zrt_comm_stats, seconds));
  EXPECT_EQ(sizeof(zrt_comm_stats), (3 * ZRT_NUM_COLLECTIVES + 1) * 8u);
  EXPECT_EQ(zrt_c99_comm_smoke(), 0);
}

} // namespace
