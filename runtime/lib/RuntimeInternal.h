//===- RuntimeInternal.h - What the C ABI's files share ---------*- C++ -*-===//
//
// The C ABI of runtime.h is implemented by one file per part: Errors.cpp,
// Runtime.cpp (backend selection, init and shutdown, threads, the world),
// Memory.cpp, Gemm.cpp, Collectives.cpp, CudaHooks.cpp, NvmeEntryPoints.cpp
// and Tracing.cpp. This header declares only what more than one of them
// uses; whatever a single file uses stays in that file's anonymous
// namespace.
//
// Every entry point goes through `guarded`, which turns an exception into
// lastError; the fatal handler is called (reportFatal) only after `guarded`
// has returned, with no lock held and no object with a destructor alive in
// the runtime's frames, so a handler may leave by longjmp or by throwing.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_RUNTIMEINTERNAL_H
#define ZERO_RUNTIME_LIB_RUNTIMEINTERNAL_H

#include "zero/runtime.h"

#include "Backend.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace zero::runtime {

//===----------------------------------------------------------------------===//
// Errors (Errors.cpp)
//===----------------------------------------------------------------------===//

constexpr std::size_t kErrorCapacity = 1024;
/// The message of the most recent failure on this thread (zrt_last_error).
extern thread_local char lastError[kErrorCapacity];

/// Records "<entry>: <message>" as this thread's lastError.
void setLastError(const char *entry, const char *message) noexcept;

/// Passes the failure recorded in lastError to the fatal handler. The
/// message is copied first, so a handler that calls back into the runtime
/// cannot overwrite it.
void reportFatal();

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

/// printf into a std::string (at most 511 characters).
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

//===----------------------------------------------------------------------===//
// Backend selection (Runtime.cpp)
//===----------------------------------------------------------------------===//

/// The selected backend, selecting "cpu" with default settings if none is.
Backend &backend();

//===----------------------------------------------------------------------===//
// Memory (Memory.cpp)
//===----------------------------------------------------------------------===//

constexpr std::size_t kMinAlignment = 64;

/// The value of a C enum argument (zrt_category, zrt_space, ...) as an
/// int. C callers (generated code included) may pass any int; in C++
/// loading such a value as the enum type is undefined, so the bits are
/// copied instead.
template <typename Enum> int enumValue(const Enum &e) {
  std::underlying_type_t<Enum> value;
  static_assert(sizeof value == sizeof e);
  std::memcpy(&value, &e, sizeof value);
  return static_cast<int>(value);
}
bool validCategory(int category);
const char *categoryName(int category);

/// A block from the runtime's allocator: `bytes` aligned to max(alignment,
/// 64), zero-filled if `zeroed`, counted to `category` in `space` (a
/// zrt_space). Throws Error.
void *allocateBlock(std::size_t bytes, std::size_t alignment, int category,
                    bool zeroed, int space = ZRT_SPACE_DEVICE);
/// Uncounts a block from allocateBlock and keeps it in the block cache.
/// Throws Error if `ptr` is not a live block.
void freeBlock(void *ptr);
/// Returns every cached block to its backend. Returns the bytes released.
std::size_t releaseCachedBlocks();

/// Requests of zrt_copy_start carry this bit (the backend's copy handle
/// below it), so zrt_wait can tell them from collectives and NVMe
/// transfers (NvmeStore::kRequestTag, bit 62).
constexpr int64_t kCopyRequestTag = int64_t(1) << 61;
/// The request of a copy of no bytes: nothing to wait for.
constexpr int64_t kNoCopy = int64_t(1) << 60;

//===----------------------------------------------------------------------===//
// GEMM (Gemm.cpp) and kernels (CudaHooks.cpp)
//===----------------------------------------------------------------------===//

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

/// Argument checks that throw Error naming the argument (the NVMe entry
/// points use them too).
void checkNonNegative(const char *name, int64_t value);
void checkNotNull(const char *name, const void *ptr);

/// zrt_set_sync_timing: GEMMs and kernel launches wait for the device, so
/// that their seconds are its own.
extern std::atomic<bool> syncTiming;

/// Zeroes the counts of the kernel profile (zrt_reset_gemm_stats).
void resetKernelProfile();

//===----------------------------------------------------------------------===//
// Tracing (Tracing.cpp)
//===----------------------------------------------------------------------===//

using Clock = std::chrono::steady_clock;

/// zrt_trace_*: the events of one traced stretch (zero-run --trace).
class Tracer {
public:
  bool on() const { return enabled.load(std::memory_order_relaxed); }

  void start();
  void stop();
  void record(zrt_trace_kind kind, zrt_collective collective,
              Clock::time_point begin, Clock::time_point end, uint64_t bytes,
              const GemmCall *gemm = nullptr);
  /// A started collective's request, so that its wait names its kind.
  void noteRequest(int64_t request, zrt_collective kind);
  zrt_collective takeRequest(int64_t request);
  std::size_t count();
  bool get(std::size_t index, zrt_trace_event &out);

private:
  std::atomic<bool> enabled{false};
  std::mutex mutex;
  Clock::time_point origin;
  std::vector<zrt_trace_event> events;
  std::unordered_map<int64_t, zrt_collective> requests;
};

Tracer &tracer();

} // namespace zero::runtime

#endif // ZERO_RUNTIME_LIB_RUNTIMEINTERNAL_H
