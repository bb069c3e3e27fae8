//===- Offload.cpp - zero-offload: model states off the device ------------===//
//
// zero-offload: the optimizer states (optimizer=nvme or host) and the
// stage-3 parameter shards (params=nvme) of @train_step leave the device's
// memory: the NVMe tier (NvmeOffload.cpp) first, then the host
// (HostOffload.cpp). Passes.td has the rules.
//
//===----------------------------------------------------------------------===//

#include "Offload.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROOFFLOADPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;
using namespace mlir::zero::offload;

namespace {

struct ZeroOffloadPass
    : public zero::impl::ZeroOffloadPassBase<ZeroOffloadPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (readAhead < 1) {
      module.emitError("zero-offload read-ahead=0: a use's read must start "
                       "before it (read-ahead is at least 1)");
      return signalPassFailure();
    }
    if (optimizer == Placement::Device && params == Placement::Device)
      return;
    SmallVector<func::FuncOp> steps;
    module.walk([&](func::FuncOp f) {
      auto role =
          f->getAttrOfType<StringAttr>(ZeroDialect::RoleAttrHelper::getNameStr());
      if (role && role.getValue() == "train_step")
        steps.push_back(f);
    });
    if (steps.empty()) {
      module.emitError("zero-offload works on the ZeRO form's @train_step "
                       "(zero.role = \"train_step\"): run zero-partition "
                       "first");
      return signalPassFailure();
    }
    for (func::FuncOp f : steps) {
      computeUnreadParametersFresh(f);
      // The NVMe tier first: with optimizer=host and params=nvme the
      // shards' transfers are placed as without the host, and the host
      // then takes the updates, their reads and writes included.
      if (optimizer == Placement::Nvme || params == Placement::Nvme) {
        Offloader offloader(f,
                            optimizer == Placement::Nvme ? Placement::Nvme
                                                         : Placement::Device,
                            params, readAhead);
        if (failed(offloader.run()))
          return signalPassFailure();
        numOffloaded += offloader.numOffloaded;
        numReads += offloader.numReads;
        numWrites += offloader.numWrites;
      }
      if (optimizer == Placement::Host) {
        HostOffloader offloader(f);
        if (failed(offloader.run()))
          return signalPassFailure();
        numOffloaded += offloader.numOffloaded;
        numHostOps += offloader.numHostOps;
        numCopies += offloader.numCopies;
      }
    }
  }
};

} // namespace
