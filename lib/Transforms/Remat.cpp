//===- Remat.cpp - Activation recomputation under a memory budget ---------===//
//
// zero-remat: forward values that the backward pass reads are computed a
// second time right before that read instead of being kept, chosen at the
// predicted peak, fewest FLOPs per byte freed first, until
// zero-memory-report's prediction of the partitioned, bufferized step fits
// the budget (Passes.td has the rules, docs/decisions/0034 and 0061 the why).
//
//===----------------------------------------------------------------------===//

#include "BlockMotion.h"
#include "Rematerializer.h"

#include "zero/Analysis/FlopCount.h"
#include "zero/Analysis/PredictedMemory.h"
#include "zero/Analysis/StepMemory.h"
#include "zero/Analysis/TrainingStep.h"
#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <set>
#include <utility>

#define DEBUG_TYPE "zero-remat"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROREMATPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;
using namespace mlir::zero::remat;

namespace {

/// The prefix of the name locations that tag forward_backward's ops in a
/// predicted copy with their index in its block.
constexpr llvm::StringLiteral kTag = "zero-remat@";

/// Rounds a search makes before it judges, from the rate it lowers the
/// peak at, whether the rounds left can reach the budget.
constexpr int64_t kRoundsBeforeProjecting = 8;

struct ZeroRematPass : public zero::impl::ZeroRematPassBase<ZeroRematPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    // The prediction runs predict-pipeline inside this pass: its dialects
    // must be loaded before the pass manager runs.
    if (memoryBudget > 0)
      MemoryPredictor::addDependentDialects(predictPipelineText(), registry);
  }

  /// predict-pipeline, by default zero-partition and the target's
  /// bufferization (bufferizeStepPipeline).
  std::string predictPipelineText() const {
    if (predictPipeline.empty())
      return "zero-partition," + bufferizeStepPipeline(target);
    return predictPipeline;
  }

  /// A prediction: the peak, the index in forward_backward's block of the
  /// op during which it is first reached (-1: before the first), and how
  /// far and how long the step stays over the budget.
  struct Peak {
    int64_t bytes;
    int64_t index;
    int64_t excess;
    /// What the driver passes in (model states, batch): no recomputation
    /// lowers it.
    int64_t arguments;
    /// The most the step holds while the op of the index asked for runs
    /// (predict's `watch`); -1 when not asked for.
    int64_t watched = -1;
  };

  /// The index a tagged location carries, or -1.
  static int64_t tagOf(Location loc) {
    int64_t index = -1;
    loc->walk([&](Location inner) {
      if (auto name = dyn_cast<NameLoc>(inner)) {
        StringRef s = name.getName().getValue();
        int64_t i;
        if (s.consume_front(kTag) && !s.getAsInteger(10, i))
          index = std::max(index, i);
      }
      return WalkResult::advance();
    });
    return index;
  }

  /// The op at `index` in `block`, or null.
  static Operation *opAt(Block &block, int64_t index) {
    if (index < 0)
      return nullptr;
    for (Operation &op : block)
      if (index-- == 0)
        return &op;
    return nullptr;
  }

  /// Runs `pm` on a copy of the module whose forward_backward ops carry
  /// their index, and predicts the peak of the function they end up in,
  /// and the most it holds while the ops of index `watch` run.
  FailureOr<Peak> predict(MemoryPredictor &predictor, func::FuncOp fb,
                          int64_t watch = -1) {
    ++numPredictions;
    ++predictions;
    FailureOr<OwningOpRef<ModuleOp>> copy =
        predictor.run(getOperation(), [&](ModuleOp copy) {
          auto copied = copy.lookupSymbol<func::FuncOp>(fb.getSymName());
          for (auto [i, op] : llvm::enumerate(copied.getBody().front()))
            op.setLoc(NameLoc::get(
                StringAttr::get(&getContext(), (kTag + Twine(i)).str()),
                op.getLoc()));
        });
    if (failed(copy))
      return fb.emitError()
             << "zero-remat: predict-pipeline '" << predictor.getPipeline()
             << "' failed on a copy of the step (the errors above say why)";
    std::optional<Peak> peak;
    for (auto func : (**copy).getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      bool tagged = func.walk([&](Operation *op) {
                          return tagOf(op->getLoc()) >= 0
                                     ? WalkResult::interrupt()
                                     : WalkResult::advance();
                        })
                        .wasInterrupted();
      if (!tagged)
        continue;
      FailureOr<StepMemory> memory = predictStepMemory(func, memoryBudget,
                                                       target == Target::CPU);
      if (failed(memory))
        return failure();
      if (peak && memory->predictedPeak <= peak->bytes)
        continue;
      // The tagged op during the peak, or the last one before it.
      int64_t index = -1;
      // (None where the peak comes before the first of them: the module,
      // which has no block, ends the walk.)
      for (Operation *op = memory->innermostPeakAt;
           op && op->getBlock() && index < 0;) {
        index = tagOf(op->getLoc());
        op = op->getPrevNode() ? op->getPrevNode() : op->getParentOp();
      }
      int64_t watched = -1;
      if (watch >= 0)
        for (auto [op, bytes] : memory->during)
          if (tagOf(op->getLoc()) == watch)
            watched = std::max(watched, bytes);
      peak = Peak{memory->predictedPeak, index, memory->excess,
                  memory->predictedPeak - memory->generatedPeak, watched};
    }
    if (!peak)
      return fb.emitError() << "zero-remat: predict-pipeline '"
                            << predictPipelineText()
                            << "' left no function with the ops of @"
                            << fb.getSymName() << " to predict";
    return *peak;
  }

  /// What holding the budget came to.
  struct Outcome {
    Peak peak;
    /// Where the step stays over the budget whatever is recomputed, and
    /// the bytes it holds there; unset when it fits.
    std::optional<Location> stuckAt;
    int64_t stuckBytes = 0;
    /// Whether it stayed over at an op with everything live across it
    /// recomputed (no other choice of values lowers that op's bytes):
    /// predicted so, or known before predicting because the op holds more
    /// than the budget and the values recomputation could free there.
    bool floor = false;
    /// Whether the search ran out of rounds (max-rounds) first, or saw
    /// that at its rate so far (`rate` bytes of peak a round) it would.
    bool outOfRounds = false;
    int64_t rate = -1;
    unsigned rounds = 0;
    int64_t flops = 0, freed = 0;
    unsigned recomputed = 0, cloned = 0;
    /// Blocks checkpointed before the search (per-block checkpointing's
    /// start); their ops and FLOPs are in `cloned` and `flops`.
    unsigned blocks = 0;
  };

  /// Recomputes forward values of `fb` from its prediction `peak` until
  /// the step fits the budget or nothing more helps.
  /// Whether holdBudget's search ends at `round` without another
  /// prediction (filling `r`): the op at the peak holds more than the budget
  /// even without every byte recomputation could free there (`freeable`),
  /// or the rate at which the rounds so far have lowered the peak from
  /// `start` cannot reach the budget in the rounds left.
  bool stopsBeforePredicting(Outcome &r, func::FuncOp fb, Operation *at,
                             const Peak &peak, int64_t freeable, int64_t start,
                             size_t round) {
    int64_t budget = memoryBudget;
    // The op holds more than the budget even without every byte that
    // recomputation could free there: a floor, found without predicting
    // (recomputing the values one by one would take a prediction each).
    if (at && peak.bytes - freeable > budget) {
      r.stuckAt = at->getLoc();
      r.stuckBytes = peak.bytes - freeable;
      r.floor = true;
      r.peak = peak;
      return true;
    }
    // At the rate the rounds so far have lowered the peak, would the
    // rounds left reach the budget? Where they would not, stop now rather
    // than spend them (a search creeping down by a few bytes a round at
    // a prediction each was the sweep's two-minute "hang").
    if (round >= kRoundsBeforeProjecting) {
      int64_t gained = start - peak.bytes, left = maxRounds - round;
      if (gained / static_cast<int64_t>(round) * left < peak.bytes - budget) {
        r.stuckAt = at ? at->getLoc() : fb.getLoc();
        r.stuckBytes = peak.bytes;
        r.outOfRounds = true;
        r.rate = gained / static_cast<int64_t>(round);
        r.peak = peak;
        return true;
      }
    }
    return false;
  }

  /// What one round of holdBudget recomputed.
  struct Round {
    int64_t covered = 0, flops = 0;
    unsigned count = 0, ops = 0;
    /// The values recomputed, by their keys.
    SmallVector<std::pair<size_t, unsigned>> tried;
    /// Whether the round recomputes every value it may: none is left out
    /// for the excess being covered or for the cap.
    bool everything = true;
  };

  /// Recomputes `plans` (cheapest per byte first) live across `at`, those
  /// `excluded` aside, until their bytes cover `excess` or `cap` are
  /// applied; every one of them with `all`.
  Round applyRound(Rematerializer &remat, ArrayRef<Plan> plans, Operation *at,
                   int64_t excess, bool all, unsigned cap,
                   const std::set<std::pair<size_t, unsigned>> &excluded,
                   function_ref<std::pair<size_t, unsigned>(Value)> keyOf) {
    Round round;
    for (const Plan &candidate : plans) {
      if (!all && (round.covered >= excess || round.count == cap)) {
        round.everything = false;
        break;
      }
      if (excluded.count(keyOf(candidate.root)))
        continue;
      // Earlier recomputations may have changed what is live.
      std::optional<Plan> p = remat.plan(candidate.root, at);
      if (!p || p->net() <= 0)
        continue;
      LLVM_DEBUG(llvm::dbgs() << "zero-remat: recompute " << p->root << " ("
                              << p->net() << " bytes, " << p->flops
                              << " FLOPs, " << p->clones.size() << " ops)\n");
      round.tried.push_back(keyOf(p->root));
      remat.apply(*p, at);
      round.covered += p->net();
      round.flops += p->flops;
      round.ops += p->clones.size();
      ++round.count;
    }
    return round;
  }

  FailureOr<Outcome> holdBudget(MemoryPredictor &predictor, func::FuncOp fb,
                                Peak peak) {
    int64_t budget = memoryBudget;
    Outcome r{peak};
    const int64_t start = peak.bytes;
    // Each round recomputes, cheapest first, values live across the peak
    // until their bytes cover the excess, and keeps them only if the new
    // prediction is better: a lower peak, or the same peak over the budget
    // for fewer bytes and ops (the bufferized step's in-place choices make
    // the effect of a recomputation elsewhere hard to foresee). A round
    // that is not is undone, and its values are not tried again at that
    // peak; a round of several values that is not halves the number the
    // next one may take, so that one of them alone can still be tried.
    std::set<std::pair<size_t, unsigned>> excluded;
    unsigned cap = std::numeric_limits<unsigned>::max();
    // Every round is one prediction at most; a search that has not fitted
    // or got stuck by then stops (each round either lowers the peak or its
    // excess, or excludes values at the peak, so without this the count is
    // bounded only by the values times the peaks: thousands of predictions
    // on a step of a few thousand ops).
    const unsigned maxRounds = this->maxRounds;
    // Where every value at the peak has been tried and none helps, one more
    // round recomputes all of them together (values that do not lower the
    // peak alone may together): it either lowers the peak, and the search
    // goes on, or shows the op's floor. Once per peak reached.
    bool all = false, allTried = false;
    for (size_t round = 0; peak.bytes > budget; ++round) {
      Block &block = fb.getBody().front();
      Operation *at = opAt(block, peak.index);
      // Where a search that ends this round stops. Taken now: undoing the
      // round below swaps the block for its snapshot, and `at` with it.
      const Location atLoc = at ? at->getLoc() : fb.getLoc();
      Rematerializer remat(block);
      int64_t freeable = 0;
      SmallVector<Plan> plans = remat.candidates(at, freeable);
      r.rounds = round;
      if (stopsBeforePredicting(r, fb, at, peak, freeable, start, round))
        return r;
      // A value's key survives undoing a round: its op's index in the
      // block (the roots precede the point; clones go after it).
      llvm::DenseMap<Operation *, size_t> indices;
      for (auto [i, op] : llvm::enumerate(block))
        indices[&op] = i;
      auto keyOf = [&](Value v) {
        return std::make_pair(indices.lookup(v.getDefiningOp()),
                              cast<OpResult>(v).getResultNumber());
      };
      auto perByte = [](const Plan &p) {
        return double(p.flops) / double(p.net());
      };
      llvm::stable_sort(plans, [&](const Plan &a, const Plan &b) {
        return perByte(a) < perByte(b);
      });
      bool untried = llvm::any_of(
          plans, [&](const Plan &p) { return !excluded.count(keyOf(p.root)); });
      if (!untried && !plans.empty() && !allTried && round < maxRounds) {
        all = allTried = true;
        excluded.clear();
        untried = true;
      }
      if (!untried || round >= maxRounds) {
        r.stuckAt = atLoc;
        r.stuckBytes = peak.bytes;
        r.outOfRounds = untried;
        r.peak = peak;
        return r;
      }
      func::FuncOp snapshot = fb.clone();
      Round applied = applyRound(remat, plans, at, peak.bytes - budget, all,
                                 cap, excluded, keyOf);
      int64_t covered = applied.covered, flops = applied.flops;
      unsigned ops = applied.ops;
      bool everything = applied.everything;
      SmallVector<std::pair<size_t, unsigned>> &tried = applied.tried;
      FailureOr<Peak> next = success(peak);
      if (applied.count) {
        next = predict(predictor, fb, peak.index);
        if (failed(next)) {
          snapshot.erase();
          return failure();
        }
      }
      // Recomputing everything live across the peak's op that can be
      // recomputed left that op over the budget: nothing this pass does
      // lowers its bytes further, so the budget cannot be met. Without
      // this the rounds would go on lowering the peaks elsewhere, a
      // prediction each, before arriving there: minutes on a small model.
      bool floor = applied.count && everything && excluded.empty() &&
                   next->watched > budget;
      bool better = applied.count &&
                    (next->bytes < peak.bytes ||
                     (next->bytes == peak.bytes && next->excess < peak.excess));
      const bool wasAll = std::exchange(all, false);
      if (better) {
        LLVM_DEBUG(llvm::dbgs() << "zero-remat: round " << round << ": "
                                << applied.count << " values, peak "
                                << peak.bytes << " -> " << next->bytes << "\n");
        snapshot.erase();
        excluded.clear();
        allTried = false;
        cap = std::numeric_limits<unsigned>::max();
        peak = *next;
        r.recomputed += applied.count;
        r.cloned += ops;
        r.freed += covered;
        r.flops += flops;
      } else {
        LLVM_DEBUG(llvm::dbgs() << "zero-remat: round " << round << ": "
                                << applied.count << " values undone\n");
        fb.getBody().takeBody(snapshot.getBody());
        snapshot.erase();
        if (wasAll && !floor) {
          // Neither one at a time nor all together: the search ends here.
          r.stuckAt = atLoc;
          r.stuckBytes = peak.bytes;
          r.peak = peak;
          return r;
        }
        if (applied.count > 1)
          cap = applied.count / 2;
        else
          excluded.insert(tried.begin(), tried.end());
      }
      if (floor) {
        r.stuckAt = atLoc;
        r.stuckBytes = next->watched;
        r.floor = true;
        break;
      }
    }
    r.peak = peak;
    return r;
  }

  /// Predictions this run made.
  unsigned predictions = 0;

  /// " (x.y%)": `flops` as a share of the step's `totalFlops`.
  static std::string percentOf(int64_t flops, int64_t totalFlops) {
    return llvm::formatv(" ({0:F1}%)",
                         totalFlops ? 100.0 * flops / totalFlops : 0.0)
        .str();
  }

  /// policy=blocks: every block recomputed, and with remarks what that
  /// did to the predicted peak.
  LogicalResult checkpointEveryBlock(const TrainingStep &step,
                                     MemoryPredictor &predictor,
                                     int64_t totalFlops) {
    func::FuncOp fb = step.forwardBackward;
    FailureOr<Peak> before = Peak{};
    if (remarks && failed(before = predict(predictor, fb)))
      return failure();
    int64_t flops = 0;
    unsigned cloned = 0;
    unsigned n = checkpointBlocks(step, flops, cloned);
    numRecomputed += n;
    numCloned += cloned;
    if (!remarks)
      return success();
    FailureOr<Peak> after = predict(predictor, fb);
    if (failed(after))
      return failure();
    fb.emitRemark() << "zero-remat: per-block checkpointing of " << n
                    << " blocks: predicted peak " << before->bytes << " bytes, "
                    << after->bytes << " after; " << cloned
                    << " ops recomputed, " << flops << " FLOPs added to "
                    << totalFlops << percentOf(flops, totalFlops);
    return success();
  }

  /// Greedy from the step as it is, and greedy from per-block
  /// checkpointing (where the model has blocks): the one that fits with
  /// fewer FLOPs added is kept. At deep budgets recomputing a block once
  /// beats recomputing its values one by one, whose recomputations can
  /// repeat the same producers.
  FailureOr<Outcome> searchBothWays(const TrainingStep &step,
                                    MemoryPredictor &predictor, Peak peak) {
    func::FuncOp fb = step.forwardBackward;
    func::FuncOp original = fb.clone();
    FailureOr<Outcome> greedy = holdBudget(predictor, fb, peak);
    if (failed(greedy)) {
      original.erase();
      return failure();
    }
    Outcome best = *greedy;
    int64_t blockFlops = 0;
    unsigned blockCount = 0, blockOps = 0;
    if ((best.stuckAt && !best.floor) || best.flops > 0) {
      func::FuncOp chosen = fb.clone();
      fb.getBody().takeBody(original.getBody());
      blockCount = checkpointBlocks(step, blockFlops, blockOps);
      FailureOr<Outcome> fromBlocks = failure();
      if (blockCount) {
        FailureOr<Peak> start = predict(predictor, fb);
        if (failed(start) ||
            failed(fromBlocks = holdBudget(predictor, fb, *start))) {
          chosen.erase();
          original.erase();
          return failure();
        }
        fromBlocks->flops += blockFlops;
        fromBlocks->cloned += blockOps;
        fromBlocks->blocks = blockCount;
      }
      if (blockCount && !fromBlocks->stuckAt &&
          (best.stuckAt || fromBlocks->flops < best.flops)) {
        best = *fromBlocks;
      } else {
        fb.getBody().takeBody(chosen.getBody());
      }
      chosen.erase();
    }
    original.erase();
    return best;
  }

  /// The error for a search that left `fb` over the budget at
  /// `best.stuckAt`, saying why it stopped there.
  void reportStuck(func::FuncOp fb, const Outcome &best, int64_t budget) {
    InFlightDiagnostic diag = mlir::emitError(*best.stuckAt);
    if (best.floor)
      diag << "zero-remat: @" << fb.getSymName() << " needs at least "
           << best.stuckBytes
           << " bytes per rank here even recomputing every "
              "forward value live across it that can be recomputed, ";
    else if (best.outOfRounds && best.rate >= 0)
      diag << "zero-remat: @" << fb.getSymName() << " peaks at "
           << best.stuckBytes << " bytes per rank here after " << best.rounds
           << " rounds of the search, which at the " << best.rate
           << " bytes a round it lowered the peak by would "
           << "not fit within max-rounds=" << static_cast<unsigned>(maxRounds)
           << ", ";
    else if (best.outOfRounds)
      diag << "zero-remat: @" << fb.getSymName() << " peaks at "
           << best.stuckBytes << " bytes per rank here after the search's "
           << static_cast<unsigned>(maxRounds) << " rounds (max-rounds), ";
    else
      diag << "zero-remat: @" << fb.getSymName() << " peaks at "
           << best.stuckBytes
           << " bytes per rank here and the search found no recomputation "
              "that lowers it, ";
    diag << best.stuckBytes - budget << " bytes over memory-budget=" << budget
         << " (raise the budget, or use a higher ZeRO stage or a smaller "
            "batch)";
    if (remarks)
      diag.attachNote() << "zero-remat: " << predictions
                        << (predictions == 1 ? " prediction" : " predictions")
                        << " of the bufferized step";
  }

  /// policy=budget: recomputes until the predicted peak fits
  /// memory-budget, or says why it cannot.
  LogicalResult fitBudget(const TrainingStep &step, MemoryPredictor &predictor,
                          int64_t totalFlops) {
    func::FuncOp fb = step.forwardBackward;
    int64_t budget = memoryBudget;
    FailureOr<Peak> first = predict(predictor, fb);
    if (failed(first))
      return failure();
    Peak peak = *first;
    if (peak.bytes > budget && peak.arguments >= budget) {
      fb.emitError() << "zero-remat: the buffers a driver passes to the "
                        "partitioned step (model states, batch) take "
                     << peak.arguments
                     << " bytes per rank, and memory-budget=" << budget
                     << " leaves nothing for the step itself (raise the "
                        "budget, or use a higher ZeRO stage)";
      return failure();
    }
    FailureOr<Outcome> searched = searchBothWays(step, predictor, peak);
    if (failed(searched))
      return failure();
    Outcome best = *searched;
    if (best.stuckAt) {
      reportStuck(fb, best, budget);
      return failure();
    }
    int64_t addedFlops = best.flops, freed = best.freed;
    unsigned recomputed = best.recomputed, cloned = best.cloned;
    unsigned blockCount = best.blocks;
    peak = best.peak;
    numRecomputed += recomputed;
    numCloned += cloned;
    if (remarks)
      fb.emitRemark() << "zero-remat: predicted peak " << first->bytes
                      << " bytes, " << peak.bytes
                      << " after recomputation, within memory-budget=" << budget
                      << "; "
                      << (blockCount ? llvm::formatv("{0} blocks checkpointed "
                                                     "and ",
                                                     blockCount)
                                           .str()
                                     : std::string())
                      << recomputed << " values recomputed (" << freed
                      << " bytes at the peaks they were chosen at), "
                      << addedFlops << " FLOPs added to " << totalFlops
                      << percentOf(addedFlops, totalFlops) << "; "
                      << predictions << " predictions of the bufferized step";
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    predictions = 0;
    if (memoryBudget < 0) {
      module.emitError() << "zero-remat: memory-budget must be >= 0 bytes "
                            "(0: recompute nothing), got "
                         << static_cast<int64_t>(memoryBudget);
      return signalPassFailure();
    }
    bool blocks = policy == RematPolicy::Blocks;
    if (blocks && memoryBudget > 0) {
      module.emitError("zero-remat: policy=blocks recomputes every block "
                       "and takes no memory-budget (policy=budget holds "
                       "one)");
      return signalPassFailure();
    }
    if (memoryBudget == 0 && !blocks)
      return;
    FailureOr<TrainingStep> step = TrainingStep::get(module);
    if (failed(step)) {
      module.emitError("zero-remat: needs the training-step contract "
                       "(forward_backward and optimizer), before "
                       "zero-partition");
      return signalPassFailure();
    }
    func::FuncOp fb = step->forwardBackward;
    if (!fb.getBody().hasOneBlock()) {
      fb.emitOpError("zero-remat needs a single-block forward_backward");
      return signalPassFailure();
    }
    std::string error;
    FailureOr<MemoryPredictor> predictor =
        MemoryPredictor::parse(&getContext(), predictPipelineText(), error);
    if (failed(predictor)) {
      module.emitError() << "zero-remat: predict-pipeline '"
                         << predictPipelineText()
                         << "' does not parse: " << error;
      return signalPassFailure();
    }

    int64_t totalFlops = 0;
    for (Operation &op : fb.getBody().front())
      totalFlops += flopsOf(&op);
    LogicalResult result =
        blocks ? checkpointEveryBlock(*step, *predictor, totalFlops)
               : fitBudget(*step, *predictor, totalFlops);
    if (failed(result))
      signalPassFailure();
  }
};

} // namespace
