//===- NvmeEntryPoints.cpp - The NVMe tier's C ABI ------------------------===//
//
// zrt_nvme_*: the entry points of the NVMe offload tier, whose extents and
// io_uring transfers are NvmeStore's (Nvme.cpp). Drivers' transfers block
// and return an error code; generated code's are started, completed by
// zrt_wait, and their failures go to the fatal handler.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include "Nvme.h"

#include <cstdlib>

using namespace zero::runtime;

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
    int c = enumValue(category);
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
