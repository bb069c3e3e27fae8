//===- SegmentArenaTest.cpp - The CUDA backend's block arena -------------===//
//
// SegmentArena with a pretend driver: addresses from a counter (nothing is
// read or written), a capacity that makes it run out, and a record of what
// was asked for and returned.
//
//===----------------------------------------------------------------------===//

#include "../lib/backends/cuda/SegmentArena.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

using zero::runtime::SegmentArena;

namespace {

constexpr std::size_t kPage = 2u << 20;
constexpr std::size_t kMiB = 1u << 20;

/// A driver with `capacity` bytes whose segments lie back to back in
/// address order (so that neighbouring segments touch, which the arena
/// must not merge across).
struct FakeDriver {
  std::size_t capacity;
  std::uintptr_t next = 1u << 30;
  std::map<std::uintptr_t, std::size_t> live;
  std::vector<std::size_t> asked;

  std::size_t used() const {
    std::size_t n = 0;
    for (const auto &[base, bytes] : live)
      n += bytes;
    return n;
  }

  SegmentArena arena(std::size_t minimum = kPage,
                     std::size_t maximum = 64 * kMiB) {
    return SegmentArena(
        minimum, maximum, kPage,
        [this](std::size_t bytes, std::uintptr_t &base) {
          asked.push_back(bytes);
          if (used() + bytes > capacity)
            return false;
          base = next;
          next += bytes;
          live.emplace(base, bytes);
          return true;
        },
        [this](std::uintptr_t base) { live.erase(base); });
  }
};

TEST(SegmentArena, CarvesAlignedDisjointBlocksFromOneSegment) {
  FakeDriver driver{1u << 30};
  SegmentArena arena = driver.arena();
  std::vector<std::pair<std::uintptr_t, std::size_t>> blocks;
  for (std::size_t bytes : {1, 255, 256, 257, 1000, 4096, 100000})
    blocks.emplace_back(arena.allocate(bytes), bytes);
  EXPECT_EQ(arena.segmentCount(), 1u);
  EXPECT_EQ(arena.held(), kPage);
  std::sort(blocks.begin(), blocks.end());
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(blocks[i].first % 256, 0u);
    if (i + 1 < blocks.size()) {
      EXPECT_LE(blocks[i].first + blocks[i].second, blocks[i + 1].first);
    }
  }
}

TEST(SegmentArena, FreedNeighboursMergeAndAreReused) {
  FakeDriver driver{1u << 30};
  SegmentArena arena = driver.arena();
  std::uintptr_t a = arena.allocate(1024), b = arena.allocate(1024),
                 c = arena.allocate(1024);
  EXPECT_EQ(b, a + 1024);
  arena.deallocate(b);
  arena.deallocate(a);
  // a and b merged: a block of both fits where they were, before c.
  EXPECT_EQ(arena.allocate(2048), a);
  arena.deallocate(c);
  EXPECT_EQ(arena.segmentCount(), 1u);
}

TEST(SegmentArena, BestFitTakesTheSmallestRangeThatHolds) {
  FakeDriver driver{1u << 30};
  SegmentArena arena = driver.arena();
  std::uintptr_t big = arena.allocate(8192);
  std::uintptr_t sep1 = arena.allocate(256);
  std::uintptr_t small = arena.allocate(1024);
  std::uintptr_t sep2 = arena.allocate(256);
  arena.deallocate(big);
  arena.deallocate(small);
  EXPECT_EQ(arena.allocate(1000), small);
  EXPECT_EQ(arena.allocate(5000), big);
  (void)sep1;
  (void)sep2;
}

TEST(SegmentArena, SegmentsGrowGeometricallyUpToTheMaximum) {
  FakeDriver driver{1u << 30};
  SegmentArena arena = driver.arena(kPage, 8 * kMiB);
  for (int i = 0; i < 16; ++i)
    arena.allocate(kMiB);
  // 2, 2, 4, 8, 8 MiB: each new segment as large as all before, at most 8.
  std::vector<std::size_t> expect = {kPage, kPage, 4 * kMiB, 8 * kMiB};
  ASSERT_GE(driver.asked.size(), expect.size());
  for (std::size_t i = 0; i < expect.size(); ++i)
    EXPECT_EQ(driver.asked[i], expect[i]) << "segment " << i;
  EXPECT_EQ(arena.held(), 16 * kMiB);
  // A block larger than a segment gets a segment of its own size.
  arena.allocate(20 * kMiB + 1);
  EXPECT_EQ(driver.asked.back(), 22 * kMiB);
}

TEST(SegmentArena, FallsBackToAnExactSegmentThenRunsOut) {
  // 10 MiB of device: after 2 + 2 + 4 MiB, a full 8 MiB segment does not
  // fit, one of the block's own size (2 MiB) does.
  FakeDriver driver{10 * kMiB};
  SegmentArena arena = driver.arena(kPage, 64 * kMiB);
  for (int i = 0; i < 8; ++i)
    arena.allocate(kMiB);
  EXPECT_EQ(arena.held(), 8 * kMiB);
  arena.allocate(kMiB + 1);
  EXPECT_EQ(driver.asked.back(), kPage);
  EXPECT_EQ(arena.held(), 10 * kMiB);
  EXPECT_THROW(arena.allocate(kMiB), std::bad_alloc);
}

TEST(SegmentArena, EmptySegmentsGoBackBeforeALargeBlock) {
  // Two segments' worth of small blocks, all freed: neither segment holds
  // a 6 MiB block, and the driver has no room for it beside them; the
  // empty segments go back and the block gets one of its own.
  FakeDriver driver{8 * kMiB};
  SegmentArena arena = driver.arena(kPage, kPage);
  std::vector<std::uintptr_t> blocks;
  for (int i = 0; i < 4; ++i)
    blocks.push_back(arena.allocate(kMiB));
  EXPECT_EQ(arena.segmentCount(), 2u);
  for (std::uintptr_t b : blocks)
    arena.deallocate(b);
  std::uintptr_t big = arena.allocate(6 * kMiB);
  EXPECT_EQ(arena.segmentCount(), 1u);
  EXPECT_EQ(driver.live.size(), 1u);
  EXPECT_EQ(driver.live.begin()->first, big);
}

TEST(SegmentArena, NeverMergesAcrossTouchingSegments) {
  // The fake driver's segments touch; a block freed at the end of one and
  // one at the start of the next must stay separate ranges.
  FakeDriver driver{1u << 30};
  SegmentArena arena = driver.arena(kPage, kPage);
  std::uintptr_t a = arena.allocate(kPage), b = arena.allocate(kPage);
  ASSERT_EQ(b, a + kPage);
  arena.deallocate(a);
  arena.deallocate(b);
  // Both segments are empty; a block of two pages cannot span them.
  std::uintptr_t c = arena.allocate(2 * kPage);
  EXPECT_NE(c, a);
  arena.trim();
  EXPECT_EQ(arena.segmentCount(), 1u);
  EXPECT_EQ(driver.live.size(), 1u);
}

TEST(SegmentArena, ReleasesEverythingWhenDestroyed) {
  FakeDriver driver{1u << 30};
  {
    SegmentArena arena = driver.arena();
    arena.allocate(3 * kMiB);
    arena.allocate(100);
    EXPECT_FALSE(driver.live.empty());
  }
  EXPECT_TRUE(driver.live.empty());
}

TEST(SegmentArena, StepLikeSequenceFitsTheSumOfItsPeakPlusOneSegment) {
  // A training step's shape: activations made in the forward pass and
  // freed in reverse, gradients of other sizes made as they go. The
  // runtime's cache holds freed blocks until the arena runs out, then
  // returns them; here blocks go straight back. Held bytes stay within the
  // live peak plus the granularity of the last segment.
  FakeDriver driver{1u << 30};
  SegmentArena arena = driver.arena(kPage, 16 * kMiB);
  std::size_t live = 0, peak = 0;
  std::vector<std::pair<std::uintptr_t, std::size_t>> acts;
  for (int step = 0; step < 3; ++step) {
    for (int layer = 0; layer < 24; ++layer) {
      std::size_t bytes = (layer % 3 + 1) * 700 * 1024 + 256 * layer;
      acts.emplace_back(arena.allocate(bytes), bytes);
      live += bytes;
      peak = std::max(peak, live);
    }
    std::vector<std::pair<std::uintptr_t, std::size_t>> grads;
    while (!acts.empty()) {
      auto [p, bytes] = acts.back();
      acts.pop_back();
      std::size_t g = bytes / 2 + 512;
      grads.emplace_back(arena.allocate(g), g);
      live += g;
      peak = std::max(peak, live);
      arena.deallocate(p);
      live -= bytes;
    }
    for (auto [p, bytes] : grads) {
      arena.deallocate(p);
      live -= bytes;
    }
  }
  EXPECT_LE(arena.held(), peak + 16 * kMiB + 24 * 256);
}

} // namespace
