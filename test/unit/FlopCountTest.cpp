//===- FlopCountTest.cpp - countFlops unit tests --------------------------===//
//
// Checks the FLOP counting rule of zero/Analysis/FlopCount.h on hand-written
// functions: one case per clause of the rule, and the failures.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/FlopCount.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;

namespace {

class FlopCountTest : public ::testing::Test {
protected:
  FlopCountTest() {
    ctx.loadDialect<arith::ArithDialect, func::FuncDialect,
                    linalg::LinalgDialect, math::MathDialect, scf::SCFDialect,
                    tensor::TensorDialect>();
  }

  /// countFlops of @f in `source`; diagnostics go to `diagnostics`.
  FailureOr<int64_t> count(const char *source) {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return success();
    });
    module = parseSourceString<ModuleOp>(source, &ctx);
    if (!module)
      return failure();
    auto f = module->lookupSymbol<func::FuncOp>("f");
    if (!f)
      return failure();
    return zero::countFlops(f);
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;
};

// Named ops count through their implicit body: matmul is 2*M*N*K; transpose,
// broadcast and fill only yield and count 0.
TEST_F(FlopCountTest, NamedOps) {
  FailureOr<int64_t> flops = count(R"mlir(
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>, %bias: tensor<4xf32>)
    -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %bt = linalg.transpose ins(%b : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>)
      permutation = [1, 0]
  %e2 = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.broadcast ins(%bias : tensor<4xf32>) outs(%e2 : tensor<2x4xf32>)
      dimensions = [0]
  %mm = linalg.matmul ins(%a, %bt : tensor<2x3xf32>, tensor<3x4xf32>)
      outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.add ins(%mm, %f : tensor<2x4xf32>, tensor<2x4xf32>)
      outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}
)mlir");
  ASSERT_TRUE(succeeded(flops)) << diagnostics;
  EXPECT_EQ(*flops, 2 * 2 * 4 * 3 + 2 * 4);
}

// A generic counts its whole iteration space (reductions included) times
// the float ops of its body; select, casts, index math and constants are not
// FLOPs, cmpf and math ops are.
TEST_F(FlopCountTest, GenericBody) {
  FailureOr<int64_t> flops = count(R"mlir(
func.func @f(%x: tensor<4x5xf32>, %ids: tensor<4xi32>) -> tensor<4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                       affine_map<(i, j) -> (i)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%x, %ids : tensor<4x5xf32>, tensor<4xi32>) outs(%init : tensor<4xf32>) {
  ^bb0(%v: f32, %id: i32, %acc: f32):
    %j = linalg.index 1 : index
    %t = arith.index_cast %id : i32 to index
    %hit = arith.cmpi eq, %j, %t : index
    %c = arith.constant 2.0 : f32
    %sq = arith.mulf %v, %c : f32
    %ex = math.exp %sq : f32
    %pos = arith.cmpf ogt, %ex, %acc : f32
    %m = arith.select %hit, %ex, %acc : f32
    %w = arith.extf %m : f32 to f64
    %n = arith.truncf %w : f64 to f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
)mlir");
  ASSERT_TRUE(succeeded(flops)) << diagnostics;
  EXPECT_EQ(*flops, 4 * 5 * 3); // mulf, exp, cmpf
}

// Scalar float ops outside linalg count 1 each; integer and index ops 0.
TEST_F(FlopCountTest, Scalars) {
  FailureOr<int64_t> flops = count(R"mlir(
func.func @f(%a: f32, %b: f32, %i: index) -> (f32, index) {
  %p = math.powf %a, %b : f32
  %s = arith.subf %p, %a : f32
  %q = math.sqrt %s : f32
  %j = arith.addi %i, %i : index
  return %q, %j : f32, index
}
)mlir");
  ASSERT_TRUE(succeeded(flops)) << diagnostics;
  EXPECT_EQ(*flops, 3);
}

// The body of an scf.for counts once per iteration: ceil((10 - 1) / 3) = 3.
TEST_F(FlopCountTest, ForLoop) {
  FailureOr<int64_t> flops = count(R"mlir(
func.func @f(%t: tensor<7xf32>, %x: f32) -> (tensor<7xf32>, f32) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c10 = arith.constant 10 : index
  %r:2 = scf.for %i = %c1 to %c10 step %c3 iter_args(%acc = %t, %s = %x)
      -> (tensor<7xf32>, f32) {
    %e = tensor.empty() : tensor<7xf32>
    %n = linalg.add ins(%acc, %acc : tensor<7xf32>, tensor<7xf32>)
        outs(%e : tensor<7xf32>) -> tensor<7xf32>
    %s2 = arith.mulf %s, %s : f32
    scf.yield %n, %s2 : tensor<7xf32>, f32
  }
  return %r#0, %r#1 : tensor<7xf32>, f32
}
)mlir");
  ASSERT_TRUE(succeeded(flops)) << diagnostics;
  EXPECT_EQ(*flops, 3 * (7 + 1));
}

TEST_F(FlopCountTest, DynamicShapeFails) {
  FailureOr<int64_t> flops = count(R"mlir(
func.func @f(%a: tensor<?x3xf32>, %b: tensor<3x4xf32>, %c: tensor<?x4xf32>)
    -> tensor<?x4xf32> {
  %mm = linalg.matmul ins(%a, %b : tensor<?x3xf32>, tensor<3x4xf32>)
      outs(%c : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %mm : tensor<?x4xf32>
}
)mlir");
  EXPECT_TRUE(failed(flops));
  EXPECT_NE(diagnostics.find("dynamic iteration space"), std::string::npos)
      << diagnostics;
}

TEST_F(FlopCountTest, DynamicTripCountFails) {
  FailureOr<int64_t> flops = count(R"mlir(
func.func @f(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %x) -> (f32) {
    %s2 = arith.mulf %s, %s : f32
    scf.yield %s2 : f32
  }
  return %r : f32
}
)mlir");
  EXPECT_TRUE(failed(flops));
  EXPECT_NE(diagnostics.find("static trip count"), std::string::npos)
      << diagnostics;
}

TEST_F(FlopCountTest, CallFails) {
  FailureOr<int64_t> flops = count(R"mlir(
func.func private @g(f32) -> f32
func.func @f(%x: f32) -> f32 {
  %r = func.call @g(%x) : (f32) -> f32
  return %r : f32
}
)mlir");
  EXPECT_TRUE(failed(flops));
  EXPECT_NE(diagnostics.find("across a call"), std::string::npos)
      << diagnostics;
}

TEST_F(FlopCountTest, UnstructuredLinalgFails) {
  FailureOr<int64_t> flops = count(R"mlir(
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<2x3xf32>)
      outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}
)mlir");
  EXPECT_TRUE(failed(flops));
  EXPECT_NE(diagnostics.find("not structured"), std::string::npos)
      << diagnostics;
}

} // namespace
