//===- SplitDeallocs.cpp - One deallocation per distinct allocation -------===//
//
// zero-split-deallocs: the linear-time case of upstream
// buffer-deallocation-simplification's split. Upstream decides that two
// operands of a bufferization.dealloc do not alias by querying alias
// analysis for every pair; on the one deallocation that ends a deep model's
// step (thousands of operands) that is the largest superlinear cost of the
// compile. Distinct memref.alloc results owned at the same point are
// distinct buffers, which needs no query.
//
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROSPLITDEALLOCSPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

/// Whether every operand of `dealloc` is the result of its own
/// memref.alloc, and it retains nothing: then no two operands alias and
/// each is freed under its own condition alone.
bool operandsAreDistinctAllocations(bufferization::DeallocOp dealloc) {
  if (!dealloc.getRetained().empty() || dealloc.getMemrefs().size() < 2)
    return false;
  llvm::SmallDenseSet<Value, 64> seen;
  for (Value memref : dealloc.getMemrefs())
    if (!memref.getDefiningOp<memref::AllocOp>() || !seen.insert(memref).second)
      return false;
  return true;
}

struct ZeroSplitDeallocsPass
    : public zero::impl::ZeroSplitDeallocsPassBase<ZeroSplitDeallocsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> splits;
    getOperation().walk([&](bufferization::DeallocOp dealloc) {
      if (operandsAreDistinctAllocations(dealloc))
        splits.push_back(dealloc);
    });
    for (bufferization::DeallocOp dealloc : splits) {
      OpBuilder b(dealloc);
      for (auto [memref, condition] :
           llvm::zip(dealloc.getMemrefs(), dealloc.getConditions()))
        bufferization::DeallocOp::create(b, dealloc.getLoc(), memref,
                                         condition, ValueRange());
      dealloc.erase();
    }
  }
};

} // namespace
