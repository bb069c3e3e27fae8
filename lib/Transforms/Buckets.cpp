//===- Buckets.cpp - Small collectives merged into buckets ----------------===//

#include "BlockMotion.h"

#include "zero/Analysis/Collectives.h"
#include "zero/Analysis/CommTimeline.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Transforms/Transforms.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::zero;

namespace {

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

/// A collective bucketCollectives may merge: a 1-D all-gather or sum
/// reduce-scatter along axis 0, or a sum all-reduce of at least one
/// dimension, of statically shaped f32, f64 or bf16; its full-size bytes.
std::optional<double> bucketable(Operation *op) {
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!in || !out || !in.hasStaticShape() || !out.hasStaticShape() ||
      !isCollectiveElementType(in.getElementType()))
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

} // namespace

bool mlir::zero::sameSource(Value a, Value b) {
  if (a == b)
    return true;
  auto ca = a.getDefiningOp<tensor::ConcatOp>();
  auto cb = b.getDefiningOp<tensor::ConcatOp>();
  return ca && cb && ca.getDim() == cb.getDim() &&
         llvm::equal(ca.getInputs(), cb.getInputs());
}

unsigned mlir::zero::bucketCollectives(Block &block, int64_t bucketBytes) {
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
