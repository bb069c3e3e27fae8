//===- PadGemmRows.cpp - Aligned row strides for GEMM operands ------------===//
//
// zero-pad-gemm-rows: a buffer that a matmul reads or writes, whose rows are
// not a multiple of the alignment long, is allocated with padded rows and
// used through a subview of its original shape. The GEMM lowering passes
// the subview's row stride as the leading dimension, which cuBLASLt's
// tensor-core kernels need aligned (a vocabulary of 50,257 otherwise leaves
// the logits' GEMMs on its slowest kernels).
//
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "ElementwiseCasts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "zero-pad-gemm-rows"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROPADGEMMROWSPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

/// Whether `user` takes a buffer of any strided layout in place of the
/// identity one, with no change to its own types: linalg ops (their types
/// are their operands'), element loads and stores, copies, and the
/// deallocation.
bool takesStridedBuffer(Operation *user) {
  return isa<linalg::LinalgOp, memref::LoadOp, memref::StoreOp, memref::CopyOp,
             memref::DeallocOp>(user);
}

bool isGemm(Operation *op) {
  return isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op);
}

/// Whether `user` writes `buffer` as the elementwise bf16 rounding of a
/// buffer a GEMM uses: what zero-linalg-to-runtime's bf16-results turns
/// into that GEMM writing `buffer` itself.
bool roundsGemmResultInto(Operation *user, Value buffer) {
  auto generic = dyn_cast<linalg::GenericOp>(user);
  return generic && zero::isBf16Rounding(generic) &&
         generic.getDpsInits()[0] == buffer &&
         llvm::any_of(generic.getDpsInputs()[0].getUsers(), isGemm);
}

struct ZeroPadGemmRowsPass
    : public zero::impl::ZeroPadGemmRowsPassBase<ZeroPadGemmRowsPass> {
  using Base::Base;

  /// The padded type of `alloc`'s buffer, or null if it is left as it is.
  MemRefType paddedType(memref::AllocOp alloc) {
    MemRefType type = alloc.getType();
    if (type.getRank() < 2 || !type.hasStaticShape() ||
        !type.getLayout().isIdentity() || !type.getElementType().isIntOrFloat())
      return {};
    int64_t elementBits = type.getElementTypeBitWidth();
    if (elementBits % 8 != 0 || (rowAlignment * 8) % elementBits != 0)
      return {};
    int64_t perRow = rowAlignment * 8 / elementBits; // elements
    int64_t cols = type.getShape().back();
    if (cols % perRow == 0)
      return {};
    int64_t padded = (cols + perRow - 1) / perRow * perRow;
    if ((padded - cols) * 100 > cols * maxOverheadPercent)
      return {};
    bool gemm = false;
    for (Operation *user : alloc->getUsers()) {
      if (!takesStridedBuffer(user))
        return {};
      gemm |= isGemm(user) || roundsGemmResultInto(user, alloc);
    }
    if (!gemm)
      return {};
    SmallVector<int64_t> shape(type.getShape());
    shape.back() = padded;
    return MemRefType::get(shape, type.getElementType(), AffineMap(),
                           type.getMemorySpace());
  }

  void runOnOperation() override {
    if (rowAlignment <= 0 || (rowAlignment & (rowAlignment - 1)) != 0) {
      getOperation().emitError()
          << "zero-pad-gemm-rows: row-alignment must be a power of two, not "
          << static_cast<int64_t>(rowAlignment);
      return signalPassFailure();
    }
    if (maxOverheadPercent < 0) {
      getOperation().emitError()
          << "zero-pad-gemm-rows: max-overhead-percent must be at least 0, "
             "not "
          << static_cast<int64_t>(maxOverheadPercent);
      return signalPassFailure();
    }
    SmallVector<std::pair<memref::AllocOp, MemRefType>> pads;
    getOperation().walk([&](memref::AllocOp alloc) {
      if (MemRefType type = paddedType(alloc))
        pads.emplace_back(alloc, type);
    });
    for (auto [alloc, type] : pads) {
      MemRefType original = alloc.getType();
      OpBuilder b(alloc);
      Location loc = alloc.getLoc();
      auto padded = memref::AllocOp::create(b, loc, type, ValueRange(),
                                            alloc.getAlignmentAttr());
      // Everything the allocation carried (its category) stays on it.
      padded->setDiscardableAttrs(alloc->getDiscardableAttrDictionary());
      SmallVector<int64_t> offsets(original.getRank(), 0),
          strides(original.getRank(), 1);
      auto view = memref::SubViewOp::create(b, loc, padded, offsets,
                                            original.getShape(), strides);
      for (OpOperand &use : llvm::make_early_inc_range(alloc->getUses())) {
        if (isa<memref::DeallocOp>(use.getOwner()))
          use.set(padded);
        else
          use.set(view);
      }
      alloc.erase();
      LLVM_DEBUG(llvm::dbgs() << "zero-pad-gemm-rows: " << original << " -> "
                              << type << "\n");
    }
  }
};

} // namespace
