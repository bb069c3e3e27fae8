//===- Files.cpp - Safe file input and output for the driver --------------===//

#include "Files.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace zero::driver;

bool zero::driver::writeChunks(int fd, const std::vector<Chunk> &chunks,
                               std::string &error) {
  for (const Chunk &c : chunks) {
    const char *p = static_cast<const char *>(c.data);
    size_t left = c.bytes;
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        error = std::strerror(n < 0 ? errno : ENOSPC);
        return false;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  return true;
}

bool zero::driver::syncDirectory(const std::string &path, std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    error = "cannot flush directory '" + path + "': " + std::strerror(errno);
    if (fd >= 0)
      ::close(fd);
    return false;
  }
  ::close(fd);
  return true;
}

namespace {
/// How writeFileAtomically writes `path`.
enum class Output {
  Stream,    ///< /dev/stdout, /dev/stderr: the process's own descriptor.
  Special,   ///< A device, a FIFO, under /dev or /proc: written to directly.
  Directory, ///< Refused.
  Regular,   ///< Replaced by a temporary file beside it.
};

Output classifyOutput(const std::string &path) {
  if (path == "/dev/stdout" || path == "/dev/stderr")
    return Output::Stream;
  // A /dev/fd/N that names a redirected file looks like a regular file.
  struct stat st;
  bool exists = ::stat(path.c_str(), &st) == 0;
  if (path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0 ||
      (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))))
    return Output::Special;
  return exists && S_ISDIR(st.st_mode) ? Output::Directory : Output::Regular;
}

/// `path` without trailing slashes, and its parent directory.
std::string parentOf(std::string path) {
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
} // namespace

bool zero::driver::probeOutputFile(const std::string &path,
                                   std::string &error) {
  switch (classifyOutput(path)) {
  case Output::Stream:
    return true;
  case Output::Special:
    if (::access(path.c_str(), W_OK) == 0)
      return true;
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  case Output::Directory:
    error = "cannot write '" + path + "': it is a directory";
    return false;
  case Output::Regular:
    break;
  }
  // What the write will do, undone: the temporary file beside it, which an
  // AtomicFile never committed removes.
  AtomicFile probe;
  return probe.open(path, error);
}

bool zero::driver::probeOutputDirectory(const std::string &path,
                                        std::string &error) {
  // The directory, or the nearest ancestor that exists: the rest is
  // created there.
  std::string existing = path;
  struct stat st;
  while (::stat(existing.c_str(), &st) != 0) {
    // A missing component, or one that is a file: look further up.
    if ((errno != ENOENT && errno != ENOTDIR) || existing == "/" ||
        existing == ".") {
      error = "cannot use directory '" + path + "': " +
              (existing == path ? "" : "'" + existing + "': ") +
              std::strerror(errno);
      return false;
    }
    existing = parentOf(existing);
  }
  if (!S_ISDIR(st.st_mode)) {
    error = "cannot use directory '" + path + "': '" + existing +
            "' is not a directory";
    return false;
  }
  std::string pattern = existing + "/.zero-probe.XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data())) {
    error = "cannot use directory '" + path + "': cannot create anything in '" +
            existing + "': " + std::strerror(errno);
    return false;
  }
  ::rmdir(name.data());
  return true;
}

bool zero::driver::writeFileAtomically(const std::string &path,
                                       const std::vector<Chunk> &chunks,
                                       std::string &error) {
  Output kind = classifyOutput(path);
  // The process's own streams: write to the descriptor (whatever it was
  // redirected to), after what stdio already buffered for it.
  if (kind == Output::Stream) {
    std::fflush(path == "/dev/stdout" ? stdout : stderr);
    std::string why;
    if (!writeChunks(path == "/dev/stdout" ? STDOUT_FILENO : STDERR_FILENO,
                  chunks, why)) {
      error = "cannot write '" + path + "': " + why;
      return false;
    }
    return true;
  }
  // Devices, FIFOs, and anything under /dev or /proc: written to, never
  // replaced.
  if (kind == Output::Special) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    std::string why;
    if (fd < 0 || !writeChunks(fd, chunks, why)) {
      error = "cannot write '" + path + "': " +
              (fd < 0 ? std::string(std::strerror(errno)) : why);
      if (fd >= 0)
        ::close(fd);
      return false;
    }
    ::close(fd);
    return true;
  }
  if (kind == Output::Directory) {
    error = "cannot write '" + path + "': it is a directory";
    return false;
  }
  AtomicFile file;
  if (!file.open(path, error))
    return false;
  for (const Chunk &c : chunks)
    if (!file.write(c.data, c.bytes, error))
      return false;
  return file.commit(error);
}

AtomicFile::~AtomicFile() {
  if (fd >= 0)
    ::close(fd);
  if (!temp.empty())
    ::unlink(temp.c_str());
}

bool AtomicFile::open(const std::string &target, std::string &error) {
  path = target;
  std::string pattern = path + ".tmp.XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  fd = ::mkstemp(name.data());
  if (fd < 0) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  temp = name.data();
  return true;
}

bool AtomicFile::write(const void *data, size_t bytes, std::string &error) {
  std::string why;
  if (fd < 0 || !writeChunks(fd, {{data, bytes}}, why)) {
    error = "cannot write '" + path + "': " + (fd < 0 ? "not open" : why);
    return false;
  }
  return true;
}

bool AtomicFile::commit(std::string &error) {
  if (fd < 0) {
    error = "cannot write '" + path + "': not open";
    return false;
  }
  std::string why;
  bool ok = true;
  if (::fsync(fd) != 0) {
    why = std::strerror(errno);
    ok = false;
  }
  // Regular files get the usual permissions (mkstemp makes them 0600).
  mode_t mask = ::umask(0);
  ::umask(mask);
  if (ok && ::fchmod(fd, 0666 & ~mask) != 0) {
    why = std::strerror(errno);
    ok = false;
  }
  if (::close(fd) != 0 && ok) {
    why = std::strerror(errno);
    ok = false;
  }
  fd = -1;
  if (ok && ::rename(temp.c_str(), path.c_str()) != 0) {
    why = std::strerror(errno);
    ok = false;
  }
  if (!ok) {
    error = "cannot write '" + path + "': " + why;
    return false;
  }
  temp.clear();
  // The new name on disk too: flush the directory that holds it (best
  // effort: the file itself is complete either way).
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  std::string ignored;
  syncDirectory(dir.empty() ? "/" : dir, ignored);
  return true;
}

bool zero::driver::readFileLimited(const std::string &path, size_t maxBytes,
                                   std::string &out, std::string &error,
                                   const std::string &what) {
  const std::string name = "cannot read " + what + " '" + path + "': ";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = name + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    error = name + "not a regular file";
    return false;
  }
  if (static_cast<unsigned long long>(st.st_size) > maxBytes) {
    ::close(fd);
    error = name + "it has " +
            std::to_string(st.st_size) + " bytes, more than the limit of " +
            std::to_string(maxBytes);
    return false;
  }
  out.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd, &out[done], out.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = name +
              (n < 0 ? std::strerror(errno) : "it shrank while being read");
      ::close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return true;
}
