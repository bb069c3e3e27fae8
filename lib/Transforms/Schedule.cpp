//===- Schedule.cpp - Overlap communication with compute ------------------===//
//
// zero-schedule: blocking shard collectives become zero.*_start / zero.wait
// pairs, placed by a cost model of the step (Passes.td has the rules). The
// rewrites it composes are in Transforms.h (coalescing, buckets, deferred
// gathers) and Scheduler.h (the placement); the cost model and the
// timeline are an analysis (zero/Analysis/CommTimeline.h); this file is
// the pass: its options, the gather-deferral search, and the memory
// budget.
//
//===----------------------------------------------------------------------===//

#include "Scheduler.h"

#include "zero/Analysis/CommTimeline.h"
#include "zero/Analysis/PredictedMemory.h"
#include "zero/Analysis/StepMemory.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Support/OutputFile.h"
#include "zero/Transforms/Passes.h"
#include "zero/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <limits>
#include <map>

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROSCHEDULEPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

#define DEBUG_TYPE "zero-schedule"

using namespace mlir;
using namespace mlir::zero;

namespace {

/// The most schedules chooseDeferrals tries per function.
constexpr unsigned kMaxDeferralSchedules = 64;

struct ZeroSchedulePass
    : public zero::impl::ZeroSchedulePassBase<ZeroSchedulePass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    // The budget runs the bufferization pipeline inside this pass: its
    // dialects must be loaded before the pass manager runs.
    if (memoryBudget > 0)
      MemoryPredictor::addDependentDialects(bufferizePipelineText(), registry);
  }

  /// bufferize-pipeline, by default the target's (bufferizeStepPipeline).
  std::string bufferizePipelineText() const {
    if (bufferizePipeline.empty())
      return bufferizeStepPipeline(target);
    return bufferizePipeline;
  }

  /// bufferize-pipeline, parsed once a run (on the first prediction);
  /// shared so that the pass stays copyable, and reset by each run.
  std::shared_ptr<MemoryPredictor> predictor;

  /// A function the budget applies to: a step function (zero.role), or
  /// one with collectives to schedule.
  static bool isStepFunction(func::FuncOp func) {
    if (func->hasAttr(ZeroDialect::RoleAttrHelper::getNameStr()))
      return true;
    return func
        .walk([](Operation *op) {
          return isa<shard::AllGatherOp, shard::ReduceScatterOp,
                     shard::AllReduceOp>(op)
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  }

  /// A function's predicted peak, where it is, and how many of the
  /// function's starts and waits come before it (of `events` in all).
  struct Peak {
    int64_t bytes;
    Location loc;
    unsigned before, events;
    /// Whether the peak is at the last of `before`, a start.
    bool atStart;
  };

  /// Bufferizes a copy of `module` with bufferize-pipeline and predicts
  /// the peak of each function in `names` (zero-memory-report's total).
  FailureOr<llvm::StringMap<Peak>> predictPeaks(ModuleOp module,
                                                ArrayRef<StringRef> names) {
    if (!predictor) {
      std::string error;
      FailureOr<MemoryPredictor> parsed = MemoryPredictor::parse(
          module.getContext(), bufferizePipelineText(), error);
      if (failed(parsed))
        return getOperation().emitError()
               << "zero-schedule: bufferize-pipeline '"
               << bufferizePipelineText() << "' does not parse: " << error;
      predictor = std::make_shared<MemoryPredictor>(std::move(*parsed));
    }
    FailureOr<OwningOpRef<ModuleOp>> bufferized = predictor->run(module);
    if (failed(bufferized))
      return getOperation().emitError()
             << "zero-schedule: memory-budget: bufferizing a copy of the "
                "step with '"
             << bufferizePipelineText()
             << "' failed (the errors above say why)";
    OwningOpRef<ModuleOp> copy = std::move(*bufferized);
    llvm::StringMap<Peak> peaks;
    for (StringRef name : names) {
      auto func = copy->lookupSymbol<func::FuncOp>(name);
      if (!func || func.isExternal())
        return getOperation().emitError()
               << "zero-schedule: memory-budget: bufferize-pipeline did not "
                  "keep @"
               << name;
      FailureOr<StepMemory> memory = predictStepMemory(
          func, std::numeric_limits<int64_t>::max(), target == Target::CPU);
      if (failed(memory))
        return failure();
      Peak peak{memory->predictedPeak,
                memory->peakAt ? memory->peakAt->getLoc() : func.getLoc(), 0, 0,
                false};
      for (Operation &op : func.getBody().front()) {
        std::optional<RuntimeCollective> c = getRuntimeCollective(&op);
        bool start = c && c->started;
        bool wait = isa<WaitOp>(op);
        if (&op == memory->peakAt) {
          peak.before = peak.events + (start ? 1 : 0);
          peak.atStart = start;
        }
        peak.events += start || wait;
      }
      peaks.try_emplace(name, peak);
    }
    return peaks;
  }

  /// Relieves the scheduled functions' peaks until each fits the budget;
  /// a function that cannot fit gets its unscheduled body back.
  template <typename Scheduled>
  LogicalResult holdBudget(std::vector<Scheduled> &scheduled,
                           ModuleOp unscheduled, const CostModel &model) {
    // Every move is monotone (a start later, a wait earlier): this bounds
    // each function's rounds generously.
    auto roundLimit = [](Scheduled &s) {
      return 8 + 4 * static_cast<unsigned>(
                         s.scheduler->startsAndWaits().size());
    };
    for (Scheduled &s : scheduled)
      s.limit = roundLimit(s);
    while (true) {
      SmallVector<StringRef> names;
      for (Scheduled &s : scheduled)
        if (s.scheduler && s.peak < 0)
          names.push_back(s.func.getSymName());
      if (names.empty())
        return success();
      FailureOr<llvm::StringMap<Peak>> peaks =
          predictPeaks(getOperation(), names);
      if (failed(peaks))
        return failure();
      for (Scheduled &s : scheduled) {
        if (!s.scheduler || s.peak >= 0)
          continue;
        const Peak &peak = peaks->find(s.func.getSymName())->second;
        if (peak.bytes <= memoryBudget) {
          s.peak = peak.bytes;
          continue;
        }
        if (peak.events != s.scheduler->startsAndWaits().size())
          return s.func.emitError()
                 << "zero-schedule: memory-budget: the bufferized copy has "
                 << peak.events << " started collectives and waits, the step "
                 << s.scheduler->startsAndWaits().size()
                 << "; bufferize-pipeline must keep them in order";
        // Relieve peaks while that lowers the highest one; then drop every
        // prefetch and go on with the reductions; then give up.
        if (peak.bytes < s.best) {
          s.best = peak.bytes;
          s.stalled = 0;
        } else {
          ++s.stalled;
        }
        if (s.rounds++ < s.limit && s.stalled < 8) {
          if (unsigned moved =
                  s.scheduler->relieve(peak.before, peak.atStart,
                                       double(peak.bytes - memoryBudget))) {
            s.relieved += moved;
            continue;
          }
        }
        if (!s.prefetchDropped) {
          s.prefetchDropped = true;
          s.stalled = 0;
          s.best = peak.bytes;
          if (unsigned moved = s.scheduler->dropPrefetches()) {
            s.relieved += moved;
            continue;
          }
        }
        auto original =
            unscheduled.lookupSymbol<func::FuncOp>(s.func.getSymName());
        // A bucket's gathered buffer lives until its last member's last
        // use, where nothing is in flight for the relief to move: schedule
        // the step again without buckets before giving up.
        if (s.bucketed > 0 && !s.unbucketed) {
          s.scheduler.reset();
          s.func.getBody().dropAllReferences();
          s.func.getBody().getBlocks().clear();
          IRMapping map;
          original.getBody().cloneInto(&s.func.getBody(), map);
          unsigned bucketed = 0;
          s.scheduler =
              scheduleFunction(s.func, model, s.blocking, 0, bucketed);
          s.unbucketed = true;
          s.relieved = 0;
          s.prefetchDropped = false;
          s.stalled = 0;
          s.best = std::numeric_limits<int64_t>::max();
          if (s.scheduler) {
            s.rounds = 0;
            s.limit = roundLimit(s);
            continue;
          }
        }
        // takeBody drops the body it replaces.
        s.func.getBody().takeBody(original.getBody());
        s.func.emitWarning()
            << "zero-schedule: no schedule of @" << s.func.getSymName()
            << " found within memory-budget="
            << static_cast<int64_t>(memoryBudget)
            << " (the scheduled step peaks at " << peak.bytes
            << " bytes); its collectives stay blocking";
        s.scheduler.reset();
      }
    }
  }

  /// Schedules `func`'s entry block (all but the budget); null when it
  /// has no collective to start. Sets `blocking` to the predicted step
  /// time with every collective blocking.
  std::unique_ptr<Scheduler> scheduleFunction(func::FuncOp func,
                                              const CostModel &model,
                                              double &blocking,
                                              int64_t buckets,
                                              unsigned &bucketed) {
    Block &block = func.getBody().front();
    if (coalesceScalars)
      coalesceScalarAllReduces(block);
    bucketed = bucketCollectives(block, buckets);
    auto scheduler = std::make_unique<Scheduler>(block, model);
    if (scheduler->convert() == 0)
      return nullptr;
    blocking = scheduler->blockingTime();
    scheduler->sinkReductionConsumers();
    scheduler->startReductionsEarly();
    if (prefetch)
      scheduler->prefetch();
    if (optimizerInBackward)
      scheduler->hoistUpdates();
    scheduler->placeReductionWaits(maxInflightReductions);
    return scheduler;
  }

  /// Which of `func`'s parameters (deferrableParams' order: first used
  /// first) defer their gathers: the choice whose schedule the cost model
  /// predicts fastest, each candidate scheduled on a copy of the module.
  /// First the best prefix (the first-used parameters deferred, the others
  /// updated in the backward pass), from a coarse grid of lengths down to
  /// single steps around the best; then, largest first, each parameter of
  /// at least an eighth of the largest one's bytes toggled while that
  /// helps, within kMaxDeferralSchedules schedules in all. Every parameter
  /// deferred unless that choice is predicted at least 1% faster.
  SmallVector<bool> chooseDeferrals(func::FuncOp func, const CostModel &model,
                                    unsigned &tried) {
    SmallVector<Deferrable> params = deferrableParams(func);
    unsigned total = params.size();
    SmallVector<bool> all(total, true);
    tried = 0;
    if (total == 0 || !optimizerInBackward)
      return all;
    std::map<SmallVector<bool>, double> times;
    auto timeOf = [&](const SmallVector<bool> &which) {
      auto [it, inserted] = times.try_emplace(which, 0.0);
      if (!inserted)
        return it->second;
      OwningOpRef<ModuleOp> copy = getOperation().clone();
      auto f = copy->lookupSymbol<func::FuncOp>(func.getSymName());
      deferParamGathers(f, which);
      double blocking = 0;
      unsigned bucketed = 0;
      std::unique_ptr<Scheduler> scheduler =
          scheduleFunction(f, model, blocking, bucketBytes, bucketed);
      it->second = scheduler ? scheduler->simulate() : 0.0;
      return it->second;
    };
    auto prefix = [&](unsigned k) {
      SmallVector<bool> which(total, false);
      std::fill(which.begin(), which.begin() + k, true);
      return which;
    };
    unsigned best = 0, step = std::max(1u, (total + 7) / 8);
    unsigned lo = 0, hi = total;
    while (true) {
      for (unsigned k = lo; k <= hi; k += step)
        if (timeOf(prefix(k)) < timeOf(prefix(best)))
          best = k;
      if (timeOf(prefix(hi)) < timeOf(prefix(best)))
        best = hi;
      if (step == 1)
        break;
      lo = best > step ? best - step : 0;
      hi = std::min(total, best + step);
      step = std::max(1u, step / 4);
    }
    SmallVector<bool> choice = prefix(best);
    SmallVector<unsigned> order;
    double largest = 0;
    for (Deferrable &d : params)
      largest = std::max(largest, tensorBytes(d.gather.getInput().getType()));
    for (unsigned i = 0; i < total; ++i)
      if (8 * tensorBytes(params[i].gather.getInput().getType()) >= largest)
        order.push_back(i);
    llvm::stable_sort(order, [&](unsigned a, unsigned b) {
      return tensorBytes(params[a].gather.getInput().getType()) >
             tensorBytes(params[b].gather.getInput().getType());
    });
    for (bool improved = true; improved;) {
      improved = false;
      for (unsigned i : order) {
        if (times.size() >= kMaxDeferralSchedules)
          break;
        SmallVector<bool> t = choice;
        t[i] = !t[i];
        if (timeOf(t) < timeOf(choice)) {
          choice = t;
          improved = true;
        }
      }
    }
    tried = times.size();
    // Updating in the backward pass holds the gathered copy beside the
    // parameter for the rest of the step: keep every gather deferred (less
    // memory) unless the choice is predicted at least 1% faster.
    if (!(timeOf(choice) < 0.99 * timeOf(all)))
      return all;
    return choice;
  }

  /// A function scheduled, and the memory budget's search on it.
  struct Scheduled {
    func::FuncOp func;
    std::unique_ptr<Scheduler> scheduler;
    double blocking;
    int64_t peak = -1;
    unsigned relieved = 0;
    // The budget's search: the lowest peak so far, rounds since it
    // fell, rounds tried and their bound, whether every prefetch was
    // dropped, how many collectives buckets merged, and whether the step
    // was scheduled again without them.
    int64_t best = std::numeric_limits<int64_t>::max();
    unsigned stalled = 0;
    unsigned rounds = 0, limit = 0;
    bool prefetchDropped = false;
    unsigned bucketed = 0;
    bool unbucketed = false;
  };

  /// The options checked, and the step not yet offloaded; a located error
  /// names what is wrong.
  LogicalResult checkInput(ModuleOp module) {
    // zero-offload places its transfers around the uses of offloaded values
    // in the order this pass leaves; moving ops after it would break its
    // double buffering, and this pass does not move transfers.
    WalkResult offloaded = module.walk([&](Operation *op) {
      if (!isa<zero::ReadStartOp, zero::WriteStartOp,
                 zero::CopyStartOp>(op))
        return WalkResult::advance();
      op->emitOpError("is zero-offload's, and zero-schedule runs before "
                      "zero-offload: schedule the step first, then offload "
                      "it");
      return WalkResult::interrupt();
    });
    if (offloaded.wasInterrupted())
      return failure();
    for (auto [value, name] :
         {std::pair<double, StringRef>{gemmGflops, "gemm-gflops"},
          {vectorGflops, "vector-gflops"},
          {memoryGbps, "memory-gbps"},
          {linkGbps, "link-gbps"}})
      if (!(value > 0) || std::isinf(value)) {
        module.emitError() << "zero-schedule: " << name
                           << " must be a positive finite rate, got " << value;
        return failure();
      }
    if (maxInflightReductions < 1) {
      module.emitError("zero-schedule: max-inflight-reductions must be at "
                       "least 1");
      return failure();
    }
    if (!(linkLatencyUs >= 0) || std::isinf(linkLatencyUs)) {
      module.emitError() << "zero-schedule: link-latency-us must be >= 0, got "
                         << linkLatencyUs;
      return failure();
    }
    if (bucketBytes < 0) {
      module.emitError() << "zero-schedule: bucket-bytes must be >= 0 (0: "
                            "no buckets), got "
                         << static_cast<int64_t>(bucketBytes);
      return failure();
    }
    if (memoryBudget < 0) {
      module.emitError() << "zero-schedule: memory-budget must be >= 0 "
                            "bytes (0: none), got "
                         << static_cast<int64_t>(memoryBudget);
      return failure();
    }
    return success();
  }

  /// defer-gathers: each function's choice of deferred gathers
  /// (chooseDeferrals), applied; the choices by function.
  llvm::StringMap<SmallVector<bool>> deferGathersOf(ModuleOp module,
                                                     const CostModel &model) {
    llvm::StringMap<SmallVector<bool>> chosen;
    for (auto func : module.getOps<func::FuncOp>()) {
      unsigned tried = 0;
      SmallVector<bool> which = chooseDeferrals(func, model, tried);
      chosen[func.getSymName()] = which;
      unsigned deferred = deferParamGathers(func, which);
      if (remarks && tried)
        func.emitRemark() << "zero-schedule: " << deferred << " of "
                          << which.size()
                          << " parameters gathered in the forward pass, "
                             "the others updated in the backward pass ("
                          << tried << " schedules tried)";
    }
    return chosen;
  }

  /// A function over memory-budget whose undeferred step fits: keeps the
  /// longest prefix, in order of first use, of its deferred gathers whose
  /// blocking step fits, and gathers the others at the end of the step
  /// again (deferring holds a parameter's shard beside its gathered copy,
  /// so the peak grows with the prefix). Replaces `name` in `module`.
  LogicalResult keepDeferredPrefix(ModuleOp module, ModuleOp undeferred,
                                   StringRef name, ArrayRef<bool> which) {
    SmallVector<unsigned> order;
    for (auto [i, d] : llvm::enumerate(which))
      if (d)
        order.push_back(i);
    auto prefix = [&](unsigned k) {
      SmallVector<bool> w(which.size(), false);
      for (unsigned i : ArrayRef<unsigned>(order).take_front(k))
        w[i] = true;
      return w;
    };
    unsigned fits = 0, tooMany = order.size();
    OwningOpRef<ModuleOp> best;
    while (tooMany - fits > 1) {
      unsigned mid = fits + (tooMany - fits) / 2;
      OwningOpRef<ModuleOp> trial = undeferred.clone();
      deferParamGathers(trial->lookupSymbol<func::FuncOp>(name),
                        prefix(mid));
      FailureOr<llvm::StringMap<Peak>> p =
          predictPeaks(*trial, {name});
      if (failed(p))
        return failure();
      if (p->find(name)->second.bytes <= memoryBudget) {
        fits = mid;
        best = std::move(trial);
      } else {
        tooMany = mid;
      }
    }
    auto func = module.lookupSymbol<func::FuncOp>(name);
    ModuleOp source = best ? *best : undeferred;
    Operation *kept = OpBuilder(func).clone(
        *source.lookupSymbol<func::FuncOp>(name));
    func.erase();
    if (remarks)
      kept->emitRemark()
          << "zero-schedule: memory-budget: " << fits << " of "
          << order.size()
          << " deferred gathers kept, the others at the end of "
             "the step";
    return success();
  }

  /// With memory-budget: the unscheduled step (every collective blocking)
  /// is the floor. A function over it whose deferred gathers pushed it over
  /// keeps the prefix of them that fits; any other is a located error.
  /// Returns the unscheduled module, what a function falls back to when no
  /// schedule fits.
  FailureOr<OwningOpRef<ModuleOp>>
  holdFloor(ModuleOp module, OwningOpRef<ModuleOp> &undeferred,
            const llvm::StringMap<SmallVector<bool>> &chosen) {
    OwningOpRef<ModuleOp> unscheduled = module.clone();
    SmallVector<StringRef> names;
    for (auto func : unscheduled->getOps<func::FuncOp>())
      if (!func.isExternal() && isStepFunction(func))
        names.push_back(func.getSymName());
    FailureOr<llvm::StringMap<Peak>> peaks =
        predictPeaks(*unscheduled, names);
    if (failed(peaks))
      return failure();
    // The functions over it, as they were before deferring (one
    // bufferization for all).
    llvm::StringMap<Peak> before;
    SmallVector<StringRef> overNames;
    for (auto &[name, peak] : *peaks)
      if (peak.bytes > memoryBudget)
        overNames.push_back(name);
    if (undeferred && !overNames.empty()) {
      FailureOr<llvm::StringMap<Peak>> p =
          predictPeaks(*undeferred, overNames);
      if (failed(p))
        return failure();
      before = std::move(*p);
    }
    bool over = false, restored = false;
    for (auto &[name, peak] : *peaks)
      if (peak.bytes > memoryBudget) {
        if (undeferred) {
          const Peak &b = before.find(name)->second;
          if (b.bytes <= memoryBudget) {
            if (failed(keepDeferredPrefix(module, *undeferred, name,
                                          chosen.lookup(name))))
              return failure();
            restored = true;
            continue;
          }
          if (b.bytes < peak.bytes)
            peak = b;
        }
        mlir::emitError(peak.loc)
            << "zero-schedule: @" << name << " needs " << peak.bytes
            << " bytes per rank at its peak here even with every "
               "collective blocking, "
            << peak.bytes - static_cast<int64_t>(memoryBudget)
            << " bytes over memory-budget="
            << static_cast<int64_t>(memoryBudget)
            << " (raise the budget, or use a higher ZeRO stage or a "
               "smaller batch)";
        over = true;
      }
    if (over)
      return failure();
    if (restored)
      unscheduled = module.clone();
    return unscheduled;
  }

  /// The remarks and the timeline trace of the scheduled functions.
  LogicalResult report(ModuleOp module, std::vector<Scheduled> &scheduled) {
    llvm::json::Array trace;
    int pid = 0;
    for (Scheduled &s : scheduled) {
      if (!s.scheduler)
        continue;
      std::vector<TimelineEvent> events;
      double time = s.scheduler->simulate(&events);
      if (remarks) {
        InFlightDiagnostic d =
            s.func.emitRemark()
            << "zero-schedule: predicted step "
            << llvm::formatv("{0:F3}", s.blocking * 1e3).str()
            << " ms with blocking collectives, "
            << llvm::formatv("{0:F3}", time * 1e3).str() << " ms scheduled";
        if (memoryBudget > 0)
          d << "; predicted peak " << s.peak << " bytes within memory-budget="
            << static_cast<int64_t>(memoryBudget) << " (" << s.relieved
            << " collectives moved for it"
            << (s.unbucketed ? ", scheduled again without buckets" : "")
            << ")";
      }
      appendTimelineTrace(trace, pid++, s.func.getSymName(), events);
    }
    if (!timeline.empty()) {
      llvm::json::Object root{{"traceEvents", std::move(trace)},
                              {"displayTimeUnit", "ms"}};
      if (llvm::Error e = writeOutputFile(timeline, [&](llvm::raw_ostream &os) {
            os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)))
               << "\n";
          })) {
        module.emitError() << "zero-schedule: " << llvm::toString(std::move(e));
        return failure();
      }
    }
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    predictor.reset();
    if (failed(checkInput(module)))
      return signalPassFailure();
    CostModel model{gemmGflops * 1e9, vectorGflops * 1e9, memoryGbps * 1e9,
                    linkGbps * 1e9, linkLatencyUs * 1e-6};
    // Deferring the gathers holds the shards next to the gathered
    // parameters: with a budget, a function it pushes over keeps its
    // gathers at the end.
    OwningOpRef<ModuleOp> undeferred;
    llvm::StringMap<SmallVector<bool>> chosen;
    if (deferGathers) {
      if (memoryBudget > 0)
        undeferred = module.clone();
      chosen = deferGathersOf(module, model);
    }
    OwningOpRef<ModuleOp> unscheduled;
    if (memoryBudget > 0) {
      FailureOr<OwningOpRef<ModuleOp>> floor =
          holdFloor(module, undeferred, chosen);
      if (failed(floor))
        return signalPassFailure();
      unscheduled = std::move(*floor);
    }
    std::vector<Scheduled> scheduled;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      double blocking = 0;
      unsigned bucketed = 0;
      auto scheduler =
          scheduleFunction(func, model, blocking, bucketBytes, bucketed);
      if (!scheduler)
        continue;
      scheduled.push_back({func, std::move(scheduler), blocking});
      scheduled.back().bucketed = bucketed;
    }
    if (memoryBudget > 0 &&
        failed(holdBudget(scheduled, *unscheduled, model)))
      return signalPassFailure();
    if (failed(report(module, scheduled)))
      return signalPassFailure();
  }
};

} // namespace
