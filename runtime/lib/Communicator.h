//===- Communicator.h - Collectives across the world's ranks ----*- C++ -*-===//
//
// The third of the runtime's three interfaces (Backend.h): the collectives
// of one kind of memory across the world's ranks, started and then polled.
// Two implement it: MPI's, for host memory (comm/mpi/MpiCollectives.cpp: in
// a fixed reduction order, each collective complete when start() returns),
// and NCCL's, for the CUDA backend's device memory (comm/nccl/Nccl.h: a
// communication stream ordered after the compute stream by events).
// comm/Dispatch.cpp chooses one for each collective; comm/Comm.cpp makes a
// backend's on the first collective that needs it, starts each collective,
// waits for it with the world's deadline and aborts the communicator past
// it. They call these with the world's lock held, on the thread that runs
// the collective.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_COMMUNICATOR_H
#define ZERO_RUNTIME_LIB_COMMUNICATOR_H

#include "Types.h"

#include <cstddef>
#include <cstdint>
#include <functional>

namespace zero::runtime {

/// One collective across the world's ranks, as a communicator takes it:
/// `count` elements in each rank's `in` for an all-reduce and an all-gather,
/// in each rank's `out` for a reduce-scatter (so a reduce-scatter reads
/// count * N elements, an all-gather writes them). In place as runtime.h's
/// collectives allow it.
struct CollectiveArgs {
  enum class Kind { AllReduce, ReduceScatter, AllGather };
  Kind kind;
  DType dtype;
  /// An all-reduce's maximum instead of its sum.
  bool max = false;
  const void *in;
  void *out;
  int64_t count;
};

class Communicator {
public:
  virtual ~Communicator() = default;

  /// Makes the communicator of rank `rank` of `size`, once per world:
  /// `broadcast` sends `bytes` at `data` from rank 0 to every rank (the
  /// world's MPI). Throws Error with one line. MPI's communicator is the
  /// world's own, made with it: nothing to do.
  virtual void open(int /*rank*/, int /*size*/,
                    const std::function<void(void *data, std::size_t bytes)>
                        & /*broadcast*/) {}

  /// A point in the compute stream's order, for start(): taken when a
  /// collective is started, so that it runs after the work queued before
  /// the start and not after what was queued before the communication
  /// thread got to it. -1 where there is no compute stream to follow (host
  /// memory, which the caller has finished writing when it starts one).
  virtual int64_t markCompute() { return -1; }

  /// Gives back a mark no collective consumed. Never throws.
  virtual void dropMark(int64_t /*mark*/) noexcept {}

  /// Starts `c` after the compute work up to `mark` (markCompute(), which
  /// this consumes; -1: all the work queued so far) and returns a handle
  /// for done().
  virtual int64_t start(const CollectiveArgs &c, int64_t mark) = 0;

  /// Whether the collective of `handle` has completed (the handle is then
  /// spent). Throws Error when the communicator failed.
  virtual bool done(int64_t handle) = 0;

  /// Ends the communicator without its peers (one stalled or failed): what
  /// it has queued never completes. Never throws.
  virtual void abort() noexcept = 0;

  /// Frees the communicator at the end of a run, every collective on it
  /// completed (zrt_shutdown, before MPI is finalized); the next open()
  /// makes a new one. Throws Error with one line. MPI's is freed with the
  /// world: nothing to do.
  virtual void close() {}
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_LIB_COMMUNICATOR_H
