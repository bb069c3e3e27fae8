//===- BlockMotion.h - Moving operations within a block ---------*- C++ -*-===//
//
// What zero-schedule and zero-offload share to move operations of a step's
// block without changing what they compute: which values an operation
// reads, which ones are cheap enough to move along, and moving an operation
// up to where its inputs exist.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_TRANSFORMS_BLOCKMOTION_H
#define ZERO_LIB_TRANSFORMS_BLOCKMOTION_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::zero {

/// The ancestor of `op` in `block`, or null.
inline Operation *inBlock(Block &block, Operation *op) {
  return block.findAncestorOpInBlock(*op);
}

/// Calls `fn` on every value `op` reads: its operands, and the values its
/// regions use from above.
void forEachUsedValue(Operation *op, function_ref<void(Value)> fn);

/// A cheap op that may move up to where its operands exist: a view of a
/// tensor, or one that computes only scalars and indices (an optimizer's
/// bias corrections, a shard's offset).
bool isCheapToHoist(Operation *op);

/// Moves `op` right before `target`, an op of the same block, as
/// Operation::moveBefore does, but keeping the block's operation order
/// valid. moveBefore splices, and a splice invalidates the order of the
/// whole block, so the next isBeforeInBlock renumbers every op of it: a
/// pass that interleaves moves with order queries then costs O(ops x
/// moves), quadratic in the depth of the model. Unlinking and inserting
/// invalidates only the moved op's number, which the next query fits in
/// between its neighbours' (renumbering the block only when they leave no
/// room).
void moveOpBefore(Operation *op, Operation *target);
/// The same, right after `target`.
void moveOpAfter(Operation *op, Operation *target);

/// Moves `op` (of `block`) up to right after the last of `floor` and the
/// ops that define what it reads, first moving up those of them that are
/// cheap to hoist (isCheapToHoist) in the same way. Never moves it down.
void placeEarly(Block &block, Operation *op, Operation *floor);

} // namespace mlir::zero

#endif // ZERO_LIB_TRANSFORMS_BLOCKMOTION_H
