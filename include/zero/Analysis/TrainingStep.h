//===- TrainingStep.h - The training-step contract --------------*- C++ -*-===//
//
// A training-step module holds a `forward_backward` and an `optimizer`
// function, found by their `zero.role` attribute, whose arguments and results
// are linked by `zero.*` attributes (docs/training-step-ir.md). TrainingStep
// reads and checks that contract once; zero-verify reports its diagnostics and
// every later pass and tool reads the parsed form instead of the attributes.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_TRAININGSTEP_H
#define ZERO_ANALYSIS_TRAININGSTEP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::zero {

/// One trainable parameter and where it appears in both functions.
struct ParamInfo {
  std::string name;
  RankedTensorType type;
  unsigned fbArg;     ///< forward_backward argument.
  unsigned fbResult;  ///< forward_backward result holding its gradient.
  unsigned optArg;    ///< optimizer argument holding the parameter.
  unsigned optGrad;   ///< optimizer argument holding the gradient.
  unsigned optResult; ///< optimizer result holding the new parameter.
  llvm::SmallVector<unsigned> states; ///< Indices into TrainingStep::states.
};

/// One optimizer state tensor (e.g. AdamW's `exp_avg`) of one parameter.
struct StateInfo {
  std::string kind;
  unsigned param; ///< Index into TrainingStep::params.
  RankedTensorType type;
  unsigned optArg;
  unsigned optResult;
};

/// A batch input of forward_backward.
struct BatchInfo {
  std::string name;
  RankedTensorType type;
  unsigned fbArg;
};

/// A scalar hyper-parameter of the optimizer (`lr`, `step`, ...), passed as
/// a scalar or as a rank-0 tensor of one (as torch-mlir passes scalars).
struct HyperInfo {
  std::string name;
  Type type; ///< The scalar type (the element type of a rank-0 tensor).
  unsigned optArg;
};

class TrainingStep {
public:
  /// Reads the contract from `module`. Every violation is reported as an
  /// error located at the offending function, argument, result or operation;
  /// on any violation the result is failure.
  static FailureOr<TrainingStep> get(ModuleOp module);

  func::FuncOp forwardBackward;
  func::FuncOp optimizer;
  unsigned lossResult = 0;
  llvm::SmallVector<ParamInfo> params;
  llvm::SmallVector<StateInfo> states;
  llvm::SmallVector<BatchInfo> batch;
  llvm::SmallVector<HyperInfo> hypers;

  /// Index of the parameter called `name`, if any.
  std::optional<unsigned> lookupParam(StringRef name) const;
  /// Total element count of all parameters (unpadded).
  int64_t numParamElements() const;
};

} // namespace mlir::zero

#endif // ZERO_ANALYSIS_TRAININGSTEP_H
