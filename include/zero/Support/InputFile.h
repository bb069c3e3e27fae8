//===- InputFile.h - Bounded reading of tool inputs -------------*- C++ -*-===//
//
// Tools read their module from a file or standard input. An input that never
// ends (/dev/zero, a FIFO nobody closes) must stop with one line instead of
// filling memory, so reading is bounded.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_SUPPORT_INPUTFILE_H
#define ZERO_SUPPORT_INPUTFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>

namespace mlir::zero {

/// The largest input a tool reads: 1 GiB, far above any module text.
constexpr uint64_t kMaxInputBytes = uint64_t(1) << 30;

/// Reads `path` ("-" is standard input) into a NUL-terminated buffer, at
/// most `limit` bytes; more is an error naming the limit.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(llvm::StringRef path, uint64_t limit = kMaxInputBytes);

} // namespace mlir::zero

#endif // ZERO_SUPPORT_INPUTFILE_H
