//===- CompileFlags.h - The flags zero-run and zero-compile share -*- C++ -*-===//
//
// zero-run and zero-compile compile a step the same way (CompileStep.h), and
// take the same flags for it: --stage, --accumulate, --target, the cost
// model's --link-model and --compute-model, --bucket-bytes, --memory-budget
// and so on. Each is declared once, in CompileFlags.cpp's table: its name,
// its help (with the defaults of CompileOptions, that is Passes.td's), and
// the field of CompileOptions it sets. A tool looks an argument up here
// first and keeps only its own flags (zero-compile's -o and --world-size,
// zero-run's --cache-dir and the driver's).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TARGET_COMPILEFLAGS_H
#define ZERO_TARGET_COMPILEFLAGS_H

#include "zero/Target/CompileStep.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::zero {

class CompileFlags;

/// One shared flag, as CompileFlags.cpp's table declares it.
struct CompileFlag {
  /// The name without its dashes ("stage").
  llvm::StringLiteral name;
  /// How the help writes its value ("S"); empty for a switch, which takes
  /// none ("no-schedule").
  llvm::StringLiteral value;
  /// The help, as prose (the layout is help()'s), with the defaults of
  /// `defaults` in it.
  std::string (*help)(const CompileOptions &defaults);
  /// Sets the flag from `value` (empty for a switch); the error is one line.
  llvm::Error (*set)(CompileFlags &flags, llvm::StringRef value);

  bool takesValue() const { return !value.empty(); }
};

/// The shared flags of one command line, and the CompileOptions they set.
class CompileFlags {
public:
  /// The shared flag `--name` (`name` without its dashes), or null: a flag
  /// of the tool's own.
  static const CompileFlag *lookup(llvm::StringRef name);

  /// Every shared flag's help, in the table's order, laid out as the tools
  /// lay out theirs: the flag from column 2, its text from column 25.
  static std::string help();

  /// Sets `flag` from `value` (empty for a switch). The error is one line
  /// that names the option, what it expects and what was given.
  llvm::Error set(const CompileFlag &flag, llvm::StringRef value);

  /// The cost model's link from `spec` ("bw=G,latency=U"), named `option`
  /// in the error: --link-model's, or the link zero-run's --sim-link
  /// simulates where no --link-model is given. An infinite bandwidth
  /// becomes 1e9 GB/s: collectives cost their latency.
  llvm::Error setLink(llvm::StringRef spec, llvm::StringRef option);

  /// zero-offload's placements from an --offload value
  /// ("optimizer=nvme,params=nvme,nvme-dir=DIR"); the NVMe directory, which
  /// is the training run's to open, goes to `nvmeDir`.
  llvm::Error setPlacements(llvm::StringRef spec, std::string &nvmeDir);

  /// Whether `--name` was given (and set without error).
  bool given(llvm::StringRef name) const { return givenNames.contains(name); }

  /// The flags checked against each other, once every one is set.
  llvm::Error check() const;

  /// What the flags set; the rest keeps its defaults.
  CompileOptions options;

private:
  llvm::StringSet<> givenNames;
};

} // namespace mlir::zero

#endif // ZERO_TARGET_COMPILEFLAGS_H
