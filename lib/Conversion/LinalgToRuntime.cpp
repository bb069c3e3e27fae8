//===- LinalgToRuntime.cpp - Buffer matmuls to runtime GEMM ---------------===//
//
// zero-linalg-to-runtime: linalg.matmul / linalg.batch_matmul on memrefs
// become calls of the runtime's GEMM entry points (OpenBLAS on CPU, cuBLASLt
// later). Upstream has no linalg-to-BLAS lowering, hence this pass. The
// default (row-major) indexing maps and those that read A or B transposed
// (what zero-fold-transposes writes) are rewritten, operands with contiguous
// rows only; everything else stays for the loop lowering, so the pass never
// changes what a program computes, only how fast.
//
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "RuntimeCalls.h"
#include "zero/Analysis/Allocations.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Debug.h"

#include <optional>

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

/// Which operands of a matmul or batch_matmul are read transposed, or
/// nothing if its indexing maps are not the plain or transposed GEMM ones
/// (broadcasts, a transposed result, ...).
struct Transposition {
  bool a = false, b = false;
};

std::optional<Transposition> gemmTransposition(linalg::LinalgOp op,
                                               bool batched) {
  MLIRContext *ctx = op.getContext();
  unsigned r = batched ? 1 : 0, numDims = r + 3;
  AffineExpr bd = getAffineDimExpr(0, ctx), m = getAffineDimExpr(r, ctx),
             n = getAffineDimExpr(r + 1, ctx), k = getAffineDimExpr(r + 2, ctx);
  auto map = [&](AffineExpr x, AffineExpr y) {
    SmallVector<AffineExpr> results;
    if (batched)
      results.push_back(bd);
    results.append({x, y});
    return AffineMap::get(numDims, 0, results, ctx);
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps.size() != 3 || maps[2] != map(m, n))
    return std::nullopt;
  Transposition t;
  if (maps[0] == map(k, m))
    t.a = true;
  else if (maps[0] != map(m, k))
    return std::nullopt;
  if (maps[1] == map(n, k))
    t.b = true;
  else if (maps[1] != map(k, n))
    return std::nullopt;
  return t;
}

/// The linalg.fill that sets all of `c` to zero just before `op` (only ops
/// without memory effects, such as constants and views, in between), or
/// null. The GEMM then overwrites C (beta = 0) and the fill is dead: on a
/// GPU it is a pass over C as large as the product's own write (an
/// attention score matrix is hundreds of MB).
linalg::FillOp zeroFillOf(Value c, Operation *op) {
  // A GEMM that reads C's buffer (its A or B a view of it) must see the
  // zeros: the fill stays.
  for (Value input : cast<linalg::LinalgOp>(op).getDpsInputs())
    if (zero::getViewedBuffer(input) == zero::getViewedBuffer(c))
      return {};
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getDpsInits()[0] != c || !fill.hasPureBufferSemantics())
        return {};
      FloatAttr value;
      if (!matchPattern(fill.getDpsInputs()[0], m_Constant(&value)) ||
          !value.getValue().isZero())
        return {};
      return fill;
    }
    if (!isMemoryEffectFree(prev))
      return {};
  }
  return {};
}

struct ZeroLinalgToRuntimePass
    : public zero::impl::ZeroLinalgToRuntimePassBase<ZeroLinalgToRuntimePass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult rewrite(linalg::LinalgOp op, bool batched, Transposition t);
};

LogicalResult ZeroLinalgToRuntimePass::rewrite(linalg::LinalgOp op,
                                               bool batched, Transposition t) {
  Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1];
  Value c = op.getDpsInits()[0];
  Type elementType = cast<MemRefType>(c.getType()).getElementType();
  // bf16 operands accumulate into f32 (a mixed-precision matmul).
  bool mixed = cast<MemRefType>(a.getType()).getElementType().isBF16();
  StringRef suffix = mixed                ? "bf16_f32"
                     : elementType.isF32() ? "f32"
                                           : "f64";

  MLIRContext *ctx = &getContext();
  Type i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  // trans_a, trans_b, (batch,) m, n, k, then pointer, (batch stride,)
  // leading dimension for a and b, beta, and the same for c; see
  // runtime/include/zero/runtime.h.
  SmallVector<Type> argTypes = {i32, i32};
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
  // Sizes: C is [batch,] m x n; A is [batch,] m x k, or k x m when read
  // transposed.
  unsigned r = batched ? 1 : 0;
  Value m = vc.sizes[r], n = vc.sizes[r + 1], k = va.sizes[t.a ? r : r + 1];
  SmallVector<Value> args;
  Value no = arith::ConstantOp::create(b, loc, i32, b.getIntegerAttr(i32, 0));
  Value yes = arith::ConstantOp::create(b, loc, i32, b.getIntegerAttr(i32, 1));
  args.append({t.a ? yes : no, t.b ? yes : no});
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
  // linalg.matmul accumulates into its init: beta = 1, or 0 where the init
  // was just filled with zeros (the fill goes).
  linalg::FillOp zeroFill = zeroFillOf(c, op);
  args.push_back(arith::ConstantOp::create(
      b, loc, elementType, b.getFloatAttr(elementType, zeroFill ? 0.0 : 1.0)));
  args.push_back(vc.ptr);
  pushStrides(vc);
  func::CallOp::create(b, loc, *callee, args);
  LLVM_DEBUG(llvm::dbgs() << "lowered " << op->getName() << " to " << name
                          << "\n");
  op->erase();
  if (zeroFill)
    zeroFill->erase();
  return success();
}

void ZeroLinalgToRuntimePass::runOnOperation() {
  struct Gemm {
    linalg::LinalgOp op;
    bool batched;
    Transposition t;
  };
  SmallVector<Gemm> worklist;
  getOperation().walk([&](linalg::LinalgOp op) {
    if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()))
      return;
    bool batched = isa<linalg::BatchMatmulOp>(op);
    std::optional<Transposition> t = gemmTransposition(op, batched);
    if (!t)
      return;
    if (!op.hasPureBufferSemantics())
      return;
    Type elementType =
        cast<MemRefType>(op.getDpsInits()[0].getType()).getElementType();
    if (!elementType.isF32() && !elementType.isF64())
      return;
    // A and B of C's type, or both bf16 into an f32 C.
    Type inputType =
        cast<MemRefType>(op.getDpsInputs()[0].getType()).getElementType();
    if (inputType != elementType &&
        !(inputType.isBF16() && elementType.isF32()))
      return;
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      Type expected = op.isDpsInit(&operand) ? elementType : inputType;
      if (!type || type.getElementType() != expected ||
          !hasContiguousRows(type))
        return;
    }
    worklist.push_back({op, batched, *t});
  });
  for (Gemm &g : worklist)
    if (failed(rewrite(g.op, g.batched, g.t)))
      return signalPassFailure();
}

} // namespace
