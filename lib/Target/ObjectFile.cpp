//===- ObjectFile.cpp - Lowered steps to native object files --------------===//

#include "zero/Target/ObjectFile.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>
#include <mutex>

using namespace mlir;
using namespace mlir::zero;

namespace {

struct TargetChoice {
  llvm::Triple triple;
  std::string cpu, features;
};

TargetChoice chooseTarget(const ObjectOptions &options) {
  TargetChoice t;
  t.triple = llvm::Triple(llvm::sys::getProcessTriple());
  if (options.cpu == "host") {
    t.cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures features;
    for (const auto &f : llvm::sys::getHostCPUFeatures())
      features.AddFeature(f.first(), f.second);
    t.features = features.getString();
  } else {
    t.cpu = options.cpu;
  }
  return t;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const ObjectOptions &options) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  if (options.optLevel > 3)
    return llvm::createStringError(
        "optimization level " + llvm::Twine(options.optLevel) + " is not 0-3");
  TargetChoice t = chooseTarget(options);
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(t.triple, error);
  if (!target)
    return llvm::createStringError("no LLVM target for " + t.triple.str() +
                                   ": " + error);
  if (options.cpu != "host") {
    std::unique_ptr<llvm::MCSubtargetInfo> info(
        target->createMCSubtargetInfo(t.triple, "", ""));
    if (!info || !info->isCPUStringValid(t.cpu))
      return llvm::createStringError(
          "unknown CPU '" + t.cpu + "' for " + t.triple.str() +
          " (try host, x86-64, x86-64-v2, x86-64-v3 or "
          "x86-64-v4)");
  }
  llvm::CodeGenOptLevel level =
      options.optLevel == 0   ? llvm::CodeGenOptLevel::None
      : options.optLevel == 1 ? llvm::CodeGenOptLevel::Less
      : options.optLevel == 2 ? llvm::CodeGenOptLevel::Default
                              : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      t.triple, t.cpu, t.features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, level));
  if (!tm)
    return llvm::createStringError("cannot create a target machine for " +
                                   t.triple.str());
  return std::move(tm);
}
} // namespace

std::string mlir::zero::describeTarget(const ObjectOptions &options) {
  TargetChoice t = chooseTarget(options);
  return t.triple.str() + " cpu=" + t.cpu + " features=" + t.features +
         " O" + std::to_string(options.optLevel);
}

llvm::Expected<std::string>
mlir::zero::emitObjectFile(ModuleOp module, const ObjectOptions &options) {
  auto tm = createTargetMachine(options);
  if (!tm)
    return tm.takeError();

  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "zero-step");
  if (!llvmModule)
    return llvm::createStringError(
        "cannot translate the lowered step to LLVM IR (is it "
        "lowered to the LLVM dialect? zero-train-pipeline or "
        "zero-lower-cpu does that)");
  llvmModule->setTargetTriple((*tm)->getTargetTriple());
  llvmModule->setDataLayout((*tm)->createDataLayout());

  auto optimize = makeOptimizingTransformer(options.optLevel,
                                            /*sizeLevel=*/0, tm->get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return llvm::createStringError("LLVM optimization failed: " +
                                   llvm::toString(std::move(err)));

  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if ((*tm)->addPassesToEmitFile(codegen, os, nullptr,
                                 llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the target cannot emit object files");
  codegen.run(*llvmModule);
  return std::string(buffer.begin(), buffer.end());
}
