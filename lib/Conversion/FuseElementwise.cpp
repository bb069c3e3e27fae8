//===- FuseElementwise.cpp - Upstream elementwise fusion, matmuls kept ----===//
//
// zero-fuse-elementwise: upstream's elementwise fusion of linalg.generic
// chains on tensors, with a control function upstream's own pass does not
// take: producers fuse only into their one user and never into a
// contraction, and matmuls, fills and transposes stay named ops for the
// GEMM lowering.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "zero-fuse-elementwise"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROFUSEELEMENTWISEPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

/// Whether `op` runs on the host next to the device (zero-offload's
/// optimizer=host): such an op keeps its form and its mark, and fuses with
/// nothing, since the rewrites would build new ops without the mark.
bool onHost(Operation *op) {
  auto space = op->getAttrOfType<StringAttr>(
      zero::ZeroDialect::SpaceAttrHelper::getNameStr());
  return space && space.getValue() == "host";
}

/// Named ops worth generalizing for fusion: elementwise ones, broadcasts,
/// maps and reductions. Contractions, fills and transposes stay as they are
/// (the GEMM lowering and zero-fold-transposes match them by name).
bool shouldGeneralize(linalg::LinalgOp op) {
  if (onHost(op))
    return false;
  if (isa<linalg::GenericOp, linalg::FillOp, linalg::TransposeOp,
          linalg::CopyOp>(op.getOperation()) ||
      linalg::isaContractionOpInterface(op))
    return false;
  if (!op.hasPureTensorSemantics())
    return false;
  return isa<linalg::BroadcastOp, linalg::MapOp, linalg::ReduceOp>(
             op.getOperation()) ||
         linalg::isElementwise(op);
}

/// Fuse the producer of `operand` into its consumer only when the consumer
/// is the producer's one user (no recomputation) and no contraction.
bool controlFusion(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  if (!producer || !consumer)
    return false;
  if (linalg::isaContractionOpInterface(consumer) || onHost(producer) ||
      onHost(consumer))
    return false;
  for (Operation *user : producer->getUsers())
    if (user != consumer.getOperation())
      return false;
  return true;
}

struct ZeroFuseElementwisePass
    : public zero::impl::ZeroFuseElementwisePassBase<ZeroFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::LinalgOp> named;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (shouldGeneralize(op))
        named.push_back(op);
    });
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      if (succeeded(linalg::generalizeNamedOp(rewriter, op)))
        ++numGeneralized;
    }

    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, controlFusion);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
