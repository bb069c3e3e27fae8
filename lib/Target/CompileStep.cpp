//===- CompileStep.cpp - One compilation for every way of running ---------===//

#include "zero/Target/CompileStep.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/InitAll.h"
#include "zero/Support/ByteSize.h"
#include "zero/Support/ParserGuard.h"

#include "zero/step.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::zero;

namespace {
llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}
} // namespace

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

std::string mlir::zero::exactNumber(double value) {
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  return llvm::formatv("{0}", llvm::format("%.17g", value)).str();
}

llvm::Expected<std::string>
mlir::zero::pipelineFor(const StepInfo &info, const CompileOptions &options) {
  std::string gemm = options.gemmToRuntime ? "true" : "false";
  if (info.partitioned) {
    if (info.worldSize != options.worldSize)
      return makeError(llvm::formatv(
          "the module was partitioned for {0} ranks (zero.world_size) but "
          "{1} were asked for: run it on {0} ranks, or start from the module "
          "before zero-partition",
          info.worldSize, options.worldSize));
    if (options.stage && *options.stage != info.stage)
      return makeError(llvm::formatv(
          "the module was partitioned for stage {0} (zero.stage) but stage "
          "{1} was asked for: drop the stage option, or start from the "
          "module before zero-partition",
          info.stage, *options.stage));
  }
  if (options.accumulate < 1)
    return makeError(llvm::formatv(
        "gradient accumulation takes at least 1 micro-batch per step, got {0}",
        options.accumulate));
  if (options.accumulate > 1 && info.form != StepForm::Contract)
    return makeError(llvm::formatv(
        "gradient accumulation ({0} micro-batches) is built by zero-partition, "
        "and this module is past it: start from the training step before "
        "zero-partition, or partition it with accumulate={0}",
        options.accumulate));
  if (options.target != "cpu" && options.target != "cuda")
    return makeError("unknown target '" + options.target +
                     "': it is cpu or cuda");
  const bool cuda = options.target == "cuda";
  if (cuda && options.worldSize > 1)
    return makeError(llvm::formatv(
        "target=cuda runs on one rank: the runtime's NCCL collectives have "
        "not run on several GPUs yet, so a step for {0} ranks is not built "
        "for them; compile it for --world-size 1, or for target=cpu",
        options.worldSize));
  if (cuda && (options.offloadOptimizer == "nvme" ||
               options.offloadParams != "device"))
    return makeError("--offload with target=cuda: the NVMe tier runs with "
                     "the cpu backend only (optimizer=host runs on both)");
  std::string lower = "gemm-to-runtime=" + gemm + " target=" + options.target;
  std::string schedule =
      llvm::formatv("link-gbps={0} link-latency-us={1} gemm-gflops={2} "
                    "vector-gflops={3} memory-gbps={4} bucket-bytes={5}",
                    exactNumber(options.linkGbps),
                    exactNumber(options.linkLatencyUs),
                    exactNumber(options.gemmGflops),
                    exactNumber(options.vectorGflops),
                    exactNumber(options.memoryGbps), options.bucketBytes)
          .str();
  // The budget's prediction is the target's (zero-memory-report target).
  std::string scheduleTarget = " target=" + options.target;
  std::string budget =
      options.memoryBudget > 0
          ? " memory-budget=" + std::to_string(options.memoryBudget)
          : std::string();
  bool offload = options.offloadOptimizer != "device" ||
                 options.offloadParams != "device";
  std::string placements =
      "optimizer=" + options.offloadOptimizer + " params=" +
      options.offloadParams;
  switch (info.form) {
  case StepForm::Lowered:
    if (offload)
      return makeError("the module is lowered already, with its placements "
                       "built in: --offload optimizer= and params= apply to "
                       "a module before zero-offload");
    return std::string();
  case StepForm::Partitioned:
    // Recomputation (zero-remat) needs the contract; a partitioned
    // module's budget is zero-schedule's alone.
    if (!budget.empty() && !options.schedule)
      return makeError("the module is partitioned already, so forward "
                       "values can no longer be recomputed to fit a memory "
                       "budget: start from the module before "
                       "zero-partition, or keep the schedule, which holds "
                       "its prefetches within the budget");
    return (options.schedule
                ? "zero-schedule{" + schedule + budget + scheduleTarget + "},"
                : "") +
           (offload ? "zero-offload{" + placements + "}," : "") +
           "zero-lower-cpu{" + lower + "}";
  case StepForm::Contract:
    // One rank without a stage: the contract functions as they are. More
    // ranks without a stage: plain data parallelism.
    if (!options.stage && options.worldSize == 1 && options.accumulate == 1 &&
        !offload && budget.empty())
      return "zero-verify,zero-lower-cpu{" + lower + "}";
    return llvm::formatv("zero-train-pipeline{{stage={0} world-size={1} "
                         "accumulate={5} target={9} gemm-to-runtime={2} "
                         "schedule={3} {4}{8} offload-optimizer={6} "
                         "offload-params={7}}",
                         options.stage.value_or(0), options.worldSize, gemm,
                         options.schedule ? "true" : "false", schedule,
                         options.accumulate, options.offloadOptimizer,
                         options.offloadParams, budget, options.target)
        .str();
  }
  return makeError("unknown step form");
}

llvm::Expected<int64_t>
mlir::zero::parseBucketBytesOption(llvm::StringRef text) {
  if (std::optional<int64_t> bytes = parseByteSize(text))
    return *bytes;
  return makeError("option '--bucket-bytes' expects a byte count such as "
                   "65536, 256KiB or 1MB (0: no buckets), got '" +
                   text.str() + "'");
}

llvm::Expected<std::string>
mlir::zero::printedPipeline(ModuleOp module, const CompileOptions &options) {
  llvm::Expected<std::string> pipeline =
      pipelineFor(inspectStep(module), options);
  if (!pipeline || pipeline->empty())
    return pipeline;
  PassManager pm = PassManager::on<ModuleOp>(module.getContext());
  std::string error, printed;
  llvm::raw_string_ostream os(error), out(printed);
  if (failed(parsePassPipeline(*pipeline, pm, os)))
    return makeError("cannot build the pipeline '" + *pipeline +
                     "': " + error);
  pm.printAsTextualPipeline(out);
  return printed;
}

llvm::Expected<std::string>
mlir::zero::compileStep(ModuleOp module, const CompileOptions &options) {
  llvm::Expected<std::string> pipeline =
      pipelineFor(inspectStep(module), options);
  if (!pipeline)
    return pipeline.takeError();
  if (!pipeline->empty()) {
    PassManager pm = PassManager::on<ModuleOp>(module.getContext());
    std::string error;
    llvm::raw_string_ostream os(error);
    if (failed(parsePassPipeline(*pipeline, pm, os)))
      return makeError("cannot build the pipeline '" + *pipeline +
                       "': " + error);
    if (failed(pm.run(module)))
      return llvm::make_error<DiagnosedError>("the step does not compile");
  }
  return emitObjectFile(module, options.object);
}
