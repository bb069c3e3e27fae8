//===- Scheduler.h - zero-schedule's placement of one block ----*- C++ -*-===//
//
// The blocking collectives of a block become zero.*_start / zero.wait
// pairs, placed by the cost model and timeline of CommTimeline.h
// (Passes.td has the rules). Internal to zero-schedule.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_TRANSFORMS_SCHEDULER_H
#define ZERO_LIB_TRANSFORMS_SCHEDULER_H

#include "BlockMotion.h"

#include "zero/Analysis/CommTimeline.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <vector>

namespace mlir::zero {

class Scheduler {
public:
  using Kind = CollectiveKind;
  using Collective = StartedCollective;
  using Event = TimelineEvent;

  Scheduler(Block &block, const CostModel &model)
      : block(block), model(model), timeline(block, model) {}

  /// Replaces the blocking collectives of the block; returns how many.
  unsigned convert();
  /// Pure consumers of a reduction's result move down to just before the
  /// first op that needs them, and its wait with them, so that the wait
  /// can sit anywhere in between.
  void sinkReductionConsumers();
  /// Reductions start right after their input.
  void startReductionsEarly();
  /// All-gathers move back until the timeline has them done in time.
  void prefetch();
  /// The op a gather's start must stay below (null: none in the block).
  Operation *startLimit(Collective &c);
  /// Optimizer in the backward pass: a reduction whose result an update
  /// gathers again (stages 1-2: the updated parameter) waits right after
  /// its start, and the update and the gather's start follow it as early
  /// as their other inputs allow; placeReductionWaits then moves the wait,
  /// the update and the start down together. Returns how many reductions.
  unsigned hoistUpdates();
  /// Reductions wait where they are predicted done, and before the start
  /// of the reduction `depth` after them.
  void placeReductionWaits(unsigned depth);

  /// The starts and waits of the block, in program order.
  SmallVector<Operation *> startsAndWaits();
  /// Takes collectives out of the set in flight at a memory peak that comes
  /// after the first `k` of startsAndWaits() (at the k-th one, a start
  /// whose scratch makes the peak, if `atEvent`), until their full-size
  /// buffers add up to `excess` bytes: latest wait first, an all-gather
  /// starts after the peak, a reduction completes before it. Starts only
  /// move later and waits earlier, over at least one other start or wait.
  /// Returns how many moved.
  unsigned relieve(unsigned k, bool atEvent, double excess);
  /// Every all-gather starts right before its wait; returns how many moved.
  unsigned dropPrefetches();

  /// Simulates the block; fills `events` if given. Returns the step time.
  double simulate(std::vector<Event> *events = nullptr);
  /// The step time if every collective blocked where it waits.
  double blockingTime();

private:
  /// An op that moves down with a reduction's wait when it depends on it:
  /// a pure op, or the start of a gather.
  bool isDraggable(Operation *op) {
    if (Collective *c = byStart.lookup(op))
      return c->kind == Kind::AllGather;
    return isPure(op) && !op->hasTrait<OpTrait::IsTerminator>() &&
           !byWait.count(op);
  }
  /// The first op after `c`'s wait that depends on its result and cannot
  /// move down with it (the terminator at the latest).
  Operation *dragLimit(Collective &c);
  /// The ops of the block that read `c`'s wait's result, or a result of an
  /// op already in `deps`, found through the values' users (not by walking
  /// the block: the scans from every wait made the pass quadratic in
  /// depth). The closure goes through the ops `passes` accepts (all if
  /// null); the other readers go to `stops`.
  void dependentsOf(Collective &c, llvm::SmallPtrSetImpl<Operation *> &deps,
                    llvm::SmallPtrSetImpl<Operation *> &stops,
                    function_ref<bool(Operation *)> passes = nullptr);
  /// `ops` in block order.
  static SmallVector<Operation *>
  inOrder(const llvm::SmallPtrSetImpl<Operation *> &ops,
          Operation *before = nullptr) {
    SmallVector<Operation *> sorted;
    for (Operation *op : ops)
      if (!before || op->isBeforeInBlock(before))
        sorted.push_back(op);
    llvm::sort(sorted,
               [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    return sorted;
  }
  /// The first of `ops` in the block (null if empty).
  static Operation *firstOf(const llvm::SmallPtrSetImpl<Operation *> &ops) {
    Operation *first = nullptr;
    for (Operation *op : ops)
      if (!first || op->isBeforeInBlock(first))
        first = op;
    return first;
  }
  /// Moves `c`'s wait right before `target` (at most dragLimit(c)), and
  /// the ops in between that depend on it with it, in their order.
  void moveWaitBefore(Collective &c, Operation *target);
  void placeEarly(Operation *op, Operation *floor) {
    zero::placeEarly(block, op, floor);
  }

  double cost(Operation *op) { return timeline.cost(op); }

  Block &block;
  const CostModel &model;
  std::vector<Collective> collectives;
  llvm::DenseMap<Operation *, Collective *> byStart, byWait;
  CommTimeline timeline;
};

} // namespace mlir::zero

#endif // ZERO_LIB_TRANSFORMS_SCHEDULER_H
