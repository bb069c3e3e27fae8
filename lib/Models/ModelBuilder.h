//===- ModelBuilder.h - Shared IR builders for reference models -*- C++ -*-===//
//
// The small vocabulary the MLP, GPT and AdamW builders are written in: scalar
// math inside linalg bodies (ScalarBuilder), tensor-level linalg/tensor ops
// (TensorBuilder), and the two training-step functions with their `zero.*`
// attributes. Private to lib/Models.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_MODELS_MODELBUILDER_H
#define ZERO_LIB_MODELS_MODELBUILDER_H

#include "zero/Models/Models.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::zero::models::detail {

/// Emits scalar arith/math ops at the insertion point of `b`, in the model's
/// compute type (f32 for a bf16 model, else its float type). Used both
/// inside linalg bodies and at function level.
class ScalarBuilder {
public:
  ScalarBuilder(OpBuilder &b, Location loc, FloatType type)
      : b(b), loc(loc), type(type) {}

  Value c(double v);
  Value add(Value x, Value y);
  Value sub(Value x, Value y);
  Value mul(Value x, Value y);
  Value div(Value x, Value y);
  // With a constant operand. Each creates its constant itself, right before
  // the op: the emitted order then never depends on the (unspecified) order
  // in which C++ evaluates call arguments, so the IR is the same with every
  // compiler. For the same reason, callers never pass two op-creating
  // expressions to one call.
  Value add(Value x, double y) { return add(x, c(y)); }
  Value sub(double x, Value y) { return sub(c(x), y); }
  Value mul(Value x, double y) { return mul(x, c(y)); }
  Value div(double x, Value y) { return div(c(x), y); }
  Value max(Value x, Value y);
  Value min(Value x, Value y);
  Value exp(Value x);
  Value log(Value x);
  Value sqrt(Value x);
  Value tanh(Value x);
  Value pow(Value x, Value y);
  Value select(Value cond, Value x, Value y);
  /// The float constant -infinity.
  Value negInf();

  /// `linalg.index` of loop `dim`; only valid inside a linalg body.
  Value index(unsigned dim);
  /// Casts an integer (e.g. an i32 token id) to `index`.
  Value toIndex(Value v);
  Value cmpIndex(arith::CmpIPredicate pred, Value x, Value y);
  /// `tensor.extract` of `source[indices]`, a float narrower than the
  /// compute type extended to it.
  Value extract(Value source, ValueRange indices);
  /// `x` extended (arith.extf) or truncated (arith.truncf) to `to`; `x`
  /// itself when it has that type or is no float.
  Value cast(Value x, Type to);

  OpBuilder &b;
  Location loc;
  FloatType type;
};

/// Body of a linalg.generic: receives the block arguments (inputs, then
/// outputs) and returns the values to yield.
using BodyFn =
    llvm::function_ref<SmallVector<Value>(ScalarBuilder &, ValueRange)>;

/// Tensor-level builder: every method emits upstream linalg/tensor ops on
/// static-shaped tensors of the model's float type and returns the result.
///
/// Mixed precision (a bf16 model): tensors are stored in bf16, but every
/// linalg body computes in the f32 compute type (generic() extends bf16
/// operands and rounds results to the output's type once), matmuls
/// accumulate in f32 and round their result to bf16, and reductions keep an
/// f32 accumulator and result (row statistics, softmax denominators, bias
/// gradients) until a caller converts them.
class TensorBuilder {
public:
  TensorBuilder(OpBuilder &b, Location loc, FloatType elt)
      : b(b), loc(loc), elt(elt), compute(computeTypeOf(elt)) {}

  /// The type a model of element type `elt` computes in: f32 for bf16.
  static FloatType computeTypeOf(FloatType elt);

  OpBuilder &builder() { return b; }
  Location getLoc() const { return loc; }
  FloatType getElementType() const { return elt; }
  FloatType getComputeType() const { return compute; }
  ScalarBuilder scalars() { return ScalarBuilder(b, loc, compute); }

  RankedTensorType tensorType(ArrayRef<int64_t> shape, Type type = {}) const;
  static ArrayRef<int64_t> shapeOf(Value v);

  // --- Affine maps over a loop nest of `rank` dims ---
  AffineMap identityMap(unsigned rank) const;
  /// (d0, ..., d{rank-1}) -> (d{dims[0]}, d{dims[1]}, ...); `{}` gives the
  /// scalar map `-> ()`.
  AffineMap projectionMap(unsigned rank, ArrayRef<unsigned> dims) const;

  // --- Creation ---
  Value empty(ArrayRef<int64_t> shape, Type type = {});
  /// linalg.fill of a fresh tensor (element type `type`, default the
  /// model's) with `value`.
  Value filled(ArrayRef<int64_t> shape, double value, Type type = {});
  Value filledNegInf(ArrayRef<int64_t> shape, Type type = {});

  // --- linalg.generic ---
  /// General linalg.generic. `inits` are the output operands; a reduction
  /// generic needs initialized (filled) inits. The body sees float operands
  /// narrower than the compute type extended to it, and each yielded value
  /// is cast to its output's element type.
  SmallVector<Value> generic(ValueRange ins, ArrayRef<AffineMap> inMaps,
                             ValueRange inits, ArrayRef<AffineMap> outMaps,
                             ArrayRef<utils::IteratorType> iterators,
                             BodyFn body);
  /// Elementwise op over the iteration space `shape` (all loops parallel, the
  /// result indexed by the identity map). Inputs may broadcast through
  /// `inMaps`. The result has element type `type` (default the model's).
  Value elementwise(ArrayRef<int64_t> shape, ValueRange ins,
                    ArrayRef<AffineMap> inMaps, BodyFn body, Type type = {});
  /// Elementwise op over same-shaped inputs (identity maps everywhere).
  Value map(ValueRange ins, BodyFn body, Type type = {});
  /// `x` with element type `type` (`x` itself when it has it).
  Value convert(Value x, Type type);
  /// Reduction generic over the iteration space `shape`: the result keeps the
  /// loops in `keptDims` (in order) and reduces all others. The body receives
  /// the inputs and the accumulator (initialized to `init`, in the compute
  /// type) and returns the new accumulator.
  Value reduce(ArrayRef<int64_t> shape, ValueRange ins,
               ArrayRef<AffineMap> inMaps, ArrayRef<unsigned> keptDims,
               double init, BodyFn body);
  /// Full reduction of `shape` to a rank-0 tensor, then `tensor.extract` to a
  /// scalar (the form the optimizer contract allows).
  Value reduceToScalar(ArrayRef<int64_t> shape, ValueRange ins,
                       ArrayRef<AffineMap> inMaps, BodyFn body);

  // --- Named linalg ops ---
  /// linalg.add of two same-shaped tensors into `dest` (a fresh tensor by
  /// default; pass one of the inputs to let bufferization update it in
  /// place). The result has the operands' element type (f32 for a bf16
  /// model's residual stream).
  Value add(Value x, Value y, Value dest = {});
  /// linalg.reduce with addf over `dims` of `x`; for `x` narrower than the
  /// compute type, a reduce() with an accumulator in the compute type.
  Value sum(Value x, ArrayRef<int64_t> dims);
  /// linalg.reduce with maximumf over `dims` of `x`.
  Value max(Value x, ArrayRef<int64_t> dims);
  Value transpose(Value x, ArrayRef<int64_t> perm);
  /// linalg.broadcast of `x` into `shape`, adding the loop dims `dims`.
  Value broadcast(Value x, ArrayRef<int64_t> shape, ArrayRef<int64_t> dims);
  /// 2-D linalg.matmul of op(a) @ op(b), op = transpose where requested.
  /// Transposed operands are materialized with linalg.transpose so that every
  /// contraction is a plain row-major matmul (one pattern for the later GEMM
  /// lowering). The accumulator starts at `acc` when given, else at zero. It
  /// is in the compute type; with narrower operands the result is rounded to
  /// the model's type afterwards, unless `keepAccumulator` (then the result
  /// stays in the compute type).
  Value matmul(Value a, Value bm, bool transA = false, bool transB = false,
               Value acc = {}, bool keepAccumulator = false);
  /// 3-D linalg.batch_matmul, same conventions as matmul().
  Value batchMatmul(Value a, Value bm, bool transA = false,
                    bool transB = false);

  // --- Layers shared by the models ---
  /// y = x @ w + bias for x: N x I, w: I x O, bias: O. The bias is broadcast
  /// into the matmul's accumulator (addmm), so there is no separate pass.
  /// `keepAccumulator` as for matmul().
  Value linear(Value x, Value w, Value bias, bool keepAccumulator = false);
  struct LinearGrads {
    Value dx, dw, dbias;
  };
  /// Backward of linear(): dw = x^T @ dy, dbias = sum_rows(dy),
  /// dx = dy @ w^T (only when `needDx`). A `dy` in the compute type of a
  /// bf16 model is rounded to bf16 for the two matmuls; dbias sums it as
  /// it is.
  LinearGrads linearBackward(Value x, Value w, Value dy, bool needDx);

  // --- Reshapes and slices ---
  Value collapse(Value x, ArrayRef<ReassociationIndices> reassociation);
  Value expand(Value x, ArrayRef<int64_t> shape,
               ArrayRef<ReassociationIndices> reassociation);
  /// Unit-stride slice with static sizes; `resultShape` may drop unit dims.
  Value extractSlice(Value x, ArrayRef<OpFoldResult> offsets,
                     ArrayRef<int64_t> sizes, ArrayRef<int64_t> resultShape);
  Value insertSlice(Value src, Value dest, ArrayRef<OpFoldResult> offsets,
                    ArrayRef<int64_t> sizes);
  /// Static offsets for the slice methods.
  SmallVector<OpFoldResult> offsets(ArrayRef<int64_t> values);

private:
  /// The contraction's result in the model's type.
  Value narrowed(Value x);

  OpBuilder &b;
  Location loc;
  FloatType elt, compute;
};

//===----------------------------------------------------------------------===//
// Training-step functions
//===----------------------------------------------------------------------===//

/// How a parameter is initialized (`zero.init`): normal(0, std) when `std`
/// is positive, else the constant `value`.
struct InitSpec {
  double std = 0, value = 0;
  static InitSpec normal(double std) { return {std, 0}; }
  static InitSpec constant(double value) { return {0, value}; }
};

/// A trainable parameter.
struct ParamSpec {
  std::string name;
  SmallVector<int64_t, 2> shape;
  InitSpec init;
};

/// A batch input of forward_backward (`zero.batch = name`); `tokenRange` > 0
/// marks token ids in [0, tokenRange) (`zero.token_range`).
struct BatchSpec {
  std::string name;
  SmallVector<int64_t, 3> shape;
  Type elementType;
  int64_t tokenRange = 0;
};

/// What a model's forward/backward body returns: the scalar loss and one
/// gradient per parameter, in parameter order.
struct LossAndGrads {
  Value loss;
  SmallVector<Value> grads;
};

using ForwardBackwardFn = llvm::function_ref<LossAndGrads(
    TensorBuilder &, ValueRange params, ValueRange batch)>;

/// Adds `func.func @forward_backward(params..., batch...) -> (loss,
/// grads...)` to `module` with the contract's attributes, its body built by
/// `body`. The loss is in the compute type; a gradient the body returns in
/// another type than its parameter's is converted to it.
func::FuncOp buildForwardBackward(ModuleOp module, FloatType elt,
                                  ArrayRef<ParamSpec> params,
                                  ArrayRef<BatchSpec> batch,
                                  ForwardBackwardFn body);

/// Adds the AdamW `func.func @optimizer` for `params` to `module`.
func::FuncOp buildAdamW(ModuleOp module, FloatType elt,
                        ArrayRef<ParamSpec> params, bool clipGradNorm);

/// Loads the dialects the builders emit into `ctx`.
void loadModelDialects(MLIRContext &ctx);

/// The MLIR float type of `type`.
FloatType getFloatType(MLIRContext &ctx, ElementType type);

/// Fails when a size is below 1; `what` names the configuration field.
llvm::Error checkPositive(StringRef what, int64_t value);
/// Fails when the element count of `shape` overflows int64 (the generators
/// accept any size that the IR can represent).
llvm::Error checkElementCount(StringRef what, ArrayRef<int64_t> shape);

} // namespace mlir::zero::models::detail

#endif // ZERO_LIB_MODELS_MODELBUILDER_H
