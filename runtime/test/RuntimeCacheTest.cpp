//===- RuntimeCacheTest.cpp - The block cache -----------------------------===//
//
// Freed blocks are kept by size class and handed out again (runtime.h,
// "Block cache"). These tests pin the reuse (the same pointer comes back),
// that the accounting of live blocks does not change with it, the cache's
// own counters, zero filling of reused zrt_alloc blocks, release, alignment
// and the live-table checks on cached blocks. Every test starts with an
// empty cache (the fixture calls zrt_release_cached).
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

using namespace zero::runtime::test;

namespace {

using RuntimeCache = RuntimeFixture;

bool allBytesAre(const void *p, size_t bytes, unsigned char value) {
  const auto *b = static_cast<const unsigned char *>(p);
  for (size_t i = 0; i < bytes; ++i)
    if (b[i] != value)
      return false;
  return true;
}

const char *const kNotLive = "is not a live zero-runtime allocation";

// The capacity of each request is its size class: 64-byte steps below
// 128 KiB (0 bytes take 64), 4 KiB steps from there on. reserved_bytes shows
// it while the block is live, cached_bytes once it is freed.
TEST_F(RuntimeCache, SizeClasses) {
  const struct {
    size_t bytes, capacity;
  } cases[] = {{0, 64},
               {1, 64},
               {64, 64},
               {65, 128},
               {1000, 1024},
               {131071, 131072},
               {131072, 131072},
               {131073, 135168},
               {200000, 200704},
               {(size_t(1) << 20) + 1, (size_t(1) << 20) + 4096}};
  for (const auto &c : cases) {
    void *p = zrt_alloc(c.bytes, ZRT_ACTIVATIONS);
    ASSERT_NE(p, nullptr) << c.bytes;
    zrt_memory_stats s = memoryStats();
    EXPECT_EQ(s.current_total, c.bytes);
    EXPECT_EQ(s.reserved_bytes, c.capacity) << c.bytes;
    EXPECT_EQ(s.cached_bytes, 0u) << c.bytes;
    zrt_free(p);
    s = memoryStats();
    EXPECT_EQ(s.current_total, 0u);
    EXPECT_EQ(s.reserved_bytes, c.capacity) << c.bytes;
    EXPECT_EQ(s.cached_bytes, c.capacity) << c.bytes;
    zrt_release_cached();
    s = memoryStats();
    EXPECT_EQ(s.reserved_bytes, 0u);
    EXPECT_EQ(s.cached_bytes, 0u);
  }
}

// A freed block comes back to the next request of its size class, whichever
// entry point freed it and whichever allocates next.
TEST_F(RuntimeCache, SameClassReturnsSamePointer) {
  void *p = zrt_alloc(1000, ZRT_PARAMS);
  ASSERT_NE(p, nullptr);
  zrt_free(p);
  void *q = zrt_alloc(1000, ZRT_PARAMS);
  EXPECT_EQ(q, p);
  zrt_free(q);
  void *r = _mlir_memref_to_llvm_alloc(990); // class 1024 as well
  EXPECT_EQ(r, p);
  _mlir_memref_to_llvm_free(r);
  // Another class does not take it: p stays cached.
  void *t = _mlir_memref_to_llvm_alloc(2000);
  EXPECT_NE(t, p);
  EXPECT_EQ(memoryStats().cached_bytes, 1024u);
  _mlir_memref_to_llvm_free(t);

  // Large blocks: (1 MiB + 1) and (1 MiB + 4000) share the class 1 MiB + 4 KiB.
  void *big = _mlir_memref_to_llvm_aligned_alloc(64, (size_t(1) << 20) + 1);
  ASSERT_NE(big, nullptr);
  _mlir_memref_to_llvm_free(big);
  void *big2 = zrt_alloc((size_t(1) << 20) + 4000, ZRT_GRADS);
  EXPECT_EQ(big2, big);
  zrt_free(big2);

  // Two cached blocks of a class serve the next two requests.
  void *x = zrt_alloc(300, ZRT_ACTIVATIONS);
  void *y = zrt_alloc(300, ZRT_ACTIVATIONS);
  ASSERT_NE(x, y);
  zrt_free(x);
  zrt_free(y);
  void *u = _mlir_memref_to_llvm_alloc(300);
  void *v = _mlir_memref_to_llvm_alloc(300);
  EXPECT_EQ((std::set<void *>{u, v}), (std::set<void *>{x, y}));
  _mlir_memref_to_llvm_free(u);
  _mlir_memref_to_llvm_free(v);
}

// One step's allocation sequence. Returns the counters of live blocks after
// every call.
std::vector<std::vector<uint64_t>> runStepSequence() {
  std::vector<std::vector<uint64_t>> snapshots;
  auto snap = [&] {
    zrt_memory_stats s = memoryStats();
    std::vector<uint64_t> v(s.current, s.current + ZRT_NUM_CATEGORIES);
    v.insert(v.end(), s.peak, s.peak + ZRT_NUM_CATEGORIES);
    v.push_back(s.current_total);
    v.push_back(s.peak_total);
    snapshots.push_back(v);
  };
  void *p = zrt_alloc(1000, ZRT_PARAMS);
  snap();
  void *a = _mlir_memref_to_llvm_alloc(4000);
  snap();
  void *b = _mlir_memref_to_llvm_aligned_alloc(64, 256);
  snap();
  _mlir_memref_to_llvm_free(a);
  snap();
  void *c = _mlir_memref_to_llvm_alloc(3000);
  snap();
  void *big = _mlir_memref_to_llvm_alloc(300000);
  snap();
  zrt_free(b);
  snap();
  _mlir_memref_to_llvm_free(c);
  snap();
  void *d = zrt_alloc(3990, ZRT_GRADS); // a's class (4032)
  snap();
  _mlir_memref_to_llvm_free(big);
  snap();
  zrt_free(d);
  snap();
  zrt_free(p);
  snap();
  return snapshots;
}

// Caching changes no count of live bytes: the same sequence gives exactly
// the same current and peak figures with a cold and with a warm cache, and
// the warm run takes every block from the cache.
TEST_F(RuntimeCache, AccountingUnchangedByCaching) {
  std::vector<std::vector<uint64_t>> cold = runStepSequence();
  zrt_memory_stats s = memoryStats();
  EXPECT_EQ(s.current[ZRT_PARAMS], 0u);
  EXPECT_EQ(s.current_total, 0u);
  EXPECT_EQ(s.peak[ZRT_PARAMS], 1000u);
  EXPECT_EQ(s.peak[ZRT_GRADS], 3990u);
  EXPECT_EQ(s.peak[ZRT_ACTIVATIONS], 303256u); // 256 + 3000 + 300000
  EXPECT_EQ(s.peak_total, 304990u);            // p + big + d
  // Blocks: 1024 (p), 4032 (a, then d), 256 (b), 3008 (c), 303104 (big).
  const uint64_t held = 1024 + 4032 + 256 + 3008 + 303104;
  EXPECT_EQ(s.cached_bytes, held);
  EXPECT_EQ(s.reserved_bytes, held);
  EXPECT_EQ(s.reserved_peak, held);

  zrt_reset_peaks();
  std::vector<std::vector<uint64_t>> warm = runStepSequence();
  EXPECT_EQ(warm, cold);
  s = memoryStats();
  EXPECT_EQ(s.num_allocs - start.num_allocs, 12u);
  EXPECT_EQ(s.num_frees - start.num_frees, 12u);
  // Nothing new was taken from the system.
  EXPECT_EQ(s.cached_bytes, held);
  EXPECT_EQ(s.reserved_bytes, held);
  EXPECT_EQ(s.reserved_peak, held);
}

// cached_bytes, reserved_bytes and reserved_peak step by step.
TEST_F(RuntimeCache, CachedBytesFigures) {
  void *p = zrt_alloc(1000, ZRT_PARAMS);              // 1024
  void *q = _mlir_memref_to_llvm_alloc(200000);       // 200704
  zrt_memory_stats s = memoryStats();
  EXPECT_EQ(s.current_total, 201000u);
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_EQ(s.reserved_bytes, 201728u);
  EXPECT_EQ(s.reserved_peak, 201728u);

  zrt_free(p);
  s = memoryStats();
  EXPECT_EQ(s.current_total, 200000u);
  EXPECT_EQ(s.cached_bytes, 1024u);
  EXPECT_EQ(s.reserved_bytes, 201728u);

  _mlir_memref_to_llvm_free(q);
  s = memoryStats();
  EXPECT_EQ(s.current_total, 0u);
  EXPECT_EQ(s.cached_bytes, 201728u);
  EXPECT_EQ(s.reserved_bytes, 201728u);

  void *r = zrt_alloc(990, ZRT_ACTIVATIONS); // p's block
  EXPECT_EQ(r, p);
  s = memoryStats();
  EXPECT_EQ(s.current_total, 990u);
  EXPECT_EQ(s.cached_bytes, 200704u);
  EXPECT_EQ(s.reserved_bytes, 201728u);
  EXPECT_EQ(s.reserved_peak, 201728u);

  void *t = zrt_alloc(100, ZRT_ACTIVATIONS); // a fresh 128-byte block
  s = memoryStats();
  EXPECT_EQ(s.cached_bytes, 200704u);
  EXPECT_EQ(s.reserved_bytes, 201856u);
  EXPECT_EQ(s.reserved_peak, 201856u);

  zrt_free(r);
  zrt_free(t);
  s = memoryStats();
  EXPECT_EQ(s.cached_bytes, 201856u);
  EXPECT_EQ(s.reserved_bytes, 201856u);

  // zrt_reset_peaks resets reserved_peak too; releasing lowers
  // reserved_bytes but not the peak.
  zrt_release_cached();
  s = memoryStats();
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_EQ(s.reserved_bytes, 0u);
  EXPECT_EQ(s.reserved_peak, 201856u);
  EXPECT_EQ(s.peak_total, 201000u);
  zrt_reset_peaks();
  s = memoryStats();
  EXPECT_EQ(s.reserved_peak, 0u);
  EXPECT_EQ(s.peak_total, 0u);
}

// A reused block is zero-filled for zrt_alloc, though the hooks dirtied it.
TEST_F(RuntimeCache, ReusedBlockZeroFilledForZrtAlloc) {
  void *h = _mlir_memref_to_llvm_alloc(5050); // class 5056
  ASSERT_NE(h, nullptr);
  std::memset(h, 0xAB, 5050);
  _mlir_memref_to_llvm_free(h);
  void *p = zrt_alloc(5000, ZRT_PARAMS); // class 5056
  EXPECT_EQ(p, h);
  EXPECT_TRUE(allBytesAre(p, 5000, 0));
  zrt_free(p);

  const size_t big = (size_t(1) << 20) + 10;
  void *g = _mlir_memref_to_llvm_aligned_alloc(128, big);
  ASSERT_NE(g, nullptr);
  std::memset(g, 0xCD, big);
  _mlir_memref_to_llvm_free(g);
  void *q = zrt_alloc(big, ZRT_GRADS);
  EXPECT_EQ(q, g);
  EXPECT_TRUE(allBytesAre(q, big, 0));
  zrt_free(q);
}

// The hooks do not pay for zeroing: a reused block keeps what it held.
TEST_F(RuntimeCache, HookReuseKeepsContents) {
  void *p = _mlir_memref_to_llvm_alloc(4096);
  ASSERT_NE(p, nullptr);
  std::memset(p, 0xCD, 4096);
  _mlir_memref_to_llvm_free(p);
  void *q = _mlir_memref_to_llvm_aligned_alloc(64, 4096);
  EXPECT_EQ(q, p);
  EXPECT_TRUE(allBytesAre(q, 4096, 0xCD));
  _mlir_memref_to_llvm_free(q);
}

// zrt_release_cached empties the cache and leaves live blocks alone;
// zrt_shutdown releases the cache too.
TEST_F(RuntimeCache, ReleaseCachedEmptiesCache) {
  void *p = zrt_alloc(1000, ZRT_PARAMS);                 // 1024
  void *q = _mlir_memref_to_llvm_alloc(300000);          // 303104
  auto *live = static_cast<unsigned char *>(zrt_alloc(64, ZRT_COMM));
  ASSERT_TRUE(p && q && live);
  zrt_free(p);
  _mlir_memref_to_llvm_free(q);
  zrt_memory_stats s = memoryStats();
  EXPECT_EQ(s.cached_bytes, 1024u + 303104u);
  EXPECT_EQ(s.reserved_bytes, 1024u + 303104u + 64u);

  zrt_release_cached();
  s = memoryStats();
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_EQ(s.reserved_bytes, 64u);
  EXPECT_EQ(s.current[ZRT_COMM], 64u);
  EXPECT_EQ(s.current_total, 64u);
  EXPECT_EQ(s.num_frees - start.num_frees, 2u); // releasing is no free
  std::memset(live, 0x11, 64);                   // still ours
  EXPECT_TRUE(allBytesAre(live, 64, 0x11));
  zrt_release_cached(); // an empty cache: nothing to do
  EXPECT_EQ(memoryStats().reserved_bytes, 64u);

  // The next request of p's class is served fresh.
  void *r = zrt_alloc(1000, ZRT_PARAMS);
  s = memoryStats();
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_EQ(s.reserved_bytes, 1024u + 64u);
  zrt_free(r);
  zrt_free(live);
  EXPECT_EQ(memoryStats().cached_bytes, 1024u + 64u);

  zrt_shutdown();
  s = memoryStats();
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_EQ(s.reserved_bytes, 0u);
}

// A cached block serves a request only if its address has the alignment
// asked for; every reused block has it.
TEST_F(RuntimeCache, AlignmentOfReusedBlocks) {
  // p: of four blocks of class 3008, the one with the smallest natural
  // alignment (the largest power of two dividing its address; allocators
  // may hand out a highly aligned first block). The other three go back to
  // the system, so p is the only cached block of its class.
  auto natural = [](void *q) {
    uintptr_t a = address(q);
    return size_t(a & (~a + 1));
  };
  void *candidates[4];
  for (void *&q : candidates)
    q = zrt_alloc(3000, ZRT_ACTIVATIONS);
  void *p = candidates[0];
  for (void *q : candidates)
    if (natural(q) < natural(p))
      p = q;
  for (void *q : candidates)
    if (q != p)
      zrt_free(q);
  zrt_release_cached();
  zrt_free(p);
  EXPECT_EQ(memoryStats().cached_bytes, 3008u);
  ASSERT_GE(natural(p), 64u);
  ASSERT_LE(natural(p), size_t(1) << 24);
  const size_t stricter = 2 * natural(p);

  // p is not aligned enough: a fresh block, p stays cached.
  void *q = _mlir_memref_to_llvm_aligned_alloc(stricter, 3000);
  ASSERT_NE(q, nullptr);
  EXPECT_NE(q, p);
  EXPECT_EQ(address(q) % stricter, 0u);
  EXPECT_EQ(memoryStats().cached_bytes, 3008u);
  _mlir_memref_to_llvm_free(q);
  EXPECT_EQ(memoryStats().cached_bytes, 2 * 3008u);

  // Of the two cached blocks only q is aligned enough...
  void *r = _mlir_memref_to_llvm_aligned_alloc(stricter, 2990);
  EXPECT_EQ(r, q);
  // ...and p serves a 64-byte alignment.
  void *s = _mlir_memref_to_llvm_aligned_alloc(64, 3000);
  EXPECT_EQ(s, p);
  EXPECT_EQ(memoryStats().cached_bytes, 0u);
  _mlir_memref_to_llvm_free(r);
  _mlir_memref_to_llvm_free(s);

  // Every alignment, cold and reused, and zrt_alloc after aligned requests.
  for (size_t alignment = 1; alignment <= (size_t(1) << 16); alignment *= 2) {
    for (int round = 0; round < 2; ++round) {
      void *x = _mlir_memref_to_llvm_aligned_alloc(alignment, 3000);
      ASSERT_NE(x, nullptr);
      EXPECT_EQ(address(x) % alignment, 0u) << alignment;
      EXPECT_EQ(address(x) % 64, 0u) << alignment;
      _mlir_memref_to_llvm_free(x);
    }
    void *z = zrt_alloc(3000, ZRT_ACTIVATIONS);
    ASSERT_NE(z, nullptr);
    EXPECT_EQ(address(z) % 64, 0u);
    zrt_free(z);
  }
}

// Freeing a cached block (a double free) or a pointer into one is still
// fatal and changes nothing; the block comes back once, not twice.
TEST_F(RuntimeCache, DoubleFreeStillFatal) {
  char *p = static_cast<char *>(zrt_alloc(256, ZRT_GRADS));
  ASSERT_NE(p, nullptr);
  zrt_free(p);
  zrt_memory_stats before = memoryStats();
  EXPECT_CONTAINS(fatalMessageOf([&] { zrt_free(p); }), kNotLive);
  EXPECT_CONTAINS(fatalMessageOf([&] { _mlir_memref_to_llvm_free(p); }),
                  kNotLive);
  EXPECT_CONTAINS(fatalMessageOf([&] { zrt_free(p + 64); }), kNotLive);
  zrt_memory_stats after = memoryStats();
  EXPECT_EQ(after.cached_bytes, before.cached_bytes);
  EXPECT_EQ(after.reserved_bytes, before.reserved_bytes);
  EXPECT_EQ(after.num_frees, before.num_frees);
  EXPECT_EQ(after.current[ZRT_GRADS], 0u);

  void *q = zrt_alloc(256, ZRT_GRADS);
  void *r = zrt_alloc(256, ZRT_GRADS);
  EXPECT_EQ(q, p);
  EXPECT_NE(r, p);
  zrt_free(q);
  zrt_free(r);

  // And after the cache went back to the system.
  zrt_release_cached();
  EXPECT_CONTAINS(fatalMessageOf([&] { zrt_free(r); }), kNotLive);
  EXPECT_EQ(memoryStats().num_frees - start.num_frees, 3u);
}

// Threads allocating and freeing while another releases the cache keep
// every count exact.
TEST_F(RuntimeCache, ConcurrentReleaseCached) {
  constexpr int kThreads = 3, kIterations = 2000;
  std::atomic<bool> done{false};
  std::thread releaser([&] {
    while (!done.load())
      zrt_release_cached();
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kIterations; ++i) {
        size_t bytes = 64 * size_t(1 + (t + i) % 5);
        void *p = i % 2 ? zrt_alloc(bytes, ZRT_ACTIVATIONS)
                        : _mlir_memref_to_llvm_alloc(bytes);
        void *q = zrt_alloc(bytes, ZRT_PARAMS);
        if (!allBytesAre(q, bytes, 0))
          ADD_FAILURE() << "a reused zrt_alloc block is not zero";
        std::memset(p, 0xFF, bytes);
        std::memset(q, 0xFF, bytes);
        zrt_free(p);
        zrt_free(q);
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  done.store(true);
  releaser.join();
  zrt_memory_stats s = memoryStats();
  EXPECT_EQ(s.current_total, 0u);
  EXPECT_EQ(s.num_allocs - start.num_allocs, 2u * kThreads * kIterations);
  EXPECT_EQ(s.num_frees - start.num_frees, 2u * kThreads * kIterations);
  EXPECT_EQ(s.reserved_bytes, s.cached_bytes);
  zrt_release_cached();
  EXPECT_EQ(memoryStats().reserved_bytes, 0u);
}

} // namespace
