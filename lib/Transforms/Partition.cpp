//===- Partition.cpp - ZeRO partitioning ----------------------------------===//
//
// zero-partition: builds @train_step in ZeRO form (stage 0-3, N ranks) from
// the contract's forward_backward and optimizer; see the pass description in
// Passes.td and docs/zero-form.md. Collectives are upstream `shard` ops on
// `shard.grid @zero_grid`; sharding is flat (1-D, zero-padded, contiguous
// slices).
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/TrainingStep.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Debug.h"

#include "zero/runtime.h"

#define DEBUG_TYPE "zero-partition"

using namespace mlir;
using namespace mlir::zero;

namespace {
constexpr StringLiteral kGrid = "zero_grid";

/// Flat layout of one parameter (and its gradient and states).
struct Layout {
  int64_t numel, padded, shard;
};

int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

class Partitioner {
public:
  /// `persistent[i]`: parameter i stays whole at stage 3 (layer-wise
  /// partitioning; persistentParams decides it).
  Partitioner(ModuleOp module, TrainingStep &step, int64_t stage, int64_t n,
              bool regather, int64_t accumulate, bool accumulateF32,
              SmallVector<bool> persistent)
      : module(module), step(step), stage(stage), n(n), regather(regather),
        accumulate(accumulate), accumulateF32(accumulateF32),
        persistent(std::move(persistent)), ctx(module.getContext()),
        loc(step.forwardBackward.getLoc()) {}

  LogicalResult run();

private:
  /// The runtime's rule (zrt_flat_layout), which checkpoint readers check
  /// manifests against.
  Layout layoutOf(ArrayRef<int64_t> shape) const {
    Layout l{product(shape), 0, 0};
    [[maybe_unused]] int status = zrt_flat_layout(l.numel, n, &l.padded, &l.shard);
    assert(status == 0 && "static shapes and world-size >= 1 were verified");
    return l;
  }
  RankedTensorType shardType(RankedTensorType t) const {
    return RankedTensorType::get({layoutOf(t.getShape()).shard},
                                 t.getElementType());
  }
  /// Shard type for ranked tensors of rank >= 1, unchanged otherwise.
  Type convertForShard(Type t) const {
    auto ranked = dyn_cast<RankedTensorType>(t);
    return ranked && ranked.getRank() > 0 ? shardType(ranked) : t;
  }

  Value flattenPad(OpBuilder &b, Value v);
  /// The optimizer sees a 0-d parameter's one-element slice (and its
  /// gradient's and states') as the 0-d tensor it was: each rank updates its
  /// element (rank 0 the real one, the others padding) with the optimizer's
  /// ops as written. `toOptimizer` collapses such a slice, `fromOptimizer`
  /// expands the result back; other values pass through.
  Value toOptimizer(OpBuilder &b, Value shardValue, RankedTensorType full);
  Value fromOptimizer(OpBuilder &b, Value v, RankedTensorType full);
  Value unpadExpand(OpBuilder &b, Value flat, RankedTensorType type);
  /// A parallel linalg.generic over `init`'s shape that writes
  /// `body(inputs..., init)` elementwise into `init`.
  Value elementwiseInto(
      OpBuilder &b, ValueRange inputs, Value init,
      function_ref<Value(OpBuilder &, Location, ValueRange)> body);
  Value scale(OpBuilder &b, Value v, double factor);
  /// `acc + v`, elementwise, computed in `acc`'s buffer (`v` widened to
  /// `acc`'s element type).
  Value accumulateInto(OpBuilder &b, Value acc, Value v);
  /// The type of the accumulator of gradients of `type` over micro-batches:
  /// f32 elements for floats narrower than f32 (with accumulateF32).
  RankedTensorType accumulatorType(RankedTensorType type) const;
  /// `v * factor` rounded to `element`, into a new buffer whose generic
  /// carries `category` (if any); when `v` has that element type already,
  /// `scale(v, factor)` (`v` itself for a factor of 1).
  Value narrow(OpBuilder &b, Value v, Type element, double factor,
               StringRef category);
  /// A tensor of `type` filled with zeros; the fill carries `category`
  /// (if any) for its buffer.
  Value zeros(OpBuilder &b, RankedTensorType type, StringRef category = {});
  /// Marks a collective with the memory category of the buffers it makes
  /// (and, for a reduction, of the full gradient it reads).
  void setCategory(Operation *op, StringRef category);
  Value rankOffset(OpBuilder &b, int64_t shard);
  Value allGather(OpBuilder &b, Value shardValue, RankedTensorType full);
  /// The reduce-scatter of `g`, times `factor` (default: 1/N, the mean).
  Value reduceScatter(OpBuilder &b, Value g, std::optional<double> factor = {});

  /// Whether train_step takes and returns this rank's shard of parameter
  /// i (stage 3, unless it is persistent) and of each optimizer state
  /// (stages 1-3), and whether it reduces each gradient to this rank's
  /// shard as soon as it exists and holds only that (stages 2-3). The one
  /// place that decides what is sharded; each #zero.layout of the manifest
  /// records it.
  bool shardParams(unsigned i) const { return stage >= 3 && !persistent[i]; }
  bool shardGrads() const { return stage >= 2; }
  bool shardStates() const { return stage >= 1; }
  /// Whether the optimizer updates parameter i's slice of a whole
  /// parameter, whose updated slices are gathered back into it (stages
  /// 1-2, and a persistent parameter at stage 3).
  bool gatherUpdates(unsigned i) const { return stage >= 1 && !shardParams(i); }
  ShardedParts shardedParts(unsigned i) const {
    ShardedParts parts = ShardedParts::none;
    if (shardParams(i))
      parts |= ShardedParts::params;
    if (shardGrads())
      parts |= ShardedParts::grads;
    if (shardStates())
      parts |= ShardedParts::states;
    return parts;
  }

  /// train_step's arguments in order: params, states, batch, hypers.
  Value paramArg(unsigned i) const { return trainBody->getArgument(i); }
  Value stateArg(unsigned s) const {
    return trainBody->getArgument(step.params.size() + s);
  }
  Value batchArg(unsigned j) const {
    return trainBody->getArgument(step.params.size() + step.states.size() + j);
  }
  Value hyperArg(unsigned h) const {
    return trainBody->getArgument(step.params.size() + step.states.size() +
                                  step.batch.size() + h);
  }

  /// train_step's argument and result types and attributes.
  struct Signature {
    SmallVector<Type> argTypes, resultTypes;
    SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  };
  /// What inlining forward_backward leaves for the later phases.
  struct ForwardBackward {
    Value loss;
    SmallVector<Value> grads;
    /// Stage 3: the ops that gather each parameter, and the gathered value.
    SmallVector<SmallVector<Operation *>> chains;
    SmallVector<Value> fullParams;
  };

  FailureOr<Signature> buildSignature();
  /// @train_step with `sig`, its attributes and the flat-layout manifest,
  /// without a body.
  func::FuncOp createTrainStep(OpBuilder &b, const Signature &sig);
  /// Opens the micro-batch loop (accumulate > 1) and moves `b` into it.
  LogicalResult beginAccumulation(OpBuilder &b);
  ForwardBackward inlineForwardBackward(OpBuilder &b);
  /// Closes the micro-batch loop; `fwd` then holds the loop's results.
  void endAccumulation(OpBuilder &b, ForwardBackward &fwd);
  /// The gradients as the optimizer reads them: averaged, and sharded at
  /// stages 1-3.
  SmallVector<Value> reduceGradients(ArrayRef<Value> grads);
  /// Inlines the optimizer and returns the loss, parameters and states.
  LogicalResult inlineOptimizer(OpBuilder &b, Value globalLoss,
                                MutableArrayRef<Value> optGrads);
  LogicalResult flattenOptimizer(OpBuilder &b, IRMapping &map);
  LogicalResult placeStage3Gathers(Block &body,
                                   ArrayRef<SmallVector<Operation *>> chains,
                                   ArrayRef<Value> fullParams);

  ModuleOp module;
  TrainingStep &step;
  int64_t stage, n;
  bool regather;
  /// Micro-batches per step (1: no accumulation loop).
  int64_t accumulate;
  /// Whether gradients narrower than f32 accumulate in f32.
  bool accumulateF32;
  SmallVector<bool> persistent;
  MLIRContext *ctx;
  Location loc;
  Block *trainBody = nullptr;
  /// Where forward_backward is inlined: the micro-batch loop's body with
  /// accumulate > 1, else trainBody.
  Block *fbBlock = nullptr;
  scf::ForOp loop; ///< The micro-batch loop; null without accumulation.
  Value rankIndex; ///< shard.process_linear_index, built on first use.
};

Value Partitioner::flattenPad(OpBuilder &b, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  Layout l = layoutOf(type.getShape());
  Type elt = type.getElementType();
  auto flatType = RankedTensorType::get({l.numel}, elt);
  if (type.getRank() == 0)
    v = tensor::ExpandShapeOp::create(b, loc, flatType, v,
                                      ArrayRef<ReassociationIndices>{});
  else if (type.getRank() > 1)
    v = tensor::CollapseShapeOp::create(
        b, loc, flatType, v,
        ArrayRef<ReassociationIndices>{
            llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()))});
  if (l.padded == l.numel)
    return v;
  Value zero = arith::ConstantOp::create(b, loc, elt, b.getZeroAttr(elt));
  return tensor::createPadHighOp(RankedTensorType::get({l.padded}, elt), v,
                                 zero, /*nofold=*/false, loc, b);
}

Value Partitioner::toOptimizer(OpBuilder &b, Value shardValue,
                               RankedTensorType full) {
  if (full.getRank() != 0 ||
      cast<RankedTensorType>(shardValue.getType()).getRank() == 0)
    return shardValue;
  return tensor::CollapseShapeOp::create(b, loc, full, shardValue,
                                         ArrayRef<ReassociationIndices>{});
}

Value Partitioner::fromOptimizer(OpBuilder &b, Value v, RankedTensorType full) {
  if (full.getRank() != 0 || stage == 0)
    return v;
  return tensor::ExpandShapeOp::create(b, loc, shardType(full), v,
                                       ArrayRef<ReassociationIndices>{});
}

Value Partitioner::unpadExpand(OpBuilder &b, Value flat,
                               RankedTensorType type) {
  Layout l = layoutOf(type.getShape());
  if (l.padded != l.numel)
    flat = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({l.numel}, type.getElementType()), flat,
        ValueRange{}, ValueRange{}, ValueRange{}, b.getDenseI64ArrayAttr({0}),
        b.getDenseI64ArrayAttr({l.numel}), b.getDenseI64ArrayAttr({1}));
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat,
                                           ArrayRef<ReassociationIndices>{});
  return tensor::ExpandShapeOp::create(
      b, loc, type, flat,
      ArrayRef<ReassociationIndices>{
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()))});
}

Value Partitioner::elementwiseInto(
    OpBuilder &b, ValueRange inputs, Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto type = cast<RankedTensorType>(init.getType());
  unsigned rank = type.getRank();
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, inputs, ValueRange{init}, maps, iters,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, body(nb, l, args));
             })
      .getResult(0);
}

Value Partitioner::scale(OpBuilder &b, Value v, double factor) {
  // In place (`v` is the init, no input): `v` is a collective's fresh
  // result, used only here, so the product overwrites its buffer instead of
  // taking a second one.
  Type element = cast<RankedTensorType>(v.getType()).getElementType();
  return elementwiseInto(
      b, ValueRange{}, v, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value c = arith::ConstantOp::create(nb, l, element,
                                            nb.getFloatAttr(element, factor));
        return arith::MulFOp::create(nb, l, args[0], c).getResult();
      });
}

Value Partitioner::accumulateInto(OpBuilder &b, Value acc, Value v) {
  return elementwiseInto(
      b, ValueRange{v}, acc, [](OpBuilder &nb, Location l, ValueRange args) {
        Value x = args[0];
        if (x.getType() != args[1].getType())
          x = arith::ExtFOp::create(nb, l, args[1].getType(), x);
        return arith::AddFOp::create(nb, l, args[1], x).getResult();
      });
}

RankedTensorType
Partitioner::accumulatorType(RankedTensorType type) const {
  auto element = dyn_cast<FloatType>(type.getElementType());
  if (!accumulateF32 || !element || element.getWidth() >= 32)
    return type;
  return type.clone(Float32Type::get(ctx));
}

Value Partitioner::narrow(OpBuilder &b, Value v, Type element,
                          double factor, StringRef category) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType() == element)
    return factor == 1.0 ? v : scale(b, v, factor);
  RankedTensorType narrowType = type.clone(element);
  Value empty =
      tensor::EmptyOp::create(b, loc, narrowType.getShape(), element);
  Value result = elementwiseInto(
      b, ValueRange{v}, empty, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value x = args[0];
        if (factor != 1.0)
          x = arith::MulFOp::create(
              nb, l, x,
              arith::ConstantOp::create(nb, l, x.getType(),
                                        nb.getFloatAttr(x.getType(), factor)));
        return arith::TruncFOp::create(nb, l, element, x).getResult();
      });
  if (!category.empty())
    setCategory(result.getDefiningOp(), category);
  return result;
}

Value Partitioner::zeros(OpBuilder &b, RankedTensorType type,
                         StringRef category) {
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                        type.getElementType());
  Value zero = arith::ConstantOp::create(
      b, loc, type.getElementType(), b.getFloatAttr(type.getElementType(), 0));
  auto fill = linalg::FillOp::create(b, loc, zero, empty);
  if (!category.empty())
    setCategory(fill, category);
  return fill.getResult(0);
}

void Partitioner::setCategory(Operation *op, StringRef category) {
  op->setAttr(ZeroDialect::CategoryAttrHelper::getNameStr(),
              StringAttr::get(ctx, category));
}

Value Partitioner::rankOffset(OpBuilder &b, int64_t shard) {
  if (!rankIndex) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(trainBody);
    rankIndex = shard::ProcessLinearIndexOp::create(b, loc, kGrid);
  }
  Value s = arith::ConstantIndexOp::create(b, loc, shard);
  return arith::MulIOp::create(b, loc, rankIndex, s);
}

Value Partitioner::allGather(OpBuilder &b, Value shardValue,
                             RankedTensorType full) {
  Layout l = layoutOf(full.getShape());
  auto paddedType = RankedTensorType::get({l.padded}, full.getElementType());
  auto gather = shard::AllGatherOp::create(
      b, loc, paddedType, kGrid, ArrayRef<int16_t>{0}, shardValue,
      APInt(64, 0));
  setCategory(gather, "params");
  Value gathered = gather.getResult();
  return unpadExpand(b, gathered, full);
}

Value Partitioner::reduceScatter(OpBuilder &b, Value g,
                                 std::optional<double> factor) {
  auto type = cast<RankedTensorType>(g.getType());
  Value padded = flattenPad(b, g);
  auto scattered = shard::ReduceScatterOp::create(
      b, loc, shardType(type), kGrid, ArrayRef<int16_t>{0}, padded,
      shard::ReductionKind::Sum, APInt(64, 0));
  setCategory(scattered, "grads");
  double f = factor.value_or(1.0 / static_cast<double>(n));
  return f == 1.0 ? scattered.getResult() : scale(b, scattered.getResult(), f);
}

/// Which all-reduce completes a partial full reduction, from its payload.
FailureOr<shard::ReductionKind> combinerOf(linalg::GenericOp op,
                                           unsigned result) {
  Block &body = op.getRegion().front();
  Value yielded = body.getTerminator()->getOperand(result);
  BlockArgument acc = body.getArgument(op.getNumDpsInputs() + result);
  Operation *def = yielded.getDefiningOp();
  if (!def || !llvm::is_contained(def->getOperands(), acc))
    return failure();
  if (isa<arith::AddFOp>(def))
    return shard::ReductionKind::Sum;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(def))
    return shard::ReductionKind::Max;
  return failure();
}

LogicalResult Partitioner::flattenOptimizer(OpBuilder &b, IRMapping &map) {
  func::FuncOp opt = step.optimizer;
  // Named ops whose indexing depends on a dimensions attribute (reduce,
  // broadcast) become generics first; the others derive their maps from
  // their operand types and are simply re-typed below.
  IRRewriter rewriter(ctx);
  SmallVector<linalg::LinalgOp> named;
  opt.walk([&](linalg::LinalgOp op) {
    if (isa<linalg::ReduceOp, linalg::BroadcastOp>(op))
      named.push_back(op);
  });
  for (linalg::LinalgOp op : named) {
    rewriter.setInsertionPoint(op);
    if (failed(linalg::generalizeNamedOp(rewriter, op)))
      return op->emitOpError("cannot be generalized for flat sharding");
  }

  for (Operation &op : opt.getBody().front().without_terminator()) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    // A generic over 0-d tensors only (bias correction `beta ** step` as
    // torch-mlir emits it, a norm's square root) computes a scalar that no
    // rank shards: it is cloned as it is below.
    if (generic && generic.getNumLoops() == 0)
      generic = nullptr;
    if (generic) {
      bool reduction = generic.getNumReductionLoops() > 0;
      SmallVector<Value> ins, inits;
      for (Value v : generic.getDpsInputs())
        ins.push_back(map.lookup(v));
      for (Value v : generic.getDpsInits())
        inits.push_back(map.lookup(v));
      // The element count of the tensors this op ranges over (the original
      // shape's), to mask the padding out of reductions.
      int64_t numel = 1;
      for (Value v : generic->getOperands())
        if (auto t = dyn_cast<RankedTensorType>(v.getType());
            t && t.getRank() > 0)
          numel = t.getNumElements();
      Value offset;
      if (reduction) {
        offset = rankOffset(b, layoutOf({numel}).shard);
        ins.push_back(offset);
      }
      SmallVector<AffineMap> maps;
      AffineMap scalarMap = AffineMap::get(1, 0, {}, ctx);
      for (Value v : ins)
        maps.push_back(isa<RankedTensorType>(v.getType()) &&
                               cast<RankedTensorType>(v.getType()).getRank() > 0
                           ? b.getMultiDimIdentityMap(1)
                           : scalarMap);
      for (Value v : inits)
        maps.push_back(cast<RankedTensorType>(v.getType()).getRank() > 0
                           ? b.getMultiDimIdentityMap(1)
                           : scalarMap);
      SmallVector<Type> resultTypes = llvm::map_to_vector(
          inits, [](Value v) { return v.getType(); });
      utils::IteratorType iter = reduction ? utils::IteratorType::reduction
                                           : utils::IteratorType::parallel;
      unsigned numOrigIns = generic.getNumDpsInputs();
      auto flat = linalg::GenericOp::create(
          b, generic.getLoc(), resultTypes, ins, inits, maps,
          ArrayRef<utils::IteratorType>{iter},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Block &old = generic.getRegion().front();
            // Values captured from the optimizer's body map like operands.
            IRMapping bodyMap = map;
            for (unsigned i = 0; i < numOrigIns; ++i)
              bodyMap.map(old.getArgument(i), args[i]);
            unsigned outBase = numOrigIns + (reduction ? 1 : 0);
            for (unsigned i = 0; i < generic.getNumDpsInits(); ++i)
              bodyMap.map(old.getArgument(numOrigIns + i), args[outBase + i]);
            for (Operation &inner : old.without_terminator())
              nb.clone(inner, bodyMap);
            SmallVector<Value> yielded;
            for (Value y : old.getTerminator()->getOperands())
              yielded.push_back(bodyMap.lookupOrDefault(y));
            if (reduction) {
              // Padding is not the neutral element of every reduction
              // (exp(0) = 1): keep the accumulator on padded positions.
              Value idx = linalg::IndexOp::create(nb, l, 0);
              Value global = arith::AddIOp::create(nb, l, args[numOrigIns], idx);
              Value limit = arith::ConstantIndexOp::create(nb, l, numel);
              Value valid = arith::CmpIOp::create(
                  nb, l, arith::CmpIPredicate::ult, global, limit);
              for (auto [i, y] : llvm::enumerate(yielded))
                y = arith::SelectOp::create(nb, l, valid, y,
                                            args[outBase + i]);
            }
            linalg::YieldOp::create(nb, l, yielded);
          });
      for (auto [i, result] : llvm::enumerate(generic.getResults())) {
        Value r = flat.getResult(i);
        if (reduction) {
          FailureOr<shard::ReductionKind> kind = combinerOf(generic, i);
          if (failed(kind))
            return generic->emitOpError()
                   << "is a full reduction whose combiner is neither addf nor "
                      "maximumf; zero-partition cannot complete it with an "
                      "all-reduce";
          // Each rank's partial starts from the init; a sum must start at 0.
          if (*kind == shard::ReductionKind::Sum) {
            auto fill =
                generic.getDpsInits()[i].getDefiningOp<linalg::FillOp>();
            FloatAttr init;
            if (!fill || !matchPattern(fill.getInputs()[0], m_Constant(&init)) ||
                !init.getValue().isZero())
              return generic->emitOpError()
                     << "sums into an initial value that is not a constant 0; "
                        "each rank's partial sum would add it again";
          }
          r = shard::AllReduceOp::create(b, generic.getLoc(), r.getType(),
                                         kGrid, ArrayRef<int16_t>{0}, r, *kind);
        }
        map.map(result, r);
      }
      continue;
    }
    if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
      auto t = cast<RankedTensorType>(convertForShard(empty.getType()));
      map.map(empty.getResult(), tensor::EmptyOp::create(b, empty.getLoc(),
                                                         t.getShape(),
                                                         t.getElementType()));
      continue;
    }
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      auto t = dyn_cast<RankedTensorType>(cst.getType());
      if (t && t.getRank() > 0) {
        auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
        if (!dense || !dense.isSplat())
          return cst.emitOpError(
              "is a non-splat tensor constant; zero-partition cannot shard it");
        auto st = shardType(t);
        map.map(cst.getResult(),
                arith::ConstantOp::create(b, cst.getLoc(), st,
                                          dense.resizeSplat(st)));
        continue;
      }
    }
    Operation *clone = b.clone(op, map);
    for (Value r : clone->getResults())
      r.setType(convertForShard(r.getType()));
  }
  return success();
}

LogicalResult Partitioner::placeStage3Gathers(
    Block &body, ArrayRef<SmallVector<Operation *>> chains,
    ArrayRef<Value> fullParams) {
  // The ops of the body that read a gathered parameter, and where they are.
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [pos, op] : llvm::enumerate(body))
    position[&op] = pos;
  SmallVector<SmallVector<Operation *>> users(fullParams.size());
  std::vector<unsigned> readerPositions;
  for (auto [i, full] : llvm::enumerate(fullParams)) {
    // A persistent parameter is not gathered: its readers neither move nor
    // separate another parameter's uses.
    if (!shardParams(i))
      continue;
    llvm::SetVector<Operation *> ops;
    for (OpOperand &use : full.getUses()) {
      Operation *inBlock = body.findAncestorOpInBlock(*use.getOwner());
      if (inBlock && !llvm::is_contained(chains[i], inBlock))
        ops.insert(inBlock);
    }
    users[i] = ops.takeVector();
    llvm::sort(users[i], [&](Operation *x, Operation *y) {
      return position[x] < position[y];
    });
    for (Operation *op : users[i])
      readerPositions.push_back(position[op]);
  }
  llvm::sort(readerPositions);
  // Whether an op reading some parameter lies strictly between `x` and `y`.
  auto readerBetween = [&](Operation *x, Operation *y) {
    auto next = llvm::upper_bound(readerPositions, position[x]);
    return next != readerPositions.end() && *next < position[y];
  };

  for (auto [i, fullRef] : llvm::enumerate(fullParams)) {
    if (!shardParams(i))
      continue;
    Value full = fullRef;
    const SmallVector<Operation *> &chain = chains[i];
    if (users[i].empty()) {
      for (Operation *op : llvm::reverse(chain))
        op->erase();
      continue;
    }
    // Uses of the parameter in groups: with `regather`, a new group starts
    // where another parameter is read since the previous use, so that a
    // gathered parameter never stays live across another one's gather.
    SmallVector<SmallVector<Operation *>> groups{{users[i].front()}};
    for (auto [prev, op] : llvm::zip(users[i], llvm::drop_begin(users[i]))) {
      if (regather && readerBetween(prev, op))
        groups.emplace_back();
      groups.back().push_back(op);
    }
    // The first group uses the gather, moved right before its first use;
    // each later one a copy of it, right before its own first use.
    for (Operation *op : chain)
      op->moveBefore(groups.front().front());
    for (ArrayRef<Operation *> group : llvm::drop_begin(groups)) {
      OpBuilder b(group.front());
      IRMapping map;
      for (Operation *op : chain)
        b.clone(*op, map);
      llvm::SmallPtrSet<Operation *, 8> inGroup(group.begin(), group.end());
      full.replaceUsesWithIf(map.lookup(full), [&](OpOperand &use) {
        return inGroup.contains(body.findAncestorOpInBlock(*use.getOwner()));
      });
    }
  }
  return success();
}

FailureOr<Partitioner::Signature> Partitioner::buildSignature() {
  func::FuncOp fb = step.forwardBackward, opt = step.optimizer;
  // Signature: params, states, batch, hypers -> loss, params', states'.
  SmallVector<Type> argTypes, resultTypes;
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  auto named = [&](StringRef attr, Attribute value) {
    return DictionaryAttr::get(ctx, {NamedAttribute(attr, value)});
  };
  // An argument that holds this rank's shard says so (zero.sharded), so
  // that drivers read the decision instead of re-deriving it from the stage.
  auto withSharded = [&](DictionaryAttr attrs, bool sharded) {
    if (!sharded)
      return attrs;
    NamedAttrList list(attrs);
    list.set(ZeroDialect::ShardedAttrHelper::getNameStr(), UnitAttr::get(ctx));
    return list.getDictionary(ctx);
  };
  for (auto [i, p] : llvm::enumerate(step.params)) {
    argTypes.push_back(shardParams(i) ? shardType(p.type) : p.type);
    // forward_backward's argument attributes: the name and how drivers
    // initialize it (zero.init).
    argAttrs.push_back(withSharded(fb.getArgAttrDict(p.fbArg), shardParams(i)));
  }
  for (const StateInfo &s : step.states) {
    argTypes.push_back(shardStates() ? shardType(s.type) : s.type);
    argAttrs.push_back(
        withSharded(opt.getArgAttrDict(s.optArg), shardStates()));
  }
  for (const BatchInfo &bi : step.batch) {
    Type type = bi.type;
    if (accumulate > 1) {
      // K micro-batches along the leading dimension.
      auto ranked = dyn_cast<RankedTensorType>(type);
      std::optional<int64_t> rows;
      if (ranked && ranked.hasStaticShape() && ranked.getRank() >= 1)
        rows = llvm::checkedMul(ranked.getDimSize(0), accumulate);
      if (!rows)
        return fb.emitOpError()
               << "zero-partition: accumulate=" << accumulate
               << " stacks micro-batches along each batch input's leading "
                  "dimension, but batch input '"
               << bi.name << "' is " << type
               << "; give it a static shape with a batch dimension first";
      SmallVector<int64_t> shape(ranked.getShape());
      shape[0] = *rows;
      type = RankedTensorType::get(shape, ranked.getElementType(),
                                   ranked.getEncoding());
    }
    argTypes.push_back(type);
    argAttrs.push_back(fb.getArgAttrDict(bi.fbArg));
  }
  for (const HyperInfo &h : step.hypers) {
    argTypes.push_back(opt.getArgument(h.optArg).getType());
    argAttrs.push_back(opt.getArgAttrDict(h.optArg));
  }
  resultTypes.push_back(fb.getResultTypes()[step.lossResult]);
  resultAttrs.push_back(named(ZeroDialect::LossAttrHelper::getNameStr(),
                              UnitAttr::get(ctx)));
  for (auto [i, p] : llvm::enumerate(step.params)) {
    resultTypes.push_back(argTypes[i]);
    resultAttrs.push_back(
        withSharded(named(ZeroDialect::ParamAttrHelper::getNameStr(),
                          StringAttr::get(ctx, p.name)),
                    shardParams(i)));
  }
  for (unsigned s = 0; s < step.states.size(); ++s) {
    resultTypes.push_back(argTypes[step.params.size() + s]);
    resultAttrs.push_back(argAttrs[step.params.size() + s]);
  }
  return Signature{std::move(argTypes), std::move(resultTypes),
                   std::move(argAttrs), std::move(resultAttrs)};
}

func::FuncOp Partitioner::createTrainStep(OpBuilder &b, const Signature &sig) {
  auto train = func::FuncOp::create(
      b, loc, "train_step", b.getFunctionType(sig.argTypes, sig.resultTypes));
  train.setAllArgAttrs(sig.argAttrs);
  train.setAllResultAttrs(sig.resultAttrs);
  train->setAttr(ZeroDialect::RoleAttrHelper::getNameStr(),
                 StringAttr::get(ctx, "train_step"));
  train->setAttr(ZeroDialect::StageAttrHelper::getNameStr(),
                 b.getI64IntegerAttr(stage));
  train->setAttr(ZeroDialect::WorldSizeAttrHelper::getNameStr(),
                 b.getI64IntegerAttr(n));
  SmallVector<Attribute> manifest;
  for (auto [i, p] : llvm::enumerate(step.params)) {
    Layout l = layoutOf(p.type.getShape());
    // A gradient held across micro-batches in a wider accumulator: its
    // bytes per element, for the model-state accounting.
    std::optional<int64_t> gradBytes;
    RankedTensorType acc = accumulatorType(p.type);
    if (accumulate > 1 && acc != p.type)
      gradBytes = acc.getElementTypeBitWidth() / 8;
    manifest.push_back(LayoutAttr::get(ctx, b.getStringAttr(p.name),
                                       p.type.getShape(), l.numel, l.padded,
                                       l.shard, shardedParts(i), gradBytes));
  }
  train->setAttr(ZeroDialect::ManifestAttrHelper::getNameStr(),
                 b.getArrayAttr(manifest));
  return train;
}

LogicalResult Partitioner::beginAccumulation(OpBuilder &b) {
  func::FuncOp fb = step.forwardBackward;
  auto lossType = dyn_cast<RankedTensorType>(
      fb.getResultTypes()[step.lossResult]);
  if (!lossType || lossType.getRank() != 0 ||
      !isa<FloatType>(lossType.getElementType()))
    return fb.emitOpError()
           << "zero-partition: accumulate=" << accumulate
           << " sums the loss over micro-batches and needs it as a 0-d "
              "float tensor, not "
           << fb.getResultTypes()[step.lossResult];
  SmallVector<Value> inits{zeros(b, accumulatorType(lossType))};
  for (const ParamInfo &p : step.params)
    inits.push_back(
        zeros(b, accumulatorType(shardGrads() ? shardType(p.type) : p.type),
              "grads"));
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value ub = arith::ConstantIndexOp::create(b, loc, accumulate);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  loop = scf::ForOp::create(b, loc, lb, ub, one, inits);
  fbBlock = loop.getBody();
  b.setInsertionPointToStart(fbBlock);
  return success();
}

Partitioner::ForwardBackward Partitioner::inlineForwardBackward(OpBuilder &b) {
  func::FuncOp fb = step.forwardBackward;
  // forward_backward, inlined. Stage 3 first gathers every parameter; the
  // gathers move to their uses afterwards.
  ForwardBackward out;
  IRMapping fbMap;
  out.chains.resize(step.params.size());
  for (auto [i, p] : llvm::enumerate(step.params)) {
    Value full = paramArg(i);
    if (shardParams(i)) {
      Operation *before = b.getInsertionBlock()->empty()
                              ? nullptr
                              : &b.getInsertionBlock()->back();
      full = allGather(b, paramArg(i), p.type);
      for (Operation *op = before ? before->getNextNode()
                                  : &b.getInsertionBlock()->front();
           op; op = op->getNextNode())
        out.chains[i].push_back(op);
    }
    out.fullParams.push_back(full);
    fbMap.map(fb.getArgument(p.fbArg), full);
  }
  for (auto [j, bi] : llvm::enumerate(step.batch)) {
    Value batch = batchArg(j);
    if (loop) {
      // This micro-batch: rows [k*b, (k+1)*b) of the input.
      auto type = cast<RankedTensorType>(bi.type);
      Value rows = arith::ConstantIndexOp::create(b, loc, type.getDimSize(0));
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
      offsets[0] =
          arith::MulIOp::create(b, loc, loop.getInductionVar(), rows)
              .getResult();
      SmallVector<OpFoldResult> sizes, strides(type.getRank(),
                                               b.getIndexAttr(1));
      for (int64_t d : type.getShape())
        sizes.push_back(b.getIndexAttr(d));
      batch = tensor::ExtractSliceOp::create(b, loc, type, batch, offsets,
                                             sizes, strides);
    }
    fbMap.map(fb.getArgument(bi.fbArg), batch);
  }
  for (Operation &op : fb.getBody().front().without_terminator())
    b.clone(op, fbMap);
  Operation *fbReturn = fb.getBody().front().getTerminator();
  out.loss = fbMap.lookup(fbReturn->getOperand(step.lossResult));
  for (const ParamInfo &p : step.params)
    out.grads.push_back(
        fbMap.lookupOrDefault(fbReturn->getOperand(p.fbResult)));
  return out;
}

void Partitioner::endAccumulation(OpBuilder &b, ForwardBackward &fwd) {
  // Each micro-batch adds its loss and gradients (stages 2-3: its
  // reduce-scattered sums, as soon as each gradient exists) to the
  // accumulators; the mean over micro-batches and ranks is taken once,
  // after the loop.
  SmallVector<Value> yielded{
      accumulateInto(b, loop.getRegionIterArgs()[0], fwd.loss)};
  for (auto [i, p] : llvm::enumerate(step.params)) {
    Value g = fwd.grads[i];
    OpBuilder gb(ctx);
    Operation *def = g.getDefiningOp();
    if (def && def->getBlock() == fbBlock)
      gb.setInsertionPointAfter(def);
    else
      gb.setInsertionPointToEnd(fbBlock);
    if (shardGrads())
      g = reduceScatter(gb, g, 1.0);
    yielded.push_back(accumulateInto(gb, loop.getRegionIterArgs()[i + 1], g));
  }
  b.setInsertionPointToEnd(fbBlock);
  scf::YieldOp::create(b, loc, yielded);
  b.setInsertionPointAfter(loop);
  // A 0-d float tensor, as beginAccumulation checked.
  auto lossType = cast<RankedTensorType>(
      step.forwardBackward.getResultTypes()[step.lossResult]);
  fwd.loss = narrow(b, loop.getResult(0), lossType.getElementType(),
                    1.0 / static_cast<double>(accumulate), {});
  for (unsigned i = 0; i < step.params.size(); ++i)
    fwd.grads[i] = loop.getResult(i + 1);
}

SmallVector<Value> Partitioner::reduceGradients(ArrayRef<Value> grads) {
  // Gradients: averaged over ranks (and micro-batches). Stage 2/3
  // reduce-scatter each one as soon as it exists; stage 1 after the whole
  // backward pass; stage 0 all-reduces.
  const double mean = 1.0 / static_cast<double>(n * accumulate);
  SmallVector<Value> optGrads(step.params.size());
  for (auto [i, p] : llvm::enumerate(step.params)) {
    Value g = grads[i];
    OpBuilder gb(ctx);
    Operation *def = g.getDefiningOp();
    if (shardGrads() && def && def->getBlock() == trainBody && !loop)
      gb.setInsertionPointAfter(def);
    else
      gb.setInsertionPointToEnd(trainBody);
    Type element = p.type.getElementType();
    if (loop && shardGrads()) {
      // Reduced in the loop already; an f32 accumulator of a bf16 gradient
      // is scaled in f32 and rounded once.
      optGrads[i] = narrow(gb, g, element, mean, "grads");
      continue;
    }
    // Stages 0-1: the accumulated gradient goes on the wire in its own type.
    if (loop)
      g = narrow(gb, g, element, 1.0, "grads");
    if (stage == 0) {
      Value padded = flattenPad(gb, g);
      auto summed = shard::AllReduceOp::create(
          gb, loc, padded.getType(), kGrid, ArrayRef<int16_t>{0}, padded,
          shard::ReductionKind::Sum);
      setCategory(summed, "grads");
      optGrads[i] = unpadExpand(gb, scale(gb, summed.getResult(), mean),
                                p.type);
    } else {
      optGrads[i] = reduceScatter(gb, g, mean);
    }
  }
  return optGrads;
}

LogicalResult Partitioner::inlineOptimizer(OpBuilder &b, Value globalLoss,
                                           MutableArrayRef<Value> optGrads) {
  func::FuncOp opt = step.optimizer;
  // The optimizer: on full tensors (stage 0) or on this rank's slices.
  IRMapping optMap;
  for (auto [i, p] : llvm::enumerate(step.params)) {
    Value param = paramArg(i);
    if (gatherUpdates(i)) {
      Layout l = layoutOf(p.type.getShape());
      Value padded = flattenPad(b, param);
      param = tensor::ExtractSliceOp::create(
          b, loc, shardType(p.type), padded, ValueRange{rankOffset(b, l.shard)},
          ValueRange{}, ValueRange{},
          b.getDenseI64ArrayAttr({ShapedType::kDynamic}),
          b.getDenseI64ArrayAttr({l.shard}), b.getDenseI64ArrayAttr({1}));
    }
    if (stage > 0) {
      param = toOptimizer(b, param, p.type);
      optGrads[i] = toOptimizer(b, optGrads[i], p.type);
    }
    optMap.map(opt.getArgument(p.optArg), param);
    optMap.map(opt.getArgument(p.optGrad), optGrads[i]);
  }
  for (auto [s, st] : llvm::enumerate(step.states))
    optMap.map(opt.getArgument(st.optArg),
               stage > 0 ? toOptimizer(b, stateArg(s), st.type) : stateArg(s));
  for (auto [h, hi] : llvm::enumerate(step.hypers))
    optMap.map(opt.getArgument(hi.optArg), hyperArg(h));
  if (stage == 0) {
    for (Operation &op : opt.getBody().front().without_terminator())
      b.clone(op, optMap);
  } else if (failed(flattenOptimizer(b, optMap))) {
    return failure();
  }
  Operation *optReturn = opt.getBody().front().getTerminator();

  SmallVector<Value> results{globalLoss};
  for (auto [i, p] : llvm::enumerate(step.params)) {
    Value updated = fromOptimizer(
        b, optMap.lookup(optReturn->getOperand(p.optResult)), p.type);
    // Stages 1/2 (and persistent parameters) gather the updated slices
    // straight into the parameter's buffer (its old value is dead by now),
    // so the step updates parameters in place at every stage.
    if (gatherUpdates(i))
      updated = bufferization::MaterializeInDestinationOp::create(
                    b, loc, allGather(b, updated, p.type), paramArg(i))
                    .getResult();
    results.push_back(updated);
  }
  for (const StateInfo &s : step.states)
    results.push_back(fromOptimizer(
        b, optMap.lookup(optReturn->getOperand(s.optResult)), s.type));
  func::ReturnOp::create(b, loc, results);
  return success();
}

LogicalResult Partitioner::run() {
  func::FuncOp fb = step.forwardBackward, opt = step.optimizer;
  if (!fb.getBody().hasOneBlock() || !opt.getBody().hasOneBlock())
    return fb.emitOpError("zero-partition needs single-block step functions");

  OpBuilder b(ctx);
  b.setInsertionPointToStart(module.getBody());
  if (!module.lookupSymbol(kGrid))
    shard::GridOp::create(b, loc, kGrid, ArrayRef<int64_t>{n});
  else if (!isa<shard::GridOp>(module.lookupSymbol(kGrid)))
    return module.lookupSymbol(kGrid)->emitOpError()
           << "uses the name @" << kGrid << " that zero-partition needs";

  FailureOr<Signature> signature = buildSignature();
  if (failed(signature))
    return failure();
  b.setInsertionPoint(fb);
  func::FuncOp train = createTrainStep(b, *signature);

  trainBody = train.addEntryBlock();
  b.setInsertionPointToStart(trainBody);

  // With accumulate=K, forward and backward go into an scf.for over the
  // micro-batches whose iteration arguments are the loss and gradient
  // accumulators (full gradients at stages 0-1, this rank's reduced slices
  // at stages 2-3).
  fbBlock = trainBody;
  if (accumulate > 1 && failed(beginAccumulation(b)))
    return failure();

  ForwardBackward fwd = inlineForwardBackward(b);
  if (loop)
    endAccumulation(b, fwd);

  SmallVector<Value> optGrads = reduceGradients(fwd.grads);
  b.setInsertionPointToEnd(trainBody);

  // The loss: the mean over ranks of each rank's mean.
  Value lossSum = shard::AllReduceOp::create(b, loc, fwd.loss.getType(), kGrid,
                                             ArrayRef<int16_t>{0}, fwd.loss,
                                             shard::ReductionKind::Sum);
  Value globalLoss = scale(b, lossSum, 1.0 / static_cast<double>(n));

  if (failed(inlineOptimizer(b, globalLoss, optGrads)))
    return failure();

  // Stage 3 moves each gather to its readers now that all of them exist: a
  // gradient (or loss) that is the parameter itself reads the gather too.
  if (stage >= 3 &&
      failed(placeStage3Gathers(*fbBlock, fwd.chains, fwd.fullParams)))
    return failure();

  fb.erase();
  opt.erase();
  return success();
}
} // namespace

LogicalResult zero::partitionStep(ModuleOp module, TrainingStep &step,
                                  int64_t stage, int64_t worldSize,
                                  bool regather, int64_t accumulate,
                                  bool accumulateF32,
                                  ArrayRef<bool> persistent) {
  return Partitioner(module, step, stage, worldSize, regather, accumulate,
                     accumulateF32, SmallVector<bool>(persistent))
      .run();
}
