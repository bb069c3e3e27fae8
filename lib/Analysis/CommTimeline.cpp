//===- CommTimeline.cpp - A rank's predicted compute and link -------------===//

#include "zero/Analysis/CommTimeline.h"
#include "zero/Analysis/FlopCount.h"
#include "zero/runtime.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::zero;

/// Bytes of a statically shaped tensor of ints or floats, else 0.
double mlir::zero::tensorBytes(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape() || !t.getElementType().isIntOrFloat())
    return 0;
  return double(t.getNumElements()) *
         double((t.getElementType().getIntOrFloatBitWidth() + 7) / 8);
}

double CostModel::compute(Operation *op) const {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    double flops = double(linalgFlops(op).value_or(0));
    if (linalg::isaContractionOpInterface(linalgOp))
      return flops / gemmFlops;
    double bytes = 0;
    for (Value v : op->getOperands())
      bytes += tensorBytes(v.getType());
    for (Value v : op->getResults())
      bytes += tensorBytes(v.getType());
    return bytes / memoryBytes + flops / vectorFlops;
  }
  double seconds = 0;
  for (Region &region : op->getRegions())
    for (Operation &inner : region.getOps())
      seconds += compute(&inner);
  return seconds;
}

StringRef mlir::zero::collectiveKindName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllReduce:
    return "all_reduce";
  }
  return "";
}

int64_t mlir::zero::gridSize(Operation *op, FlatSymbolRefAttr grid) {
  auto gridOp = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, grid);
  if (!gridOp)
    return 0;
  int64_t n = 1;
  for (int64_t d : gridOp.getShape())
    n *= d;
  return n;
}

double mlir::zero::bytesSent(CollectiveKind kind, int64_t count,
                            int64_t worldSize, double elementBytes,
                            bool scalar) {
  zrt_collective k = kind == CollectiveKind::AllGather ? ZRT_ALL_GATHER
                     : kind == CollectiveKind::ReduceScatter
                         ? ZRT_REDUCE_SCATTER
                     : scalar ? ZRT_SCALAR_ALL_REDUCE
                              : ZRT_ALL_REDUCE;
  return double(zrt_collective_bytes_sent(k, worldSize, scalar ? 1 : count,
                                          int64_t(elementBytes)));
}

double mlir::zero::blockingLinkSeconds(Operation *op, const CostModel &model) {
  auto reduce = dyn_cast<shard::AllReduceOp>(op);
  if (!reduce)
    return 0;
  auto t = dyn_cast<RankedTensorType>(reduce.getInput().getType());
  if (!t || !t.hasStaticShape() || !t.getElementType().isIntOrFloat())
    return 0;
  int64_t n = gridSize(op, reduce.getGridAttr());
  if (n <= 1)
    return 0;
  double b = double((t.getElementType().getIntOrFloatBitWidth() + 7) / 8);
  return model.link(bytesSent(CollectiveKind::AllReduce, t.getNumElements(), n,
                              b, /*scalar=*/t.getRank() == 0));
}

double CommTimeline::simulate(Lookup byStart, Lookup byWait,
                              std::vector<TimelineEvent> *events) {
  begin.clear();
  done.clear();
  stall.clear();
  double t = 0, linkFree = 0;
  // Consecutive ops other than contractions make one compute event.
  TimelineEvent region{false, "compute", 0, 0, 0};
  auto flushRegion = [&] {
    if (events && region.end > region.begin)
      events->push_back(region);
    region = TimelineEvent{false, "compute", t, t, 0};
  };
  for (Operation &op : block) {
    begin[&op] = t;
    if (const StartedCollective *c = byStart(&op)) {
      double begin = std::max(t, linkFree);
      linkFree = begin + c->seconds;
      done[&op] = linkFree;
      if (events)
        events->push_back(
            {true, collectiveKindName(c->kind).str(), begin, linkFree, c->bytes});
      continue;
    }
    if (const StartedCollective *c = byWait(&op)) {
      double completed = done.lookup(c->start);
      if (completed > t) {
        flushRegion();
        stall[&op] = completed - t;
        if (events)
          events->push_back(
              {false, ("wait " + collectiveKindName(c->kind)).str(), t,
               completed, 0});
        t = completed;
        region = TimelineEvent{false, "compute", t, t, 0};
      }
      continue;
    }
    if (double link = blockingLinkSeconds(&op, model); link > 0) {
      // A blocking collective: after the link is free, the caller waits.
      double begin = std::max(t, linkFree);
      linkFree = begin + link;
      flushRegion();
      if (events) {
        events->push_back({true, "blocking all_reduce", begin, linkFree, 0});
        events->push_back({false, "blocked all_reduce", t, linkFree, 0});
      }
      t = linkFree;
      region = TimelineEvent{false, "compute", t, t, 0};
      continue;
    }
    double d = cost(&op);
    if (d <= 0)
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    if (linalgOp && linalg::isaContractionOpInterface(linalgOp)) {
      flushRegion();
      if (events)
        events->push_back({false, op.getName().getStringRef().str(), t, t + d,
                           double(linalgFlops(&op).value_or(0))});
      t += d;
      region = TimelineEvent{false, "compute", t, t, 0};
    } else {
      t += d;
      region.end = t;
    }
  }
  flushRegion();
  return t;
}

double CommTimeline::blockingTime(Lookup byStart, Lookup byWait) {
  double t = 0;
  for (Operation &op : block)
    if (const StartedCollective *c = byStart(&op))
      t += c->seconds;
    else if (!byWait(&op))
      t += cost(&op) + blockingLinkSeconds(&op, model);
  return t;
}

void mlir::zero::appendTimelineTrace(llvm::json::Array &trace, int pid,
                                     StringRef name,
                                     ArrayRef<TimelineEvent> events) {
  trace.push_back(llvm::json::Object{
      {"name", "process_name"},
      {"ph", "M"},
      {"pid", pid},
      {"args", llvm::json::Object{{"name", ("predicted: " + name).str()}}}});
  for (int tid : {0, 1})
    trace.push_back(llvm::json::Object{
        {"name", "thread_name"},
        {"ph", "M"},
        {"pid", pid},
        {"tid", tid},
        {"args",
         llvm::json::Object{{"name", tid ? "communication" : "compute"}}}});
  for (const TimelineEvent &e : events) {
    llvm::json::Object args;
    if (e.comm)
      args["bytes"] = e.bytes;
    else if (e.bytes > 0)
      args["flops"] = e.bytes;
    trace.push_back(llvm::json::Object{{"name", e.name},
                                       {"cat", e.comm ? "comm" : "compute"},
                                       {"ph", "X"},
                                       {"pid", pid},
                                       {"tid", e.comm ? 1 : 0},
                                       {"ts", e.begin * 1e6},
                                       {"dur", (e.end - e.begin) * 1e6},
                                       {"args", std::move(args)}});
  }
}

double CommTimeline::cost(Operation *op) {
  auto [it, inserted] = costs.try_emplace(op, 0.0);
  if (inserted)
    it->second = model.compute(op);
  return it->second;
}
