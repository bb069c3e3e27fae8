//===- FuseElementwise.cpp - Upstream elementwise fusion, matmuls kept ----===//
//
// zero-fuse-elementwise: upstream's elementwise fusion of linalg.generic
// chains on tensors, with a control function upstream's own pass does not
// take: producers fuse into their one user, or into all of their users when
// they are cheap to compute again and that holds no more memory, never into
// a contraction; matmuls, fills and transposes stay named ops for the GEMM
// lowering.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseCasts.h"
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

/// Operations (besides the yield, indices and constants) a producer with
/// several users may have to be computed again in each of them.
constexpr unsigned kMaxRecomputedOps = 4;

/// Whether `producer` is cheap to compute again in each of its users and
/// doing so holds no more memory: one result, a small body, and one input
/// the size of its result (the others broadcast, lower in rank), so that
/// the input its users then read lives on in place of a result as large.
bool recomputable(linalg::GenericOp producer, bool castsFree) {
  if (producer.getNumResults() != 1 ||
      producer.getNumLoops() != producer.getNumParallelLoops())
    return false;
  // Indices and constants cost nothing to compute again (a causal mask's
  // comparison of two indices counts once).
  unsigned ops = 0;
  for (Operation &op : producer.getBody()->without_terminator())
    if (!isa<linalg::IndexOp>(op) && !op.hasTrait<OpTrait::ConstantLike>() &&
        !(castsFree && isa<arith::ExtFOp, arith::TruncFOp>(op)))
      ++ops;
  if (ops > kMaxRecomputedOps)
    return false;
  unsigned rank = producer.getNumLoops(), full = 0;
  Type result = getElementTypeOrSelf(producer.getResult(0).getType());
  for (OpOperand *input : producer.getDpsInputOperands()) {
    AffineMap map = producer.getMatchingIndexingMap(input);
    if (map.getNumResults() == rank) {
      // Not wider than the result (a rounding to bf16 stays: its f32 input
      // would live on in place of half as many bytes).
      Type element = getElementTypeOrSelf(input->get().getType());
      if (!map.isPermutation() || !element.isIntOrFloat() ||
          !result.isIntOrFloat() ||
          element.getIntOrFloatBitWidth() > result.getIntOrFloatBitWidth())
        return false;
      ++full;
    }
  }
  return full == 1;
}

/// Whether `op` only rounds a contraction's f32 result to bf16: with
/// bf16-gemm-results it stays, for zero-linalg-to-runtime's bf16-results to
/// make the GEMM write the bf16 result itself.
bool isGemmRounding(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !zero::isBf16Rounding(generic))
    return false;
  auto source =
      generic.getDpsInputs()[0].getDefiningOp<linalg::LinalgOp>();
  return source && linalg::isaContractionOpInterface(source);
}

/// Fuse the producer of `operand` into its consumer, no contraction, when
/// the consumer is the producer's one user, or when the producer is
/// recomputable and fuses into every one of its users, so that its result
/// is never written (a softmax's scaled scores, read by the row maximum
/// and the exponentials; the exponentials, read by the row sum and the
/// division: each a pass over the score matrix saved).
bool controlFusion(OpOperand *operand, bool bf16GemmResults) {
  Operation *producer = operand->get().getDefiningOp();
  auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  if (!producer || !consumer)
    return false;
  if (bf16GemmResults && isGemmRounding(producer))
    return false;
  if (linalg::isaContractionOpInterface(consumer) || onHost(producer) ||
      onHost(consumer))
    return false;
  if (llvm::all_of(producer->getUsers(), [&](Operation *user) {
        return user == consumer.getOperation();
      }))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic || !recomputable(generic, bf16GemmResults))
    return false;
  for (OpOperand &use : producer->getUses()) {
    auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!user || linalg::isaContractionOpInterface(user) || onHost(user) ||
        !user.isDpsInput(&use) || !linalg::areElementwiseOpsFusable(&use))
      return false;
  }
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
    bool bf16Gemm = bf16GemmResults;
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [bf16Gemm](OpOperand *operand) {
          return controlFusion(operand, bf16Gemm);
        });
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
