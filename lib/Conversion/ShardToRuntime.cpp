//===- ShardToRuntime.cpp - shard collectives to runtime calls ------------===//
//
// The collectives of zero-partition's output are upstream `shard` ops on
// tensors. Upstream lowers them to the `mpi` dialect (convert-shard-to-mpi),
// which calls MPI_Allreduce and friends directly; we need the runtime's
// collectives instead (a fixed reduction order, byte counters, failure
// handling that ends all ranks; docs/decisions/0006-collectives-fixed-reduction-order.md), so the ops bufferize
// here into a result buffer plus a runtime call, and zero-shard-to-runtime
// lowers the rest.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

#include "zero/Analysis/Allocations.h"
#include "zero/Analysis/StepMemory.h"
#include "zero/Conversion/Pipelines.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROSHARDTORUNTIMEPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::bufferization;

namespace {

/// A contiguous buffer holding `memref`'s elements: the memref itself when
/// it has the identity layout, or is 1-D (or rank 0) with unit stride, else
/// a copy.
Value contiguous(RewriterBase &rewriter, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (type.getLayout().isIdentity())
    return memref;
  if (type.getRank() <= 1 && succeeded(type.getStridesAndOffset(strides, offset)) &&
      (strides.empty() || strides.back() == 1))
    return memref;
  auto copyType = MemRefType::get(type.getShape(), type.getElementType());
  Value copy = memref::AllocOp::create(rewriter, loc, copyType);
  memref::CopyOp::create(rewriter, loc, memref, copy);
  return copy;
}

/// The suffix of the runtime's tensor collectives on `elt` ("_f32", "_f64",
/// "_bf16"), or an error on `op` for any other element type.
FailureOr<StringRef> collectiveSuffix(Operation *op, Type elt) {
  if (elt.isF32())
    return StringRef("_f32");
  if (elt.isF64())
    return StringRef("_f64");
  if (elt.isBF16())
    return StringRef("_bf16");
  return op->emitOpError()
         << "has element type " << elt
         << "; the runtime's collectives take f32, f64 and bf16";
}

/// Declares and calls the runtime entry point `name`(in, out, count).
LogicalResult callCollective(RewriterBase &rewriter, Operation *op,
                             StringRef base, Value in, Value out,
                             int64_t count) {
  Type elt = cast<MemRefType>(in.getType()).getElementType();
  FailureOr<StringRef> suffix = collectiveSuffix(op, elt);
  if (failed(suffix))
    return failure();
  MLIRContext *ctx = op->getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = rewriter.getI64Type();
  std::string name = (base + *suffix).str();
  FailureOr<func::FuncOp> callee = zero::getOrDeclareRuntimeFunc(
      op->getParentOfType<ModuleOp>(), name,
      FunctionType::get(ctx, {ptr, ptr, i64}, {}));
  if (failed(callee))
    return failure();
  Location loc = op->getLoc();
  Value inPtr = zero::getBufferView(rewriter, loc, in).ptr;
  Value outPtr = zero::getBufferView(rewriter, loc, out).ptr;
  Value n = arith::ConstantIntOp::create(rewriter, loc, i64, count);
  auto call = func::CallOp::create(rewriter, loc, *callee,
                                   ValueRange{inPtr, outPtr, n});
  // A reduction's input is the full gradient: its category goes on the
  // call for now; zero-shard-to-runtime moves it to the input's allocation,
  // which the bufferization in progress may not have materialized yet.
  if (!isa<shard::AllGatherOp>(op))
    if (Attribute category =
            op->getAttr(zero::ZeroDialect::CategoryAttrHelper::getNameStr()))
      call->setAttr(zero::ZeroDialect::CategoryAttrHelper::getNameStr(),
                    category);
  return success();
}

/// An op whose tensor operands it only reads, and whose results alias
/// none of them (the collectives, the NVMe tier's writes).
template <typename ConcreteModel, typename ConcreteOp>
struct ReadsOperandsModel
    : public BufferizableOpInterface::ExternalModel<ConcreteModel, ConcreteOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
};

/// Shared by the three collectives: they read their input and write a
/// fresh buffer.
template <typename ConcreteModel, typename ConcreteOp>
struct CollectiveModel : public ReadsOperandsModel<ConcreteModel, ConcreteOp> {
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto concrete = cast<ConcreteOp>(op);
    FailureOr<Value> in =
        getBuffer(rewriter, concrete.getInput(), options, state);
    if (failed(in))
      return failure();
    auto resultType = cast<RankedTensorType>(concrete.getResult().getType());
    auto outType =
        MemRefType::get(resultType.getShape(), resultType.getElementType());
    Value input = contiguous(rewriter, op->getLoc(), *in);
    auto out = memref::AllocOp::create(rewriter, op->getLoc(), outType,
                                       rewriter.getI64IntegerAttr(64));
    // zero.category (set by zero-partition): the memory category of the
    // result buffer and, for the reductions, of the full gradient they read.
    if (auto category = op->getAttrOfType<StringAttr>(
            zero::ZeroDialect::CategoryAttrHelper::getNameStr())) {
      out->setAttr(zero::ZeroDialect::CategoryAttrHelper::getNameStr(),
                   category);
    }
    if (failed(static_cast<const ConcreteModel *>(this)->emit(
            rewriter, concrete, input, out)))
      return failure();
    replaceOpWithBufferizedValues(rewriter, op, out.getResult());
    return success();
  }
};

struct AllGatherModel
    : public CollectiveModel<AllGatherModel, shard::AllGatherOp> {
  LogicalResult emit(RewriterBase &rewriter, shard::AllGatherOp op, Value in,
                     Value out) const {
    auto t = cast<MemRefType>(in.getType());
    if (t.getRank() != 1 || op.getGatherAxis().getZExtValue() != 0)
      return op.emitOpError("lowers to the runtime only as a 1-D gather "
                            "along axis 0 (zero-partition's flat form)");
    return callCollective(rewriter, op, "zrt_all_gather", in, out,
                          t.getNumElements());
  }
};

struct ReduceScatterModel
    : public CollectiveModel<ReduceScatterModel, shard::ReduceScatterOp> {
  LogicalResult emit(RewriterBase &rewriter, shard::ReduceScatterOp op,
                     Value in, Value out) const {
    auto t = cast<MemRefType>(out.getType());
    if (t.getRank() != 1 || op.getScatterAxis().getZExtValue() != 0 ||
        op.getReduction() != shard::ReductionKind::Sum)
      return op.emitOpError("lowers to the runtime only as a 1-D sum along "
                            "axis 0 (zero-partition's flat form)");
    return callCollective(rewriter, op, "zrt_reduce_scatter_sum", in, out,
                          t.getNumElements());
  }
};

struct AllReduceModel
    : public CollectiveModel<AllReduceModel, shard::AllReduceOp> {
  LogicalResult emit(RewriterBase &rewriter, shard::AllReduceOp op, Value in,
                     Value out) const {
    shard::ReductionKind kind = op.getReduction();
    if (kind != shard::ReductionKind::Sum && kind != shard::ReductionKind::Max)
      return op.emitOpError("lowers to the runtime only as a sum or a max");
    StringRef how = kind == shard::ReductionKind::Sum ? "sum" : "max";
    auto t = cast<MemRefType>(in.getType());
    Type elt = t.getElementType();
    // A bf16 scalar has no by-value entry point (C has no bf16 type): it is
    // a tensor collective of one element.
    if (t.getRank() > 0 || elt.isBF16())
      return callCollective(rewriter, op,
                            (Twine("zrt_all_reduce_") + how).str(), in, out,
                            t.getNumElements());
    // Scalars (the loss, partial norms) go by value to their own entry
    // points, counted apart from the tensor collectives.
    if (!elt.isF32() && !elt.isF64())
      return op.emitOpError()
             << "has element type " << elt
             << "; the runtime's collectives take f32, f64 and bf16";
    std::string name = (Twine("zrt_all_reduce_scalar_") + how +
                        (elt.isF32() ? "_f32" : "_f64"))
                           .str();
    FailureOr<func::FuncOp> callee = zero::getOrDeclareRuntimeFunc(
        op->getParentOfType<ModuleOp>(), name,
        FunctionType::get(op->getContext(), {elt}, {elt}));
    if (failed(callee))
      return failure();
    Location loc = op.getLoc();
    Value v = memref::LoadOp::create(rewriter, loc, in, ValueRange{});
    Value r = func::CallOp::create(rewriter, loc, *callee, ValueRange{v})
                  .getResult(0);
    memref::StoreOp::create(rewriter, loc, r, out, ValueRange{});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Started collectives (zero dialect)
//===----------------------------------------------------------------------===//

/// A started collective on tensors becomes the memref form: a fresh result
/// buffer (the all-reduce works in place where the analysis allows), the
/// input made contiguous, and the token. The pending tensor is the result
/// buffer, which only the wait touches.
template <typename OpT>
struct StartModel
    : public BufferizableOpInterface::ExternalModel<StartModel<OpT>, OpT> {
  static constexpr bool kInPlace = std::is_same_v<OpT, zero::AllReduceStartOp>;

  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return kInPlace;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &,
                                      const AnalysisState &) const {
    if (!kInPlace)
      return {};
    return {{op->getResult(0), BufferRelation::Equivalent}};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return !kInPlace; }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto start = cast<OpT>(op);
    if (!start.hasTensorSemantics())
      return success();
    FailureOr<Value> in =
        getBuffer(rewriter, start.getInput(), options, state);
    if (failed(in))
      return failure();
    Location loc = op->getLoc();
    auto resultType = cast<RankedTensorType>(start.getPending().getType());
    auto outType =
        MemRefType::get(resultType.getShape(), resultType.getElementType());
    Value input = contiguous(rewriter, loc, *in);
    Value out;
    if (kInPlace && input.getType() == outType) {
      out = input;
    } else {
      auto alloc = memref::AllocOp::create(rewriter, loc, outType,
                                           rewriter.getI64IntegerAttr(64));
      if (auto category = op->getAttrOfType<StringAttr>(
              zero::ZeroDialect::CategoryAttrHelper::getNameStr()))
        alloc->setAttr(zero::ZeroDialect::CategoryAttrHelper::getNameStr(),
                       category);
      // A copy's destination lives in the space it copies to.
      if (auto space = op->getAttrOfType<StringAttr>(
              zero::ZeroDialect::SpaceAttrHelper::getNameStr());
          space && space.getValue() == "host")
        alloc->setAttr(zero::ZeroDialect::SpaceAttrHelper::getNameStr(),
                       space);
      out = alloc;
    }
    auto memrefStart = OpT::create(rewriter, loc,
                                   TypeRange{start.getToken().getType()},
                                   ValueRange{input, out}, op->getAttrs());
    replaceOpWithBufferizedValues(rewriter, op,
                                  ValueRange{out, memrefStart.getToken()});
    return success();
  }
};

/// zero.wait on tensors: the result is the start's buffer, in place; the
/// memref form keeps exactly the buffers the runtime reads and writes (the
/// start's contiguous input, not the tensor's own buffer).
struct WaitModel
    : public BufferizableOpInterface::ExternalModel<WaitModel, zero::WaitOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &) const {
    return operand.get() == cast<zero::WaitOp>(op).getPending();
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    auto wait = cast<zero::WaitOp>(op);
    if (operand.get() != wait.getPending())
      return {};
    return {{wait.getResult(), BufferRelation::Equivalent}};
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto wait = cast<zero::WaitOp>(op);
    Operation *start = wait.getToken().getDefiningOp();
    if (!wait.getPending()) {
      // A write to the NVMe tier keeps the buffer it reads, which is its
      // bufferized start's input.
      auto write = dyn_cast_or_null<zero::WriteStartOp>(start);
      if (!write || write.hasTensorSemantics())
        return op->emitOpError("bufferizes after its start, which must be "
                               "bufferized first");
      zero::WaitOp::create(rewriter, op->getLoc(), TypeRange{},
                           wait.getToken(), Value(),
                           ValueRange{write.getInput()});
      rewriter.eraseOp(op);
      return success();
    }
    // The buffer the start fills (a read's staging buffer, a collective's
    // output) and what the wait keeps alive until it completes (that
    // buffer, and a collective's input).
    Value out;
    SmallVector<Value, 2> keep;
    if (auto read = dyn_cast_or_null<zero::ReadStartOp>(start)) {
      if (!read.hasTensorSemantics()) {
        out = read.getOutput();
        keep = {out};
      }
    } else if (start && start->getNumOperands() == 2) {
      out = start->getOperand(1);
      keep = {start->getOperand(0), out};
    }
    if (!out)
      return op->emitOpError("bufferizes after its start, which must be "
                             "bufferized first");
    FailureOr<Value> pending =
        getBuffer(rewriter, wait.getPending(), options, state);
    if (failed(pending))
      return failure();
    // A pending tensor bufferized out of place would be a copy of data
    // still in flight.
    if (*pending != out)
      return op->emitOpError("needs its pending tensor in place (it may "
                             "only be used by this wait)");
    zero::WaitOp::create(rewriter, op->getLoc(), TypeRange{},
                         wait.getToken(), Value(), keep);
    replaceOpWithBufferizedValues(rewriter, op, out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Transfers of the NVMe tier (zero dialect)
//===----------------------------------------------------------------------===//

using zero::kNvmeBlock;

/// Bytes a staging buffer of `type` holds: its elements' bytes rounded up
/// to kNvmeBlock, or failure for elements that are not whole bytes.
FailureOr<int64_t> stagingBytes(Operation *op, ShapedType type) {
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  if (bits % 8 != 0 || kNvmeBlock % (bits / 8) != 0)
    return op->emitOpError() << "cannot stage elements of "
                             << type.getElementType()
                             << " for NVMe transfers (whole bytes that "
                                "divide 4096 are needed)";
  int64_t bytes = type.getNumElements() * (bits / 8);
  return (bytes + kNvmeBlock - 1) / kNvmeBlock * kNvmeBlock;
}

/// A staging buffer for `type`: a 4096-aligned allocation of the rounded
/// bytes, seen as the identity-layout memref of `type`'s shape, in the
/// category and memory space `transfer` names (zero.category, zero.space:
/// host memory for a transfer of zero-offload's optimizer=host).
FailureOr<Value> allocateStaging(RewriterBase &rewriter, Operation *op,
                                 ShapedType type, Operation *transfer) {
  FailureOr<int64_t> bytes = stagingBytes(op, type);
  if (failed(bytes))
    return failure();
  Type elt = type.getElementType();
  int64_t eltBytes = elt.getIntOrFloatBitWidth() / 8;
  Location loc = op->getLoc();
  auto alloc = memref::AllocOp::create(
      rewriter, loc, MemRefType::get({*bytes / eltBytes}, elt),
      rewriter.getI64IntegerAttr(kNvmeBlock));
  for (StringRef name : {zero::ZeroDialect::CategoryAttrHelper::getNameStr(),
                         zero::ZeroDialect::SpaceAttrHelper::getNameStr()})
    if (Attribute attr = transfer->getAttr(name))
      alloc->setAttr(name, attr);
  SmallVector<int64_t> strides(type.getRank(), 1);
  for (int64_t i = type.getRank() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * type.getDimSize(i + 1);
  auto view = MemRefType::get(type.getShape(), elt);
  return memref::ReinterpretCastOp::create(rewriter, loc, view, alloc, 0,
                                           type.getShape(), strides)
      .getResult();
}

/// Whether `buffer` is a staging buffer: the start of a 4096-aligned
/// allocation of at least `bytes`, contiguous.
bool isStaging(Value buffer, int64_t bytes) {
  auto type = cast<MemRefType>(buffer.getType());
  if (!type.getLayout().isIdentity())
    return false;
  Operation *def = buffer.getDefiningOp();
  if (auto cast = dyn_cast_or_null<memref::ReinterpretCastOp>(def)) {
    if (cast.getStaticOffsets().size() != 1 || cast.getStaticOffsets()[0] != 0)
      return false;
    def = cast.getSource().getDefiningOp();
  }
  auto alloc = dyn_cast_or_null<memref::AllocOp>(def);
  if (!alloc || !alloc.getAlignment() || *alloc.getAlignment() < kNvmeBlock)
    return false;
  MemRefType allocType = alloc.getType();
  return allocType.hasStaticShape() &&
         allocType.getNumElements() *
                 (allocType.getElementType().getIntOrFloatBitWidth() / 8) >=
             bytes;
}

/// zero.read_start on tensors reads into a fresh staging buffer, which the
/// pending tensor is.
struct ReadStartModel
    : public BufferizableOpInterface::ExternalModel<ReadStartModel,
                                                    zero::ReadStartOp> {
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &,
                          BufferizationState &) const {
    auto read = cast<zero::ReadStartOp>(op);
    if (!read.hasTensorSemantics())
      return success();
    FailureOr<Value> staging =
        allocateStaging(rewriter, op, read.getPending().getType(), op);
    if (failed(staging))
      return failure();
    auto memrefRead = zero::ReadStartOp::create(
        rewriter, op->getLoc(), TypeRange{read.getToken().getType()},
        ValueRange{read.getExtent(), *staging}, op->getAttrs());
    replaceOpWithBufferizedValues(rewriter, op,
                                  ValueRange{*staging, memrefRead.getToken()});
    return success();
  }
};

/// zero.write_start on tensors writes from the tensor's buffer when that is
/// a staging buffer (the optimizer updated the read one in place), else
/// from a staging copy.
struct WriteStartModel
    : public ReadsOperandsModel<WriteStartModel, zero::WriteStartOp> {

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto write = cast<zero::WriteStartOp>(op);
    if (!write.hasTensorSemantics())
      return success();
    FailureOr<Value> in =
        getBuffer(rewriter, write.getInput(), options, state);
    if (failed(in))
      return failure();
    auto type = cast<ShapedType>(write.getInput().getType());
    FailureOr<int64_t> bytes = stagingBytes(op, type);
    if (failed(bytes))
      return failure();
    Value source = *in;
    auto exact = MemRefType::get(type.getShape(), type.getElementType());
    // A value computed into a fresh buffer (an update whose destination
    // canonicalization made a tensor.empty): allocate that buffer as a
    // staging buffer in the first place, rather than copy. Within one-shot
    // bufferization it shows as to_buffer(alloc_tensor) or
    // to_buffer(to_tensor(memref.alloc)).
    Operation *fresh = nullptr;
    if (auto toBuffer = source.getDefiningOp<ToBufferOp>()) {
      Operation *def = toBuffer.getTensor().getDefiningOp();
      if (auto toTensor = dyn_cast_or_null<ToTensorOp>(def))
        def = toTensor.getBuffer().getDefiningOp();
      if (auto allocTensor = dyn_cast_or_null<AllocTensorOp>(def);
          allocTensor && allocTensor->getNumOperands() == 0 &&
          !allocTensor.getMemorySpace() && allocTensor.getType() == type)
        fresh = allocTensor;
      if (auto alloc = dyn_cast_or_null<memref::AllocOp>(def);
          alloc && alloc.getType() == exact)
        fresh = alloc;
    }
    if (fresh && !isStaging(source, *bytes) && source.getType() == exact) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(fresh);
      FailureOr<Value> staging =
          allocateStaging(rewriter, fresh, type, op);
      if (failed(staging))
        return failure();
      if (isa<AllocTensorOp>(fresh))
        replaceOpWithBufferizedValues(rewriter, fresh, *staging);
      else
        rewriter.replaceOp(fresh, *staging);
      source = *staging;
    } else if (!isStaging(source, *bytes)) {
      FailureOr<Value> staging = allocateStaging(rewriter, op, type, op);
      if (failed(staging))
        return failure();
      memref::CopyOp::create(rewriter, op->getLoc(), source, *staging);
      source = *staging;
    }
    auto memrefWrite = zero::WriteStartOp::create(
        rewriter, op->getLoc(), TypeRange{write.getToken().getType()},
        ValueRange{source, write.getExtent()}, op->getAttrs());
    replaceOpWithBufferizedValues(rewriter, op, memrefWrite.getToken());
    return success();
  }
};

/// read_start(extent, buffer) / write_start(buffer, extent) ->
/// call @zrt_nvme_*_start(extent, buffer, bytes) : i64.
template <typename OpT> struct TransferLowering : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  static constexpr bool kRead = std::is_same_v<OpT, zero::ReadStartOp>;
  static constexpr const char *kCallee =
      kRead ? "zrt_nvme_read_start" : "zrt_nvme_write_start";

  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.hasTensorSemantics())
      return op.emitOpError("is still on tensors; bufferize first");
    Value buffer;
    if constexpr (kRead)
      buffer = adaptor.getOutput();
    else
      buffer = adaptor.getInput();
    FailureOr<int64_t> bytes =
        stagingBytes(op, cast<ShapedType>(buffer.getType()));
    if (failed(bytes))
      return failure();
    auto module = op->template getParentOfType<ModuleOp>();
    Location loc = op.getLoc();
    Value ptr = zero::getBufferView(rewriter, loc, buffer).ptr;
    Value n = arith::ConstantIntOp::create(rewriter, loc,
                                           rewriter.getI64Type(), *bytes);
    auto call = func::CallOp::create(
        rewriter, loc, module.template lookupSymbol<func::FuncOp>(kCallee),
        ValueRange{adaptor.getExtent(), ptr, n});
    rewriter.replaceOp(op, call.getResults());
    return success();
  }
};

/// The runtime entry point of a memref-form start, e.g.
/// zrt_all_gather_start_f32.
FailureOr<std::string> startCallee(Operation *op) {
  if (isa<zero::CopyStartOp>(op))
    return std::string("zrt_copy_start");
  Type elt = cast<MemRefType>(op->getOperand(0).getType()).getElementType();
  FailureOr<StringRef> suffix = collectiveSuffix(op, elt);
  if (failed(suffix))
    return failure();
  StringRef base = isa<zero::AllGatherStartOp>(op) ? "zrt_all_gather_start"
                   : isa<zero::ReduceScatterStartOp>(op)
                       ? "zrt_reduce_scatter_sum_start"
                       : "zrt_all_reduce_sum_start";
  return (base + *suffix).str();
}

/// start(in, out) -> call @zrt_*_start_*(in, out, count) : i64, the
/// request; the token becomes that i64.
template <typename OpT> struct StartLowering : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.hasTensorSemantics())
      return op.emitOpError("is still on tensors; bufferize first");
    FailureOr<std::string> name = startCallee(op);
    if (failed(name))
      return failure();
    auto module = op->template getParentOfType<ModuleOp>();
    auto callee = module.template lookupSymbol<func::FuncOp>(*name);
    Location loc = op.getLoc();
    Value in = adaptor.getInput(), out = adaptor.getOutput();
    // The count argument: elements of the shard side (a copy: bytes).
    int64_t count = std::is_same_v<OpT, zero::ReduceScatterStartOp>
                        ? cast<MemRefType>(out.getType()).getNumElements()
                        : cast<MemRefType>(in.getType()).getNumElements();
    if constexpr (std::is_same_v<OpT, zero::CopyStartOp>) {
      Type elt = cast<MemRefType>(in.getType()).getElementType();
      if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() % 8 != 0)
        return op.emitOpError() << "cannot copy elements of " << elt
                                << " (whole bytes are needed)";
      count *= elt.getIntOrFloatBitWidth() / 8;
    }
    // A reduction's input is the full gradient: its category is the
    // start's (zero-partition's choice), on the allocation.
    if (!std::is_same_v<OpT, zero::AllGatherStartOp> &&
        !std::is_same_v<OpT, zero::CopyStartOp>)
      if (Attribute category = op->getAttr(
              zero::ZeroDialect::CategoryAttrHelper::getNameStr()))
        if (Operation *alloc = zero::getAllocation(op.getInput()))
          alloc->setAttr(zero::ZeroDialect::CategoryAttrHelper::getNameStr(),
                         category);
    Value inPtr = zero::getBufferView(rewriter, loc, in).ptr;
    Value outPtr = zero::getBufferView(rewriter, loc, out).ptr;
    Value n = arith::ConstantIntOp::create(rewriter, loc,
                                           rewriter.getI64Type(), count);
    auto call = func::CallOp::create(rewriter, loc, callee,
                                     ValueRange{inPtr, outPtr, n});
    rewriter.replaceOp(op, call.getResults());
    return success();
  }
};

/// wait(token) -> call @zrt_wait(request).
struct WaitLowering : OpConversionPattern<zero::WaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(zero::WaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getPending())
      return op.emitOpError("is still on tensors; bufferize first");
    auto module = op->getParentOfType<ModuleOp>();
    func::CallOp::create(rewriter, op.getLoc(),
                         module.lookupSymbol<func::FuncOp>("zrt_wait"),
                         ValueRange{adaptor.getToken()});
    rewriter.eraseOp(op);
    return success();
  }
};

/// Lowers every started collective and wait of `module` to runtime calls.
LogicalResult lowerStartedCollectives(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = IntegerType::get(ctx, 64);
  // The entry points are declared first: conversion patterns touch only
  // the ops they convert.
  bool any = false, ok = true;
  module.walk([&](Operation *op) {
    if (isa<zero::WaitOp>(op)) {
      any = true;
      return;
    }
    if (isa<zero::ReadStartOp, zero::WriteStartOp>(op)) {
      any = true;
      StringRef name = isa<zero::ReadStartOp>(op) ? "zrt_nvme_read_start"
                                                  : "zrt_nvme_write_start";
      if (failed(zero::getOrDeclareRuntimeFunc(
              module, name, FunctionType::get(ctx, {i64, ptr, i64}, {i64}))))
        ok = false;
      return;
    }
    if (!isa<zero::AllGatherStartOp, zero::ReduceScatterStartOp,
             zero::AllReduceStartOp, zero::CopyStartOp>(op))
      return;
    any = true;
    if (!isa<MemRefType>(op->getOperand(0).getType()))
      return; // the pattern reports it
    FailureOr<std::string> name = startCallee(op);
    if (failed(name) ||
        failed(zero::getOrDeclareRuntimeFunc(
            module, *name, FunctionType::get(ctx, {ptr, ptr, i64}, {i64}))))
      ok = false;
  });
  if (!ok)
    return failure();
  if (!any)
    return success();
  if (failed(zero::getOrDeclareRuntimeFunc(module, "zrt_wait",
                                           FunctionType::get(ctx, {i64}, {}))))
    return failure();
  TypeConverter converter;
  converter.addConversion([](Type t) { return t; });
  converter.addConversion(
      [i64](zero::TokenType) -> Type { return i64; });
  converter.addConversion(
      [i64](zero::ExtentType) -> Type { return i64; });
  // Inside a function whose extent arguments have become i64 handles.
  converter.addSourceMaterialization([](OpBuilder &b, Type type,
                                        ValueRange inputs, Location loc) {
    return UnrealizedConversionCastOp::create(b, loc, type, inputs)
        .getResult(0);
  });
  ConversionTarget target(*ctx);
  target.addIllegalDialect<zero::ZeroDialect>();
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
    return converter.isSignatureLegal(f.getFunctionType());
  });
  RewritePatternSet patterns(ctx);
  patterns.add<StartLowering<zero::AllGatherStartOp>,
               StartLowering<zero::ReduceScatterStartOp>,
               StartLowering<zero::AllReduceStartOp>,
               StartLowering<zero::CopyStartOp>, WaitLowering,
               TransferLowering<zero::ReadStartOp>,
               TransferLowering<zero::WriteStartOp>>(converter, ctx);
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                 converter);
  return applyPartialConversion(module, target, std::move(patterns));
}

/// A step whose started collectives take scratch holds the communication
/// arena (runtime.h, zrt_comm_reserve) while any of them is in flight: in
/// each run of overlapping start-to-wait intervals of the entry block, a
/// reservation before every start that needs more than the ones before it
/// in the run, and a release after the run's last wait. The scratch is
/// then held from one fixed point of the program to another, and
/// zero-memory-report predicts the step's peak exactly, where without it
/// the communication thread would take and free it at moments that depend
/// on timing. A start or wait inside another op (a loop) holds one buffer
/// for the largest from the start of the function to every return. Needs
/// the function's zero.world_size (the scratch depends on it); without it,
/// nothing changes.
LogicalResult reserveCommArena(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  Type i64 = IntegerType::get(ctx, 64);
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    auto world = fn->getAttrOfType<IntegerAttr>(
        zero::ZeroDialect::WorldSizeAttrHelper::getNameStr());
    if (!world)
      continue;
    // Each started collective that takes scratch: its need.
    llvm::MapVector<Operation *, int64_t> needs;
    int64_t largest = 0;
    fn.walk([&](func::CallOp call) {
      if (!call.getCallee().contains("_start_") || call.getNumResults() != 1)
        return;
      int64_t need = zero::commArenaBytes(
          zero::commScratchPieces(call, world.getInt()));
      if (need == 0)
        return;
      needs[call] = need;
      largest = std::max(largest, need);
    });
    if (needs.empty())
      continue;
    if (largest == std::numeric_limits<int64_t>::max())
      return needs.front().first->emitOpError()
             << "needs more communication scratch than a 64-bit size holds";
    FailureOr<func::FuncOp> reserve = zero::getOrDeclareRuntimeFunc(
        module, "zrt_comm_reserve", FunctionType::get(ctx, {i64}, {}));
    FailureOr<func::FuncOp> release = zero::getOrDeclareRuntimeFunc(
        module, "zrt_comm_release", FunctionType::get(ctx, {}, {}));
    if (failed(reserve) || failed(release))
      return failure();
    auto reserveAt = [&](OpBuilder &b, Location loc, int64_t bytes) {
      Value n = arith::ConstantIntOp::create(b, loc, i64, bytes);
      func::CallOp::create(b, loc, *reserve, ValueRange{n});
    };
    // Every start and each of its waits directly in the entry block.
    Block &entry = fn.getBody().front();
    bool inEntry = fn.getBody().hasOneBlock();
    for (auto &[start, need] : needs) {
      inEntry = inEntry && start->getBlock() == &entry &&
                !start->getResult(0).use_empty();
      for (Operation *user : start->getResult(0).getUsers()) {
        auto wait = dyn_cast<func::CallOp>(user);
        inEntry = inEntry && wait && wait.getCallee() == "zrt_wait" &&
                  user->getBlock() == &entry;
      }
    }
    OpBuilder b(ctx);
    if (!inEntry) {
      b.setInsertionPointToStart(&entry);
      reserveAt(b, fn.getLoc(), largest);
      fn.walk([&](func::ReturnOp ret) {
        b.setInsertionPoint(ret);
        func::CallOp::create(b, ret.getLoc(), *release, ValueRange{});
      });
      continue;
    }
    // Runs of overlapping intervals, in block order.
    llvm::DenseSet<Value> open;
    int64_t reserved = 0;
    for (Operation &op : llvm::make_early_inc_range(entry)) {
      auto call = dyn_cast<func::CallOp>(op);
      if (!call)
        continue;
      if (auto it = needs.find(call); it != needs.end()) {
        if (open.empty())
          reserved = 0;
        open.insert(call.getResult(0));
        if (it->second > reserved) {
          b.setInsertionPoint(call);
          reserveAt(b, call.getLoc(), it->second);
          reserved = it->second;
        }
        continue;
      }
      if (call.getCallee() != "zrt_wait" || call.getNumOperands() != 1 ||
          !open.erase(call.getOperand(0)) || !open.empty())
        continue;
      b.setInsertionPointAfter(call);
      func::CallOp::create(b, call.getLoc(), *release, ValueRange{});
    }
  }
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

struct ZeroShardToRuntimePass
    : public zero::impl::ZeroShardToRuntimePassBase<ZeroShardToRuntimePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A linalg op that writes a buffer of a category (zero-partition's
    // gradient accumulators and their rounding to bf16) puts it on the
    // buffer's allocation.
    module.walk([&](linalg::LinalgOp op) {
      StringRef name = zero::ZeroDialect::CategoryAttrHelper::getNameStr();
      Attribute category = op->getAttr(name);
      if (!category || !op.hasPureBufferSemantics())
        return;
      op->removeAttr(name);
      for (OpOperand &init : op.getDpsInitsMutable())
        if (Operation *alloc = zero::getAllocation(init.get()))
          alloc->setAttr(name, category);
    });
    // A buffer bufferization allocated for a host operation (an update's
    // destination it could not write in place) is host memory when only
    // host operations, copies to the device and deallocations use it: on a
    // device target the host could not reach it otherwise.
    StringRef spaceName = zero::ZeroDialect::SpaceAttrHelper::getNameStr();
    auto hostOnly = [&](Operation *alloc) {
      SmallVector<Value> views(alloc->getResults());
      while (!views.empty()) {
        Value v = views.pop_back_val();
        for (OpOperand &use : v.getUses()) {
          Operation *user = use.getOwner();
          if (isa<ViewLikeOpInterface>(user)) {
            views.append(user->result_begin(), user->result_end());
            continue;
          }
          auto space = user->getAttrOfType<StringAttr>(spaceName);
          bool hostOp = space && space.getValue() == "host";
          auto copy = dyn_cast<zero::CopyStartOp>(user);
          if (!hostOp && !isa<memref::DeallocOp, zero::WaitOp>(user) &&
              !(copy && use.getOperandNumber() == 0))
            return false;
        }
      }
      return true;
    };
    module.walk([&](Operation *op) {
      auto space = op->getAttrOfType<StringAttr>(spaceName);
      if (!space || space.getValue() != "host" ||
          isa<memref::AllocOp, zero::CopyStartOp>(op))
        return;
      for (Value v : op->getOperands()) {
        if (!isa<MemRefType>(v.getType()))
          continue;
        auto alloc = dyn_cast_or_null<memref::AllocOp>(zero::getAllocation(v));
        if (alloc && !alloc->hasAttr(spaceName) && hostOnly(alloc))
          alloc->setAttr(spaceName, space);
      }
    });
    // Reductions carry the category of the buffer they read; put it on that
    // buffer's allocation. The pointer argument is
    // gep(inttoptr(index_cast(extract_aligned_pointer_as_index %m)), off).
    module.walk([&](func::CallOp call) {
      StringRef name = zero::ZeroDialect::CategoryAttrHelper::getNameStr();
      Attribute category = call->removeAttr(name);
      if (!category || call.getNumOperands() == 0)
        return;
      Value v = call.getOperand(0);
      while (Operation *def = v.getDefiningOp()) {
        if (auto gep = dyn_cast<LLVM::GEPOp>(def))
          v = gep.getBase();
        else if (isa<LLVM::IntToPtrOp, arith::IndexCastOp>(def))
          v = def->getOperand(0);
        else
          break;
      }
      if (auto base = v.getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>())
        if (Operation *alloc = zero::getAllocation(base.getSource()))
          alloc->setAttr(name, category);
    });
    SmallVector<shard::ProcessLinearIndexOp> ranks;
    module.walk([&](shard::ProcessLinearIndexOp op) { ranks.push_back(op); });
    if (!ranks.empty()) {
      FailureOr<func::FuncOp> callee = zero::getOrDeclareRuntimeFunc(
          module, "zrt_world_rank",
          FunctionType::get(&getContext(), {},
                            {IntegerType::get(&getContext(), 32)}));
      if (failed(callee))
        return signalPassFailure();
      for (shard::ProcessLinearIndexOp op : ranks) {
        OpBuilder b(op);
        Value rank = func::CallOp::create(b, op.getLoc(), *callee, ValueRange{})
                         .getResult(0);
        op.getResult().replaceAllUsesWith(arith::IndexCastOp::create(
            b, op.getLoc(), b.getIndexType(), rank));
        op.erase();
      }
    }
    recordExtentArguments(module);
    // The CUDA backend's collectives take no scratch of the runtime's.
    if (failed(lowerStartedCollectives(module)) ||
        (target == zero::Target::CPU && failed(reserveCommArena(module))))
      return signalPassFailure();
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

void mlir::zero::registerShardBufferizationModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, shard::ShardDialect *) {
    // Bufferizing a collective creates ops and types of these dialects;
    // load them with the shard dialect (at parse time), since a pass that
    // bufferizes need not declare them (upstream one-shot-bufferize does
    // not) and creating a type of an unloaded dialect crashes.
    ctx->loadDialect<LLVM::LLVMDialect, memref::MemRefDialect,
                     arith::ArithDialect, func::FuncDialect>();
    shard::AllGatherOp::attachInterface<AllGatherModel>(*ctx);
    shard::ReduceScatterOp::attachInterface<ReduceScatterModel>(*ctx);
    shard::AllReduceOp::attachInterface<AllReduceModel>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, zero::ZeroDialect *) {
    ctx->loadDialect<LLVM::LLVMDialect, memref::MemRefDialect,
                     arith::ArithDialect, func::FuncDialect>();
    zero::AllGatherStartOp::attachInterface<
        StartModel<zero::AllGatherStartOp>>(*ctx);
    zero::ReduceScatterStartOp::attachInterface<
        StartModel<zero::ReduceScatterStartOp>>(*ctx);
    zero::AllReduceStartOp::attachInterface<
        StartModel<zero::AllReduceStartOp>>(*ctx);
    zero::CopyStartOp::attachInterface<StartModel<zero::CopyStartOp>>(*ctx);
    zero::WaitOp::attachInterface<WaitModel>(*ctx);
    zero::ReadStartOp::attachInterface<ReadStartModel>(*ctx);
    zero::WriteStartOp::attachInterface<WriteStartModel>(*ctx);
  });
}
