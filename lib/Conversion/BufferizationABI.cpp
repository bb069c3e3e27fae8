//===- BufferizationABI.cpp - Buffer ABI of the step functions ------------===//
//
// zero-prepare-bufferization and zero-finalize-bufferization bracket the
// upstream bufferization passes in zero-lower-cpu. Together they give the
// lowered step functions a fixed ABI: inputs are read-only buffers, the
// optimizer updates parameters and states in place, and every other result
// becomes an out-parameter that keeps its `zero.*` attribute.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROPREPAREBUFFERIZATIONPASS
#define GEN_PASS_DEF_ZEROFINALIZEBUFFERIZATIONPASS
#define GEN_PASS_DEF_ZEROSTRIPCONTRACTATTRIBUTESPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
bool hasRole(func::FuncOp fn) {
  return fn->hasAttr(ZeroDialect::RoleAttrHelper::getNameStr());
}

struct ZeroPrepareBufferizationPass
    : public zero::impl::ZeroPrepareBufferizationPassBase<
          ZeroPrepareBufferizationPass> {
  using Base::Base;

  /// A hyper-parameter passed as a rank-0 tensor (torch-mlir's scalars)
  /// becomes a scalar argument, wrapped into its tensor at the entry: every
  /// hyper-parameter then reaches the lowered step by value, as the drivers
  /// pass it.
  static void passScalarHypersByValue(func::FuncOp fn) {
    Block &entry = fn.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    SmallVector<Type> argTypes(fn.getArgumentTypes());
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
      auto tensor = dyn_cast<RankedTensorType>(argTypes[i]);
      if (!tensor || tensor.getRank() != 0 ||
          !fn.getArgAttr(i, ZeroDialect::HyperAttrHelper::getNameStr()))
        continue;
      BlockArgument arg = entry.getArgument(i);
      arg.setType(tensor.getElementType());
      auto wrapped =
          tensor::FromElementsOp::create(b, arg.getLoc(), tensor, arg);
      arg.replaceAllUsesExcept(wrapped, wrapped);
      argTypes[i] = tensor.getElementType();
    }
    fn.setFunctionType(
        FunctionType::get(fn.getContext(), argTypes, fn.getResultTypes()));
  }

  /// A new parameter or state whose op writes into a `tensor.empty` (an
  /// init its body never reads: upstream's elementwise fusion replaces such
  /// inits, as with a mixed-precision parameter rounded from its f32
  /// master, and frontends emit them) writes into the argument it replaces
  /// instead. Without this one-shot bufferization gives it a fresh buffer
  /// that becomes an out-parameter, and the driver holds the parameter
  /// twice. Any init is correct for an init that is not read; bufferization
  /// still copies if the argument is read after the write.
  static void writeUpdatesInPlace(func::FuncOp fn) {
    // The zero.param or zero.state attribute, or none.
    auto roleOf = [](DictionaryAttr attrs) -> std::optional<NamedAttribute> {
      if (!attrs)
        return std::nullopt;
      for (StringRef name : {ZeroDialect::ParamAttrHelper::getNameStr(),
                             ZeroDialect::StateAttrHelper::getNameStr()})
        if (std::optional<NamedAttribute> a = attrs.getNamed(name))
          return a;
      return std::nullopt;
    };
    Operation *ret = fn.getBody().front().getTerminator();
    for (unsigned r = 0, e = fn.getNumResults(); r < e; ++r) {
      std::optional<NamedAttribute> role = roleOf(fn.getResultAttrDict(r));
      auto result = dyn_cast<OpResult>(ret->getOperand(r));
      if (!role || !result)
        continue;
      auto dps = dyn_cast<DestinationStyleOpInterface>(result.getOwner());
      if (!dps || !dps.hasPureTensorSemantics())
        continue;
      OpOperand *init = dps.getTiedOpOperand(result);
      if (!init || !init->get().getDefiningOp<tensor::EmptyOp>())
        continue;
      for (BlockArgument arg : fn.getArguments())
        if (arg.getType() == init->get().getType() &&
            roleOf(fn.getArgAttrDict(arg.getArgNumber())) == role) {
          init->set(arg);
          break;
        }
    }
  }

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    StringRef writable = bufferization::BufferizationDialect::kWritableAttrName;
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (!hasRole(fn) || fn.isExternal())
        continue;
      // The optimizer and zero-partition's train_step update parameters
      // and states.
      StringRef role = fn->getAttrOfType<StringAttr>(
                             ZeroDialect::RoleAttrHelper::getNameStr())
                           .getValue();
      bool isUpdater = role == "optimizer" || role == "train_step";
      passScalarHypersByValue(fn);
      if (isUpdater)
        writeUpdatesInPlace(fn);
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
        if (!isa<TensorType>(fn.getArgument(i).getType()))
          continue;
        // Only the optimizer's parameters and states are updated in place.
        bool inPlace =
            isUpdater &&
            (fn.getArgAttr(i, ZeroDialect::ParamAttrHelper::getNameStr()) ||
             fn.getArgAttr(i, ZeroDialect::StateAttrHelper::getNameStr()));
        fn.setArgAttr(i, writable, BoolAttr::get(ctx, inPlace));
      }
      fn.setPrivate();
    }
  }
};

struct ZeroFinalizeBufferizationPass
    : public zero::impl::ZeroFinalizeBufferizationPassBase<
          ZeroFinalizeBufferizationPass> {
  using Base::Base;

  void runOnOperation() override {
    StringRef writable = bufferization::BufferizationDialect::kWritableAttrName;
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (!hasRole(fn))
        continue;
      fn.setPublic();
      if (fn.getNumResults() != 0) {
        fn.emitOpError() << "still returns " << fn.getNumResults()
                         << " value(s) after bufferization; run "
                            "drop-equivalent-buffer-results and "
                            "buffer-results-to-out-params before "
                            "zero-finalize-bufferization";
        return signalPassFailure();
      }
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
        fn.removeArgAttr(i, writable);
        // buffer-results-to-out-params adds out-parameters; each must have
        // kept the zero.* attribute of its result.
        DictionaryAttr attrs = fn.getArgAttrDict(i);
        bool marked = attrs && llvm::any_of(attrs, [](NamedAttribute a) {
          return a.getName().getValue().starts_with("zero.");
        });
        if (!marked) {
          fn.emitOpError() << "argument #" << i
                           << " has no zero.* attribute after bufferization";
          return signalPassFailure();
        }
      }
    }
  }
};

struct ZeroStripContractAttributesPass
    : public zero::impl::ZeroStripContractAttributesPassBase<
          ZeroStripContractAttributesPass> {
  using Base::Base;

  void runOnOperation() override {
    auto strip = [](DictionaryAttr attrs) -> DictionaryAttr {
      if (!attrs)
        return attrs;
      SmallVector<NamedAttribute> kept;
      for (NamedAttribute a : attrs)
        if (!a.getName().getValue().starts_with("zero."))
          kept.push_back(a);
      return DictionaryAttr::get(attrs.getContext(), kept);
    };
    getOperation().walk([&](FunctionOpInterface fn) {
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
        fn.setArgAttrs(i, strip(fn.getArgAttrDict(i)));
      for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
        fn.setResultAttrs(i, strip(fn.getResultAttrDict(i)));
    });
  }
};
} // namespace
