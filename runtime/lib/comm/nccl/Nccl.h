//===- Nccl.h - The CUDA backend's communicator -----------------*- C++ -*-===//
//
// Collectives over several ranks of the CUDA backend's device memory: NCCL
// on a communication stream of its own, behind the Communicator interface
// (Communicator.h says what each member does). A collective waits for an
// event of the compute stream taken when it was started (markCompute), so
// it overlaps the compute work queued after its start; its completion is an
// event of the communication stream that the thread running it polls
// (done), with the deadline comm/Comm.cpp keeps. Compute work after the
// collective's wait is queued only once that event has completed, so it
// needs no event.
//
// The CUDA backend (backends/cuda/CudaBackend.cpp) makes one on its context
// and hands it out as its Backend::communicator. Only built where the CUDA
// headers have nccl.h (ZERO_RUNTIME_HAVE_NCCL).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_COMM_NCCL_NCCL_H
#define ZERO_RUNTIME_LIB_COMM_NCCL_NCCL_H

#include "Communicator.h"
#include "backends/cuda/CudaContext.h"

#ifdef ZERO_RUNTIME_HAVE_NCCL

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace zero::runtime {

class NcclCommunicator final : public Communicator {
public:
  /// The communicator of the backend whose context is `cuda`.
  explicit NcclCommunicator(CudaContext &cuda) : cuda(cuda) {}

  void open(int rank, int size,
            const std::function<void(void *, std::size_t)> &broadcast) override;
  int64_t markCompute() override;
  void dropMark(int64_t mark) noexcept override;
  int64_t start(const CollectiveArgs &c, int64_t mark) override;
  bool done(int64_t handle) override;
  void abort() noexcept override;
  void close() override;

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
