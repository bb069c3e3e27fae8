//===- Comm.h - zero-runtime world and collectives --------------*- C++ -*-===//
//
// The world of data-parallel ranks (MPI, or the process alone) and the
// collectives runtime.h declares. Functions throw zero::runtime::Error for
// invalid arguments and MPI errors; the C ABI layer (Collectives.cpp) catches
// them and counts nothing for failed calls. No MPI type appears here, so
// only the comm layer's own files (Comm.cpp, the world; Dispatch.cpp, the
// collectives' choice of communicator; mpi/MpiCollectives.cpp, the
// collectives on MPI), through CommInternal.h, include mpi.h.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_COMM_COMM_H
#define ZERO_RUNTIME_LIB_COMM_COMM_H

#include "Backend.h"

#include <cstddef>
#include <cstdint>

namespace zero::runtime {

/// A temporary of the collectives: `bytes` from the runtime's allocator
/// (Memory.cpp), counted to ZRT_COMM, contents unspecified. Throws Error
/// when memory is exhausted.
void *allocateCommBuffer(std::size_t bytes);
/// Frees a block from allocateCommBuffer. Never throws.
void freeCommBuffer(void *ptr) noexcept;
/// zrt_comm_reserve / zrt_comm_release: the communication arena, from
/// which the collectives' scratch is taken while it has room (runtime.h).
/// Both wait until no collective uses it; reserve throws Error when memory
/// is exhausted.
void reserveCommArena(std::size_t bytes);
void releaseCommArena();
/// Copies `bytes` bytes between two runtime buffers through the selected
/// backend (a memcpy on the CPU, a copy on the compute stream on a GPU):
/// what the collectives of a world of one rank do.
void copyRuntimeBuffer(void *dst, const void *src, std::size_t bytes);
/// Whether the selected backend's buffers are host memory, which the MPI
/// collectives read and write.
bool runtimeBuffersOnHost();
/// The selected backend, for collectives of its memory over `ranks` ranks
/// (on its communicator), or null where its buffers are host memory.
/// Throws Error when it has no communicator.
Backend *deviceCollectives(int ranks);

namespace comm {

/// Sets the world up if that has not happened (runtime.h, "World and
/// collectives"): uses an MPI the application initialized, initializes MPI
/// when an MPI launcher started the process, or makes a world of one.
void initWorld();

/// zrt_shutdown: frees the runtime's communicator and, if the runtime
/// initialized MPI, finalizes it (the world then stays at its size but can
/// no longer communicate).
void finalizeWorld();

/// Whether collectives may run on a thread of the runtime's own (the
/// communication thread): always, unless the application initialized MPI
/// with less than MPI_THREAD_SERIALIZED. Sets the world up if needed.
bool threadsAllowed();

/// Rank and size, setting the world up if needed.
int rank();
int size();

/// Size of the world as it is now, without setting it up (1 if it is not
/// set up). For the fatal path, which must not start MPI.
int currentSize();
int currentRank();

/// Writes `line` and a newline to stderr (nothing if empty) and ends the
/// process: every rank with MPI_Abort if the world is on MPI, otherwise
/// exit(1).
[[noreturn]] void terminate(const char *line) noexcept;

enum class Op { Sum, Max };

/// The collectives of runtime.h, on validated-in-here arguments
/// (Dispatch.cpp). Each returns the bytes this rank sent by runtime.h's
/// formulas.
uint64_t allReduce(DType dtype, Op op, const void *in, void *out,
                   int64_t count);
uint64_t reduceScatter(DType dtype, const void *in, void *out, int64_t count);
uint64_t allGather(DType dtype, const void *in, void *out, int64_t count);
/// `value` points to one element and receives the result.
uint64_t allReduceScalar(DType dtype, Op op, void *value);
/// The largest `*value` over the ranks, into `*value`, with its scratch
/// outside the runtime's allocator (not counted to ZRT_COMM): the
/// simulated link's exchange of issue times, an instrument and no part of
/// the step.
void allReduceMaxUncounted(double *value);

/// zrt_broadcast_bytes: MPI_Ibcast, waited for like every collective.
void broadcast(void *data, std::size_t bytes, int root);

/// zrt_set_comm_timeout: the deadline of every wait for a collective, in
/// seconds (<= 0: none). Returns the previous value.
double setTimeout(double seconds);

/// Whether a collective runs on the backend's communicator
/// (Backend::communicator): its buffers are device memory and the world
/// has more than one rank. Sets the world up if needed.
bool onDeviceCollectives();
/// The mark of the compute stream (Communicator::markCompute, taken when the
/// collective was started) the next collective run on this thread waits
/// for; consumed by it.
void setStartMark(int64_t mark);
/// The mark set and not consumed (a collective that ended before it ran
/// on the device: no elements, invalid arguments), cleared; -1 if none.
int64_t takeStartMark();
/// zrt_set_comm_bucket_bytes (0: the default). Returns the previous value.
std::size_t setBucketBytes(std::size_t bytes);

} // namespace comm
} // namespace zero::runtime

#endif // ZERO_RUNTIME_LIB_COMM_COMM_H
