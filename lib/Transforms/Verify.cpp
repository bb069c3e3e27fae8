//===- Verify.cpp - Training-step contract check ----------------*- C++ -*-===//
//
// zero-verify: reports every contract violation TrainingStep finds.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/TrainingStep.h"
#include "zero/Transforms/Passes.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROVERIFYPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
struct ZeroVerifyPass : public zero::impl::ZeroVerifyPassBase<ZeroVerifyPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(TrainingStep::get(getOperation())))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
