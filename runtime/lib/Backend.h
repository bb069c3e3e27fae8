//===- Backend.h - zero-runtime backends ------------------------*- C++ -*-===//
//
// What zrt_init selects: a backend is the parts it is made of, each behind
// one of the runtime's three small interfaces (as IREE's HAL keeps its
// allocator, device and channel apart):
//
//   Allocator.h      the blocks of a memory space (device and host)
//   Compute.h        GEMMs, copies, synchronization; Kernels, a GPU's
//                    stream, kernel images and launches
//   Communicator.h   collectives across the world's ranks
//
// Two are built: the CPU backend (backends/cpu: host memory in both spaces,
// OpenBLAS) and the CUDA backend (backends/cuda: device memory and
// page-locked host memory, cuBLASLt and kernels on one compute stream, the
// CUDA libraries opened at run time; its collectives NCCL's, comm/nccl).
// Each caller uses the part it needs: the caching allocator (Memory.cpp) an
// Allocator, GEMMs and copies a Compute, target=cuda code's hooks Kernels,
// the world (comm/) a Communicator. A part a backend lacks is null, never an
// implementation that throws.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_BACKEND_H
#define ZERO_RUNTIME_LIB_BACKEND_H

#include "Allocator.h"
#include "Communicator.h"
#include "Compute.h"
#include "Types.h"

namespace zero::runtime {

struct Backend {
  /// "cpu", "cuda", ...
  const char *name;
  /// Runs GEMMs and copies on deviceMemory's blocks, and sets the host's
  /// threads.
  Compute &compute;
  /// ZRT_SPACE_DEVICE's blocks: what the step computes on.
  Allocator &deviceMemory;
  /// ZRT_SPACE_HOST's blocks: host memory next to deviceMemory (the same
  /// allocator where that is host memory already).
  Allocator &hostMemory;
  /// GPU kernels, where the backend runs them; null: none.
  Kernels *kernels = nullptr;
  /// Collectives of deviceMemory's blocks across several ranks, for a
  /// backend whose memory the MPI collectives cannot touch (NCCL); null
  /// where MPI's take its blocks, or where none was built.
  Communicator *communicator = nullptr;
};

/// The process-wide CPU backend (never destroyed, so blocks it handed out
/// stay releasable during static destruction).
Backend &cpuBackend();

/// Makes `backend` selectable by zrt_init as `backend.name`, besides "cpu"
/// and "cuda": for tests that link the runtime statically and need a
/// backend of their own (runtime/test/device-comm-test.cpp: device
/// collectives without a GPU). `backend` must outlive the process's use of
/// it.
void registerTestBackend(Backend &backend);

/// The process-wide CUDA backend, initialized on first use (the CUDA driver
/// and cuBLASLt opened with dlopen, the device chosen, a context and the
/// compute stream created). Throws Error with one line when that fails (no
/// driver, no device, the library missing, a runtime built without the
/// CUDA headers).
Backend &cudaBackend();

} // namespace zero::runtime

#endif // ZERO_RUNTIME_LIB_BACKEND_H
