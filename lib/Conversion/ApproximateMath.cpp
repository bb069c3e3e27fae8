//===- ApproximateMath.cpp - f32 math ops to polynomial approximations ----===//
//
// zero-approximate-math: upstream MLIR ships the polynomial approximations
// (mlir/Dialect/Math/Transforms/Passes.h) but registers them only as a test
// pass, so this pass is the thin wrapper a pipeline can name. It adds no
// pattern of its own.
//
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#define DEBUG_TYPE "zero-approximate-math"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROAPPROXIMATEMATHPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

/// The math ops of a training step that libm would otherwise compute one
/// element at a time: GELU's tanh, softmax's exp, cross-entropy's log.
constexpr const char *kDefaultFunctions[] = {"tanh",  "exp",   "expm1",
                                             "log",   "log1p", "erf"};

/// Every name upstream's predicate is asked about.
constexpr const char *kApproximated[] = {
    "acos", "asin", "atan", "atan2", "cbrt", "cos",   "erf",  "erfc",
    "exp",  "expm1", "log", "log1p", "log2", "rsqrt", "sin",  "tanh"};

struct ZeroApproximateMathPass
    : public zero::impl::ZeroApproximateMathPassBase<ZeroApproximateMathPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    llvm::StringSet<> names;
    if (functions.empty())
      names.insert(std::begin(kDefaultFunctions), std::end(kDefaultFunctions));
    for (const std::string &name : functions) {
      if (!llvm::is_contained(kApproximated, name))
        return emitError(UnknownLoc::get(ctx))
               << "zero-approximate-math: no approximation of math." << name
               << " (functions= takes "
               << llvm::join(std::begin(kApproximated), std::end(kApproximated),
                             ", ")
               << ")";
      names.insert(name);
    }
    RewritePatternSet set(ctx);
    // Only the approximations: upstream's f32 expansion patterns would also
    // widen f16/bf16 math to f32, which is the type lowering's business.
    populateMathPolynomialApproximationPatterns(
        set, [&](StringRef opName) {
          // Upstream asks with the full operation name, `math.tanh`.
          return opName.consume_front("math.") && names.contains(opName);
        });
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    // The patterns match f32 scalars and vectors only; f64 stays libm's.
    if (failed(applyPatternsGreedily(getOperation(), patterns)))
      return signalPassFailure();
  }

private:
  FrozenRewritePatternSet patterns;
};

} // namespace
