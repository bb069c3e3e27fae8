//===- CoalesceScalars.cpp - Scalar all-reduces as one vector -------------===//

#include "BlockMotion.h"

#include "zero/Analysis/Collectives.h"
#include "zero/Analysis/CommTimeline.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::zero;

namespace {

/// A scalar (rank-0 f32, f64 or bf16 tensor) sum all-reduce that may join a
/// coalesced one.
shard::AllReduceOp scalarSum(Operation *op) {
  auto reduce = dyn_cast<shard::AllReduceOp>(op);
  if (!reduce || reduce.getReduction() != shard::ReductionKind::Sum)
    return {};
  auto t = dyn_cast<RankedTensorType>(reduce.getInput().getType());
  if (!t || t.getRank() != 0 || t != reduce.getResult().getType() ||
      !isCollectiveElementType(t.getElementType()))
    return {};
  return reduce;
}

bool isCollective(Operation *op) {
  return isa<shard::AllGatherOp, shard::ReduceScatterOp, shard::AllReduceOp,
             shard::AllToAllOp, shard::BroadcastOp, shard::GatherOp,
             shard::RecvOp, shard::ReduceOp, shard::ScatterOp, shard::SendOp,
             shard::ShiftOp, AllGatherStartOp, ReduceScatterStartOp,
             AllReduceStartOp, WaitOp>(op);
}

} // namespace

unsigned mlir::zero::coalesceScalarAllReduces(Block &block) {
  struct Run {
    SmallVector<shard::AllReduceOp> members;
    SmallVector<Operation *> dependent;
  };
  SmallVector<Run> runs;
  Run run;
  llvm::DenseSet<Value> tainted;
  auto usesTainted = [&](Operation *op) {
    bool uses = false;
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        uses |= tainted.contains(v);
    });
    return uses;
  };
  auto close = [&] {
    if (run.members.size() >= 2)
      runs.push_back(std::move(run));
    run = Run();
    tainted.clear();
  };
  for (Operation &op : block) {
    if (shard::AllReduceOp reduce = scalarSum(&op)) {
      shard::AllReduceOp first =
          run.members.empty() ? reduce : run.members.front();
      if (tainted.contains(reduce.getInput()) ||
          first.getGridAttr() != reduce.getGridAttr() ||
          first.getGridAxesAttr() != reduce.getGridAxesAttr() ||
          first.getInput().getType() != reduce.getInput().getType())
        close();
      run.members.push_back(reduce);
      tainted.insert(reduce.getResult());
      continue;
    }
    if (run.members.empty() || !usesTainted(&op))
      continue;
    if (isCollective(&op) || op.hasTrait<OpTrait::IsTerminator>() ||
        !isMemoryEffectFree(&op)) {
      close();
      continue;
    }
    run.dependent.push_back(&op);
    for (Value v : op.getResults())
      tainted.insert(v);
  }
  close();

  unsigned merged = 0;
  for (Run &r : runs) {
    shard::AllReduceOp last = r.members.back();
    Location loc = last.getLoc();
    OpBuilder b(last->getContext());
    b.setInsertionPointAfter(last);
    auto scalar = cast<RankedTensorType>(last.getInput().getType());
    auto vector = RankedTensorType::get(
        {static_cast<int64_t>(r.members.size())}, scalar.getElementType());
    SmallVector<Value> elements;
    for (shard::AllReduceOp m : r.members)
      elements.push_back(
          tensor::ExtractOp::create(b, m.getLoc(), m.getInput()));
    Value packed = tensor::FromElementsOp::create(b, loc, vector, elements);
    Operation *combined = b.clone(*last);
    combined->setOperand(0, packed);
    combined->getResult(0).setType(vector);
    for (auto [i, m] : llvm::enumerate(r.members)) {
      Value index = arith::ConstantIndexOp::create(b, m.getLoc(), i);
      Value e = tensor::ExtractOp::create(b, m.getLoc(), combined->getResult(0),
                                          index);
      Value t = tensor::FromElementsOp::create(b, m.getLoc(), scalar, e);
      m.getResult().replaceAllUsesWith(t);
    }
    Operation *after = b.getInsertionPoint() == last->getBlock()->end()
                           ? nullptr
                           : &*b.getInsertionPoint();
    for (Operation *d : r.dependent)
      if (d->isBeforeInBlock(last)) {
        if (after)
          zero::moveOpBefore(d, after);
        else
          d->moveBefore(last->getBlock(), last->getBlock()->end());
      }
    for (shard::AllReduceOp m : r.members)
      m->erase();
    merged += r.members.size();
  }
  return merged;
}
