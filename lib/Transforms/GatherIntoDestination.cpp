//===- GatherIntoDestination.cpp - Started gathers write their final buffer ===//
//
// zero-gather-into-destination: a started all-gather whose result is only
// copied into another buffer (a parameter argument the step updates in
// place) gathers into that buffer instead. One-Shot Bufferize gives the
// start op's pending tensor a fresh allocation, and the
// materialize_in_destination of the updated parameter then copies it: a
// full-size buffer held from the start to the end of the step, and a
// full-size copy. The rewrite is done on buffers, after deallocations are
// placed, where every access of the destination is an op in one block.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROGATHERINTODESTINATIONPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

/// The buffer `v` is a view of: followed through view-like ops.
Value rootBuffer(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// Every op that may access `root` through a view of it or a pointer taken
/// from one (the ops that use the extracted pointer, such as runtime
/// calls, not the extraction). Views themselves access nothing.
void collectAccesses(Value root, SmallVectorImpl<Operation *> &accesses) {
  SmallVector<Value> worklist{root};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == v) {
        llvm::append_range(worklist, user->getResults());
        continue;
      }
      if (isa<memref::ExtractAlignedPointerAsIndexOp,
              memref::ExtractStridedMetadataOp>(user)) {
        // The pointer flows through pure arithmetic to what reads or
        // writes through it.
        SetVector<Operation *> slice;
        getForwardSlice(user, &slice);
        for (Operation *op : slice)
          if (!isPure(op))
            accesses.push_back(op);
        continue;
      }
      accesses.push_back(user);
    }
  }
}

/// Whether `input` is this rank's block of the 1-D contiguous `output`
/// (in == out + rank * count, the runtime's in-place all-gather): a
/// unit-stride subview of `count` elements at offset
/// `process_linear_index * count` of a collapse of (or of) the buffer
/// `output` views.
bool isOwnBlock(Value input, Value root, int64_t count) {
  auto sub = input.getDefiningOp<memref::SubViewOp>();
  if (!sub || sub.getSourceType().getRank() != 1 ||
      !sub.getSourceType().getLayout().isIdentity())
    return false;
  if (sub.getMixedSizes().size() != 1 || sub.getMixedStrides().size() != 1)
    return false;
  std::optional<int64_t> size = getConstantIntValue(sub.getMixedSizes()[0]);
  std::optional<int64_t> stride =
      getConstantIntValue(sub.getMixedStrides()[0]);
  if (size != count || stride != 1)
    return false;
  Value source = sub.getSource();
  if (auto collapse = source.getDefiningOp<memref::CollapseShapeOp>()) {
    if (!collapse.getSrcType().getLayout().isIdentity())
      return false;
    source = collapse.getSrc();
  }
  if (source != root)
    return false;
  auto offset = dyn_cast_if_present<Value>(sub.getMixedOffsets()[0]);
  auto mul = offset ? offset.getDefiningOp<arith::MulIOp>() : nullptr;
  if (!mul)
    return false;
  for (auto [index, factor] : {std::pair(mul.getLhs(), mul.getRhs()),
                               std::pair(mul.getRhs(), mul.getLhs())})
    if (index.getDefiningOp<shard::ProcessLinearIndexOp>() &&
        getConstantIntValue(factor) == count)
      return true;
  return false;
}

/// Gathers `start` into the buffer its result is copied to, if that is
/// safe; true if it did.
bool gatherIntoDestination(zero::AllGatherStartOp start) {
  Value output = start.getOutput();
  auto alloc = output ? output.getDefiningOp<memref::AllocOp>() : nullptr;
  Block *block = start->getBlock();
  if (!alloc || alloc->getBlock() != block)
    return false;
  // The allocation's uses: the start, its wait's keep list, a
  // deallocation, and one copy out of it or of a reshape of it.
  zero::WaitOp wait;
  memref::CopyOp copy;
  memref::DeallocOp dealloc;
  SmallVector<Operation *> reshapes;
  auto takeCopy = [&](Operation *user, Value source) {
    auto c = dyn_cast<memref::CopyOp>(user);
    if (!c || c.getSource() != source || copy)
      return false;
    copy = c;
    return true;
  };
  for (Operation *user : alloc->getUsers()) {
    if (user == start)
      continue;
    if (auto w = dyn_cast<zero::WaitOp>(user);
        w && w.getToken() == start.getToken() && !wait) {
      wait = w;
      continue;
    }
    if (auto d = dyn_cast<memref::DeallocOp>(user); d && !dealloc) {
      dealloc = d;
      continue;
    }
    if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(user) &&
        user->getResult(0).hasOneUse() &&
        takeCopy(*user->getResult(0).getUsers().begin(), user->getResult(0))) {
      reshapes.push_back(user);
      continue;
    }
    if (takeCopy(user, alloc))
      continue;
    return false;
  }
  if (!wait || !copy || wait->getBlock() != block ||
      copy->getBlock() != block || !start->isBeforeInBlock(wait) ||
      !wait->isBeforeInBlock(copy) ||
      (dealloc && (dealloc->getBlock() != block ||
                   !copy->isBeforeInBlock(dealloc))))
    return false;
  // The destination: contiguous, row-major, the same elements, defined
  // before the start.
  Value target = copy.getTarget();
  auto targetType = cast<MemRefType>(target.getType());
  auto outputType = cast<MemRefType>(output.getType());
  if (!targetType.getLayout().isIdentity() || !targetType.hasStaticShape() ||
      outputType != MemRefType::get({targetType.getNumElements()},
                                    targetType.getElementType(),
                                    MemRefLayoutAttrInterface(),
                                    targetType.getMemorySpace()))
    return false;
  if (Operation *def = target.getDefiningOp())
    if (def->getBlock() != block || !def->isBeforeInBlock(start))
      return false;
  if (auto arg = dyn_cast<BlockArgument>(target); arg && arg.getOwner() != block)
    return false;
  // Nothing may access the destination's buffer between the start and the
  // copy (its old value is dead from the start; its new one arrives at
  // the wait), except the gather's own input when that is this rank's
  // block of it, which the runtime gathers in place.
  Value root = rootBuffer(target);
  Value input = start.getInput();
  bool inPlace = rootBuffer(input) == root;
  if (inPlace &&
      !isOwnBlock(input, root,
                  cast<MemRefType>(input.getType()).getNumElements()))
    return false;
  // In place, the rank's block must sit at the same offset of the
  // destination as of its buffer: the destination is the whole buffer.
  if (inPlace && target != root) {
    Operation *reshape = target.getDefiningOp();
    if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(reshape) ||
        reshape->getOperand(0) != root)
      return false;
  }
  SmallVector<Operation *> accesses;
  collectAccesses(root, accesses);
  for (Operation *access : accesses) {
    if (access == copy.getOperation() || access == wait.getOperation() ||
        (inPlace && access == start.getOperation()))
      continue;
    Operation *at = block->findAncestorOpInBlock(*access);
    if (!at)
      return false;
    if (at == start.getOperation() ||
        (!at->isBeforeInBlock(start) && !copy->isBeforeInBlock(at)))
      return false;
  }
  // Gather into a 1-D view of the destination.
  OpBuilder b(start);
  Value into = target;
  if (targetType.getRank() != 1) {
    ReassociationIndices all;
    for (int64_t d = 0; d < targetType.getRank(); ++d)
      all.push_back(d);
    into = memref::CollapseShapeOp::create(b, start.getLoc(), target,
                                           ArrayRef<ReassociationIndices>{all});
  }
  start.getOutputMutable().assign(into);
  for (OpOperand &keep : wait.getKeepMutable())
    if (keep.get() == output)
      keep.set(into);
  copy->erase();
  for (Operation *reshape : reshapes)
    reshape->erase();
  if (dealloc)
    dealloc->erase();
  alloc->erase();
  return true;
}

struct ZeroGatherIntoDestinationPass
    : public zero::impl::ZeroGatherIntoDestinationPassBase<
          ZeroGatherIntoDestinationPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<zero::AllGatherStartOp> starts;
    getOperation().walk([&](zero::AllGatherStartOp start) {
      if (!start.hasTensorSemantics())
        starts.push_back(start);
    });
    for (zero::AllGatherStartOp start : starts)
      gatherIntoDestination(start);
  }
};

} // namespace
