//===- Nccl.cpp - The CUDA backend's communicator -------------------------===//
//
// NCCL on a communication stream of the CUDA backend (Nccl.h).
//
//===----------------------------------------------------------------------===//

#include "comm/nccl/Nccl.h"

#ifdef ZERO_RUNTIME_HAVE_NCCL

#include <utility>

namespace zero::runtime {

void NcclCommunicator::open(
    int rank, int size,
    const std::function<void(void *, std::size_t)> &broadcast) {
  cuda.makeCurrent();
  std::lock_guard<std::mutex> lock(ncclMutex);
  if (ncclComm)
    return;
  if (!ncclLib)
    ncclLib = openNccl(nccl);
  ncclUniqueId id{};
  if (rank == 0)
    checkNccl(nccl.ncclGetUniqueId_(&id), "ncclGetUniqueId");
  broadcast(&id, sizeof id);
  if (!commStream)
    cuda.check(cuda.cu.cuStreamCreate_(&commStream, CU_STREAM_NON_BLOCKING),
               "cuStreamCreate (collectives)");
  ncclComm_t comm = nullptr;
  checkNccl(nccl.ncclCommInitRank_(&comm, size, id, rank),
            "ncclCommInitRank (rank " + std::to_string(rank) + " of " +
                std::to_string(size) + ")");
  ncclComm = comm;
}

int64_t NcclCommunicator::markCompute() {
  cuda.makeCurrent();
  std::lock_guard<std::mutex> lock(ncclMutex);
  std::size_t slot = takeCommEvent();
  try {
    cuda.check(cuda.cu.cuEventRecord_(commEvents[slot], cuda.computeStream),
               "cuEventRecord");
  } catch (...) {
    freeCommEvents.push_back(slot);
    throw;
  }
  return static_cast<int64_t>(slot);
}

void NcclCommunicator::dropMark(int64_t mark) noexcept {
  std::lock_guard<std::mutex> lock(ncclMutex);
  if (mark >= 0 && static_cast<std::size_t>(mark) < commEvents.size())
    freeCommEvents.push_back(static_cast<std::size_t>(mark));
}

int64_t NcclCommunicator::start(const CollectiveArgs &c, int64_t mark) {
  cuda.makeCurrent();
  std::lock_guard<std::mutex> lock(ncclMutex);
  if (!ncclComm)
    throw Error("a collective of device memory before its communicator "
                "was made (or after it was aborted)");
  if (mark < 0 || static_cast<std::size_t>(mark) >= commEvents.size()) {
    mark = static_cast<int64_t>(takeCommEvent());
    if (CUresult r =
            cuda.cu.cuEventRecord_(commEvents[mark], cuda.computeStream);
        r != CUDA_SUCCESS) {
      freeCommEvents.push_back(static_cast<std::size_t>(mark));
      cuda.check(r, "cuEventRecord");
    }
  }
  // The wait takes the event as recorded now: its slot may be reused.
  CUresult waited = cuda.cu.cuStreamWaitEvent_(commStream, commEvents[mark], 0);
  freeCommEvents.push_back(static_cast<std::size_t>(mark));
  cuda.check(waited, "cuStreamWaitEvent (a collective)");
  ncclDataType_t type = c.dtype == DType::F32   ? ncclFloat32
                        : c.dtype == DType::F64 ? ncclFloat64
                                                : ncclBfloat16;
  auto stream = reinterpret_cast<cudaStream_t>(commStream);
  std::size_t n = static_cast<std::size_t>(c.count);
  switch (c.kind) {
  case CollectiveArgs::Kind::AllReduce:
    checkNccl(nccl.ncclAllReduce_(c.in, c.out, n, type,
                                  c.max ? ncclMax : ncclSum, ncclComm, stream),
              "ncclAllReduce");
    break;
  case CollectiveArgs::Kind::ReduceScatter:
    checkNccl(nccl.ncclReduceScatter_(c.in, c.out, n, type, ncclSum, ncclComm,
                                      stream),
              "ncclReduceScatter");
    break;
  case CollectiveArgs::Kind::AllGather:
    checkNccl(nccl.ncclAllGather_(c.in, c.out, n, type, ncclComm, stream),
              "ncclAllGather");
    break;
  }
  std::size_t done = takeCommEvent();
  if (CUresult r = cuda.cu.cuEventRecord_(commEvents[done], commStream);
      r != CUDA_SUCCESS) {
    freeCommEvents.push_back(done);
    cuda.check(r, "cuEventRecord (a collective)");
  }
  return static_cast<int64_t>(done);
}

bool NcclCommunicator::done(int64_t handle) {
  cuda.makeCurrent();
  CUevent done;
  {
    std::lock_guard<std::mutex> lock(ncclMutex);
    if (handle < 0 || static_cast<std::size_t>(handle) >= commEvents.size())
      throw Error("collective " + std::to_string(handle) +
                  " was never started");
    done = commEvents[handle];
  }
  CUresult r = cuda.cu.cuEventQuery_(done);
  if (r == CUDA_SUCCESS) {
    std::lock_guard<std::mutex> lock(ncclMutex);
    freeCommEvents.push_back(static_cast<std::size_t>(handle));
    return true;
  }
  if (r != CUDA_ERROR_NOT_READY)
    cuda.check(r, "cuEventQuery (a collective)");
  std::lock_guard<std::mutex> lock(ncclMutex);
  ncclResult_t async = ncclSuccess;
  if (ncclComm &&
      nccl.ncclCommGetAsyncError_(ncclComm, &async) == ncclSuccess &&
      async != ncclSuccess && async != ncclInProgress)
    throw Error(ncclMessage(async, "a collective"));
  return false;
}

void NcclCommunicator::abort() noexcept {
  std::lock_guard<std::mutex> lock(ncclMutex);
  if (ncclComm && cuda.makeCurrentNoThrow())
    nccl.ncclCommAbort_(ncclComm);
  ncclComm = nullptr;
}

void NcclCommunicator::close() {
  std::lock_guard<std::mutex> lock(ncclMutex);
  if (!ncclComm)
    return;
  ncclComm_t comm = std::exchange(ncclComm, nullptr);
  cuda.makeCurrent();
  // Finalize flushes what the communicator still has queued (nothing:
  // every collective was waited for), Destroy frees it.
  ncclResult_t r = nccl.ncclCommFinalize_(comm);
  if (r != ncclSuccess) {
    nccl.ncclCommAbort_(comm);
    checkNccl(r, "ncclCommFinalize");
  }
  checkNccl(nccl.ncclCommDestroy_(comm), "ncclCommDestroy");
}

std::size_t NcclCommunicator::takeCommEvent() {
  if (!freeCommEvents.empty()) {
    std::size_t slot = freeCommEvents.back();
    freeCommEvents.pop_back();
    return slot;
  }
  CUevent e = nullptr;
  cuda.check(cuda.cu.cuEventCreate_(&e, CU_EVENT_DISABLE_TIMING),
             "cuEventCreate");
  commEvents.push_back(e);
  return commEvents.size() - 1;
}

std::string NcclCommunicator::ncclMessage(ncclResult_t r,
                                          const std::string &what) const {
  std::string out = what + " failed: NCCL ";
  const char *text =
      nccl.ncclGetErrorString_ ? nccl.ncclGetErrorString_(r) : nullptr;
  out += text ? text : "error " + std::to_string(int(r));
  const char *last =
      nccl.ncclGetLastError_ ? nccl.ncclGetLastError_(ncclComm) : nullptr;
  if (last && *last)
    out += std::string(" (") + last + ")";
  return out;
}

void NcclCommunicator::checkNccl(ncclResult_t r,
                                 const std::string &what) const {
  if (r != ncclSuccess && r != ncclInProgress)
    throw Error(ncclMessage(r, what));
}

} // namespace zero::runtime

#endif // ZERO_RUNTIME_HAVE_NCCL
