//===- CompileStep.cpp - One compilation for every way of running ---------===//

#include "zero/Target/CompileStep.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/InitAll.h"
#include "zero/Support/ParserGuard.h"

#include "zero/step.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::zero;

char DiagnosedError::ID = 0;

void DiagnosedError::log(llvm::raw_ostream &os) const {
  os << what << " (see the errors above)";
}

std::error_code DiagnosedError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

OneLineDiagnosticHandler::OneLineDiagnosticHandler(llvm::SourceMgr &mgr,
                                                   MLIRContext *ctx)
    : SourceMgrDiagnosticHandler(mgr, ctx) {
  setHandler([this](Diagnostic &diag) {
    emitDiagnostic(diag.getLocation(), diag.str(), diag.getSeverity(),
                   /*displaySourceLine=*/false);
    for (Diagnostic &note : diag.getNotes())
      emitDiagnostic(note.getLocation(), note.str(), note.getSeverity(),
                     /*displaySourceLine=*/false);
    return success();
  });
}

StepLoader::StepLoader() {
  DialectRegistry registry;
  registerZeroDialects(registry);
  context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  // Diagnostics name the location; printing whole (huge) ops helps nobody.
  context->printOpOnDiagnostic(false);
  handler = std::make_unique<OneLineDiagnosticHandler>(sourceMgr,
                                                       context.get());
}

llvm::Expected<OwningOpRef<ModuleOp>>
StepLoader::parse(std::unique_ptr<llvm::MemoryBuffer> input,
                  llvm::StringRef name) {
  unsigned bufferId = sourceMgr.AddNewSourceBuffer(std::move(input), {});
  OwningOpRef<ModuleOp> module;
  if (screenForParserCrashes(sourceMgr, bufferId))
    module = parseSourceFile<ModuleOp>(sourceMgr, context.get());
  if (!module)
    return llvm::make_error<DiagnosedError>("cannot parse '" + name.str() +
                                            "'");
  return module;
}

StepInfo mlir::zero::inspectStep(ModuleOp module) {
  StepInfo info;
  if (module.lookupSymbol<LLVM::GlobalOp>(ZRT_STEP_ABI_SYMBOL)) {
    info.form = StepForm::Lowered;
    // zero-opt keeps the descriptor as a module attribute too.
    if (auto abi = module->getAttrOfType<DictionaryAttr>(
            ZeroDialect::StepAbiAttrHelper::getNameStr())) {
      auto partitioned = abi.getAs<BoolAttr>("partitioned");
      auto stage = abi.getAs<IntegerAttr>("stage");
      auto world = abi.getAs<IntegerAttr>("world_size");
      if (partitioned && partitioned.getValue() && stage && world) {
        info.partitioned = true;
        info.stage = stage.getInt();
        info.worldSize = world.getInt();
      }
    }
    return info;
  }
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto world = fn->getAttrOfType<IntegerAttr>(
        ZeroDialect::WorldSizeAttrHelper::getNameStr());
    auto stage = fn->getAttrOfType<IntegerAttr>(
        ZeroDialect::StageAttrHelper::getNameStr());
    if (!world || !stage)
      continue;
    info.form = StepForm::Partitioned;
    info.partitioned = true;
    info.worldSize = world.getInt();
    info.stage = stage.getInt();
  }
  return info;
}

llvm::Error mlir::zero::buildStepPipeline(OpPassManager &pm,
                                          const StepInfo &info,
                                          const CompileOptions &options) {
  const TrainOptions &train = options.pipeline;
  const int64_t worldSize = train.partition.worldSize,
                stage = train.partition.stage,
                accumulate = train.partition.accumulate;
  if (info.partitioned) {
    if (info.worldSize != worldSize)
      return llvm::createStringError(llvm::formatv(
          "the module was partitioned for {0} ranks (zero.world_size) but "
          "{1} were asked for: run it on {0} ranks, or start from the module "
          "before zero-partition",
          info.worldSize, worldSize));
    if (options.stageGiven && stage != info.stage)
      return llvm::createStringError(llvm::formatv(
          "the module was partitioned for stage {0} (zero.stage) but stage "
          "{1} was asked for: drop the stage option, or start from the "
          "module before zero-partition",
          info.stage, stage));
  }
  if (accumulate < 1)
    return llvm::createStringError(llvm::formatv(
        "gradient accumulation takes at least 1 micro-batch per step, got {0}",
        accumulate));
  if (accumulate > 1 && info.form != StepForm::Contract)
    return llvm::createStringError(llvm::formatv(
        "gradient accumulation ({0} micro-batches) is built by zero-partition, "
        "and this module is past it: start from the training step before "
        "zero-partition, or partition it with accumulate={0}",
        accumulate));
  if (const int64_t threshold = train.partition.paramPersistenceThreshold) {
    if (info.form != StepForm::Contract)
      return llvm::createStringError(llvm::formatv(
          "parameter persistence (threshold {0}) is chosen by zero-partition, "
          "and this module is past it: start from the training step before "
          "zero-partition, or partition it with "
          "param-persistence-threshold={0}",
          threshold));
    if (stage != 3)
      return llvm::createStringError(llvm::formatv(
          "--param-persistence-threshold keeps parameters under {0} elements "
          "whole at stage 3, where the others are sharded; this step is stage "
          "{1}, where every parameter is whole: add --stage 3",
          threshold, stage));
  }
  const bool cuda = train.lower.target == Target::CUDA;
  if (cuda && worldSize > 1)
    return llvm::createStringError(llvm::formatv(
        "target=cuda runs on one rank: the runtime's NCCL collectives have "
        "not run on several GPUs yet, so a step for {0} ranks is not built "
        "for them; compile it for --world-size 1, or for target=cpu",
        worldSize));
  if (cuda && (train.offload.optimizer == Placement::Nvme ||
               train.offload.params != Placement::Device))
    return llvm::createStringError(
        "--offload with target=cuda: the NVMe tier runs with "
        "the cpu backend only (optimizer=host runs on both)");
  switch (info.form) {
  case StepForm::Lowered:
    if (train.offloads())
      return llvm::createStringError(
          "the module is lowered already, with its placements "
          "built in: --offload optimizer= and params= apply to "
          "a module before zero-offload");
    return llvm::Error::success();
  case StepForm::Partitioned:
    // Recomputation (zero-remat) needs the contract; a partitioned
    // module's budget is zero-schedule's alone.
    if (train.memoryBudget > 0 && !train.runSchedule)
      return llvm::createStringError(
          "the module is partitioned already, so forward "
          "values can no longer be recomputed to fit a memory "
          "budget: start from the module before "
          "zero-partition, or keep the schedule, which holds "
          "its prefetches within the budget");
    buildPartitionedStepPipeline(pm, train);
    return llvm::Error::success();
  case StepForm::Contract:
    // One rank without a stage: the contract functions as they are. More
    // ranks without a stage: plain data parallelism.
    if (!options.stageGiven && worldSize == 1 && accumulate == 1 &&
        !train.offloads() && train.memoryBudget <= 0) {
      pm.addPass(createZeroVerifyPass());
      buildLowerCPUPipeline(pm, train.lower);
    } else {
      buildTrainPipeline(pm, train);
    }
    return llvm::Error::success();
  }
  return llvm::createStringError("unknown step form");
}

llvm::Expected<std::string>
mlir::zero::printedPipeline(ModuleOp module, const CompileOptions &options) {
  PassManager pm = PassManager::on<ModuleOp>(module.getContext());
  if (llvm::Error error = buildStepPipeline(pm, inspectStep(module), options))
    return std::move(error);
  std::string printed;
  llvm::raw_string_ostream out(printed);
  if (pm.size() != 0)
    pm.printAsTextualPipeline(out);
  return printed;
}

llvm::Expected<std::string>
mlir::zero::compileStep(ModuleOp module, const CompileOptions &options) {
  PassManager pm = PassManager::on<ModuleOp>(module.getContext());
  if (llvm::Error error = buildStepPipeline(pm, inspectStep(module), options))
    return std::move(error);
  if (pm.size() != 0 && failed(pm.run(module)))
    return llvm::make_error<DiagnosedError>("the step does not compile");
  return emitObjectFile(module, options.object);
}
