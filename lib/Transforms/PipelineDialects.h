//===- PipelineDialects.h - Dialects of a nested pipeline -------*- C++ -*-===//
//
// zero-schedule and zero-remat run a textual pass pipeline on a copy of the
// module to predict its memory; the dialects that pipeline creates must be
// loaded before the outer pass manager runs (multi-threaded contexts may
// not load dialects during a pass).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_TRANSFORMS_PIPELINEDIALECTS_H
#define ZERO_LIB_TRANSFORMS_PIPELINEDIALECTS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

namespace mlir::zero {

/// Adds the dependent dialects of the module pipeline `pipeline` to
/// `registry`; a pipeline that does not parse adds none (the pass reports
/// it when it runs).
inline void addPipelineDialects(StringRef pipeline,
                                DialectRegistry &registry) {
  OpPassManager pm(ModuleOp::getOperationName());
  std::string ignored;
  llvm::raw_string_ostream os(ignored);
  if (succeeded(parsePassPipeline(pipeline, pm, os)))
    pm.getDependentDialects(registry);
}

} // namespace mlir::zero

#endif // ZERO_LIB_TRANSFORMS_PIPELINEDIALECTS_H
