//===- Allocator.h - One memory space's blocks ------------------*- C++ -*-===//
//
// The first of the runtime's three interfaces (Backend.h): the blocks of one
// memory space, as the caching layer above it (Memory.cpp) asks for them on
// a cache miss and returns them when the cache is released. Categories,
// accounting and reuse are that layer's, the same for every allocator; an
// allocator only gets memory from its system and gives it back. Three are
// built: host memory (backends/cpu), the CUDA device's memory and the
// page-locked host memory next to it (backends/cuda/CudaMemory.h).
//
// An allocator may throw std::bad_alloc for exhausted memory (Memory.cpp
// then releases its cache and tries once more) and Error for a request it
// cannot take.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_ALLOCATOR_H
#define ZERO_RUNTIME_LIB_ALLOCATOR_H

#include "Types.h"

#include <cstddef>

namespace zero::runtime {

/// A block of an allocator's memory: `ptr` is what the caller sees, `handle`
/// what the allocator needs to release it (for host memory, the base
/// pointer that malloc or calloc returned).
struct Block {
  void *ptr = nullptr;
  void *handle = nullptr;
};

class Allocator {
public:
  virtual ~Allocator() = default;

  /// Whether the host may read and write these blocks directly. If not
  /// (device memory), drivers and the runtime go through the copies of
  /// Compute.
  virtual bool hostAccessible() const { return true; }

  /// Returns `bytes` bytes (bytes >= 1) aligned to `alignment`, a power of
  /// two >= 64: zero-filled if `zeroed`, with unspecified contents otherwise
  /// (so an allocator need not pay for zeroing what the caller overwrites).
  /// Throws std::bad_alloc.
  virtual Block allocate(std::size_t bytes, std::size_t alignment,
                         bool zeroed) = 0;

  /// Sets `bytes` bytes at `ptr`, inside a block from allocate(), to zero:
  /// how a reused block is zero-filled again.
  virtual void fillZero(void *ptr, std::size_t bytes) = 0;

  /// Returns a block from allocate() to the system. Never throws.
  virtual void deallocate(const Block &block) noexcept = 0;

  /// Returns to the system what the allocator holds beyond its live blocks
  /// (the CUDA device's empty segments). Never throws.
  virtual void trim() noexcept {}

  /// The memory this allocator's device has free and in all, as its driver
  /// reports them, for an out-of-memory error to say; false where there is
  /// no such figure (host memory).
  virtual bool deviceMemoryInfo(std::size_t & /*free*/,
                                std::size_t & /*total*/) {
    return false;
  }
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_LIB_ALLOCATOR_H
