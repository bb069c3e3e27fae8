//===- Scheduler.cpp - zero-schedule's placement of one block -------------===//

#include "Scheduler.h"

#include "zero/Analysis/Collectives.h"
#include "zero/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::zero;

unsigned Scheduler::convert() {
  SmallVector<Operation *> ops;
  for (Operation &op : block)
    if (isa<shard::AllGatherOp, shard::ReduceScatterOp, shard::AllReduceOp>(op))
      ops.push_back(&op);
  MLIRContext *ctx = block.getParentOp()->getContext();
  Type token = TokenType::get(ctx);
  collectives.reserve(ops.size());
  for (Operation *op : ops) {
    Value input = op->getOperand(0), result = op->getResult(0);
    auto in = cast<RankedTensorType>(input.getType());
    auto out = dyn_cast<RankedTensorType>(result.getType());
    if (!out || !in.hasStaticShape() || !out.hasStaticShape() ||
        !isCollectiveElementType(in.getElementType()))
      continue;
    double b = double(in.getElementType().getIntOrFloatBitWidth() / 8);
    int64_t n = 0;
    Kind kind;
    double bytes;
    if (auto gather = dyn_cast<shard::AllGatherOp>(op)) {
      if (in.getRank() != 1 || gather.getGatherAxis().getZExtValue() != 0)
        continue;
      n = gridSize(op, gather.getGridAttr());
      kind = Kind::AllGather;
      bytes = bytesSent(Kind::AllGather, in.getNumElements(), n, b);
    } else if (auto scatter = dyn_cast<shard::ReduceScatterOp>(op)) {
      if (in.getRank() != 1 || scatter.getScatterAxis().getZExtValue() != 0 ||
          scatter.getReduction() != shard::ReductionKind::Sum)
        continue;
      n = gridSize(op, scatter.getGridAttr());
      kind = Kind::ReduceScatter;
      bytes = bytesSent(Kind::ReduceScatter, out.getNumElements(), n, b);
    } else {
      auto reduce = cast<shard::AllReduceOp>(op);
      if (reduce.getReduction() != shard::ReductionKind::Sum || in != out)
        continue;
      n = gridSize(op, reduce.getGridAttr());
      kind = Kind::AllReduce;
      bytes = n > 0 ? bytesSent(Kind::AllReduce, in.getNumElements(), n, b) : 0;
    }
    if (n <= 0)
      continue;
    OpBuilder builder(op);
    // A scalar (the loss) is started as a vector of one element (the
    // started entry points take buffers); each is summed in rank order, so
    // the result is the same.
    bool scalar = in.getRank() == 0;
    if (scalar) {
      in = RankedTensorType::get({1}, in.getElementType());
      out = in;
      input = tensor::ExpandShapeOp::create(builder, op->getLoc(), in, input,
                                            ArrayRef<ReassociationIndices>{});
    }
    SmallVector<NamedAttribute> attrs;
    for (NamedAttribute attr : op->getDiscardableAttrs())
      attrs.push_back(attr);
    OperationState state(
        op->getLoc(),
        kind == Kind::AllGather       ? AllGatherStartOp::getOperationName()
        : kind == Kind::ReduceScatter ? ReduceScatterStartOp::getOperationName()
                                      : AllReduceStartOp::getOperationName());
    state.addOperands(input);
    state.addTypes({out, token});
    state.addAttributes(attrs);
    Operation *start = builder.create(state);
    // The all-reduce may work in place; the others read their input until
    // the wait.
    SmallVector<Value> keep;
    if (kind != Kind::AllReduce)
      keep.push_back(input);
    auto wait = WaitOp::create(builder, op->getLoc(), out, start->getResult(1),
                               start->getResult(0), keep);
    Value waited = wait.getResult();
    if (scalar)
      waited = tensor::CollapseShapeOp::create(
          builder, op->getLoc(), result.getType(), waited,
          ArrayRef<ReassociationIndices>{});
    result.replaceAllUsesWith(waited);
    op->erase();
    collectives.push_back(
        {start, wait, kind, bytes, model.link(bytes), scalar});
  }
  for (Collective &c : collectives) {
    byStart[c.start] = &c;
    byWait[c.wait] = &c;
    // The wait goes right before the first use.
    Operation *first = nullptr;
    for (Operation *user : c.wait.getResult().getUsers())
      if (Operation *a = inBlock(block, user))
        if (!first || a->isBeforeInBlock(first))
          first = a;
    if (first)
      zero::moveOpBefore(c.wait, first);
    else
      zero::moveOpBefore(c.wait, block.getTerminator());
  }
  return collectives.size();
}

void Scheduler::sinkReductionConsumers() {
  for (Collective &c : collectives) {
    if (c.kind == Kind::AllGather)
      continue;
    // From the wait down, the readers up to the first that cannot move
    // (the barrier) move in front of it (dragLimit's reasoning).
    llvm::SmallPtrSet<Operation *, 16> deps, stops;
    dependentsOf(c, deps, stops, [&](Operation *op) {
      return !op->hasTrait<OpTrait::IsTerminator>() && isPure(op) &&
             !byStart.count(op) && !byWait.count(op);
    });
    Operation *barrier = firstOf(stops);
    if (!barrier)
      continue;
    SmallVector<Operation *> slice = inOrder(deps, barrier);
    if (slice.empty())
      continue;
    for (Operation *op : slice)
      zero::moveOpBefore(op, barrier);
    zero::moveOpBefore(c.wait, slice.front());
  }
}

void Scheduler::startReductionsEarly() {
  for (Collective &c : collectives) {
    if (c.kind == Kind::AllGather)
      continue;
    Value input = c.start->getOperand(0);
    // Cheap producers of the input (a scalar's reshape, the loss's
    // tensor.from_elements) go first, right after what they read.
    if (Operation *def = input.getDefiningOp())
      if (Operation *a = inBlock(block, def); a && isCheapToHoist(a))
        placeEarly(a, nullptr);
    if (Operation *def = input.getDefiningOp()) {
      if (Operation *a = inBlock(block, def))
        zero::moveOpAfter(c.start, a);
    } else {
      zero::moveOpBefore(c.start, &block.front());
    }
  }
}

void Scheduler::dependentsOf(Collective &c,
                             llvm::SmallPtrSetImpl<Operation *> &deps,
                             llvm::SmallPtrSetImpl<Operation *> &stops,
                             function_ref<bool(Operation *)> passes) {
  SmallVector<Value> work = {c.wait.getResult()};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      Operation *op = inBlock(block, user);
      if (!op || op == c.wait.getOperation() || deps.contains(op))
        continue;
      if (passes && !passes(op)) {
        stops.insert(op);
        continue;
      }
      deps.insert(op);
      work.append(op->result_begin(), op->result_end());
    }
  }
}

// Both scan in effect from the wait down, in block order: a reader that
// cannot move ends the scan, and what comes before it moves along. Every
// op of the closure lies after the wait, each after what it reads, so the
// first stop is where the scan would end, and the closure's ops before it
// are the ones it would have collected.
Operation *Scheduler::dragLimit(Collective &c) {
  llvm::SmallPtrSet<Operation *, 16> deps, stops;
  dependentsOf(c, deps, stops, [&](Operation *op) { return isDraggable(op); });
  Operation *first = firstOf(stops);
  return first ? first : block.getTerminator();
}

void Scheduler::moveWaitBefore(Collective &c, Operation *target) {
  if (target == c.wait.getOperation())
    return;
  if (target->isBeforeInBlock(c.wait)) {
    zero::moveOpBefore(c.wait, target);
    return;
  }
  llvm::SmallPtrSet<Operation *, 16> deps, stops;
  dependentsOf(c, deps, stops, [&](Operation *op) { return isDraggable(op); });
  if (Operation *stop = firstOf(stops))
    if (stop->isBeforeInBlock(target))
      target = stop;
  SmallVector<Operation *> drag = inOrder(deps, target);
  for (Operation *op : drag)
    zero::moveOpBefore(op, target);
  zero::moveOpBefore(c.wait, drag.empty() ? target : drag.front());
}

unsigned Scheduler::hoistUpdates() {
  unsigned hoisted = 0;
  for (Collective &c : collectives) {
    if (c.kind == Kind::AllGather || c.scalar)
      continue;
    // The update: the pure ops that depend on the reduced gradient, and
    // the gathers of what they compute.
    llvm::SmallPtrSet<Operation *, 16> deps, others;
    dependentsOf(c, deps, others,
                 [&](Operation *op) { return isDraggable(op); });
    SmallVector<Operation *> update = inOrder(deps);
    bool gathers = llvm::any_of(
        update, [&](Operation *op) { return byStart.count(op) != 0; });
    if (!gathers)
      continue;
    zero::moveOpAfter(c.wait, c.start);
    for (Operation *op : update)
      placeEarly(op, c.wait);
    ++hoisted;
  }
  return hoisted;
}

double Scheduler::simulate(std::vector<Event> *events) {
  return timeline.simulate([&](Operation *op) { return byStart.lookup(op); },
                           [&](Operation *op) { return byWait.lookup(op); },
                           events);
}

double Scheduler::blockingTime() {
  return timeline.blockingTime(
      [&](Operation *op) { return byStart.lookup(op); },
      [&](Operation *op) { return byWait.lookup(op); });
}

Operation *Scheduler::startLimit(Collective &c) {
  // Never above the input's definition, nor above the wait of an earlier
  // gather of the same input: that gather's buffer is released after its
  // last use so that this one can gather again (zero-partition's
  // regather); starting before it would hold both.
  Operation *limit = nullptr;
  if (Operation *def = c.start->getOperand(0).getDefiningOp())
    limit = inBlock(block, def);
  for (Collective &other : collectives)
    if (&other != &c && other.kind == Kind::AllGather &&
        sameSource(other.start->getOperand(0), c.start->getOperand(0)) &&
        other.wait->isBeforeInBlock(c.start) &&
        (!limit || limit->isBeforeInBlock(other.wait)))
      limit = other.wait;
  return limit;
}

void Scheduler::prefetch() {
  // Each round moves every all-gather that stalls back over as much
  // compute as it stalled; moving one changes the link's queue for the
  // others, hence rounds.
  for (int round = 0; round < 32; ++round) {
    simulate();
    bool moved = false;
    for (Collective &c : collectives) {
      if (c.kind != Kind::AllGather)
        continue;
      double stall = timeline.stallOf(c.wait);
      if (stall <= 1e-12)
        continue;
      Operation *limit = startLimit(c);
      double covered = 0;
      Operation *target = nullptr;
      for (Operation *cur = c.start->getPrevNode(); cur && cur != limit;
           cur = cur->getPrevNode()) {
        if (covered >= stall)
          break;
        covered += cost(cur);
        target = cur;
      }
      if (target) {
        zero::moveOpBefore(c.start, target);
        moved = true;
      }
    }
    if (!moved)
      break;
  }
  // The link runs gathers in the order they start: one needed earlier
  // starts no later than one needed after it, where its input allows
  // (an argument, or a value defined before), and never above the wait of
  // an earlier gather of the same input (the regather rule above).
  SmallVector<Collective *> gathers;
  for (Collective &c : collectives)
    if (c.kind == Kind::AllGather)
      gathers.push_back(&c);
  llvm::sort(gathers, [](Collective *a, Collective *b) {
    return a->wait->isBeforeInBlock(b->wait);
  });
  Operation *minStart = nullptr;
  for (Collective *c : llvm::reverse(gathers)) {
    if (minStart && minStart->isBeforeInBlock(c->start)) {
      Operation *limit = startLimit(*c);
      if (!limit || limit->isBeforeInBlock(minStart))
        zero::moveOpBefore(c->start, minStart);
    }
    if (!minStart || c->start->isBeforeInBlock(minStart))
      minStart = c->start;
  }
  // Gathers that start together go on the link in the order they are
  // needed (earliest wait first): starts next to each other are
  // independent, so any order is valid. A bucket's concatenation of
  // arguments goes first, out of the way.
  for (Collective &c : collectives)
    if (auto cat = c.start->getOperand(0).getDefiningOp<tensor::ConcatOp>())
      if (cat->getBlock() == &block &&
          llvm::all_of(cat->getOperands(), [&](Value v) {
            return !v.getDefiningOp() ||
                   !inBlock(block, v.getDefiningOp());
          }))
        zero::moveOpBefore(cat, &block.front());
  // A run goes on over ops that take no time (constants, a bucket's
  // concatenation): the starts only move down, to the end of the run, so
  // what they read stays above them.
  SmallVector<SmallVector<Operation *>> runs(1);
  for (Operation &op : block) {
    Collective *c = byStart.lookup(&op);
    if (c && c->kind == Kind::AllGather)
      runs.back().push_back(&op);
    else if (!runs.back().empty() &&
             (c || byWait.count(&op) || cost(&op) > 0 ||
              blockingLinkSeconds(&op, model) > 0 ||
              op.hasTrait<OpTrait::IsTerminator>()))
      runs.emplace_back();
  }
  for (SmallVector<Operation *> &run : runs) {
    if (run.size() < 2)
      continue;
    Operation *anchor = run.back()->getNextNode();
    llvm::stable_sort(run, [&](Operation *a, Operation *b) {
      return byStart.lookup(a)->wait->isBeforeInBlock(byStart.lookup(b)->wait);
    });
    for (Operation *op : run)
      zero::moveOpBefore(op, anchor);
  }
}

void Scheduler::placeReductionWaits(unsigned depth) {
  simulate();
  // Scalars hold no gradient: they do not count towards the depth.
  SmallVector<Collective *> reductions;
  for (Collective &c : collectives)
    if (c.kind != Kind::AllGather && !c.scalar)
      reductions.push_back(&c);
  llvm::sort(reductions, [](Collective *a, Collective *b) {
    return a->start->isBeforeInBlock(b->start);
  });
  // Where each wait may go at the latest: before its first use, and
  // before the start that would hold more than `depth` times the largest
  // reduction's full-size input in flight.
  double largest = 0;
  for (Collective *c : reductions)
    largest = std::max(largest,
                       tensorBytes(c->start->getOperand(0).getType()));
  SmallVector<Operation *> latest;
  for (auto [i, c] : llvm::enumerate(reductions)) {
    // Before the first use that cannot move down with it (an update and
    // its gather's start move with it).
    Operation *bound = dragLimit(*c);
    // At most `depth` of the largest gradients' bytes in flight: the
    // first later start that would go over it.
    double held = 0;
    for (size_t j = i; j < reductions.size(); ++j) {
      held += tensorBytes(reductions[j]->start->getOperand(0).getType());
      if (held > double(depth) * largest) {
        Operation *limit = reductions[j]->start;
        if (j > i && limit->isBeforeInBlock(bound))
          bound = limit;
        break;
      }
    }
    latest.push_back(bound);
  }
  for (auto [i, c] : llvm::enumerate(reductions)) {
    double ready = timeline.doneOf(c->start) + 0.5 * c->seconds;
    Operation *cur = c->start->getNextNode();
    while (cur != latest[i] && timeline.beginOf(cur) < ready)
      cur = cur->getNextNode();
    moveWaitBefore(*c, cur);
  }
  // The others' moves change when each completes: a wait that stalls
  // moves down over as much compute as it stalled (not counting what
  // moves with it), up to its latest place.
  for (int round = 0; round < 32; ++round) {
    simulate();
    bool moved = false;
    for (auto [i, c] : llvm::enumerate(reductions)) {
      double stall = timeline.stallOf(c->wait);
      if (stall <= 1e-12)
        continue;
      double covered = 0;
      Operation *target = nullptr;
      llvm::SmallPtrSet<Operation *, 16> deps, none;
      dependentsOf(*c, deps, none);
      for (Operation *cur = c->wait->getNextNode(); cur && cur != latest[i];
           cur = cur->getNextNode()) {
        if (covered >= stall)
          break;
        if (!deps.contains(cur))
          covered += cost(cur);
        target = cur->getNextNode();
      }
      if (target && target != c->wait->getNextNode()) {
        moveWaitBefore(*c, target);
        moved = true;
      }
    }
    if (!moved)
      break;
  }
}

SmallVector<Operation *> Scheduler::startsAndWaits() {
  SmallVector<Operation *> ops;
  for (Operation &op : block)
    if (byStart.count(&op) || byWait.count(&op))
      ops.push_back(&op);
  return ops;
}

unsigned Scheduler::relieve(unsigned k, bool atEvent, double excess) {
  SmallVector<Operation *> events = startsAndWaits();
  llvm::SmallPtrSet<Operation *, 16> before(events.begin(), events.begin() + k);
  SmallVector<Collective *> inFlight;
  for (Collective &c : collectives)
    if (before.contains(c.start) && !before.contains(c.wait))
      inFlight.push_back(&c);
  llvm::sort(inFlight, [](Collective *a, Collective *b) {
    return b->wait->isBeforeInBlock(a->wait);
  });
  unsigned moved = 0;
  double relieved = 0;
  for (Collective *c : inFlight) {
    if (relieved >= excess)
      break;
    if (c->kind == Kind::AllGather) {
      // After the peak: after the first start or wait that follows it
      // (which may be the one whose result buffer the peak allocates), or
      // at the latest right before its own wait. Other gathers' starts
      // are passed over: behind one, a start holds its buffer over the
      // same ops as before, and two neighbouring starts would only swap
      // places from one round to the next.
      size_t j = k;
      while (j + 1 < events.size() && events[j] != c->wait) {
        Collective *other = byStart.lookup(events[j]);
        if (!other || other->kind != Kind::AllGather)
          break;
        ++j;
      }
      Operation *next = events[j];
      if (next == c->wait) {
        if (c->start->getNextNode() == c->wait)
          continue;
        zero::moveOpBefore(c->start, c->wait);
      } else {
        zero::moveOpAfter(c->start, next);
      }
      relieved += tensorBytes(c->start->getResult(0).getType());
    } else {
      // Before the peak: right after the last start or wait that precedes
      // it (at the earliest, its own start), or before the start at the
      // peak.
      if (atEvent) {
        Operation *peak = events[k - 1];
        if (c->start == peak || c->wait->getNextNode() == peak)
          continue;
        zero::moveOpBefore(c->wait, peak);
      } else {
        Operation *prev = events[k - 1];
        if (c->wait->getPrevNode() == prev)
          continue;
        zero::moveOpAfter(c->wait, prev);
      }
      relieved += tensorBytes(c->start->getOperand(0).getType());
    }
    ++moved;
  }
  return moved;
}

unsigned Scheduler::dropPrefetches() {
  unsigned moved = 0;
  for (Collective &c : collectives)
    if (c.kind == Kind::AllGather && c.start->getNextNode() != c.wait) {
      zero::moveOpBefore(c.start, c.wait);
      ++moved;
    }
  return moved;
}
