//===- Memory.cpp - The runtime's allocator -------------------------------===//
//
// Every byte allocated through the runtime, by the zrt_alloc entry points,
// generated code's _mlir_memref_to_llvm_* hooks, the collectives'
// temporaries (Comm.h) and the GEMMs' widened copies, comes from here and is
// counted to a memory category in a memory space.
//
// Allocations are found again through a table of live blocks rather than a
// header in front of each block: freeing a foreign, interior or already freed
// pointer is then detected exactly without reading memory the runtime does
// not own, and the same table works for device memory, where a header cannot
// be written from the host.
//
// Freed blocks are not returned to their allocator but cached by size class
// and handed out again (a caching allocator, as deep-learning frameworks
// have): a training step frees and reallocates the same temporaries every step,
// and going back to the system each time costs an mmap, a munmap and fresh
// zeroed pages per block. The accounting still counts requested bytes of
// live blocks; the cache has counters of its own (cached and reserved
// bytes). The cache is kept until zrt_release_cached or zrt_shutdown.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include "comm/Comm.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

using namespace zero::runtime;

//===----------------------------------------------------------------------===//
// Memory categories
//===----------------------------------------------------------------------===//

bool zero::runtime::validCategory(int category) {
  return category >= 0 && category < ZRT_NUM_CATEGORIES;
}

const char *zero::runtime::categoryName(int category) {
  switch (category) {
  case ZRT_PARAMS:
    return "params";
  case ZRT_GRADS:
    return "grads";
  case ZRT_OPTIMIZER_STATES:
    return "optimizer_states";
  case ZRT_ACTIVATIONS:
    return "activations";
  case ZRT_COMM:
    return "comm";
  default:
    return "unknown";
  }
}

namespace {

//===----------------------------------------------------------------------===//
// Size classes of the block cache
//===----------------------------------------------------------------------===//

// A freed block is kept for reuse by any later request of the same size
// class (and owning allocator) whose alignment its address satisfies.
// Classes are exact rounded sizes: a training step repeats the same allocation
// sequence, so exact reuse hits on every step after the first, and rounding
// wastes at most 63 bytes below kPageClassesFrom and under 3.2% (4095 bytes
// of 128 KiB) from there on.
constexpr std::size_t kSmallGranule = 64;
constexpr std::size_t kPageGranule = 4096;
constexpr std::size_t kPageClassesFrom = 128 * 1024;

/// The capacity of the block that serves a request of `bytes`: rounded up to
/// 64 bytes below 128 KiB (0 bytes get a 64-byte block, so every live
/// pointer is unique), to 4 KiB from 128 KiB on. Throws std::bad_alloc if
/// that overflows.
std::size_t sizeClass(std::size_t bytes) {
  std::size_t granule = bytes < kPageClassesFrom ? kSmallGranule : kPageGranule;
  if (bytes > SIZE_MAX - (granule - 1))
    throw std::bad_alloc();
  return std::max(kSmallGranule, (bytes + granule - 1) & ~(granule - 1));
}

bool isAligned(const void *ptr, std::size_t alignment) {
  return (reinterpret_cast<std::uintptr_t>(ptr) & (alignment - 1)) == 0;
}

struct CacheKey {
  Allocator *owner;
  std::size_t capacity;
  bool operator==(const CacheKey &o) const {
    return owner == o.owner && capacity == o.capacity;
  }
};

struct CacheKeyHash {
  std::size_t operator()(const CacheKey &key) const {
    return std::hash<const void *>()(key.owner) * 31u ^
           std::hash<std::size_t>()(key.capacity);
  }
};

//===----------------------------------------------------------------------===//
// Memory: live blocks, accounting and the block cache
//===----------------------------------------------------------------------===//

struct LiveBlock {
  std::size_t bytes;    // requested: what the accounting counts
  std::size_t capacity; // size class: what the block holds
  int category;
  int space; // zrt_space
  Allocator *owner;
  void *handle;
};

/// Counts requested bytes of live blocks per category (current and peak),
/// and separately the bytes the runtime holds from its allocators: the
/// capacities of live blocks plus the cached ones (reserved, and its peak),
/// of which `cachedBytes` are free blocks kept for reuse. Everything is
/// guarded by one mutex; allocator calls (allocation, zero filling, release
/// to the system) happen outside it. A block taken from the cache stays
/// counted as reserved while it is zero-filled, before it enters the live
/// table.
class Memory {
public:
  /// A block of `bytes` aligned to max(alignment, 64), zero-filled if
  /// `zeroed`, counted to `category` in `space` (a zrt_space).
  void *allocate(std::size_t bytes, std::size_t alignment, int category,
                 bool zeroed, int space = ZRT_SPACE_DEVICE) {
    if (!validCategory(category))
      throw Error(format("invalid category %d", category));
    if (space != ZRT_SPACE_DEVICE && space != ZRT_SPACE_HOST)
      throw Error(format("invalid memory space %d", space));
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
      throw Error(format("alignment %zu is not a power of two", alignment));
    alignment = std::max(alignment, kMinAlignment);
    Allocator &owner =
        space == ZRT_SPACE_HOST ? backend().hostMemory : backend().deviceMemory;
    std::size_t capacity = 0;
    Block block;
    bool reused = false;
    try {
      capacity = sizeClass(bytes);
      reused = takeCached(owner, capacity, alignment, block);
      if (!reused)
        block = allocateFresh(owner, capacity, alignment, zeroed);
    } catch (const std::bad_alloc &) {
      throw Error(outOfMemory(owner, space, bytes, category));
    }
    if (reused && zeroed) {
      try {
        owner.fillZero(block.ptr, bytes);
      } catch (...) {
        discard(owner, block, capacity, true);
        throw;
      }
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      bool inserted = false;
      try {
        live.emplace(block.ptr, LiveBlock{bytes, capacity, category, space,
                                          &owner, block.handle});
        inserted = true;
      } catch (const std::bad_alloc &) {
      }
      if (inserted) {
        if (!reused) {
          // A fresh block: the runtime holds `capacity` more bytes.
          reservedBytes += capacity;
          reservedPeak = std::max(reservedPeak, reservedBytes);
        }
        Counts &c = counts[space];
        c.current[category] += bytes;
        c.peak[category] = std::max(c.peak[category], c.current[category]);
        c.currentTotal += bytes;
        c.peakTotal = std::max(c.peakTotal, c.currentTotal);
        ++numAllocs;
        return block.ptr;
      }
    }
    discard(owner, block, capacity, reused);
    throw Error(outOfMemory(owner, space, bytes, category));
  }

  /// "cannot allocate ...: out of memory", with what the runtime holds in
  /// that space (live and cached, which were returned before the last try)
  /// and what the device's driver has free: a step predicted to fit that
  /// does not shows by how much, and whether the driver's granularity or
  /// another process took the rest.
  std::string outOfMemory(Allocator &owner, int space, std::size_t bytes,
                          int category) {
    uint64_t live, reserved;
    {
      std::lock_guard<std::mutex> lock(mutex);
      live = counts[space].currentTotal;
      reserved = reservedBytes;
    }
    std::string message =
        format("cannot allocate %zu bytes for %s: out of memory (%.3f GiB "
               "live in the runtime's %s blocks, %.3f GiB held in all",
               bytes, categoryName(category), live / 1073741824.0,
               space == ZRT_SPACE_HOST ? "host" : "device",
               reserved / 1073741824.0);
    std::size_t free = 0, total = 0;
    if (space != ZRT_SPACE_HOST && owner.deviceMemoryInfo(free, total))
      message += format("; the device has %.3f GiB free of %.3f GiB",
                        free / 1073741824.0, total / 1073741824.0);
    return message + ")";
  }

  /// Uncounts a live block and keeps it in the cache (or, if the cache
  /// cannot grow, returns it to the system).
  void release(void *ptr) {
    LiveBlock found;
    bool cached = false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = live.find(ptr);
      if (it == live.end())
        throw Error(format("%p is not a live zero-runtime allocation (never "
                           "allocated here, an interior pointer, or already "
                           "freed)",
                           ptr));
      found = it->second;
      try {
        cache[CacheKey{found.owner, found.capacity}].push_back(
            Block{ptr, found.handle});
        cachedBytes += found.capacity;
        cached = true;
      } catch (const std::bad_alloc &) {
        reservedBytes -= found.capacity;
      }
      live.erase(it);
      Counts &c = counts[found.space];
      c.current[found.category] -= found.bytes;
      c.currentTotal -= found.bytes;
      ++numFrees;
    }
    if (!cached)
      found.owner->deallocate(Block{ptr, found.handle});
  }

  /// Returns every cached block to its allocator. Returns the bytes
  /// released.
  std::size_t releaseCached() {
    Cache taken;
    std::size_t bytes;
    {
      std::lock_guard<std::mutex> lock(mutex);
      taken.swap(cache);
      bytes = cachedBytes;
      reservedBytes -= cachedBytes;
      cachedBytes = 0;
    }
    std::vector<Allocator *> owners;
    for (const auto &[key, blocks] : taken) {
      for (const Block &block : blocks)
        key.owner->deallocate(block);
      if (std::find(owners.begin(), owners.end(), key.owner) == owners.end())
        owners.push_back(key.owner);
    }
    for (Allocator *owner : owners)
      owner->trim();
    return bytes;
  }

  void stats(zrt_memory_stats &out) {
    std::lock_guard<std::mutex> lock(mutex);
    const Counts &device = counts[ZRT_SPACE_DEVICE];
    const Counts &host = counts[ZRT_SPACE_HOST];
    for (int c = 0; c < ZRT_NUM_CATEGORIES; ++c) {
      out.current[c] = device.current[c];
      out.peak[c] = device.peak[c];
      out.host_current[c] = host.current[c];
      out.host_peak[c] = host.peak[c];
    }
    out.current_total = device.currentTotal;
    out.peak_total = device.peakTotal;
    out.host_current_total = host.currentTotal;
    out.host_peak_total = host.peakTotal;
    out.num_allocs = numAllocs;
    out.num_frees = numFrees;
    out.cached_bytes = cachedBytes;
    out.reserved_bytes = reservedBytes;
    out.reserved_peak = reservedPeak;
  }

  void resetPeaks() {
    std::lock_guard<std::mutex> lock(mutex);
    for (Counts &counted : counts) {
      for (int c = 0; c < ZRT_NUM_CATEGORIES; ++c)
        counted.peak[c] = counted.current[c];
      counted.peakTotal = counted.currentTotal;
    }
    reservedPeak = reservedBytes;
  }

private:
  using Cache = std::unordered_map<CacheKey, std::vector<Block>, CacheKeyHash>;

  /// Takes the most recently cached block of `owner` and `capacity` whose
  /// address is aligned to `alignment`, if there is one.
  bool takeCached(Allocator &owner, std::size_t capacity, std::size_t alignment,
                  Block &out) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(CacheKey{&owner, capacity});
    if (it == cache.end())
      return false;
    std::vector<Block> &blocks = it->second;
    for (std::size_t i = blocks.size(); i-- > 0;) {
      if (isAligned(blocks[i].ptr, alignment)) {
        out = blocks[i];
        blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(i));
        cachedBytes -= capacity;
        return true;
      }
    }
    return false;
  }

  /// A block from the allocator. If it is out of memory, the cache
  /// (blocks of other sizes, typically) goes back to the system first and
  /// the allocation is tried once more.
  Block allocateFresh(Allocator &owner, std::size_t capacity,
                      std::size_t alignment, bool zeroed) {
    try {
      return owner.allocate(capacity, alignment, zeroed);
    } catch (const std::bad_alloc &) {
      if (releaseCached() == 0)
        throw;
    }
    return owner.allocate(capacity, alignment, zeroed);
  }

  /// Returns to the system a block that was taken from the cache (`counted`:
  /// it is still in reservedBytes) or from the allocator but did not become
  /// live.
  void discard(Allocator &owner, const Block &block, std::size_t capacity,
               bool counted) noexcept {
    if (counted) {
      std::lock_guard<std::mutex> lock(mutex);
      reservedBytes -= capacity;
    }
    owner.deallocate(block);
  }

  std::mutex mutex;
  std::unordered_map<void *, LiveBlock> live;
  Cache cache;
  /// Requested bytes of live blocks in one memory space.
  struct Counts {
    uint64_t current[ZRT_NUM_CATEGORIES] = {};
    uint64_t peak[ZRT_NUM_CATEGORIES] = {};
    uint64_t currentTotal = 0, peakTotal = 0;
  };
  Counts counts[2]; // by zrt_space
  uint64_t numAllocs = 0, numFrees = 0;
  uint64_t cachedBytes = 0, reservedBytes = 0, reservedPeak = 0;
};

Memory &memory() {
  // Leaked on purpose: frees during static destruction must still work.
  static Memory *instance = new Memory();
  return *instance;
}

std::atomic<int> generatedCategory{ZRT_ACTIVATIONS};
std::atomic<int> generatedSpace{ZRT_SPACE_DEVICE};

} // namespace

void *zero::runtime::allocateBlock(std::size_t bytes, std::size_t alignment,
                                   int category, bool zeroed, int space) {
  return memory().allocate(bytes, alignment, category, zeroed, space);
}

void zero::runtime::freeBlock(void *ptr) { memory().release(ptr); }

std::size_t zero::runtime::releaseCachedBlocks() {
  return memory().releaseCached();
}

//===----------------------------------------------------------------------===//
// Temporaries of the collectives (Comm.h)
//===----------------------------------------------------------------------===//

void *zero::runtime::allocateCommBuffer(std::size_t bytes) {
  return memory().allocate(bytes, kMinAlignment, ZRT_COMM, /*zeroed=*/false);
}

void zero::runtime::freeCommBuffer(void *ptr) noexcept {
  try {
    memory().release(ptr);
  } catch (...) {
    // Only blocks from allocateCommBuffer come here, and they are live.
  }
}

//===----------------------------------------------------------------------===//
// C ABI
//===----------------------------------------------------------------------===//

extern "C" {

const char *zrt_category_name(zrt_category category) {
  return categoryName(enumValue(category));
}

void *zrt_alloc(size_t bytes, zrt_category category) {
  void *ptr = nullptr;
  guarded("zrt_alloc", [&] {
    ptr = memory().allocate(bytes, kMinAlignment, enumValue(category),
                            /*zeroed=*/true);
  });
  return ptr;
}

void *zrt_alloc_host(size_t bytes, zrt_category category) {
  void *ptr = nullptr;
  guarded("zrt_alloc_host", [&] {
    ptr = memory().allocate(bytes, kMinAlignment, enumValue(category),
                            /*zeroed=*/true, ZRT_SPACE_HOST);
  });
  return ptr;
}

void zrt_free(void *ptr) {
  if (ptr && !guarded("zrt_free", [&] { memory().release(ptr); }))
    reportFatal();
}

void zrt_release_cached(void) {
  if (!guarded("zrt_release_cached", [] { memory().releaseCached(); }))
    reportFatal();
}

void zrt_get_memory_stats(zrt_memory_stats *out) {
  if (out && !guarded("zrt_get_memory_stats", [&] { memory().stats(*out); }))
    reportFatal();
}

void zrt_reset_peaks(void) {
  if (!guarded("zrt_reset_peaks", [&] { memory().resetPeaks(); }))
    reportFatal();
}

void *_mlir_memref_to_llvm_alloc(size_t size) {
  void *ptr = nullptr;
  if (!guarded("_mlir_memref_to_llvm_alloc", [&] {
        ptr = memory().allocate(size, kMinAlignment, generatedCategory.load(),
                                /*zeroed=*/false, generatedSpace.load());
      }))
    reportFatal();
  return ptr;
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  void *ptr = nullptr;
  if (!guarded("_mlir_memref_to_llvm_aligned_alloc", [&] {
        ptr = memory().allocate(size, alignment, generatedCategory.load(),
                                /*zeroed=*/false, generatedSpace.load());
      }))
    reportFatal();
  return ptr;
}

void _mlir_memref_to_llvm_free(void *ptr) {
  if (ptr &&
      !guarded("_mlir_memref_to_llvm_free", [&] { memory().release(ptr); }))
    reportFatal();
}

void zrt_set_generated_category(zrt_category category) {
  if (!guarded("zrt_set_generated_category", [&] {
        int value = enumValue(category);
        if (!validCategory(value))
          throw Error(format("invalid category %d", value));
        generatedCategory.store(value);
      }))
    reportFatal();
}

void zrt_set_generated_space(zrt_space space) {
  if (!guarded("zrt_set_generated_space", [&] {
        int value = enumValue(space);
        if (value != ZRT_SPACE_DEVICE && value != ZRT_SPACE_HOST)
          throw Error(format("invalid memory space %d", value));
        generatedSpace.store(value);
      }))
    reportFatal();
}

} // extern "C"
