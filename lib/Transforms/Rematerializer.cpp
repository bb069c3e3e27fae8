//===- Rematerializer.cpp - What recomputing a value takes ----------------===//
//
// The helpers of zero-remat's analysis and per-block checkpointing
// (Rematerializer.h).
//
//===----------------------------------------------------------------------===//

#include "Rematerializer.h"

#include "zero/Analysis/FlopCount.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::zero;

namespace mlir::zero::remat {

/// Bytes of a statically shaped tensor of numbers; 0 for anything else
/// (scalars and indices are free to keep).
int64_t bytesOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() ||
      !type.getElementType().isIntOrIndexOrFloat())
    return 0;
  Type element = type.getElementType();
  int64_t bytes = element.isIndex()
                      ? 8
                      : llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
  for (int64_t dim : type.getShape()) {
    std::optional<int64_t> product = llvm::checkedMul(bytes, dim);
    if (!product)
      return std::numeric_limits<int64_t>::max() / 4;
    bytes = *product;
  }
  return bytes;
}

/// A view of its first operand's buffer once bufferized.
bool isView(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp,
             tensor::ExtractSliceOp, tensor::ReshapeOp>(op);
}

/// An op whose clone computes the same values: no effects, not a
/// collective (which every rank must run the same number of times), not a
/// call.
bool isRecomputable(Operation *op) {
  if (op->getNumResults() == 0 || !isMemoryEffectFree(op) ||
      isa<func::CallOp>(op))
    return false;
  Dialect *dialect = op->getDialect();
  return dialect && !isa<shard::ShardDialect, ZeroDialect>(dialect);
}

/// FLOPs of one run of `op` by FlopCount.h's rule (0 where it cannot
/// count them).
int64_t flopsOf(Operation *op) {
  if (isa<linalg::LinalgOp>(op))
    return linalgFlops(op).value_or(0);
  return isFloatingPointOp(op) ? 1 : 0;
}

namespace {

/// The block a parameter belongs to: its name up to the first dotted
/// component with a digit ("h0", "h.3", "transformer.h.3"); empty when no
/// component has one (wte, ln_f.weight).
std::string blockOf(StringRef name) {
  SmallVector<StringRef> parts;
  name.split(parts, '.');
  std::string prefix;
  for (StringRef part : parts) {
    if (!prefix.empty())
      prefix += '.';
    prefix += part.str();
    if (llvm::any_of(part, llvm::isDigit))
      return prefix;
  }
  return "";
}

} // namespace

/// Per-block checkpointing: clones each block's forward ops right before
/// the backward pass first reads one of their values. Returns the number
/// of blocks recomputed; adds the clones' FLOPs to `flops` and their
/// number to `cloned`.
unsigned checkpointBlocks(const TrainingStep &step, int64_t &flops,
                          unsigned &cloned) {
  func::FuncOp fb = step.forwardBackward;
  Block &block = fb.getBody().front();
  Value loss = block.getTerminator()->getOperand(step.lossResult);
  Operation *lossOp = loss.getDefiningOp();
  if (!lossOp || !(lossOp = inBlock(block, lossOp)))
    return 0;
  // The forward pass: the ops the loss depends on; the backward pass reads
  // a forward value in any other op.
  llvm::SetVector<Operation *> forward;
  forward.insert(lossOp);
  for (unsigned i = 0; i < forward.size(); ++i)
    forEachUsedValue(forward[i], [&](Value v) {
      if (Operation *def = v.getDefiningOp())
        if ((def = inBlock(block, def)))
          forward.insert(def);
    });
  // Parameter groups, numbered in the order the forward pass first reads
  // them; a forward op's region is the last group it depends on.
  llvm::DenseMap<unsigned, const ParamInfo *> paramOfArg;
  for (const ParamInfo &param : step.params)
    paramOfArg[param.fbArg] = &param;
  llvm::StringMap<unsigned> groupIds;
  SmallVector<bool> isBlock;
  llvm::DenseMap<Operation *, int> region;
  for (Operation &op : block) {
    if (!forward.contains(&op))
      continue;
    int r = -1;
    forEachUsedValue(&op, [&](Value v) {
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        const ParamInfo *param = arg.getOwner() == &block
                                     ? paramOfArg.lookup(arg.getArgNumber())
                                     : nullptr;
        if (!param)
          return;
        std::string name = blockOf(param->name);
        auto [it, inserted] = groupIds.try_emplace(
            name.empty() ? StringRef(param->name) : StringRef(name),
            isBlock.size());
        if (inserted)
          isBlock.push_back(!name.empty());
        r = std::max(r, static_cast<int>(it->second));
        return;
      }
      if (Operation *def = v.getDefiningOp())
        if (auto it = region.find(inBlock(block, def)); it != region.end())
          r = std::max(r, it->second);
    });
    region[&op] = r;
  }
  unsigned blocks = 0;
  for (unsigned g = 0; g < isBlock.size(); ++g) {
    if (!isBlock[g])
      continue;
    // The block's ops, and what they read that depends on no parameter
    // (the tensor.empty a result is computed into, a constant mask): that
    // is recomputed too, or its buffer would live until the clones run.
    llvm::SetVector<Operation *> members;
    for (Operation &op : block)
      if (forward.contains(&op) && region.lookup(&op) == static_cast<int>(g))
        members.insert(&op);
    for (unsigned i = 0; i < members.size(); ++i)
      forEachUsedValue(members[i], [&](Value v) {
        Operation *def = v.getDefiningOp();
        if (def && (def = inBlock(block, def)) && region.lookup(def) == -1 &&
            forward.contains(def) && isRecomputable(def))
          members.insert(def);
      });
    SmallVector<Operation *> ops = members.takeVector();
    llvm::sort(
        ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    if (ops.empty() || !llvm::all_of(ops, isRecomputable))
      continue;
    // The block's first read by the backward pass; one before the
    // block's own last op would gain nothing, and the block stays.
    auto backward = [&](Operation *op) {
      return op && !forward.contains(op) && op->getBlock() == &block;
    };
    Operation *first = nullptr;
    for (Operation *op : ops)
      for (Operation *user : op->getUsers())
        if (Operation *u = inBlock(block, user);
            backward(u) && (!first || u->isBeforeInBlock(first)))
          first = u;
    if (!first || first->isBeforeInBlock(ops.back()))
      continue;
    OpBuilder b(first);
    IRMapping map;
    llvm::SmallPtrSet<Operation *, 32> clones;
    for (Operation *op : ops) {
      clones.insert(b.clone(*op, map));
      flops += flopsOf(op);
    }
    cloned += ops.size();
    for (Operation *op : ops)
      for (Value v : op->getResults())
        v.replaceUsesWithIf(map.lookup(v), [&](OpOperand &use) {
          Operation *u = inBlock(block, use.getOwner());
          return backward(u) && !clones.contains(u);
        });
    ++blocks;
  }
  return blocks;
}

} // namespace mlir::zero::remat
