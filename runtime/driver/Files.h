//===- Files.h - Safe file input and output for the driver ------*- C++ -*-===//

#ifndef ZERO_DRIVER_FILES_H
#define ZERO_DRIVER_FILES_H

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace zero::driver {

/// A piece of an output file.
struct Chunk {
  const void *data;
  size_t bytes;
};

/// Writes every byte of `chunks` to descriptor `fd` (retrying short writes
/// and EINTR); false with strerror's text in `error` (a full disk
/// included).
bool writeChunks(int fd, const std::vector<Chunk> &chunks, std::string &error);

/// fsync of a directory, so that the names in it are on disk; the error
/// names the directory.
bool syncDirectory(const std::string &path, std::string &error);

/// Writes `chunks` to `path` so that the destination never holds a partial
/// file: into a temporary file beside it, flushed to disk (fsync), then
/// renamed over it. /dev/stdout and /dev/stderr go to the process's own
/// descriptors; any other path under /dev or /proc, a character device or a
/// FIFO is written to directly instead of being replaced. Returns false with a one-line message (and no file left behind)
/// on any error, a full disk included.
bool writeFileAtomically(const std::string &path,
                         const std::vector<Chunk> &chunks, std::string &error);

/// Whether writeFileAtomically could write `path` now, found out without
/// leaving anything behind (a temporary file beside it, made and removed),
/// so that a run checks its outputs before it starts rather than after;
/// false with the message that write would give.
bool probeOutputFile(const std::string &path, std::string &error);

/// Whether directory `path` exists or could be made (its nearest existing
/// ancestor is a directory in which one can be created, tried and undone);
/// false with a one-line message naming the path.
bool probeOutputDirectory(const std::string &path, std::string &error);

/// A regular file written the way writeFileAtomically writes one, in
/// pieces: into a temporary file beside `path`, published by commit() with
/// fsync and one rename (and the directory flushed). Destroyed without a
/// commit (or after a failed one), it removes the temporary file.
class AtomicFile {
public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  ~AtomicFile();
  bool open(const std::string &path, std::string &error);
  bool write(const void *data, size_t bytes, std::string &error);
  bool commit(std::string &error);

private:
  std::string path, temp;
  int fd = -1;
};

/// Reads the regular file `path` whole if it holds at most `maxBytes` bytes;
/// a device, FIFO or directory, or a larger file, is an error (a one-line
/// message), so an input that never ends cannot exhaust memory.
/// `what` names the file in messages ("data file", "--init file").
bool readFileLimited(const std::string &path, size_t maxBytes,
                     std::string &out, std::string &error,
                     const std::string &what = "file");

} // namespace zero::driver

#endif // ZERO_DRIVER_FILES_H
