//===- CompileStep.h - One compilation for every way of running -*- C++ -*-===//
//
// zero-run and zero-compile compile a step the same way: find out which form
// the module is in (a training-step contract, a module zero-partition already
// rewrote, or one already lowered with its step ABI), build the pipeline that
// form needs from typed options (the builders of Pipelines.h, which
// zero-train-pipeline and zero-lower-cpu run too), run it, and emit an object
// file (ObjectFile.h). CompileFlags.h parses the tools' flags into the
// options.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TARGET_COMPILESTEP_H
#define ZERO_TARGET_COMPILESTEP_H

#include "zero/Conversion/Pipelines.h"
#include "zero/Target/ObjectFile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <string>

namespace mlir::zero {

enum class StepForm {
  /// forward_backward and optimizer (docs/training-step-ir.md).
  Contract,
  /// @train_step from zero-partition, with zero.stage and zero.world_size.
  Partitioned,
  /// LLVM dialect with the step ABI (zero-lower-cpu's output).
  Lowered,
};

struct StepInfo {
  StepForm form = StepForm::Contract;
  /// Whether zero-partition rewrote the module (Partitioned, or Lowered
  /// from a partitioned module), and what it was run with.
  bool partitioned = false;
  int64_t stage = 0, worldSize = 1;
};

/// The failure of a parse or a pipeline whose diagnostics are printed
/// already, one located line each: a tool that gets it prints nothing more
/// and exits non-zero.
class DiagnosedError : public llvm::ErrorInfo<DiagnosedError> {
public:
  static char ID;
  explicit DiagnosedError(std::string what) : what(std::move(what)) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

private:
  std::string what;
};

/// Prints each diagnostic as one line, `file:line:col: error: message`,
/// without the source line under it: a located diagnostic on a function
/// would otherwise echo its signature, which in a real model's step is
/// kilobytes. Notes follow as lines of their own.
class OneLineDiagnosticHandler : public SourceMgrDiagnosticHandler {
public:
  OneLineDiagnosticHandler(llvm::SourceMgr &mgr, MLIRContext *ctx);
};

/// A step module read for compilation: a context with every dialect the
/// pipelines use, and diagnostics printed one line each with their source
/// locations for as long as the loader lives (the passes report through it
/// too).
class StepLoader {
public:
  StepLoader();
  /// Parses `input` (named `name` in messages); the parser's diagnostics
  /// are printed, and the error is a DiagnosedError.
  llvm::Expected<OwningOpRef<ModuleOp>>
  parse(std::unique_ptr<llvm::MemoryBuffer> input, llvm::StringRef name);
  MLIRContext &getContext() { return *context; }

private:
  std::unique_ptr<MLIRContext> context;
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<OneLineDiagnosticHandler> handler;
};

/// Classifies `module`.
StepInfo inspectStep(ModuleOp module);

/// What compileStep compiles with: the passes' options and the code
/// generator's. Every option of a pass has its Passes.td default (the
/// generated options structs inside TrainOptions); CompileFlags.h sets
/// them from zero-run's and zero-compile's flags.
struct CompileOptions {
  /// zero-partition's world-size (the ranks the step runs on), stage and
  /// accumulate; zero-schedule (whether it runs, its cost model and
  /// buckets); the memory budget; zero-offload's placements; the lowering
  /// and its target (whose step descriptor then names the runtime backend
  /// that runs it).
  TrainOptions pipeline;
  /// Whether a stage was asked for: a contract module without one is
  /// lowered as it is on one rank (its contract functions, unpartitioned)
  /// and partitioned at `pipeline.partition.stage` on more.
  bool stageGiven = false;
  ObjectOptions object;
};

/// Adds to `pm` the passes compileStep runs on a module of `info`'s form:
/// buildTrainPipeline for a contract (zero-verify and the lowering alone
/// for one rank without a stage), buildPartitionedStepPipeline for a
/// partitioned module, none for a lowered one. The error names a mismatch
/// (a module partitioned for other ranks or another stage, options a form
/// cannot take).
llvm::Error buildStepPipeline(OpPassManager &pm, const StepInfo &info,
                              const CompileOptions &options);

/// The pipeline compileStep runs on `module` (buildStepPipeline's; empty:
/// none), printed with every option of every pass spelled out: what a cache
/// of compiled steps keys a build by, so that a pass option added later
/// changes the key without anyone listing it.
llvm::Expected<std::string> printedPipeline(ModuleOp module,
                                            const CompileOptions &options);

/// Lowers `module` in place with buildStepPipeline's passes and emits its
/// object file. Diagnostics of the passes go to the context's handler; the
/// error is one line.
llvm::Expected<std::string> compileStep(ModuleOp module,
                                        const CompileOptions &options);

} // namespace mlir::zero

#endif // ZERO_TARGET_COMPILESTEP_H
