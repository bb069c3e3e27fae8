//===- LowerStridedCopy.cpp - Strided memref.copy to linalg ---------------===//
//
// zero-lower-strided-copy: rewrites the memref.copy ops that upstream's
// memref-to-LLVM conversion would lower to a `memrefCopy` call (a
// c_runner_utils symbol the zero runtime does not provide) into linalg
// copies, which convert-linalg-to-loops turns into loops. Upstream has no
// pass for this; its `linalg::makeMemRefCopyOp` builds the copy.
//
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "zero-lower-strided-copy"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROLOWERSTRIDEDCOPYPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {
/// Whether memref-to-LLVM lowers a copy from or to `type` to a memcpy: the
/// same test as upstream's MemRefCopyOpLowering.
bool isContiguous(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && (memref.getLayout().isIdentity() ||
                    memref::isStaticShapeAndContiguousRowMajor(memref));
}

struct ZeroLowerStridedCopyPass
    : public zero::impl::ZeroLowerStridedCopyPassBase<
          ZeroLowerStridedCopyPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (contiguous || !isContiguous(copy.getSource().getType()) ||
          !isContiguous(copy.getTarget().getType()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      LLVM_DEBUG(llvm::dbgs() << "lowering " << copy << "\n");
      OpBuilder b(copy);
      linalg::makeMemRefCopyOp(b, copy.getLoc(), copy.getSource(),
                               copy.getTarget());
      copy.erase();
      ++numLowered;
    }
  }
};
} // namespace
