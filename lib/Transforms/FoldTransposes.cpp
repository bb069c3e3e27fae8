//===- FoldTransposes.cpp - Transposes into matmul indexing maps ----------===//
//
// zero-fold-transposes: a matmul operand produced by a linalg.transpose of
// its two matrix dimensions is read through the transposed indexing map
// instead. Upstream has no such fold that keeps the op a linalg.matmul (its
// elementwise fusion makes a linalg.generic of it, which the GEMM lowering
// cannot see as a matmul), hence this pass.
//
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "zero-fold-transposes"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROFOLDTRANSPOSESPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

/// Whether `perm` swaps the last two of its dimensions and keeps the others
/// (the batch dimension of batch_matmul) in place.
bool swapsLastTwo(ArrayRef<int64_t> perm) {
  int64_t n = perm.size();
  if (n < 2 || perm[n - 2] != n - 1 || perm[n - 1] != n - 2)
    return false;
  for (int64_t i = 0; i + 2 < n; ++i)
    if (perm[i] != i)
      return false;
  return true;
}

/// `map` with its last two results swapped.
AffineMap swapLastTwoResults(AffineMap map) {
  SmallVector<AffineExpr> results(map.getResults());
  std::swap(results[results.size() - 2], results.back());
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), results,
                        map.getContext());
}

template <typename MatmulOpTy>
struct FoldTransposeIntoMatmul : public OpRewritePattern<MatmulOpTy> {
  FoldTransposeIntoMatmul(MLIRContext *ctx, llvm::Statistic &folded)
      : OpRewritePattern<MatmulOpTy>(ctx), folded(folded) {}

  LogicalResult matchAndRewrite(MatmulOpTy op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not on tensors");
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> inputs(op.getDpsInputs());
    bool changed = false;
    for (unsigned i = 0; i < 2; ++i) {
      auto transpose = inputs[i].getDefiningOp<linalg::TransposeOp>();
      // The operand's map must name the two matrix dimensions (no
      // broadcast): swapping its last two results is then the transpose.
      if (!transpose || !swapsLastTwo(transpose.getPermutation()) ||
          maps[i].getNumResults() !=
              cast<ShapedType>(inputs[i].getType()).getRank())
        continue;
      inputs[i] = transpose.getInput();
      maps[i] = swapLastTwoResults(maps[i]);
      changed = true;
      ++folded;
    }
    if (!changed)
      return rewriter.notifyMatchFailure(op, "no transposed operand");
    LLVM_DEBUG(llvm::dbgs() << "folding transposes into " << op << "\n");
    rewriter.modifyOpInPlace(op, [&] {
      op->setOperand(0, inputs[0]);
      op->setOperand(1, inputs[1]);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }

  llvm::Statistic &folded;
};

struct ZeroFoldTransposesPass
    : public zero::impl::ZeroFoldTransposesPassBase<ZeroFoldTransposesPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldTransposeIntoMatmul<linalg::MatmulOp>,
                 FoldTransposeIntoMatmul<linalg::BatchMatmulOp>>(&getContext(),
                                                                 numFolded);
    // The greedy driver also erases the transposes left without users.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
