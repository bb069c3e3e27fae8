//===- GPT.cpp - GPT-2 training-step builder ------------------------------===//
//
// GPT-2 as in nanoGPT (model.py): token + position embeddings, pre-LN blocks
// x += attn(ln_1(x)); x += mlp(ln_2(x)), final LayerNorm, LM head tied to
// wte, mean next-token cross-entropy. The backward pass is written out op by
// op; each helper states the derivative it implements.
//
// Activations are kept 2-D as (B*T) x C so that every projection is one
// linalg.matmul; attention works on (B*H) x T x D with linalg.batch_matmul.
//
// Mixed precision (bf16): the residual stream x and its gradient stay in the
// compute type (f32), as under torch.autocast: each block's branch output is
// added to it unrounded (the projection's f32 accumulator), LayerNorm reads
// it in f32, and the gradient is rounded to bf16 only where it enters a
// matmul. Everything else (LayerNorm outputs, q/k/v, scores, probabilities,
// MLP activations, logits) is stored in bf16. For an f32 model the compute
// type is f32 and none of this changes the IR.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"

#include <array>
#include <cmath>

using namespace mlir;
using namespace mlir::zero::models;
using namespace mlir::zero::models::detail;

namespace {
constexpr double kLayerNormEps = 1e-5;
/// GELU tanh approximation: 0.5 x (1 + tanh(kGeluScale (x + kGeluCubic x^3))).
constexpr double kGeluScale = 0.7978845608028654; // sqrt(2 / pi)
constexpr double kGeluCubic = 0.044715;

/// Parameters of one transformer block, in signature order.
enum BlockParam {
  kLn1Weight,
  kLn1Bias,
  kAttnWeight,
  kAttnBias,
  kAttnProjWeight,
  kAttnProjBias,
  kLn2Weight,
  kLn2Bias,
  kFcWeight,
  kFcBias,
  kMlpProjWeight,
  kMlpProjBias,
  kParamsPerBlock
};
/// Index of wte, wpe, and the first block parameter.
constexpr unsigned kWte = 0, kWpe = 1, kFirstBlock = 2;

struct LayerNormCache {
  Value y;    ///< Output, N x C.
  Value xhat; ///< Normalized input (x - mean) * rstd, N x C.
  Value rstd; ///< 1 / sqrt(var + eps), N.
};

struct LayerNormGrads {
  Value dx, dw, db;
};

/// What a block's backward needs from its forward.
struct BlockCache {
  LayerNormCache ln1, ln2;
  Value q, k, v;    ///< (B*H) x T x D.
  Value probs;      ///< Softmax of the masked scores, (B*H) x T x T.
  Value attnMerged; ///< Attention output with heads merged, N x C.
  Value fcPre;      ///< c_fc output before GELU, N x 4C.
  Value fcAct;      ///< GELU output, N x 4C.
};

struct AttentionGrads {
  Value dq, dk, dv;
};

struct CrossEntropy {
  Value loss;    ///< Scalar.
  Value dlogits; ///< d loss / d logits, N x V.
};

/// Emits forward_backward's body for one GPT configuration.
class GPTBuilder {
public:
  GPTBuilder(TensorBuilder &tb, const GPTConfig &c)
      : tb(tb), B(c.batch), T(c.seq), C(c.dModel), H(c.heads),
        D(c.dModel / c.heads), V(c.vocab), N(c.batch * c.seq),
        BH(c.batch * c.heads), numLayers(c.layers) {}

  LossAndGrads build(ValueRange params, ValueRange batch);

private:
  Value embed(Value tokens, Value wte, Value wpe);
  Value scatterAddRows(Value table, Value ids, Value rows);

  Value blockForward(Value x, ValueRange p, BlockCache &cache);
  Value blockBackward(Value dx, ValueRange p, const BlockCache &cache,
                      MutableArrayRef<Value> grads);

  LayerNormCache layerNorm(Value x, Value w, Value b);
  LayerNormGrads layerNormBackward(Value dy, const LayerNormCache &cache,
                                   Value w);

  std::array<Value, 3> splitQKV(Value qkv);
  Value mergeQKV(Value dq, Value dk, Value dv);
  Value splitHeads(Value x);
  Value mergeHeads(Value y);
  Value attention(Value q, Value k, Value v, Value &probs);
  AttentionGrads attentionBackward(Value dy, const BlockCache &cache);

  Value gelu(Value x);
  Value geluBackward(Value x, Value dy);

  CrossEntropy crossEntropy(Value logits, Value targets);

  // Loop-nest maps used throughout.
  AffineMap id(unsigned rank) const { return tb.identityMap(rank); }
  AffineMap dims(unsigned rank, ArrayRef<unsigned> kept) const {
    return tb.projectionMap(rank, kept);
  }

  TensorBuilder &tb;
  const int64_t B, T, C, H, D, V, N, BH, numLayers;
};
} // namespace

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

/// x[b,t,:] = wte[tokens[b,t], :] + wpe[t, :], returned as N x C in the
/// compute type (the residual stream). The gather is a tensor.extract of wte
/// inside the generic's body.
Value GPTBuilder::embed(Value tokens, Value wte, Value wpe) {
  Value x = tb.elementwise(
      {B, T, C}, {tokens, wpe}, {dims(3, {0, 1}), dims(3, {1, 2})},
      [&](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
        Value row = s.toIndex(a[0]);
        return {s.add(s.extract(wte, {row, s.index(2)}), a[1])};
      },
      tb.getComputeType());
  return tb.collapse(x, {{0, 1}, {2}});
}

/// table[ids[n], :] += rows[n, :] for n = 0..N-1, in order, so repeated ids
/// accumulate. An scf.for carries the table; each iteration adds one row via
/// extract_slice / linalg.generic / insert_slice, the generic reading the
/// extracted row as its output's old value (`out + in`), so that
/// bufferization updates the table in place: no row buffer and no copy per
/// token, and after lowering one loop nest over the tokens that the cuda
/// target can run as a kernel. (A linalg.add with the row as both input and
/// output would not stay in place: elementwise fusion's canonicalization
/// replaces an output the body does not read with tensor.empty.)
Value GPTBuilder::scatterAddRows(Value table, Value ids, Value rows) {
  OpBuilder &b = tb.builder();
  Location loc = tb.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value count = arith::ConstantIndexOp::create(b, loc, N);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // The table's type: the LM head's f32 gradient for a bf16 model.
  auto elt = cast<FloatType>(
      cast<RankedTensorType>(table.getType()).getElementType());
  auto loop = scf::ForOp::create(
      b, loc, zero, count, one, ValueRange{table},
      [&](OpBuilder &nb, Location nloc, Value n, ValueRange iter) {
        TensorBuilder inner(nb, nloc, elt);
        ScalarBuilder s = inner.scalars();
        Value row = s.toIndex(s.extract(ids, {n}));
        OpFoldResult zeroAttr = nb.getIndexAttr(0);
        Value grad = inner.extractSlice(rows, {n, zeroAttr}, {1, C}, {C});
        Value cur = inner.extractSlice(iter[0], {row, zeroAttr}, {1, C}, {C});
        SmallVector<utils::IteratorType> parallel(
            1, utils::IteratorType::parallel);
        AffineMap rowMap = inner.identityMap(1);
        Value sum =
            inner
                .generic({grad}, {rowMap}, {cur}, {rowMap}, parallel,
                         [](ScalarBuilder &s, ValueRange a)
                             -> SmallVector<Value> {
                           // cur + grad, as linalg.add(cur, grad) computes.
                           return {s.add(a[1], a[0])};
                         })
                .front();
        Value updated =
            inner.insertSlice(sum, iter[0], {row, zeroAttr}, {1, C});
        scf::YieldOp::create(nb, nloc, updated);
      });
  return loop.getResult(0);
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

/// Per row of x (N x C), biased variance as in torch.nn.LayerNorm:
///   mean = sum_c x / C;  xc = x - mean;  var = sum_c xc^2 / C
///   rstd = 1 / sqrt(var + eps);  xhat = xc * rstd;  y = xhat * w + b
LayerNormCache GPTBuilder::layerNorm(Value x, Value w, Value b) {
  double invC = 1.0 / static_cast<double>(C);
  // Row statistics stay in the compute type (f32 for a bf16 model).
  Type stats = tb.getComputeType();
  Value mean = tb.map(
      {tb.sum(x, {1})},
      [&](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
        return {s.mul(a[0], invC)};
      },
      stats);
  Value xc = tb.elementwise(
      {N, C}, {x, mean}, {id(2), dims(2, {0})},
      [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
        return {s.sub(a[0], a[1])};
      },
      stats);
  Value sumSq =
      tb.reduce({N, C}, {xc}, {id(2)}, /*keptDims=*/{0}, 0.0,
                [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
                  return {s.add(a[1], s.mul(a[0], a[0]))};
                });
  Value rstd = tb.map(
      {sumSq},
      [&](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
        Value var = s.mul(a[0], invC);
        return {s.div(1.0, s.sqrt(s.add(var, kLayerNormEps)))};
      },
      stats);
  Value xhat =
      tb.elementwise({N, C}, {xc, rstd}, {id(2), dims(2, {0})},
                     [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
                       return {s.mul(a[0], a[1])};
                     });
  Value y =
      tb.elementwise({N, C}, {xhat, w, b}, {id(2), dims(2, {1}), dims(2, {1})},
                     [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
                       return {s.add(s.mul(a[0], a[1]), a[2])};
                     });
  return {y, xhat, rstd};
}

/// With g = dy * w (the gradient w.r.t. xhat), per row:
///   dw = sum_n dy * xhat;   db = sum_n dy
///   dx = rstd * (g - sum_c(g) / C - xhat * sum_c(g * xhat) / C)
/// (the mean and the variance both depend on x; the two row sums are their
/// contributions). dx is in the compute type (the residual stream's).
LayerNormGrads
GPTBuilder::layerNormBackward(Value dy, const LayerNormCache &cache, Value w) {
  double invC = 1.0 / static_cast<double>(C);
  LayerNormGrads g;
  g.dw =
      tb.reduce({N, C}, {dy, cache.xhat}, {id(2), id(2)}, /*keptDims=*/{1}, 0.0,
                [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
                  return {s.add(a[2], s.mul(a[0], a[1]))};
                });
  g.db = tb.sum(dy, {0});
  Value dxhat =
      tb.elementwise({N, C}, {dy, w}, {id(2), dims(2, {1})},
                     [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
                       return {s.mul(a[0], a[1])};
                     });
  Value rowSum = tb.sum(dxhat, {1});
  Value rowDot =
      tb.reduce({N, C}, {dxhat, cache.xhat}, {id(2), id(2)}, /*keptDims=*/{0},
                0.0, [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
                  return {s.add(a[2], s.mul(a[0], a[1]))};
                });
  AffineMap row = dims(2, {0});
  g.dx =
      tb.elementwise({N, C}, {dxhat, cache.xhat, rowSum, rowDot, cache.rstd},
                     {id(2), id(2), row, row, row},
                     [&](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
                       Value centered = s.sub(a[0], s.mul(a[2], invC));
                       Value projected =
                           s.sub(centered, s.mul(a[1], s.mul(a[3], invC)));
                       return {s.mul(a[4], projected)};
                     },
                     tb.getComputeType());
  return g;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// qkv (N x 3C; columns q | k | v, each H heads of D) -> q, k, v as
/// (B*H) x T x D: view as B x T x 3 x H x D, transpose to 3 x B x H x T x D,
/// slice each of the three (contiguous) and flatten B*H.
std::array<Value, 3> GPTBuilder::splitQKV(Value qkv) {
  Value x = tb.expand(qkv, {B, T, 3, H, D}, {{0, 1}, {2, 3, 4}});
  Value t = tb.transpose(x, {2, 0, 3, 1, 4});
  std::array<Value, 3> out;
  for (int64_t i = 0; i < 3; ++i) {
    Value slice = tb.extractSlice(t, tb.offsets({i, 0, 0, 0, 0}),
                                  {1, B, H, T, D}, {B, H, T, D});
    out[i] = tb.collapse(slice, {{0, 1}, {2}, {3}});
  }
  return out;
}

/// Inverse of splitQKV for the gradients: insert the three into
/// 3 x B x H x T x D, transpose back to B x T x 3 x H x D, flatten.
Value GPTBuilder::mergeQKV(Value dq, Value dk, Value dv) {
  Value acc = tb.empty({3, B, H, T, D});
  for (auto [i, d] : llvm::enumerate(std::array<Value, 3>{dq, dk, dv})) {
    Value heads = tb.expand(d, {B, H, T, D}, {{0, 1}, {2}, {3}});
    acc = tb.insertSlice(heads, acc,
                         tb.offsets({static_cast<int64_t>(i), 0, 0, 0, 0}),
                         {1, B, H, T, D});
  }
  Value t = tb.transpose(acc, {1, 3, 0, 2, 4});
  return tb.collapse(t, {{0, 1}, {2, 3, 4}});
}

/// N x C -> (B*H) x T x D (heads to the batch dimension).
Value GPTBuilder::splitHeads(Value x) {
  Value v = tb.expand(x, {B, T, H, D}, {{0, 1}, {2, 3}});
  Value t = tb.transpose(v, {0, 2, 1, 3});
  return tb.collapse(t, {{0, 1}, {2}, {3}});
}

/// (B*H) x T x D -> N x C (heads back next to each other).
Value GPTBuilder::mergeHeads(Value y) {
  Value v = tb.expand(y, {B, H, T, D}, {{0, 1}, {2}, {3}});
  Value t = tb.transpose(v, {0, 2, 1, 3});
  return tb.collapse(t, {{0, 1}, {2, 3}});
}

/// Causal attention per (batch, head):
///   s = q @ k^T / sqrt(D), s[i,j] = -inf for j > i
///   P = softmax_j(s) (max-subtracted);  y = P @ v
Value GPTBuilder::attention(Value q, Value k, Value v, Value &probs) {
  double scale = 1.0 / std::sqrt(static_cast<double>(D));
  SmallVector<int64_t> shape = {BH, T, T};
  Value scores = tb.batchMatmul(q, k, /*transA=*/false, /*transB=*/true);
  Value masked =
      tb.elementwise(shape, {scores}, {id(3)},
                     [&](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
                       Value row = s.index(1);
                       Value col = s.index(2);
                       Value future =
                           s.cmpIndex(arith::CmpIPredicate::ugt, col, row);
                       Value scaled = s.mul(a[0], scale);
                       return {s.select(future, s.negInf(), scaled)};
                     });
  AffineMap row = dims(3, {0, 1});
  Value rowMax = tb.max(masked, {2});
  Value e =
      tb.elementwise(shape, {masked, rowMax}, {id(3), row},
                     [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
                       return {s.exp(s.sub(a[0], a[1]))};
                     });
  Value denom = tb.sum(e, {2});
  probs =
      tb.elementwise(shape, {e, denom}, {id(3), row},
                     [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
                       return {s.div(a[0], a[1])};
                     });
  return tb.batchMatmul(probs, v);
}

/// With y = P @ v, P = softmax(s), s = q @ k^T * scale (+ mask):
///   dv = P^T @ dy;  dP = dy @ v^T
///   ds = P * (dP - sum_j dP * P)          (softmax; 0 where masked, P = 0)
///   dq = (ds * scale) @ k;  dk = (ds * scale)^T @ q
AttentionGrads GPTBuilder::attentionBackward(Value dy,
                                             const BlockCache &cache) {
  double scale = 1.0 / std::sqrt(static_cast<double>(D));
  AttentionGrads g;
  Value dP = tb.batchMatmul(dy, cache.v, /*transA=*/false, /*transB=*/true);
  g.dv = tb.batchMatmul(cache.probs, dy, /*transA=*/true);
  Value rowDot = tb.reduce(
      {BH, T, T}, {dP, cache.probs}, {id(3), id(3)}, /*keptDims=*/{0, 1}, 0.0,
      [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
        return {s.add(a[2], s.mul(a[0], a[1]))};
      });
  Value dScores = tb.elementwise(
      {BH, T, T}, {cache.probs, dP, rowDot}, {id(3), id(3), dims(3, {0, 1})},
      [&](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
        Value centered = s.sub(a[1], a[2]);
        return {s.mul(s.mul(a[0], centered), scale)};
      });
  g.dq = tb.batchMatmul(dScores, cache.k);
  g.dk = tb.batchMatmul(dScores, cache.q, /*transA=*/true);
  return g;
}

//===----------------------------------------------------------------------===//
// GELU
//===----------------------------------------------------------------------===//

/// gelu(x) = 0.5 x (1 + tanh(u)),  u = k (x + a x^3)
Value GPTBuilder::gelu(Value x) {
  return tb.map({x}, [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
    Value x = a[0];
    Value cube = s.mul(s.mul(x, x), x);
    Value u = s.mul(s.add(x, s.mul(cube, kGeluCubic)), kGeluScale);
    Value half = s.mul(x, 0.5);
    return {s.mul(half, s.add(s.tanh(u), 1.0))};
  });
}

/// gelu'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 a x^2),  t = tanh(u)
Value GPTBuilder::geluBackward(Value x, Value dy) {
  return tb.map(
      {x, dy}, [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
        Value x = a[0];
        Value sq = s.mul(x, x);
        Value u = s.mul(s.add(x, s.mul(s.mul(sq, x), kGeluCubic)), kGeluScale);
        Value t = s.tanh(u);
        // du/dx = k (1 + 3 a x^2)
        Value du = s.mul(s.add(s.mul(sq, 3.0 * kGeluCubic), 1.0), kGeluScale);
        Value dt = s.mul(s.sub(1.0, s.mul(t, t)), du);
        Value left = s.mul(s.add(t, 1.0), 0.5);
        Value right = s.mul(s.mul(x, 0.5), dt);
        return {s.mul(a[1], s.add(left, right))};
      });
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

/// loss = 1/N sum_n (lse_n - logits[n, target_n]),
///   lse_n = max_n + log sum_v exp(logits[n,v] - max_n)
/// dlogits[n,v] = (softmax(logits)[n,v] - [v == target_n]) / N.
/// The target logit is a gather, a tensor.extract of logits[n, target_n]
/// inside a generic over n (as the embedding reads wte): N reads, not a
/// compare and select over all N x V logits, which on the GPU was a thread
/// per row scanning the vocabulary. The driver keeps target ids below V
/// (zero.token_range).
CrossEntropy GPTBuilder::crossEntropy(Value logits, Value targets) {
  double invN = 1.0 / static_cast<double>(N);
  AffineMap row = dims(2, {0});
  Value rowMax = tb.max(logits, {1});
  Value sumExp =
      tb.reduce({N, V}, {logits, rowMax}, {id(2), row}, /*keptDims=*/{0}, 0.0,
                [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
                  return {s.add(a[2], s.exp(s.sub(a[0], a[1])))};
                });
  Value lse = tb.map(
      {rowMax, sumExp},
      [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
        return {s.add(a[0], s.log(a[1]))};
      },
      tb.getComputeType());
  Value targetLogit = tb.elementwise(
      {N}, {targets}, {id(1)},
      [&](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
        return {s.extract(logits, {s.index(0), s.toIndex(a[0])})};
      },
      tb.getComputeType());
  Value total = tb.reduceToScalar(
      {N}, {lse, targetLogit}, {id(1), id(1)},
      [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
        return {s.add(a[2], s.sub(a[0], a[1]))};
      });
  ScalarBuilder s = tb.scalars();
  CrossEntropy ce;
  ce.loss = s.mul(total, invN);
  ce.dlogits = tb.elementwise(
      {N, V}, {logits, lse, targets}, {id(2), row, row},
      [&](ScalarBuilder &sb, ValueRange a) -> SmallVector<Value> {
        Value p = sb.exp(sb.sub(a[0], a[1]));
        Value col = sb.index(1);
        Value hit =
            sb.cmpIndex(arith::CmpIPredicate::eq, col, sb.toIndex(a[2]));
        Value one = sb.c(1.0);
        Value zero = sb.c(0.0);
        Value oneHot = sb.select(hit, one, zero);
        return {sb.mul(sb.sub(p, oneHot), invN)};
      });
  return ce;
}

//===----------------------------------------------------------------------===//
// Blocks and the whole model
//===----------------------------------------------------------------------===//

Value GPTBuilder::blockForward(Value x, ValueRange p, BlockCache &cache) {
  cache.ln1 = layerNorm(x, p[kLn1Weight], p[kLn1Bias]);
  Value qkv = tb.linear(cache.ln1.y, p[kAttnWeight], p[kAttnBias]);
  auto [q, k, v] = splitQKV(qkv);
  cache.q = q;
  cache.k = k;
  cache.v = v;
  cache.attnMerged = mergeHeads(attention(q, k, v, cache.probs));
  x = tb.add(x, tb.linear(cache.attnMerged, p[kAttnProjWeight],
                          p[kAttnProjBias], /*keepAccumulator=*/true));

  cache.ln2 = layerNorm(x, p[kLn2Weight], p[kLn2Bias]);
  cache.fcPre = tb.linear(cache.ln2.y, p[kFcWeight], p[kFcBias]);
  cache.fcAct = gelu(cache.fcPre);
  return tb.add(x, tb.linear(cache.fcAct, p[kMlpProjWeight], p[kMlpProjBias],
                             /*keepAccumulator=*/true));
}

/// Both residual branches pass the incoming gradient through unchanged and
/// add their own contribution: x2 = x1 + mlp(ln_2(x1)), x1 = x + attn(ln_1(x)).
Value GPTBuilder::blockBackward(Value dx, ValueRange p, const BlockCache &cache,
                                MutableArrayRef<Value> grads) {
  TensorBuilder::LinearGrads mlpProj =
      tb.linearBackward(cache.fcAct, p[kMlpProjWeight], dx, /*needDx=*/true);
  Value dFcPre = geluBackward(cache.fcPre, mlpProj.dx);
  TensorBuilder::LinearGrads fc =
      tb.linearBackward(cache.ln2.y, p[kFcWeight], dFcPre, /*needDx=*/true);
  LayerNormGrads ln2 = layerNormBackward(fc.dx, cache.ln2, p[kLn2Weight]);
  Value dx1 = tb.add(dx, ln2.dx);

  TensorBuilder::LinearGrads attnProj = tb.linearBackward(
      cache.attnMerged, p[kAttnProjWeight], dx1, /*needDx=*/true);
  AttentionGrads att = attentionBackward(splitHeads(attnProj.dx), cache);
  Value dqkv = mergeQKV(att.dq, att.dk, att.dv);
  TensorBuilder::LinearGrads qkv =
      tb.linearBackward(cache.ln1.y, p[kAttnWeight], dqkv, /*needDx=*/true);
  LayerNormGrads ln1 = layerNormBackward(qkv.dx, cache.ln1, p[kLn1Weight]);

  // Every block parameter is a weight with its bias.
  auto store = [&](unsigned weight, unsigned bias, Value dw, Value db) {
    grads[weight] = dw;
    grads[bias] = db;
  };
  store(kLn1Weight, kLn1Bias, ln1.dw, ln1.db);
  store(kAttnWeight, kAttnBias, qkv.dw, qkv.dbias);
  store(kAttnProjWeight, kAttnProjBias, attnProj.dw, attnProj.dbias);
  store(kLn2Weight, kLn2Bias, ln2.dw, ln2.db);
  store(kFcWeight, kFcBias, fc.dw, fc.dbias);
  store(kMlpProjWeight, kMlpProjBias, mlpProj.dw, mlpProj.dbias);
  return tb.add(dx1, ln1.dx);
}

LossAndGrads GPTBuilder::build(ValueRange params, ValueRange batch) {
  Value tokens = batch[0], targets = batch[1];
  Value wte = params[kWte], wpe = params[kWpe];
  const unsigned lnF = kFirstBlock + numLayers * kParamsPerBlock;
  auto blockParams = [&](int64_t l) {
    return params.slice(kFirstBlock + l * kParamsPerBlock, kParamsPerBlock);
  };

  // Forward.
  Value x = embed(tokens, wte, wpe);
  SmallVector<BlockCache> caches(numLayers);
  for (int64_t l = 0; l < numLayers; ++l)
    x = blockForward(x, blockParams(l), caches[l]);
  LayerNormCache lnf = layerNorm(x, params[lnF], params[lnF + 1]);
  // Tied LM head: logits = xf @ wte^T.
  Value logits = tb.matmul(lnf.y, wte, /*transA=*/false, /*transB=*/true);
  CrossEntropy ce = crossEntropy(logits, tb.collapse(targets, {{0, 1}}));

  // Backward.
  SmallVector<Value> grads(params.size());
  // logits = xf @ wte^T: dxf = dlogits @ wte, dwte = dlogits^T @ xf.
  Value dxf = tb.matmul(ce.dlogits, wte);
  // In the compute type: the embedding's rows are added into it below.
  Value dwte = tb.matmul(ce.dlogits, lnf.y, /*transA=*/true, /*transB=*/false,
                         /*acc=*/{}, /*keepAccumulator=*/true);
  LayerNormGrads gf = layerNormBackward(dxf, lnf, params[lnF]);
  grads[lnF] = gf.dw;
  grads[lnF + 1] = gf.db;
  Value dx = gf.dx;
  for (int64_t l = numLayers - 1; l >= 0; --l)
    dx = blockBackward(dx, blockParams(l), caches[l],
                       MutableArrayRef<Value>(grads).slice(
                           kFirstBlock + l * kParamsPerBlock, kParamsPerBlock));
  // Embeddings: dwpe[t,:] = sum_b dx[b,t,:]; the token embedding adds dx's
  // rows into the LM-head gradient at the token ids.
  grads[kWpe] = tb.sum(tb.expand(dx, {B, T, C}, {{0, 1}, {2}}), {0});
  grads[kWte] = scatterAddRows(dwte, tb.collapse(tokens, {{0, 1}}), dx);
  return {ce.loss, grads};
}

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

ArrayRef<StringRef> mlir::zero::models::getGPTPresetNames() {
  static const StringRef names[] = {"gpt2-124m", "gpt-tiny"};
  return names;
}

std::optional<GPTConfig> mlir::zero::models::getGPTPreset(StringRef name) {
  if (name == "gpt-tiny")
    return GPTConfig();
  if (name == "gpt2-124m") {
    GPTConfig c;
    c.vocab = 50257;
    c.seq = 1024;
    c.layers = 12;
    c.heads = 12;
    c.dModel = 768;
    c.batch = 1;
    return c;
  }
  return std::nullopt;
}

llvm::Error mlir::zero::models::validate(const GPTConfig &c) {
  for (auto [what, value] : {std::pair<StringRef, int64_t>{"vocab", c.vocab},
                             {"seq", c.seq},
                             {"layers", c.layers},
                             {"heads", c.heads},
                             {"d-model", c.dModel},
                             {"batch", c.batch}})
    if (llvm::Error e = checkPositive(what, value))
      return e;
  if (c.dModel % c.heads != 0)
    return llvm::createStringError(
        "d-model (%lld) must be divisible by heads (%lld)",
        static_cast<long long>(c.dModel), static_cast<long long>(c.heads));
  if (c.vocab > std::numeric_limits<int32_t>::max())
    return llvm::createStringError(
        "vocab must be at most 2147483647: token ids are i32, got %lld",
        static_cast<long long>(c.vocab));
  // The largest tensors of the step; smaller ones cannot overflow if these
  // do not.
  for (auto [what, shape] :
       {std::pair<StringRef, SmallVector<int64_t, 4>>{"wte",
                                                      {c.vocab, c.dModel}},
        {"logits", {c.batch, c.seq, c.vocab}},
        {"attention scores", {c.batch, c.heads, c.seq, c.seq}},
        {"MLP activation", {c.batch, c.seq, 4, c.dModel}},
        {"c_fc weight", {c.dModel, 4, c.dModel}}})
    if (llvm::Error e = checkElementCount(what, shape))
      return e;
  return llvm::Error::success();
}

OwningOpRef<ModuleOp> mlir::zero::models::buildGPT(MLIRContext &ctx,
                                                   const GPTConfig &c) {
  loadModelDialects(ctx);
  Location loc = UnknownLoc::get(&ctx);
  if (llvm::Error e = validate(c)) {
    emitError(loc) << "invalid GPT configuration: " << toString(std::move(e));
    return nullptr;
  }
  FloatType elt = getFloatType(ctx, c.dtype);
  const int64_t C = c.dModel;

  // nanoGPT's state_dict order, names and initialization (lm_head is tied
  // to wte): matrices normal(0, 0.02), residual projections normal(0, 0.02 /
  // sqrt(2 * layers)), LayerNorm weights 1, biases 0.
  InitSpec one = InitSpec::constant(1), zero = InitSpec::constant(0),
           normal = InitSpec::normal(0.02),
           residual = InitSpec::normal(
               0.02 / std::sqrt(2.0 * static_cast<double>(c.layers)));
  SmallVector<ParamSpec> params = {{"wte", {c.vocab, C}, normal},
                                   {"wpe", {c.seq, C}, normal}};
  for (int64_t l = 0; l < c.layers; ++l) {
    std::string h = "h" + std::to_string(l) + ".";
    params.append({{h + "ln_1.weight", {C}, one},
                   {h + "ln_1.bias", {C}, zero},
                   {h + "attn.c_attn.weight", {C, 3 * C}, normal},
                   {h + "attn.c_attn.bias", {3 * C}, zero},
                   {h + "attn.c_proj.weight", {C, C}, residual},
                   {h + "attn.c_proj.bias", {C}, zero},
                   {h + "ln_2.weight", {C}, one},
                   {h + "ln_2.bias", {C}, zero},
                   {h + "mlp.c_fc.weight", {C, 4 * C}, normal},
                   {h + "mlp.c_fc.bias", {4 * C}, zero},
                   {h + "mlp.c_proj.weight", {4 * C, C}, residual},
                   {h + "mlp.c_proj.bias", {C}, zero}});
  }
  params.append({{"ln_f.weight", {C}, one}, {"ln_f.bias", {C}, zero}});

  IntegerType i32 = IntegerType::get(&ctx, 32);
  SmallVector<BatchSpec> batch = {{"tokens", {c.batch, c.seq}, i32, c.vocab},
                                  {"targets", {c.batch, c.seq}, i32, c.vocab}};

  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  buildForwardBackward(
      *module, elt, params, batch,
      [&](TensorBuilder &tb, ValueRange p, ValueRange in) -> LossAndGrads {
        return GPTBuilder(tb, c).build(p, in);
      });
  buildAdamW(*module, elt, params, c.clipGradNorm);
  return module;
}
