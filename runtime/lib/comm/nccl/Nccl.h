//===- Nccl.h - The CUDA backend's collectives ------------------*- C++ -*-===//
//
// Collectives over several ranks of the CUDA backend's device memory: NCCL
// on a communication stream of its own. A collective waits for an event of
// the compute stream taken when it was started (markCompute), so it
// overlaps the compute work queued after its start; its completion is an
// event of the communication stream that the thread running it polls
// (collectiveDone), with the deadline Comm.cpp keeps. Compute work after
// the collective's wait is queued only once that event has completed, so it
// needs no event.
//
// The members are the Backend's device collectives (Backend.h says what
// each does), which CudaBackend forwards here. Only built where the CUDA
// headers have nccl.h (ZERO_RUNTIME_HAVE_NCCL).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_COMM_NCCL_NCCL_H
#define ZERO_RUNTIME_LIB_COMM_NCCL_NCCL_H

#include "backends/cuda/CudaContext.h"

#ifdef ZERO_RUNTIME_HAVE_NCCL

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace zero::runtime {

class NcclCollectives {
public:
  /// The collectives of the backend whose context is `cuda`.
  explicit NcclCollectives(CudaContext &cuda) : cuda(cuda) {}

  void
  openCollectives(int rank, int size,
                  const std::function<void(void *, std::size_t)> &broadcast);
  int64_t markCompute();
  void dropMark(int64_t mark) noexcept;
  int64_t collectiveStart(const DeviceCollective &c, int64_t mark);
  bool collectiveDone(int64_t handle);
  void abortCollectives() noexcept;
  void closeCollectives();

private:
  /// A slot of commEvents, reused or new; the caller holds ncclMutex.
  std::size_t takeCommEvent();
  std::string ncclMessage(ncclResult_t r, const std::string &what) const;
  void checkNccl(ncclResult_t r, const std::string &what) const;

  CudaContext &cuda;
  /// NCCL, its communicator and stream, and events (a start's mark of the
  /// compute stream, a collective's completion) by slot; slots of spent
  /// events are reused.
  NcclApi nccl;
  void *ncclLib = nullptr;
  ncclComm_t ncclComm = nullptr;
  std::mutex ncclMutex;
  CUstream commStream = nullptr;
  std::vector<CUevent> commEvents;
  std::vector<std::size_t> freeCommEvents;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_HAVE_NCCL

#endif // ZERO_RUNTIME_LIB_COMM_NCCL_NCCL_H
