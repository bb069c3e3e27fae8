//===- CommInternal.h - The world as the collectives use it -----*- C++ -*-===//
//
// What the comm layer's files share: Comm.cpp (the world: set-up, waits
// with a deadline, stall reports, a communicator's start and wait),
// Dispatch.cpp (which communicator runs a collective) and
// mpi/MpiCollectives.cpp (the MPI algorithms): the world's state and lock,
// the check of an MPI return code, the wait for a posted MPI request, and
// the communicators. Only these files include it, so only they see MPI's
// types (through Mpi.h's table).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_COMM_COMMINTERNAL_H
#define ZERO_RUNTIME_LIB_COMM_COMMINTERNAL_H

#include "comm/Comm.h"

// MPI through a table filled at run time (a world of one never opens it).
#include "comm/mpi/Mpi.h"
#include "TestHooks.h"

#include <atomic>
#include <cstdint>
#include <mutex>

namespace zero::runtime::comm {

enum class State {
  Uninitialized, // not set up yet
  Local,         // no MPI: this process alone
  Mpi,           // on MPI, `comm` is live
  Finalized      // the runtime finalized MPI (zrt_shutdown)
};

struct World {
  /// Guards set-up and tear-down and serializes every MPI call.
  std::mutex mutex;
  std::atomic<State> state{State::Uninitialized};
  std::atomic<int> rank{0};
  std::atomic<int> size{1};
  bool ownsMpi = false;
  /// Live only in State::Mpi. (Value-initialized, not MPI_COMM_NULL: the
  /// MPI library is opened only when the world needs it.)
  MPI_Comm comm{};
  /// MPI_Query_thread's answer: any thread may call MPI under the mutex.
  std::atomic<bool> threadsAllowed{true};
  /// Carries the questions ranks ask each other when a collective times
  /// out (which collective each has reached), apart from the collectives.
  MPI_Comm control{};
  /// Collectives this rank has started, and the name of the latest.
  int64_t sequence = 0;
  const char *collective = "";
  /// The backend whose device communicator (NCCL) has been made, if one
  /// has: finalizeWorld closes it.
  Backend *device = nullptr;
};

/// The one world of the process, made on first use.
World &world();

/// Throws Error "<what> failed: <MPI's message>" unless `rc` is
/// MPI_SUCCESS.
void check(int rc, const char *what);

/// The live world for a collective: set up, and able to communicate if it
/// has more than one rank. Takes w.mutex into `lock`.
World &worldForCollective(std::unique_lock<std::mutex> &lock);

/// Marks the start of a collective (for the timeout's message).
void startCollective(World &w, const char *name);

/// Waits for `request` of the current collective, with the deadline; `what`
/// names the MPI call that posted it in error messages.
void waitFor(World &w, MPI_Request &request, const char *what);

/// The backend on whose communicator a collective over `N` ranks runs (its
/// buffers are device memory and the world has several ranks, or the hook
/// asks for it), else null: MPI's, or a world of one's copy.
Backend *deviceFor(int N);

/// Starts `c` on `communicator` after the compute work up to `mark`
/// (Communicator::start) and waits for it with the deadline of every
/// collective: past it, the communicator is aborted and the job ends as
/// timedOut ends it. The caller holds w.mutex.
void runOn(World &w, Communicator &communicator, const CollectiveArgs &c,
           int64_t mark);

/// A collective of device memory: on the backend's communicator (NCCL on a
/// communication stream), after the compute work queued before it was
/// started (the mark setStartMark left); the communicator is made on the
/// first one, from an id rank 0 broadcasts over MPI. The caller holds
/// w.mutex.
void runOnDevice(World &w, Backend &b, const CollectiveArgs &c);

/// The Communicator of host memory on the world's MPI
/// (mpi/MpiCollectives.cpp): what runs a collective of several ranks that
/// no backend's communicator takes.
Communicator &mpiCommunicator();

} // namespace zero::runtime::comm

#endif // ZERO_RUNTIME_LIB_COMM_COMMINTERNAL_H
