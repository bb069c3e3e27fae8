//===- AdamW.cpp - AdamW optimizer function builder -----------------------===//
//
// Builds the contract's `optimizer` function for AdamW with PyTorch
// semantics (torch.optim.AdamW, foreach=False), optionally preceded by global
// gradient-norm clipping (torch.nn.utils.clip_grad_norm_).
//
// The partitioner shards every tensor flat, so the function only uses what
// survives that: per-parameter elementwise linalg.generic ops, scalar
// arith/math, and full reductions to rank 0 followed by tensor.extract.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::zero::models::detail;

namespace {
/// Hyper-parameter arguments, in signature order.
enum Hyper { kLr, kBeta1, kBeta2, kEps, kWeightDecay, kStep, kMaxGradNorm };
constexpr StringLiteral kHyperNames[] = {
    "lr", "beta1", "beta2", "eps", "weight_decay", "step", "max_grad_norm"};
/// AdamW's state tensors per parameter, in signature order: the two moments,
/// and for a mixed-precision (bf16) model first the f32 master copy of the
/// parameter that the update is applied to (drivers initialize a "master"
/// state from its parameter).
constexpr StringLiteral kStateKinds[] = {"exp_avg", "exp_avg_sq"};
constexpr StringLiteral kMixedStateKinds[] = {"master", "exp_avg",
                                              "exp_avg_sq"};
} // namespace

func::FuncOp mlir::zero::models::detail::buildAdamW(ModuleOp module,
                                                    FloatType elt,
                                                    ArrayRef<ParamSpec> params,
                                                    bool clipGradNorm) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  Location loc = module.getLoc();

  // Signature: params, grads, (master,) exp_avg, exp_avg_sq per param,
  // hypers. States and hypers are in the compute type (f32 for bf16).
  FloatType compute = TensorBuilder::computeTypeOf(elt);
  const bool mixed = compute != elt;
  ArrayRef<StringLiteral> kinds =
      mixed ? ArrayRef<StringLiteral>(kMixedStateKinds) : kStateKinds;
  const unsigned numKinds = kinds.size();
  const unsigned numParams = params.size();
  const unsigned gradBase = numParams;
  const unsigned stateBase = 2 * numParams;
  const unsigned hyperBase = (2 + numKinds) * numParams;
  const unsigned numHypers = clipGradNorm ? kMaxGradNorm + 1 : kMaxGradNorm;

  SmallVector<Type> paramTypes =
      llvm::map_to_vector(params, [&](const ParamSpec &p) -> Type {
        return RankedTensorType::get(p.shape, elt);
      });
  SmallVector<Type> argTypes, resultTypes;
  llvm::append_range(argTypes, paramTypes); // params
  llvm::append_range(argTypes, paramTypes); // grads
  llvm::append_range(resultTypes, paramTypes);
  for (const ParamSpec &p : params) {
    Type t = RankedTensorType::get(p.shape, compute);
    argTypes.append(numKinds, t);
    resultTypes.append(numKinds, t);
  }
  argTypes.append(numHypers, compute);

  auto fn = func::FuncOp::create(b, loc, "optimizer",
                                 b.getFunctionType(argTypes, resultTypes));
  fn->setAttr("zero.role", b.getStringAttr("optimizer"));
  auto stateAttr = [&](StringRef param, StringRef kind) {
    return b.getDictionaryAttr({b.getNamedAttr("param", b.getStringAttr(param)),
                                b.getNamedAttr("kind", b.getStringAttr(kind))});
  };
  for (auto [i, p] : llvm::enumerate(params)) {
    StringAttr name = b.getStringAttr(p.name);
    fn.setArgAttr(i, "zero.param", name);
    fn.setArgAttr(gradBase + i, "zero.grad", name);
    fn.setResultAttr(i, "zero.param", name);
    for (auto [k, kind] : llvm::enumerate(kinds)) {
      fn.setArgAttr(stateBase + numKinds * i + k, "zero.state",
                    stateAttr(p.name, kind));
      fn.setResultAttr(numParams + numKinds * i + k, "zero.state",
                       stateAttr(p.name, kind));
    }
  }
  for (unsigned h = 0; h < numHypers; ++h)
    fn.setArgAttr(hyperBase + h, "zero.hyper", b.getStringAttr(kHyperNames[h]));

  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  TensorBuilder tb(b, loc, elt);
  ScalarBuilder s = tb.scalars();
  auto hyper = [&](Hyper h) { return entry->getArgument(hyperBase + h); };
  Value lr = hyper(kLr), beta1 = hyper(kBeta1), beta2 = hyper(kBeta2);
  Value eps = hyper(kEps), step = hyper(kStep);

  // Scalars shared by every parameter, computed once.
  Value one = s.c(1.0);
  Value bc1 = s.sub(one, s.pow(beta1, step)); // 1 - beta1^t
  Value bc2 = s.sub(one, s.pow(beta2, step)); // 1 - beta2^t
  Value oneMinusBeta1 = s.sub(one, beta1);
  Value oneMinusBeta2 = s.sub(one, beta2);
  Value decay = s.sub(one, s.mul(lr, hyper(kWeightDecay))); // 1 - lr*wd

  // Global clipping: total_norm = sqrt(sum_p sum(g_p^2)), one full reduction
  // per gradient (never a tensor op that mixes two parameters), then
  // coef = min(1, max_norm / (total_norm + 1e-6)) as in clip_grad_norm_.
  Value clipCoef;
  if (clipGradNorm) {
    Value total;
    for (unsigned i = 0; i < numParams; ++i) {
      Value g = entry->getArgument(gradBase + i);
      unsigned rank = params[i].shape.size();
      Value sq = tb.reduceToScalar(
          params[i].shape, {g}, {tb.identityMap(rank)},
          [](ScalarBuilder &sb, ValueRange a) -> SmallVector<Value> {
            return {sb.add(a[1], sb.mul(a[0], a[0]))};
          });
      total = total ? s.add(total, sq) : sq;
    }
    Value norm = s.sqrt(total);
    clipCoef = s.min(one, s.div(hyper(kMaxGradNorm), s.add(norm, 1e-6)));
  }

  // One fused elementwise generic per parameter: ins(grad) outs(p, m, v)
  // yields (p', m', v'); the outputs alias the old values so bufferization
  // can update in place. Mixed precision: outs(p, master, m, v), the update
  // applied to the f32 master, p' its rounding to bf16.
  SmallVector<Value> newParams, newStates;
  for (unsigned i = 0; i < numParams; ++i) {
    unsigned rank = params[i].shape.size();
    // nanoGPT convention: decoupled weight decay only for matrices (rank >=
    // 2: linear weights, embeddings), never for biases or LayerNorm gains.
    bool decayed = rank >= 2;
    Value g = entry->getArgument(gradBase + i);
    // outs: the parameter, then its states in signature order.
    SmallVector<Value> outs = {entry->getArgument(i)};
    for (unsigned k = 0; k < numKinds; ++k)
      outs.push_back(entry->getArgument(stateBase + numKinds * i + k));
    AffineMap id = tb.identityMap(rank);
    SmallVector<AffineMap> outMaps(outs.size(), id);
    SmallVector<utils::IteratorType> parallel(rank,
                                              utils::IteratorType::parallel);
    SmallVector<Value> updated = tb.generic(
        {g}, {id}, outs, outMaps, parallel,
        [&](ScalarBuilder &sb, ValueRange a) -> SmallVector<Value> {
          // a: grad, param, (master,) m, v; the updated value is the master
          // when there is one.
          unsigned first = mixed ? 2 : 1;
          Value grad = clipCoef ? sb.mul(a[0], clipCoef) : a[0];
          Value param = decayed ? sb.mul(a[first], decay) : a[first];
          // m' = beta1*m + (1-beta1)*g;  v' = beta2*v + (1-beta2)*g*g
          Value mDecayed = sb.mul(beta1, a[first + 1]);
          Value mNew = sb.add(mDecayed, sb.mul(oneMinusBeta1, grad));
          Value vDecayed = sb.mul(beta2, a[first + 2]);
          Value vNew =
              sb.add(vDecayed, sb.mul(oneMinusBeta2, sb.mul(grad, grad)));
          // p' = p - lr * (m'/bc1) / (sqrt(v'/bc2) + eps)
          Value denom = sb.add(sb.sqrt(sb.div(vNew, bc2)), eps);
          Value pNew =
              sb.sub(param, sb.div(sb.mul(lr, sb.div(mNew, bc1)), denom));
          // generic() rounds the parameter's copy to its type.
          if (mixed)
            return {pNew, pNew, mNew, vNew};
          return {pNew, mNew, vNew};
        });
    newParams.push_back(updated[0]);
    llvm::append_range(newStates, ArrayRef<Value>(updated).drop_front());
  }

  SmallVector<Value> results(newParams);
  llvm::append_range(results, newStates);
  func::ReturnOp::create(b, loc, results);
  return fn;
}
