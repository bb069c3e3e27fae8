//===- SeparateEntryBlock.cpp - An entry block of its own -----------------===//
//
// zero-separate-entry-block: keeps upstream convert-func-to-llvm linear in
// the length of a function. Its bare-pointer calling convention builds a
// memref descriptor per argument at the start of the entry block and, per
// argument, orders that argument's uses in the same block against the new
// operations, renumbering the block each time it grew; with the body moved
// to a second block only the descriptors are in the entry block.
//
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROSEPARATEENTRYBLOCKPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

struct ZeroSeparateEntryBlockPass
    : public zero::impl::ZeroSeparateEntryBlockPassBase<
          ZeroSeparateEntryBlockPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal() ||
          llvm::none_of(fn.getArgumentTypes(), llvm::IsaPred<MemRefType>))
        continue;
      Block &entry = fn.getBody().front();
      // Already separate: the entry block only branches on.
      if (auto br = dyn_cast<cf::BranchOp>(entry.front());
          br && br.getDestOperands().empty())
        continue;
      Block *body = entry.splitBlock(entry.begin());
      OpBuilder b = OpBuilder::atBlockEnd(&entry);
      cf::BranchOp::create(b, fn.getLoc(), body);
    }
  }
};

} // namespace
