//===- GpuKernels.cpp - Loop nests to GPU launches (target=cuda) ----------===//
//
// zero-gpu-kernels: every loop nest of a lowered step becomes a gpu.launch,
// and host code stops touching device memory. zero-gpu-launch-streams: after
// upstream gpu-kernel-outlining, every launch goes on the runtime's compute
// stream. The mapping itself is upstream's (collapseParallelLoops,
// tileParallelLoop, the scf.parallel-to-gpu.launch patterns); what upstream
// has no pass for is deciding which code is a kernel, what the host may not
// do with device buffers, and the stream the launches share with the
// runtime's GEMMs.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
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

#include <numeric>

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROGPUKERNELSPASS
#define GEN_PASS_DEF_ZEROGPULAUNCHSTREAMSPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kStreamFn = "zrt_gpu_stream";
constexpr llvm::StringLiteral kCopyToHostFn = "zrt_copy_to_host";
constexpr llvm::StringLiteral kKernelModule = "zero_kernels";

/// Whether `loop` can run as a kernel: it yields nothing to the host, and
/// everything in it computes on buffers that already exist (no calls, no
/// allocations, no copies, which are the host's or the runtime's business).
bool isKernelLoop(Operation *loop) {
  if (loop->getNumResults() != 0)
    return false;
  WalkResult result = loop->walk([&](Operation *op) {
    if (op == loop || isa<memref::LoadOp, memref::StoreOp>(op))
      return WalkResult::advance();
    if (isa<scf::ForOp, scf::ParallelOp, scf::IfOp, scf::WhileOp,
            scf::YieldOp, scf::ConditionOp, scf::ReduceOp,
            scf::ReduceReturnOp>(op))
      return WalkResult::advance();
    if (op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
        !isa<CallOpInterface>(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

/// Whether `op` reads or writes the contents of a buffer (not only its
/// address): what host code must not do on the cuda target.
bool touchesBufferContents(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
    Value v = e.getValue();
    return v && isa<BaseMemRefType>(v.getType()) &&
           isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect());
  });
}

/// The allocation a view of `v` comes from, or null.
Operation *rootAllocation(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      v = view.getViewSource();
      continue;
    }
    return def;
  }
  return nullptr;
}

struct ZeroGpuKernelsPass
    : public zero::impl::ZeroGpuKernelsPassBase<ZeroGpuKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (blockSize < 1 || blockSize > 1024) {
      module.emitError() << "zero-gpu-kernels: block-size must be 1 to 1024 "
                            "threads, not "
                         << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    for (auto fn : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (fn.isExternal())
        continue;
      if (failed(convertFunction(module, fn)))
        return signalPassFailure();
    }
  }

private:
  struct Work {
    SmallVector<scf::ParallelOp> parallel;
    SmallVector<Operation *> serial;
    SmallVector<memref::LoadOp> reads;
  };

  /// Sorts the host code of `block` (and of host loops in it) into work.
  LogicalResult collect(Block &block, Work &work) {
    for (Operation &op : block) {
      if (isa<scf::ForOp, scf::ParallelOp>(op) && isKernelLoop(&op)) {
        auto parallel = dyn_cast<scf::ParallelOp>(op);
        if (parallel && parallel.getNumReductions() == 0)
          work.parallel.push_back(parallel);
        else
          work.serial.push_back(&op);
        continue;
      }
      if (isa<memref::StoreOp>(op)) {
        work.serial.push_back(&op);
        continue;
      }
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        if (!isa_and_nonnull<memref::AllocaOp>(
                rootAllocation(load.getMemRef())))
          work.reads.push_back(load);
        continue;
      }
      if (isa<memref::CopyOp>(op))
        return op.emitOpError()
               << "copies device buffers in host code, which the cuda "
                  "target cannot run; lower copies to loops first "
                  "(zero-lower-strided-copy{contiguous=true})";
      if (op.getNumRegions() == 0 &&
          !isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op) &&
          touchesBufferContents(&op))
        return op.emitOpError()
               << "reads or writes a buffer in host code, which the cuda "
                  "target cannot run (device memory); only loop nests of "
                  "loads, stores and arithmetic become kernels";
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          if (failed(collect(inner, work)))
            return failure();
    }
    return success();
  }

  LogicalResult convertFunction(ModuleOp module, func::FuncOp fn) {
    Work work;
    if (failed(collect(fn.getBody().front(), work)))
      return failure();
    for (Block &block : llvm::drop_begin(fn.getBody()))
      if (failed(collect(block, work)))
        return failure();
    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);

    // Parallel nests: one dimension, tiles of blockSize, tiles to blocks and
    // elements to threads.
    auto identity = AffineMap::getMultiDimIdentityMap(1, ctx);
    auto mapTo = [&](gpu::Processor p) {
      return gpu::ParallelLoopDimMappingAttr::get(ctx, p, identity, identity);
    };
    for (scf::ParallelOp loop : work.parallel) {
      if (loop.getNumLoops() > 1) {
        Operation *next = loop->getNextNode();
        std::vector<unsigned> all(loop.getNumLoops());
        std::iota(all.begin(), all.end(), 0u);
        collapseParallelLoops(rewriter, loop, {all});
        loop = cast<scf::ParallelOp>(next->getPrevNode());
      }
      auto [outer, inner] =
          scf::tileParallelLoop(loop, {blockSize}, /*noMinMaxBounds=*/true);
      // Nested parallel loops (a reduction's inner parallel part) run
      // sequentially in their thread.
      inner.getBody()->walk([&](scf::ParallelOp nested) {
        SmallVector<gpu::ParallelLoopDimMappingAttr> seq(
            nested.getNumLoops(), mapTo(gpu::Processor::Sequential));
        (void)gpu::setMappingAttr(nested, seq);
      });
      if (failed(gpu::setMappingAttr(outer, {mapTo(gpu::Processor::BlockX)})) ||
          failed(gpu::setMappingAttr(inner, {mapTo(gpu::Processor::ThreadX)})))
        return outer.emitOpError("cannot be mapped to GPU blocks and threads");
      ++numParallel;
    }
    if (!work.parallel.empty()) {
      RewritePatternSet patterns(ctx);
      populateParallelLoopToGPUPatterns(patterns);
      ConversionTarget target(*ctx);
      target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      configureParallelLoopToGPULegality(target);
      if (failed(applyPartialConversion(fn, target, std::move(patterns))))
        return fn.emitOpError("has a parallel loop nest that could not be "
                              "mapped to a GPU launch");
      finalizeParallelLoopToGPUConversion(fn);
      // The patterns' own marker, which finalize does not always find.
      fn.walk([](gpu::LaunchOp launch) {
        launch->removeAttr("SCFToGPU_visited");
      });
    }

    // Serial nests and stores: one thread, the same order as on the CPU.
    for (Operation *op : work.serial) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
      Block &body = launch.getBody().front();
      b.setInsertionPointToEnd(&body);
      auto terminator = gpu::TerminatorOp::create(b, loc);
      op->moveBefore(terminator);
      ++numSerial;
    }

    // Correctly rounded square roots, as on the CPU: convert-gpu-to-nvvm
    // sends math.sqrt (and LLVM's sqrt intrinsic) to libdevice's
    // __nv_sqrtf, which is sqrt.approx unless the module sets
    // __CUDA_PREC_SQRT, which MLIR's NVVM target has no flag for. NVVM's
    // own round-to-nearest intrinsic is sqrt.rn.
    // math.rsqrt is 1 / sqrt, as the CPU's math-to-llvm computes it (not
    // libdevice's rsqrt.approx).
    fn.walk([&](gpu::LaunchOp launch) {
      launch.walk([&](Operation *op) {
        if (!isa<math::SqrtOp, math::RsqrtOp>(op))
          return;
        Type type = op->getResult(0).getType();
        StringRef intrinsic = type.isF32()   ? "llvm.nvvm.sqrt.rn.f"
                              : type.isF64() ? "llvm.nvvm.sqrt.rn.d"
                                             : "";
        if (intrinsic.empty())
          return;
        OpBuilder b(op);
        Location loc = op->getLoc();
        Value root = LLVM::CallIntrinsicOp::create(
                         b, loc, type, b.getStringAttr(intrinsic),
                         ValueRange{op->getOperand(0)})
                         .getResult(0);
        if (isa<math::RsqrtOp>(op)) {
          Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
          root = arith::DivFOp::create(b, loc, one, root);
        }
        op->getResult(0).replaceAllUsesWith(root);
        op->erase();
      });
    });

    // Scalars the host needs: copied into a stack slot after the work
    // queued before them.
    if (!work.reads.empty()) {
      Type ptr = LLVM::LLVMPointerType::get(ctx);
      Type i64 = IntegerType::get(ctx, 64);
      FailureOr<func::FuncOp> copy = zero::getOrDeclareRuntimeFunc(
          module, kCopyToHostFn,
          FunctionType::get(ctx, {ptr, ptr, i64}, {}));
      if (failed(copy))
        return failure();
      OpBuilder entry = OpBuilder::atBlockBegin(&fn.getBody().front());
      for (memref::LoadOp load : work.reads) {
        Location loc = load.getLoc();
        Type element = load.getType();
        if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8)
          return load.emitOpError()
                 << "reads a " << element
                 << " from device memory in host code; the cuda target "
                    "copies only whole-byte scalars to the host";
        auto slot = memref::AllocaOp::create(
            entry, loc, MemRefType::get({}, element));
        OpBuilder b(load);
        Value source = load.getMemRef();
        int64_t rank = load.getMemRefType().getRank();
        if (rank > 0) {
          SmallVector<OpFoldResult> offsets(load.getIndices().begin(),
                                            load.getIndices().end());
          SmallVector<OpFoldResult> ones(rank, b.getIndexAttr(1));
          source = memref::SubViewOp::create(b, loc, source, offsets, ones,
                                             ones);
        }
        zero::BufferView dst = zero::getBufferView(b, loc, slot);
        zero::BufferView src = zero::getBufferView(b, loc, source);
        Value bytes = arith::ConstantIntOp::create(
            b, loc, i64, element.getIntOrFloatBitWidth() / 8);
        func::CallOp::create(b, loc, *copy, ValueRange{dst.ptr, src.ptr, bytes});
        Value value = memref::LoadOp::create(b, loc, slot, ValueRange{});
        load.replaceAllUsesWith(value);
        load.erase();
        ++numHostReads;
      }
    }
    return success();
  }
};

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
