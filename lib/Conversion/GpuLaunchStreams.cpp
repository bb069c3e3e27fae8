//===- GpuLaunchStreams.cpp - Launches on the runtime's stream -------------===//
//
// zero-gpu-launch-streams: after upstream gpu-kernel-outlining, every
// launch goes on the runtime's compute stream, which it shares with the
// runtime's GEMMs (so no launch overtakes the GEMM whose result it reads).
//
//===----------------------------------------------------------------------===//

#include "GpuKernelMatch.h"
#include "RuntimeCalls.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Transforms/Passes.h"

#include "mlir/Conversion/SCFToGPU/SCFToGPU.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROGPULAUNCHSTREAMSPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero::gpu_kernels;

namespace {

struct ZeroGpuLaunchStreamsPass
    : public zero::impl::ZeroGpuLaunchStreamsPassBase<
          ZeroGpuLaunchStreamsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<gpu::GPUModuleOp> kernelModules(
        module.getOps<gpu::GPUModuleOp>());
    if (kernelModules.empty())
      return;

    // One kernel module: the first one, renamed, takes the others' kernels.
    SymbolTable moduleSymbols(module);
    gpu::GPUModuleOp merged = module.lookupSymbol<gpu::GPUModuleOp>(
        kKernelModule);
    if (!merged) {
      merged = kernelModules.front();
      if (failed(SymbolTable::replaceAllSymbolUses(
              merged, StringAttr::get(ctx, kKernelModule), module))) {
        merged.emitOpError("could not be renamed");
        return signalPassFailure();
      }
      moduleSymbols.setSymbolName(merged, kKernelModule);
    }
    SymbolTable kernels(merged);
    // Old kernel reference -> new one.
    DenseMap<Attribute, SymbolRefAttr> moved;
    for (gpu::GPUModuleOp other : kernelModules) {
      if (other == merged)
        continue;
      if (other.getTargetsAttr() != merged.getTargetsAttr()) {
        other.emitOpError("has other targets than the step's other kernels");
        return signalPassFailure();
      }
      for (Operation &op :
           llvm::make_early_inc_range(other.getBody()->getOperations())) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol)
          continue;
        StringAttr oldName = symbol.getNameAttr();
        op.remove();
        // insert() renames on a clash.
        StringAttr newName = kernels.insert(&op);
        moved[SymbolRefAttr::get(other.getNameAttr(),
                                 {FlatSymbolRefAttr::get(oldName)})] =
            SymbolRefAttr::get(merged.getNameAttr(),
                               {FlatSymbolRefAttr::get(newName)});
      }
      other.erase();
    }

    // Every launch on the runtime's stream.
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    FailureOr<func::FuncOp> streamFn = zero::getOrDeclareRuntimeFunc(
        module, kStreamFn, FunctionType::get(ctx, {}, {ptr}));
    if (failed(streamFn))
      return signalPassFailure();
    auto tokenType = gpu::AsyncTokenType::get(ctx);
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    for (gpu::LaunchFuncOp launch : launches) {
      SymbolRefAttr kernel = launch.getKernel();
      if (auto it = moved.find(kernel); it != moved.end())
        kernel = it->second;
      if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
          launch.getAsyncObject()) {
        launch.emitOpError("is already asynchronous; zero-gpu-launch-streams "
                           "expects the synchronous launches of "
                           "gpu-kernel-outlining");
        return signalPassFailure();
      }
      OpBuilder b(launch);
      Location loc = launch.getLoc();
      Value stream = func::CallOp::create(b, loc, *streamFn, ValueRange{})
                         .getResult(0);
      Value token =
          UnrealizedConversionCastOp::create(b, loc, tokenType, stream)
              .getResult(0);
      std::optional<gpu::KernelDim3> cluster;
      if (launch.hasClusterSize())
        cluster = launch.getClusterSizeOperandValues();
      gpu::LaunchFuncOp::create(
          b, loc, kernel, launch.getGridSizeOperandValues(),
          launch.getBlockSizeOperandValues(),
          launch.getDynamicSharedMemorySize(), launch.getKernelOperands(),
          tokenType, ValueRange{token}, cluster);
      launch.erase();
    }
  }
};

} // namespace
