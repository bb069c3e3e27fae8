//===- CollectivesToRuntime.cpp - Typed collectives to runtime calls ------===//
//
// zero-collectives-to-runtime: the one conversion from the step's
// collectives, transfers and arena to the runtime's C ABI (runtime.h),
// modelled on upstream convert-shard-to-mpi: a type converter, the ops
// illegal, applyPartialConversion. Upstream lowers `shard` to the `mpi`
// dialect, which calls MPI directly; we need the runtime's collectives
// instead (a fixed reduction order, byte counters, failure handling that
// ends all ranks;
// docs/decisions/0006-collectives-fixed-reduction-order.md).
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

#include "zero/Analysis/Collectives.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROCOLLECTIVESTORUNTIMEPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

constexpr StringLiteral kRun = "zrt_collective_run";
constexpr StringLiteral kStart = "zrt_collective_start";
constexpr StringLiteral kScalar = "zrt_collective_scalar";
constexpr StringLiteral kWait = "zrt_wait";
constexpr StringLiteral kCopyStart = "zrt_copy_start";
constexpr StringLiteral kReadStart = "zrt_nvme_read_start";
constexpr StringLiteral kWriteStart = "zrt_nvme_write_start";
constexpr StringLiteral kReserve = "zrt_comm_reserve";
constexpr StringLiteral kRelease = "zrt_comm_release";
constexpr StringLiteral kWorldRank = "zrt_world_rank";

/// The runtime collective `op` runs, or a located error for an element
/// type the runtime's collectives do not take.
FailureOr<zero::RuntimeCollective> runtimeCollective(Operation *op) {
  std::optional<zero::RuntimeCollective> c = zero::getRuntimeCollective(op);
  if (!c)
    return op->emitOpError("is still on tensors; bufferize first");
  if (c->elementType < 0)
    return op->emitOpError()
           << "has element type "
           << cast<MemRefType>(op->getOperand(0).getType()).getElementType()
           << "; the runtime's collectives take f32, f64 and bf16";
  return *c;
}

/// The runtime's entry points, by name.
struct EntryPoints {
  explicit EntryPoints(ModuleOp module) : module(module) {}
  func::FuncOp get(StringRef name) const {
    return ModuleOp(module).lookupSymbol<func::FuncOp>(name);
  }
  ModuleOp module;
};

/// A pattern that lowers `OpT` to calls of the declared entry points.
template <typename OpT> struct RuntimePattern : OpConversionPattern<OpT> {
  RuntimePattern(const TypeConverter &converter, MLIRContext *ctx,
                 const EntryPoints &entries)
      : OpConversionPattern<OpT>(converter, ctx), entries(entries) {}

  /// Replaces `op` with a call of the entry point `name` on `leading`, then
  /// the pointers of `buffers`, then the count `n` (i64): the shape of
  /// every collective, copy and transfer entry point of runtime.h.
  void replaceWithCall(ConversionPatternRewriter &rewriter, Operation *op,
                       StringRef name, ValueRange leading, ValueRange buffers,
                       int64_t n) const {
    Location loc = op->getLoc();
    SmallVector<Value, 4> args(leading);
    for (Value buffer : buffers)
      args.push_back(zero::getBufferView(rewriter, loc, buffer).ptr);
    args.push_back(
        arith::ConstantIntOp::create(rewriter, loc, rewriter.getI64Type(), n));
    auto call = func::CallOp::create(rewriter, loc, entries.get(name), args);
    rewriter.replaceOp(op, call.getResults());
  }

  const EntryPoints &entries;
};

/// A collective on buffers or started: one call of the entry point with its
/// descriptor; a scalar all-reduce by value.
template <typename OpT> struct CollectiveLowering : RuntimePattern<OpT> {
  using RuntimePattern<OpT>::RuntimePattern;
  using RuntimePattern<OpT>::entries;

  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<zero::RuntimeCollective> c = runtimeCollective(op);
    if (failed(c))
      return failure();
    Location loc = op.getLoc();
    Value desc = arith::ConstantIntOp::create(
        rewriter, loc, rewriter.getI32Type(),
        static_cast<int64_t>(c->descriptor()));
    Value in = adaptor.getInput(), out = adaptor.getOutput();
    if (c->scalar) {
      Type elt = cast<MemRefType>(in.getType()).getElementType();
      Type f64 = rewriter.getF64Type();
      Value v = memref::LoadOp::create(rewriter, loc, in, ValueRange{});
      if (elt != f64)
        v = arith::ExtFOp::create(rewriter, loc, f64, v);
      Value r = func::CallOp::create(rewriter, loc, entries.get(kScalar),
                                     ValueRange{desc, v})
                    .getResult(0);
      if (elt != f64)
        r = arith::TruncFOp::create(rewriter, loc, elt, r);
      memref::StoreOp::create(rewriter, loc, r, out, ValueRange{});
      rewriter.eraseOp(op);
      return success();
    }
    this->replaceWithCall(rewriter, op, c->started ? kStart : kRun,
                          ValueRange{desc}, ValueRange{in, out}, c->count);
    return success();
  }
};

/// The bytes a copy of `type` moves, or a located error for elements that
/// are not whole bytes.
FailureOr<int64_t> copyBytes(Operation *op, MemRefType type) {
  Type elt = type.getElementType();
  if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() % 8 != 0)
    return op->emitOpError()
           << "cannot copy elements of " << elt << " (whole bytes are needed)";
  return type.getNumElements() * (elt.getIntOrFloatBitWidth() / 8);
}

/// copy_start(in, out) -> call @zrt_copy_start(in, out, bytes);
/// read_start(extent, buffer) / write_start(buffer, extent) ->
/// call @zrt_nvme_*_start(extent, buffer, bytes). Each returns the i64
/// request.
template <typename OpT> struct TransferLowering : RuntimePattern<OpT> {
  static constexpr bool kCopy = std::is_same_v<OpT, zero::CopyStartOp>;
  static constexpr bool kRead = std::is_same_v<OpT, zero::ReadStartOp>;
  using RuntimePattern<OpT>::RuntimePattern;

  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.hasTensorSemantics())
      return op.emitOpError("is still on tensors; bufferize first");
    SmallVector<Value, 1> leading;
    SmallVector<Value, 2> buffers;
    FailureOr<int64_t> bytes;
    if constexpr (kCopy) {
      buffers = {adaptor.getInput(), adaptor.getOutput()};
      bytes = copyBytes(op, cast<MemRefType>(buffers.front().getType()));
    } else {
      leading.push_back(adaptor.getExtent());
      if constexpr (kRead)
        buffers.push_back(adaptor.getOutput());
      else
        buffers.push_back(adaptor.getInput());
      bytes = zero::stagingBytes(op, cast<ShapedType>(buffers[0].getType()));
    }
    if (failed(bytes))
      return failure();
    StringRef entry = kCopy ? kCopyStart : kRead ? kReadStart : kWriteStart;
    this->replaceWithCall(rewriter, op, entry, leading, buffers, *bytes);
    return success();
  }
};

/// wait(token) -> call @zrt_wait(request).
struct WaitLowering : RuntimePattern<zero::WaitOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult
  matchAndRewrite(zero::WaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getPending())
      return op.emitOpError("is still on tensors; bufferize first");
    func::CallOp::create(rewriter, op.getLoc(), entries.get(kWait),
                         ValueRange{adaptor.getToken()});
    rewriter.eraseOp(op);
    return success();
  }
};

/// comm_reserve N -> call @zrt_comm_reserve(N); comm_release ->
/// call @zrt_comm_release().
struct ArenaLowering : ConversionPattern {
  ArenaLowering(const TypeConverter &converter, MLIRContext *ctx,
                const EntryPoints &entries, StringRef opName)
      : ConversionPattern(converter, opName, 1, ctx), entries(entries) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value>,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op->getLoc();
    if (auto reserve = dyn_cast<zero::CommReserveOp>(op)) {
      Value n = arith::ConstantIntOp::create(
          rewriter, loc, rewriter.getI64Type(), reserve.getBytesAttr().getInt());
      func::CallOp::create(rewriter, loc, entries.get(kReserve),
                           ValueRange{n});
    } else {
      func::CallOp::create(rewriter, loc, entries.get(kRelease),
                           ValueRange{});
    }
    rewriter.eraseOp(op);
    return success();
  }

  const EntryPoints &entries;
};

/// process_linear_index -> index_cast(call @zrt_world_rank()).
struct RankLowering : RuntimePattern<shard::ProcessLinearIndexOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult
  matchAndRewrite(shard::ProcessLinearIndexOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value rank = func::CallOp::create(rewriter, op.getLoc(),
                                      entries.get(kWorldRank), ValueRange{})
                     .getResult(0);
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(
        op, rewriter.getIndexType(), rank);
    return success();
  }
};

/// Declares the entry points the ops of `module` lower to (conversion
/// patterns touch only the ops they convert).
LogicalResult declareEntryPoints(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  Builder b(ctx);
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), f64 = b.getF64Type();
  llvm::StringMap<FunctionType> needed;
  module.walk([&](Operation *op) {
    if (std::optional<zero::RuntimeCollective> c =
            zero::getRuntimeCollective(op)) {
      if (c->scalar)
        needed[kScalar] = b.getFunctionType({i32, f64}, {f64});
      else if (c->started)
        needed[kStart] = b.getFunctionType({i32, ptr, ptr, i64}, {i64});
      else
        needed[kRun] = b.getFunctionType({i32, ptr, ptr, i64}, {});
    } else if (isa<zero::CopyStartOp>(op)) {
      needed[kCopyStart] = b.getFunctionType({ptr, ptr, i64}, {i64});
    } else if (isa<zero::ReadStartOp>(op)) {
      needed[kReadStart] = b.getFunctionType({i64, ptr, i64}, {i64});
    } else if (isa<zero::WriteStartOp>(op)) {
      needed[kWriteStart] = b.getFunctionType({i64, ptr, i64}, {i64});
    } else if (isa<zero::WaitOp>(op)) {
      needed[kWait] = b.getFunctionType({i64}, {});
    } else if (isa<zero::CommReserveOp>(op)) {
      needed[kReserve] = b.getFunctionType({i64}, {});
    } else if (isa<zero::CommReleaseOp>(op)) {
      needed[kRelease] = b.getFunctionType({}, {});
    } else if (isa<shard::ProcessLinearIndexOp>(op)) {
      needed[kWorldRank] = b.getFunctionType({}, {i32});
    }
  });
  // In a fixed order, so that the declarations come out the same each run.
  for (StringRef name : {kRun, kStart, kScalar, kWait, kCopyStart, kReadStart,
                         kWriteStart, kReserve, kRelease, kWorldRank})
    if (auto it = needed.find(name); it != needed.end())
      if (failed(zero::getOrDeclareRuntimeFunc(module, name, it->second)))
        return failure();
  return success();
}

/// An argument of type !zero.extent becomes the runtime's i64 handle; the
/// tensor it holds stays on the argument as `zero.extent`, for the step
/// ABI (docs/runtime-abi.md).
void recordExtentArguments(ModuleOp module) {
  module.walk([](func::FuncOp f) {
    ArrayRef<Type> inputs = f.getArgumentTypes();
    for (unsigned i = 0; i < inputs.size(); ++i)
      if (auto extent = dyn_cast<zero::ExtentType>(inputs[i]))
        f.setArgAttr(i, zero::ZeroDialect::ExtentAttrHelper::getNameStr(),
                     TypeAttr::get(extent.getTensorType()));
  });
}

struct ZeroCollectivesToRuntimePass
    : public zero::impl::ZeroCollectivesToRuntimePassBase<
          ZeroCollectivesToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (failed(declareEntryPoints(module)))
      return signalPassFailure();
    recordExtentArguments(module);
    Type i64 = IntegerType::get(ctx, 64);
    TypeConverter converter;
    converter.addConversion([](Type t) { return t; });
    converter.addConversion([i64](zero::TokenType) -> Type { return i64; });
    converter.addConversion([i64](zero::ExtentType) -> Type { return i64; });
    // Inside a function whose extent arguments have become i64 handles.
    converter.addSourceMaterialization([](OpBuilder &b, Type type,
                                          ValueRange inputs, Location loc) {
      return UnrealizedConversionCastOp::create(b, loc, type, inputs)
          .getResult(0);
    });
    ConversionTarget target(*ctx);
    target.addIllegalDialect<zero::ZeroDialect>();
    target.addIllegalOp<shard::ProcessLinearIndexOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
      return converter.isSignatureLegal(f.getFunctionType());
    });
    EntryPoints entries(module);
    RewritePatternSet patterns(ctx);
    patterns
        .add<CollectiveLowering<zero::AllGatherOp>,
             CollectiveLowering<zero::ReduceScatterOp>,
             CollectiveLowering<zero::AllReduceOp>,
             CollectiveLowering<zero::AllGatherStartOp>,
             CollectiveLowering<zero::ReduceScatterStartOp>,
             CollectiveLowering<zero::AllReduceStartOp>,
             TransferLowering<zero::CopyStartOp>,
             TransferLowering<zero::ReadStartOp>,
             TransferLowering<zero::WriteStartOp>, WaitLowering, RankLowering>(
            converter, ctx, entries);
    patterns.add<ArenaLowering>(converter, ctx, entries,
                                zero::CommReserveOp::getOperationName());
    patterns.add<ArenaLowering>(converter, ctx, entries,
                                zero::CommReleaseOp::getOperationName());
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    // Nothing of the shard dialect reaches the LLVM lowering but the grid,
    // which goes now.
    bool ok = true;
    SmallVector<shard::GridOp> grids;
    module.walk([&](Operation *op) {
      if (auto grid = dyn_cast<shard::GridOp>(op)) {
        grids.push_back(grid);
      } else if (isa<shard::ShardDialect>(op->getDialect())) {
        op->emitOpError("has no lowering to the zero runtime");
        ok = false;
      }
    });
    if (!ok)
      return signalPassFailure();
    for (shard::GridOp grid : grids)
      grid.erase();
  }
};

} // namespace
