//===- Nvme.h - The NVMe tier: extents in a per-rank file --------*- C++ -*-===//
//
// Offloaded tensors (runtime.h, "NVMe offload") live in extents of one file
// per rank, read and written with io_uring on a descriptor opened with
// O_DIRECT, so the bytes go between the device and the caller's buffer
// without the page cache keeping a second copy in RAM. Every extent starts
// at a multiple of kBlock and reserves its size rounded up to kBlock; the
// buffers of started transfers are aligned to kBlock and hold the rounded
// size (zero-offload's staging buffers are allocated so).
//
// Started transfers return a request that zrt_wait completes. Unlike the
// collectives (CommQueue), transfers complete in any order: a request is
// done when all of its chunks are. Only the thread that started a request
// reaps completions (the step's thread; the store takes a lock anyway).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_NVME_H
#define ZERO_RUNTIME_LIB_NVME_H

#include "zero/runtime.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace zero::runtime {

class NvmeStore {
public:
  /// Alignment of extents, transfer buffers and transfer lengths.
  static constexpr std::size_t kBlock = 4096;
  /// Requests of transfers carry this bit, so zrt_wait can tell them from
  /// the communication thread's tickets.
  static constexpr int64_t kRequestTag = int64_t(1) << 62;

  static NvmeStore &get();

  /// Opens (creating or truncating) `dir`/zero-rank<rank>.nvme. Throws
  /// Error with the reason if the directory cannot hold it, the file
  /// system refuses O_DIRECT, or io_uring is unavailable.
  void open(const std::string &dir, int rank);
  bool isOpen() const;
  /// Closes and removes the file; extents become invalid.
  void close();

  /// Reserves an extent of `bytes` (rounded up to kBlock) that reads as
  /// zeros; returns its handle (>= 1).
  int64_t allocate(std::size_t bytes, int category);

  /// Starts a transfer of the extent's reserved bytes into (or with
  /// `write`, from) `buffer` (aligned to kBlock, `bytes` = the reserved
  /// size). Returns the request.
  int64_t start(int64_t extent, bool write, void *buffer, std::size_t bytes);
  /// Completes `request`; returns "" or the failure.
  std::string wait(int64_t request);

  /// A driver's blocking transfer of an extent's first `bytes` (a write:
  /// all of them) from or to `data`, any alignment, through a staging
  /// buffer that `bounce(bytes, category)` allocates and `release` frees.
  void transfer(int64_t extent, bool write, void *data, std::size_t bytes,
                void *(*bounce)(std::size_t, int), void (*release)(void *));

  /// Reserved bytes per category (ZRT_NUM_CATEGORIES entries), the file's
  /// size and the bytes it has allocated on disk, and the transfer
  /// counters.
  struct Stats {
    uint64_t reserved[ZRT_NUM_CATEGORIES] = {};
    uint64_t fileBytes = 0, diskBytes = 0;
    uint64_t readBytes = 0, writtenBytes = 0, reads = 0, writes = 0;
    double waitSeconds = 0;
  };
  Stats stats();
  void resetCounters();
  std::string path() const;

  ~NvmeStore();

private:
  NvmeStore() = default;
  struct Impl;
  std::unique_ptr<Impl> impl;
  mutable std::mutex mutex;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_LIB_NVME_H
