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

#include "ElementwiseCasts.h"
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

/// A mixed-precision matmul's f32 result that exists only to be rounded to
/// bf16 (bf16-results): the rounding, the bf16 buffer it writes, and what
/// goes when one GEMM writes that buffer instead.
struct Rounding {
  linalg::GenericOp round;
  Value out;
  /// How the f32 buffer starts: zero-filled (the GEMM overwrites, beta 0),
  /// or the exact widening of bf16 values (a bias broadcast): that op then
  /// writes them into the bf16 buffer, which the GEMM accumulates into
  /// (beta 1; bf16 widens to f32 exactly, so the sum is the same).
  linalg::FillOp fill;
  linalg::GenericOp widen;
  /// The f32 buffer's subview (zero-pad-gemm-rows's), allocation and
  /// deallocations.
  Operation *view = nullptr;
  memref::AllocOp alloc;
  SmallVector<Operation *> deallocs;
};

/// The op just before `op` (nothing but ops without memory effects in
/// between) if it is a bf16 widening into `c`.
linalg::GenericOp widenedInitOf(Value c, Operation *op) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto generic = dyn_cast<linalg::GenericOp>(prev))
      return generic.getDpsInits()[0] == c && zero::isBf16Widening(generic)
                 ? generic
                 : linalg::GenericOp();
    if (!isMemoryEffectFree(prev))
      return {};
  }
  return {};
}

/// Whether the CUDA backend splits `op`'s reduction into chunks of K
/// (reductionChunk in runtime/lib/backends/cuda/CudaBackend.cpp: K at least
/// 16,384 and 4 x max(M, N)), accumulated into an f32 result: a bf16 result
/// would be rounded by each.
bool hasLongReduction(linalg::LinalgOp op, bool batched, Transposition t) {
  auto a = cast<MemRefType>(op.getDpsInputs()[0].getType());
  auto c = cast<MemRefType>(op.getDpsInits()[0].getType());
  unsigned r = batched ? 1 : 0;
  if (!a.hasStaticShape() || !c.hasStaticShape())
    return false;
  int64_t m = c.getDimSize(r), n = c.getDimSize(r + 1),
          k = a.getDimSize(t.a ? r : r + 1);
  return k >= 16384 && k >= 4 * std::max(m, n);
}

/// The rounding of `op`'s f32 result, if that result is a fresh buffer
/// used by nothing else (see bf16-results).
std::optional<Rounding> roundingOf(linalg::LinalgOp op) {
  Value c = op.getDpsInits()[0];
  Rounding r;
  r.fill = zeroFillOf(c, op);
  if (!r.fill)
    r.widen = widenedInitOf(c, op);
  if (!r.fill && !r.widen)
    return std::nullopt;
  Value root = c;
  if (auto view = c.getDefiningOp<memref::SubViewOp>()) {
    // A subview at the origin with unit strides: zero-pad-gemm-rows's.
    if (!llvm::all_of(view.getStaticOffsets(),
                      [](int64_t o) { return o == 0; }) ||
        !llvm::all_of(view.getStaticStrides(),
                      [](int64_t s) { return s == 1; }))
      return std::nullopt;
    r.view = view;
    root = view.getSource();
  }
  r.alloc = root.getDefiningOp<memref::AllocOp>();
  if (!r.alloc)
    return std::nullopt;
  // Through a view, the allocation has no other users than the view and
  // its deallocations (the loop below sees the view's users).
  if (r.view) {
    for (Operation *user : root.getUsers()) {
      if (isa<memref::DeallocOp>(user))
        r.deallocs.push_back(user);
      else if (user != r.view)
        return std::nullopt;
    }
  }
  for (Operation *user : c.getUsers()) {
    if (user == op.getOperation() ||
        (r.fill && user == r.fill.getOperation()) ||
        (r.widen && user == r.widen.getOperation()))
      continue;
    if (!r.view && isa<memref::DeallocOp>(user)) {
      r.deallocs.push_back(user);
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || r.round || !zero::isBf16Rounding(generic) ||
        generic.getDpsInputs()[0] != c ||
        generic->getBlock() != op->getBlock() ||
        !op->isBeforeInBlock(generic))
      return std::nullopt;
    r.round = generic;
  }
  if (!r.round)
    return std::nullopt;
  r.out = r.round.getDpsInits()[0];
  auto outType = dyn_cast<MemRefType>(r.out.getType());
  if (!outType || !hasContiguousRows(outType) ||
      outType.getShape() != cast<MemRefType>(c.getType()).getShape())
    return std::nullopt;
  // Between the two: nothing that reads or writes memory, but allocations
  // and the deallocation of buffers other than the bf16 one (the GEMM
  // takes the matmul's place, where its operands are still live).
  Value outBuffer = zero::getViewedBuffer(r.out);
  for (Operation *between = op->getNextNode(); between != r.round;
       between = between->getNextNode()) {
    if (auto dealloc = dyn_cast<memref::DeallocOp>(between)) {
      if (zero::getViewedBuffer(dealloc.getMemref()) == outBuffer)
        return std::nullopt;
      continue;
    }
    if (!isa<memref::AllocOp>(between) && !isMemoryEffectFree(between))
      return std::nullopt;
  }
  // The bf16 buffer must exist where the GEMM (or the widening that starts
  // it) runs: defined before, or an allocation (and a view of it) in the
  // same block that can move up.
  Operation *first = r.widen ? r.widen.getOperation() : op.getOperation();
  Operation *def = r.out.getDefiningOp();
  if (def && def->getBlock() == op->getBlock() && !def->isBeforeInBlock(first)) {
    if (auto view = dyn_cast<memref::SubViewOp>(def)) {
      Operation *base = view.getSource().getDefiningOp();
      if (!base || !isa<memref::AllocOp>(base) ||
          base->getNumOperands() != 0 || base->getBlock() != op->getBlock() ||
          !llvm::all_of(view->getOperands(),
                        [&](Value v) { return v == view.getSource(); }))
        return std::nullopt;
    } else if (!isa<memref::AllocOp>(def) || def->getNumOperands() != 0) {
      return std::nullopt;
    }
  } else if (def && def->getBlock() != op->getBlock()) {
    return std::nullopt;
  }
  return r;
}

/// Moves the bf16 buffer's allocation (and its view) up before `first`,
/// where roundingOf allowed it.
void defineBefore(Value out, Operation *first) {
  Operation *def = out.getDefiningOp();
  if (!def || def->getBlock() != first->getBlock() ||
      def->isBeforeInBlock(first))
    return;
  if (auto view = dyn_cast<memref::SubViewOp>(def)) {
    Operation *base = view.getSource().getDefiningOp();
    if (!base->isBeforeInBlock(first))
      base->moveBefore(first);
  }
  def->moveBefore(first);
}

/// Makes the widening that initializes a rounded GEMM's f32 buffer write
/// the bf16 buffer instead (the same values: bf16 in, bf16 out), with the
/// bf16 buffer's allocation moved up before it.
void widenIntoBf16(Rounding &r) {
  r.widen.getDpsInitsMutable()[0].set(r.out);
  Block &body = r.widen.getRegion().front();
  Operation *ext = &body.front();
  body.getArgument(1).setType(
      cast<MemRefType>(r.out.getType()).getElementType());
  ext->getResult(0).replaceAllUsesWith(body.getArgument(0));
  ext->erase();
}

struct ZeroLinalgToRuntimePass
    : public zero::impl::ZeroLinalgToRuntimePassBase<ZeroLinalgToRuntimePass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult rewrite(linalg::LinalgOp op, bool batched, Transposition t,
                        Rounding *rounding);
};

LogicalResult ZeroLinalgToRuntimePass::rewrite(linalg::LinalgOp op,
                                               bool batched, Transposition t,
                                               Rounding *rounding) {
  Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1];
  // With a rounding, the GEMM writes the rounding's bf16 buffer.
  Value c = rounding ? rounding->out : op.getDpsInits()[0];
  // The type of beta: C's, or f32 for a bf16 result (the accumulation's).
  Type elementType =
      cast<MemRefType>(op.getDpsInits()[0].getType()).getElementType();
  // bf16 operands accumulate into f32 (a mixed-precision matmul).
  bool mixed = cast<MemRefType>(a.getType()).getElementType().isBF16();
  StringRef suffix = rounding             ? "bf16_bf16"
                     : mixed              ? "bf16_f32"
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

  if (rounding)
    defineBefore(rounding->out, rounding->widen ? rounding->widen.getOperation()
                                                : op.getOperation());
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
  linalg::FillOp zeroFill = rounding ? rounding->fill : zeroFillOf(c, op);
  if (rounding && rounding->widen)
    widenIntoBf16(*rounding);
  args.push_back(arith::ConstantOp::create(
      b, loc, elementType, b.getFloatAttr(elementType, zeroFill ? 0.0 : 1.0)));
  args.push_back(vc.ptr);
  pushStrides(vc);
  func::CallOp::create(b, loc, *callee, args);
  LLVM_DEBUG(llvm::dbgs() << "lowered " << op->getName() << " to " << name
                          << "\n");
  if (rounding)
    rounding->round->erase();
  op->erase();
  if (zeroFill)
    zeroFill->erase();
  if (rounding) {
    for (Operation *dealloc : rounding->deallocs)
      dealloc->erase();
    if (rounding->view)
      rounding->view->erase();
    rounding->alloc->erase();
  }
  return success();
}

void ZeroLinalgToRuntimePass::runOnOperation() {
  struct Gemm {
    linalg::LinalgOp op;
    bool batched;
    Transposition t;
    std::optional<Rounding> rounding;
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
    std::optional<Rounding> rounding;
    if (bf16Results && inputType.isBF16() && !hasLongReduction(op, batched, *t))
      rounding = roundingOf(op);
    if (bf16ResultsOnly && !rounding)
      return;
    worklist.push_back({op, batched, *t, std::move(rounding)});
  });
  for (Gemm &g : worklist)
    if (failed(rewrite(g.op, g.batched, g.t,
                       g.rounding ? &*g.rounding : nullptr)))
      return signalPassFailure();
}

} // namespace
