//===- PredictedMemory.cpp - Memory of a step further down its pipeline ---===//

#include "zero/Analysis/PredictedMemory.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::zero;

std::string mlir::zero::bufferizeStepPipeline(Target target) {
  return target == Target::CUDA ? "zero-bufferize-step{target=cuda}"
                                : "zero-bufferize-step";
}

FailureOr<MemoryPredictor> MemoryPredictor::parse(MLIRContext *context,
                                                  StringRef pipeline,
                                                  std::string &error) {
  auto pm = std::make_unique<PassManager>(context, ModuleOp::getOperationName());
  llvm::raw_string_ostream os(error);
  if (failed(parsePassPipeline(pipeline, *pm, os)))
    return failure();
  return MemoryPredictor(pipeline.str(), std::move(pm));
}

void MemoryPredictor::addDependentDialects(StringRef pipeline,
                                           DialectRegistry &registry) {
  OpPassManager pm(ModuleOp::getOperationName());
  std::string ignored;
  llvm::raw_string_ostream os(ignored);
  if (succeeded(parsePassPipeline(pipeline, pm, os)))
    pm.getDependentDialects(registry);
}

FailureOr<OwningOpRef<ModuleOp>>
MemoryPredictor::run(ModuleOp module,
                     llvm::function_ref<void(ModuleOp)> prepare) {
  OwningOpRef<ModuleOp> copy = module.clone();
  if (prepare)
    prepare(*copy);
  if (failed(pm->run(*copy)))
    return failure();
  return copy;
}
