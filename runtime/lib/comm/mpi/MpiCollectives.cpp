//===- MpiCollectives.cpp - Collectives of zero-runtime on MPI ------------===//
//
// The collectives over the world of Comm.cpp on MPI: the Communicator of
// host memory (Communicator.h), which Dispatch.cpp hands the collectives of
// more than one rank that no backend's communicator takes, and the scalar
// all-reduce of host values; their scratch and the communication arena.
//
// Reductions have one fixed order: every element of a result is combined in
// rank order, x_0 op x_1 op ... op x_{N-1}, by exactly one rank, and copied
// to the others. A reduce-scatter is therefore an MPI_Alltoall of the blocks
// (rank q receives block q of every rank) followed by a local reduction of
// the N received blocks in rank order; an all-reduce is that reduce-scatter
// over the buffer padded to a multiple of N followed by an MPI_Allgather of
// the reduced blocks. MPI's own reductions (MPI_Allreduce,
// MPI_Reduce_scatter_block) are not used: their order depends on the
// algorithm Open MPI picks for the message size and world size, so
// all_reduce could differ from all_gather(reduce_scatter) in the last bit,
// and a ZeRO stage would not train bit-identically to plain data parallelism.
//
// Reduce-scatter and all-reduce exchange their blocks in segments of at most
// s elements per block, so the receive buffer (N*s elements, from the
// runtime's allocator in the ZRT_COMM category) stays within the comm bucket
// however large the buffer is. A segment takes piece [j, j+s) of every block
// straight from the caller's buffer through an MPI datatype whose extent is
// the block stride; only segments that reach into the padding of an
// all-reduce are packed into a second buffer (the padding exists only there,
// and reading or writing it in the caller's buffers would be out of bounds).
//
// Every MPI call is made with the world's mutex held, and waited for with
// the deadline Comm.cpp keeps (CommInternal.h).
//
//===----------------------------------------------------------------------===//

#include "comm/CommInternal.h"

#include "zero/runtime.h"

#include "BFloat16.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace zero::runtime {
namespace comm {
namespace {

/// MPI_Ialltoall and MPI_Iallgather, waited for with the deadline.
void alltoall(World &w, const void *send, int sendCount, MPI_Datatype sendType,
              void *recv, int recvCount, MPI_Datatype recvType) {
  MPI_Request request;
  check(MPI_Ialltoall(send, sendCount, sendType, recv, recvCount, recvType,
                      w.comm, &request),
        "MPI_Ialltoall");
  waitFor(w, request, "MPI_Ialltoall");
}

void allgather(World &w, const void *send, int sendCount,
               MPI_Datatype sendType, void *recv, int recvCount,
               MPI_Datatype recvType) {
  MPI_Request request;
  check(MPI_Iallgather(send, sendCount, sendType, recv, recvCount, recvType,
                       w.comm, &request),
        "MPI_Iallgather");
  waitFor(w, request, "MPI_Iallgather");
}

//===----------------------------------------------------------------------===//
// Buffers, datatypes, arguments
//===----------------------------------------------------------------------===//

/// The communication arena (zrt_comm_reserve): buffers of growing sizes,
/// of which the largest (the last one reserved) holds the scratch of one
/// thread's collectives, stacked, each piece at the next kArenaAlignment
/// boundary. A reservation larger than every buffer adds one and leaves
/// the others as they are, so it never waits for the collective that may
/// be using one; all are freed together on release. One thread at a time
/// owns the arena (the communication thread while it runs a collective,
/// or the caller of a blocking one, which runs after every started one);
/// another thread's scratch is allocated as without the arena.
class CommArena {
public:
  static constexpr std::size_t kArenaAlignment = ZRT_COMM_ARENA_ALIGNMENT;

  /// A piece of `bytes` for the calling thread, or null when another
  /// thread owns the arena or the piece does not fit; `mark` is what
  /// giveBack restores.
  void *take(std::size_t bytes, std::size_t &mark) {
    std::lock_guard<std::mutex> lock(mutex);
    if (buffers.empty() ||
        (depth > 0 && owner != std::this_thread::get_id()))
      return nullptr;
    // A collective's pieces stay in the buffer its first one took: the
    // largest when it began.
    if (depth == 0) {
      current = buffers.size() - 1;
      used = 0;
    }
    auto [base, size] = buffers[current];
    std::size_t offset = (used + kArenaAlignment - 1) / kArenaAlignment *
                         kArenaAlignment;
    if (offset > size || bytes > size - offset)
      return nullptr;
    owner = std::this_thread::get_id();
    ++depth;
    mark = used;
    used = offset + bytes;
    return static_cast<char *>(base) + offset;
  }

  /// Returns the piece taken with `mark` (pieces come back in reverse).
  void giveBack(std::size_t mark) {
    std::lock_guard<std::mutex> lock(mutex);
    used = mark;
    if (--depth == 0)
      idle.notify_all();
  }

  void reserve(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    if (bytes == 0 || (!buffers.empty() && bytes <= buffers.back().second))
      return;
    // A collective may be using the current largest buffer: it keeps it,
    // and the next one takes the new buffer.
    buffers.emplace_back(allocateCommBuffer(bytes), bytes);
  }

  void release() {
    std::unique_lock<std::mutex> lock(mutex);
    idle.wait(lock, [&] { return depth == 0; });
    for (auto &[base, size] : buffers)
      freeCommBuffer(base);
    buffers.clear();
  }

private:
  std::mutex mutex;
  std::condition_variable idle;
  /// Each buffer and its size, in the order reserved (growing sizes).
  std::vector<std::pair<void *, std::size_t>> buffers;
  /// The buffer the owner's pieces are in, and the bytes they take.
  std::size_t current = 0, used = 0;
  int depth = 0;
  std::thread::id owner;
};

CommArena &commArena() {
  static CommArena *instance = new CommArena();
  return *instance;
}

/// A ZRT_COMM temporary, from the arena while it has room, else allocated;
/// given back on scope exit (also when an MPI error unwinds the call).
class Scratch {
public:
  explicit Scratch(std::size_t bytes) {
    if (!bytes)
      return;
    ptr = commArena().take(bytes, mark);
    fromArena = ptr != nullptr;
    if (!ptr)
      ptr = allocateCommBuffer(bytes);
  }
  ~Scratch() {
    if (fromArena)
      commArena().giveBack(mark);
    else if (ptr)
      freeCommBuffer(ptr);
  }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  template <typename T> T *as() const { return static_cast<T *>(ptr); }

private:
  void *ptr = nullptr;
  bool fromArena = false;
  std::size_t mark = 0;
};

/// A bf16 element as its bits: what goes on the wire. Sums of bf16 blocks
/// are accumulated in f32 (reduceInRankOrder) and rounded to bf16 once.
struct BF16 {
  uint16_t bits = 0;
};

float toFloat(BF16 x) { return bf16ToFloat(x.bits); }
BF16 toBF16(float f) { return BF16{floatToBF16(f)}; }

template <typename T> MPI_Datatype mpiType();
template <> MPI_Datatype mpiType<float>() { return MPI_FLOAT; }
template <> MPI_Datatype mpiType<double>() { return MPI_DOUBLE; }
template <> MPI_Datatype mpiType<BF16>() { return MPI_UINT16_T; }

/// Piece [j, j + n) of every block of a buffer of blocks `blockLength`
/// elements apart, as one element of an MPI datatype whose extent is the
/// block stride: MPI then reads or writes block r's piece at r * stride.
/// When the piece is the whole block it is simply n elements.
template <typename T> class Pieces {
public:
  Pieces(int64_t n, int64_t blockLength) {
    if (n == blockLength) {
      type = mpiType<T>();
      count = static_cast<int>(n);
      return;
    }
    MPI_Datatype contiguous = MPI_DATATYPE_NULL;
    check(MPI_Type_contiguous(static_cast<int>(n), mpiType<T>(), &contiguous),
          "MPI_Type_contiguous");
    int rc = MPI_Type_create_resized(
        contiguous, 0, static_cast<MPI_Aint>(blockLength * sizeof(T)), &type);
    MPI_Type_free(&contiguous);
    check(rc, "MPI_Type_create_resized");
    rc = MPI_Type_commit(&type);
    if (rc != MPI_SUCCESS)
      MPI_Type_free(&type);
    check(rc, "MPI_Type_commit");
    owned = true;
    count = 1;
  }
  ~Pieces() {
    if (owned)
      MPI_Type_free(&type);
  }
  Pieces(const Pieces &) = delete;
  Pieces &operator=(const Pieces &) = delete;

  MPI_Datatype type = MPI_DATATYPE_NULL;
  int count = 0;

private:
  bool owned = false;
};

constexpr std::size_t kDefaultBucketBytes = ZRT_COMM_BUCKET_BYTES;
std::atomic<std::size_t> bucketBytes{kDefaultBucketBytes};

/// Elements per block in one segment: the receive buffer of N blocks holds
/// at most the bucket, at least one element per block, at most what an MPI
/// count (int) can say.
/// A reduction's scratch by runtime.h's formula (zrt_comm_scratch, which
/// zero-memory-report predicts with): the bytes of its buffers, and its
/// segment, the elements of each rank's block it moves at a time.
struct ReductionScratch {
  int pieces = 0;
  int64_t bytes[2] = {0, 0};
  int64_t segment = 0;
};
ReductionScratch reductionScratch(zrt_collective kind, int worldSize,
                                  int64_t count, std::size_t elementBytes) {
  ReductionScratch r;
  r.pieces = zrt_comm_scratch(kind, worldSize, count,
                              static_cast<int64_t>(elementBytes),
                              static_cast<int64_t>(bucketBytes.load()),
                              r.bytes);
  if (r.pieces < 0)
    throw Error("count = " + std::to_string(count) +
                " is too large: the scratch size overflows");
  if (r.pieces > 0)
    r.segment = r.bytes[0] / (int64_t(worldSize) * int64_t(elementBytes));
  return r;
}

/// How many of the n elements from `start` lie below `length`.
int64_t validLength(int64_t start, int64_t n, int64_t length) {
  return std::clamp<int64_t>(length - start, 0, n);
}

template <typename T> void combine(Op op, T &acc, T x) {
  if (op == Op::Sum) {
    acc += x;
  } else if (acc == acc && (x != x || x > acc)) {
    // Max: a NaN stays once it is there (the first in rank order wins),
    // otherwise a strictly greater value replaces the accumulator.
    acc = x;
  }
}

/// dst[i] = recv[i] op recv[n + i] op ... op recv[(N-1)n + i] for i <
/// valid: the received pieces of ranks 0..N-1, combined in rank order.
template <typename T>
void reduceInRankOrder(Op op, T *dst, int64_t valid, const T *recv, int64_t n,
                       int worldSize) {
  if (valid <= 0)
    return;
  if constexpr (std::is_same_v<T, BF16>) {
    // f32 accumulation in rank order, one rounding per element.
    for (int64_t i = 0; i < valid; ++i) {
      float acc = toFloat(recv[i]);
      for (int r = 1; r < worldSize; ++r)
        combine(op, acc, toFloat(recv[r * n + i]));
      dst[i] = toBF16(acc);
    }
  } else {
    std::memcpy(dst, recv, std::size_t(valid) * sizeof(T));
    for (int r = 1; r < worldSize; ++r) {
      const T *src = recv + r * n;
      if (op == Op::Sum) {
        for (int64_t i = 0; i < valid; ++i)
          dst[i] += src[i];
      } else {
        for (int64_t i = 0; i < valid; ++i)
          combine(op, dst[i], src[i]);
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// The all-reduce of `count` elements on the world's N > 1 ranks.
template <typename T>
void allReduceOnMpi(World &w, Op op, const T *in, T *out, int64_t count) {
  const int N = w.size.load(), q = w.rank.load();
  const MPI_Datatype element = mpiType<T>();
  const int64_t L = count;
  const int64_t c = (L + N - 1) / N; // block length of the padded buffer
  const ReductionScratch scratch =
      reductionScratch(ZRT_ALL_REDUCE, N, L, sizeof(T));
  const int64_t s = scratch.segment;
  const bool padded = scratch.pieces == 2;
  Scratch recv(static_cast<std::size_t>(scratch.bytes[0]));
  Scratch pack(padded ? static_cast<std::size_t>(scratch.bytes[1]) : 0);
  T *recvT = recv.as<T>(), *packT = pack.as<T>();

  // A segment is exchanged straight from (to) the caller's buffer when no
  // block's piece reaches into the padding.
  auto direct = [&](int64_t j, int64_t n) { return (N - 1) * c + j + n <= L; };

  // Reduce-scatter: rank q reduces block q, writing the valid part of it
  // to out. With out == in, the piece written was sent in this segment and
  // later segments read other pieces, so in place is safe.
  for (int64_t j = 0; j < c; j += s) {
    const int64_t n = std::min(s, c - j);
    if (direct(j, n)) {
      Pieces<T> pieces(n, c);
      alltoall(w, in + j, pieces.count, pieces.type, recvT,
                         static_cast<int>(n), element);
    } else {
      for (int r = 0; r < N; ++r) {
        const int64_t start = r * c + j, v = validLength(start, n, L);
        if (v > 0)
          std::memcpy(packT + r * n, in + start, std::size_t(v) * sizeof(T));
        std::fill(packT + r * n + v, packT + (r + 1) * n, T());
      }
      alltoall(w, packT, static_cast<int>(n), element, recvT,
                         static_cast<int>(n), element);
    }
    const int64_t own = q * c + j;
    const int64_t v = validLength(own, n, L);
    if (v > 0)
      reduceInRankOrder(op, out + own, v, recvT, n, N);
  }

  // All-gather of the reduced blocks, in place in out.
  for (int64_t j = 0; j < c; j += s) {
    const int64_t n = std::min(s, c - j);
    if (direct(j, n)) {
      Pieces<T> pieces(n, c);
      allgather(w, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out + j,
                          pieces.count, pieces.type);
    } else {
      const int64_t own = q * c + j, ownValid = validLength(own, n, L);
      if (ownValid > 0)
        std::memcpy(packT + q * n, out + own,
                    std::size_t(ownValid) * sizeof(T));
      std::fill(packT + q * n + ownValid, packT + (q + 1) * n, T());
      allgather(w, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, packT,
                          static_cast<int>(n), element);
      for (int r = 0; r < N; ++r) {
        const int64_t start = r * c + j, v = validLength(start, n, L);
        if (r != q && v > 0)
          std::memcpy(out + start, packT + r * n, std::size_t(v) * sizeof(T));
      }
    }
  }
}

/// The reduce-scatter (a sum) of `count` elements a rank on the world's
/// N > 1 ranks.
template <typename T>
void reduceScatterOnMpi(World &w, const T *in, T *out, int64_t count) {
  const int N = w.size.load();
  const MPI_Datatype element = mpiType<T>();
  const int64_t c = count;
  const ReductionScratch scratch =
      reductionScratch(ZRT_REDUCE_SCATTER, N, c, sizeof(T));
  const int64_t s = scratch.segment;
  Scratch recv(static_cast<std::size_t>(scratch.bytes[0]));
  T *recvT = recv.as<T>();
  // With out == in + b*count, the piece written in a segment was sent in
  // that segment; later segments read other pieces.
  for (int64_t j = 0; j < c; j += s) {
    const int64_t n = std::min(s, c - j);
    Pieces<T> pieces(n, c);
    alltoall(w, in + j, pieces.count, pieces.type, recvT,
                       static_cast<int>(n), element);
    reduceInRankOrder(Op::Sum, out + j, n, recvT, n, N);
  }
}

/// The all-gather of `count` elements a rank on the world's N > 1 ranks.
template <typename T>
void allGatherOnMpi(World &w, const T *in, T *out, int64_t count) {
  const int q = w.rank.load();
  const bool inPlace = in == out + q * count;
  const MPI_Datatype element = mpiType<T>();
  const int64_t c = count;
  // No temporary: segments only keep counts within an int.
  const int64_t s = std::min<int64_t>(c, INT_MAX);
  for (int64_t j = 0; j < c; j += s) {
    const int64_t n = std::min(s, c - j);
    Pieces<T> pieces(n, c);
    if (inPlace)
      allgather(w, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out + j,
                          pieces.count, pieces.type);
    else
      allgather(w, in + j, static_cast<int>(n), element, out + j,
                          pieces.count, pieces.type);
  }
}

template <typename T>
uint64_t allReduceScalarImpl(Op op, T *value, bool counted = true) {
  std::unique_lock<std::mutex> lock;
  World &w = worldForCollective(lock);
  startCollective(w, "scalar_all_reduce");
  const int N = w.size.load();
  if (N == 1)
    return 0;
  // Uncounted: the simulated link's own exchange, which is no part of the
  // step (and would otherwise take scratch at moments that depend on
  // timing).
  // The value is the host's; so is its scratch where the runtime's
  // buffers are device memory (outside the categories, as predicted).
  counted = counted && runtimeBuffersOnHost();
  Scratch all(counted ? static_cast<std::size_t>(
                            reductionScratch(ZRT_SCALAR_ALL_REDUCE, N, 1,
                                             sizeof(T))
                                .bytes[0])
                      : 0);
  std::vector<T> uncounted(counted ? 0 : N);
  T *allT = counted ? all.as<T>() : uncounted.data();
  allgather(w, value, 1, mpiType<T>(), allT, 1, mpiType<T>());
  T acc = allT[0];
  for (int r = 1; r < N; ++r)
    combine(op, acc, allT[r]);
  *value = acc;
  return zrt_collective_bytes_sent(ZRT_SCALAR_ALL_REDUCE, N, 1, sizeof(T));
}

//===----------------------------------------------------------------------===//
// The communicator
//===----------------------------------------------------------------------===//

/// The collectives of host memory on the world's MPI (Communicator.h).
/// start() runs a collective to its end, each exchange waited for with the
/// world's deadline (waitFor), so done() is true at once and nothing is
/// ever left to abort; the asynchrony of a started collective is the
/// communication thread's (CommQueue.h). The world makes and frees MPI's
/// communicator itself, so open() and close() are the interface's no-ops,
/// and host memory has no compute stream to mark.
class MpiCommunicator final : public Communicator {
public:
  int64_t start(const CollectiveArgs &c, int64_t /*mark*/) override {
    if (c.dtype == DType::F32)
      run<float>(c);
    else if (c.dtype == DType::BF16)
      run<BF16>(c);
    else
      run<double>(c);
    return 0;
  }

  bool done(int64_t /*handle*/) override { return true; }

  void abort() noexcept override {}

private:
  template <typename T> static void run(const CollectiveArgs &c) {
    World &w = world();
    const auto *in = static_cast<const T *>(c.in);
    auto *out = static_cast<T *>(c.out);
    switch (c.kind) {
    case CollectiveArgs::Kind::AllReduce:
      allReduceOnMpi(w, c.max ? Op::Max : Op::Sum, in, out, c.count);
      break;
    case CollectiveArgs::Kind::ReduceScatter:
      reduceScatterOnMpi(w, in, out, c.count);
      break;
    case CollectiveArgs::Kind::AllGather:
      allGatherOnMpi(w, in, out, c.count);
      break;
    }
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Interface
//===----------------------------------------------------------------------===//

Communicator &mpiCommunicator() {
  static Communicator *instance = new MpiCommunicator();
  return *instance;
}

uint64_t allReduceScalar(DType dtype, Op op, void *value) {
  if (dtype == DType::F32)
    return allReduceScalarImpl(op, static_cast<float *>(value));
  return allReduceScalarImpl(op, static_cast<double *>(value));
}

void allReduceMaxUncounted(double *value) {
  allReduceScalarImpl(Op::Max, value, /*counted=*/false);
}

std::size_t setBucketBytes(std::size_t bytes) {
  return bucketBytes.exchange(bytes ? bytes : kDefaultBucketBytes);
}

} // namespace comm

void reserveCommArena(std::size_t bytes) { comm::commArena().reserve(bytes); }
void releaseCommArena() { comm::commArena().release(); }

} // namespace zero::runtime
