//===- Transforms.h - zero-schedule's rewrites as entry points -*- C++ -*-===//
//
// The rewrites zero-schedule composes, each usable on its own (as upstream
// Shard's Transforms.h exposes its simplifications): coalescing scalar
// all-reduces, merging small collectives into buckets, and deferring stage
// 2's parameter gathers to the next step. Each keeps the step's results
// bit-identical (every element is reduced as before, in rank order).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TRANSFORMS_TRANSFORMS_H
#define ZERO_TRANSFORMS_TRANSFORMS_H

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {

class TrainingStep;

/// zero-partition's rewrite (the pass checks its options first): builds
/// @train_step in ZeRO form for `stage` on `worldSize` ranks from `step`'s
/// forward_backward and optimizer, which it removes; with `accumulate` > 1
/// over that many micro-batches. `persistent[i]` keeps parameter i whole at
/// stage 3. Passes.td's ZeroPartitionPass says what each stage builds.
LogicalResult partitionStep(ModuleOp module, TrainingStep &step, int64_t stage,
                            int64_t worldSize, bool regather,
                            int64_t accumulate, bool accumulateF32,
                            ArrayRef<bool> persistent);

/// Coalesces runs of scalar sum all-reduces over the same grid (the
/// per-parameter squared norms of global-norm clipping) into one all-reduce
/// of a vector: its inputs are extracted into a tensor.from_elements after
/// the last of them, and what used their results (pure ops only) moves
/// below it. A run ends at an op with effects or a collective that uses
/// one of its results, or at a scalar whose input depends on one. Each
/// element is reduced as the scalar was (in rank order, runtime.h), so the
/// results are bit-identical. Returns how many all-reduces were merged.
unsigned coalesceScalarAllReduces(Block &block);

/// `bucket-bytes`: small collectives of one kind (and grid, axes and
/// element type) that follow each other, with no larger one of the kind
/// between them, merge into one of at most
/// `bucketBytes` full-size bytes, each member itself under it: one latency
/// and one hand-off to the communication thread instead of one each. A
/// gather joins a bucket if its input exists where the bucket's first
/// member is (the merged gather goes there); a reduction joins if nothing
/// reads an earlier member's result before it (the merged reduction goes
/// where its last member is). Returns how many collectives merged away.
unsigned bucketCollectives(Block &block, int64_t bucketBytes);

/// A parameter deferParamGathers can defer: the result that returns it,
/// the argument that takes it, and its gather chain.
struct Deferrable {
  unsigned result;
  BlockArgument arg;
  shard::AllGatherOp gather;
  SmallVector<Operation *> chain;
  bufferization::MaterializeInDestinationOp m;
};

/// The parameters of `fn` that deferParamGathers can defer, in the order
/// of the step's first use of each (unused ones last).
SmallVector<Deferrable> deferrableParams(func::FuncOp fn);

/// Stage 2's parameter all-gathers move from the end of the step to the
/// start of the next one (`defer-gathers`): a parameter that the step
/// takes whole and returns as the all-gather of its updated shard is
/// taken and returned as that shard instead (zero.sharded), and gathered
/// again right before its first use, where the prefetch can hide it behind
/// the forward pass. The gather is exact, so every step computes what it
/// did. This rank's slice of the gathered parameter (the optimizer's
/// input) reads the shard itself. Defers the parameters of
/// deferrableParams(fn) whose entry of `which` is true; returns how many
/// moved.
unsigned deferParamGathers(func::FuncOp fn, ArrayRef<bool> which);

/// Whether two gather inputs hold the same data: the same value, or
/// bucketCollectives' concatenations of the same values.
bool sameSource(Value a, Value b);

} // namespace mlir::zero

#endif // ZERO_TRANSFORMS_TRANSFORMS_H
