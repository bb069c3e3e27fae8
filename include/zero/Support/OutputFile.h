//===- OutputFile.h - All-or-nothing writing of tool outputs ----*- C++ -*-===//
//
// Tools and passes that write a file promise that an error (a full disk, a
// directory that cannot be written) ends in one line and leaves no partial
// file where the output was meant to go.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_SUPPORT_OUTPUTFILE_H
#define ZERO_SUPPORT_OUTPUTFILE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::zero {

/// Writes what `write` prints to `path`:
/// - "-" is standard output;
/// - a path under /dev or /proc (/dev/null, /dev/stdout, /dev/fd/N) or one
///   that names something other than a regular file or a directory (a
///   character device, a FIFO) is opened and written to directly, never
///   replaced;
/// - anything else is written to a temporary file beside `path` that is
///   renamed over it only once every byte was written, so on an error
///   `path` is left as it was.
/// Errors name `path` and say what failed, in one line.
llvm::Error writeOutputFile(llvm::StringRef path,
                            llvm::function_ref<void(llvm::raw_ostream &)> write);

/// Makes a file-size limit (`ulimit -f`) end a write with an error (EFBIG)
/// that writeOutputFile reports like a full disk, instead of SIGXFSZ killing
/// the tool. Call after llvm::InitLLVM, which installs a handler for it.
void ignoreFileSizeSignal();

} // namespace mlir::zero

#endif // ZERO_SUPPORT_OUTPUTFILE_H
