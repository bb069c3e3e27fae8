//===- FlopCount.h - Static FLOP count of a function ------------*- C++ -*-===//
//
// Counts the floating-point operations a function performs, statically, with
// one rule for every op so that counts of different models compare:
//
//  * A floating-point op is an `arith` or `math` op with at least one operand
//    of float (element) type, except arith.select and cast ops
//    (CastOpInterface: extf, truncf, fptosi, bitcast, ...). Each counts 1:
//    addf, mulf, divf, maximumf, cmpf, exp, tanh, sqrt, powf, ... alike.
//  * A structured linalg op (LinalgOp interface, named ops included: their
//    implicit body is a region too) counts
//        product of its static loop ranges  x  floating-point ops in its body.
//    So linalg.matmul (M x N x K loops, mulf + addf) is 2*M*N*K,
//    linalg.reduce with addf over n elements is n, and linalg.transpose,
//    linalg.broadcast and linalg.fill (bodies that only yield) are 0.
//  * A floating-point op outside linalg counts 1.
//  * The body of an scf.for counts once per iteration of its static trip
//    count.
//  * Everything else (tensor ops, index arithmetic, func.return, ...) is 0.
//
// Failure, with an error on the op, for what this rule cannot count: dynamic
// loop ranges or trip counts, linalg ops that are not structured
// (linalg.softmax, ...), calls, other ops with regions, and overflow of
// int64.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_FLOPCOUNT_H
#define ZERO_ANALYSIS_FLOPCOUNT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>

namespace mlir::zero {

/// Whether `op` counts as one floating-point operation under the rule above.
bool isFloatingPointOp(Operation *op);

/// The FLOPs of a structured linalg op under the rule above, or nullopt
/// (without a diagnostic) where it cannot be counted: a dynamic iteration
/// space, an op with regions in its body, overflow.
std::optional<int64_t> linalgFlops(Operation *linalgOp);

/// The FLOPs of one execution of `func` under the rule above.
FailureOr<int64_t> countFlops(func::FuncOp func);

} // namespace mlir::zero

#endif // ZERO_ANALYSIS_FLOPCOUNT_H
