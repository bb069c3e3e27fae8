/*===- runtime_nvme.h - zero-mlir runtime: NVMe tier ---------------*- C -*-===*
 *
 * The NVMe offload tier: extents of one file per rank, blocking and started
 * transfers, the store's figures.
 *
 * A part of the runtime's C ABI; zero/runtime.h includes every part and
 * states the conventions they share.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZERO_RUNTIME_NVME_H
#define ZERO_RUNTIME_NVME_H

#include "runtime_memory.h"
#include "runtime_setup.h"

#ifdef __cplusplus
extern "C" {
#endif

/*===------------------------------------------------------------------===
 * NVMe offload (zero-offload's optimizer=nvme and params=nvme)
 *===------------------------------------------------------------------===*/

/* Offloaded tensors live in extents of one file per rank,
 * `dir`/zero-rank<R>.nvme, read and written with io_uring through a
 * descriptor opened with O_DIRECT (no page-cache copy stays in RAM). An
 * extent starts at a multiple of 4096 bytes and reserves its size rounded
 * up to 4096; the file holds exactly the reserved extents.
 *
 * zrt_nvme_open creates (or truncates) this rank's file. Returns 0, or
 * nonzero with zrt_last_error() set: `dir` is no directory, its file system
 * refuses O_DIRECT (tmpfs), or io_uring is unavailable. zrt_nvme_close (and
 * zrt_shutdown) waits for transfers in flight, closes the file and removes
 * it. */
ZRT_API int zrt_nvme_open(const char *dir);
ZRT_API void zrt_nvme_close(void);

/* Reserves an extent for `bytes` that reads as zeros, counted to
 * `category` on NVMe (zrt_nvme_stats.reserved). Returns its handle (>= 1),
 * or 0 with zrt_last_error() set (no store open, no space left). */
ZRT_API int64_t zrt_nvme_alloc(size_t bytes, zrt_category category);

/* Blocking transfers for drivers (initialization, checkpoints, dumps): the
 * extent's first `bytes` into `out` (at most its size), or all of its
 * bytes from `in` (`bytes` = its size); any alignment, through a staging
 * buffer of at most 4 MiB of the runtime's own, which no category counts
 * (drivers transfer between steps; the step's figures stay its own).
 * Return 0, or nonzero with zrt_last_error() set. */
ZRT_API int zrt_nvme_read(int64_t extent, void *out, size_t bytes);
ZRT_API int zrt_nvme_write(int64_t extent, const void *in, size_t bytes);

/* Started transfers, for generated code: the whole reserved extent into or
 * from `buffer`, which must be aligned to 4096 bytes and hold `bytes` = the
 * reserved size. Return a request for zrt_wait; the buffer must stay
 * untouched until then. Invalid arguments and I/O errors go to the fatal
 * handler (from zrt_wait for I/O errors). */
ZRT_API int64_t zrt_nvme_read_start(int64_t extent, void *buffer,
                                    int64_t bytes);
ZRT_API int64_t zrt_nvme_write_start(int64_t extent, const void *buffer,
                                     int64_t bytes);

/* What the store holds and has moved: reserved bytes per category, the
 * file's size and the bytes the file system allocated for it, and, since
 * the last reset, bytes and calls of the started and blocking transfers
 * and the seconds callers spent blocked in zrt_wait for transfers. All
 * zero when no store is open. */
typedef struct zrt_nvme_stats {
  uint64_t reserved[ZRT_NUM_CATEGORIES];
  uint64_t file_bytes;
  uint64_t disk_bytes;
  uint64_t read_bytes;
  uint64_t written_bytes;
  uint64_t reads;
  uint64_t writes;
  double wait_seconds;
} zrt_nvme_stats;

/* A snapshot of the store's figures. NULL is a no-op. */
ZRT_API void zrt_get_nvme_stats(zrt_nvme_stats *out);

/* Clears the transfer counters (not the reserved bytes). */
ZRT_API void zrt_reset_nvme_stats(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZERO_RUNTIME_NVME_H */
