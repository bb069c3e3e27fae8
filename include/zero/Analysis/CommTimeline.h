//===- CommTimeline.h - A rank's predicted compute and link ----*- C++ -*-===//
//
// The cost model and the timeline zero-schedule places collectives with:
// one compute stream that runs a block's ops in order and stalls at a wait
// whose collective has not completed, and one link that runs collectives
// one at a time in the order they started, as the runtime's communication
// thread does. An analysis: it reads the block and moves nothing.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_COMMTIMELINE_H
#define ZERO_ANALYSIS_COMMTIMELINE_H

#include "zero/Dialect/Zero/IR/ZeroOps.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace mlir::zero {

/// Bytes of a statically shaped tensor of ints or floats, else 0.
double tensorBytes(Type type);

/// The rates of the cost model, per second.
struct CostModel {
  double gemmFlops, vectorFlops, memoryBytes, linkBytes, latency;

  /// Predicted compute seconds of a top-level op (nested ops of a region
  /// count once, without trip counts): a contraction at the GEMM rate,
  /// another linalg op at the vector rate plus its operands' and results'
  /// bytes at the memory rate.
  double compute(Operation *op) const;

  /// Link seconds of a collective that sends `bytes`.
  double link(double bytes) const { return latency + bytes / linkBytes; }
};

/// The collectives zero-schedule starts.
enum class CollectiveKind { AllGather, ReduceScatter, AllReduce };

/// "all_gather", "reduce_scatter", "all_reduce".
StringRef collectiveKindName(CollectiveKind kind);

/// Bytes one rank sends in a collective of `kind` on `worldSize` ranks, by
/// the runtime's own formula (runtime.h, zrt_collective_bytes_sent; `count`
/// is the entry point's count argument; `scalar`: an all-reduce of one
/// value by value).
double bytesSent(CollectiveKind kind, int64_t count, int64_t worldSize,
                 double elementBytes, bool scalar = false);

/// World size of a shard op's grid (the product of its shape), or 0.
int64_t gridSize(Operation *op, FlatSymbolRefAttr grid);

/// Link seconds of a collective left blocking (a scalar or max
/// all-reduce): what this rank sends, by runtime.h's formulas; 0 for other
/// ops.
double blockingLinkSeconds(Operation *op, const CostModel &model);

/// A started collective: its ops and its modelled link time.
struct StartedCollective {
  Operation *start;
  WaitOp wait;
  CollectiveKind kind;
  double bytes;
  double seconds;
  /// A scalar all-reduce started as a vector of one element.
  bool scalar = false;
};

/// One slice of the predicted timeline.
struct TimelineEvent {
  bool comm;
  std::string name;
  double begin, end;
  double bytes;
};

/// The timeline of one block under a cost model. Each op's compute time is
/// computed once and kept (the block's ops may move between simulations;
/// an op's own cost does not change).
class CommTimeline {
public:
  /// The started collective an op starts (or waits for), or null.
  using Lookup = function_ref<const StartedCollective *(Operation *)>;

  CommTimeline(Block &block, const CostModel &model)
      : block(block), model(model) {}

  /// Simulates the block in its current order; fills `events` if given.
  /// Returns the step time. Records when each op begins, when each
  /// started collective is done, and how long each wait stalls.
  double simulate(Lookup byStart, Lookup byWait,
                  std::vector<TimelineEvent> *events = nullptr);
  /// The step time if every collective blocked where it starts.
  double blockingTime(Lookup byStart, Lookup byWait);
  /// An op's compute seconds (CostModel::compute), cached.
  double cost(Operation *op);

  /// Of the last simulation: when `op` began, when the collective `start`
  /// starts was done, how long the wait `op` stalled (0 if unknown).
  double beginOf(Operation *op) const { return begin.lookup(op); }
  double doneOf(Operation *start) const { return done.lookup(start); }
  double stallOf(Operation *wait) const { return stall.lookup(wait); }

private:
  Block &block;
  const CostModel &model;
  llvm::DenseMap<Operation *, double> costs;
  llvm::DenseMap<Operation *, double> begin, done, stall;
};

/// Appends `events` as Chrome trace-event JSON: process `pid` is the
/// function `name`, thread 0 compute, thread 1 the link.
void appendTimelineTrace(llvm::json::Array &trace, int pid, StringRef name,
                         ArrayRef<TimelineEvent> events);

} // namespace mlir::zero

#endif // ZERO_ANALYSIS_COMMTIMELINE_H
