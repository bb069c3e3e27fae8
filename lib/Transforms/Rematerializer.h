//===- Rematerializer.h - What recomputing a value takes ----*- C++ -*-===//
//
// zero-remat's analysis of one block: which values live across a point can
// be computed again after it, what that clones, frees and costs (Plan),
// and the rewrite that does it; and per-block checkpointing. The pass
// (Remat.cpp) searches over these.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_TRANSFORMS_REMATERIALIZER_H
#define ZERO_LIB_TRANSFORMS_REMATERIALIZER_H

#include "BlockMotion.h"

#include "zero/Analysis/TrainingStep.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <optional>

namespace mlir::zero::remat {

/// The most operations one recomputation clones.
constexpr unsigned kMaxClones = 512;

/// Bytes of a statically shaped tensor of numbers; 0 for anything else
/// (scalars and indices are free to keep).
int64_t bytesOf(Value v);
/// A view of its first operand's buffer once bufferized.
bool isView(Operation *op);
/// An op whose clone computes the same values: no effects, not a
/// collective (which every rank must run the same number of times), not a
/// call.
bool isRecomputable(Operation *op);
/// FLOPs of one run of `op` by FlopCount.h's rule (0 where it cannot
/// count them).
int64_t flopsOf(Operation *op);

/// Recomputing one value (and its views) for the reads after a point.
struct Plan {
  Value root;
  /// Values whose reads after the point read the recomputed copy: the
  /// root and the views of it that are read there.
  SmallVector<Value> replaced;
  /// The ops to clone, in block order, and where the clones go.
  SmallVector<Operation *> clones;
  Operation *insertBefore = nullptr;
  int64_t saved = 0; ///< bytes no longer live across the point
  int64_t kept = 0;  ///< bytes of inputs now live across it instead
  int64_t flops = 0; ///< FLOPs of the clones
  int64_t net() const { return saved - kept; }
};

class Rematerializer {
public:
  explicit Rematerializer(Block &block) : block(block) {}

  /// Whether `op` (of the block) comes after `point` (null: before the
  /// first op).
  bool after(Operation *point, Operation *op) const {
    return op && op != point && (!point || point->isBeforeInBlock(op));
  }

  /// The buffer `v` is a view of: the first non-view producer up the
  /// chain, or `v`.
  Value rootOf(Value v) const {
    while (Operation *def = v.getDefiningOp()) {
      if (!isView(def) || !inBlock(block, def))
        break;
      v = def->getOperand(0);
    }
    return v;
  }

  /// `root` and the views of it, transitively.
  SmallVector<Value> aliasesOf(Value root) const {
    SmallVector<Value> aliases{root};
    for (unsigned i = 0; i < aliases.size(); ++i)
      for (OpOperand &use : aliases[i].getUses())
        if (isView(use.getOwner()) && use.getOperandNumber() == 0 &&
            use.getOwner()->getBlock() == &block)
          llvm::append_range(aliases, use.getOwner()->getResults());
    return aliases;
  }

  /// How the ops of the block read `v`, relative to `point`.
  struct Reads {
    bool at = false, afterPoint = false;
    Operation *first = nullptr; ///< the first reader after the point
  };
  Reads readsOf(Value v, Operation *point) const {
    Reads r;
    for (OpOperand &use : v.getUses()) {
      Operation *op = inBlock(block, use.getOwner());
      if (!op)
        continue;
      if (op == point)
        r.at = true;
      else if (after(point, op)) {
        r.afterPoint = true;
        if (!r.first || op->isBeforeInBlock(r.first))
          r.first = op;
      }
    }
    return r;
  }

  /// Whether the buffer of `v` stays live across `point` whatever happens
  /// to `except` (the aliases a plan replaces).
  bool liveAcross(Value v, Operation *point,
                  const llvm::SmallPtrSetImpl<Value> &except) const {
    for (Value alias : aliasesOf(rootOf(v)))
      if (!except.contains(alias) && readsOf(alias, point).afterPoint)
        return true;
    return false;
  }

  /// Plans recomputing `root`, a value defined before `point`, for its
  /// reads after it; nullopt where it is not live across the point or
  /// cannot be recomputed.
  std::optional<Plan> plan(Value root, Operation *point) const {
    Operation *def = root.getDefiningOp();
    if (!def || def->getBlock() != &block || !isRecomputable(def) ||
        isView(def) || bytesOf(root) == 0 || !after(def, point))
      return std::nullopt;
    Plan p;
    p.root = root;
    // The aliases read after the point, and the views between them and
    // the root.
    SmallVector<Value> aliases = aliasesOf(root);
    llvm::SmallPtrSet<Value, 8> needed;
    for (Value alias : aliases) {
      Reads reads = readsOf(alias, point);
      if (reads.at)
        return std::nullopt; // the point itself reads it
      if (!reads.afterPoint)
        continue;
      if (!p.insertBefore || reads.first->isBeforeInBlock(p.insertBefore))
        p.insertBefore = reads.first;
      for (Value v = alias; needed.insert(v).second && v != root;)
        v = v.getDefiningOp()->getOperand(0);
    }
    if (!p.insertBefore)
      return std::nullopt;
    llvm::SmallPtrSet<Value, 8> replacedSet;
    for (Value alias : aliases)
      if (needed.contains(alias)) {
        p.replaced.push_back(alias);
        replacedSet.insert(alias);
      }
    p.saved = bytesOf(root);

    // The clones: the root's producer, the needed views, and, recursively,
    // the producers of inputs that are not live across the point anyway.
    llvm::SetVector<Operation *> clones;
    clones.insert(def);
    for (Value v : p.replaced)
      if (v != root)
        clones.insert(v.getDefiningOp());
    llvm::SmallPtrSet<Value, 8> keptRoots;
    for (unsigned i = 0; i < clones.size(); ++i) {
      bool tooMany = false;
      forEachUsedValue(clones[i], [&](Value u) {
        Operation *producer = u.getDefiningOp();
        if (tooMany || bytesOf(u) == 0 || !producer ||
            !inBlock(block, producer) || clones.contains(producer) ||
            replacedSet.contains(u) || liveAcross(u, point, replacedSet))
          return;
        producer = inBlock(block, producer);
        if (isRecomputable(producer)) {
          clones.insert(producer);
          tooMany = clones.size() > kMaxClones;
          return;
        }
        Value kept = rootOf(u);
        if (keptRoots.insert(kept).second)
          p.kept += bytesOf(kept);
      });
      if (tooMany)
        return std::nullopt;
    }
    p.clones = clones.takeVector();
    llvm::sort(p.clones, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    for (Operation *op : p.clones) {
      std::optional<int64_t> sum = llvm::checkedAdd(p.flops, flopsOf(op));
      p.flops = sum ? *sum : std::numeric_limits<int64_t>::max();
    }
    return p;
  }

  /// Clones the plan's ops right before its first read after `point` and
  /// makes every read after the point read the clones.
  void apply(const Plan &p, Operation *point) {
    OpBuilder b(p.insertBefore);
    IRMapping map;
    llvm::SmallPtrSet<Operation *, 16> cloned;
    for (Operation *op : p.clones)
      cloned.insert(b.clone(*op, map));
    for (Value v : p.replaced)
      v.replaceUsesWithIf(map.lookup(v), [&](OpOperand &use) {
        Operation *op = inBlock(block, use.getOwner());
        return after(point, op) && !cloned.contains(op);
      });
  }

  /// Plans for every value defined before `point` and live across it that
  /// frees more than it keeps; `freeable` is set to the bytes of all values
  /// this pass could recompute there (each alone), whatever they keep: no
  /// choice of recomputations frees more at the point.
  SmallVector<Plan> candidates(Operation *point, int64_t &freeable) const {
    SmallVector<Plan> plans;
    freeable = 0;
    if (!point)
      return plans;
    for (Operation &op : block) {
      if (&op == point)
        break;
      for (Value result : op.getResults()) {
        std::optional<Plan> p = plan(result, point);
        if (!p)
          continue;
        std::optional<int64_t> sum = llvm::checkedAdd(freeable, p->saved);
        freeable = sum ? *sum : std::numeric_limits<int64_t>::max();
        if (p->net() > 0)
          plans.push_back(std::move(*p));
      }
    }
    return plans;
  }

private:
  Block &block;
};

/// Per-block checkpointing: clones each block's forward ops right before
/// the backward pass first reads one of their values. Returns the number
/// of blocks recomputed; adds the clones' FLOPs to `flops` and their
/// number to `cloned`.
unsigned checkpointBlocks(const TrainingStep &step, int64_t &flops,
                          unsigned &cloned);

} // namespace mlir::zero::remat

#endif // ZERO_LIB_TRANSFORMS_REMATERIALIZER_H
