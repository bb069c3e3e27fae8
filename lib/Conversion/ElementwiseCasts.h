//===- ElementwiseCasts.h - Linalg ops that only convert floats -*- C++ -*-===//
//
// Shared by zero-linalg-to-runtime's bf16-results and zero-pad-gemm-rows,
// which must agree on which ops a GEMM absorbs: the elementwise
// linalg.generic whose whole body converts its one input into its one init
// (arith.truncf rounding f32 to bf16, arith.extf widening bf16 to f32).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_CONVERSION_ELEMENTWISECASTS_H
#define ZERO_LIB_CONVERSION_ELEMENTWISECASTS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::zero {

/// The one op of `op`'s body if `op` is a linalg.generic with one input, one
/// init, no reduction loops and an identity map for the init, whose body is
/// a `CastOp` of the input's element yielded as the result, and the cast
/// goes from `from` to `to`; null otherwise. The input's map may be any
/// (a broadcast, for instance): callers that need it identity check it.
template <typename CastOp>
CastOp getSoleElementwiseCast(linalg::GenericOp op, Type from, Type to) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return {};
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 2)
    return {};
  auto cast = dyn_cast<CastOp>(body.front());
  auto yield = dyn_cast<linalg::YieldOp>(body.back());
  if (!cast || !yield || cast.getIn() != body.getArgument(0) ||
      cast.getIn().getType() != from || cast.getType() != to ||
      yield.getNumOperands() != 1 || yield.getOperand(0) != cast.getResult())
    return {};
  return cast;
}

/// Whether `op` only rounds its one f32 input into its one bf16 init,
/// element for element (both maps identity).
inline bool isBf16Rounding(linalg::GenericOp op) {
  Builder b(op.getContext());
  return getSoleElementwiseCast<arith::TruncFOp>(op, b.getF32Type(),
                                                 b.getBF16Type()) &&
         op.getMatchingIndexingMap(op.getDpsInputOperand(0)).isIdentity();
}

/// Whether `op` only widens its one bf16 input (any indexing map: a
/// broadcast) into its one f32 init.
inline bool isBf16Widening(linalg::GenericOp op) {
  Builder b(op.getContext());
  return static_cast<bool>(getSoleElementwiseCast<arith::ExtFOp>(
      op, b.getBF16Type(), b.getF32Type()));
}

} // namespace mlir::zero

#endif // ZERO_LIB_CONVERSION_ELEMENTWISECASTS_H
