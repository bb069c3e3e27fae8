//===- CommBuffers.cpp - Place the buffers of a step's collectives --------===//
//
// zero-comm-buffers: on the bufferized step, before its memory is
// predicted, puts the memory categories and spaces the collectives and
// linalg ops carry on the allocations they concern, and (CPU target)
// brackets the started reductions with the communication arena's
// reservations. The collectives are typed ops here (Collectives.h).
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/Allocations.h"
#include "zero/Analysis/Collectives.h"
#include "zero/Analysis/StepMemory.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Transforms/Passes.h"
#include "zero/runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROCOMMBUFFERSPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {

/// A linalg op that writes a buffer of a category (zero-partition's
/// gradient accumulators and their rounding to bf16) and a reduction that
/// reads one (the full gradient) put it on the buffer's allocation.
void placeCategories(ModuleOp module) {
  StringRef name = ZeroDialect::CategoryAttrHelper::getNameStr();
  module.walk([&](Operation *op) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      Attribute category = op->getAttr(name);
      if (!category || !linalgOp.hasPureBufferSemantics())
        return;
      op->removeAttr(name);
      for (OpOperand &init : linalgOp.getDpsInitsMutable())
        if (Operation *alloc = getAllocation(init.get()))
          alloc->setAttr(name, category);
      return;
    }
    std::optional<RuntimeCollective> c = getRuntimeCollective(op);
    if (!c || c->kind == ZRT_ALL_GATHER)
      return;
    if (Attribute category = op->removeAttr(name))
      if (Operation *alloc = getAllocation(op->getOperand(0)))
        alloc->setAttr(name, category);
  });
}

/// A buffer bufferization allocated for a host operation (an update's
/// destination it could not write in place) is host memory when only host
/// operations, copies to the device and deallocations use it: on a device
/// target the host could not reach it otherwise.
void placeHostBuffers(ModuleOp module) {
  StringRef spaceName = ZeroDialect::SpaceAttrHelper::getNameStr();
  auto hostOnly = [&](Operation *alloc) {
    SmallVector<Value> views(alloc->getResults());
    while (!views.empty()) {
      Value v = views.pop_back_val();
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (isa<ViewLikeOpInterface>(user)) {
          views.append(user->result_begin(), user->result_end());
          continue;
        }
        auto space = user->getAttrOfType<StringAttr>(spaceName);
        bool hostOp = space && space.getValue() == "host";
        auto copy = dyn_cast<CopyStartOp>(user);
        if (!hostOp && !isa<memref::DeallocOp, WaitOp>(user) &&
            !(copy && use.getOperandNumber() == 0))
          return false;
      }
    }
    return true;
  };
  module.walk([&](Operation *op) {
    auto space = op->getAttrOfType<StringAttr>(spaceName);
    if (!space || space.getValue() != "host" ||
        isa<memref::AllocOp, CopyStartOp>(op))
      return;
    for (Value v : op->getOperands()) {
      if (!isa<MemRefType>(v.getType()))
        continue;
      auto alloc = dyn_cast_or_null<memref::AllocOp>(getAllocation(v));
      if (alloc && !alloc->hasAttr(spaceName) && hostOnly(alloc))
        alloc->setAttr(spaceName, space);
    }
  });
}

/// A step whose started collectives take scratch holds the communication
/// arena (runtime.h, zrt_comm_reserve) while any of them is in flight: in
/// each run of overlapping start-to-wait intervals of the entry block, a
/// reservation before every start that needs more than the ones before it
/// in the run, and a release after the run's last wait. The scratch is
/// then held from one fixed point of the program to another, and
/// zero-memory-report predicts the step's peak exactly, where without it
/// the communication thread would take and free it at moments that depend
/// on timing. A start or wait inside another op (a loop) holds one buffer
/// for the largest from the start of the function to every return. Needs
/// the function's zero.world_size (the scratch depends on it); without it,
/// nothing changes.
LogicalResult reserveCommArena(ModuleOp module) {
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    auto world = fn->getAttrOfType<IntegerAttr>(
        ZeroDialect::WorldSizeAttrHelper::getNameStr());
    if (!world)
      continue;
    // Each started collective that takes scratch: its need.
    llvm::MapVector<Operation *, int64_t> needs;
    int64_t largest = 0;
    fn.walk([&](Operation *op) {
      std::optional<RuntimeCollective> c = getRuntimeCollective(op);
      if (!c || !c->started)
        return;
      int64_t need = commArenaBytes(commScratchPieces(*c, world.getInt()));
      if (need == 0)
        return;
      needs[op] = need;
      largest = std::max(largest, need);
    });
    if (needs.empty())
      continue;
    if (largest == std::numeric_limits<int64_t>::max())
      return needs.front().first->emitOpError()
             << "needs more communication scratch than a 64-bit size holds";
    // Every start and each of its waits directly in the entry block.
    Block &entry = fn.getBody().front();
    bool inEntry = fn.getBody().hasOneBlock();
    for (auto &[start, need] : needs) {
      Value token = start->getResult(0);
      inEntry = inEntry && start->getBlock() == &entry && !token.use_empty();
      for (Operation *user : token.getUsers())
        inEntry = inEntry && isa<WaitOp>(user) && user->getBlock() == &entry;
    }
    OpBuilder b(module.getContext());
    if (!inEntry) {
      b.setInsertionPointToStart(&entry);
      CommReserveOp::create(b, fn.getLoc(), largest);
      fn.walk([&](func::ReturnOp ret) {
        b.setInsertionPoint(ret);
        CommReleaseOp::create(b, ret.getLoc());
      });
      continue;
    }
    // Runs of overlapping intervals, in block order.
    llvm::DenseSet<Value> open;
    int64_t reserved = 0;
    for (Operation &op : llvm::make_early_inc_range(entry)) {
      if (auto it = needs.find(&op); it != needs.end()) {
        if (open.empty())
          reserved = 0;
        open.insert(op.getResult(0));
        if (it->second > reserved) {
          b.setInsertionPoint(&op);
          CommReserveOp::create(b, op.getLoc(), it->second);
          reserved = it->second;
        }
        continue;
      }
      auto wait = dyn_cast<WaitOp>(op);
      if (!wait || !open.erase(wait.getToken()) || !open.empty())
        continue;
      b.setInsertionPointAfter(wait);
      CommReleaseOp::create(b, wait.getLoc());
    }
  }
  return success();
}

struct ZeroCommBuffersPass
    : public zero::impl::ZeroCommBuffersPassBase<ZeroCommBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    placeCategories(module);
    placeHostBuffers(module);
    // The CUDA backend's collectives take no scratch of the runtime's.
    if (target == Target::CPU && failed(reserveCommArena(module)))
      return signalPassFailure();
  }
};

} // namespace
