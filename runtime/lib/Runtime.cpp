//===- Runtime.cpp - The zero-runtime C ABI -------------------------------===//
//
// Everything runtime.h promises that does not depend on the backend: backend
// selection, argument validation, allocation accounting, GEMM and collective
// counters and timing, and the error channels (the collectives themselves
// and the MPI world are in Comm.cpp). C++ exceptions are used inside and stop at
// `guarded`, which every entry point goes through; the fatal handler is
// called only after `guarded` has returned, with no lock held and no object
// with a destructor alive in the runtime's frames, so a handler may leave by
// longjmp or by throwing.
//
// Allocations are found again through a table of live blocks rather than a
// header in front of each block: freeing a foreign, interior or already freed
// pointer is then detected exactly without reading memory the runtime does
// not own, and the same table works for device memory, where a header cannot
// be written from the host.
//
// Freed blocks are not returned to the backend but cached by size class and
// handed out again (a caching allocator, as deep-learning frameworks have):
// a training step frees and reallocates the same temporaries every step,
// and going back to the system each time costs an mmap, a munmap and fresh
// zeroed pages per block. The accounting still counts requested bytes of
// live blocks; the cache has counters of its own (cached and reserved
// bytes). The cache is kept until zrt_release_cached or zrt_shutdown.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime.h"

#include "BFloat16.h"
#include "Backend.h"
#include "Comm.h"
#include "CommQueue.h"
#include "Nvme.h"
#include "ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

using namespace zero::runtime;

namespace {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

constexpr std::size_t kErrorCapacity = 1024;
thread_local char lastError[kErrorCapacity] = "";

void setLastError(const char *entry, const char *message) noexcept {
  std::snprintf(lastError, kErrorCapacity, "%s: %s", entry, message);
}

/// Prints one line and ends the process; in a world of more than one rank,
/// with the rank in the line and MPI_Abort, so no rank waits forever for
/// this one in a collective.
void defaultFatalHandler(const char *message) {
  char line[kErrorCapacity + 64];
  int size = comm::currentSize();
  if (size > 1)
    std::snprintf(line, sizeof line, "zero-runtime: error: rank %d of %d: %s",
                  comm::currentRank(), size, message);
  else
    std::snprintf(line, sizeof line, "zero-runtime: error: %s", message);
  comm::terminate(line);
}

std::atomic<zrt_fatal_handler> fatalHandler{nullptr};

/// Passes the failure recorded in lastError to the fatal handler. The
/// message is copied first, so a handler that calls back into the runtime
/// cannot overwrite it.
void reportFatal() {
  char message[kErrorCapacity];
  std::memcpy(message, lastError, kErrorCapacity);
  zrt_fatal_handler handler = fatalHandler.load();
  (handler ? handler : defaultFatalHandler)(message);
}

/// Runs `fn`, turning any exception into lastError. Returns true on success.
template <typename Fn> bool guarded(const char *entry, Fn &&fn) noexcept {
  try {
    fn();
    return true;
  } catch (const std::bad_alloc &) {
    setLastError(entry, "out of memory");
  } catch (const std::exception &e) {
    setLastError(entry, e.what());
  } catch (...) {
    setLastError(entry, "unknown internal error");
  }
  return false;
}

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
}

/// The value of a zrt_category argument as an int. C callers (generated code
/// included) may pass any int; in C++ loading such a value as the enum type
/// is undefined, so the bits are copied instead.
int categoryValue(const zrt_category &category) {
  std::underlying_type_t<zrt_category> value;
  static_assert(sizeof value == sizeof category);
  std::memcpy(&value, &category, sizeof value);
  return static_cast<int>(value);
}

bool validCategory(int category) {
  return category >= 0 && category < ZRT_NUM_CATEGORIES;
}

const char *categoryName(int category) {
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

//===----------------------------------------------------------------------===//
// Backend selection
//===----------------------------------------------------------------------===//

std::atomic<Backend *> activeBackend{nullptr};
std::mutex initMutex;

/// registerTestBackend's backends, by name (guarded by initMutex).
std::vector<std::pair<std::string, Backend *>> &testBackends() {
  static auto *backends = new std::vector<std::pair<std::string, Backend *>>();
  return *backends;
}

void init(const char *name, int numThreads) {
  std::string requested = name ? name : "cpu";
  Backend *backend = nullptr;
  if (requested == "cpu")
    backend = &cpuBackend();
  else if (requested == "cuda")
    backend = &cudaBackend();
  else {
    std::lock_guard<std::mutex> lock(initMutex);
    for (auto &[n, b] : testBackends())
      if (n == requested)
        backend = b;
  }
  if (!backend)
    throw Error("unknown backend \"" + requested + "\" (built: cpu, cuda)");
  {
    std::lock_guard<std::mutex> lock(initMutex);
    backend->configure(numThreads);
    activeBackend.store(backend);
  }
  comm::initWorld();
}

/// The selected backend, selecting "cpu" with default settings if none is.
Backend &backend() {
  if (Backend *b = activeBackend.load())
    return *b;
  std::lock_guard<std::mutex> lock(initMutex);
  if (!activeBackend.load()) {
    cpuBackend().configure(0);
    activeBackend.store(&cpuBackend());
  }
  return *activeBackend.load();
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

constexpr std::size_t kMinAlignment = 64;

/// Requests of zrt_copy_start carry this bit (the backend's copy handle
/// below it), so zrt_wait can tell them from collectives and NVMe
/// transfers (NvmeStore::kRequestTag, bit 62).
constexpr int64_t kCopyRequestTag = int64_t(1) << 61;
/// The request of a copy of no bytes: nothing to wait for.
constexpr int64_t kNoCopy = int64_t(1) << 60;

//===----------------------------------------------------------------------===//
// Size classes of the block cache
//===----------------------------------------------------------------------===//

// A freed block is kept for reuse by any later request of the same size
// class (and owning backend) whose alignment its address satisfies. Classes
// are exact rounded sizes: a training step repeats the same allocation
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
  Backend *owner;
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
  Backend *owner;
  void *handle;
};

/// Counts requested bytes of live blocks per category (current and peak),
/// and separately the bytes the runtime holds from its backends: the
/// capacities of live blocks plus the cached ones (reserved, and its peak),
/// of which `cachedBytes` are free blocks kept for reuse. Everything is
/// guarded by one mutex; backend calls (allocation, zero filling, release to
/// the system) happen outside it. A block taken from the cache stays
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
    Backend &owner =
        space == ZRT_SPACE_HOST ? backend().hostMemory() : backend();
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
  std::string outOfMemory(Backend &owner, int space, std::size_t bytes,
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

  /// Returns every cached block to its backend. Returns the bytes released.
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
    std::vector<Backend *> owners;
    for (const auto &[key, blocks] : taken) {
      for (const Block &block : blocks)
        key.owner->deallocate(block);
      if (std::find(owners.begin(), owners.end(), key.owner) == owners.end())
        owners.push_back(key.owner);
    }
    for (Backend *owner : owners)
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
  bool takeCached(Backend &owner, std::size_t capacity, std::size_t alignment,
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

  /// A block from the backend. If the backend is out of memory, the cache
  /// (blocks of other sizes, typically) goes back to the system first and
  /// the allocation is tried once more.
  Block allocateFresh(Backend &owner, std::size_t capacity,
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
  /// it is still in reservedBytes) or from the backend but did not become
  /// live.
  void discard(Backend &owner, const Block &block, std::size_t capacity,
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

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

struct ShapeKey {
  int32_t dtypeBytes;
  int64_t batch, m, n, k;
  bool operator==(const ShapeKey &o) const {
    return dtypeBytes == o.dtypeBytes && batch == o.batch && m == o.m &&
           n == o.n && k == o.k;
  }
};

struct ShapeKeyHash {
  std::size_t operator()(const ShapeKey &key) const {
    std::size_t h = std::hash<int64_t>()(key.dtypeBytes);
    for (int64_t v : {key.batch, key.m, key.n, key.k})
      h = h * 1000003u ^ std::hash<int64_t>()(v);
    return h;
  }
};

/// zrt_set_sync_timing: GEMMs and kernel launches wait for the device, so
/// that their seconds are its own.
std::atomic<bool> syncTiming{false};

class GemmCounters {
public:
  void record(const ShapeKey &key, double seconds) {
    std::lock_guard<std::mutex> lock(mutex);
    ++totals.calls;
    totals.flops += 2 * uint64_t(key.m) * uint64_t(key.n) * uint64_t(key.k) *
                    uint64_t(key.batch);
    totals.seconds += seconds;
    auto [it, inserted] = index.try_emplace(key, shapes.size());
    if (inserted) {
      try {
        shapes.push_back(zrt_gemm_shape{key.dtypeBytes, key.batch, key.m, key.n,
                                        key.k, 0, 0.0});
      } catch (...) {
        index.erase(it);
        throw;
      }
    }
    zrt_gemm_shape &entry = shapes[it->second];
    ++entry.calls;
    entry.seconds += seconds;
  }

  zrt_gemm_stats get() {
    std::lock_guard<std::mutex> lock(mutex);
    return totals;
  }

  std::size_t shapeCount() {
    std::lock_guard<std::mutex> lock(mutex);
    return shapes.size();
  }

  bool shape(std::size_t i, zrt_gemm_shape &out) {
    std::lock_guard<std::mutex> lock(mutex);
    if (i >= shapes.size())
      return false;
    out = shapes[i];
    return true;
  }

  void reset() {
    std::lock_guard<std::mutex> lock(mutex);
    totals = zrt_gemm_stats{0, 0, 0.0};
    shapes.clear();
    index.clear();
  }

private:
  std::mutex mutex;
  zrt_gemm_stats totals = {0, 0, 0.0};
  std::vector<zrt_gemm_shape> shapes;
  std::unordered_map<ShapeKey, std::size_t, ShapeKeyHash> index;
};

GemmCounters &gemmCounters() {
  static GemmCounters *instance = new GemmCounters();
  return *instance;
}

/// A GEMM call as it arrives at the C ABI (batch = 1 and strides 0 for the
/// unbatched entry points).
struct GemmCall {
  bool transA, transB;
  int64_t batch, m, n, k;
  const void *a;
  int64_t strideA, lda;
  const void *b;
  int64_t strideB, ldb;
  double beta;
  void *c;
  int64_t strideC, ldc;
  /// C is bf16 (with DType::BF16 on a native backend): see GemmArgs.
  bool bf16C = false;
};

void checkNonNegative(const char *name, int64_t value) {
  if (value < 0)
    throw Error(format("%s = %lld is negative", name, (long long)value));
}

/// Checks that a row-major matrix with rows of `cols` elements can have row
/// stride `ld` (BLAS requires ld >= max(1, cols)).
void checkLeadingDim(const char *ld, int64_t value, const char *matrix,
                     const char *colsName, int64_t cols) {
  if (value < std::max<int64_t>(1, cols))
    throw Error(format("%s = %lld is less than max(1, %s) = %lld: the rows of "
                       "%s would overlap",
                       ld, (long long)value, colsName,
                       (long long)std::max<int64_t>(1, cols), matrix));
}

void checkNotNull(const char *name, const void *ptr) {
  if (!ptr)
    throw Error(format("%s is NULL", name));
}

/// The C matrices of a batch must not overlap: matrix i + 1 starts at or
/// after the end of the last row of matrix i.
void checkDisjointC(const GemmCall &g) {
  if (g.batch <= 1)
    return;
  // (m - 1) * ldc + n, computed without overflow.
  __int128 extent = (__int128)(g.m - 1) * g.ldc + g.n;
  if ((__int128)g.strideC < extent)
    throw Error(format("stride_c = %lld is less than (m - 1) * ldc + n = "
                       "%lld: the C matrices of the batch would overlap",
                       (long long)g.strideC,
                       (long long)std::min<__int128>(extent, INT64_MAX)));
}

template <typename T> void scaleC(const GemmCall &g) {
  const T beta = static_cast<T>(g.beta);
  if (beta == T(1))
    return;
  for (int64_t i = 0; i < g.batch; ++i) {
    T *c = static_cast<T *>(g.c) + i * g.strideC;
    for (int64_t r = 0; r < g.m; ++r) {
      T *row = c + r * g.ldc;
      if (beta == T(0))
        std::fill(row, row + g.n, T(0));
      else
        for (int64_t j = 0; j < g.n; ++j)
          row[j] *= beta;
    }
  }
}

using Clock = std::chrono::steady_clock;

/// zrt_trace_*: the events of one traced stretch (zero-run --trace).
class Tracer {
public:
  bool on() const { return enabled.load(std::memory_order_relaxed); }

  void start() {
    std::lock_guard<std::mutex> lock(mutex);
    events.clear();
    requests.clear();
    origin = Clock::now();
    enabled.store(true, std::memory_order_relaxed);
  }

  void stop() { enabled.store(false, std::memory_order_relaxed); }

  void record(zrt_trace_kind kind, zrt_collective collective,
              Clock::time_point begin, Clock::time_point end, uint64_t bytes,
              const GemmCall *gemm = nullptr) {
    if (!on())
      return;
    std::lock_guard<std::mutex> lock(mutex);
    zrt_trace_event e{};
    e.kind = kind;
    e.collective = collective;
    e.begin = std::chrono::duration<double>(begin - origin).count();
    e.end = std::chrono::duration<double>(end - origin).count();
    e.bytes = bytes;
    if (gemm) {
      e.batch = std::max<int64_t>(gemm->batch, 1);
      e.m = gemm->m;
      e.n = gemm->n;
      e.k = gemm->k;
      e.flops = 2 * static_cast<uint64_t>(e.batch) *
                static_cast<uint64_t>(e.m) * static_cast<uint64_t>(e.n) *
                static_cast<uint64_t>(e.k);
    }
    events.push_back(e);
  }

  /// A started collective's request, so that its wait names its kind.
  void noteRequest(int64_t request, zrt_collective kind) {
    if (!on())
      return;
    std::lock_guard<std::mutex> lock(mutex);
    requests[request] = kind;
  }

  zrt_collective takeRequest(int64_t request) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = requests.find(request);
    if (it == requests.end())
      return ZRT_NUM_COLLECTIVES;
    zrt_collective kind = it->second;
    requests.erase(it);
    return kind;
  }

  std::size_t count() {
    std::lock_guard<std::mutex> lock(mutex);
    return events.size();
  }

  bool get(std::size_t index, zrt_trace_event &out) {
    std::lock_guard<std::mutex> lock(mutex);
    if (index >= events.size())
      return false;
    out = events[index];
    return true;
  }

private:
  std::atomic<bool> enabled{false};
  std::mutex mutex;
  Clock::time_point origin;
  std::vector<zrt_trace_event> events;
  std::unordered_map<int64_t, zrt_collective> requests;
};

Tracer &tracer() {
  static Tracer *instance = new Tracer();
  return *instance;
}

void gemm(DType dtype, GemmCall g, bool batched) {
  if (batched)
    checkNonNegative("batch", g.batch);
  checkNonNegative("m", g.m);
  checkNonNegative("n", g.n);
  checkNonNegative("k", g.k);
  const bool sync = syncTiming.load(std::memory_order_relaxed);
  if (sync)
    backend().synchronize();
  auto start = std::chrono::steady_clock::now();
  ShapeKey key{dtypeBytes(dtype), g.batch, g.m, g.n, g.k};

  if (g.batch > 0 && g.m > 0 && g.n > 0) {
    if (g.batch <= 1)
      g.strideA = g.strideB = g.strideC = 0;
    // Rows and columns of A and B as stored (transposed operands are
    // stored k x m and n x k).
    int64_t aRows = g.transA ? g.k : g.m, aCols = g.transA ? g.m : g.k;
    int64_t bRows = g.transB ? g.n : g.k, bCols = g.transB ? g.k : g.n;
    // A matrix with one row never uses its leading dimension.
    if (aRows == 1)
      g.lda = std::max(g.lda, aCols);
    if (g.m == 1)
      g.ldc = std::max(g.ldc, g.n);
    if (bRows == 1)
      g.ldb = std::max(g.ldb, bCols);

    checkLeadingDim("ldc", g.ldc, "C", "n", g.n);
    checkNotNull("c", g.c);
    if (g.batch > 1) {
      checkNonNegative("stride_c", g.strideC);
      checkDisjointC(g);
    }
    if (g.k == 0) {
      // linalg semantics with an empty reduction: C = beta * C, computed
      // here on the host.
      if (!backend().hostAccessible())
        throw Error(format("k = 0 (an empty reduction) is not supported on "
                           "the \"%s\" backend, whose memory the host cannot "
                           "scale",
                           backend().name()));
      if (dtype == DType::F32)
        scaleC<float>(g);
      else
        scaleC<double>(g);
    } else {
      checkLeadingDim("lda", g.lda, "A", g.transA ? "m" : "k", aCols);
      checkLeadingDim("ldb", g.ldb, "B", g.transB ? "k" : "n", bCols);
      checkNotNull("a", g.a);
      checkNotNull("b", g.b);
      GemmArgs args{g.transA, g.transB, g.m,   g.n,    g.k,   g.a,
                    g.lda,    g.b,      g.ldb, g.beta, g.c,   g.ldc,
                    g.bf16C};
      if (g.batch == 1) {
        backend().gemm(dtype, args);
      } else {
        checkNonNegative("stride_a", g.strideA);
        checkNonNegative("stride_b", g.strideB);
        backend().gemmBatched(dtype, BatchedGemmArgs{g.batch, args, g.strideA,
                                                     g.strideB, g.strideC});
      }
    }
  }

  if (sync)
    backend().synchronize();
  auto end = std::chrono::steady_clock::now();
  std::chrono::duration<double> elapsed = end - start;
  gemmCounters().record(key, elapsed.count());
  tracer().record(ZRT_TRACE_GEMM, ZRT_NUM_COLLECTIVES, start, end, 0, &g);
}

/// A GEMM of bf16 A and B into f32 C (what a mixed-precision matmul
/// accumulates in). Debian's OpenBLAS is built without its bf16 routine
/// (cblas_sbgemm), so A and B are widened, exactly, into f32 copies (runtime
/// temporaries counted to ZRT_ACTIVATIONS, freed before returning) and
/// multiplied by the f32 GEMM. A stride of 0 (one matrix for the whole
/// batch) widens that one matrix once.
void gemmBF16(GemmCall g, bool batched) {
  // Nothing of A and B is read (or only sizes are invalid): the f32 path's
  // checks and semantics apply unchanged.
  if (g.batch <= 0 || g.m <= 0 || g.n <= 0 || g.k <= 0 || g.strideA < 0 ||
      g.strideB < 0)
    return gemm(DType::F32, g, batched);
  // A backend with a bf16 GEMM of its own (cuBLASLt) reads A and B as
  // they are.
  if (backend().nativeBf16Gemm())
    return gemm(DType::BF16, g, batched);
  if (g.batch <= 1)
    g.strideA = g.strideB = 0;
  struct Widened {
    void *data = nullptr;
    ~Widened() {
      if (data)
        memory().release(data);
    }
  } wa, wb;
  // Rows x cols as stored, `ld` apart; returns the f32 copy, rows packed.
  auto widen = [&](Widened &to, const char *name, const void *from,
                   int64_t &stride, int64_t &ld, int64_t rows, int64_t cols,
                   const char *ldName, const char *dim) {
    checkNotNull(name, from);
    if (rows == 1)
      ld = std::max(ld, cols);
    checkLeadingDim(ldName, ld, name[0] == 'a' ? "A" : "B", dim, cols);
    int64_t count = stride == 0 ? 1 : g.batch;
    to.data = memory().allocate(static_cast<std::size_t>(count * rows * cols) *
                                    sizeof(float),
                                kMinAlignment, ZRT_ACTIVATIONS,
                                /*zeroed=*/false);
    auto *src = static_cast<const uint16_t *>(from);
    auto *dst = static_cast<float *>(to.data);
    for (int64_t i = 0; i < count; ++i)
      for (int64_t r = 0; r < rows; ++r) {
        const uint16_t *row = src + i * stride + r * ld;
        float *out = dst + (i * rows + r) * cols;
        for (int64_t c = 0; c < cols; ++c)
          out[c] = bf16ToFloat(row[c]);
      }
    ld = cols;
    if (stride != 0)
      stride = rows * cols;
    return to.data;
  };
  int64_t aRows = g.transA ? g.k : g.m, aCols = g.transA ? g.m : g.k;
  int64_t bRows = g.transB ? g.n : g.k, bCols = g.transB ? g.k : g.n;
  g.a = widen(wa, "a", g.a, g.strideA, g.lda, aRows, aCols, "lda",
              g.transA ? "m" : "k");
  g.b = widen(wb, "b", g.b, g.strideB, g.ldb, bRows, bCols, "ldb",
              g.transB ? "k" : "n");
  gemm(DType::F32, g, batched);
}

/// A GEMM of bf16 A and B into bf16 C, accumulated in f32 and rounded once
/// (zrt_gemm_bf16_bf16). A backend with a native bf16 GEMM writes C as it
/// is; otherwise the f32 result goes to a temporary (C widened into it
/// first unless beta is 0), which is rounded into C: the same bits as an
/// f32 C followed by arith.truncf.
void gemmBF16Result(GemmCall g, bool batched) {
  if (g.batch <= 0 || g.m <= 0 || g.n <= 0) {
    g.bf16C = true;
    return gemm(DType::BF16, g, batched);
  }
  if (backend().nativeBf16Gemm()) {
    g.bf16C = true;
    return gemm(DType::BF16, g, batched);
  }
  if (batched)
    checkNonNegative("batch", g.batch);
  if (g.batch <= 1)
    g.strideC = 0;
  if (g.m == 1)
    g.ldc = std::max(g.ldc, g.n);
  checkLeadingDim("ldc", g.ldc, "C", "n", g.n);
  checkNotNull("c", g.c);
  if (g.batch > 1) {
    checkNonNegative("stride_c", g.strideC);
    checkDisjointC(g);
  }
  struct Temporary {
    void *data = nullptr;
    ~Temporary() {
      if (data)
        memory().release(data);
    }
  } wide;
  std::size_t count = static_cast<std::size_t>(g.batch * g.m * g.n);
  wide.data = memory().allocate(count * sizeof(float), kMinAlignment,
                                ZRT_ACTIVATIONS, /*zeroed=*/false);
  auto *c = static_cast<uint16_t *>(g.c);
  auto *f = static_cast<float *>(wide.data);
  auto forEach = [&](auto &&fn) {
    for (int64_t i = 0; i < g.batch; ++i)
      for (int64_t r = 0; r < g.m; ++r)
        for (int64_t j = 0; j < g.n; ++j)
          fn(c[i * g.strideC + r * g.ldc + j], f[(i * g.m + r) * g.n + j]);
  };
  if (g.beta != 0)
    forEach([](uint16_t &bits, float &x) { x = bf16ToFloat(bits); });
  GemmCall wideCall = g;
  wideCall.c = wide.data;
  wideCall.ldc = g.n;
  wideCall.strideC = g.m * g.n;
  gemmBF16(wideCall, batched);
  forEach([](uint16_t &bits, float &x) { bits = floatToBF16(x); });
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

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
        backend().dropMark(mark);
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
          mark = backend().markCompute();
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

/// The name of `entry` for one descriptor, kept for the life of the
/// process (a started collective reports it from the communication
/// thread).
const char *collectiveEntry(const char *entry, zrt_collective kind,
                            zrt_reduction reduction, zrt_element_type type) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::string> *names =
      new std::unordered_map<std::string, std::string>();
  static const char *const reductions[] = {"", " sum", " max"};
  static const char *const types[] = {"f32", "f64", "bf16"};
  std::string name = format("%s(%s%s %s)", entry, collectiveName(kind),
                            reductions[reduction], types[type]);
  std::lock_guard<std::mutex> lock(mutex);
  return names->try_emplace(name, name).first->second.c_str();
}

/// Decodes `op` (runtime.h, zrt_make_collective_op) for `entry`, which
/// takes scalars by value when `scalar`; throws an Error naming what is
/// wrong with it.
Collective decodeCollective(const char *entry, zrt_collective_op op,
                            bool scalar) {
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
  c.entry = collectiveEntry(entry, c.kind,
                            static_cast<zrt_reduction>(reduction),
                            static_cast<zrt_element_type>(type));
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
// Temporaries of the collectives (Comm.h)
//===----------------------------------------------------------------------===//

void *zero::runtime::allocateCommBuffer(std::size_t bytes) {
  return memory().allocate(bytes, kMinAlignment, ZRT_COMM, /*zeroed=*/false);
}

void zero::runtime::copyRuntimeBuffer(void *dst, const void *src,
                                      std::size_t bytes) {
  backend().copy(dst, src, bytes);
}

void zero::runtime::registerTestBackend(const char *name, Backend &backend) {
  std::lock_guard<std::mutex> lock(initMutex);
  testBackends().emplace_back(name, &backend);
}

bool zero::runtime::runtimeBuffersOnHost() {
  return backend().hostAccessible();
}

Backend *zero::runtime::deviceCollectives(int ranks) {
  Backend &b = backend();
  if (b.hostAccessible())
    return nullptr;
  if (!b.hasDeviceCollectives())
    throw Error(format("collectives over %d ranks on the \"%s\" backend need "
                       "NCCL, and this zero-runtime was built without "
                       "nccl.h: rebuild it where the CUDA toolkit has NCCL, "
                       "run a target=cuda step on one rank, or compile it "
                       "for target=cpu",
                       ranks, b.name()));
  return &b;
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

int zrt_init(const char *backendName, int num_threads) {
  return guarded("zrt_init", [&] { init(backendName, num_threads); }) ? 0 : 1;
}

void zrt_shutdown(void) {
  if (!guarded("zrt_shutdown", [] {
        {
          std::lock_guard<std::mutex> lock(initMutex);
          activeBackend.store(nullptr);
        }
        NvmeStore::get().close();
        memory().releaseCached();
        std::string error = CommQueue::get().drain();
        if (!error.empty())
          throw Error("a started collective failed: " + error);
        comm::finalizeWorld();
      }))
    reportFatal();
}

const char *zrt_last_error(void) { return lastError; }

void zrt_set_fatal_handler(zrt_fatal_handler handler) {
  fatalHandler.store(handler);
}

const char *zrt_category_name(zrt_category category) {
  return categoryName(categoryValue(category));
}

void *zrt_alloc(size_t bytes, zrt_category category) {
  void *ptr = nullptr;
  guarded("zrt_alloc", [&] {
    ptr = memory().allocate(bytes, kMinAlignment, categoryValue(category),
                            /*zeroed=*/true);
  });
  return ptr;
}

void *zrt_alloc_host(size_t bytes, zrt_category category) {
  void *ptr = nullptr;
  guarded("zrt_alloc_host", [&] {
    ptr = memory().allocate(bytes, kMinAlignment, categoryValue(category),
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
        int value = categoryValue(category);
        if (!validCategory(value))
          throw Error(format("invalid category %d", value));
        generatedCategory.store(value);
      }))
    reportFatal();
}

void zrt_set_generated_space(zrt_space space) {
  if (!guarded("zrt_set_generated_space", [&] {
        int value = static_cast<int>(space);
        if (value != ZRT_SPACE_DEVICE && value != ZRT_SPACE_HOST)
          throw Error(format("invalid memory space %d", value));
        generatedSpace.store(value);
      }))
    reportFatal();
}

//===----------------------------------------------------------------------===//
// Generated code for target=cuda
//===----------------------------------------------------------------------===//

namespace {

/// Launches and seconds per kernel (zrt_get_kernel_stats), by the function
/// handle generated code launches. Entries (and their names) stay for the
/// process's life; a reset zeroes their counts.
class KernelProfile {
public:
  void name(void *function, const char *kernel) {
    std::lock_guard<std::mutex> lock(mutex);
    if (index.try_emplace(function, entries.size()).second)
      entries.push_back(Entry{kernel, 0, 0.0});
  }
  void record(void *function, double seconds) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = index.find(function);
    if (it == index.end())
      return;
    ++entries[it->second].launches;
    entries[it->second].seconds += seconds;
  }
  void reset() {
    std::lock_guard<std::mutex> lock(mutex);
    for (Entry &e : entries)
      e.launches = 0, e.seconds = 0;
  }
  std::size_t count() {
    std::lock_guard<std::mutex> lock(mutex);
    return entries.size();
  }
  bool get(std::size_t i, zrt_kernel_stats &out) {
    std::lock_guard<std::mutex> lock(mutex);
    if (i >= entries.size())
      return false;
    out = zrt_kernel_stats{entries[i].name.c_str(), entries[i].launches,
                           entries[i].seconds};
    return true;
  }

private:
  struct Entry {
    std::string name;
    uint64_t launches;
    double seconds;
  };
  std::mutex mutex;
  std::unordered_map<void *, std::size_t> index;
  std::deque<Entry> entries; // stable: names are handed out
};

KernelProfile &kernelProfile() {
  static KernelProfile *instance = new KernelProfile();
  return *instance;
}

/// A kernel image recorded by mgpuModuleLoad (a global constructor, which
/// runs before zrt_init chooses a device), loaded into the backend's
/// context at its first mgpuModuleGetFunction. Generated code asks for the
/// function at every launch, so functions are kept by name.
struct KernelModule {
  const void *data;
  size_t size;
  std::mutex mutex;
  Backend *loadedBy = nullptr;
  void *loaded = nullptr;
  std::unordered_map<std::string, void *> functions;

  KernelModule(const void *data, size_t size) : data(data), size(size) {}

  void *function(const char *name) {
    Backend &b = backend();
    std::lock_guard<std::mutex> lock(mutex);
    if (loadedBy != &b) {
      if (!data)
        throw Error("the kernel module's image is NULL");
      loaded = b.loadModule(data);
      loadedBy = &b;
      functions.clear();
    }
    auto it = functions.find(name);
    if (it != functions.end())
      return it->second;
    void *f = b.moduleFunction(loaded, name);
    functions.emplace(name, f);
    kernelProfile().name(f, name);
    return f;
  }
};

/// The arguments of a copy entry point: whether there is anything to
/// copy; throws Error for a negative count or a null pointer.
bool checkCopy(const void *dst, const void *src, int64_t bytes) {
  if (bytes < 0)
    throw Error(format("bytes = %lld is negative", static_cast<long long>(bytes)));
  if (bytes > 0 && (!dst || !src))
    throw Error(std::string(!dst ? "dst" : "src") + " is NULL");
  return bytes > 0;
}

/// One of the copy entry points: checks the arguments, then has the
/// backend copy.
void copyEntry(const char *name, void *dst, const void *src, int64_t bytes,
               void (Backend::*copy)(void *, const void *, std::size_t)) {
  if (!guarded(name, [&] {
        if (checkCopy(dst, src, bytes))
          (backend().*copy)(dst, src, static_cast<size_t>(bytes));
      }))
    reportFatal();
}

} // namespace

void zrt_copy_to_host(void *dst, const void *src, int64_t bytes) {
  copyEntry("zrt_copy_to_host", dst, src, bytes, &Backend::copyToHost);
}

void zrt_copy_from_host(void *dst, const void *src, int64_t bytes) {
  copyEntry("zrt_copy_from_host", dst, src, bytes, &Backend::copyFromHost);
}

void zrt_copy(void *dst, const void *src, int64_t bytes) {
  copyEntry("zrt_copy", dst, src, bytes, &Backend::copy);
}

int64_t zrt_copy_start(const void *src, void *dst, int64_t bytes) {
  int64_t request = kCopyRequestTag | kNoCopy;
  if (!guarded("zrt_copy_start", [&] {
        if (checkCopy(dst, src, bytes))
          request = kCopyRequestTag |
                    backend().copyStart(dst, src, static_cast<size_t>(bytes));
      }))
    reportFatal();
  return request;
}

int zrt_host_accessible(void) {
  int result = 1;
  if (!guarded("zrt_host_accessible",
               [&] { result = backend().hostAccessible() ? 1 : 0; }))
    reportFatal();
  return result;
}

void zrt_synchronize(void) {
  if (!guarded("zrt_synchronize", [] { backend().synchronize(); }))
    reportFatal();
}

int zrt_set_tf32(int enable) {
  int previous = 0;
  if (!guarded("zrt_set_tf32", [&] {
        previous = backend().setTf32(enable != 0) ? 1 : 0;
      }))
    reportFatal();
  return previous;
}

void *zrt_gpu_stream(void) {
  void *stream = nullptr;
  if (!guarded("zrt_gpu_stream", [&] { stream = backend().stream(); }))
    reportFatal();
  return stream;
}

void *mgpuModuleLoad(void *data, size_t size) {
  // Never fails: a global constructor has nobody to report to (a NULL
  // module is reported at its first function).
  return new (std::nothrow) KernelModule(data, size);
}

void *mgpuModuleLoadJIT(void *data, int opt_level) {
  (void)opt_level;
  // PTX text (gpu-format=isa), NUL-terminated: the driver compiles it.
  return new (std::nothrow)
      KernelModule(data, data ? std::strlen(static_cast<char *>(data)) : 0);
}

void mgpuModuleUnload(void *module) {
  // A global destructor, after zrt_shutdown: the loaded module goes with
  // the backend's context; only the record is freed here.
  delete static_cast<KernelModule *>(module);
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  void *f = nullptr;
  if (!guarded("mgpuModuleGetFunction", [&] {
        if (!module)
          throw Error("the kernel module is NULL (out of memory at start-up)");
        if (!name)
          throw Error("the kernel name is NULL");
        f = static_cast<KernelModule *>(module)->function(name);
      }))
    reportFatal();
  return f;
}

void mgpuLaunchKernel(void *function, intptr_t grid_x, intptr_t grid_y,
                      intptr_t grid_z, intptr_t block_x, intptr_t block_y,
                      intptr_t block_z, int32_t shared_bytes, void *stream,
                      void **params, void **extra, size_t param_count) {
  (void)param_count;
  if (!guarded("mgpuLaunchKernel", [&] {
        Backend &b = backend();
        // A backend without kernels says so before anything else.
        void *computeStream = b.stream();
        if (!function)
          throw Error("the kernel function is NULL");
        if (extra)
          throw Error("kernel parameters in `extra` are not supported");
        if (stream != computeStream)
          throw Error("the launch's stream is not the runtime's compute "
                      "stream (zrt_gpu_stream)");
        const int64_t grid[3] = {grid_x, grid_y, grid_z};
        const int64_t block[3] = {block_x, block_y, block_z};
        const bool sync = syncTiming.load(std::memory_order_relaxed);
        if (sync)
          b.synchronize();
        auto start = std::chrono::steady_clock::now();
        b.launch(function, grid, block, shared_bytes, params);
        if (sync)
          b.synchronize();
        kernelProfile().record(
            function, std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());
      }))
    reportFatal();
}

void zrt_gemm_f32(int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                  const float *b, int64_t ldb, float beta, float *c,
                  int64_t ldc) {
  if (!guarded("zrt_gemm_f32", [&] {
        gemm(DType::F32,
             GemmCall{trans_a != 0, trans_b != 0, 1, m, n, k, a, 0, lda, b, 0,
                      ldb, beta, c, 0, ldc},
             false);
      }))
    reportFatal();
}

void zrt_gemm_f64(int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
                  const double *b, int64_t ldb, double beta, double *c,
                  int64_t ldc) {
  if (!guarded("zrt_gemm_f64", [&] {
        gemm(DType::F64,
             GemmCall{trans_a != 0, trans_b != 0, 1, m, n, k, a, 0, lda, b, 0,
                      ldb, beta, c, 0, ldc},
             false);
      }))
    reportFatal();
}

void zrt_gemm_bf16_f32(int32_t trans_a, int32_t trans_b, int64_t m, int64_t n,
                       int64_t k, const uint16_t *a, int64_t lda,
                       const uint16_t *b, int64_t ldb, float beta, float *c,
                       int64_t ldc) {
  if (!guarded("zrt_gemm_bf16_f32", [&] {
        gemmBF16(GemmCall{trans_a != 0, trans_b != 0, 1, m, n, k, a, 0, lda,
                          b, 0, ldb, beta, c, 0, ldc},
                 false);
      }))
    reportFatal();
}

void zrt_gemm_batched_bf16_f32(int32_t trans_a, int32_t trans_b,
                               int64_t batch, int64_t m, int64_t n, int64_t k,
                               const uint16_t *a, int64_t stride_a,
                               int64_t lda, const uint16_t *b,
                               int64_t stride_b, int64_t ldb, float beta,
                               float *c, int64_t stride_c, int64_t ldc) {
  if (!guarded("zrt_gemm_batched_bf16_f32", [&] {
        gemmBF16(GemmCall{trans_a != 0, trans_b != 0, batch, m, n, k, a,
                          stride_a, lda, b, stride_b, ldb, beta, c, stride_c,
                          ldc},
                 true);
      }))
    reportFatal();
}

void zrt_gemm_bf16_bf16(int32_t trans_a, int32_t trans_b, int64_t m,
                        int64_t n, int64_t k, const uint16_t *a, int64_t lda,
                        const uint16_t *b, int64_t ldb, float beta,
                        uint16_t *c, int64_t ldc) {
  if (!guarded("zrt_gemm_bf16_bf16", [&] {
        gemmBF16Result(GemmCall{trans_a != 0, trans_b != 0, 1, m, n, k, a, 0,
                                lda, b, 0, ldb, beta, c, 0, ldc},
                       false);
      }))
    reportFatal();
}

void zrt_gemm_batched_bf16_bf16(int32_t trans_a, int32_t trans_b,
                                int64_t batch, int64_t m, int64_t n,
                                int64_t k, const uint16_t *a,
                                int64_t stride_a, int64_t lda,
                                const uint16_t *b, int64_t stride_b,
                                int64_t ldb, float beta, uint16_t *c,
                                int64_t stride_c, int64_t ldc) {
  if (!guarded("zrt_gemm_batched_bf16_bf16", [&] {
        gemmBF16Result(GemmCall{trans_a != 0, trans_b != 0, batch, m, n, k, a,
                                stride_a, lda, b, stride_b, ldb, beta, c,
                                stride_c, ldc},
                       true);
      }))
    reportFatal();
}

void zrt_gemm_batched_f32(int32_t trans_a, int32_t trans_b,
                          int64_t batch, int64_t m, int64_t n, int64_t k,
                          const float *a, int64_t stride_a, int64_t lda,
                          const float *b, int64_t stride_b, int64_t ldb,
                          float beta, float *c, int64_t stride_c, int64_t ldc) {
  if (!guarded("zrt_gemm_batched_f32", [&] {
        gemm(DType::F32,
             GemmCall{trans_a != 0, trans_b != 0, batch, m, n, k, a, stride_a, lda,
                      b, stride_b, ldb, beta,
                      c, stride_c, ldc},
             true);
      }))
    reportFatal();
}

void zrt_gemm_batched_f64(int32_t trans_a, int32_t trans_b,
                          int64_t batch, int64_t m, int64_t n, int64_t k,
                          const double *a, int64_t stride_a, int64_t lda,
                          const double *b, int64_t stride_b, int64_t ldb,
                          double beta, double *c, int64_t stride_c,
                          int64_t ldc) {
  if (!guarded("zrt_gemm_batched_f64", [&] {
        gemm(DType::F64,
             GemmCall{trans_a != 0, trans_b != 0, batch, m, n, k, a, stride_a, lda,
                      b, stride_b, ldb, beta,
                      c, stride_c, ldc},
             true);
      }))
    reportFatal();
}

void zrt_get_gemm_stats(zrt_gemm_stats *out) {
  if (out &&
      !guarded("zrt_get_gemm_stats", [&] { *out = gemmCounters().get(); }))
    reportFatal();
}

size_t zrt_gemm_shape_count(void) {
  size_t count = 0;
  if (!guarded("zrt_gemm_shape_count",
               [&] { count = gemmCounters().shapeCount(); }))
    reportFatal();
  return count;
}

int zrt_get_gemm_shape(size_t index, zrt_gemm_shape *out) {
  bool ok = guarded("zrt_get_gemm_shape", [&] {
    if (!out)
      throw Error("out is NULL");
    if (!gemmCounters().shape(index, *out))
      throw Error(format("index %zu is out of range (%zu shapes)", index,
                         gemmCounters().shapeCount()));
  });
  return ok ? 0 : 1;
}

int zrt_get_gemm_backend(zrt_gemm_backend *out) {
  // The strings stay valid until the next call: one copy per process.
  static GemmKernelInfo info;
  static std::mutex mutex;
  return guarded("zrt_get_gemm_backend",
                 [&] {
                   if (!out)
                     throw Error("out is NULL");
                   std::lock_guard<std::mutex> lock(mutex);
                   info = backend().gemmKernel();
                   *out = zrt_gemm_backend{info.library.c_str(),
                                           info.kernel.c_str(),
                                           info.detected.c_str(),
                                           info.chosenBy.c_str()};
                 })
             ? 0
             : 1;
}

void zrt_reset_gemm_stats(void) {
  if (!guarded("zrt_reset_gemm_stats", [&] {
        gemmCounters().reset();
        kernelProfile().reset();
      }))
    reportFatal();
}

int zrt_set_sync_timing(int enable) {
  return syncTiming.exchange(enable != 0) ? 1 : 0;
}

size_t zrt_kernel_stats_count(void) { return kernelProfile().count(); }

int zrt_get_kernel_stats(size_t index, zrt_kernel_stats *out) {
  return guarded("zrt_get_kernel_stats",
                 [&] {
                   if (!out)
                     throw Error("out is NULL");
                   if (!kernelProfile().get(index, *out))
                     throw Error(format("index %zu is out of range (%zu "
                                        "kernels)",
                                        index, kernelProfile().count()));
                 })
             ? 0
             : 1;
}

namespace {
/// zrt_parallel_for's ranges: chunk i of `chunks` over [0, n).
struct ParallelRanges {
  zrt_parallel_body body;
  void *context;
  int64_t n, chunks;

  static void run(void *self, int64_t i) {
    auto *r = static_cast<ParallelRanges *>(self);
    // i * n cannot overflow: i < chunks <= threads, n < 2^63 / threads is
    // checked by the caller.
    int64_t begin = i * r->n / r->chunks, end = (i + 1) * r->n / r->chunks;
    if (begin < end)
      r->body(r->context, begin, end);
  }
};
} // namespace

void zrt_parallel_for(int64_t n, zrt_parallel_body body, void *context) {
  if (!guarded("zrt_parallel_for", [&] {
        if (!body)
          throw Error("body is NULL");
        if (n <= 0)
          return;
        backend();
        ThreadPool &pool = ThreadPool::get();
        int64_t threads = pool.threads();
        if (threads <= 1 || n == 1 ||
            n > std::numeric_limits<int64_t>::max() / threads) {
          body(context, 0, n);
          return;
        }
        ParallelRanges ranges{body, context, n, std::min<int64_t>(n, threads)};
        pool.run(ranges.chunks, &ParallelRanges::run, &ranges);
      }))
    reportFatal();
}

int zrt_get_num_threads(void) {
  int threads = 1;
  if (!guarded("zrt_get_num_threads", [&] {
        backend();
        threads = ThreadPool::get().threads();
      }))
    reportFatal();
  return threads;
}

int zrt_world_rank(void) {
  int rank = 0;
  if (!guarded("zrt_world_rank", [&] { rank = comm::rank(); }))
    reportFatal();
  return rank;
}

int zrt_world_size(void) {
  int size = 1;
  if (!guarded("zrt_world_size", [&] { size = comm::size(); }))
    reportFatal();
  return size;
}

void zrt_abort(const char *message) { comm::terminate(message); }

void zrt_abort_all(const char *message) {
  int rank = 0, size = 1;
  // A world that cannot be set up is a world of this rank alone.
  if (guarded("zrt_abort_all", [&] {
        rank = comm::rank();
        size = comm::size();
      }) &&
      size > 1 && rank != 0)
    std::this_thread::sleep_for(
        std::chrono::seconds(ZRT_ABORT_ALL_GRACE_SECONDS));
  comm::terminate(message);
}

void zrt_collective_run(zrt_collective_op op, const void *in, void *out,
                        int64_t count) {
  Collective c;
  if (!guarded("zrt_collective_run",
               [&] { c = decodeCollective("zrt_collective_run", op, false); })) {
    reportFatal();
    return;
  }
  collective(c.entry, c.kind, [&] { return runOnWorld(c, in, out, count); });
}

int64_t zrt_collective_start(zrt_collective_op op, const void *in, void *out,
                             int64_t count) {
  Collective c;
  if (!guarded("zrt_collective_start", [&] {
        c = decodeCollective("zrt_collective_start", op, false);
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
            backend().copyWait(handle);
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
        c = decodeCollective("zrt_collective_scalar", op, true);
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
  // Copied as categoryValue does: C callers may pass any int.
  std::underlying_type_t<zrt_collective> value;
  static_assert(sizeof value == sizeof collective);
  std::memcpy(&value, &collective, sizeof value);
  return collectiveName(static_cast<int>(value));
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

//===----------------------------------------------------------------------===//
// Tracing
//===----------------------------------------------------------------------===//

void zrt_trace_start(void) { tracer().start(); }

void zrt_trace_stop(void) { tracer().stop(); }

size_t zrt_trace_count(void) { return tracer().count(); }

int zrt_trace_get(size_t index, zrt_trace_event *out) {
  return guarded("zrt_trace_get",
                 [&] {
                   if (!out)
                     throw Error("out is NULL");
                   if (!tracer().get(index, *out))
                     throw Error("index " + std::to_string(index) +
                                 " is past the " +
                                 std::to_string(tracer().count()) +
                                 " events recorded");
                 })
             ? 0
             : 1;
}

//===----------------------------------------------------------------------===//
// NVMe offload
//===----------------------------------------------------------------------===//

namespace {

/// The staging buffer of a driver's blocking transfer: the runtime's own,
/// uncounted (drivers transfer between steps, and the step's figures stay
/// its own).
void *allocateStaging(std::size_t bytes, int) {
  return std::aligned_alloc(NvmeStore::kBlock, bytes);
}

void freeStaging(void *ptr) { std::free(ptr); }

} // namespace

int zrt_nvme_open(const char *dir) {
  return guarded("zrt_nvme_open",
                 [&] {
                   if (!dir || !*dir)
                     throw Error("no directory given");
                   NvmeStore::get().open(dir, zrt_world_rank());
                 })
             ? 0
             : 1;
}

void zrt_nvme_close(void) {
  if (!guarded("zrt_nvme_close", [] { NvmeStore::get().close(); }))
    reportFatal();
}

int64_t zrt_nvme_alloc(size_t bytes, zrt_category category) {
  int64_t handle = 0;
  guarded("zrt_nvme_alloc", [&] {
    int c = categoryValue(category);
    if (!validCategory(c))
      throw Error(format("invalid category %d", c));
    handle = NvmeStore::get().allocate(bytes, c);
  });
  return handle;
}

namespace {

/// A driver's blocking transfer; 0, or 1 with zrt_last_error() set.
int blockingTransfer(const char *entry, int64_t extent, bool write,
                     const void *data, size_t bytes) {
  return guarded(entry,
                 [&] {
                   checkNotNull(write ? "in" : "out", bytes ? data : &bytes);
                   NvmeStore::get().transfer(extent, write,
                                             const_cast<void *>(data), bytes,
                                             allocateStaging, freeStaging);
                 })
             ? 0
             : 1;
}

/// Generated code's started transfer; failures go to the fatal handler.
int64_t startTransfer(const char *entry, int64_t extent, bool write,
                      const void *buffer, int64_t bytes) {
  int64_t request = 0;
  if (!guarded(entry, [&] {
        checkNonNegative("bytes", bytes);
        request = NvmeStore::get().start(extent, write,
                                         const_cast<void *>(buffer),
                                         static_cast<size_t>(bytes));
      }))
    reportFatal();
  return request;
}

} // namespace

int zrt_nvme_read(int64_t extent, void *out, size_t bytes) {
  return blockingTransfer("zrt_nvme_read", extent, false, out, bytes);
}

int zrt_nvme_write(int64_t extent, const void *in, size_t bytes) {
  return blockingTransfer("zrt_nvme_write", extent, true, in, bytes);
}

int64_t zrt_nvme_read_start(int64_t extent, void *buffer, int64_t bytes) {
  return startTransfer("zrt_nvme_read_start", extent, false, buffer, bytes);
}

int64_t zrt_nvme_write_start(int64_t extent, const void *buffer,
                             int64_t bytes) {
  return startTransfer("zrt_nvme_write_start", extent, true, buffer, bytes);
}

void zrt_get_nvme_stats(zrt_nvme_stats *out) {
  if (!out)
    return;
  if (!guarded("zrt_get_nvme_stats", [&] {
        NvmeStore::Stats s = NvmeStore::get().stats();
        *out = zrt_nvme_stats{};
        for (int c = 0; c < ZRT_NUM_CATEGORIES; ++c)
          out->reserved[c] = s.reserved[c];
        out->file_bytes = s.fileBytes;
        out->disk_bytes = s.diskBytes;
        out->read_bytes = s.readBytes;
        out->written_bytes = s.writtenBytes;
        out->reads = s.reads;
        out->writes = s.writes;
        out->wait_seconds = s.waitSeconds;
      }))
    reportFatal();
}

void zrt_reset_nvme_stats(void) {
  if (!guarded("zrt_reset_nvme_stats",
               [] { NvmeStore::get().resetCounters(); }))
    reportFatal();
}
