//===- ApproximateMathTest.cpp - zero-approximate-math against libm -------===//
//
// Compiles each f32 math op through zero-approximate-math and the LLVM
// lowering, runs it with MLIR's ExecutionEngine and compares it with libm's
// double-precision result rounded to f32, over the inputs a training step
// gives it (GELU's tanh argument, softmax's exp of non-positive values,
// cross-entropy's log of probabilities). The bounds asserted here are the
// ones docs/decisions/0016-f32-transcendentals-are-polynomials.md states.
//
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

using namespace mlir;

namespace {

/// One function per op; each is approximated (the module is f32 only).
constexpr const char *kModule = R"mlir(
func.func @f_tanh(%x: f32) -> f32 { %y = math.tanh %x : f32 return %y : f32 }
func.func @f_exp(%x: f32) -> f32 { %y = math.exp %x : f32 return %y : f32 }
func.func @f_expm1(%x: f32) -> f32 { %y = math.expm1 %x : f32 return %y : f32 }
func.func @f_log(%x: f32) -> f32 { %y = math.log %x : f32 return %y : f32 }
func.func @f_log1p(%x: f32) -> f32 { %y = math.log1p %x : f32 return %y : f32 }
func.func @f_erf(%x: f32) -> f32 { %y = math.erf %x : f32 return %y : f32 }
)mlir";

using F32Fn = float (*)(float);

/// Distance in units in the last place between two finite floats.
int64_t ulpDistance(float a, float b) {
  auto key = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof(i));
    // Map the sign-magnitude order onto a monotone integer line.
    return i < 0 ? int64_t(INT32_MIN) - int64_t(i) : int64_t(i);
  };
  int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

struct ErrorFigures {
  int64_t maxUlp = 0;
  double maxAbs = 0;
  int nonFinite = 0;
};

class ApproximateMathTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  }

  void SetUp() override {
    DialectRegistry registry;
    registry.insert<arith::ArithDialect, func::FuncDialect, math::MathDialect,
                    vector::VectorDialect, LLVM::LLVMDialect>();
    registerBuiltinDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    ctx = std::make_unique<MLIRContext>(registry);
    module = parseSourceString<ModuleOp>(kModule, ctx.get());
    ASSERT_TRUE(module);
    PassManager pm(ctx.get());
    pm.addPass(zero::createZeroApproximateMathPass());
    pm.addPass(createConvertMathToLLVMPass());
    pm.addPass(createArithToLLVMConversionPass());
    pm.addPass(createConvertFuncToLLVMPass());
    pm.addPass(createReconcileUnrealizedCastsPass());
    ASSERT_TRUE(succeeded(pm.run(*module)));
    // Every op was replaced: no call of libm is left to compare with itself.
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    for (const char *name : {"tanhf", "expf", "expm1f", "logf", "log1pf",
                             "erff", "math."})
      ASSERT_EQ(text.find(name), std::string::npos) << name << " left";
    ExecutionEngineOptions options;
    auto created = ExecutionEngine::create(*module, options);
    ASSERT_TRUE(bool(created)) << llvm::toString(created.takeError());
    engine = std::move(*created);
  }

  F32Fn lookup(const char *name) {
    auto fn = engine->lookup(name);
    if (!fn) {
      ADD_FAILURE() << llvm::toString(fn.takeError());
      return nullptr;
    }
    return reinterpret_cast<F32Fn>(*fn);
  }

  /// Compares `name` with `reference` at `n` evenly spaced points of
  /// [lo, hi] plus the interval's ends.
  ErrorFigures measure(const char *name, double (*reference)(double),
                       double lo, double hi, int n = 200001) {
    ErrorFigures e;
    F32Fn fn = lookup(name);
    if (!fn)
      return e;
    for (int i = 0; i <= n; ++i) {
      float x = static_cast<float>(lo + (hi - lo) * i / n);
      float got = fn(x);
      float want = static_cast<float>(reference(static_cast<double>(x)));
      if (!std::isfinite(got)) {
        ++e.nonFinite;
        continue;
      }
      e.maxUlp = std::max(e.maxUlp, ulpDistance(got, want));
      e.maxAbs = std::max(e.maxAbs, std::fabs(double(got) - double(want)));
    }
    // The figures docs/decisions/0016-* quotes.
    std::printf("%s on [%g, %g]: max %lld ulp, max abs error %.3g\n", name,
                lo, hi, static_cast<long long>(e.maxUlp), e.maxAbs);
    return e;
  }

  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<ExecutionEngine> engine;
};

double refTanh(double x) { return std::tanh(x); }
double refExp(double x) { return std::exp(x); }
double refExpm1(double x) { return std::expm1(x); }
double refLog(double x) { return std::log(x); }
double refLog1p(double x) { return std::log1p(x); }
double refErf(double x) { return std::erf(x); }

// GELU's tanh argument: sqrt(2/pi) (x + 0.044715 x^3) for activations of any
// size; tanh saturates to +-1 in f32 beyond |x| = 9.
TEST_F(ApproximateMathTest, Tanh) {
  ErrorFigures e = measure("f_tanh", refTanh, -12.0, 12.0);
  EXPECT_EQ(e.nonFinite, 0);
  EXPECT_LE(e.maxUlp, 4);
  // Near zero, where GELU's argument mostly lies, as well.
  ErrorFigures near = measure("f_tanh", refTanh, -1e-3, 1e-3);
  EXPECT_LE(near.maxUlp, 4);
}

// Softmax exponentiates x - max(x) <= 0; AdamW's bias correction and the
// loss do not go beyond |x| = 88 either.
TEST_F(ApproximateMathTest, Exp) {
  ErrorFigures e = measure("f_exp", refExp, -87.0, 88.0);
  EXPECT_EQ(e.nonFinite, 0);
  EXPECT_LE(e.maxUlp, 1);
}

TEST_F(ApproximateMathTest, Expm1) {
  ErrorFigures e = measure("f_expm1", refExpm1, -20.0, 20.0);
  EXPECT_EQ(e.nonFinite, 0);
  EXPECT_LE(e.maxUlp, 2);
}

// Cross-entropy takes the log of sums of exponentials (>= 1) and of
// probabilities (> 0).
TEST_F(ApproximateMathTest, Log) {
  ErrorFigures small = measure("f_log", refLog, 1e-30, 1.0);
  ErrorFigures large = measure("f_log", refLog, 1.0, 1e30);
  EXPECT_EQ(small.nonFinite + large.nonFinite, 0);
  EXPECT_LE(std::max(small.maxUlp, large.maxUlp), 1);
  // Exactly zero at one, as cross-entropy of a certain prediction must be.
  EXPECT_EQ(lookup("f_log")(1.0f), 0.0f);
}

TEST_F(ApproximateMathTest, Log1p) {
  ErrorFigures e = measure("f_log1p", refLog1p, -0.99, 1e6);
  EXPECT_EQ(e.nonFinite, 0);
  EXPECT_LE(e.maxUlp, 2);
}

TEST_F(ApproximateMathTest, Erf) {
  ErrorFigures e = measure("f_erf", refErf, -6.0, 6.0);
  EXPECT_EQ(e.nonFinite, 0);
  EXPECT_LE(e.maxUlp, 4);
}

// Special values keep their meaning: saturation, overflow, underflow.
TEST_F(ApproximateMathTest, SpecialValues) {
  EXPECT_EQ(lookup("f_tanh")(100.0f), 1.0f);
  EXPECT_EQ(lookup("f_tanh")(-100.0f), -1.0f);
  EXPECT_EQ(lookup("f_exp")(-200.0f), 0.0f);
  EXPECT_TRUE(std::isinf(lookup("f_exp")(200.0f)));
  EXPECT_TRUE(std::isinf(lookup("f_log")(0.0f)));
  EXPECT_TRUE(std::isnan(lookup("f_log")(-1.0f)));
}

} // namespace
