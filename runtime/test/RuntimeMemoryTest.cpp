//===- RuntimeMemoryTest.cpp - Allocation, accounting and peaks -----------===//

#include "RuntimeTestSupport.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

using namespace zero::runtime::test;

namespace {

using RuntimeMemory = RuntimeFixture;

bool allZero(const void *p, size_t bytes) {
  const auto *bytesPtr = static_cast<const unsigned char *>(p);
  for (size_t i = 0; i < bytes; ++i)
    if (bytesPtr[i] != 0)
      return false;
  return true;
}

// A training step's allocations: parameters, gradients and optimizer states
// from zero-run, temporaries from generated code through the _mlir_ hooks.
// Every counter is checked in exact bytes after each phase.
TEST_F(RuntimeMemory, RealisticSequence) {
  void *w = zrt_alloc(1000, ZRT_PARAMS);
  void *bias = zrt_alloc(24, ZRT_PARAMS);
  void *gw = zrt_alloc(1024, ZRT_GRADS);
  void *m = zrt_alloc(2048, ZRT_OPTIMIZER_STATES);
  void *v = zrt_alloc(2048, ZRT_OPTIMIZER_STATES);
  ASSERT_TRUE(w && bias && gw && m && v) << zrt_last_error();

  zrt_memory_stats s = memoryStats();
  EXPECT_EQ(s.current[ZRT_PARAMS], 1024u);
  EXPECT_EQ(s.current[ZRT_GRADS], 1024u);
  EXPECT_EQ(s.current[ZRT_OPTIMIZER_STATES], 4096u);
  EXPECT_EQ(s.current[ZRT_ACTIVATIONS], 0u);
  EXPECT_EQ(s.current[ZRT_COMM], 0u);
  EXPECT_EQ(s.current_total, 6144u);
  EXPECT_EQ(s.peak_total, 6144u);

  // Forward/backward temporaries (default generated category: activations).
  void *t1 = _mlir_memref_to_llvm_alloc(4000);
  void *t2 = _mlir_memref_to_llvm_aligned_alloc(128, 256);
  void *t3 = _mlir_memref_to_llvm_aligned_alloc(64, 100); // size not a multiple
  s = memoryStats();
  EXPECT_EQ(s.current[ZRT_ACTIVATIONS], 4356u);
  EXPECT_EQ(s.current_total, 10500u);
  EXPECT_EQ(s.peak[ZRT_ACTIVATIONS], 4356u);
  EXPECT_EQ(s.peak_total, 10500u);

  // The two free paths are interchangeable.
  _mlir_memref_to_llvm_free(t1);
  zrt_free(t2);
  _mlir_memref_to_llvm_free(t3);
  s = memoryStats();
  EXPECT_EQ(s.current[ZRT_ACTIVATIONS], 0u);
  EXPECT_EQ(s.peak[ZRT_ACTIVATIONS], 4356u); // peaks stay
  EXPECT_EQ(s.current_total, 6144u);
  EXPECT_EQ(s.peak_total, 10500u);

  // Generated code allocating gradients, then a communication buffer.
  zrt_set_generated_category(ZRT_GRADS);
  void *gb = _mlir_memref_to_llvm_alloc(512);
  zrt_set_generated_category(ZRT_ACTIVATIONS);
  void *comm = zrt_alloc(77, ZRT_COMM);
  s = memoryStats();
  EXPECT_EQ(s.current[ZRT_GRADS], 1536u);
  EXPECT_EQ(s.peak[ZRT_GRADS], 1536u);
  EXPECT_EQ(s.current[ZRT_COMM], 77u);
  EXPECT_EQ(s.current_total, 6733u);
  EXPECT_EQ(s.peak_total, 10500u); // below the earlier peak

  // The blocks were counted to the category they were allocated with, even
  // though the generated category changed since.
  _mlir_memref_to_llvm_free(gb);
  EXPECT_EQ(memoryStats().current[ZRT_GRADS], 1024u);

  for (void *p : {w, bias, gw, m, v, comm})
    zrt_free(p);
  s = memoryStats();
  for (int c = 0; c < ZRT_NUM_CATEGORIES; ++c)
    EXPECT_EQ(s.current[c], 0u) << zrt_category_name(zrt_category(c));
  EXPECT_EQ(s.current_total, 0u);
  EXPECT_EQ(s.peak[ZRT_PARAMS], 1024u);
  EXPECT_EQ(s.peak[ZRT_GRADS], 1536u);
  EXPECT_EQ(s.peak[ZRT_OPTIMIZER_STATES], 4096u);
  EXPECT_EQ(s.peak[ZRT_ACTIVATIONS], 4356u);
  EXPECT_EQ(s.peak[ZRT_COMM], 77u);
  EXPECT_EQ(s.peak_total, 10500u);
  EXPECT_EQ(s.num_allocs - start.num_allocs, 10u);
  EXPECT_EQ(s.num_frees - start.num_frees, 10u);
}

// reset_peaks sets every peak to the current count.
TEST_F(RuntimeMemory, ResetPeaks) {
  void *a = zrt_alloc(500, ZRT_PARAMS);
  void *b = zrt_alloc(300, ZRT_ACTIVATIONS);
  zrt_free(b);
  zrt_memory_stats s = memoryStats();
  EXPECT_EQ(s.peak[ZRT_ACTIVATIONS], 300u);
  EXPECT_EQ(s.peak_total, 800u);
  zrt_reset_peaks();
  s = memoryStats();
  EXPECT_EQ(s.peak[ZRT_PARAMS], 500u);
  EXPECT_EQ(s.peak[ZRT_ACTIVATIONS], 0u);
  EXPECT_EQ(s.peak_total, 500u);
  zrt_free(a);
  s = memoryStats();
  EXPECT_EQ(s.peak[ZRT_PARAMS], 500u);
  EXPECT_EQ(s.peak_total, 500u);
}

// zrt_alloc returns zeroed memory, also when the block is a cached one that
// any allocation path dirtied and freed. (The _mlir_ hooks do not zero:
// RuntimeCache.HookReuseKeepsContents.)
TEST_F(RuntimeMemory, ZeroFilled) {
  for (size_t bytes : {size_t(1), size_t(63), size_t(4096), size_t(1) << 20}) {
    for (int round = 0; round < 3; ++round) {
      void *p = zrt_alloc(bytes, ZRT_ACTIVATIONS);
      void *q = zrt_alloc(bytes, ZRT_PARAMS);
      void *r = zrt_alloc(bytes, ZRT_GRADS);
      ASSERT_TRUE(p && q && r);
      EXPECT_TRUE(allZero(p, bytes)) << bytes;
      EXPECT_TRUE(allZero(q, bytes)) << bytes;
      EXPECT_TRUE(allZero(r, bytes)) << bytes;
      std::memset(p, 0xAB, bytes);
      std::memset(q, 0xCD, bytes);
      std::memset(r, 0xEF, bytes);
      zrt_free(p);
      zrt_free(q);
      zrt_free(r);
      // Dirty cached blocks of the class through the hooks too.
      void *h = _mlir_memref_to_llvm_alloc(bytes);
      void *g = _mlir_memref_to_llvm_aligned_alloc(256, bytes);
      ASSERT_TRUE(h && g);
      std::memset(h, 0x5A, bytes);
      std::memset(g, 0xA5, bytes);
      _mlir_memref_to_llvm_free(h);
      _mlir_memref_to_llvm_free(g);
    }
  }
}

// zrt_alloc and _mlir_memref_to_llvm_alloc align to 64; the aligned hook to
// any requested power of two.
TEST_F(RuntimeMemory, Alignment) {
  std::vector<void *> blocks;
  for (size_t bytes = 0; bytes < 300; bytes += 7) {
    void *p = zrt_alloc(bytes, ZRT_PARAMS);
    void *q = _mlir_memref_to_llvm_alloc(bytes);
    EXPECT_EQ(address(p) % 64, 0u) << bytes;
    EXPECT_EQ(address(q) % 64, 0u) << bytes;
    blocks.push_back(p);
    blocks.push_back(q);
  }
  for (size_t alignment = 1; alignment <= (size_t(1) << 16); alignment *= 2) {
    for (size_t bytes : {size_t(0), size_t(1), size_t(100), alignment}) {
      void *p = _mlir_memref_to_llvm_aligned_alloc(alignment, bytes);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(address(p) % alignment, 0u) << alignment << " " << bytes;
      blocks.push_back(p);
    }
  }
  for (void *p : blocks)
    zrt_free(p);
}

// Zero-byte blocks are unique, counted as allocations of 0 bytes, and freed
// like any other.
TEST_F(RuntimeMemory, ZeroBytes) {
  void *p = zrt_alloc(0, ZRT_GRADS);
  void *q = zrt_alloc(0, ZRT_GRADS);
  void *r = _mlir_memref_to_llvm_alloc(0);
  ASSERT_TRUE(p && q && r);
  EXPECT_NE(p, q);
  zrt_memory_stats s = memoryStats();
  EXPECT_EQ(s.current_total, 0u);
  EXPECT_EQ(s.num_allocs - start.num_allocs, 3u);
  zrt_free(p);
  zrt_free(q);
  zrt_free(r);
  EXPECT_EQ(memoryStats().num_frees - start.num_frees, 3u);
}

// zrt_free(NULL) and _mlir_memref_to_llvm_free(NULL) do nothing.
TEST_F(RuntimeMemory, FreeNull) {
  zrt_free(nullptr);
  _mlir_memref_to_llvm_free(nullptr);
  EXPECT_EQ(memoryStats().num_frees, start.num_frees);
}

// Freeing what the runtime does not own reaches the fatal handler and
// changes nothing: a stack address, a malloc'd block, an interior pointer,
// a double free.
TEST_F(RuntimeMemory, ForeignPointerFree) {
  int local = 0;
  void *fromMalloc = std::malloc(64);
  char *owned = static_cast<char *>(zrt_alloc(128, ZRT_PARAMS));
  ASSERT_NE(owned, nullptr);
  const char *expected = "is not a live zero-runtime allocation";

  EXPECT_CONTAINS(fatalMessageOf([&] { zrt_free(&local); }), expected);
  EXPECT_CONTAINS(fatalMessageOf([&] { zrt_free(fromMalloc); }), expected);
  EXPECT_CONTAINS(fatalMessageOf([&] { zrt_free(owned + 64); }), expected);
  EXPECT_CONTAINS(
      fatalMessageOf([&] { _mlir_memref_to_llvm_free(fromMalloc); }),
      "_mlir_memref_to_llvm_free: ");
  zrt_memory_stats s = memoryStats();
  EXPECT_EQ(s.current[ZRT_PARAMS], 128u);
  EXPECT_EQ(s.num_frees, start.num_frees);

  zrt_free(owned);
  EXPECT_CONTAINS(fatalMessageOf([&] { zrt_free(owned); }), expected);
  s = memoryStats();
  EXPECT_EQ(s.current_total, 0u);
  EXPECT_EQ(s.num_frees - start.num_frees, 1u);
  std::free(fromMalloc);
}

// A non-power-of-two alignment from generated code is fatal and allocates
// nothing.
TEST_F(RuntimeMemory, AlignmentNotPowerOfTwo) {
  EXPECT_EQ(fatalMessageOf([] { _mlir_memref_to_llvm_aligned_alloc(24, 48); }),
            "_mlir_memref_to_llvm_aligned_alloc: alignment 24 is not a "
            "power of two");
  EXPECT_EQ(fatalMessageOf([] { _mlir_memref_to_llvm_aligned_alloc(0, 48); }),
            "_mlir_memref_to_llvm_aligned_alloc: alignment 0 is not a "
            "power of two");
  EXPECT_EQ(memoryStats().num_allocs, start.num_allocs);
}

// If a handler returns, the failing hook returns NULL.
TEST_F(RuntimeMemory, ReturningHandlerGetsNull) {
  zrt_set_fatal_handler([](const char *) {});
  EXPECT_EQ(_mlir_memref_to_llvm_aligned_alloc(3, 8), nullptr);
  int local = 0;
  zrt_free(&local); // reported, then ignored
  zrt_set_fatal_handler(throwingFatalHandler);
}

// zrt_alloc has a return channel: NULL and zrt_last_error, no fatal error.
TEST_F(RuntimeMemory, AllocFailuresReturnNull) {
  EXPECT_EQ(zrt_alloc(16, static_cast<zrt_category>(7)), nullptr);
  EXPECT_STREQ(zrt_last_error(), "zrt_alloc: invalid category 7");
  EXPECT_EQ(zrt_alloc(SIZE_MAX - 8, ZRT_PARAMS), nullptr);
  EXPECT_CONTAINS(zrt_last_error(), "zrt_alloc: cannot allocate");
  EXPECT_CONTAINS(zrt_last_error(), "bytes for params: out of memory");
  // What the runtime holds is part of the line (the CPU backend has no
  // device figures to add).
  void *held = zrt_alloc(1 << 20, ZRT_GRADS);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(zrt_alloc(size_t(1) << 62, ZRT_PARAMS), nullptr);
  EXPECT_CONTAINS(zrt_last_error(),
                  "out of memory (0.001 GiB live in the runtime's device "
                  "blocks, 0.001 GiB held in all)");
  zrt_free(held);
  zrt_memory_stats s = memoryStats();
  EXPECT_EQ(s.num_allocs, start.num_allocs + 1); // `held` alone
  EXPECT_EQ(s.current_total, 0u);
}

// Generated code cannot take NULL: exhausted memory is fatal.
TEST_F(RuntimeMemory, HookOutOfMemoryIsFatal) {
  EXPECT_CONTAINS(
      fatalMessageOf([] { _mlir_memref_to_llvm_alloc(size_t(1) << 62); }),
      "_mlir_memref_to_llvm_alloc: cannot allocate 4611686018427387904 "
      "bytes for activations: out of memory");
}

// An invalid generated category is fatal and keeps the previous one.
TEST_F(RuntimeMemory, InvalidGeneratedCategory) {
  zrt_set_generated_category(ZRT_COMM);
  EXPECT_EQ(fatalMessageOf([] { zrt_c99_set_generated_category(-3); }),
            "zrt_set_generated_category: invalid category -3");
  EXPECT_EQ(fatalMessageOf([] { zrt_c99_set_generated_category(6); }),
            "zrt_set_generated_category: invalid category 6");
  void *p = _mlir_memref_to_llvm_alloc(40);
  EXPECT_EQ(memoryStats().current[ZRT_COMM], 40u);
  zrt_free(p);
}

// Allocation from several threads at once keeps exact counts.
TEST_F(RuntimeMemory, ConcurrentThreads) {
  constexpr int kThreads = 4, kIterations = 3000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      std::vector<void *> held;
      for (int i = 0; i < kIterations; ++i) {
        auto category = static_cast<zrt_category>((t + i) % ZRT_NUM_CATEGORIES);
        held.push_back(i % 3 == 0 ? _mlir_memref_to_llvm_alloc(8)
                                  : zrt_alloc(8, category));
        if (held.size() == 4) {
          for (void *p : held)
            zrt_free(p);
          held.clear();
        }
      }
      for (void *p : held)
        zrt_free(p);
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  zrt_memory_stats s = memoryStats();
  EXPECT_EQ(s.current_total, 0u);
  EXPECT_EQ(s.num_allocs - start.num_allocs, uint64_t(kThreads) * kIterations);
  EXPECT_EQ(s.num_frees - start.num_frees, uint64_t(kThreads) * kIterations);
  // At most 4 blocks of 8 bytes per thread are live at any time.
  EXPECT_LE(s.peak_total, uint64_t(kThreads) * 4 * 8);
  EXPECT_GE(s.peak_total, 4u * 8);
}

// Host memory next to the device (ZRT_SPACE_HOST, zero-offload's
// optimizer=host) is counted apart from the device's, by category, from
// drivers (zrt_alloc_host) and from generated code
// (zrt_set_generated_space).
TEST_F(RuntimeMemory, HostSpaceCountedApart) {
  void *w = zrt_alloc(1000, ZRT_PARAMS);
  void *m = zrt_alloc_host(2048, ZRT_OPTIMIZER_STATES);
  ASSERT_TRUE(w && m) << zrt_last_error();
  EXPECT_TRUE(allZero(m, 2048));
  zrt_set_generated_category(ZRT_GRADS);
  zrt_set_generated_space(ZRT_SPACE_HOST);
  void *g = _mlir_memref_to_llvm_aligned_alloc(64, 300);
  zrt_set_generated_space(ZRT_SPACE_DEVICE);
  zrt_set_generated_category(ZRT_ACTIVATIONS);
  void *a = _mlir_memref_to_llvm_alloc(100);
  zrt_memory_stats s = memoryStats();
  EXPECT_EQ(s.current[ZRT_PARAMS], 1000u);
  EXPECT_EQ(s.current[ZRT_OPTIMIZER_STATES], 0u);
  EXPECT_EQ(s.current[ZRT_GRADS], 0u);
  EXPECT_EQ(s.current[ZRT_ACTIVATIONS], 100u);
  EXPECT_EQ(s.current_total, 1100u);
  EXPECT_EQ(s.host_current[ZRT_OPTIMIZER_STATES], 2048u);
  EXPECT_EQ(s.host_current[ZRT_GRADS], 300u);
  EXPECT_EQ(s.host_current[ZRT_PARAMS], 0u);
  EXPECT_EQ(s.host_current_total, 2348u);
  EXPECT_EQ(s.host_peak_total, 2348u);
  zrt_free(g);
  zrt_free(a);
  s = memoryStats();
  EXPECT_EQ(s.host_current_total, 2048u);
  EXPECT_EQ(s.host_peak[ZRT_GRADS], 300u);
  EXPECT_EQ(s.current_total, 1000u);
  zrt_reset_peaks();
  s = memoryStats();
  EXPECT_EQ(s.host_peak[ZRT_GRADS], 0u);
  EXPECT_EQ(s.host_peak_total, 2048u);
  zrt_free(m);
  zrt_free(w);
  s = memoryStats();
  EXPECT_EQ(s.host_current_total, 0u);
  EXPECT_EQ(s.current_total, 0u);
}

// An invalid generated space is fatal and keeps the previous one.
TEST_F(RuntimeMemory, InvalidGeneratedSpace) {
  EXPECT_EQ(fatalMessageOf([] {
              zrt_set_generated_space(static_cast<zrt_space>(2));
            }),
            "zrt_set_generated_space: invalid memory space 2");
  void *p = _mlir_memref_to_llvm_alloc(40);
  EXPECT_EQ(memoryStats().current[ZRT_ACTIVATIONS], 40u);
  EXPECT_EQ(memoryStats().host_current_total, 0u);
  zrt_free(p);
}

// zrt_copy_start moves bytes between the spaces; zrt_wait completes it.
TEST_F(RuntimeMemory, CopyStartBetweenSpaces) {
  auto *d = static_cast<float *>(zrt_alloc(64 * sizeof(float), ZRT_GRADS));
  auto *h = static_cast<float *>(zrt_alloc_host(64 * sizeof(float), ZRT_GRADS));
  ASSERT_TRUE(d && h) << zrt_last_error();
  for (int i = 0; i < 64; ++i)
    d[i] = 0.5f * static_cast<float>(i);
  int64_t out = zrt_copy_start(d, h, 64 * sizeof(float));
  zrt_wait(out);
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(h[i], 0.5f * static_cast<float>(i));
  for (int i = 0; i < 64; ++i)
    h[i] = -static_cast<float>(i);
  int64_t back = zrt_copy_start(h, d, 32 * sizeof(float));
  zrt_wait(back);
  EXPECT_EQ(d[31], -31.0f);
  EXPECT_EQ(d[32], 16.0f);
  zrt_wait(zrt_copy_start(nullptr, nullptr, 0)); // nothing to copy
  EXPECT_EQ(fatalMessageOf([&] { zrt_copy_start(d, h, -4); }),
            "zrt_copy_start: bytes = -4 is negative");
  EXPECT_EQ(fatalMessageOf([&] { zrt_copy_start(nullptr, h, 4); }),
            "zrt_copy_start: src is NULL");
  zrt_free(h);
  zrt_free(d);
}

// Stats getters accept NULL.
TEST_F(RuntimeMemory, NullStatsPointer) {
  zrt_get_memory_stats(nullptr);
  zrt_get_gemm_stats(nullptr);
}

} // namespace
