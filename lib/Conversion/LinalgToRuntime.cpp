//===- LinalgToRuntime.cpp - Buffer matmuls to runtime GEMM ---------------===//
//
// zero-linalg-to-runtime: linalg.matmul / linalg.batch_matmul on memrefs
// become calls of the runtime's GEMM entry points (OpenBLAS on CPU, cuBLASLt
// later). Upstream has no linalg-to-BLAS lowering, hence this pass. Only the
// default (row-major, untransposed) indexing maps with contiguous rows are
// rewritten; everything else stays for the loop lowering, so the pass never
// changes what a program computes, only how fast.
//
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "zero-linalg-to-runtime"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROLINALGTORUNTIMEPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

/// Returns true if `type` is a memref whose innermost stride is statically 1,
/// i.e. rows are contiguous and a BLAS leading dimension describes it.
bool hasContiguousRows(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || memref.getRank() < 2)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)))
    return false;
  return strides.back() == 1;
}

/// A pointer to the first element of `memref` and its strides (as i64).
struct BufferView {
  Value ptr;
  SmallVector<Value> sizes;
  SmallVector<Value> strides;
};

BufferView viewOf(OpBuilder &b, Location loc, Value memref) {
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  auto toI64 = [&](Value index) -> Value {
    return b.create<arith::IndexCastOp>(loc, i64, index);
  };
  auto md = b.create<memref::ExtractStridedMetadataOp>(loc, memref);
  Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
  Value ptr = b.create<LLVM::IntToPtrOp>(loc, LLVM::LLVMPointerType::get(ctx),
                                         toI64(base));
  Type elementType = cast<MemRefType>(memref.getType()).getElementType();
  ptr = b.create<LLVM::GEPOp>(loc, LLVM::LLVMPointerType::get(ctx),
                              elementType, ptr,
                              ValueRange{toI64(md.getOffset())});
  BufferView view;
  view.ptr = ptr;
  for (Value s : md.getSizes())
    view.sizes.push_back(toI64(s));
  for (Value s : md.getStrides())
    view.strides.push_back(toI64(s));
  return view;
}

struct ZeroLinalgToRuntimePass
    : public zero::impl::ZeroLinalgToRuntimePassBase<ZeroLinalgToRuntimePass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Declares (or finds) `name` with `type`; fails on a conflicting symbol.
  FailureOr<func::FuncOp> getOrDeclare(StringRef name, FunctionType type);
  LogicalResult rewrite(linalg::LinalgOp op, bool batched);
};

FailureOr<func::FuncOp>
ZeroLinalgToRuntimePass::getOrDeclare(StringRef name, FunctionType type) {
  ModuleOp module = getOperation();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name)) {
    if (existing.getFunctionType() != type)
      return existing.emitOpError()
             << "conflicts with the runtime entry point '" << name
             << "', which must have type " << type;
    return existing;
  }
  if (Operation *other = module.lookupSymbol(name))
    return other->emitOpError() << "uses the name of the runtime entry point '"
                                << name << "'";
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto fn = b.create<func::FuncOp>(module.getLoc(), name, type);
  fn.setPrivate();
  return fn;
}

LogicalResult ZeroLinalgToRuntimePass::rewrite(linalg::LinalgOp op,
                                               bool batched) {
  Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1];
  Value c = op.getDpsInits()[0];
  Type elementType = cast<MemRefType>(c.getType()).getElementType();
  StringRef suffix = elementType.isF32() ? "f32" : "f64";

  MLIRContext *ctx = &getContext();
  Type i64 = IntegerType::get(ctx, 64);
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  // (batch,) m, n, k, then pointer, (batch stride,) leading dimension for
  // a and b, beta, and the same for c; see runtime/include/zero/runtime.h.
  SmallVector<Type> argTypes;
  if (batched)
    argTypes.push_back(i64);
  argTypes.append({i64, i64, i64});
  auto appendOperand = [&]() {
    argTypes.push_back(ptr);
    if (batched)
      argTypes.push_back(i64);
    argTypes.push_back(i64);
  };
  appendOperand();
  appendOperand();
  argTypes.push_back(elementType);
  appendOperand();
  std::string name = (batched ? "zrt_gemm_batched_" : "zrt_gemm_") +
                     suffix.str();
  FailureOr<func::FuncOp> callee =
      getOrDeclare(name, FunctionType::get(ctx, argTypes, {}));
  if (failed(callee))
    return failure();

  OpBuilder b(op);
  Location loc = op.getLoc();
  BufferView va = viewOf(b, loc, a), vb = viewOf(b, loc, bm),
             vc = viewOf(b, loc, c);
  // Sizes: A is [batch,] m x k, B is [batch,] k x n.
  unsigned r = batched ? 1 : 0;
  Value m = va.sizes[r], k = va.sizes[r + 1], n = vb.sizes[r + 1];
  SmallVector<Value> args;
  if (batched)
    args.push_back(va.sizes[0]);
  args.append({m, n, k, va.ptr});
  auto pushStrides = [&](BufferView &v) {
    if (batched)
      args.push_back(v.strides[0]);
    args.push_back(v.strides[r]);
  };
  pushStrides(va);
  args.push_back(vb.ptr);
  pushStrides(vb);
  // linalg.matmul accumulates into its init: beta = 1.
  args.push_back(b.create<arith::ConstantOp>(
      loc, elementType, b.getFloatAttr(elementType, 1.0)));
  args.push_back(vc.ptr);
  pushStrides(vc);
  b.create<func::CallOp>(loc, *callee, args);
  LLVM_DEBUG(llvm::dbgs() << "lowered " << op->getName() << " to " << name
                          << "\n");
  op->erase();
  return success();
}

void ZeroLinalgToRuntimePass::runOnOperation() {
  SmallVector<std::pair<linalg::LinalgOp, bool>> worklist;
  getOperation().walk([&](linalg::LinalgOp op) {
    bool batched = isa<linalg::BatchMatmulOp>(op);
    if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation())) {
      if (mm.hasUserDefinedMaps())
        return;
    } else if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op.getOperation())) {
      if (bmm.hasUserDefinedMaps())
        return;
    } else {
      return;
    }
    if (!op.hasPureBufferSemantics())
      return;
    Type elementType =
        cast<MemRefType>(op.getDpsInits()[0].getType()).getElementType();
    if (!elementType.isF32() && !elementType.isF64())
      return;
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (!type || type.getElementType() != elementType ||
          !hasContiguousRows(type))
        return;
    }
    worklist.push_back({op, batched});
  });
  for (auto [op, batched] : worklist)
    if (failed(rewrite(op, batched)))
      return signalPassFailure();
}

} // namespace
