//===- CudaMemory.h - The CUDA backend's memory spaces ----------*- C++ -*-===//
//
// The CUDA backend's two Allocators (Allocator.h): the device's memory
// (ZRT_SPACE_DEVICE), carved from large cuMemAlloc segments by a
// SegmentArena unless ZERO_CUDA_ALLOCATOR=driver asks for a cuMemAlloc per
// block, zero-filled on the compute stream; and page-locked host memory
// next to it (ZRT_SPACE_HOST). Reuse of freed blocks and the per-category
// accounting happen a layer up, in Memory.cpp, as for host memory: a block
// freed by the host may be handed out again while a kernel queued before
// the free still reads it, which is safe because every use of device memory
// is on the one compute stream, in program order.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_BACKENDS_CUDA_CUDAMEMORY_H
#define ZERO_RUNTIME_LIB_BACKENDS_CUDA_CUDAMEMORY_H

#include "backends/cuda/CudaContext.h"

#ifdef ZERO_RUNTIME_HAVE_CUDA

#include "Allocator.h"
#include "backends/cuda/SegmentArena.h"

#include <cstddef>
#include <memory>

namespace zero::runtime {

/// The device's memory, on the context `cuda` (opened before any block is
/// asked for).
class CudaMemory final : public Allocator {
public:
  explicit CudaMemory(CudaContext &cuda) : cuda(cuda) {}

  /// Device blocks carved from segments (SegmentArena.h), unless
  /// ZERO_CUDA_ALLOCATOR=driver asks for a cuMemAlloc per block. Throws
  /// Error for another value.
  void openArena();

  bool hostAccessible() const override { return false; }
  Block allocate(std::size_t bytes, std::size_t alignment,
                 bool zeroed) override;
  void fillZero(void *ptr, std::size_t bytes) override;
  void deallocate(const Block &block) noexcept override;
  void trim() noexcept override;
  bool deviceMemoryInfo(std::size_t &free, std::size_t &total) override;

private:
  CudaContext &cuda;
  /// Device blocks (null with ZERO_CUDA_ALLOCATOR=driver).
  std::unique_ptr<SegmentArena> arena;
};

/// Host memory next to the device: page-locked blocks (cuMemHostAlloc,
/// mapped into the device's address space), so the copy stream moves them
/// asynchronously. zero-offload's optimizer=host keeps the optimizer states
/// here; the host reads and writes them directly.
class PinnedHost final : public Allocator {
public:
  explicit PinnedHost(CudaContext &cuda) : cuda(cuda) {}

  Block allocate(std::size_t bytes, std::size_t alignment,
                 bool zeroed) override;
  void fillZero(void *ptr, std::size_t bytes) override;
  void deallocate(const Block &block) noexcept override;

private:
  CudaContext &cuda;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_HAVE_CUDA

#endif // ZERO_RUNTIME_LIB_BACKENDS_CUDA_CUDAMEMORY_H
