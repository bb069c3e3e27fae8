//===- BufferizeCollectives.cpp - Collectives and transfers on buffers ----===//
//
// The external BufferizableOpInterface models of the step's collectives
// and transfers. The blocking `shard` collectives on tensors become their
// typed forms on buffers (`zero.all_gather`, `zero.reduce_scatter`,
// `zero.all_reduce`) with a fresh result buffer; the started ones
// (`zero.*_start`, `zero.wait`) and the NVMe tier's transfers keep their
// ops in memref form. Nothing here calls the runtime: the collectives stay
// typed until zero-collectives-to-runtime, so that the analyses that run on
// the bufferized step read ops, not callee names.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

#include "zero/Analysis/Collectives.h"
#include "zero/Analysis/StepMemory.h"
#include "zero/Conversion/Pipelines.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/DialectRegistry.h"

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
/// fresh buffer, with the typed collective on buffers between the two.
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
    if (!zero::isCollectiveElementType(resultType.getElementType()))
      return op->emitOpError()
             << "has element type " << resultType.getElementType()
             << "; the runtime's collectives take f32, f64 and bf16";
    auto outType =
        MemRefType::get(resultType.getShape(), resultType.getElementType());
    Value input = contiguous(rewriter, op->getLoc(), *in);
    auto out = memref::AllocOp::create(rewriter, op->getLoc(), outType,
                                       rewriter.getI64IntegerAttr(64));
    // zero.category (set by zero-partition): the memory category of the
    // result buffer and, for the reductions, of the full gradient they
    // read, which stays on the op until zero-comm-buffers puts it on that
    // buffer's allocation (bufferization in progress may not have
    // materialized it yet).
    StringRef name = zero::ZeroDialect::CategoryAttrHelper::getNameStr();
    auto category = op->getAttrOfType<StringAttr>(name);
    if (category)
      out->setAttr(name, category);
    FailureOr<Operation *> collective =
        static_cast<const ConcreteModel *>(this)->emit(rewriter, concrete,
                                                       input, out);
    if (failed(collective))
      return failure();
    if (category && !isa<shard::AllGatherOp>(op))
      (*collective)->setAttr(name, category);
    replaceOpWithBufferizedValues(rewriter, op, out.getResult());
    return success();
  }
};

struct AllGatherModel
    : public CollectiveModel<AllGatherModel, shard::AllGatherOp> {
  FailureOr<Operation *> emit(RewriterBase &rewriter, shard::AllGatherOp op,
                              Value in, Value out) const {
    auto t = cast<MemRefType>(in.getType());
    if (t.getRank() != 1 || op.getGatherAxis().getZExtValue() != 0)
      return op.emitOpError("lowers to the runtime only as a 1-D gather "
                            "along axis 0 (zero-partition's flat form)");
    return zero::AllGatherOp::create(rewriter, op.getLoc(), in, out)
        .getOperation();
  }
};

struct ReduceScatterModel
    : public CollectiveModel<ReduceScatterModel, shard::ReduceScatterOp> {
  FailureOr<Operation *> emit(RewriterBase &rewriter,
                              shard::ReduceScatterOp op, Value in,
                              Value out) const {
    auto t = cast<MemRefType>(out.getType());
    if (t.getRank() != 1 || op.getScatterAxis().getZExtValue() != 0 ||
        op.getReduction() != shard::ReductionKind::Sum)
      return op.emitOpError("lowers to the runtime only as a 1-D sum along "
                            "axis 0 (zero-partition's flat form)");
    return zero::ReduceScatterOp::create(rewriter, op.getLoc(), in, out)
        .getOperation();
  }
};

struct AllReduceModel
    : public CollectiveModel<AllReduceModel, shard::AllReduceOp> {
  FailureOr<Operation *> emit(RewriterBase &rewriter, shard::AllReduceOp op,
                              Value in, Value out) const {
    shard::ReductionKind kind = op.getReduction();
    if (kind != shard::ReductionKind::Sum && kind != shard::ReductionKind::Max)
      return op.emitOpError("lowers to the runtime only as a sum or a max");
    return zero::AllReduceOp::create(
               rewriter, op.getLoc(), in, out,
               shard::ReductionKindAttr::get(op.getContext(), kind))
        .getOperation();
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

/// A staging buffer for `type`: a 4096-aligned allocation of the rounded
/// bytes, seen as the identity-layout memref of `type`'s shape, in the
/// category and memory space `transfer` names (zero.category, zero.space:
/// host memory for a transfer of zero-offload's optimizer=host).
FailureOr<Value> allocateStaging(RewriterBase &rewriter, Operation *op,
                                 ShapedType type, Operation *transfer) {
  FailureOr<int64_t> bytes = zero::stagingBytes(op, type);
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
    FailureOr<int64_t> bytes = zero::stagingBytes(op, type);
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

} // namespace

void mlir::zero::registerShardBufferizationModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, shard::ShardDialect *) {
    // Bufferizing a collective creates ops and types of these dialects;
    // load them with the shard dialect (at parse time), since a pass that
    // bufferizes need not declare them (upstream one-shot-bufferize does
    // not) and creating a type of an unloaded dialect crashes.
    ctx->loadDialect<memref::MemRefDialect, zero::ZeroDialect>();
    shard::AllGatherOp::attachInterface<AllGatherModel>(*ctx);
    shard::ReduceScatterOp::attachInterface<ReduceScatterModel>(*ctx);
    shard::AllReduceOp::attachInterface<AllReduceModel>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, zero::ZeroDialect *) {
    ctx->loadDialect<memref::MemRefDialect>();
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
