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

#include "RuntimeCalls.h"

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

struct ZeroLinalgToRuntimePass
    : public zero::impl::ZeroLinalgToRuntimePassBase<ZeroLinalgToRuntimePass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult rewrite(linalg::LinalgOp op, bool batched);
};

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
      zero::getOrDeclareRuntimeFunc(getOperation(), name,
                                     FunctionType::get(ctx, argTypes, {}));
  if (failed(callee))
    return failure();

  OpBuilder b(op);
  Location loc = op.getLoc();
  zero::BufferView va = zero::getBufferView(b, loc, a),
                   vb = zero::getBufferView(b, loc, bm),
                   vc = zero::getBufferView(b, loc, c);
  // Sizes: A is [batch,] m x k, B is [batch,] k x n.
  unsigned r = batched ? 1 : 0;
  Value m = va.sizes[r], k = va.sizes[r + 1], n = vb.sizes[r + 1];
  SmallVector<Value> args;
  if (batched)
    args.push_back(va.sizes[0]);
  args.append({m, n, k, va.ptr});
  auto pushStrides = [&](zero::BufferView &v) {
    if (batched)
      args.push_back(v.strides[0]);
    args.push_back(v.strides[r]);
  };
  pushStrides(va);
  args.push_back(vb.ptr);
  pushStrides(vb);
  // linalg.matmul accumulates into its init: beta = 1.
  args.push_back(arith::ConstantOp::create(
      b, loc, elementType, b.getFloatAttr(elementType, 1.0)));
  args.push_back(vc.ptr);
  pushStrides(vc);
  func::CallOp::create(b, loc, *callee, args);
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
