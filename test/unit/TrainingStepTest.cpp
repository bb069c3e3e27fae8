//===- TrainingStepTest.cpp - TrainingStep unit tests ---------------------===//
//
// Checks the parsed form of the contract that later passes and tools rely on:
// the index bookkeeping that links params, grads, states and hypers.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/TrainingStep.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::zero;

namespace {

// Two params, SGD with momentum: one state per param, hypers lr and momentum.
// The optimizer's args are (w, b, gw, gb, mw, mb, lr, mu).
constexpr const char *kModule = R"mlir(
func.func @fb(%w: tensor<2x3xf32> {zero.param = "w"},
              %b: tensor<3xf32> {zero.param = "b"},
              %x: tensor<4x2xf32> {zero.batch = "x"})
    -> (tensor<f32> {zero.loss}, tensor<2x3xf32> {zero.grad = "w"},
        tensor<3xf32> {zero.grad = "b"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w, %b : tensor<f32>, tensor<2x3xf32>, tensor<3xf32>
}
func.func @opt(%w: tensor<2x3xf32> {zero.param = "w"},
               %b: tensor<3xf32> {zero.param = "b"},
               %gw: tensor<2x3xf32> {zero.grad = "w"},
               %gb: tensor<3xf32> {zero.grad = "b"},
               %mw: tensor<2x3xf32> {zero.state = {param = "w", kind = "momentum"}},
               %mb: tensor<3xf32> {zero.state = {param = "b", kind = "momentum"}},
               %lr: f32 {zero.hyper = "lr"}, %mu: f32 {zero.hyper = "mu"})
    -> (tensor<2x3xf32> {zero.param = "w"}, tensor<3xf32> {zero.param = "b"},
        tensor<2x3xf32> {zero.state = {param = "w", kind = "momentum"}},
        tensor<3xf32> {zero.state = {param = "b", kind = "momentum"}})
    attributes {zero.role = "optimizer"} {
  %nw = arith.subf %w, %gw : tensor<2x3xf32>
  %nb = arith.subf %b, %gb : tensor<3xf32>
  return %nw, %nb, %mw, %mb
      : tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>
}
)mlir";

class TrainingStepTest : public ::testing::Test {
protected:
  TrainingStepTest() {
    context.loadDialect<ZeroDialect, func::FuncDialect, arith::ArithDialect,
                        linalg::LinalgDialect, math::MathDialect,
                        tensor::TensorDialect>();
  }
  OwningOpRef<ModuleOp> parse(StringRef text) {
    return parseSourceString<ModuleOp>(text, &context);
  }
  MLIRContext context;
};

TEST_F(TrainingStepTest, LinksEveryRole) {
  OwningOpRef<ModuleOp> module = parse(kModule);
  ASSERT_TRUE(module);
  FailureOr<TrainingStep> step = TrainingStep::get(*module);
  ASSERT_TRUE(succeeded(step));

  EXPECT_EQ(step->forwardBackward.getSymName(), "fb");
  EXPECT_EQ(step->optimizer.getSymName(), "opt");
  ASSERT_EQ(step->params.size(), 2u);
  EXPECT_EQ(step->params[0].name, "w");
  EXPECT_EQ(step->params[1].name, "b");
  EXPECT_EQ(step->params[1].fbArg, 1u);
  EXPECT_EQ(step->params[1].fbResult, 2u);
  EXPECT_EQ(step->params[1].optArg, 1u);
  EXPECT_EQ(step->params[1].optGrad, 3u);
  EXPECT_EQ(step->params[1].optResult, 1u);
  ASSERT_EQ(step->params[0].states.size(), 1u);
  const StateInfo &mb = step->states[step->params[1].states[0]];
  EXPECT_EQ(mb.kind, "momentum");
  EXPECT_EQ(mb.param, 1u);
  EXPECT_EQ(mb.optArg, 5u);
  EXPECT_EQ(mb.optResult, 3u);
  ASSERT_EQ(step->batch.size(), 1u);
  EXPECT_EQ(step->batch[0].name, "x");
  EXPECT_EQ(step->batch[0].fbArg, 2u);
  ASSERT_EQ(step->hypers.size(), 2u);
  EXPECT_EQ(step->hypers[1].name, "mu");
  EXPECT_EQ(step->hypers[1].optArg, 7u);
  EXPECT_EQ(step->numParamElements(), 9);
  EXPECT_EQ(step->lookupParam("b"), std::optional<unsigned>(1));
  EXPECT_EQ(step->lookupParam("nope"), std::nullopt);
}

TEST_F(TrainingStepTest, ReportsAllViolationsInOneRun) {
  // Two independent mistakes in forward_backward: a grad of an unknown param
  // and a missing grad. Both must be reported, not just the first.
  std::string text = kModule;
  size_t pos = text.find("tensor<3xf32> {zero.grad = \"b\"})");
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, 33, "tensor<3xf32> {zero.grad = \"c\"})");
  OwningOpRef<ModuleOp> module = parse(text);
  ASSERT_TRUE(module);

  std::vector<std::string> errors;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    errors.push_back(diag.str());
    return success();
  });
  EXPECT_TRUE(failed(TrainingStep::get(*module)));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("unknown parameter 'c'"), std::string::npos);
  EXPECT_NE(errors[1].find("no gradient for parameter 'b'"),
            std::string::npos);
}

} // namespace
