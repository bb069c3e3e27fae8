/*===- runtime_memory.h - zero-mlir runtime: memory ----------------*- C -*-===*
 *
 * Allocation with per-category accounting, the block cache, memory spaces,
 * the allocation hooks of generated code, started copies.
 *
 * A part of the runtime's C ABI; zero/runtime.h includes every part and
 * states the conventions they share.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZERO_RUNTIME_MEMORY_H
#define ZERO_RUNTIME_MEMORY_H

#include "runtime_setup.h"

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Memory
 *===----------------------------------------------------------------------===*/

/* What an allocation holds; every byte allocated through the runtime counts
 * towards exactly one category. */
typedef enum zrt_category {
  ZRT_PARAMS = 0,
  ZRT_GRADS = 1,
  ZRT_OPTIMIZER_STATES = 2,
  ZRT_ACTIVATIONS = 3, /* activations and temporaries */
  ZRT_COMM = 4,        /* communication buffers */
  ZRT_NUM_CATEGORIES = 5
} zrt_category;

/* "params", "grads", "optimizer_states", "activations", "comm"; "unknown"
 * for any other value. The string is static. */
ZRT_API const char *zrt_category_name(zrt_category category);

/* Block cache. Freed blocks are not returned to the system: the runtime
 * keeps them, keyed by size class, and hands them out again to later
 * requests of the same class (a caching allocator), because a training step
 * frees and reallocates the same temporaries every step. A request of
 * `bytes` gets a block of its size class: `bytes` rounded up to a multiple
 * of 64 below 128 KiB (0 bytes: 64) and of 4096 from 128 KiB on; a cached
 * block serves it only if its address has the alignment asked for. Cached
 * blocks are kept until zrt_release_cached or zrt_shutdown, with no other
 * bound (the working set of a step is stable); only when the system cannot
 * satisfy an allocation is the cache released and the allocation tried
 * once more. Caching changes no byte count of zrt_memory_stats except its
 * cached_bytes, reserved_bytes and reserved_peak. */

/* Allocates `bytes` bytes aligned to 64 bytes, zero-filled (also when the
 * block is a reused one: callers may rely on it), and counts them to
 * `category`. `bytes` may be 0 (a unique pointer that must still be freed).
 * Returns NULL with zrt_last_error() set if memory is exhausted or
 * `category` is invalid. */
ZRT_API void *zrt_alloc(size_t bytes, zrt_category category);

/* Frees a block from zrt_alloc or the _mlir_memref_to_llvm_* hooks (the two
 * are interchangeable), uncounts it from the category it was counted to and
 * puts it into the block cache. NULL is a no-op. A pointer that is not a
 * live runtime allocation (never allocated here, an interior pointer, or
 * already freed, whether its block is cached or not) goes to the fatal
 * handler and is left alone. */
ZRT_API void zrt_free(void *ptr);

/* Returns every cached block to the system (cached_bytes becomes 0). Live
 * blocks are not affected. */
ZRT_API void zrt_release_cached(void);

/* Memory spaces. ZRT_SPACE_DEVICE is the selected backend's memory, where
 * the step's buffers live; ZRT_SPACE_HOST is host memory next to it, where
 * zero-offload's optimizer=host keeps the optimizer states (ZeRO-Offload).
 * With the CUDA backend host blocks are page-locked (cuMemHostAlloc), so
 * copies to and from them run asynchronously; with the CPU backend both
 * spaces are the same memory, and the runtime counts them apart, so a step
 * compiled with optimizer=host reports what a device would hold. */
typedef enum zrt_space {
  ZRT_SPACE_DEVICE = 0,
  ZRT_SPACE_HOST = 1
} zrt_space;

/* As zrt_alloc, in host memory (ZRT_SPACE_HOST), counted to `category`
 * among the host_* figures of zrt_memory_stats. zrt_free frees it. */
ZRT_API void *zrt_alloc_host(size_t bytes, zrt_category category);

/* Byte counts of live blocks (current, peak, current_total, peak_total) are
 * exactly the sizes requested, without headers, padding or size-class
 * rounding, and do not depend on the block cache. peak_total is the peak of
 * current_total, not the sum of the per-category peaks. num_allocs and
 * num_frees count successful calls of all allocation and free entry points
 * since the process started.
 *
 * The last three fields say what the runtime really holds from the system:
 * reserved_bytes is the size-class capacity of the live blocks plus
 * cached_bytes, the capacity of the freed blocks kept in the cache;
 * reserved_peak is the peak of reserved_bytes. They leave out what the
 * system allocator adds (headers, alignment padding).
 *
 * current, peak, current_total and peak_total count device memory
 * (ZRT_SPACE_DEVICE); the host_* fields count host memory (ZRT_SPACE_HOST)
 * the same way. num_allocs, num_frees and the cache figures cover both. */
typedef struct zrt_memory_stats {
  uint64_t current[ZRT_NUM_CATEGORIES];
  uint64_t peak[ZRT_NUM_CATEGORIES];
  uint64_t current_total;
  uint64_t peak_total;
  uint64_t num_allocs;
  uint64_t num_frees;
  uint64_t cached_bytes;
  uint64_t reserved_bytes;
  uint64_t reserved_peak;
  uint64_t host_current[ZRT_NUM_CATEGORIES];
  uint64_t host_peak[ZRT_NUM_CATEGORIES];
  uint64_t host_current_total;
  uint64_t host_peak_total;
} zrt_memory_stats;

/* A consistent snapshot of the counters (taken under one lock). NULL is a
 * no-op. */
ZRT_API void zrt_get_memory_stats(zrt_memory_stats *out);

/* Sets every peak (per category, total and reserved) to its current
 * value. */
ZRT_API void zrt_reset_peaks(void);

/* The allocation hooks of MLIR's finalize-memref-to-llvm with
 * use-generic-functions=1. They count to the generated-code category
 * (zrt_set_generated_category, initially ZRT_ACTIVATIONS). They do NOT
 * zero-fill: the contents of the block are unspecified (a reused block
 * keeps what it held), as memref.alloc's are; generated code writes what it
 * allocates before reading it. _mlir_memref_to_llvm_alloc aligns to 64
 * bytes; the aligned variant to max(alignment, 64), and `alignment` must be
 * a power of two (C's aligned_alloc rule that `size` be a multiple of it is
 * not needed). The bytes counted are `size`, exactly as generated code
 * requests them. Failures (memory exhausted, bad alignment, foreign pointer)
 * go to the fatal handler. */
ZRT_API void *_mlir_memref_to_llvm_alloc(size_t size);
ZRT_API void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
ZRT_API void _mlir_memref_to_llvm_free(void *ptr);

/* Sets the category that later allocations by generated code count to (one
 * process-wide setting, not per thread). An invalid category goes to the
 * fatal handler and leaves the setting unchanged. */
ZRT_API void zrt_set_generated_category(zrt_category category);

/* Sets the memory space later allocations by generated code come from
 * (initially ZRT_SPACE_DEVICE; zero-alloc-categories brackets the host
 * buffers of zero.copy_start with it). An invalid space goes to the fatal
 * handler and leaves the setting unchanged. */
ZRT_API void zrt_set_generated_space(zrt_space space);

/* Starts copying `bytes` bytes from `src` to `dst`, one of them device
 * memory and the other host memory (ZRT_SPACE_HOST), or both runtime
 * buffers of any space: zero.copy_start's lowering. The copy begins after
 * the work queued on the backend before it; returns a request that
 * zrt_wait completes, after which `dst` holds the bytes and `src` may
 * change. The CPU backend copies before returning; the CUDA backend copies
 * on a stream of its own. Invalid arguments go to the fatal handler. */
ZRT_API int64_t zrt_copy_start(const void *src, void *dst, int64_t bytes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZERO_RUNTIME_MEMORY_H */
