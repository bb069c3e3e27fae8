//===- Nvme.cpp - The NVMe tier: extents in a per-rank file ---------------===//

#include "Nvme.h"

#include "Types.h"

#include <liburing.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zero::runtime {

namespace {

/// The largest single transfer handed to the kernel: big enough to stream
/// at the device's bandwidth, small enough that one tensor keeps several
/// requests in flight.
constexpr std::size_t kChunk = std::size_t(4) << 20;
constexpr unsigned kRingEntries = 64;

std::size_t roundUp(std::size_t bytes) {
  return (bytes + NvmeStore::kBlock - 1) / NvmeStore::kBlock *
         NvmeStore::kBlock;
}

std::string errnoText(int err) { return std::strerror(err); }

} // namespace

struct NvmeStore::Impl {
  struct Extent {
    uint64_t offset = 0, bytes = 0, reserved = 0;
    int category = 0;
  };
  /// One kernel transfer: [offset, offset + length) of the file to or from
  /// `buffer`.
  struct Chunk {
    int64_t request = 0;
    bool write = false;
    char *buffer = nullptr;
    uint64_t offset = 0, length = 0;
  };
  struct Request {
    int64_t pending = 0;
    std::string error;
  };

  int fd = -1;
  io_uring ring{};
  std::string path;
  std::vector<Extent> extents;
  uint64_t fileBytes = 0;
  std::unordered_map<int64_t, Request> requests;
  int64_t nextRequest = 0;
  unsigned inFlight = 0;
  Stats counters;

  ~Impl() {
    if (fd >= 0) {
      io_uring_queue_exit(&ring);
      ::close(fd);
      ::unlink(path.c_str());
    }
  }

  const Extent &extent(int64_t handle) const {
    if (handle < 1 || handle > static_cast<int64_t>(extents.size()))
      throw Error("NVMe extent " + std::to_string(handle) +
                  " does not exist (" + std::to_string(extents.size()) +
                  " allocated in " + path + ")");
    return extents[handle - 1];
  }

  void submit(Chunk *chunk) {
    if (inFlight >= kRingEntries)
      reapOne();
    io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    if (!sqe) {
      io_uring_submit(&ring);
      sqe = io_uring_get_sqe(&ring);
      if (!sqe)
        throw Error("io_uring has no free submission entry");
    }
    if (chunk->write)
      io_uring_prep_write(sqe, fd, chunk->buffer,
                          static_cast<unsigned>(chunk->length), chunk->offset);
    else
      io_uring_prep_read(sqe, fd, chunk->buffer,
                         static_cast<unsigned>(chunk->length), chunk->offset);
    io_uring_sqe_set_data(sqe, chunk);
    ++inFlight;
    int submitted = io_uring_submit(&ring);
    if (submitted < 0)
      throw Error("io_uring_submit on " + path + ": " +
                  errnoText(-submitted));
  }

  /// Waits for one completion and accounts it to its request; a short
  /// transfer goes back to the kernel for the rest.
  void reapOne() {
    io_uring_cqe *cqe = nullptr;
    int err;
    do
      err = io_uring_wait_cqe(&ring, &cqe);
    while (err == -EINTR);
    if (err < 0)
      throw Error("io_uring_wait_cqe on " + path + ": " + errnoText(-err));
    auto *chunk = static_cast<Chunk *>(io_uring_cqe_get_data(cqe));
    int res = cqe->res;
    io_uring_cqe_seen(&ring, cqe);
    --inFlight;
    Request &request = requests[chunk->request];
    if (res < 0 || (res == 0 && chunk->length > 0)) {
      if (request.error.empty())
        request.error =
            std::string(chunk->write ? "writing " : "reading ") +
            std::to_string(chunk->length) + " bytes at offset " +
            std::to_string(chunk->offset) + " of " + path + ": " +
            (res < 0 ? errnoText(-res) : "end of file");
    } else if (static_cast<uint64_t>(res) < chunk->length) {
      chunk->buffer += res;
      chunk->offset += res;
      chunk->length -= res;
      submit(chunk);
      return;
    }
    --request.pending;
    delete chunk;
  }

  /// Starts a request for `length` bytes at `at` within extent `handle`.
  int64_t start(int64_t handle, bool write, char *buffer, uint64_t at,
                uint64_t length) {
    const Extent &e = extent(handle);
    int64_t id = kRequestTag | ++nextRequest;
    Request &request = requests[id];
    for (uint64_t done = 0; done < length; done += kChunk) {
      auto *chunk = new Chunk;
      chunk->request = id;
      chunk->write = write;
      chunk->buffer = buffer + done;
      chunk->offset = e.offset + at + done;
      chunk->length = std::min<uint64_t>(kChunk, length - done);
      ++request.pending;
      submit(chunk);
    }
    if (write) {
      counters.writtenBytes += length;
      ++counters.writes;
    } else {
      counters.readBytes += length;
      ++counters.reads;
    }
    return id;
  }

  /// Reaps until `id` is complete; returns its failure or "".
  std::string complete(int64_t id) {
    auto it = requests.find(id);
    if (it == requests.end())
      return "NVMe request " + std::to_string(id & ~kRequestTag) +
             " was never started or was waited for already";
    try {
      while (requests[id].pending > 0)
        reapOne();
    } catch (const Error &e) {
      return e.what();
    }
    std::string error = std::move(requests[id].error);
    requests.erase(id);
    return error;
  }

  /// A driver's blocking transfer of an extent's first `bytes` through the
  /// aligned `staging` buffer of `size` bytes.
  void blocking(int64_t handle, bool write, char *data, std::size_t bytes,
                char *staging, std::size_t size) {
    for (std::size_t at = 0; at < bytes; at += size) {
      std::size_t n = std::min(size, bytes - at);
      std::size_t whole = roundUp(n);
      if (write) {
        std::memcpy(staging, data + at, n);
        std::memset(staging + n, 0, whole - n);
      }
      std::string error = complete(start(handle, write, staging, at, whole));
      if (!error.empty())
        throw Error(error);
      if (!write)
        std::memcpy(data + at, staging, n);
    }
  }
};

NvmeStore &NvmeStore::get() {
  static NvmeStore *instance = new NvmeStore();
  return *instance;
}

NvmeStore::~NvmeStore() = default;

void NvmeStore::open(const std::string &dir, int rank) {
  std::lock_guard<std::mutex> lock(mutex);
  if (impl)
    throw Error("the NVMe store is open already (" + impl->path + ")");
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error("the NVMe directory '" + dir + "' does not exist or is not "
                "a directory");
  auto store = std::make_unique<Impl>();
  store->path = dir + "/zero-rank" + std::to_string(rank) + ".nvme";
  int fd = ::open(store->path.c_str(),
                  O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600);
  if (fd < 0) {
    int err = errno;
    if (err == EINVAL)
      throw Error("the file system of '" + dir + "' does not support "
                  "O_DIRECT (tmpfs does not): give a directory on a disk");
    throw Error("cannot create " + store->path + ": " + errnoText(err));
  }
  int err = io_uring_queue_init(kRingEntries, &store->ring, 0);
  if (err < 0) {
    ::close(fd);
    ::unlink(store->path.c_str());
    throw Error("io_uring is not available (" + errnoText(-err) +
                "): NVMe offload needs it (Linux 5.6 or later, not turned "
                "off by kernel.io_uring_disabled or a seccomp filter)");
  }
  store->fd = fd;
  impl = std::move(store);
}

bool NvmeStore::isOpen() const {
  std::lock_guard<std::mutex> lock(mutex);
  return impl != nullptr;
}

void NvmeStore::close() {
  std::lock_guard<std::mutex> lock(mutex);
  if (impl && !impl->requests.empty()) {
    // Transfers the step never waited for still write into their buffers;
    // let them land before the ring goes.
    while (impl->inFlight > 0)
      impl->reapOne();
  }
  impl.reset();
}

std::string NvmeStore::path() const {
  std::lock_guard<std::mutex> lock(mutex);
  return impl ? impl->path : std::string();
}

int64_t NvmeStore::allocate(std::size_t bytes, int category) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!impl)
    throw Error("no NVMe store is open (the driver's --offload "
                "nvme-dir=DIR opens one)");
  Impl::Extent e;
  e.offset = impl->fileBytes;
  e.bytes = bytes;
  e.reserved = roundUp(bytes);
  e.category = category;
  if (e.reserved > 0) {
    int err = ::posix_fallocate(impl->fd, static_cast<off_t>(e.offset),
                                static_cast<off_t>(e.reserved));
    if (err == ENOSPC)
      throw Error("no space left in " + impl->path + " for " +
                  std::to_string(e.reserved) + " more bytes");
    if (err != 0)
      throw Error("cannot reserve " + std::to_string(e.reserved) +
                  " bytes in " + impl->path + ": " + errnoText(err));
  }
  impl->fileBytes += e.reserved;
  impl->extents.push_back(e);
  impl->counters.reserved[category] += e.reserved;
  return static_cast<int64_t>(impl->extents.size());
}

/// The checks of a started transfer: the whole reserved extent, to or
/// from a buffer aligned for O_DIRECT.
static void checkStarted(std::size_t reserved,
                         std::size_t logical, const void *buffer,
                         std::size_t bytes) {
  if (bytes != reserved)
    throw Error("a started transfer moves an extent's reserved " +
                std::to_string(reserved) + " bytes (its " +
                std::to_string(logical) + " rounded up to " +
                std::to_string(NvmeStore::kBlock) + "), not " +
                std::to_string(bytes));
  if (reinterpret_cast<uintptr_t>(buffer) % NvmeStore::kBlock != 0)
    throw Error("the buffer of a started transfer must be aligned to " +
                std::to_string(NvmeStore::kBlock) + " bytes (O_DIRECT)");
}

int64_t NvmeStore::start(int64_t extent, bool write, void *buffer,
                         std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!impl)
    throw Error("no NVMe store is open");
  const Impl::Extent &e = impl->extent(extent);
  checkStarted(e.reserved, e.bytes, buffer, bytes);
  return impl->start(extent, write, static_cast<char *>(buffer), 0, bytes);
}

std::string NvmeStore::wait(int64_t request) {
  auto begin = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mutex);
  if (!impl)
    return "NVMe request " + std::to_string(request & ~kRequestTag) +
           " waited for with no NVMe store open";
  std::string error = impl->complete(request);
  impl->counters.waitSeconds += std::chrono::duration<double>(
                                    std::chrono::steady_clock::now() - begin)
                                    .count();
  return error;
}

void NvmeStore::transfer(int64_t extent, bool write, void *data,
                         std::size_t bytes, void *(*bounce)(std::size_t, int),
                         void (*release)(void *)) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!impl)
    throw Error("no NVMe store is open");
  Impl::Extent e = impl->extent(extent);
  if (write ? bytes != e.bytes : bytes > e.bytes)
    throw Error(std::string(write ? "writing " : "reading ") +
                std::to_string(bytes) + " bytes of an extent of " +
                std::to_string(e.bytes) +
                (write ? " (a driver writes whole extents)" : ""));
  if (bytes == 0)
    return;
  std::size_t size = std::min<std::size_t>(e.reserved, kChunk);
  char *staging = static_cast<char *>(bounce(size, e.category));
  if (!staging)
    throw Error("no memory for a staging buffer of " + std::to_string(size) +
                " bytes");
  try {
    impl->blocking(extent, write, static_cast<char *>(data), bytes, staging,
                   size);
  } catch (...) {
    release(staging);
    throw;
  }
  release(staging);
}

NvmeStore::Stats NvmeStore::stats() {
  std::lock_guard<std::mutex> lock(mutex);
  if (!impl)
    return Stats();
  Stats s = impl->counters;
  s.fileBytes = impl->fileBytes;
  struct stat st;
  if (::fstat(impl->fd, &st) == 0) {
    s.fileBytes = static_cast<uint64_t>(st.st_size);
    s.diskBytes = static_cast<uint64_t>(st.st_blocks) * 512;
  }
  return s;
}

void NvmeStore::resetCounters() {
  std::lock_guard<std::mutex> lock(mutex);
  if (!impl)
    return;
  Stats &c = impl->counters;
  c.readBytes = c.writtenBytes = c.reads = c.writes = 0;
  c.waitSeconds = 0;
}

} // namespace zero::runtime
