//===- Dispatch.cpp - Which communicator runs a collective ----------------===//
//
// Comm.h's all-reduce, reduce-scatter and all-gather as the rest of the
// runtime calls them: the buffers checked, the world's lock taken and the
// collective numbered (startCollective), then one of three. A world of one
// copies (or, in place, does nothing); buffers of device memory go to the
// backend's Communicator (NCCL), opened on its first collective; the rest go
// to MPI's (mpi/MpiCollectives.cpp). Either communicator is started and
// waited for the same way (Comm.cpp's runOn), and each collective returns
// the bytes this rank sent by runtime.h's formula, which is what both send.
//
//===----------------------------------------------------------------------===//

#include "comm/CommInternal.h"

#include "zero/runtime.h"

#include <cstdint>
#include <mutex>
#include <string>

namespace zero::runtime::comm {
namespace {

/// Validates a collective's buffers; returns false when there is nothing to
/// do (count 0 is a counted no-op).
bool checkBuffers(const void *in, const void *out, int64_t count) {
  if (count < 0)
    throw Error("count = " + std::to_string(count) + " is negative");
  if (count == 0)
    return false;
  if (!in)
    throw Error("in is NULL");
  if (!out)
    throw Error("out is NULL");
  return true;
}

/// count * factor elements of `elementBytes` as a byte count, or an error.
std::size_t byteSize(int64_t count, int64_t factor, std::size_t elementBytes) {
  __int128 bytes = (__int128)count * factor * (__int128)elementBytes;
  if (bytes > (__int128)(SIZE_MAX / 2))
    throw Error("count = " + std::to_string(count) +
                " is too large: the buffer size overflows");
  return static_cast<std::size_t>(bytes);
}

uintptr_t addr(const void *p) { return reinterpret_cast<uintptr_t>(p); }

bool overlap(const void *a, std::size_t aBytes, const void *b,
             std::size_t bBytes) {
  return addr(a) < addr(b) + bBytes && addr(b) < addr(a) + aBytes;
}

/// Runs `c`, its arguments checked, on the world's ranks: a world of one
/// copies `copyBytes` from c.in to c.out (0 in place: its result is its
/// input), device memory goes to the backend's communicator, the rest to
/// MPI's. Returns the bytes this rank sent.
uint64_t run(World &w, zrt_collective kind, const CollectiveArgs &c,
             std::size_t copyBytes) {
  const int N = w.size.load();
  Backend *device = deviceFor(N);
  if (N == 1 && !(device && ncclWorldOfOne())) {
    if (copyBytes > 0)
      copyRuntimeBuffer(c.out, c.in, copyBytes);
    return 0;
  }
  if (device)
    runOnDevice(w, *device, c);
  else
    runOn(w, mpiCommunicator(), c, /*mark=*/-1);
  return zrt_collective_bytes_sent(kind, N, c.count, dtypeBytes(c.dtype));
}

} // namespace

uint64_t allReduce(DType dtype, Op op, const void *in, void *out,
                   int64_t count) {
  if (!checkBuffers(in, out, count))
    return 0;
  const std::size_t bytes = byteSize(count, 1, dtypeBytes(dtype));
  if (in != out && overlap(in, bytes, out, bytes))
    throw Error("in and out overlap (in place needs out == in)");
  std::unique_lock<std::mutex> lock;
  World &w = worldForCollective(lock);
  startCollective(w, "all_reduce");
  return run(
      w, ZRT_ALL_REDUCE,
      {CollectiveArgs::Kind::AllReduce, dtype, op == Op::Max, in, out, count},
      in != out ? bytes : 0);
}

uint64_t reduceScatter(DType dtype, const void *in, void *out, int64_t count) {
  if (!checkBuffers(in, out, count))
    return 0;
  std::unique_lock<std::mutex> lock;
  World &w = worldForCollective(lock);
  startCollective(w, "reduce_scatter");
  const int N = w.size.load();
  const std::size_t blockBytes = byteSize(count, 1, dtypeBytes(dtype));
  const std::size_t inBytes = byteSize(count, N, dtypeBytes(dtype));
  if (overlap(in, inBytes, out, blockBytes)) {
    uintptr_t offset = addr(out) - addr(in);
    if (addr(out) < addr(in) || offset % blockBytes != 0)
      throw Error("out overlaps in other than at a block boundary (in place "
                  "needs out == in + q * count, 0 <= q < N)");
  }
  return run(
      w, ZRT_REDUCE_SCATTER,
      {CollectiveArgs::Kind::ReduceScatter, dtype, false, in, out, count},
      in != out ? blockBytes : 0);
}

uint64_t allGather(DType dtype, const void *in, void *out, int64_t count) {
  if (!checkBuffers(in, out, count))
    return 0;
  std::unique_lock<std::mutex> lock;
  World &w = worldForCollective(lock);
  startCollective(w, "all_gather");
  const int N = w.size.load(), q = w.rank.load();
  const std::size_t blockBytes = byteSize(count, 1, dtypeBytes(dtype));
  const std::size_t outBytes = byteSize(count, N, dtypeBytes(dtype));
  const bool inPlace = in == static_cast<const char *>(out) + q * blockBytes;
  if (!inPlace && overlap(in, blockBytes, out, outBytes))
    throw Error("in and out overlap (in place needs in == out + rank * "
                "count)");
  return run(w, ZRT_ALL_GATHER,
             {CollectiveArgs::Kind::AllGather, dtype, false, in, out, count},
             inPlace ? 0 : blockBytes);
}

} // namespace zero::runtime::comm
