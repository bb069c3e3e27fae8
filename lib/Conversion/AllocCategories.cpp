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
    StringRef categoryName = zero::ZeroDialect::CategoryAttrHelper::getNameStr();
    StringRef spaceName = zero::ZeroDialect::SpaceAttrHelper::getNameStr();
    // Per tagged allocation: its category (-1: none to set) and whether it
    // is host memory.
    struct Tagged {
      memref::AllocOp alloc;
      int32_t category;
      bool host;
    };
    SmallVector<Tagged> tagged;
    module.walk([&](memref::AllocOp alloc) {
      auto space = alloc->getAttrOfType<StringAttr>(spaceName);
      bool host = space && space.getValue() == "host";
      alloc->removeAttr(spaceName);
      int32_t index = -1;
      if (alloc->hasAttr(categoryName)) {
        StringRef category = zero::getAllocationCategory(alloc);
        index = llvm::find(zero::kAllocCategories, category) -
                std::begin(zero::kAllocCategories);
        // Consumed: running the pass again must not bracket twice.
        alloc->removeAttr(categoryName);
        if (index == ZRT_ACTIVATIONS)
          index = -1;
      }
      if (index >= 0 || host)
        tagged.push_back({alloc, index, host});
    });
    if (tagged.empty())
      return;
    MLIRContext *ctx = &getContext();
    Type i32 = IntegerType::get(ctx, 32);
    FailureOr<func::FuncOp> setCategory = zero::getOrDeclareRuntimeFunc(
        module, "zrt_set_generated_category", FunctionType::get(ctx, {i32}, {}));
    FailureOr<func::FuncOp> setSpace = zero::getOrDeclareRuntimeFunc(
        module, "zrt_set_generated_space", FunctionType::get(ctx, {i32}, {}));
    if (failed(setCategory) || failed(setSpace))
      return signalPassFailure();
    for (Tagged &t : tagged) {
      OpBuilder b(t.alloc);
      Location loc = t.alloc.getLoc();
      auto set = [&](func::FuncOp callee, int32_t value) {
        func::CallOp::create(
            b, loc, callee,
            ValueRange{arith::ConstantIntOp::create(b, loc, i32, value)});
      };
      if (t.category >= 0)
        set(*setCategory, t.category);
      if (t.host)
        set(*setSpace, ZRT_SPACE_HOST);
      b.setInsertionPointAfter(t.alloc);
      if (t.category >= 0)
        set(*setCategory, ZRT_ACTIVATIONS);
      if (t.host)
        set(*setSpace, ZRT_SPACE_DEVICE);
    }
    // An unused declaration would still be a symbol the runtime must have.
    for (func::FuncOp f : {*setCategory, *setSpace})
      if (f.symbolKnownUseEmpty(module))
        f.erase();
  }
};
} // namespace
