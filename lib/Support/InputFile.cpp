//===- InputFile.cpp - Bounded reading of tool inputs ---------------------===//

#include "zero/Support/InputFile.h"

#include "llvm/Support/Errc.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"

using namespace llvm;

Expected<std::unique_ptr<MemoryBuffer>>
mlir::zero::readInputFile(StringRef path, uint64_t limit) {
  std::string name = path == "-" ? "<stdin>" : path.str();
  int fd = 0;
  if (path != "-") {
    if (std::error_code ec = sys::fs::openFileForRead(path, fd))
      return createStringError(ec, "cannot read '" + name + "': " + ec.message());
  }
  SmallString<0> data;
  constexpr size_t chunk = 1 << 20;
  std::error_code failure;
  while (true) {
    size_t old = data.size();
    data.resize_for_overwrite(old + chunk);
    Expected<size_t> n = sys::fs::readNativeFile(
        sys::fs::convertFDToNativeFile(fd),
        MutableArrayRef<char>(data.data() + old, chunk));
    if (!n) {
      failure = errorToErrorCode(n.takeError());
      data.truncate(old);
      break;
    }
    data.truncate(old + *n);
    if (*n == 0)
      break;
    if (data.size() > limit) {
      if (path != "-")
        sys::Process::SafelyCloseFileDescriptor(fd);
      return createStringError(
          errc::file_too_large,
          "'" + name + "' is larger than " + Twine(limit >> 20) +
              " MiB, the most a module may be; is it a device or a pipe "
              "that never ends?");
    }
  }
  if (path != "-")
    sys::Process::SafelyCloseFileDescriptor(fd);
  if (failure)
    return createStringError(failure,
                             "cannot read '" + name + "': " + failure.message());
  return MemoryBuffer::getMemBufferCopy(data, name);
}
