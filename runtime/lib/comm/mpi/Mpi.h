//===- Mpi.h - MPI, opened at run time --------------------------*- C++ -*-===//
//
// The runtime's MPI calls go through a table of entry points that is filled
// from the MPI library when the world first needs it, not through a link:
// a process that is not started by an MPI launcher (and did not load MPI
// itself) never opens the library, so a world of one rank needs no MPI at
// run time (a GPU machine without MPI runs a training binary as it is).
//
// Include this header instead of <mpi.h>. It declares the table and then
// redirects every MPI function the runtime calls to it; with Open MPI, whose
// predefined handles (MPI_COMM_WORLD, MPI_FLOAT, ...) are addresses of the
// library's global objects, it also redirects OMPI_PREDEFINED_GLOBAL to look
// those up. Built and tested with Debian's Open MPI 4.1.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_COMM_MPI_MPI_H
#define ZERO_RUNTIME_LIB_COMM_MPI_MPI_H

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#define ZERO_MPI_FUNCTIONS(X)                                                  \
  X(MPI_Abort)                                                                 \
  X(MPI_Comm_dup)                                                              \
  X(MPI_Comm_free)                                                             \
  X(MPI_Comm_rank)                                                             \
  X(MPI_Comm_set_errhandler)                                                   \
  X(MPI_Comm_size)                                                             \
  X(MPI_Error_string)                                                          \
  X(MPI_Finalize)                                                              \
  X(MPI_Finalized)                                                             \
  X(MPI_Iallgather)                                                            \
  X(MPI_Ialltoall)                                                             \
  X(MPI_Ibarrier)                                                              \
  X(MPI_Ibcast)                                                                \
  X(MPI_Init_thread)                                                           \
  X(MPI_Initialized)                                                           \
  X(MPI_Iprobe)                                                                \
  X(MPI_Irecv)                                                                 \
  X(MPI_Isend)                                                                 \
  X(MPI_Query_thread)                                                          \
  X(MPI_Recv)                                                                  \
  X(MPI_Send)                                                                  \
  X(MPI_Test)                                                                  \
  X(MPI_Type_commit)                                                           \
  X(MPI_Type_contiguous)                                                       \
  X(MPI_Type_create_resized)                                                   \
  X(MPI_Type_free)

namespace zero::runtime::mpi {

/// The MPI entry points the runtime calls, typed by mpi.h.
struct Api {
#define ZERO_MPI_FIELD(fn) decltype(&::fn) fn = nullptr;
  ZERO_MPI_FUNCTIONS(ZERO_MPI_FIELD)
#undef ZERO_MPI_FIELD
};

/// Whether the MPI library is in this process: linked in by the
/// application, or opened by the runtime. Never opens it.
bool loaded();

/// Opens the MPI library (if it is not in the process yet) and fills the
/// table. Throws Error with one line naming the library when that fails.
void open();

/// The table; open() must have succeeded.
const Api &api();

/// The address of one of the library's global objects (Open MPI's
/// predefined handles); open() must have succeeded.
void *predefined(const char *name);

} // namespace zero::runtime::mpi

#ifndef ZERO_MPI_NO_REDIRECT
#define MPI_Abort (::zero::runtime::mpi::api().MPI_Abort)
#define MPI_Comm_dup (::zero::runtime::mpi::api().MPI_Comm_dup)
#define MPI_Comm_free (::zero::runtime::mpi::api().MPI_Comm_free)
#define MPI_Comm_rank (::zero::runtime::mpi::api().MPI_Comm_rank)
#define MPI_Comm_set_errhandler                                                \
  (::zero::runtime::mpi::api().MPI_Comm_set_errhandler)
#define MPI_Comm_size (::zero::runtime::mpi::api().MPI_Comm_size)
#define MPI_Error_string (::zero::runtime::mpi::api().MPI_Error_string)
#define MPI_Finalize (::zero::runtime::mpi::api().MPI_Finalize)
#define MPI_Finalized (::zero::runtime::mpi::api().MPI_Finalized)
#define MPI_Iallgather (::zero::runtime::mpi::api().MPI_Iallgather)
#define MPI_Ialltoall (::zero::runtime::mpi::api().MPI_Ialltoall)
#define MPI_Ibarrier (::zero::runtime::mpi::api().MPI_Ibarrier)
#define MPI_Ibcast (::zero::runtime::mpi::api().MPI_Ibcast)
#define MPI_Init_thread (::zero::runtime::mpi::api().MPI_Init_thread)
#define MPI_Initialized (::zero::runtime::mpi::api().MPI_Initialized)
#define MPI_Iprobe (::zero::runtime::mpi::api().MPI_Iprobe)
#define MPI_Irecv (::zero::runtime::mpi::api().MPI_Irecv)
#define MPI_Isend (::zero::runtime::mpi::api().MPI_Isend)
#define MPI_Query_thread (::zero::runtime::mpi::api().MPI_Query_thread)
#define MPI_Recv (::zero::runtime::mpi::api().MPI_Recv)
#define MPI_Send (::zero::runtime::mpi::api().MPI_Send)
#define MPI_Test (::zero::runtime::mpi::api().MPI_Test)
#define MPI_Type_commit (::zero::runtime::mpi::api().MPI_Type_commit)
#define MPI_Type_contiguous (::zero::runtime::mpi::api().MPI_Type_contiguous)
#define MPI_Type_create_resized                                                \
  (::zero::runtime::mpi::api().MPI_Type_create_resized)
#define MPI_Type_free (::zero::runtime::mpi::api().MPI_Type_free)
#ifdef OMPI_PREDEFINED_GLOBAL
#undef OMPI_PREDEFINED_GLOBAL
#define OMPI_PREDEFINED_GLOBAL(type, global)                                   \
  ((type)::zero::runtime::mpi::predefined(#global))
#endif
#endif // ZERO_MPI_NO_REDIRECT

#endif // ZERO_RUNTIME_LIB_COMM_MPI_MPI_H
