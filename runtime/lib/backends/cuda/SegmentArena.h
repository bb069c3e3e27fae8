//===- SegmentArena.h - Blocks carved from large segments -------*- C++ -*-===//
//
// The CUDA backend's device memory. cuMemAlloc gives every block pages of
// its own, 2 MiB on an H100: a 3 MiB block holds 4 MiB, and a deep model's
// step, predicted to fit the device byte for byte, does not once every
// block is rounded. The arena asks the driver for few large segments and
// carves the runtime's blocks out of them at a 256-byte granularity (what
// cuMemAlloc guarantees and cuBLASLt's kernels align to), best fit, with
// freed blocks merged with their free neighbours. Segments grow
// geometrically (each new one as large as all before it, between `minimum`
// and `maximum` bytes), so a small program holds little and a large one
// makes few driver calls; when the driver has no room for a full segment,
// one just large enough for the block is tried, and segments left empty
// are returned to the driver first.
//
// No CUDA here: the driver is two callbacks, so the arena is tested on any
// machine (runtime/test/SegmentArenaTest.cpp). Thread-safe.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_BACKENDS_CUDA_SEGMENTARENA_H
#define ZERO_RUNTIME_LIB_BACKENDS_CUDA_SEGMENTARENA_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <unordered_map>

namespace zero::runtime {

class SegmentArena {
public:
  /// Allocates `bytes` from the driver into `base`; false when the driver
  /// is out of memory (anything else it throws).
  using Allocate = std::function<bool(std::size_t bytes, std::uintptr_t &base)>;
  using Release = std::function<void(std::uintptr_t base)>;

  static constexpr std::size_t kGranule = 256;

  SegmentArena(std::size_t minimum, std::size_t maximum, std::size_t pageBytes,
               Allocate allocate, Release release)
      : minimum(roundUp(std::max<std::size_t>(minimum, kGranule), pageBytes)),
        maximum(std::max(this->minimum, roundUp(maximum, pageBytes))),
        pageBytes(pageBytes), driverAllocate(std::move(allocate)),
        driverRelease(std::move(release)) {}

  SegmentArena(const SegmentArena &) = delete;
  SegmentArena &operator=(const SegmentArena &) = delete;
  ~SegmentArena() { releaseAll(); }

  /// A block of at least `bytes`, aligned to 256 bytes. Throws
  /// std::bad_alloc when neither a free range nor the driver has room.
  std::uintptr_t allocate(std::size_t bytes) {
    if (bytes > SIZE_MAX - pageBytes - kGranule)
      throw std::bad_alloc();
    std::size_t size = roundUp(std::max<std::size_t>(bytes, 1), kGranule);
    std::lock_guard<std::mutex> lock(mutex);
    if (std::uintptr_t p = takeFree(size))
      return p;
    std::size_t grow = std::clamp(heldBytes, minimum, maximum);
    if (addSegment(std::max(grow, roundUp(size, pageBytes))))
      return takeFree(size);
    // No room for a full segment: one just large enough, after the empty
    // segments went back to the driver.
    releaseEmpty();
    if (addSegment(roundUp(size, pageBytes)))
      return takeFree(size);
    throw std::bad_alloc();
  }

  /// Returns a block that allocate() gave out.
  void deallocate(std::uintptr_t ptr) {
    std::lock_guard<std::mutex> lock(mutex);
    auto live = liveBlocks.find(ptr);
    if (live == liveBlocks.end())
      return;
    std::size_t size = live->second;
    liveBlocks.erase(live);
    auto seg = segmentOf(ptr);
    --seg->second.liveCount;
    insertFree(ptr, size);
  }

  /// Returns every segment without a live block to the driver.
  void releaseEmpty() {
    for (auto it = segments.begin(); it != segments.end();) {
      if (it->second.liveCount != 0) {
        ++it;
        continue;
      }
      eraseFree(it->first, it->first + it->second.bytes);
      heldBytes -= it->second.bytes;
      driverRelease(it->first);
      it = segments.erase(it);
    }
  }

  void trim() {
    std::lock_guard<std::mutex> lock(mutex);
    releaseEmpty();
  }

  /// Bytes held from the driver, and the number of segments.
  std::size_t held() const {
    std::lock_guard<std::mutex> lock(mutex);
    return heldBytes;
  }
  std::size_t segmentCount() const {
    std::lock_guard<std::mutex> lock(mutex);
    return segments.size();
  }

private:
  struct Segment {
    std::size_t bytes;
    std::size_t liveCount = 0;
  };

  static std::size_t roundUp(std::size_t x, std::size_t to) {
    return (x + to - 1) / to * to;
  }

  /// The segment holding `ptr`.
  std::map<std::uintptr_t, Segment>::iterator segmentOf(std::uintptr_t ptr) {
    auto it = segments.upper_bound(ptr);
    return std::prev(it);
  }

  /// Best fit among the free ranges: the smallest that holds `size`, the
  /// lowest address among equals. Splits it and returns its start, or 0.
  std::uintptr_t takeFree(std::size_t size) {
    auto best = bySize.lower_bound({size, 0});
    if (best == bySize.end())
      return 0;
    auto [rangeBytes, start] = *best;
    bySize.erase(best);
    byAddress.erase(start);
    if (rangeBytes > size) {
      bySize.insert({rangeBytes - size, start + size});
      byAddress.emplace(start + size, rangeBytes - size);
    }
    liveBlocks.emplace(start, size);
    ++segmentOf(start)->second.liveCount;
    return start;
  }

  /// Adds [ptr, ptr + size) to the free ranges, merged with free
  /// neighbours in the same segment.
  void insertFree(std::uintptr_t ptr, std::size_t size) {
    auto seg = segmentOf(ptr);
    std::uintptr_t segStart = seg->first, segEnd = seg->first + seg->second.bytes;
    auto next = byAddress.lower_bound(ptr);
    if (next != byAddress.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == ptr && prev->first >= segStart) {
        ptr = prev->first;
        size += prev->second;
        bySize.erase({prev->second, prev->first});
        byAddress.erase(prev);
      }
    }
    next = byAddress.lower_bound(ptr);
    if (next != byAddress.end() && next->first == ptr + size &&
        next->first < segEnd) {
      size += next->second;
      bySize.erase({next->second, next->first});
      byAddress.erase(next);
    }
    byAddress.emplace(ptr, size);
    bySize.insert({size, ptr});
  }

  /// Removes the free ranges inside [begin, end).
  void eraseFree(std::uintptr_t begin, std::uintptr_t end) {
    for (auto it = byAddress.lower_bound(begin);
         it != byAddress.end() && it->first < end;) {
      bySize.erase({it->second, it->first});
      it = byAddress.erase(it);
    }
  }

  bool addSegment(std::size_t bytes) {
    std::uintptr_t base = 0;
    if (!driverAllocate(bytes, base))
      return false;
    segments.emplace(base, Segment{bytes});
    heldBytes += bytes;
    insertFree(base, bytes);
    return true;
  }

  void releaseAll() {
    for (auto &[base, segment] : segments)
      driverRelease(base);
    segments.clear();
    byAddress.clear();
    bySize.clear();
    liveBlocks.clear();
    heldBytes = 0;
  }

  const std::size_t minimum, maximum, pageBytes;
  Allocate driverAllocate;
  Release driverRelease;
  mutable std::mutex mutex;
  std::map<std::uintptr_t, Segment> segments;
  std::map<std::uintptr_t, std::size_t> byAddress; // free ranges
  std::set<std::pair<std::size_t, std::uintptr_t>> bySize; // the same
  std::unordered_map<std::uintptr_t, std::size_t> liveBlocks;
  std::size_t heldBytes = 0;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_LIB_BACKENDS_CUDA_SEGMENTARENA_H
