//===- BlockMotion.cpp - Moving operations within a block -----------------===//

#include "BlockMotion.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

void zero::forEachUsedValue(Operation *op, function_ref<void(Value)> fn) {
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (inner == op || !op->isAncestor(v.getParentRegion()->getParentOp()))
        fn(v);
  });
}

/// Moves `op` to `where` in `target`'s block (moveOpBefore/After): unlink
/// and insert, which leaves the other ops' order numbers valid. An op of
/// another block is spliced as Operation::moveBefore would.
static void moveOpTo(Operation *op, Operation *target,
                     Block::iterator where) {
  Block *block = target->getBlock();
  if (op == target || where == op->getIterator())
    return;
  if (op->getBlock() != block) {
    block->getOperations().splice(where, op->getBlock()->getOperations(),
                                  op->getIterator());
    return;
  }
  op->remove();
  block->getOperations().insert(where, op);
}

void zero::moveOpBefore(Operation *op, Operation *target) {
  moveOpTo(op, target, target->getIterator());
}

void zero::moveOpAfter(Operation *op, Operation *target) {
  moveOpTo(op, target, std::next(target->getIterator()));
}

bool zero::isCheapToHoist(Operation *op) {
  if (!isPure(op) || op->getNumRegions() || op->getNumResults() == 0)
    return false;
  if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
          tensor::CollapseShapeOp, tensor::FromElementsOp>(op))
    return true;
  return llvm::all_of(op->getResultTypes(),
                      [](Type t) { return t.isIntOrIndexOrFloat(); });
}

void zero::placeEarly(Block &block, Operation *op, Operation *floor) {
  Operation *after = floor;
  auto later = [](Operation *a, Operation *b) {
    return !a ? b : !b ? a : a->isBeforeInBlock(b) ? b : a;
  };
  SmallVector<Value> used;
  forEachUsedValue(op, [&](Value v) { used.push_back(v); });
  for (Value v : used) {
    Operation *def = v.getDefiningOp();
    if (!def || !(def = inBlock(block, def)) || def == op)
      continue;
    if (isCheapToHoist(def) && (!after || after->isBeforeInBlock(def)))
      placeEarly(block, def, nullptr);
    after = later(after, def);
  }
  // Never below where it is: everything it reads is above it.
  if (!after)
    moveOpBefore(op, &block.front());
  else if (after != op->getPrevNode() && after->isBeforeInBlock(op))
    moveOpAfter(op, after);
}
