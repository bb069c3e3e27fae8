/*===- runtime_collectives.h - zero-mlir runtime: collectives ------*- C -*-===*
 *
 * The world of data-parallel ranks and the collectives over it, with call,
 * byte and time counters, and the formulas the compiler shares with the
 * runtime (bytes sent, a collective's scratch, the flat layout).
 *
 * A part of the runtime's C ABI; zero/runtime.h includes every part and
 * states the conventions they share.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZERO_RUNTIME_COLLECTIVES_H
#define ZERO_RUNTIME_COLLECTIVES_H

#include "runtime_setup.h"

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * World and collectives
 *===----------------------------------------------------------------------===*/

/* The world is the set of data-parallel ranks: every process of an MPI job,
 * or the process alone. It is set up by zrt_init, or by the first call of a
 * function of this section, whichever comes first:
 *  - If MPI is already initialized (by the application), the runtime uses
 *    it (on a duplicate of MPI_COMM_WORLD) and never finalizes it.
 *  - Otherwise, if the process was started by an MPI launcher (mpirun or
 *    mpiexec of Open MPI, MPICH's Hydra, srun with PMI or PMIx: detected by
 *    the environment variables OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK or
 *    PMI_SIZE), the runtime calls MPI_Init_thread asking for
 *    MPI_THREAD_SERIALIZED and zrt_shutdown finalizes MPI.
 *  - Otherwise MPI is not touched: the world is this process alone (rank 0
 *    of 1), so a plain `./zero-run` works without mpirun.
 * The runtime serializes its own MPI calls under a lock, so any thread may
 * call the collectives. The runtime's communicator has MPI_ERRORS_RETURN
 * set; every MPI return code is checked.
 *
 * Rules for callers, as for any MPI collective: every rank calls the same
 * collectives in the same order with the same `count` (and the same
 * zrt_set_comm_bucket_bytes setting); a rank that leaves the sequence makes
 * the others wait, up to the deadline of zrt_set_comm_timeout: then every
 * waiting rank ends the job (one line naming the collective and the ranks
 * that did not arrive, MPI_Abort). Waiting ranks poll for a millisecond,
 * then sleep between polls (50 us, growing to 10 ms after 100 ms) instead
 * of spinning. Buffers are the backend's memory (on the CUDA backend a
 * world of one rank copies on the compute stream, and more ranks run
 * NCCL's collectives on a communication stream, after the compute work
 * queued before the start; NCCL's reductions are not in rank order, so the
 * reduction order below holds on host memory only. zero-compile does not
 * build GPU steps for several ranks yet: NCCL has run on no machine with
 * several GPUs), contiguous, `count` elements of
 * the descriptor's element type. `count` may be 0 (no effect, pointers may be
 * NULL, the call is counted with 0 bytes); a negative count, a NULL buffer
 * with count > 0, a size overflow or an overlap of `in` and `out` other
 * than the in-place forms named below go to the fatal handler.
 *
 * Reduction order. Every element of a reduced result is combined in rank
 * order, ((x_0 op x_1) op x_2) op ... op x_{N-1}, starting from x_0 itself
 * (no identity element: a world of one rank returns x_0 bit for bit,
 * -0.0 included), by exactly one rank, and copied from there to the others.
 * So results are deterministic, bitwise equal on every rank, and
 * all_reduce(x) == all_gather(reduce_scatter(x)) bit for bit. Sum is the
 * IEEE addition of the element type. Max keeps the first NaN in rank order
 * if there is one, and otherwise the first of equal values (so max(-0.0,
 * +0.0) is the one from the lower rank).
 *
 * Algorithms and bytes counted (b = element size, N = world size, per call
 * and per rank; what a ring or pairwise-exchange algorithm sends, and
 * exactly what this implementation hands to MPI, padding included):
 *  - reduce-scatter: MPI_Alltoall of the N blocks, then the local reduction
 *    in rank order: (N-1)*count*b bytes.
 *  - all-gather: MPI_Allgather: (N-1)*count*b bytes.
 *  - all-reduce: the buffer, padded with zeros to N*ceil(count/N) elements,
 *    is reduce-scattered and all-gathered as above (the padding is never
 *    read from `in` nor written to `out`): 2*(N-1)*ceil(count/N)*b bytes.
 *  - scalar all-reduce: MPI_Allgather of the N values, then the reduction
 *    in rank order on every rank: (N-1)*b bytes.
 * A world of one rank sends 0 bytes and makes no MPI call: the collectives
 * are copies.
 *
 * Temporary memory. Reduce-scatter and all-reduce exchange their blocks in
 * segments so that their receive buffer holds at most the comm bucket
 * (zrt_set_comm_bucket_bytes): with c = the block length (count for
 * reduce-scatter, ceil(count/N) for all-reduce) and
 * s = min(c, max(1, bucket / (N*b))), each call allocates N*s*b bytes from
 * the runtime's allocator, counted to ZRT_COMM; an all-reduce whose count
 * is not a multiple of N allocates a second buffer of N*s*b bytes for the
 * padded blocks. A scalar all-reduce allocates N*b bytes; an all-gather
 * allocates nothing. Everything is freed before the call returns (its
 * blocks stay in the block cache), so the ZRT_COMM peak of a call is
 * exactly that, and a world of one rank allocates nothing. */

/* This process's rank in the world, 0 <= rank < zrt_world_size(). Sets the
 * world up if needed; a failure to do so goes to the fatal handler (and
 * then 0 is returned). */
ZRT_API int zrt_world_rank(void);

/* The number of ranks in the world (1 without an MPI launcher). A driver
 * that was compiled for a given number of ranks checks it here and ends the
 * job with zrt_abort if it differs. Failure as for zrt_world_rank (1 is
 * returned). */
ZRT_API int zrt_world_size(void);

/* Prints `message` and a newline to stderr as one write (nothing if it is
 * NULL or empty; the runtime adds no prefix, so a driver passes its own
 * "zero-run: error: ..." line) and ends the process without returning:
 * when the world is on MPI with MPI_Abort(MPI_COMM_WORLD, 1), which ends
 * every rank of the job (mpirun exits with status 1), otherwise with
 * exit(1). Meant for drivers that fail on one rank only (a file that cannot
 * be read), where returning from main would leave the other ranks blocked
 * in their next collective. It does not call the fatal handler and does not
 * set the world up (a rank that fails before zrt_init exits with status 1,
 * which also makes mpirun end the job). */
ZRT_API ZRT_NORETURN void zrt_abort(const char *message);

/* As zrt_abort, for a failure every rank meets alike (a bad option, a step
 * that does not fit the run, an output directory it cannot use): rank 0
 * prints `message` and ends the job, and every other rank prints nothing
 * and waits to be ended, so that the job shows the line once. A rank other
 * than 0 that is still running after ZRT_ABORT_ALL_GRACE_SECONDS (rank 0
 * did not meet the failure after all) prints it and ends the job itself.
 * Sets the world up if it is not yet. */
#define ZRT_ABORT_ALL_GRACE_SECONDS 10
ZRT_API ZRT_NORETURN void zrt_abort_all(const char *message);

/* The kinds of collective (and of the counters below). */
typedef enum zrt_collective {
  ZRT_ALL_REDUCE = 0,
  ZRT_REDUCE_SCATTER = 1,
  ZRT_ALL_GATHER = 2,
  ZRT_SCALAR_ALL_REDUCE = 3,
  ZRT_NUM_COLLECTIVES = 4
} zrt_collective;

/* How a reduction combines (see "Reduction order"); an all-gather takes
 * ZRT_REDUCE_NONE. A reduce-scatter sums. */
typedef enum zrt_reduction {
  ZRT_REDUCE_NONE = 0,
  ZRT_REDUCE_SUM = 1,
  ZRT_REDUCE_MAX = 2
} zrt_reduction;

/* The element types of the collectives: f32, f64, and bf16 (its bits as
 * uint16_t: bf16 on the wire; a sum accumulates each element's N values in
 * f32, in rank order, and rounds once to bf16, to nearest even, so the
 * all-reduce still equals the all-gather of the reduce-scatter bit for
 * bit). */
typedef enum zrt_element_type {
  ZRT_ELEMENT_F32 = 0,
  ZRT_ELEMENT_F64 = 1,
  ZRT_ELEMENT_BF16 = 2
} zrt_element_type;

/* A collective's descriptor: its kind (bits 0-7), reduction (bits 8-15)
 * and element type (bits 16-23), one 32-bit value that generated code
 * passes as a constant (IREE's iree_hal_collective_op_t is the model).
 * The compiler builds it with zrt_make_collective_op, as callers do. */
typedef uint32_t zrt_collective_op;

static inline zrt_collective_op
zrt_make_collective_op(zrt_collective kind, zrt_reduction reduction,
                       zrt_element_type element_type) {
  return (zrt_collective_op)kind | (zrt_collective_op)reduction << 8 |
         (zrt_collective_op)element_type << 16;
}

/* Bytes of one element of `element_type`; 0 for any other value. */
static inline int64_t zrt_element_bytes(zrt_element_type element_type) {
  switch (element_type) {
  case ZRT_ELEMENT_F32:
    return 4;
  case ZRT_ELEMENT_F64:
    return 8;
  case ZRT_ELEMENT_BF16:
    return 2;
  }
  return 0;
}

/* The bytes one rank sends in a collective of `kind` on `world` ranks, by
 * the formulas of "Algorithms and bytes counted": `count` is the count
 * argument of the entry point (elements per rank for a gather's input and
 * a reduce-scatter's output, the whole buffer for an all-reduce, 1 for a
 * scalar). The runtime counts this, and the compiler's cost model
 * (zero-schedule) predicts with it. Sizes that exceed 64 bits wrap; the
 * runtime refuses such calls before it counts them. */
static inline uint64_t zrt_collective_bytes_sent(zrt_collective kind,
                                                 int64_t world, int64_t count,
                                                 int64_t element_bytes) {
  uint64_t peers = (uint64_t)(world - 1), b = (uint64_t)element_bytes;
  if (world <= 1 || count <= 0 || element_bytes <= 0)
    return 0;
  switch (kind) {
  case ZRT_ALL_GATHER:
  case ZRT_REDUCE_SCATTER:
    return peers * (uint64_t)count * b;
  case ZRT_ALL_REDUCE:
    return 2 * peers * (uint64_t)(count / world + (count % world != 0)) * b;
  case ZRT_SCALAR_ALL_REDUCE:
    return peers * b;
  default:
    return 0;
  }
}

/* Runs the collective `op` describes on this rank's `in` and `out`
 * (`count` elements of its element type, as below), blocking:
 *  - ZRT_ALL_REDUCE with ZRT_REDUCE_SUM or ZRT_REDUCE_MAX: out[i] =
 *    x_0[i] op ... op x_{N-1}[i] for i < count, where x_r is `in` on rank
 *    r; every rank gets the whole result. In place: out == in.
 *  - ZRT_REDUCE_SCATTER with ZRT_REDUCE_SUM: `in` has N*count elements on
 *    every rank; `out` (count elements) gets this rank's slice of their
 *    sum, elements [rank*count, (rank+1)*count). In place: out == in +
 *    q*count for any block q in [0, N): q == rank keeps the shard where it
 *    was, q == 0 is MPI's in-place convention.
 *  - ZRT_ALL_GATHER with ZRT_REDUCE_NONE: `in` has count elements; `out`
 *    (N*count elements) gets rank r's `in` at out + r*count, on every
 *    rank. In place: in == out + rank*count.
 * A descriptor outside these (a scalar kind, a reduce-scatter's max, an
 * unknown value) goes to the fatal handler. Counted as its kind. */
ZRT_API void zrt_collective_run(zrt_collective_op op, const void *in,
                                void *out, int64_t count);

/* All-reduce of one scalar (`op` of kind ZRT_SCALAR_ALL_REDUCE, sum or
 * max, f32 or f64), returned on every rank: `value` combined over the
 * ranks in rank order, bitwise equal to what zrt_collective_run's
 * all-reduce computes for count == 1. An f32 travels as the double that
 * holds it exactly and is reduced as an f32 (the result converts back
 * exactly). For what generated code and drivers reduce as scalars (loss
 * averaging, partial norms, peaks); counted as ZRT_SCALAR_ALL_REDUCE. */
ZRT_API double zrt_collective_scalar(zrt_collective_op op, double value);

/* Copies `bytes` bytes at `data` from rank `root` to every other rank
 * (MPI_Bcast semantics; every rank passes the same `bytes` and `root`).
 * For set-up, not for training steps: ranks that wait poll with growing
 * sleeps (50 us up to 10 ms) instead of spinning, so a rank that compiles
 * or reads a file meanwhile keeps its core. Not counted in
 * zrt_comm_stats. A world of one rank returns at once. Returns 0, or
 * nonzero with zrt_last_error() set (invalid root, NULL data with bytes > 0,
 * an MPI error). */
ZRT_API int zrt_broadcast_bytes(void *data, size_t bytes, int root);

/* Sets the comm bucket: the most bytes the receive buffer of one exchange
 * segment holds (see "Temporary memory"), and returns the previous value.
 * 0 restores the default, 16 MiB. Process-wide; it decides how calls are
 * split into MPI calls, so every rank must use the same value. */
ZRT_API size_t zrt_set_comm_bucket_bytes(size_t bytes);

/* Sets the deadline, in seconds, of every wait for a collective (and for
 * zrt_broadcast_bytes and zrt_shutdown's final barrier) and returns the
 * previous one; <= 0 waits forever. The default is 600 s: longer than any
 * step or compilation a rank waits for, short enough that a job with a
 * stalled rank ends. When it passes, the rank asks every other rank which
 * collective it has reached (they answer while they wait), then writes one
 * line naming its collective and the ranks that did not answer or are
 * behind, and ends the job with MPI_Abort. Process-wide. */
ZRT_API double zrt_set_comm_timeout(double seconds);

/* Asynchronous collectives. zrt_collective_start has the semantics and
 * the in-place forms of zrt_collective_run for the same descriptor, but only
 * queues the collective and returns a request (a positive number); the
 * collective runs on the runtime's communication thread, and zrt_wait
 * returns once it has completed. Until then the caller must neither write
 * `in` nor read or write `out`, and must keep both allocated. Collectives,
 * started and blocking alike, run in the order they were called, one at a
 * time: a blocking collective called while started ones are pending runs
 * after them. The rules for callers above apply to that order (every rank
 * starts the same collectives in the same order), and each collective
 * reduces exactly as its blocking form does, so results are bitwise those
 * of the blocking calls. Requests complete in order: waiting for request r
 * also completes every earlier one. Invalid arguments (as for the blocking
 * forms) and MPI errors go to the fatal handler, from the first zrt_wait
 * for the failed request or a later one (or the next blocking collective);
 * requests queued behind a failed one are dropped until then, and a
 * deadline that passes ends the job as for the blocking forms. A negative
 * count, a NULL buffer or an invalid descriptor goes to the fatal handler
 * from zrt_collective_start itself (which then returns 0). Waiting for a request twice is allowed; a
 * request that was never returned goes to the fatal handler. When the
 * application initialized MPI with less than MPI_THREAD_SERIALIZED,
 * zrt_collective_start runs the collective before it returns.
 *
 * Counted like the blocking forms (calls, bytes, and `seconds` from the
 * moment the communication thread begins the collective to its completion);
 * the time callers spend blocked in zrt_wait is counted apart, in
 * zrt_comm_stats.wait_seconds. */
ZRT_API int64_t zrt_collective_start(zrt_collective_op op, const void *in,
                                     void *out, int64_t count);

/* The communication arena: buffers that the collectives take their
 * scratch from (the receive buffers of reductions, ZRT_COMM) instead of
 * allocating it while they run. zrt_comm_reserve(bytes) adds a buffer of
 * `bytes` unless one of at least that size is already reserved; a
 * collective stacks its pieces in the largest buffer when it begins, each
 * at the next 64-byte boundary, while they fit (a piece that does not fit
 * is allocated as without the arena). zrt_comm_release waits until no
 * collective is using the arena and frees every buffer. Without the arena,
 * a started collective's scratch comes and goes when the communication
 * thread runs it, so whether it counts at the step's peak depends on
 * timing; with it, the bytes are held from one fixed point of the program
 * to another. The lowered step (zero-comm-buffers) reserves before
 * each started reduction that needs more than the reservations before it
 * while some are in flight, and releases after the wait that completes
 * the last of them; zero-memory-report predicts the same. A reservation
 * never waits: the collective using a buffer keeps it. `bytes` < 0, or no
 * memory for a buffer, goes to the fatal handler. */
ZRT_API void zrt_comm_reserve(int64_t bytes);
ZRT_API void zrt_comm_release(void);

/* Blocks until `request` has completed: a started collective (and every
 * collective started before it), or a started NVMe transfer
 * (zrt_nvme_read_start, zrt_nvme_write_start; those complete in any
 * order). */
ZRT_API void zrt_wait(int64_t request);

/* A simulated interconnect, for measuring overlap on a machine whose ranks
 * share memory (where MPI moves bytes with the cores that compute, so
 * communication cannot hide behind computation). With a link set, every
 * collective over more than one rank, blocking or started, completes no
 * earlier than
 *     begin + latency_seconds + bytes / bytes_per_second
 * where bytes is what this rank sends (the counted bytes) and begin is the
 * later of the moment the last rank called it and the moment the link
 * finished the previous collective (one link for all ranks, one collective
 * at a time, so every rank completes it at the same moment; the ranks'
 * call times are compared on the machine's monotonic clock with one more
 * scalar all-reduce, uncounted, so the ranks must share a machine). The collective
 * really runs, on MPI, before that; the rest of the time the calling (or
 * communication) thread sleeps, without spinning. It is a model of a link,
 * not a measurement of one. bytes_per_second may be INFINITY (latency
 * only); 0 for both turns the model off (the default). Returns 0, or
 * nonzero with zrt_last_error() set for a negative or NaN value or a zero
 * bandwidth with a nonzero latency. Process-wide; every rank should set the
 * same link. */
ZRT_API int zrt_set_sim_link(double bytes_per_second, double latency_seconds);

/* The scratch a collective takes while it runs (ZRT_COMM; from the
 * communication arena where it fits): the bytes of each buffer, in the
 * order it takes them, written to pieces[0..1]; returns how many (0-2), or
 * -1 when a size overflows int64. On a world of `world` ranks, with
 * `element_bytes`-byte elements and a bucket of `bucket_bytes`
 * (zrt_set_comm_bucket_bytes; its default ZRT_COMM_BUCKET_BYTES), a
 * reduction moves one segment of each rank's block at a time, the segment
 * min(block, max(1, bucket_bytes / (world * element_bytes))) elements:
 *   ZRT_REDUCE_SCATTER of `count` elements per rank: world segments;
 *   ZRT_ALL_REDUCE of `count` elements (blocks of ceil(count / world)):
 *     world segments, and as many again when count is not a multiple of
 *     world (the padded blocks are packed);
 *   ZRT_SCALAR_ALL_REDUCE: world elements;
 *   ZRT_ALL_GATHER, a world of one, count 0: nothing.
 * The runtime sizes its buffers with it, and zero-memory-report predicts
 * them with it. */
#define ZRT_COMM_BUCKET_BYTES ((int64_t)16 << 20)
#define ZRT_COMM_ARENA_ALIGNMENT 64
static inline int zrt_comm_scratch(zrt_collective kind, int64_t world,
                                   int64_t count, int64_t element_bytes,
                                   int64_t bucket_bytes, int64_t pieces[2]) {
  int64_t group, segment, block, bytes;
  if (world <= 1 || element_bytes <= 0 || kind == ZRT_ALL_GATHER)
    return 0;
  if (kind == ZRT_SCALAR_ALL_REDUCE) {
    if (__builtin_mul_overflow(world, element_bytes, &bytes))
      return -1;
    pieces[0] = bytes;
    return 1;
  }
  if ((kind != ZRT_REDUCE_SCATTER && kind != ZRT_ALL_REDUCE) || count <= 0)
    return 0;
  block = kind == ZRT_REDUCE_SCATTER ? count
                                     : count / world + (count % world != 0);
  if (__builtin_mul_overflow(world, element_bytes, &group))
    return -1;
  segment = bucket_bytes / group;
  if (segment < 1)
    segment = 1;
  if (segment > 2147483647)
    segment = 2147483647;
  if (segment > block)
    segment = block;
  if (__builtin_mul_overflow(group, segment, &bytes))
    return -1;
  pieces[0] = pieces[1] = bytes;
  return kind == ZRT_ALL_REDUCE && count % world != 0 ? 2 : 1;
}

/* The flat layout of a tensor of `numel` elements on a world of `world`
 * ranks (docs/zero-form.md): viewed 1-D and zero-padded to *padded, the
 * least multiple of `world` at or above `numel`; rank r owns elements
 * [r * shard, (r + 1) * shard) of it, with *shard = padded / world. The
 * same for its gradient and optimizer states. Returns 0, or -1 (nothing
 * written) when numel < 0, world < 1 or padded overflows int64.
 * zero-partition lays parameters out with it, the zero dialect checks each
 * #zero.layout of zero.manifest against it, and checkpoint readers check a
 * manifest's layout against it. */
static inline int zrt_flat_layout(int64_t numel, int64_t world,
                                  int64_t *padded, int64_t *shard) {
  int64_t rounded;
  if (numel < 0 || world < 1 ||
      __builtin_add_overflow(numel, (world - numel % world) % world, &rounded))
    return -1;
  *padded = rounded;
  *shard = rounded / world;
  return 0;
}

/* "all_reduce", "reduce_scatter", "all_gather", "scalar_all_reduce";
 * "unknown" for any other value. The string is static. */
ZRT_API const char *zrt_collective_name(zrt_collective collective);

/* Totals per kind since the last reset, on this rank: `calls` counts entry
 * point calls (count == 0 and worlds of one rank included), `bytes_sent`
 * the bytes this rank sends by the formulas above, `seconds` the wall time
 * the collectives ran (steady clock; it includes waiting for the other
 * ranks and a simulated link's time; for a started collective, from the
 * moment the communication thread begins it). Calls rejected as invalid
 * are not counted. */
typedef struct zrt_comm_stats {
  uint64_t calls[ZRT_NUM_COLLECTIVES];
  uint64_t bytes_sent[ZRT_NUM_COLLECTIVES];
  double seconds[ZRT_NUM_COLLECTIVES];
  /* Time spent blocked in zrt_wait, all kinds together. */
  double wait_seconds;
} zrt_comm_stats;

/* A consistent snapshot of the counters. NULL is a no-op. */
ZRT_API void zrt_get_comm_stats(zrt_comm_stats *out);

/* Clears the counters. */
ZRT_API void zrt_reset_comm_stats(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZERO_RUNTIME_COLLECTIVES_H */
