//===- OutputFile.cpp - All-or-nothing writing of tool outputs ------------===//

#include "zero/Support/OutputFile.h"

#include "llvm/Support/FileSystem.h"

#include <csignal>

using namespace llvm;

/// The error of `os`, cleared so that its destructor does not end the
/// process with a fatal error.
static std::error_code takeError(raw_fd_ostream &os) {
  std::error_code ec = os.error();
  os.clear_error();
  return ec;
}

static Error writeError(StringRef path, std::error_code ec) {
  return createStringError(ec, "cannot write '" + path + "': " + ec.message());
}

Error mlir::zero::writeOutputFile(StringRef path,
                                  function_ref<void(raw_ostream &)> write) {
  if (path == "-") {
    write(outs());
    outs().flush();
    if (outs().has_error())
      return writeError("<stdout>", takeError(outs()));
    return Error::success();
  }

  // /dev/stdout, /dev/fd/N and /proc/self/fd/N name whatever the descriptor
  // is open on; replacing them would lose the output even where that is a
  // regular file.
  sys::fs::file_status status;
  bool direct = path.starts_with("/dev/") || path.starts_with("/proc/") ||
                (!sys::fs::status(path, status) && sys::fs::exists(status) &&
                 !sys::fs::is_regular_file(status) &&
                 !sys::fs::is_directory(status));
  if (direct) {
    std::error_code ec;
    raw_fd_ostream os(path, ec, sys::fs::OF_None);
    if (ec)
      return writeError(path, ec);
    write(os);
    os.close();
    if (os.has_error())
      return writeError(path, takeError(os));
    return Error::success();
  }

  Expected<sys::fs::TempFile> temp = sys::fs::TempFile::create(
      path + ".tmp-%%%%%%", sys::fs::all_read | sys::fs::all_write);
  if (!temp)
    return writeError(path, errorToErrorCode(temp.takeError()));
  std::error_code ec;
  {
    raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    write(os);
    os.flush();
    if (os.has_error())
      ec = takeError(os);
  }
  if (ec) {
    consumeError(temp->discard());
    return writeError(path, ec);
  }
  if (Error e = temp->keep(path))
    return writeError(path, errorToErrorCode(std::move(e)));
  return Error::success();
}

void mlir::zero::ignoreFileSizeSignal() {
#ifdef SIGXFSZ
  ::signal(SIGXFSZ, SIG_IGN);
#endif
}
