//===- DeferGathers.cpp - Stage 2's parameter gathers in the next step ----===//

#include "BlockMotion.h"

#include "zero/Analysis/Collectives.h"
#include "zero/Analysis/CommTimeline.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::zero;

namespace {

/// The end of a parameter's gather chain: `v` is, through
/// materialize_in_destination into `dest` and reshapes or static slices, an
/// all-gather of a 1-D shard along axis 0. Fills `chain` with the ops from
/// the gather's user to `v` (in def order) and returns the gather.
shard::AllGatherOp gatherChain(Value v, Value dest,
                               SmallVectorImpl<Operation *> &chain,
                               bufferization::MaterializeInDestinationOp &m) {
  m = v.getDefiningOp<bufferization::MaterializeInDestinationOp>();
  if (m) {
    if (m.getDest() != dest)
      return {};
    v = m.getSource();
  }
  while (true) {
    if (auto gather = v.getDefiningOp<shard::AllGatherOp>()) {
      auto in = dyn_cast<RankedTensorType>(gather.getInput().getType());
      if (!in || in.getRank() != 1 || !in.hasStaticShape() ||
          gather.getGatherAxis().getZExtValue() != 0)
        return {};
      std::reverse(chain.begin(), chain.end());
      return gather;
    }
    Operation *def = v.getDefiningOp();
    if (!def || def->getNumOperands() != 1 || def->getNumResults() != 1 ||
        !isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             tensor::ExtractSliceOp>(def))
      return {};
    chain.push_back(def);
    v = def->getOperand(0);
  }
}

/// Whether `offset` is `process_linear_index on @grid` times `shard`.
bool isRankTimes(Value offset, FlatSymbolRefAttr grid, int64_t shard) {
  auto mul = offset.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return false;
  for (auto [a, b] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())}) {
    auto index = a.getDefiningOp<shard::ProcessLinearIndexOp>();
    std::optional<int64_t> c = getConstantIntValue(b);
    if (index && index.getGridAttr() == grid && c && *c == shard)
      return true;
  }
  return false;
}

} // namespace

SmallVector<Deferrable> mlir::zero::deferrableParams(func::FuncOp fn) {
  SmallVector<Deferrable> found;
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return found;
  Block &block = fn.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
  if (!ret)
    return found;
  StringRef paramName = ZeroDialect::ParamAttrHelper::getNameStr();
  StringRef shardedName = ZeroDialect::ShardedAttrHelper::getNameStr();
  llvm::StringMap<unsigned> argOf;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (auto name = fn.getArgAttrOfType<StringAttr>(i, paramName))
      if (!fn.getArgAttr(i, shardedName))
        argOf.try_emplace(name.getValue(), i);
  for (unsigned r = 0; r < fn.getNumResults(); ++r) {
    auto name = fn.getResultAttrOfType<StringAttr>(r, paramName);
    if (!name || fn.getResultAttr(r, shardedName) || !argOf.count(name))
      continue;
    Deferrable d{r, fn.getArgument(argOf[name.getValue()]), {}, {}, {}};
    d.gather = gatherChain(ret.getOperand(r), d.arg, d.chain, d.m);
    if (!d.gather)
      continue;
    Value end = d.chain.empty() ? Value(d.gather.getResult())
                                : d.chain.back()->getResult(0);
    if (end.getType() != d.arg.getType())
      continue;
    found.push_back(std::move(d));
  }
  auto firstUse = [&](BlockArgument arg) -> Operation * {
    Operation *first = nullptr;
    for (OpOperand &use : arg.getUses())
      if (Operation *a = inBlock(block, use.getOwner()))
        if (!first || a->isBeforeInBlock(first))
          first = a;
    return first;
  };
  llvm::stable_sort(found, [&](const Deferrable &a, const Deferrable &b) {
    Operation *x = firstUse(a.arg), *y = firstUse(b.arg);
    return x && (!y || x->isBeforeInBlock(y));
  });
  return found;
}

unsigned mlir::zero::deferParamGathers(func::FuncOp fn,
                                       ArrayRef<bool> which) {
  SmallVector<Deferrable> all = deferrableParams(fn), params;
  for (auto [i, d] : llvm::enumerate(all))
    if (i < which.size() && which[i])
      params.push_back(std::move(d));
  if (params.empty())
    return 0;
  Block &block = fn.getBody().front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  StringRef shardedName = ZeroDialect::ShardedAttrHelper::getNameStr();
  MLIRContext *ctx = fn.getContext();
  unsigned moved = 0;
  for (Deferrable &d : params) {
    unsigned r = d.result;
    BlockArgument arg = d.arg;
    shard::AllGatherOp gather = d.gather;
    ArrayRef<Operation *> chain = d.chain;
    bufferization::MaterializeInDestinationOp m = d.m;
    Value shardValue = gather.getInput();
    // The gather and its chain again, detached, from the argument.
    IRMapping map;
    map.map(shardValue, arg);
    Operation *newGather = gather->clone(map);
    SmallVector<Operation *> newChain;
    for (Operation *op : chain)
      newChain.push_back(op->clone(map));
    // The old ones go once the step returns the shard.
    ret->setOperand(r, shardValue);
    if (m && m->use_empty())
      m->erase();
    for (Operation *op : llvm::reverse(chain))
      if (op->use_empty())
        op->erase();
    if (gather->use_empty())
      gather->erase();
    // Before the first use of the whole parameter.
    Operation *first = nullptr;
    for (OpOperand &use : arg.getUses())
      if (Operation *a = inBlock(block, use.getOwner()))
        if (!first || a->isBeforeInBlock(first))
          first = a;
    OpBuilder builder(ctx);
    builder.setInsertionPoint(first ? first : ret.getOperation());
    builder.insert(newGather);
    for (Operation *op : newChain)
      builder.insert(op);
    Value whole =
        newChain.empty() ? newGather->getResult(0) : newChain.back()->getResult(0);
    arg.replaceUsesWithIf(whole, [&](OpOperand &use) {
      return use.getOwner() != newGather;
    });
    arg.setType(shardValue.getType());
    fn.setArgAttr(arg.getArgNumber(), shardedName, UnitAttr::get(ctx));
    fn.setResultAttr(r, shardedName, UnitAttr::get(ctx));
    // This rank's slice of the gathered parameter is the shard.
    Value gathered = newGather->getResult(0);
    SmallVector<Value> views = {gathered};
    for (Operation *user : whole.getUsers())
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(user))
        if (collapse.getType() == gathered.getType() && !newChain.empty() &&
            isa<tensor::ExpandShapeOp>(newChain.back()) &&
            newChain.back()->getOperand(0) == gathered)
          views.push_back(collapse.getResult());
    auto shardType = cast<RankedTensorType>(shardValue.getType());
    for (Value view : views)
      for (Operation *user : llvm::make_early_inc_range(view.getUsers())) {
        auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
        if (!slice || slice.getType() != shardType ||
            slice.getMixedOffsets().size() != 1 ||
            !slice.getOffsets().size() ||
            !isRankTimes(slice.getOffsets()[0],
                         cast<shard::AllGatherOp>(newGather).getGridAttr(),
                         shardType.getDimSize(0)) ||
            !isConstantIntValue(slice.getMixedStrides()[0], 1))
          continue;
        slice.replaceAllUsesWith(arg);
        slice->erase();
      }
    for (Value view : llvm::drop_begin(views))
      if (view.use_empty())
        view.getDefiningOp()->erase();
    ++moved;
  }
  if (moved) {
    SmallVector<Type> results(ret.getOperandTypes());
    fn.setType(FunctionType::get(ctx, block.getArgumentTypes(), results));
  }
  return moved;
}
