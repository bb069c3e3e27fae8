//===- CudaMemory.cpp - The CUDA backend's memory spaces ------------------===//
//
// Device memory from cuMemAlloc (in segments) and page-locked host memory
// from cuMemHostAlloc (CudaMemory.h).
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/CudaMemory.h"

#ifdef ZERO_RUNTIME_HAVE_CUDA

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

namespace zero::runtime {
namespace {

/// The device arena's segments: from 2 MiB (the driver's page on sm_90,
/// what a cuMemAlloc holds at least), each new one as large as all before
/// it, up to 1 GiB.
constexpr std::size_t kDevicePageBytes = 2u << 20;
constexpr std::size_t kMinSegmentBytes = kDevicePageBytes;
constexpr std::size_t kMaxSegmentBytes = std::size_t(1) << 30;

} // namespace

//===----------------------------------------------------------------------===//
// The device's memory
//===----------------------------------------------------------------------===//

void CudaMemory::openArena() {
  const char *choice = std::getenv("ZERO_CUDA_ALLOCATOR");
  std::string allocator = choice && *choice ? choice : "segments";
  if (allocator == "driver")
    return;
  if (allocator != "segments")
    throw Error("ZERO_CUDA_ALLOCATOR=" + allocator +
                " is neither segments (the default: blocks carved from "
                "large cuMemAlloc segments) nor driver (a cuMemAlloc per "
                "block)");
  arena = std::make_unique<SegmentArena>(
      kMinSegmentBytes, kMaxSegmentBytes, kDevicePageBytes,
      [this](std::size_t bytes, std::uintptr_t &base) {
        CUdeviceptr ptr = 0;
        CUresult r = cuda.cu.cuMemAlloc_(&ptr, bytes);
        if (r == CUDA_ERROR_OUT_OF_MEMORY)
          return false;
        cuda.check(r, "cuMemAlloc");
        base = static_cast<std::uintptr_t>(ptr);
        return true;
      },
      [this](std::uintptr_t base) {
        if (cuda.makeCurrentNoThrow())
          cuda.cu.cuMemFree_(static_cast<CUdeviceptr>(base));
      });
}

Block CudaMemory::allocate(std::size_t bytes, std::size_t alignment,
                           bool zeroed) {
  cuda.makeCurrent();
  // cuMemAlloc's blocks, and the arena's, start at multiples of 256 bytes.
  if (alignment > 256)
    throw Error("the CUDA backend aligns blocks to 256 bytes, and " +
                std::to_string(alignment) + " were asked for");
  CUdeviceptr ptr = 0;
  if (arena) {
    ptr = static_cast<CUdeviceptr>(arena->allocate(bytes));
  } else {
    CUresult r = cuda.cu.cuMemAlloc_(&ptr, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      throw std::bad_alloc();
    cuda.check(r, "cuMemAlloc");
  }
  Block block;
  block.ptr = block.handle = reinterpret_cast<void *>(ptr);
  if (zeroed) {
    CUresult z = cuda.cu.cuMemsetD8Async_(ptr, 0, bytes, cuda.computeStream);
    if (z != CUDA_SUCCESS) {
      deallocate(block);
      cuda.check(z, "cuMemsetD8Async");
    }
  }
  return block;
}

void CudaMemory::fillZero(void *ptr, std::size_t bytes) {
  cuda.makeCurrent();
  cuda.check(cuda.cu.cuMemsetD8Async_(CudaContext::device(ptr), 0, bytes,
                                      cuda.computeStream),
             "cuMemsetD8Async");
}

void CudaMemory::deallocate(const Block &block) noexcept {
  // An arena block is handed out again at once, which is safe for the
  // reason the runtime's cache is (every use of device memory is in order
  // on the compute stream, or waited for by an event); cuMemFree waits for
  // the device's work that may still use the block.
  if (arena)
    arena->deallocate(reinterpret_cast<std::uintptr_t>(block.handle));
  else if (cuda.makeCurrentNoThrow())
    cuda.cu.cuMemFree_(CudaContext::device(block.handle));
}

void CudaMemory::trim() noexcept {
  if (arena && cuda.makeCurrentNoThrow())
    arena->trim();
}

bool CudaMemory::deviceMemoryInfo(std::size_t &free, std::size_t &total) {
  return cuda.makeCurrentNoThrow() &&
         cuda.cu.cuMemGetInfo_(&free, &total) == CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Page-locked host memory
//===----------------------------------------------------------------------===//

Block PinnedHost::allocate(std::size_t bytes, std::size_t alignment,
                           bool zeroed) {
  // cuMemHostAlloc's blocks are page-aligned.
  if (alignment > 4096)
    throw Error("page-locked host blocks are aligned to 4096 bytes, and " +
                std::to_string(alignment) + " were asked for");
  cuda.makeCurrent();
  void *ptr = nullptr;
  CUresult r = cuda.cu.cuMemHostAlloc_(&ptr, bytes, CU_MEMHOSTALLOC_PORTABLE);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    throw std::bad_alloc();
  cuda.check(r, "cuMemHostAlloc");
  Block block;
  block.ptr = block.handle = ptr;
  if (zeroed)
    std::memset(block.ptr, 0, bytes);
  return block;
}

void PinnedHost::fillZero(void *ptr, std::size_t bytes) {
  std::memset(ptr, 0, bytes);
}

void PinnedHost::deallocate(const Block &block) noexcept {
  if (cuda.makeCurrentNoThrow())
    cuda.cu.cuMemFreeHost_(block.handle);
}

} // namespace zero::runtime

#endif // ZERO_RUNTIME_HAVE_CUDA
