//===- ModelBuilder.cpp - Shared IR builders for reference models ---------===//
//
// Implements the scalar/tensor builders and the forward_backward function
// skeleton shared by the MLP and GPT generators.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/APFloat.h"

using namespace mlir;
using namespace mlir::zero::models::detail;

//===----------------------------------------------------------------------===//
// ScalarBuilder
//===----------------------------------------------------------------------===//

Value ScalarBuilder::c(double v) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v));
}

Value ScalarBuilder::negInf() {
  APFloat inf = APFloat::getInf(type.getFloatSemantics(), /*Negative=*/true);
  return arith::ConstantOp::create(b, loc, FloatAttr::get(type, inf));
}

Value ScalarBuilder::add(Value x, Value y) {
  return arith::AddFOp::create(b, loc, x, y);
}
Value ScalarBuilder::sub(Value x, Value y) {
  return arith::SubFOp::create(b, loc, x, y);
}
Value ScalarBuilder::mul(Value x, Value y) {
  return arith::MulFOp::create(b, loc, x, y);
}
Value ScalarBuilder::div(Value x, Value y) {
  return arith::DivFOp::create(b, loc, x, y);
}
Value ScalarBuilder::max(Value x, Value y) {
  return arith::MaximumFOp::create(b, loc, x, y);
}
Value ScalarBuilder::min(Value x, Value y) {
  return arith::MinimumFOp::create(b, loc, x, y);
}
Value ScalarBuilder::exp(Value x) { return math::ExpOp::create(b, loc, x); }
Value ScalarBuilder::log(Value x) { return math::LogOp::create(b, loc, x); }
Value ScalarBuilder::sqrt(Value x) { return math::SqrtOp::create(b, loc, x); }
Value ScalarBuilder::tanh(Value x) { return math::TanhOp::create(b, loc, x); }
Value ScalarBuilder::pow(Value x, Value y) {
  return math::PowFOp::create(b, loc, x, y);
}
Value ScalarBuilder::select(Value cond, Value x, Value y) {
  return arith::SelectOp::create(b, loc, cond, x, y);
}
Value ScalarBuilder::index(unsigned dim) {
  return linalg::IndexOp::create(b, loc, dim);
}
Value ScalarBuilder::toIndex(Value v) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}
Value ScalarBuilder::cmpIndex(arith::CmpIPredicate pred, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, pred, x, y);
}
Value ScalarBuilder::extract(Value source, ValueRange indices) {
  Value v = tensor::ExtractOp::create(b, loc, source, indices);
  auto f = dyn_cast<FloatType>(v.getType());
  return f && f.getWidth() < type.getWidth() ? cast(v, type) : v;
}

Value ScalarBuilder::cast(Value x, Type to) {
  auto from = dyn_cast<FloatType>(x.getType());
  auto target = dyn_cast<FloatType>(to);
  if (!from || !target || from == target)
    return x;
  if (from.getWidth() < target.getWidth())
    return arith::ExtFOp::create(b, loc, target, x);
  return arith::TruncFOp::create(b, loc, target, x);
}

//===----------------------------------------------------------------------===//
// TensorBuilder
//===----------------------------------------------------------------------===//

FloatType TensorBuilder::computeTypeOf(FloatType elt) {
  return elt.isBF16() ? Float32Type::get(elt.getContext()) : elt;
}

RankedTensorType TensorBuilder::tensorType(ArrayRef<int64_t> shape,
                                           Type type) const {
  return RankedTensorType::get(shape, type ? type : Type(elt));
}

ArrayRef<int64_t> TensorBuilder::shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

static Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

AffineMap TensorBuilder::identityMap(unsigned rank) const {
  return AffineMap::getMultiDimIdentityMap(rank, b.getContext());
}

AffineMap TensorBuilder::projectionMap(unsigned rank,
                                       ArrayRef<unsigned> dims) const {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(b.getAffineDimExpr(d));
  return AffineMap::get(rank, /*symbolCount=*/0, exprs, b.getContext());
}

Value TensorBuilder::empty(ArrayRef<int64_t> shape, Type type) {
  return tensor::EmptyOp::create(b, loc, shape, type ? type : Type(elt));
}

Value TensorBuilder::filled(ArrayRef<int64_t> shape, double value,
                            Type type) {
  auto t = cast<FloatType>(type ? type : Type(elt));
  Value cst = ScalarBuilder(b, loc, t).c(value);
  return linalg::FillOp::create(b, loc, ValueRange{cst},
                                ValueRange{empty(shape, t)})
      ->getResult(0);
}

Value TensorBuilder::filledNegInf(ArrayRef<int64_t> shape, Type type) {
  auto t = cast<FloatType>(type ? type : Type(elt));
  Value cst = ScalarBuilder(b, loc, t).negInf();
  return linalg::FillOp::create(b, loc, ValueRange{cst},
                                ValueRange{empty(shape, t)})
      ->getResult(0);
}

SmallVector<Value>
TensorBuilder::generic(ValueRange ins, ArrayRef<AffineMap> inMaps,
                       ValueRange inits, ArrayRef<AffineMap> outMaps,
                       ArrayRef<utils::IteratorType> iterators, BodyFn body) {
  SmallVector<AffineMap> maps(inMaps);
  llvm::append_range(maps, outMaps);
  SmallVector<Type> resultTypes(inits.getTypes());
  auto op = linalg::GenericOp::create(
      b, loc, resultTypes, ins, inits, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        ScalarBuilder s(nb, nloc, compute);
        SmallVector<Value> operands;
        for (Value arg : args) {
          auto f = dyn_cast<FloatType>(arg.getType());
          operands.push_back(f && f.getWidth() < compute.getWidth()
                                 ? s.cast(arg, compute)
                                 : arg);
        }
        SmallVector<Value> results = body(s, operands);
        for (auto [r, t] : llvm::zip(results, resultTypes))
          r = s.cast(r, cast<RankedTensorType>(t).getElementType());
        linalg::YieldOp::create(nb, nloc, results);
        // Extensions of operands the body did not read (an output's old
        // value, mostly) are not emitted.
        for (auto [arg, operand] : llvm::zip(args, operands))
          if (operand != arg && operand.use_empty())
            operand.getDefiningOp()->erase();
      });
  return SmallVector<Value>(op->getResults());
}

Value TensorBuilder::elementwise(ArrayRef<int64_t> shape, ValueRange ins,
                                 ArrayRef<AffineMap> inMaps, BodyFn body,
                                 Type type) {
  SmallVector<utils::IteratorType> iterators(shape.size(),
                                             utils::IteratorType::parallel);
  return generic(ins, inMaps, {empty(shape, type)},
                 {identityMap(shape.size())}, iterators, body)
      .front();
}

Value TensorBuilder::map(ValueRange ins, BodyFn body, Type type) {
  ArrayRef<int64_t> shape = shapeOf(ins.front());
  SmallVector<AffineMap> maps(ins.size(), identityMap(shape.size()));
  return elementwise(shape, ins, maps, body, type);
}

Value TensorBuilder::convert(Value x, Type type) {
  if (elementTypeOf(x) == type)
    return x;
  return map(
      {x}, [](ScalarBuilder &, ValueRange a) -> SmallVector<Value> {
        return {a[0]};
      },
      type);
}

Value TensorBuilder::narrowed(Value x) {
  return compute == elt ? x : convert(x, elt);
}

Value TensorBuilder::reduce(ArrayRef<int64_t> shape, ValueRange ins,
                            ArrayRef<AffineMap> inMaps,
                            ArrayRef<unsigned> keptDims, double init,
                            BodyFn body) {
  SmallVector<int64_t> outShape;
  SmallVector<utils::IteratorType> iterators(shape.size(),
                                             utils::IteratorType::reduction);
  for (unsigned d : keptDims) {
    outShape.push_back(shape[d]);
    iterators[d] = utils::IteratorType::parallel;
  }
  return generic(ins, inMaps, {filled(outShape, init, compute)},
                 {projectionMap(shape.size(), keptDims)}, iterators, body)
      .front();
}

Value TensorBuilder::reduceToScalar(ArrayRef<int64_t> shape, ValueRange ins,
                                    ArrayRef<AffineMap> inMaps, BodyFn body) {
  Value rank0 = reduce(shape, ins, inMaps, /*keptDims=*/{}, 0.0, body);
  return tensor::ExtractOp::create(b, loc, rank0, ValueRange{});
}

Value TensorBuilder::add(Value x, Value y, Value dest) {
  if (!dest)
    dest = empty(shapeOf(x), elementTypeOf(x));
  return linalg::AddOp::create(b, loc, ValueRange{x, y}, ValueRange{dest})
      ->getResult(0);
}

/// Shape of `x` without the reduced `dims`.
static SmallVector<int64_t> reducedShape(Value x, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> shape;
  for (auto [i, size] : llvm::enumerate(TensorBuilder::shapeOf(x)))
    if (!llvm::is_contained(dims, static_cast<int64_t>(i)))
      shape.push_back(size);
  return shape;
}

/// linalg.reduce of `x` over `dims` into `init`, each element combined
/// with the accumulator by one `CombineOp` (element first).
template <typename CombineOp>
static Value reduceInto(OpBuilder &b, Location loc, Value x, Value init,
                        ArrayRef<int64_t> dims) {
  return linalg::ReduceOp::create(
             b, loc, ValueRange{x}, ValueRange{init}, dims,
             [](OpBuilder &nb, Location nloc, ValueRange args) {
               Value r = CombineOp::create(nb, nloc, args[0], args[1]);
               linalg::YieldOp::create(nb, nloc, r);
             })
      ->getResult(0);
}

Value TensorBuilder::sum(Value x, ArrayRef<int64_t> dims) {
  if (cast<FloatType>(elementTypeOf(x)).getWidth() < compute.getWidth()) {
    ArrayRef<int64_t> shape = shapeOf(x);
    SmallVector<unsigned> kept;
    for (unsigned d = 0; d < shape.size(); ++d)
      if (!llvm::is_contained(dims, static_cast<int64_t>(d)))
        kept.push_back(d);
    return reduce(shape, {x}, {identityMap(shape.size())}, kept, 0.0,
                  [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
                    return {s.add(a[1], a[0])};
                  });
  }
  return reduceInto<arith::AddFOp>(
      b, loc, x, filled(reducedShape(x, dims), 0.0, elementTypeOf(x)), dims);
}

Value TensorBuilder::max(Value x, ArrayRef<int64_t> dims) {
  return reduceInto<arith::MaximumFOp>(
      b, loc, x, filledNegInf(reducedShape(x, dims), elementTypeOf(x)), dims);
}

Value TensorBuilder::transpose(Value x, ArrayRef<int64_t> perm) {
  ArrayRef<int64_t> in = shapeOf(x);
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(in[p]);
  Value init = empty(shape, elementTypeOf(x));
  return linalg::TransposeOp::create(b, loc, x, init, perm)->getResult(0);
}

Value TensorBuilder::broadcast(Value x, ArrayRef<int64_t> shape,
                               ArrayRef<int64_t> dims) {
  Value init = empty(shape, elementTypeOf(x));
  return linalg::BroadcastOp::create(b, loc, x, init, dims)->getResult(0);
}

Value TensorBuilder::matmul(Value a, Value bm, bool transA, bool transB,
                            Value acc, bool keepAccumulator) {
  if (transA)
    a = transpose(a, {1, 0});
  if (transB)
    bm = transpose(bm, {1, 0});
  SmallVector<int64_t> shape = {shapeOf(a)[0], shapeOf(bm)[1]};
  Value init = acc ? convert(acc, compute) : filled(shape, 0.0, compute);
  Value result =
      linalg::MatmulOp::create(b, loc, TypeRange{tensorType(shape, compute)},
                               ValueRange{a, bm}, ValueRange{init})
          ->getResult(0);
  return keepAccumulator ? result : narrowed(result);
}

Value TensorBuilder::batchMatmul(Value a, Value bm, bool transA, bool transB) {
  if (transA)
    a = transpose(a, {0, 2, 1});
  if (transB)
    bm = transpose(bm, {0, 2, 1});
  SmallVector<int64_t> shape = {shapeOf(a)[0], shapeOf(a)[1], shapeOf(bm)[2]};
  return narrowed(linalg::BatchMatmulOp::create(
                      b, loc, TypeRange{tensorType(shape, compute)},
                      ValueRange{a, bm},
                      ValueRange{filled(shape, 0.0, compute)})
                      ->getResult(0));
}

Value TensorBuilder::linear(Value x, Value w, Value bias,
                            bool keepAccumulator) {
  SmallVector<int64_t> shape = {shapeOf(x)[0], shapeOf(w)[1]};
  // The accumulator in the compute type: a broadcast, or with a narrower
  // bias one elementwise op that broadcasts and extends it.
  Value acc =
      elementTypeOf(bias) == compute
          ? broadcast(bias, shape, /*dims=*/{0})
          : elementwise(
                shape, {bias}, {projectionMap(2, {1})},
                [](ScalarBuilder &, ValueRange a) -> SmallVector<Value> {
                  return {a[0]};
                },
                compute);
  return matmul(x, w, /*transA=*/false, /*transB=*/false, acc,
                keepAccumulator);
}

TensorBuilder::LinearGrads
TensorBuilder::linearBackward(Value x, Value w, Value dy, bool needDx) {
  // y[n,o] = sum_i x[n,i] w[i,o] + bias[o]
  //   dw[i,o] = sum_n x[n,i] dy[n,o]   = (x^T @ dy)[i,o]
  //   dbias[o] = sum_n dy[n,o]
  //   dx[n,i] = sum_o dy[n,o] w[i,o]   = (dy @ w^T)[n,i]
  // A dy wider than the model's type (the f32 residual stream's gradient)
  // is rounded for the two matmuls, as autocast does; dbias sums it unrounded.
  Value dyOperand = convert(dy, elt);
  LinearGrads g;
  g.dw = matmul(x, dyOperand, /*transA=*/true);
  g.dbias = sum(dy, {0});
  if (needDx)
    g.dx = matmul(dyOperand, w, /*transA=*/false, /*transB=*/true);
  return g;
}

Value TensorBuilder::collapse(Value x,
                              ArrayRef<ReassociationIndices> reassociation) {
  return tensor::CollapseShapeOp::create(b, loc, x, reassociation);
}

Value TensorBuilder::expand(Value x, ArrayRef<int64_t> shape,
                            ArrayRef<ReassociationIndices> reassociation) {
  return tensor::ExpandShapeOp::create(
      b, loc, tensorType(shape, elementTypeOf(x)), x, reassociation);
}

static SmallVector<OpFoldResult> indexAttrs(OpBuilder &b,
                                            ArrayRef<int64_t> values) {
  return llvm::map_to_vector(
      values, [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); });
}

SmallVector<OpFoldResult> TensorBuilder::offsets(ArrayRef<int64_t> values) {
  return indexAttrs(b, values);
}

Value TensorBuilder::extractSlice(Value x, ArrayRef<OpFoldResult> offsets,
                                  ArrayRef<int64_t> sizes,
                                  ArrayRef<int64_t> resultShape) {
  SmallVector<int64_t> ones(sizes.size(), 1);
  return tensor::ExtractSliceOp::create(
      b, loc, tensorType(resultShape, elementTypeOf(x)), x, offsets,
      indexAttrs(b, sizes), indexAttrs(b, ones));
}

Value TensorBuilder::insertSlice(Value src, Value dest,
                                 ArrayRef<OpFoldResult> offsets,
                                 ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> ones(sizes.size(), 1);
  return tensor::InsertSliceOp::create(
      b, loc, src, dest, offsets, indexAttrs(b, sizes), indexAttrs(b, ones));
}

//===----------------------------------------------------------------------===//
// forward_backward
//===----------------------------------------------------------------------===//

func::FuncOp mlir::zero::models::detail::buildForwardBackward(
    ModuleOp module, FloatType elt, ArrayRef<ParamSpec> params,
    ArrayRef<BatchSpec> batch, ForwardBackwardFn body) {
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  Location loc = module.getLoc();

  SmallVector<Type> argTypes, resultTypes;
  FloatType computeType = TensorBuilder::computeTypeOf(elt);
  resultTypes.push_back(RankedTensorType::get({}, computeType));
  for (const ParamSpec &p : params) {
    argTypes.push_back(RankedTensorType::get(p.shape, elt));
    resultTypes.push_back(argTypes.back());
  }
  for (const BatchSpec &in : batch)
    argTypes.push_back(RankedTensorType::get(in.shape, in.elementType));

  auto fn = func::FuncOp::create(b, loc, "forward_backward",
                                 b.getFunctionType(argTypes, resultTypes));
  fn->setAttr("zero.role", b.getStringAttr("forward_backward"));
  for (auto [i, p] : llvm::enumerate(params)) {
    fn.setArgAttr(i, "zero.param", b.getStringAttr(p.name));
    NamedAttribute init =
        p.init.std > 0
            ? b.getNamedAttr("std", b.getF64FloatAttr(p.init.std))
            : b.getNamedAttr("value", b.getF64FloatAttr(p.init.value));
    fn.setArgAttr(i, "zero.init",
                  b.getDictionaryAttr(
                      {b.getNamedAttr("kind", b.getStringAttr(
                                                  p.init.std > 0 ? "normal"
                                                                 : "constant")),
                       init}));
    fn.setResultAttr(1 + i, "zero.grad", b.getStringAttr(p.name));
  }
  for (auto [i, in] : llvm::enumerate(batch)) {
    fn.setArgAttr(params.size() + i, "zero.batch", b.getStringAttr(in.name));
    if (in.tokenRange > 0)
      fn.setArgAttr(params.size() + i, "zero.token_range",
                    b.getI64IntegerAttr(in.tokenRange));
  }
  fn.setResultAttr(0, "zero.loss", b.getUnitAttr());

  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  TensorBuilder tb(b, loc, elt);
  ValueRange args = entry->getArguments();
  LossAndGrads out =
      body(tb, args.take_front(params.size()), args.drop_front(params.size()));
  assert(out.grads.size() == params.size() && "one gradient per parameter");

  SmallVector<Value> results;
  results.push_back(tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, computeType), ValueRange{out.loss}));
  for (Value g : out.grads)
    results.push_back(tb.convert(g, elt));
  func::ReturnOp::create(b, loc, results);
  return fn;
}

void mlir::zero::models::detail::loadModelDialects(MLIRContext &ctx) {
  ctx.loadDialect<arith::ArithDialect, func::FuncDialect, linalg::LinalgDialect,
                  math::MathDialect, scf::SCFDialect, tensor::TensorDialect>();
}
