//===- MLP.cpp - MLP training-step builder --------------------------------===//
//
// A tanh MLP with a mean-squared-error loss; the smallest model that still
// exercises every part of the training-step contract.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "mlir/IR/Diagnostics.h"

#include <cmath>

using namespace mlir;
using namespace mlir::zero::models;
using namespace mlir::zero::models::detail;

/// Layer widths: input, hidden..., output.
static SmallVector<int64_t> layerWidths(const MLPConfig &c) {
  SmallVector<int64_t> widths = {c.input};
  llvm::append_range(widths, c.hidden);
  widths.push_back(c.output);
  return widths;
}

llvm::Error mlir::zero::models::validate(const MLPConfig &c) {
  if (llvm::Error e = checkPositive("batch", c.batch))
    return e;
  if (llvm::Error e = checkPositive("input", c.input))
    return e;
  for (int64_t h : c.hidden)
    if (llvm::Error e = checkPositive("hidden widths", h))
      return e;
  if (llvm::Error e = checkPositive("output", c.output))
    return e;
  SmallVector<int64_t> widths = layerWidths(c);
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    if (llvm::Error e = checkElementCount("weight", {widths[i], widths[i + 1]}))
      return e;
    if (llvm::Error e = checkElementCount("activation", {c.batch, widths[i]}))
      return e;
  }
  return checkElementCount("output", {c.batch, c.output});
}

OwningOpRef<ModuleOp> mlir::zero::models::buildMLP(MLIRContext &ctx,
                                                   const MLPConfig &c) {
  loadModelDialects(ctx);
  Location loc = UnknownLoc::get(&ctx);
  if (llvm::Error e = validate(c)) {
    emitError(loc) << "invalid MLP configuration: " << toString(std::move(e));
    return nullptr;
  }
  FloatType elt = getFloatType(ctx, c.dtype);
  SmallVector<int64_t> widths = layerWidths(c);
  const unsigned numLayers = widths.size() - 1;

  SmallVector<ParamSpec> params;
  for (unsigned i = 0; i < numLayers; ++i) {
    std::string prefix = "fc" + std::to_string(i);
    // normal(0, 1 / sqrt(fan_in)) weights (stored in x out), zero biases.
    params.push_back(
        {prefix + ".weight",
         {widths[i], widths[i + 1]},
         InitSpec::normal(1.0 / std::sqrt(static_cast<double>(widths[i])))});
    params.push_back({prefix + ".bias", {widths[i + 1]}, InitSpec::constant(0)});
  }
  SmallVector<BatchSpec> batch = {{"input", {c.batch, c.input}, elt},
                                  {"target", {c.batch, c.output}, elt}};

  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  buildForwardBackward(
      *module, elt, params, batch,
      [&](TensorBuilder &tb, ValueRange p, ValueRange in) -> LossAndGrads {
        // Forward; acts[i] is the input of layer i, acts[numLayers] the
        // prediction. tanh outputs are kept for the backward pass.
        SmallVector<Value> acts = {in[0]};
        for (unsigned i = 0; i < numLayers; ++i) {
          Value z = tb.linear(acts.back(), p[2 * i], p[2 * i + 1]);
          if (i + 1 < numLayers)
            z = tb.map(
                {z}, [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
                  return {s.tanh(a[0])};
                });
          acts.push_back(z);
        }

        // loss = 1/(B*O) * sum (y - target)^2
        double invCount = 1.0 / static_cast<double>(c.batch * c.output);
        Value diff =
            tb.map({acts.back(), in[1]},
                   [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
                     return {s.sub(a[0], a[1])};
                   });
        ArrayRef<int64_t> outShape = TensorBuilder::shapeOf(diff);
        Value sumSq = tb.reduceToScalar(
            outShape, {diff}, {tb.identityMap(2)},
            [](ScalarBuilder &s, ValueRange a) -> SmallVector<Value> {
              return {s.add(a[1], s.mul(a[0], a[0]))};
            });
        ScalarBuilder s = tb.scalars();
        Value loss = s.mul(sumSq, invCount);

        // dloss/dy = 2 (y - target) / (B*O)
        Value dy = tb.map(
            {diff}, [&](ScalarBuilder &sb, ValueRange a) -> SmallVector<Value> {
              return {sb.mul(a[0], 2.0 * invCount)};
            });
        SmallVector<Value> grads(params.size());
        for (int i = numLayers - 1; i >= 0; --i) {
          // a = tanh(z)  =>  dz = da * (1 - a^2)
          if (static_cast<unsigned>(i) + 1 < numLayers)
            dy = tb.map(
                {dy, acts[i + 1]},
                [](ScalarBuilder &sb, ValueRange a) -> SmallVector<Value> {
                  Value sq = sb.mul(a[1], a[1]);
                  return {sb.mul(a[0], sb.sub(1.0, sq))};
                });
          TensorBuilder::LinearGrads g =
              tb.linearBackward(acts[i], p[2 * i], dy, /*needDx=*/i > 0);
          grads[2 * i] = g.dw;
          grads[2 * i + 1] = g.dbias;
          dy = g.dx;
        }
        return {loss, grads};
      });
  buildAdamW(*module, elt, params, c.clipGradNorm);
  return module;
}
