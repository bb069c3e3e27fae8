//===- FlopCount.cpp - Static FLOP count of a function --------------------===//
//
// Implements the counting rule documented in FlopCount.h.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/FlopCount.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

static bool hasFloatElementType(Type type) {
  return isa<FloatType>(getElementTypeOrSelf(type));
}

bool mlir::zero::isFloatingPointOp(Operation *op) {
  Dialect *dialect = op->getDialect();
  if (!dialect || !isa<arith::ArithDialect, math::MathDialect>(dialect))
    return false;
  if (isa<arith::SelectOp, CastOpInterface>(op))
    return false;
  return llvm::any_of(op->getOperandTypes(), hasFloatElementType);
}

namespace {
/// Accumulates counts with overflow checks; the first error wins.
class FlopCounter {
public:
  FailureOr<int64_t> countBlock(Block &block);

private:
  FailureOr<int64_t> countOp(Operation *op);
  FailureOr<int64_t> countLinalg(linalg::LinalgOp op);
  FailureOr<int64_t> countFor(scf::ForOp op);

  static FailureOr<int64_t> mul(Operation *op, int64_t a, int64_t b) {
    int64_t r;
    if (llvm::MulOverflow(a, b, r))
      return op->emitError()
             << "FLOP count of '" << op->getName() << "' overflows int64";
    return r;
  }
  static FailureOr<int64_t> add(Operation *op, int64_t a, int64_t b) {
    int64_t r;
    if (llvm::AddOverflow(a, b, r))
      return op->emitError()
             << "FLOP count of '" << op->getName() << "' overflows int64";
    return r;
  }
};
} // namespace

FailureOr<int64_t> FlopCounter::countBlock(Block &block) {
  int64_t total = 0;
  for (Operation &op : block) {
    FailureOr<int64_t> n = countOp(&op);
    if (failed(n))
      return failure();
    FailureOr<int64_t> sum = add(&op, total, *n);
    if (failed(sum))
      return failure();
    total = *sum;
  }
  return total;
}

FailureOr<int64_t> FlopCounter::countOp(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return countLinalg(linalgOp);
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return countFor(forOp);
  if (isa<CallOpInterface>(op))
    return op->emitError("cannot count FLOPs across a call; inline it first");
  if (isa_and_nonnull<linalg::LinalgDialect>(op->getDialect()) &&
      !isa<linalg::YieldOp, linalg::IndexOp>(op))
    return op->emitError("cannot count FLOPs of a linalg op that is not "
                         "structured (no LinalgOp interface)");
  if (op->getNumRegions() != 0)
    return op->emitError("cannot count FLOPs of an op with regions other "
                         "than linalg structured ops and scf.for");
  return zero::isFloatingPointOp(op) ? 1 : 0;
}

std::optional<int64_t> mlir::zero::linalgFlops(Operation *operation) {
  auto op = dyn_cast<linalg::LinalgOp>(operation);
  if (!op)
    return std::nullopt;
  int64_t iterations = 1;
  for (int64_t range : op.getStaticLoopRanges())
    if (ShapedType::isDynamic(range) ||
        llvm::MulOverflow(iterations, range, iterations))
      return std::nullopt;
  int64_t perIteration = 0;
  for (Operation &inner : *op.getBlock()) {
    if (inner.getNumRegions() != 0)
      return std::nullopt;
    if (zero::isFloatingPointOp(&inner))
      ++perIteration;
  }
  int64_t flops;
  if (llvm::MulOverflow(iterations, perIteration, flops))
    return std::nullopt;
  return flops;
}

FailureOr<int64_t> FlopCounter::countLinalg(linalg::LinalgOp op) {
  if (std::optional<int64_t> flops = zero::linalgFlops(op))
    return *flops;
  // Say why.
  int64_t iterations = 1;
  for (int64_t range : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return op->emitError("cannot count FLOPs of a linalg op with a dynamic "
                           "iteration space");
    if (llvm::MulOverflow(iterations, range, iterations))
      break;
  }
  for (Operation &inner : *op.getBlock())
    if (inner.getNumRegions() != 0)
      return inner.emitError("cannot count FLOPs of an op with regions inside "
                             "a linalg body");
  return op->emitError() << "FLOP count of '" << op->getName()
                         << "' overflows int64";
}

FailureOr<int64_t> FlopCounter::countFor(scf::ForOp op) {
  std::optional<int64_t> lb = getConstantIntValue(op.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(op.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(op.getStep());
  if (!lb || !ub || !step || *step <= 0)
    return op->emitError("cannot count FLOPs of an scf.for without a static "
                         "trip count");
  int64_t span;
  if (llvm::SubOverflow(*ub, *lb, span))
    return op->emitError("FLOP count of 'scf.for' overflows int64");
  int64_t trips = span > 0 ? llvm::divideCeil(span, *step) : 0;
  FailureOr<int64_t> body = countBlock(*op.getBody());
  if (failed(body))
    return failure();
  return mul(op, trips, *body);
}

FailureOr<int64_t> mlir::zero::countFlops(func::FuncOp func) {
  if (func.isExternal())
    return func.emitError("cannot count FLOPs of an external function");
  if (!func.getBody().hasOneBlock())
    return func.emitError("cannot count FLOPs of a function with more than "
                          "one block");
  return FlopCounter().countBlock(func.getBody().front());
}
