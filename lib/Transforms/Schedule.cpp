//===- Schedule.cpp - Overlap communication with compute
//-------------------===//
//
// zero-schedule: blocking shard collectives become zero.*_start / zero.wait
// pairs, placed by a cost model of the step (Passes.td has the rules). The
// model is a timeline of one rank: one compute stream that runs the entry
// block's ops in order and stalls at a wait whose collective has not
// completed, and one link that runs collectives one at a time in the order
// they started, as the runtime's communication thread does.
//
//===----------------------------------------------------------------------===//

#include "BlockMotion.h"

#include "zero/Analysis/FlopCount.h"
#include "zero/Analysis/PredictedMemory.h"
#include "zero/Analysis/StepMemory.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Support/OutputFile.h"
#include "zero/Transforms/Passes.h"
#include "zero/runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
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

/// Bytes of a statically shaped tensor of ints or floats, else 0.
double tensorBytes(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape() || !t.getElementType().isIntOrFloat())
    return 0;
  return double(t.getNumElements()) *
         double((t.getElementType().getIntOrFloatBitWidth() + 7) / 8);
}

/// The rates of the cost model, per second.
struct CostModel {
  double gemmFlops, vectorFlops, memoryBytes, linkBytes, latency;

  /// Predicted compute seconds of a top-level op (nested ops of a region
  /// count once, without trip counts).
  double compute(Operation *op) const {
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

  double link(double bytes) const { return latency + bytes / linkBytes; }
};

enum class Kind { AllGather, ReduceScatter, AllReduce };

StringRef kindName(Kind kind) {
  switch (kind) {
  case Kind::AllGather:
    return "all_gather";
  case Kind::ReduceScatter:
    return "reduce_scatter";
  case Kind::AllReduce:
    return "all_reduce";
  }
  return "";
}

/// A collective the pass started: its ops and its modelled link time.
struct Collective {
  Operation *start;
  WaitOp wait;
  Kind kind;
  double bytes;
  double seconds;
  /// A scalar all-reduce started as a vector of one element.
  bool scalar = false;
};

/// One slice of the predicted timeline.
struct Event {
  bool comm;
  std::string name;
  double begin, end;
  double bytes;
};

/// Element types the runtime's collectives take (f32, f64, bf16).
bool isRuntimeFloat(Type t) { return t.isF32() || t.isF64() || t.isBF16(); }

/// A scalar (rank-0 f32, f64 or bf16 tensor) sum all-reduce that may join a
/// coalesced one.
shard::AllReduceOp scalarSum(Operation *op) {
  auto reduce = dyn_cast<shard::AllReduceOp>(op);
  if (!reduce || reduce.getReduction() != shard::ReductionKind::Sum)
    return {};
  auto t = dyn_cast<RankedTensorType>(reduce.getInput().getType());
  if (!t || t.getRank() != 0 || t != reduce.getResult().getType() ||
      !isRuntimeFloat(t.getElementType()))
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

/// Coalesces runs of scalar sum all-reduces over the same grid (the
/// per-parameter squared norms of global-norm clipping) into one all-reduce
/// of a vector: its inputs are extracted into a tensor.from_elements after
/// the last of them, and what used their results (pure ops only) moves
/// below it. A run ends at an op with effects or a collective that uses
/// one of its results, or at a scalar whose input depends on one. Each
/// element is reduced as the scalar was (in rank order, runtime.h), so the
/// results are bit-identical. Returns how many all-reduces were merged.
unsigned coalesceScalarAllReduces(Block &block) {
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

/// World size of a shard op's grid (the product of its shape), or 0.
int64_t gridSize(Operation *op, FlatSymbolRefAttr grid);

/// The grid and grid axes of an all-gather, reduce-scatter or all-reduce.
std::pair<FlatSymbolRefAttr, DenseI16ArrayAttr> gridOf(Operation *op) {
  return TypeSwitch<Operation *,
                    std::pair<FlatSymbolRefAttr, DenseI16ArrayAttr>>(op)
      .Case<shard::AllGatherOp, shard::ReduceScatterOp, shard::AllReduceOp>(
          [](auto c) {
            return std::pair(c.getGridAttr(), c.getGridAxesAttr());
          });
}

/// One group of all of a rank's dimensions (reshapes to and from 1-D).
SmallVector<ReassociationIndices> allDims(int64_t rank) {
  ReassociationIndices all;
  for (int64_t d = 0; d < rank; ++d)
    all.push_back(d);
  return {all};
}

/// Whether two gather inputs hold the same data: the same value, or
/// bucketCollectives' concatenations of the same values.
bool sameSource(Value a, Value b) {
  if (a == b)
    return true;
  auto ca = a.getDefiningOp<tensor::ConcatOp>();
  auto cb = b.getDefiningOp<tensor::ConcatOp>();
  return ca && cb && ca.getDim() == cb.getDim() &&
         llvm::equal(ca.getInputs(), cb.getInputs());
}

/// A collective bucketCollectives may merge: a 1-D all-gather or sum
/// reduce-scatter along axis 0, or a sum all-reduce of at least one
/// dimension, of statically shaped f32, f64 or bf16; its full-size bytes.
std::optional<double> bucketable(Operation *op) {
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!in || !out || !in.hasStaticShape() || !out.hasStaticShape() ||
      !isRuntimeFloat(in.getElementType()))
    return std::nullopt;
  if (auto g = dyn_cast<shard::AllGatherOp>(op)) {
    if (in.getRank() != 1 || g.getGatherAxis().getZExtValue() != 0)
      return std::nullopt;
    return tensorBytes(out);
  }
  if (auto r = dyn_cast<shard::ReduceScatterOp>(op)) {
    if (in.getRank() != 1 || r.getScatterAxis().getZExtValue() != 0 ||
        r.getReduction() != shard::ReductionKind::Sum)
      return std::nullopt;
    return tensorBytes(in);
  }
  if (auto r = dyn_cast<shard::AllReduceOp>(op)) {
    if (in.getRank() < 1 || in != out ||
        r.getReduction() != shard::ReductionKind::Sum)
      return std::nullopt;
    return tensorBytes(in);
  }
  return std::nullopt;
}

/// Merges a bucket of collectives of one kind (bucketCollectives).
/// Gathers: one gather of the concatenated shards, before the first
/// member; rank r's block of it holds each member's r-th shard, so each
/// member's result is a column block of the [ranks x total] gather.
/// Reductions: one reduction, at the last member, of the inputs laid out
/// so that each rank's block is the members' blocks side by side (a
/// reduce-scatter) or of their concatenation (an all-reduce). Every
/// element is reduced exactly as in its own collective (runtime.h: rank
/// order), so the results are bit-identical.
void mergeBucket(ArrayRef<Operation *> members, int64_t n) {
  Operation *first = members.front(), *last = members.back();
  Location loc = first->getLoc();
  auto elem =
      cast<RankedTensorType>(first->getOperand(0).getType()).getElementType();
  auto vec = [&](int64_t size) { return RankedTensorType::get({size}, elem); };
  auto mat = [&](int64_t cols) {
    return RankedTensorType::get({n, cols}, elem);
  };
  SmallVector<ReassociationIndices> rows = {{0, 1}};
  OpBuilder b(first->getContext());
  // The first member again (its grid, axes, reduction and attributes), on
  // the merged input.
  auto rebuild = [&](Operation *proto, Value input, Type type) {
    Operation *op = b.clone(*proto);
    op->setOperand(0, input);
    op->getResult(0).setType(type);
    return op;
  };
  if (auto gather = dyn_cast<shard::AllGatherOp>(first)) {
    // The concatenation goes as early as its inputs allow, so the gather
    // can start early too; the gather where its first member was.
    Operation *after = nullptr;
    Block *block = first->getBlock();
    SmallVector<Value> inputs;
    int64_t total = 0;
    for (Operation *m : members) {
      inputs.push_back(m->getOperand(0));
      total += cast<RankedTensorType>(inputs.back().getType()).getDimSize(0);
      if (Operation *def = inputs.back().getDefiningOp())
        if (Operation *a = block->findAncestorOpInBlock(*def))
          if (!after || after->isBeforeInBlock(a))
            after = a;
    }
    if (after)
      b.setInsertionPointAfter(after);
    else
      b.setInsertionPointToStart(block);
    Value cat = tensor::ConcatOp::create(b, loc, vec(total), 0, inputs);
    b.setInsertionPoint(first);
    Operation *merged = rebuild(gather, cat, vec(n * total));
    Value grid = tensor::ExpandShapeOp::create(b, loc, mat(total),
                                               merged->getResult(0), rows);
    int64_t offset = 0;
    for (Operation *m : members) {
      int64_t size =
          cast<RankedTensorType>(m->getOperand(0).getType()).getDimSize(0);
      SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0),
                                           b.getIndexAttr(offset)};
      SmallVector<OpFoldResult> sizes = {b.getIndexAttr(n),
                                         b.getIndexAttr(size)};
      SmallVector<OpFoldResult> strides = {b.getIndexAttr(1),
                                           b.getIndexAttr(1)};
      Value block = tensor::ExtractSliceOp::create(b, loc, mat(size), grid,
                                                   offsets, sizes, strides);
      Value flat =
          tensor::CollapseShapeOp::create(b, loc, vec(n * size), block, rows);
      m->getResult(0).replaceAllUsesWith(flat);
      offset += size;
    }
  } else {
    b.setInsertionPoint(last);
    bool scatter = isa<shard::ReduceScatterOp>(first);
    SmallVector<Value> parts;
    SmallVector<int64_t> sizes;
    int64_t total = 0;
    for (Operation *m : members) {
      auto t = cast<RankedTensorType>(m->getOperand(0).getType());
      Value v = m->getOperand(0);
      if (t.getRank() > 1) {
        v = tensor::CollapseShapeOp::create(b, loc, vec(t.getNumElements()),
                                            v, allDims(t.getRank()));
      }
      int64_t size = scatter ? t.getNumElements() / n : t.getNumElements();
      if (scatter)
        v = tensor::ExpandShapeOp::create(b, loc, mat(size), v, rows);
      parts.push_back(v);
      sizes.push_back(size);
      total += size;
    }
    Value input;
    if (scatter)
      input = tensor::CollapseShapeOp::create(
          b, loc, vec(n * total),
          tensor::ConcatOp::create(b, loc, mat(total), 1, parts), rows);
    else
      input = tensor::ConcatOp::create(b, loc, vec(total), 0, parts);
    Operation *merged = rebuild(first, input, vec(total));
    int64_t offset = 0;
    for (auto [m, size] : llvm::zip(members, sizes)) {
      SmallVector<OpFoldResult> offsets = {b.getIndexAttr(offset)};
      SmallVector<OpFoldResult> len = {b.getIndexAttr(size)};
      SmallVector<OpFoldResult> strides = {b.getIndexAttr(1)};
      Value v = tensor::ExtractSliceOp::create(
          b, loc, vec(size), merged->getResult(0), offsets, len, strides);
      auto t = cast<RankedTensorType>(m->getResult(0).getType());
      if (t.getRank() > 1) {
        v = tensor::ExpandShapeOp::create(b, loc, t, v, allDims(t.getRank()));
      }
      m->getResult(0).replaceAllUsesWith(v);
      offset += size;
    }
  }
  for (Operation *m : members)
    m->erase();
}

/// `bucket-bytes`: small collectives of one kind (and grid, axes and
/// element type) that follow each other, with no larger one of the kind
/// between them, merge into one of at most
/// `bucketBytes` full-size bytes, each member itself under it: one latency
/// and one hand-off to the communication thread instead of one each. A
/// gather joins a bucket if its input exists where the bucket's first
/// member is (the merged gather goes there); a reduction joins if nothing
/// reads an earlier member's result before it (the merged reduction goes
/// where its last member is). Returns how many collectives merged away.
unsigned bucketCollectives(Block &block, int64_t bucketBytes) {
  if (bucketBytes <= 0)
    return 0;
  struct Bucket {
    SmallVector<Operation *> members;
    double bytes = 0;
  };
  auto keyOf = [](Operation *op) {
    std::string key;
    llvm::raw_string_ostream os(key);
    auto [grid, axes] = gridOf(op);
    os << op->getName() << ' ' << grid << ' ' << axes << ' '
       << cast<RankedTensorType>(op->getOperand(0).getType())
              .getElementType();
    return key;
  };
  llvm::StringMap<Bucket> open;
  SmallVector<Bucket> done;
  auto close = [&](StringRef key) {
    auto it = open.find(key);
    if (it == open.end())
      return;
    if (it->second.members.size() > 1)
      done.push_back(std::move(it->second));
    open.erase(it);
  };
  SmallVector<Operation *> ops;
  for (Operation &op : block)
    if (isa<shard::AllGatherOp, shard::ReduceScatterOp, shard::AllReduceOp>(
            op))
      ops.push_back(&op);
  for (Operation *op : ops) {
    // A gather of one-element shards stays alone, and the run goes on past
    // it. In a bucket its result would be a column of the merged [ranks x
    // total] gather: every wider column block is copied when bufferized
    // (it cannot be collapsed), but a column of one collapses into a
    // strided vector, and a GEMM reading that falls off the runtime's GEMM
    // onto loops, which round differently from the unscheduled step's.
    if (isa<shard::AllGatherOp>(op) &&
        cast<RankedTensorType>(op->getOperand(0).getType())
                .getNumElements() == 1)
      continue;
    std::optional<double> bytes = bucketable(op);
    std::string key = keyOf(op);
    // A larger collective of the kind ends the run: buckets hold
    // collectives that follow each other.
    if (!bytes || *bytes >= double(bucketBytes)) {
      close(key);
      continue;
    }
    auto it = open.find(key);
    if (it != open.end()) {
      Bucket &bucket = it->second;
      bool fits = bucket.bytes + *bytes <= double(bucketBytes);
      if (fits && isa<shard::AllGatherOp>(op)) {
        // A second gather of an input (stage 3's regather) is not merged
        // with the first.
        for (Operation *m : bucket.members)
          if (m->getOperand(0) == op->getOperand(0))
            fits = false;
        Operation *firstMember = bucket.members.front();
        if (Operation *def = op->getOperand(0).getDefiningOp())
          if (Operation *a = inBlock(block, def))
            fits = fits && a->isBeforeInBlock(firstMember);
      } else if (fits) {
        for (Operation *m : bucket.members)
          for (Operation *user : m->getResult(0).getUsers())
            if (Operation *a = inBlock(block, user))
              if (a->isBeforeInBlock(op))
                fits = false;
      }
      if (fits) {
        bucket.members.push_back(op);
        bucket.bytes += *bytes;
        continue;
      }
      close(key);
    }
    open[key].members.push_back(op);
    open[key].bytes = *bytes;
  }
  SmallVector<std::string> keys;
  for (auto &entry : open)
    keys.push_back(entry.getKey().str());
  for (const std::string &key : keys)
    close(key);
  unsigned merged = 0;
  for (Bucket &bucket : done) {
    Operation *first = bucket.members.front();
    int64_t n = gridSize(first, gridOf(first).first);
    if (n <= 0)
      continue;
    mergeBucket(bucket.members, n);
    merged += bucket.members.size() - 1;
  }
  return merged;
}

/// The end of a parameter's gather chain: `v` is, through
/// materialize_in_destination into `dest` and reshapes or static slices, an
/// all-gather of a 1-D shard along axis 0. Fills `chain` with the ops from
/// the gather's user to `v` (in def order) and returns the gather.
shard::AllGatherOp gatherChain(Value v, Value dest,
                               SmallVectorImpl<Operation *> &chain,
                               bufferization::MaterializeInDestinationOp &m) {
  m = v.getDefiningOp<bufferization::MaterializeInDestinationOp>();
  if (m) {
    if (m.getDest() != dest)
      return {};
    v = m.getSource();
  }
  while (true) {
    if (auto gather = v.getDefiningOp<shard::AllGatherOp>()) {
      auto in = dyn_cast<RankedTensorType>(gather.getInput().getType());
      if (!in || in.getRank() != 1 || !in.hasStaticShape() ||
          gather.getGatherAxis().getZExtValue() != 0)
        return {};
      std::reverse(chain.begin(), chain.end());
      return gather;
    }
    Operation *def = v.getDefiningOp();
    if (!def || def->getNumOperands() != 1 || def->getNumResults() != 1 ||
        !isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             tensor::ExtractSliceOp>(def))
      return {};
    chain.push_back(def);
    v = def->getOperand(0);
  }
}

/// Whether `offset` is `process_linear_index on @grid` times `shard`.
bool isRankTimes(Value offset, FlatSymbolRefAttr grid, int64_t shard) {
  auto mul = offset.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return false;
  for (auto [a, b] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())}) {
    auto index = a.getDefiningOp<shard::ProcessLinearIndexOp>();
    std::optional<int64_t> c = getConstantIntValue(b);
    if (index && index.getGridAttr() == grid && c && *c == shard)
      return true;
  }
  return false;
}

/// Stage 2's parameter all-gathers move from the end of the step to the
/// start of the next one (`defer-gathers`): a parameter that the step
/// takes whole and returns as the all-gather of its updated shard is
/// taken and returned as that shard instead (zero.sharded), and gathered
/// again right before its first use, where the prefetch can hide it behind
/// the forward pass. The gather is exact, so every step computes what it
/// did. This rank's slice of the gathered parameter (the optimizer's
/// input) reads the shard itself. Defers the first `count` parameters of
/// deferrableParams(fn); returns how many moved.
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
SmallVector<Deferrable> deferrableParams(func::FuncOp fn) {
  SmallVector<Deferrable> found;
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return found;
  Block &block = fn.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
  if (!ret)
    return found;
  StringRef paramName = ZeroDialect::ParamAttrHelper::getNameStr();
  StringRef shardedName = ZeroDialect::ShardedAttrHelper::getNameStr();
  llvm::StringMap<unsigned> argOf;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (auto name = fn.getArgAttrOfType<StringAttr>(i, paramName))
      if (!fn.getArgAttr(i, shardedName))
        argOf.try_emplace(name.getValue(), i);
  for (unsigned r = 0; r < fn.getNumResults(); ++r) {
    auto name = fn.getResultAttrOfType<StringAttr>(r, paramName);
    if (!name || fn.getResultAttr(r, shardedName) || !argOf.count(name))
      continue;
    Deferrable d{r, fn.getArgument(argOf[name.getValue()]), {}, {}, {}};
    d.gather = gatherChain(ret.getOperand(r), d.arg, d.chain, d.m);
    if (!d.gather)
      continue;
    Value end = d.chain.empty() ? Value(d.gather.getResult())
                                : d.chain.back()->getResult(0);
    if (end.getType() != d.arg.getType())
      continue;
    found.push_back(std::move(d));
  }
  auto firstUse = [&](BlockArgument arg) -> Operation * {
    Operation *first = nullptr;
    for (OpOperand &use : arg.getUses())
      if (Operation *a = inBlock(block, use.getOwner()))
        if (!first || a->isBeforeInBlock(first))
          first = a;
    return first;
  };
  llvm::stable_sort(found, [&](const Deferrable &a, const Deferrable &b) {
    Operation *x = firstUse(a.arg), *y = firstUse(b.arg);
    return x && (!y || x->isBeforeInBlock(y));
  });
  return found;
}

unsigned deferParamGathers(func::FuncOp fn, ArrayRef<bool> which) {
  SmallVector<Deferrable> all = deferrableParams(fn), params;
  for (auto [i, d] : llvm::enumerate(all))
    if (i < which.size() && which[i])
      params.push_back(std::move(d));
  if (params.empty())
    return 0;
  Block &block = fn.getBody().front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  StringRef shardedName = ZeroDialect::ShardedAttrHelper::getNameStr();
  MLIRContext *ctx = fn.getContext();
  unsigned moved = 0;
  for (Deferrable &d : params) {
    unsigned r = d.result;
    BlockArgument arg = d.arg;
    shard::AllGatherOp gather = d.gather;
    ArrayRef<Operation *> chain = d.chain;
    bufferization::MaterializeInDestinationOp m = d.m;
    Value shardValue = gather.getInput();
    // The gather and its chain again, detached, from the argument.
    IRMapping map;
    map.map(shardValue, arg);
    Operation *newGather = gather->clone(map);
    SmallVector<Operation *> newChain;
    for (Operation *op : chain)
      newChain.push_back(op->clone(map));
    // The old ones go once the step returns the shard.
    ret->setOperand(r, shardValue);
    if (m && m->use_empty())
      m->erase();
    for (Operation *op : llvm::reverse(chain))
      if (op->use_empty())
        op->erase();
    if (gather->use_empty())
      gather->erase();
    // Before the first use of the whole parameter.
    Operation *first = nullptr;
    for (OpOperand &use : arg.getUses())
      if (Operation *a = inBlock(block, use.getOwner()))
        if (!first || a->isBeforeInBlock(first))
          first = a;
    OpBuilder builder(ctx);
    builder.setInsertionPoint(first ? first : ret.getOperation());
    builder.insert(newGather);
    for (Operation *op : newChain)
      builder.insert(op);
    Value whole =
        newChain.empty() ? newGather->getResult(0) : newChain.back()->getResult(0);
    arg.replaceUsesWithIf(whole, [&](OpOperand &use) {
      return use.getOwner() != newGather;
    });
    arg.setType(shardValue.getType());
    fn.setArgAttr(arg.getArgNumber(), shardedName, UnitAttr::get(ctx));
    fn.setResultAttr(r, shardedName, UnitAttr::get(ctx));
    // This rank's slice of the gathered parameter is the shard.
    Value gathered = newGather->getResult(0);
    SmallVector<Value> views = {gathered};
    for (Operation *user : whole.getUsers())
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(user))
        if (collapse.getType() == gathered.getType() && !newChain.empty() &&
            isa<tensor::ExpandShapeOp>(newChain.back()) &&
            newChain.back()->getOperand(0) == gathered)
          views.push_back(collapse.getResult());
    auto shardType = cast<RankedTensorType>(shardValue.getType());
    for (Value view : views)
      for (Operation *user : llvm::make_early_inc_range(view.getUsers())) {
        auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
        if (!slice || slice.getType() != shardType ||
            slice.getMixedOffsets().size() != 1 ||
            !slice.getOffsets().size() ||
            !isRankTimes(slice.getOffsets()[0],
                         cast<shard::AllGatherOp>(newGather).getGridAttr(),
                         shardType.getDimSize(0)) ||
            !isConstantIntValue(slice.getMixedStrides()[0], 1))
          continue;
        slice.replaceAllUsesWith(arg);
        slice->erase();
      }
    for (Value view : llvm::drop_begin(views))
      if (view.use_empty())
        view.getDefiningOp()->erase();
    ++moved;
  }
  if (moved) {
    SmallVector<Type> results(ret.getOperandTypes());
    fn.setType(FunctionType::get(ctx, block.getArgumentTypes(), results));
  }
  return moved;
}

int64_t gridSize(Operation *op, FlatSymbolRefAttr grid) {
  auto gridOp = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, grid);
  if (!gridOp)
    return 0;
  int64_t n = 1;
  for (int64_t d : gridOp.getShape())
    n *= d;
  return n;
}

/// Bytes one rank sends in a collective of `kind` on `n` ranks, by the
/// runtime's own formula (runtime.h, zrt_collective_bytes_sent; `count` is
/// the entry point's count argument).
double bytesSent(zrt_collective kind, int64_t count, int64_t n, double b) {
  return double(zrt_collective_bytes_sent(kind, n, count, int64_t(b)));
}

/// Link seconds of a collective left blocking (a scalar or max
/// all-reduce): what this rank sends, by runtime.h's formulas; 0 for other
/// ops.
double blockingLinkSeconds(Operation *op, const CostModel &model) {
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
  return model.link(t.getRank() == 0
                        ? bytesSent(ZRT_SCALAR_ALL_REDUCE, 1, n, b)
                        : bytesSent(ZRT_ALL_REDUCE, t.getNumElements(), n, b));
}

class Scheduler {
public:
  Scheduler(Block &block, const CostModel &model)
      : block(block), model(model) {}

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

  double cost(Operation *op) {
    auto [it, inserted] = costs.try_emplace(op, 0.0);
    if (inserted)
      it->second = model.compute(op);
    return it->second;
  }

  Block &block;
  const CostModel &model;
  std::vector<Collective> collectives;
  llvm::DenseMap<Operation *, Collective *> byStart, byWait;
  llvm::DenseMap<Operation *, double> costs;
  // Of the last simulation:
  llvm::DenseMap<Operation *, double> beginOf, doneOf, stallOf;
};

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
        !isRuntimeFloat(in.getElementType()))
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
      bytes = bytesSent(ZRT_ALL_GATHER, in.getNumElements(), n, b);
    } else if (auto scatter = dyn_cast<shard::ReduceScatterOp>(op)) {
      if (in.getRank() != 1 || scatter.getScatterAxis().getZExtValue() != 0 ||
          scatter.getReduction() != shard::ReductionKind::Sum)
        continue;
      n = gridSize(op, scatter.getGridAttr());
      kind = Kind::ReduceScatter;
      bytes = bytesSent(ZRT_REDUCE_SCATTER, out.getNumElements(), n, b);
    } else {
      auto reduce = cast<shard::AllReduceOp>(op);
      if (reduce.getReduction() != shard::ReductionKind::Sum || in != out)
        continue;
      n = gridSize(op, reduce.getGridAttr());
      kind = Kind::AllReduce;
      bytes = n > 0 ? bytesSent(ZRT_ALL_REDUCE, in.getNumElements(), n, b) : 0;
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
  beginOf.clear();
  doneOf.clear();
  stallOf.clear();
  double t = 0, linkFree = 0;
  // Consecutive ops other than contractions make one compute event.
  Event region{false, "compute", 0, 0, 0};
  auto flushRegion = [&] {
    if (events && region.end > region.begin)
      events->push_back(region);
    region = Event{false, "compute", t, t, 0};
  };
  for (Operation &op : block) {
    beginOf[&op] = t;
    if (Collective *c = byStart.lookup(&op)) {
      double begin = std::max(t, linkFree);
      linkFree = begin + c->seconds;
      doneOf[&op] = linkFree;
      if (events)
        events->push_back(
            {true, kindName(c->kind).str(), begin, linkFree, c->bytes});
      continue;
    }
    if (Collective *c = byWait.lookup(&op)) {
      double done = doneOf.lookup(c->start);
      if (done > t) {
        flushRegion();
        stallOf[&op] = done - t;
        if (events)
          events->push_back(
              {false, ("wait " + kindName(c->kind)).str(), t, done, 0});
        t = done;
        region = Event{false, "compute", t, t, 0};
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
      region = Event{false, "compute", t, t, 0};
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
      region = Event{false, "compute", t, t, 0};
    } else {
      t += d;
      region.end = t;
    }
  }
  flushRegion();
  return t;
}

double Scheduler::blockingTime() {
  double t = 0;
  for (Operation &op : block)
    if (Collective *c = byStart.lookup(&op))
      t += c->seconds;
    else if (!byWait.count(&op))
      t += cost(&op) + blockingLinkSeconds(&op, model);
  return t;
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
      double stall = stallOf.lookup(c.wait);
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
    double ready = doneOf.lookup(c->start) + 0.5 * c->seconds;
    Operation *cur = c->start->getNextNode();
    while (cur != latest[i] && beginOf.lookup(cur) < ready)
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
      double stall = stallOf.lookup(c->wait);
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

/// The timeline as Chrome trace-event JSON: process `pid` is the function,
/// thread 0 compute, thread 1 the link.
void appendTrace(llvm::json::Array &trace, int pid, StringRef name,
                 const std::vector<Event> &events) {
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
  for (const Event &e : events) {
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

  void runOnOperation() override {
    ModuleOp module = getOperation();
    predictor.reset();
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
      return signalPassFailure();
    for (auto [value, name] :
         {std::pair<double, StringRef>{gemmGflops, "gemm-gflops"},
          {vectorGflops, "vector-gflops"},
          {memoryGbps, "memory-gbps"},
          {linkGbps, "link-gbps"}})
      if (!(value > 0) || std::isinf(value)) {
        module.emitError() << "zero-schedule: " << name
                           << " must be a positive finite rate, got " << value;
        return signalPassFailure();
      }
    if (maxInflightReductions < 1) {
      module.emitError("zero-schedule: max-inflight-reductions must be at "
                       "least 1");
      return signalPassFailure();
    }
    if (!(linkLatencyUs >= 0) || std::isinf(linkLatencyUs)) {
      module.emitError() << "zero-schedule: link-latency-us must be >= 0, got "
                         << linkLatencyUs;
      return signalPassFailure();
    }
    CostModel model{gemmGflops * 1e9, vectorGflops * 1e9, memoryGbps * 1e9,
                    linkGbps * 1e9, linkLatencyUs * 1e-6};
    if (bucketBytes < 0) {
      module.emitError() << "zero-schedule: bucket-bytes must be >= 0 (0: "
                            "no buckets), got "
                         << static_cast<int64_t>(bucketBytes);
      return signalPassFailure();
    }
    if (memoryBudget < 0) {
      module.emitError() << "zero-schedule: memory-budget must be >= 0 "
                            "bytes (0: none), got "
                         << static_cast<int64_t>(memoryBudget);
      return signalPassFailure();
    }

    // Deferring the gathers holds the shards next to the gathered
    // parameters: with a budget, a function it pushes over keeps its
    // gathers at the end.
    OwningOpRef<ModuleOp> undeferred;
    llvm::StringMap<SmallVector<bool>> chosen;
    if (deferGathers) {
      if (memoryBudget > 0)
        undeferred = module.clone();
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
    }

    // The unscheduled step: the budget's floor, and what a function falls
    // back to when no schedule fits.
    OwningOpRef<ModuleOp> unscheduled;
    if (memoryBudget > 0) {
      unscheduled = module.clone();
      SmallVector<StringRef> names;
      for (auto func : unscheduled->getOps<func::FuncOp>())
        if (!func.isExternal() && isStepFunction(func))
          names.push_back(func.getSymName());
      FailureOr<llvm::StringMap<Peak>> peaks =
          predictPeaks(*unscheduled, names);
      if (failed(peaks))
        return signalPassFailure();
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
          return signalPassFailure();
        before = std::move(*p);
      }
      bool over = false, restored = false;
      for (auto &[name, peak] : *peaks)
        if (peak.bytes > memoryBudget) {
          if (undeferred) {
            const Peak &b = before.find(name)->second;
            if (b.bytes <= memoryBudget) {
              // Keep the longest prefix, in order of first use, of the
              // deferred gathers whose blocking step fits; the others
              // gather at the end of the step again. Deferring holds a
              // parameter's shard beside its gathered copy, so the peak
              // grows with the prefix.
              SmallVector<bool> which = chosen.lookup(name);
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
                OwningOpRef<ModuleOp> trial = undeferred->clone();
                deferParamGathers(trial->lookupSymbol<func::FuncOp>(name),
                                  prefix(mid));
                FailureOr<llvm::StringMap<Peak>> p =
                    predictPeaks(*trial, {name});
                if (failed(p))
                  return signalPassFailure();
                if (p->find(name)->second.bytes <= memoryBudget) {
                  fits = mid;
                  best = std::move(trial);
                } else {
                  tooMany = mid;
                }
              }
              auto func = module.lookupSymbol<func::FuncOp>(name);
              ModuleOp source = best ? *best : *undeferred;
              Operation *kept = OpBuilder(func).clone(
                  *source.lookupSymbol<func::FuncOp>(name));
              func.erase();
              if (remarks)
                kept->emitRemark()
                    << "zero-schedule: memory-budget: " << fits << " of "
                    << order.size()
                    << " deferred gathers kept, the others at the end of "
                       "the step";
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
        return signalPassFailure();
      if (restored)
        unscheduled = module.clone();
    }

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

    llvm::json::Array trace;
    int pid = 0;
    for (Scheduled &s : scheduled) {
      if (!s.scheduler)
        continue;
      std::vector<Event> events;
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
      appendTrace(trace, pid++, s.func.getSymName(), events);
    }
    if (!timeline.empty()) {
      llvm::json::Object root{{"traceEvents", std::move(trace)},
                              {"displayTimeUnit", "ms"}};
      if (llvm::Error e = writeOutputFile(timeline, [&](llvm::raw_ostream &os) {
            os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)))
               << "\n";
          })) {
        module.emitError() << "zero-schedule: " << llvm::toString(std::move(e));
        return signalPassFailure();
      }
    }
  }
};

} // namespace
