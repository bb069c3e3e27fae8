//===- ExpandBf16.cpp - bf16 conversions as integer arithmetic ------------===//
//
// zero-expand-bf16: upstream's bf16 expansion patterns on their own, so
// that a step converting to bf16 needs no compiler-rt builtin on CPUs
// without a conversion instruction (Passes.td says more).
//
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROEXPANDBF16PASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

struct ZeroExpandBf16Pass
    : public zero::impl::ZeroExpandBf16PassBase<ZeroExpandBf16Pass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
