//===- ObjectFile.h - Lowered steps to native object files ------*- C++ -*-===//
//
// Turns a lowered step (LLVM dialect with the step ABI, the output of
// zero-train-pipeline or zero-lower-cpu) into a relocatable object file for
// a CPU: zero-compile links it into a training binary, zero-run loads it into
// its own process. Both call this one function, so both run the same code.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TARGET_OBJECTFILE_H
#define ZERO_TARGET_OBJECTFILE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::zero {

struct ObjectOptions {
  /// LLVM optimization level, 0-3.
  unsigned optLevel = 2;
  /// The CPU to generate code for: "host" (this machine's CPU and its
  /// features) or an LLVM CPU name such as "x86-64-v3".
  std::string cpu = "host";
};

/// The target triple, CPU and features `options` select, as one line (for
/// cache keys and reports).
std::string describeTarget(const ObjectOptions &options);

/// Translates `module` (LLVM dialect only) to LLVM IR, optimizes it and
/// emits position-independent object code. Errors carry one-line messages.
llvm::Expected<std::string> emitObjectFile(ModuleOp module,
                                           const ObjectOptions &options);

} // namespace mlir::zero

#endif // ZERO_TARGET_OBJECTFILE_H
