//===- PartitionPass.cpp - The zero-partition pass ------------------------===//
//
// zero-partition's options, checked (stage, world size, accumulation, which
// parameters stay whole at stage 3), then the rewrite (Partition.cpp,
// partitionStep in Transforms.h).
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/TrainingStep.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Transforms/Passes.h"
#include "zero/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROPARTITIONPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {

struct ZeroPartitionPass
    : public zero::impl::ZeroPartitionPassBase<ZeroPartitionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (stage < 0 || stage > 3) {
      module.emitError() << "zero-partition: stage must be 0, 1, 2 or 3, got "
                         << static_cast<int64_t>(stage);
      return signalPassFailure();
    }
    if (worldSize < 1) {
      module.emitError()
          << "zero-partition: world-size must be at least 1, got "
          << static_cast<int64_t>(worldSize);
      return signalPassFailure();
    }
    FailureOr<TrainingStep> step = TrainingStep::get(module);
    if (failed(step)) {
      module.emitError() << "zero-partition: the module does not satisfy the "
                            "training-step contract (zero-verify reports why)";
      return signalPassFailure();
    }
    if (accumulate < 1) {
      module.emitError() << "zero-partition: accumulate must be at least 1 "
                            "micro-batch per step, got "
                         << static_cast<int64_t>(accumulate);
      return signalPassFailure();
    }
    FailureOr<SmallVector<bool>> persistent = choosePersistent(*step);
    if (failed(persistent))
      return signalPassFailure();
    if (failed(partitionStep(module, *step, stage, worldSize, regather,
                             accumulate, accumulateF32, *persistent)))
      return signalPassFailure();
  }

  /// Which parameters stay whole at stage 3: those under
  /// param-persistence-threshold elements and those persistent-params
  /// names; a located error for a name that is no parameter, or for either
  /// option below stage 3.
  FailureOr<SmallVector<bool>> choosePersistent(const TrainingStep &step) {
    func::FuncOp fb = step.forwardBackward;
    if (paramPersistenceThreshold < 0)
      return fb.emitOpError()
             << "zero-partition: param-persistence-threshold must be a "
                "number of elements >= 0, got "
             << static_cast<int64_t>(paramPersistenceThreshold);
    if (stage < 3 &&
        (paramPersistenceThreshold > 0 || !persistentParams.empty()))
      return fb.emitOpError()
             << "zero-partition: "
             << (paramPersistenceThreshold > 0 ? "param-persistence-threshold"
                                               : "persistent-params")
             << " keeps parameters whole at stage 3, but this is stage "
             << static_cast<int64_t>(stage)
             << ", where every parameter is whole already";
    SmallVector<bool> persistent;
    for (const ParamInfo &p : step.params)
      persistent.push_back(stage >= 3 &&
                           p.type.getNumElements() < paramPersistenceThreshold);
    for (const std::string &name : persistentParams) {
      auto it = llvm::find_if(
          step.params, [&](const ParamInfo &p) { return p.name == name; });
      if (it == step.params.end())
        return fb.emitOpError()
               << "zero-partition: persistent-params names '" << name
               << "', which is no parameter of the step (zero.param)";
      persistent[it - step.params.begin()] = true;
    }
    return persistent;
  }
};
} // namespace
