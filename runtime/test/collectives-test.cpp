//===- collectives-test.cpp - The collectives under mpirun ----------------===//
//
// A plain MPI program (through the runtime's C ABI only) that ctest runs
// under mpirun with 1, 2 and 4 ranks, and once without mpirun.
//
//   collectives-test check N   checks every collective against references
//                              that every rank computes itself, and that
//                              the world has N ranks; exits 0 if all pass
//   collectives-test abort     the last rank calls zrt_abort while the
//                              others wait in an all-reduce
//   collectives-test fatal     the last rank makes an invalid GEMM call
//                              (default fatal handler) while the others wait
//   collectives-test mpi-error the ranks call an all-gather with different
//                              counts: MPI reports truncation to the fatal
//                              handler
//   collectives-test mpi-error-started
//                              the same, started: reported from zrt_wait
//
// The failure modes must end every rank with a non-zero exit status and
// must not hang; expect-abort.sh checks that.
//
// Data: x_r[i], the buffer of rank r, is a pseudo-random value of wide
// dynamic range (exponents -24..23, both signs, some signed zeros), so the
// order of a floating-point sum changes its last bits; the reference is
// computed in rank order, ((x_0 + x_1) + x_2) + ..., and results must match
// it bit for bit.
//
//===----------------------------------------------------------------------===//

#include "CollectiveCalls.h"
#include "zero/runtime.h"

// The runtime's bf16 conversions (header-only, runtime/lib).
#include "BFloat16.h"
#include "RankCheck.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace {

int rank = 0, worldSize = 1;
int failures = 0;
int checks = 0;

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// x_r[i] of data set `salt`.
template <typename T> T value(int r, int64_t i, uint64_t salt) {
  uint64_t h = mix(mix(salt) ^ (uint64_t(r) << 48) ^ uint64_t(i));
  if (h % 97 == 0)
    return (h >> 8) & 1 ? T(-0.0) : T(0.0);
  double mantissa = 1.0 + double(h >> 12) / double(1ull << 52);
  double v = std::ldexp(mantissa, int((h >> 1) % 48) - 24);
  return T(h & 1 ? -v : v);
}

template <typename T> std::vector<T> data(int r, int64_t n, uint64_t salt) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[i] = value<T>(r, i, salt);
  return v;
}

/// The reference combiner (runtime.h: max keeps the first NaN in rank
/// order, else the first of equal values).
template <typename T> T combine(bool isMax, T acc, T x) {
  if (!isMax)
    return acc + x;
  if (std::isnan(acc))
    return acc;
  return std::isnan(x) || x > acc ? x : acc;
}

/// The reduction of x_0..x_{N-1} in rank order.
template <typename T>
std::vector<T> reference(int64_t n, uint64_t salt, bool isMax = false) {
  std::vector<T> acc = data<T>(0, n, salt);
  for (int r = 1; r < worldSize; ++r) {
    std::vector<T> x = data<T>(r, n, salt);
    for (int64_t i = 0; i < n; ++i)
      acc[i] = combine(isMax, acc[i], x[i]);
  }
  return acc;
}

/// Index of the first element whose bits differ, or -1.
template <typename T> int64_t firstDifference(const T *a, const T *b,
                                              int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (std::memcmp(a + i, b + i, sizeof(T)) != 0)
      return i;
  return -1;
}

template <typename T> const char *typeName() {
  return sizeof(T) == 4 ? "f32" : "f64";
}

/// A value no collective produces, to see what was (not) written.
template <typename T> T sentinel() {
  return std::numeric_limits<T>::quiet_NaN();
}

zrt_comm_stats commStats() {
  zrt_comm_stats s;
  zrt_get_comm_stats(&s);
  return s;
}

zrt_memory_stats memoryStats() {
  zrt_memory_stats s;
  zrt_get_memory_stats(&s);
  return s;
}

std::size_t bucketBytes = 0; // 0: the default
constexpr std::size_t kDefaultBucket = 16u << 20;

/// s of runtime.h's "Temporary memory" for block length c.
int64_t segment(int64_t c, std::size_t b) {
  std::size_t bucket = bucketBytes ? bucketBytes : kDefaultBucket;
  int64_t s = static_cast<int64_t>(bucket / (std::size_t(worldSize) * b));
  if (s < 1)
    s = 1;
  return s < c ? s : c;
}

/// Runs one collective call and checks what runtime.h promises about its
/// counters and memory: one call of `kind`, exactly `bytes` sent, a ZRT_COMM
/// peak of exactly `scratch` bytes, nothing left allocated.
template <typename Fn>
void counted(const char *what, zrt_collective kind, uint64_t bytes,
             uint64_t scratch, Fn &&fn) {
  zrt_reset_peaks();
  zrt_comm_stats before = commStats();
  fn();
  zrt_comm_stats after = commStats();
  zrt_memory_stats mem = memoryStats();
  for (int k = 0; k < ZRT_NUM_COLLECTIVES; ++k) {
    uint64_t calls = after.calls[k] - before.calls[k];
    uint64_t sent = after.bytes_sent[k] - before.bytes_sent[k];
    CHECK(calls == (k == kind ? 1u : 0u), "%s: %llu calls of %s", what,
          (unsigned long long)calls,
          zrt_collective_name(static_cast<zrt_collective>(k)));
    CHECK(sent == (k == kind ? bytes : 0u), "%s: %llu bytes sent as %s, "
          "expected %llu", what, (unsigned long long)sent,
          zrt_collective_name(static_cast<zrt_collective>(k)),
          (unsigned long long)(k == kind ? bytes : 0u));
    CHECK(after.seconds[k] >= before.seconds[k], "%s: time went back", what);
  }
  CHECK(mem.current[ZRT_COMM] == 0, "%s: %llu comm bytes left", what,
        (unsigned long long)mem.current[ZRT_COMM]);
  CHECK(mem.peak[ZRT_COMM] == scratch, "%s: comm peak %llu, expected %llu",
        what, (unsigned long long)mem.peak[ZRT_COMM],
        (unsigned long long)scratch);
}

//===----------------------------------------------------------------------===//
// The collectives by type
//===----------------------------------------------------------------------===//

template <typename T> struct Api;
template <> struct Api<float> {
  static constexpr auto allReduceSum = coll::allReduceSum<float>;
  static constexpr auto allReduceMax = coll::allReduceMax<float>;
  static constexpr auto reduceScatter = coll::reduceScatterSum<float>;
  static constexpr auto allGather = coll::allGather<float>;
  static constexpr auto scalarSum = coll::scalarSum<float>;
  static constexpr auto scalarMax = coll::scalarMax<float>;
  static constexpr auto allReduceSumStart = coll::allReduceSumStart<float>;
  static constexpr auto reduceScatterStart = coll::reduceScatterSumStart<float>;
  static constexpr auto allGatherStart = coll::allGatherStart<float>;
};
template <> struct Api<double> {
  static constexpr auto allReduceSum = coll::allReduceSum<double>;
  static constexpr auto allReduceMax = coll::allReduceMax<double>;
  static constexpr auto reduceScatter = coll::reduceScatterSum<double>;
  static constexpr auto allGather = coll::allGather<double>;
  static constexpr auto scalarSum = coll::scalarSum<double>;
  static constexpr auto scalarMax = coll::scalarMax<double>;
  static constexpr auto allReduceSumStart = coll::allReduceSumStart<double>;
  static constexpr auto reduceScatterStart = coll::reduceScatterSumStart<double>;
  static constexpr auto allGatherStart = coll::allGatherStart<double>;
};

std::string label(const char *op, const char *type, int64_t count,
                  const char *variant) {
  return std::string(op) + "_" + type + "(count " + std::to_string(count) +
         ", bucket " + std::to_string(bucketBytes) + ", " + variant + ")";
}

/// A quiet NaN with payload `payload`, to tell NaNs apart.
template <typename T> T nanWithPayload(unsigned payload) {
  T v = std::numeric_limits<T>::quiet_NaN();
  if constexpr (sizeof(T) == 4) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bits |= payload;
    std::memcpy(&v, &bits, 4);
  } else {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    bits |= payload;
    std::memcpy(&v, &bits, 8);
  }
  return v;
}

/// x_r with NaNs for the max: at 4 a different NaN on every rank (rank 0's
/// must win), at 5 one on the last rank only.
template <typename T>
std::vector<T> maxData(int r, int64_t n, uint64_t salt) {
  std::vector<T> x = data<T>(r, n, salt);
  if (n > 5) {
    x[4] = nanWithPayload<T>(unsigned(r) + 1);
    if (r == worldSize - 1)
      x[5] = nanWithPayload<T>(77);
  }
  return x;
}

/// All-reduce (sum and max), out of place and in place, against the
/// reference; counts need not be multiples of N.
template <typename T> void checkAllReduce(int64_t count, uint64_t salt) {
  const int N = worldSize;
  const int64_t c = (count + N - 1) / N;
  const uint64_t bytes =
      N > 1 ? 2 * uint64_t(N - 1) * uint64_t(c) * sizeof(T) : 0;
  const uint64_t scratch =
      N > 1 && count > 0
          ? uint64_t(N) * segment(c, sizeof(T)) * sizeof(T) *
                (count % N ? 2 : 1)
          : 0;
  for (bool isMax : {false, true}) {
    const char *op = isMax ? "all_reduce_max" : "all_reduce_sum";
    auto fn = isMax ? Api<T>::allReduceMax : Api<T>::allReduceSum;
    std::vector<T> in = isMax ? maxData<T>(rank, count, salt)
                              : data<T>(rank, count, salt);
    std::vector<T> ref = isMax ? maxData<T>(0, count, salt)
                               : data<T>(0, count, salt);
    for (int r = 1; r < N; ++r) {
      std::vector<T> x = isMax ? maxData<T>(r, count, salt)
                               : data<T>(r, count, salt);
      for (int64_t i = 0; i < count; ++i)
        ref[i] = combine(isMax, ref[i], x[i]);
    }
    const std::vector<T> original = in;
    std::vector<T> out(in.size(), sentinel<T>());
    std::string what = label(op, typeName<T>(), count, "out of place");
    counted(what.c_str(), ZRT_ALL_REDUCE, bytes, scratch,
            [&] { fn(in.data(), out.data(), count); });
    int64_t bad = firstDifference(out.data(), ref.data(), count);
    CHECK(bad < 0, "%s: element %lld is %.17g, expected %.17g", what.c_str(),
          (long long)bad, bad < 0 ? 0.0 : double(out[bad]),
          bad < 0 ? 0.0 : double(ref[bad]));
    CHECK(firstDifference(in.data(), original.data(), count) < 0,
          "%s: in was modified", what.c_str());

    what = label(op, typeName<T>(), count, "in place");
    counted(what.c_str(), ZRT_ALL_REDUCE, bytes, scratch,
            [&] { fn(in.data(), in.data(), count); });
    bad = firstDifference(in.data(), ref.data(), count);
    CHECK(bad < 0, "%s: element %lld is %.17g, expected %.17g", what.c_str(),
          (long long)bad, bad < 0 ? 0.0 : double(in[bad]),
          bad < 0 ? 0.0 : double(ref[bad]));
  }
}

/// Reduce-scatter out of place and in place (own block, block 0, another
/// rank's block).
template <typename T> void checkReduceScatter(int64_t count, uint64_t salt) {
  const int N = worldSize;
  const uint64_t bytes = uint64_t(N - 1) * uint64_t(count) * sizeof(T);
  const uint64_t scratch =
      N > 1 && count > 0 ? uint64_t(N) * segment(count, sizeof(T)) * sizeof(T)
                         : 0;
  const std::vector<T> x = data<T>(rank, count * N, salt);
  const std::vector<T> ref = reference<T>(count * N, salt);
  const T *mine = ref.data() + rank * count;

  std::vector<T> out(count, sentinel<T>());
  std::string what = label("reduce_scatter_sum", typeName<T>(), count,
                           "out of place");
  counted(what.c_str(), ZRT_REDUCE_SCATTER, bytes, scratch,
          [&] { Api<T>::reduceScatter(x.data(), out.data(), count); });
  int64_t bad = firstDifference(out.data(), mine, count);
  CHECK(bad < 0, "%s: element %lld differs", what.c_str(), (long long)bad);

  for (int q : {rank, 0, (rank + 1) % N}) {
    std::vector<T> in = x;
    what = label("reduce_scatter_sum", typeName<T>(), count,
                 ("in place at block " + std::to_string(q)).c_str());
    counted(what.c_str(), ZRT_REDUCE_SCATTER, bytes, scratch, [&] {
      Api<T>::reduceScatter(in.data(), in.data() + q * count, count);
    });
    bad = firstDifference(in.data() + q * count, mine, count);
    CHECK(bad < 0, "%s: element %lld differs", what.c_str(), (long long)bad);
  }
}

/// All-gather out of place and in place.
template <typename T> void checkAllGather(int64_t count, uint64_t salt) {
  const int N = worldSize;
  const uint64_t bytes = uint64_t(N - 1) * uint64_t(count) * sizeof(T);
  std::vector<T> expected;
  for (int r = 0; r < N; ++r) {
    std::vector<T> block = data<T>(r, count, salt);
    expected.insert(expected.end(), block.begin(), block.end());
  }
  const std::vector<T> in = data<T>(rank, count, salt);

  std::vector<T> out(count * N, sentinel<T>());
  std::string what = label("all_gather", typeName<T>(), count, "out of place");
  counted(what.c_str(), ZRT_ALL_GATHER, bytes, 0,
          [&] { Api<T>::allGather(in.data(), out.data(), count); });
  int64_t bad = firstDifference(out.data(), expected.data(), count * N);
  CHECK(bad < 0, "%s: element %lld differs", what.c_str(), (long long)bad);

  std::vector<T> buffer(count * N, sentinel<T>());
  std::copy(in.begin(), in.end(), buffer.begin() + rank * count);
  what = label("all_gather", typeName<T>(), count, "in place");
  counted(what.c_str(), ZRT_ALL_GATHER, bytes, 0, [&] {
    Api<T>::allGather(buffer.data() + rank * count, buffer.data(), count);
  });
  bad = firstDifference(buffer.data(), expected.data(), count * N);
  CHECK(bad < 0, "%s: element %lld differs", what.c_str(), (long long)bad);
}

/// all_reduce == all_gather(reduce_scatter), bit for bit, on N*count
/// elements; and (N >= 3) the data make the order of the sum matter.
template <typename T> void checkComposition(int64_t count, uint64_t salt) {
  const int N = worldSize;
  const std::vector<T> x = data<T>(rank, count * N, salt);
  std::vector<T> reduced(count * N), shard(count), gathered(count * N);
  Api<T>::allReduceSum(x.data(), reduced.data(), count * N);
  Api<T>::reduceScatter(x.data(), shard.data(), count);
  Api<T>::allGather(shard.data(), gathered.data(), count);
  int64_t bad = firstDifference(reduced.data(), gathered.data(), count * N);
  CHECK(bad < 0,
        "all_reduce != all_gather(reduce_scatter) (%s, count %lld): element "
        "%lld",
        typeName<T>(), (long long)count, (long long)bad);
  if (N >= 3 && count * N >= 1000) {
    // The reverse order gives other bits somewhere: the checks above
    // really pin the order down.
    int64_t differing = 0;
    for (int64_t i = 0; i < count * N; ++i) {
      T backward = value<T>(N - 1, i, salt);
      for (int r = N - 2; r >= 0; --r)
        backward += value<T>(r, i, salt);
      differing += std::memcmp(&backward, &reduced[i], sizeof(T)) != 0;
    }
    CHECK(differing > 0, "%s: the order of the sum never matters",
          typeName<T>());
  }
}

/// Scalars equal the count-1 all-reduce bit for bit and count apart.
template <typename T> void checkScalars(uint64_t salt) {
  const int N = worldSize;
  const uint64_t bytes = uint64_t(N - 1) * sizeof(T);
  const uint64_t scratch = N > 1 ? uint64_t(N) * sizeof(T) : 0;
  for (bool isMax : {false, true}) {
    T v = value<T>(rank, 0, salt);
    T expected = reference<T>(1, salt, isMax)[0];
    T vector = T(0);
    (isMax ? Api<T>::allReduceMax : Api<T>::allReduceSum)(&v, &vector, 1);
    T result = T(0);
    std::string what = std::string("scalar ") + (isMax ? "max " : "sum ") +
                       typeName<T>();
    counted(what.c_str(), ZRT_SCALAR_ALL_REDUCE, bytes, scratch, [&] {
      result = (isMax ? Api<T>::scalarMax : Api<T>::scalarSum)(v);
    });
    CHECK(std::memcmp(&result, &expected, sizeof(T)) == 0,
          "%s: %.17g, expected %.17g", what.c_str(), double(result),
          double(expected));
    CHECK(std::memcmp(&result, &vector, sizeof(T)) == 0,
          "%s: %.17g, but the count-1 all-reduce gives %.17g", what.c_str(),
          double(result), double(vector));
  }
}

/// Started collectives give the blocking forms' results bit for bit, in
/// the order they were called, with blocking calls in between, whatever
/// the order of the waits; and they are counted like the blocking forms.
template <typename T> void checkStarted(int64_t count, uint64_t salt) {
  const int N = worldSize;
  const std::vector<T> x = data<T>(rank, count * N, salt);
  const std::vector<T> y = data<T>(rank, count, salt + 1);
  // The references, from the blocking calls.
  std::vector<T> reduced(count * N), shard(count), gathered(count * N),
      blockingSum(count);
  Api<T>::allReduceSum(x.data(), reduced.data(), count * N);
  Api<T>::reduceScatter(x.data(), shard.data(), count);
  Api<T>::allGather(y.data(), gathered.data(), count);
  Api<T>::allReduceSum(y.data(), blockingSum.data(), count);

  zrt_comm_stats before = commStats();
  std::vector<T> a(count * N, sentinel<T>()), b(count, sentinel<T>()),
      c(count * N, sentinel<T>()), inPlace = x, d(count, sentinel<T>());
  int64_t r1 = Api<T>::allReduceSumStart(x.data(), a.data(), count * N);
  int64_t r2 = Api<T>::reduceScatterStart(x.data(), b.data(), count);
  int64_t r3 = Api<T>::allGatherStart(y.data(), c.data(), count);
  int64_t r4 =
      Api<T>::allReduceSumStart(inPlace.data(), inPlace.data(), count * N);
  // A blocking call runs after the started ones.
  Api<T>::allReduceSum(y.data(), d.data(), count);
  CHECK(r1 > 0 && r2 == r1 + 1 && r3 == r2 + 1 && r4 == r3 + 1,
        "requests %lld %lld %lld %lld", (long long)r1, (long long)r2,
        (long long)r3, (long long)r4);
  zrt_wait(r3); // completes r1 and r2 too
  zrt_wait(r1);
  zrt_wait(r4);
  zrt_wait(r2); // a second wait is allowed
  zrt_comm_stats after = commStats();
  std::string what = label("started", typeName<T>(), count, "");
  CHECK(firstDifference(a.data(), reduced.data(), count * N) < 0,
        "%s: all-reduce differs", what.c_str());
  CHECK(firstDifference(inPlace.data(), reduced.data(), count * N) < 0,
        "%s: in-place all-reduce differs", what.c_str());
  CHECK(firstDifference(b.data(), shard.data(), count) < 0,
        "%s: reduce-scatter differs", what.c_str());
  CHECK(firstDifference(c.data(), gathered.data(), count * N) < 0,
        "%s: all-gather differs", what.c_str());
  CHECK(firstDifference(d.data(), blockingSum.data(), count) < 0,
        "%s: blocking all-reduce after started ones differs", what.c_str());
  const uint64_t calls[ZRT_NUM_COLLECTIVES] = {3, 1, 1, 0};
  const uint64_t cN = (count * N + N - 1) / N, c1 = (count + N - 1) / N;
  const uint64_t bytes[ZRT_NUM_COLLECTIVES] = {
      2 * uint64_t(N - 1) * (2 * cN + c1) * sizeof(T),
      uint64_t(N - 1) * uint64_t(count) * sizeof(T),
      uint64_t(N - 1) * uint64_t(count) * sizeof(T), 0};
  for (int k = 0; k < ZRT_NUM_COLLECTIVES; ++k) {
    CHECK(after.calls[k] - before.calls[k] == calls[k], "%s: %llu calls of %s",
          what.c_str(), (unsigned long long)(after.calls[k] - before.calls[k]),
          zrt_collective_name(static_cast<zrt_collective>(k)));
    CHECK(after.bytes_sent[k] - before.bytes_sent[k] == bytes[k],
          "%s: %llu bytes of %s, expected %llu", what.c_str(),
          (unsigned long long)(after.bytes_sent[k] - before.bytes_sent[k]),
          zrt_collective_name(static_cast<zrt_collective>(k)),
          (unsigned long long)bytes[k]);
  }
  CHECK(after.wait_seconds >= before.wait_seconds, "%s: wait time went back",
        what.c_str());
}

/// zrt_set_sim_link: a collective completes no earlier than the link's
/// latency plus its bytes over the bandwidth (a lower bound, which sleeping
/// guarantees; nothing is asserted about how much later it completes).
void checkSimLink() {
  CHECK(zrt_set_sim_link(-1.0, 0.0) != 0, "a negative bandwidth is refused");
  CHECK(zrt_set_sim_link(0.0, 1e-3) != 0, "latency without bandwidth");
  CHECK(zrt_set_sim_link(std::nan(""), 0.0) != 0, "NaN bandwidth");
  const int64_t count = 1000;
  std::vector<float> in(count, 1.0f), out(count * worldSize);
  const double bandwidth = 2e6, latency = 0.02; // bytes/s, s
  CHECK(zrt_set_sim_link(bandwidth, latency) == 0, "%s", zrt_last_error());
  const double modelled =
      worldSize > 1
          ? latency + double(worldSize - 1) * count * sizeof(float) / bandwidth
          : 0.0;
  for (bool started : {false, true}) {
    auto t0 = std::chrono::steady_clock::now();
    if (started)
      zrt_wait(coll::allGatherStart<float>(in.data(), out.data(), count));
    else
      coll::allGather<float>(in.data(), out.data(), count);
    double took = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
    CHECK(took >= modelled, "%s all-gather took %g s under a link that "
          "needs %g s", started ? "a started" : "a blocking", took, modelled);
  }
  // One link for all ranks: the collective begins when the last rank calls
  // it, so no rank completes it before the last call plus the modelled
  // time (the ranks share this machine's monotonic clock). The last rank
  // calls 30 ms late.
  if (worldSize > 1) {
    auto seconds = [] {
      return std::chrono::duration<double>(
                 std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
    if (rank == worldSize - 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    const double called = seconds();
    zrt_wait(coll::allGatherStart<float>(in.data(), out.data(), count));
    const double done = seconds();
    CHECK(zrt_set_sim_link(0.0, 0.0) == 0, "%s", zrt_last_error());
    const double lastCall = coll::scalarMax<double>(called);
    CHECK(done >= lastCall + modelled,
          "rank %d completed an all-gather %g s after the last rank called "
          "it, under a link that needs %g s",
          rank, done - lastCall, modelled);
  }
  CHECK(zrt_set_sim_link(0.0, 0.0) == 0, "%s", zrt_last_error());
}

template <typename T> void checkType() {
  const int N = worldSize;
  uint64_t salt = sizeof(T);
  // Every bucket: the default (one segment), one element per block per
  // segment, and five elements (several segments, the last one short).
  for (std::size_t bucket :
       {std::size_t(0), std::size_t(1), std::size_t(5) * N * sizeof(T)}) {
    zrt_set_comm_bucket_bytes(bucket);
    bucketBytes = bucket;
    std::vector<int64_t> counts = {0, 1, 2, 3, N - 1, N, N + 1, 7, 64, 65};
    if (bucket != 1)
      counts.insert(counts.end(), {1000, 1001, 4099});
    for (int64_t count : counts) {
      if (count < 0)
        continue;
      ++salt;
      checkAllReduce<T>(count, salt);
      checkReduceScatter<T>(count, salt);
      checkAllGather<T>(count, salt);
      checkComposition<T>(count, salt);
    }
  }
  // Large buffers in the default bucket and in a 64 KiB one (segments
  // through MPI datatypes, a padded last segment).
  for (std::size_t bucket : {std::size_t(0), std::size_t(64) << 10}) {
    zrt_set_comm_bucket_bytes(bucket);
    bucketBytes = bucket;
    checkAllReduce<T>(100003, ++salt);
    checkReduceScatter<T>(25001, ++salt);
    checkAllGather<T>(25001, ++salt);
  }
  zrt_set_comm_bucket_bytes(0);
  bucketBytes = 0;
  checkScalars<T>(++salt);
  for (int64_t count : {int64_t(0), int64_t(1), int64_t(7), int64_t(4099)})
    checkStarted<T>(count, ++salt);
}

struct Failure {
  std::string message;
};

[[noreturn]] void throwingHandler(const char *message) {
  throw Failure{message};
}

/// The bf16 collectives (runtime.h): gathers copy bits; a sum accumulates
/// each element's N values in f32 in rank order and rounds once, so it is
/// not what adding in bf16 step by step gives; the all-reduce equals the
/// all-gather of the reduce-scatter; bytes sent are those of f32 halved.
void checkBF16() {
  const uint64_t salt = 77;
  auto bf16Data = [&](int r, int64_t n) {
    std::vector<uint16_t> v(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      v[i] = zero::runtime::floatToBF16(value<float>(r, i, salt));
    return v;
  };
  for (int64_t c : {int64_t(1), int64_t(7), int64_t(4099)}) {
    std::vector<uint16_t> mine = bf16Data(rank, c);
    std::vector<uint16_t> expected(static_cast<std::size_t>(c));
    for (int64_t i = 0; i < c; ++i) {
      float acc = zero::runtime::bf16ToFloat(bf16Data(0, c)[i]);
      for (int r = 1; r < worldSize; ++r)
        acc += zero::runtime::bf16ToFloat(bf16Data(r, c)[i]);
      expected[i] = zero::runtime::floatToBF16(acc);
    }
    zrt_reset_comm_stats();
    std::vector<uint16_t> sum(static_cast<std::size_t>(c), 0xffff);
    coll::allReduceSum<uint16_t>(mine.data(), sum.data(), c);
    CHECK(firstDifference(sum.data(), expected.data(), c) < 0,
          "bf16 all-reduce of %lld differs from the f32-accumulated "
          "reference at %lld",
          (long long)c,
          (long long)firstDifference(sum.data(), expected.data(), c));
    // Reduce-scatter of N blocks of c, then all-gather: the all-reduce.
    std::vector<uint16_t> blocks;
    for (int r = 0; r < worldSize; ++r)
      blocks.insert(blocks.end(), mine.begin(), mine.end());
    std::vector<uint16_t> shard(static_cast<std::size_t>(c)),
        gathered(static_cast<std::size_t>(c * worldSize));
    coll::reduceScatterSum<uint16_t>(blocks.data(), shard.data(), c);
    coll::allGather<uint16_t>(shard.data(), gathered.data(), c);
    for (int r = 0; r < worldSize; ++r)
      CHECK(firstDifference(gathered.data() + r * c, expected.data(), c) < 0,
            "bf16 all-gather(reduce-scatter) block %d differs", r);
    zrt_comm_stats s = commStats();
    uint64_t block = uint64_t(worldSize - 1) * uint64_t(c) * 2;
    CHECK(s.bytes_sent[ZRT_REDUCE_SCATTER] == block &&
              s.bytes_sent[ZRT_ALL_GATHER] == block,
          "bf16 bytes sent %llu and %llu, expected %llu each",
          (unsigned long long)s.bytes_sent[ZRT_REDUCE_SCATTER],
          (unsigned long long)s.bytes_sent[ZRT_ALL_GATHER],
          (unsigned long long)block);
  }
  // Rank 0 holds 1, every other rank 2^-9: adding in bf16 step by step
  // never leaves 1 (each addend is below half the spacing 2^-7), the f32
  // sum 1 + (N-1) 2^-9 rounds to 1 + 2^-7 from N = 4 on.
  uint16_t x = zero::runtime::floatToBF16(rank == 0 ? 1.0f : std::ldexp(1.0f, -9)), y = 0;
  coll::allReduceSum<uint16_t>(&x, &y, 1);
  float want = worldSize >= 4 ? 1.0f + std::ldexp(1.0f, -7) : 1.0f;
  CHECK(zero::runtime::bf16ToFloat(y) == want, "bf16 sum %g, expected %g", zero::runtime::bf16ToFloat(y), want);
  // Started forms complete to the same bits.
  std::vector<uint16_t> mine = bf16Data(rank, 7), out(7), gathered(7 * worldSize);
  zrt_wait(coll::allReduceSumStart<uint16_t>(mine.data(), out.data(), 7));
  std::vector<uint16_t> blocking(7);
  coll::allReduceSum<uint16_t>(mine.data(), blocking.data(), 7);
  CHECK(firstDifference(out.data(), blocking.data(), 7) < 0,
        "started bf16 all-reduce differs");
  zrt_wait(coll::allGatherStart<uint16_t>(mine.data(), gathered.data(), 7));
  for (int r = 0; r < worldSize; ++r)
    CHECK(firstDifference(gathered.data() + r * 7, bf16Data(r, 7).data(), 7) <
              0,
          "started bf16 all-gather block %d differs", r);
}

/// The communication arena (zrt_comm_reserve): a started reduce-scatter
/// takes its scratch (N blocks of its count, one segment) from the arena
/// and allocates nothing; a larger reservation adds a buffer beside the
/// first; the comm bytes change only at the reservations and the release;
/// results are those without the arena. A reduction needing more than the
/// arena allocates its scratch as before.
void checkArena() {
  const int N = worldSize;
  const int64_t count = 1001;
  std::vector<float> in(count * N), out(count), plain(count);
  for (int64_t i = 0; i < count * N; ++i)
    in[i] = float((i * 7 + rank * 13) % 101) / 8.0f;
  coll::reduceScatterSum<float>(in.data(), plain.data(), count);
  zrt_reset_peaks();
  zrt_memory_stats before = memoryStats();
  const uint64_t scratch = N > 1 ? uint64_t(N) * count * sizeof(float) : 0;
  zrt_comm_reserve(int64_t(scratch));
  zrt_comm_reserve(int64_t(scratch / 2)); // smaller: keeps the buffer
  zrt_memory_stats reserved = memoryStats();
  CHECK(reserved.current[ZRT_COMM] == before.current[ZRT_COMM] + scratch,
        "reserved %llu bytes, comm holds %llu more",
        (unsigned long long)scratch,
        (unsigned long long)(reserved.current[ZRT_COMM] -
                             before.current[ZRT_COMM]));
  zrt_wait(coll::reduceScatterSumStart<float>(in.data(), out.data(), count));
  zrt_memory_stats after = memoryStats();
  CHECK(after.num_allocs == reserved.num_allocs,
        "a reduce-scatter within the arena allocated %llu blocks",
        (unsigned long long)(after.num_allocs - reserved.num_allocs));
  CHECK(after.peak[ZRT_COMM] == reserved.current[ZRT_COMM],
        "comm peaked at %llu within an arena of %llu",
        (unsigned long long)after.peak[ZRT_COMM],
        (unsigned long long)reserved.current[ZRT_COMM]);
  CHECK(out == plain, "a reduce-scatter in the arena differs");
  // A larger reservation adds a buffer; the first stays until the release.
  zrt_comm_reserve(int64_t(2 * scratch));
  CHECK(memoryStats().current[ZRT_COMM] ==
            before.current[ZRT_COMM] + 3 * scratch,
        "a larger reservation keeps the first buffer beside the second");
  zrt_comm_release();
  CHECK(memoryStats().current[ZRT_COMM] == before.current[ZRT_COMM],
        "the release frees every buffer");
  // Too small an arena: the scratch is allocated beside it.
  if (N > 1) {
    zrt_comm_reserve(int64_t(scratch - 1));
    zrt_memory_stats small = memoryStats();
    zrt_wait(coll::reduceScatterSumStart<float>(in.data(), out.data(), count));
    CHECK(memoryStats().num_allocs == small.num_allocs + 1,
          "scratch that does not fit the arena is allocated");
    CHECK(out == plain, "a reduce-scatter beside the arena differs");
    zrt_comm_release();
  }
  CHECK(memoryStats().current[ZRT_COMM] == before.current[ZRT_COMM],
        "nothing left after the release");
}

int runChecks(int expectedSize) {
  CHECK(worldSize == expectedSize, "world of %d ranks, expected %d", worldSize,
        expectedSize);
  CHECK(rank >= 0 && rank < worldSize, "rank %d", rank);
  CHECK(std::strcmp(zrt_collective_name(ZRT_ALL_REDUCE), "all_reduce") == 0,
        "name");

  // The ranks agree on who is who.
  double me = rank;
  std::vector<double> ranks(worldSize, -1.0);
  coll::allGather<double>(&me, ranks.data(), 1);
  for (int r = 0; r < worldSize; ++r)
    CHECK(ranks[r] == r, "all-gathered rank %d is %g", r, ranks[r]);

  checkType<float>();
  checkType<double>();
  checkBF16();
  checkArena();
  checkSimLink();

  zrt_comm_stats total = commStats();
  if (worldSize == 1)
    for (int k = 0; k < ZRT_NUM_COLLECTIVES; ++k)
      CHECK(total.bytes_sent[k] == 0, "a world of one sent %llu bytes",
            (unsigned long long)total.bytes_sent[k]);
  zrt_reset_comm_stats();
  total = commStats();
  CHECK(total.calls[ZRT_ALL_REDUCE] == 0 && total.seconds[ZRT_ALL_REDUCE] == 0,
        "reset");

  zrt_shutdown();

  // After zrt_shutdown finalized MPI, a collective over more than one rank
  // is a fatal error (not a crash); a world of one still copies.
  zrt_set_fatal_handler(throwingHandler);
  std::string message = "<none>";
  float a = 1.0f, b = 0.0f;
  try {
    coll::allReduceSum<float>(&a, &b, 1);
  } catch (const Failure &f) {
    message = f.message;
  }
  zrt_set_fatal_handler(nullptr);
  if (worldSize > 1)
    CHECK(message.find("finalized by zrt_shutdown") != std::string::npos,
          "after shutdown: %s", message.c_str());
  else
    CHECK(message == "<none>" && b == 1.0f, "after shutdown: %s",
          message.c_str());
  CHECK(zrt_world_size() == worldSize && zrt_world_rank() == rank,
        "the world changed after shutdown");

  if (failures)
    std::fprintf(stderr, "rank %d of %d: %d of %d checks failed\n", rank,
                 worldSize, failures, checks);
  else if (rank == 0)
    std::printf("collectives-test: %d ranks: all %d checks passed\n",
                worldSize, checks);
  return failures ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (zrt_init("cpu", 1) != 0) {
    std::fprintf(stderr, "collectives-test: zrt_init: %s\n", zrt_last_error());
    return 1;
  }
  rank = zrt_world_rank();
  worldSize = zrt_world_size();
  const bool last = rank == worldSize - 1;

  if (mode == "check" && argc == 3)
    return runChecks(std::atoi(argv[2]));

  if (mode == "abort") {
    if (last) {
      std::string message = "collectives-test: rank " + std::to_string(rank) +
                            " gives up";
      zrt_abort(message.c_str());
    }
    float x = 1.0f;
    coll::allReduceSum<float>(&x, &x, 1); // waits for the rank that gave up
    std::fprintf(stderr, "rank %d: the all-reduce returned\n", rank);
    return 0;
  }
  if (mode == "fatal") {
    if (last)
      zrt_gemm_f32(0, 0, -1, 2, 2, nullptr, 2, nullptr, 2, 0.0f, nullptr, 2);
    float x = 1.0f;
    coll::allReduceSum<float>(&x, &x, 1);
    std::fprintf(stderr, "rank %d: the all-reduce returned\n", rank);
    return 0;
  }
  if (mode == "mpi-error") {
    // Rank 0 expects 4 elements per rank, the others send 8.
    const int64_t count = rank == 0 ? 4 : 8;
    std::vector<float> in(count, 1.0f), out(count * worldSize);
    coll::allGather<float>(in.data(), out.data(), count);
    coll::allGather<float>(in.data(), out.data(), count);
    std::fprintf(stderr, "rank %d: the all-gathers returned\n", rank);
    zrt_shutdown();
    return 0;
  }
  if (mode == "mpi-error-started") {
    // As mpi-error, started: the error reaches the fatal handler from
    // zrt_wait.
    const int64_t count = rank == 0 ? 4 : 8;
    std::vector<float> in(count, 1.0f), out(count * worldSize);
    int64_t request = coll::allGatherStart<float>(in.data(), out.data(), count);
    zrt_wait(request);
    std::fprintf(stderr, "rank %d: the wait returned\n", rank);
    zrt_shutdown();
    return 0;
  }
  std::fprintf(stderr, "usage: collectives-test check N | abort | fatal | "
                       "mpi-error | mpi-error-started\n");
  return 2;
}
