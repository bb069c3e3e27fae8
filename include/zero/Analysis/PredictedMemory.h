//===- PredictedMemory.h - Memory of a step further down its pipeline -*- C++ -*-===//
//
// zero-remat and zero-schedule hold a memory budget on a step that is not
// yet the code that runs: they predict what one rank will hold by running
// the rest of the way (partitioning, bufferization) on a copy and asking
// zero-memory-report's analysis (StepMemory.h) about the result. This is
// that piece, once: the pipeline parsed once per pass run, the copy, and
// which bufferization a target predicts with.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_PREDICTEDMEMORY_H
#define ZERO_ANALYSIS_PREDICTEDMEMORY_H

#include "zero/Support/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <memory>
#include <string>

namespace mlir::zero {

/// The pipeline that bufferizes a partitioned step as `target`'s lowering
/// does (zero-bufferize-step; for target=cuda with GEMM rows padded and no
/// f32 copies of bf16 operands), named here once for every pass and
/// pipeline that predicts memory.
std::string bufferizeStepPipeline(Target target);

/// A module pass pipeline that turns a copy of a module into the bufferized
/// step whose memory is predicted.
class MemoryPredictor {
public:
  /// Parses `pipeline`; on failure, the parser's message in `error`.
  static FailureOr<MemoryPredictor> parse(MLIRContext *context,
                                          StringRef pipeline,
                                          std::string &error);
  /// Adds the dialects `pipeline` creates to `registry` (a pass that runs
  /// it must have them loaded before its pass manager runs); a pipeline that
  /// does not parse adds none, and the pass reports it when it runs.
  static void addDependentDialects(StringRef pipeline,
                                   DialectRegistry &registry);

  /// Runs the pipeline on a copy of `module`, which `prepare` (if given)
  /// changes first (zero-remat tags the ops it wants to find again). Fails
  /// where the pipeline fails, its errors emitted.
  FailureOr<OwningOpRef<ModuleOp>>
  run(ModuleOp module, llvm::function_ref<void(ModuleOp)> prepare = {});

  StringRef getPipeline() const { return pipeline; }

private:
  MemoryPredictor(std::string pipeline, std::unique_ptr<PassManager> pm)
      : pipeline(std::move(pipeline)), pm(std::move(pm)) {}

  std::string pipeline;
  std::unique_ptr<PassManager> pm;
};

} // namespace mlir::zero

#endif // ZERO_ANALYSIS_PREDICTEDMEMORY_H
