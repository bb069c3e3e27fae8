//===- Collectives.cpp - What the runtime runs for a collective -----------===//

#include "zero/Analysis/Collectives.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/runtime.h"

#include "mlir/IR/BuiltinTypes.h"

#include <limits>

using namespace mlir;
using namespace mlir::zero;

uint32_t RuntimeCollective::descriptor() const {
  return zrt_make_collective_op(static_cast<zrt_collective>(kind),
                                static_cast<zrt_reduction>(reduction),
                                static_cast<zrt_element_type>(elementType));
}

bool mlir::zero::isCollectiveElementType(Type type) {
  return type.isF32() || type.isF64() || type.isBF16();
}

std::optional<RuntimeCollective>
mlir::zero::getRuntimeCollective(Operation *op) {
  if (!isa<AllGatherOp, ReduceScatterOp, AllReduceOp, AllGatherStartOp,
           ReduceScatterStartOp, AllReduceStartOp>(op) ||
      op->getNumOperands() != 2)
    return std::nullopt;
  auto in = dyn_cast<MemRefType>(op->getOperand(0).getType());
  auto out = dyn_cast<MemRefType>(op->getOperand(1).getType());
  if (!in || !out)
    return std::nullopt;
  RuntimeCollective c;
  c.started = isa<AllGatherStartOp, ReduceScatterStartOp, AllReduceStartOp>(op);
  Type elt = in.getElementType();
  if (!isCollectiveElementType(elt))
    c.elementType = -1;
  else if (elt.isF32())
    c.elementType = ZRT_ELEMENT_F32;
  else if (elt.isF64())
    c.elementType = ZRT_ELEMENT_F64;
  else if (elt.isBF16())
    c.elementType = ZRT_ELEMENT_BF16;
  if (c.elementType >= 0)
    c.elementBytes =
        zrt_element_bytes(static_cast<zrt_element_type>(c.elementType));
  if (isa<AllGatherOp, AllGatherStartOp>(op)) {
    c.kind = ZRT_ALL_GATHER;
    c.reduction = ZRT_REDUCE_NONE;
    c.count = in.getNumElements();
  } else if (isa<ReduceScatterOp, ReduceScatterStartOp>(op)) {
    c.kind = ZRT_REDUCE_SCATTER;
    c.reduction = ZRT_REDUCE_SUM;
    c.count = out.getNumElements();
  } else {
    c.kind = ZRT_ALL_REDUCE;
    c.reduction = ZRT_REDUCE_SUM;
    if (auto reduce = dyn_cast<AllReduceOp>(op))
      c.reduction = reduce.getReduction() == shard::ReductionKind::Max
                        ? ZRT_REDUCE_MAX
                        : ZRT_REDUCE_SUM;
    c.count = in.getNumElements();
    // A rank-0 f32 or f64 (the loss, partial norms) goes by value; a bf16
    // scalar has no by-value form (C has no bf16 type): it is an
    // all-reduce of one element.
    if (!c.started && in.getRank() == 0 &&
        (c.elementType == ZRT_ELEMENT_F32 || c.elementType == ZRT_ELEMENT_F64)) {
      c.kind = ZRT_SCALAR_ALL_REDUCE;
      c.scalar = true;
    }
  }
  return c;
}

SmallVector<int64_t, 2>
mlir::zero::commScratchPieces(const RuntimeCollective &c, int64_t worldSize) {
  if (worldSize <= 1 || c.elementBytes <= 0)
    return {};
  int64_t pieces[2] = {0, 0};
  // (A hand-written zero.world_size or shape may be anything: an overflow
  // counts as the largest size, which the sums then refuse.)
  int num = zrt_comm_scratch(static_cast<zrt_collective>(c.kind), worldSize,
                             c.count, c.elementBytes, ZRT_COMM_BUCKET_BYTES,
                             pieces);
  if (num < 0)
    return {std::numeric_limits<int64_t>::max()};
  return SmallVector<int64_t, 2>(ArrayRef<int64_t>(pieces, num));
}
