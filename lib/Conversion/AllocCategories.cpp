//===- AllocCategories.cpp - Tagged allocations to runtime categories -----===//
//
// zero-alloc-categories: brackets each memref.alloc with a zero.category
// with zrt_set_generated_category calls (see the pass description).
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

#include "zero/Analysis/Allocations.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Transforms/Passes.h"
#include "zero/runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROALLOCCATEGORIESPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

// The compiler names categories by kAllocCategories' order; the runtime
// numbers them by zrt_category.
static_assert(ZRT_PARAMS == 0 && ZRT_GRADS == 1 &&
                  ZRT_OPTIMIZER_STATES == 2 && ZRT_ACTIVATIONS == 3,
              "kAllocCategories must follow zrt_category");
static_assert(std::size(zero::kAllocCategories) == ZRT_ACTIVATIONS + 1,
              "kAllocCategories must follow zrt_category");

namespace {
struct ZeroAllocCategoriesPass
    : public zero::impl::ZeroAllocCategoriesPassBase<ZeroAllocCategoriesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<memref::AllocOp, int32_t>> tagged;
    module.walk([&](memref::AllocOp alloc) {
      if (!alloc->hasAttr(zero::ZeroDialect::CategoryAttrHelper::getNameStr()))
        return;
      StringRef category = zero::getAllocationCategory(alloc);
      int32_t index = llvm::find(zero::kAllocCategories, category) -
                      std::begin(zero::kAllocCategories);
      if (index == ZRT_ACTIVATIONS)
        alloc->removeAttr(zero::ZeroDialect::CategoryAttrHelper::getNameStr());
      else
        tagged.push_back({alloc, index});
    });
    if (tagged.empty())
      return;
    Type i32 = IntegerType::get(&getContext(), 32);
    FailureOr<func::FuncOp> callee = zero::getOrDeclareRuntimeFunc(
        module, "zrt_set_generated_category",
        FunctionType::get(&getContext(), {i32}, {}));
    if (failed(callee))
      return signalPassFailure();
    for (auto [alloc, index] : tagged) {
      OpBuilder b(alloc);
      Location loc = alloc.getLoc();
      auto set = [&](int32_t category) {
        func::CallOp::create(
            b, loc, *callee,
            ValueRange{arith::ConstantIntOp::create(b, loc, i32, category)});
      };
      set(index);
      b.setInsertionPointAfter(alloc);
      set(ZRT_ACTIVATIONS);
      // Consumed: running the pass again must not bracket twice.
      alloc->removeAttr(zero::ZeroDialect::CategoryAttrHelper::getNameStr());
    }
  }
};
} // namespace
