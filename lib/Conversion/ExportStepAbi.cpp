//===- ExportStepAbi.cpp - The step ABI as data in the object -------------===//
//
// zero-export-step-abi: the last step of the lowering. It writes the module's
// `zero.step_abi` descriptor into an LLVM global as JSON and adds, for every
// entry function, a packed form that takes one pointer per argument, plus a
// table of those by name (runtime/include/zero/step.h). A driver that knows
// neither MLIR nor the model calls the step through these alone.
//
//===----------------------------------------------------------------------===//

#include "zero/Conversion/StepAbi.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Transforms/Passes.h"

#include "zero/step.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROEXPORTSTEPABIPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
struct ZeroExportStepAbiPass
    : public zero::impl::ZeroExportStepAbiPassBase<ZeroExportStepAbiPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// `void <prefix><name>(void **args)`: loads each argument (a pointer for
  /// buffers, the value behind the pointer for scalars) and calls `fn`.
  LLVM::LLVMFuncOp buildPacked(OpBuilder &b, LLVM::LLVMFuncOp fn,
                               unsigned numArgs);
};

LLVM::LLVMFuncOp ZeroExportStepAbiPass::buildPacked(OpBuilder &b,
                                                    LLVM::LLVMFuncOp fn,
                                                    unsigned numArgs) {
  MLIRContext *ctx = &getContext();
  Location loc = fn.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto voidType = LLVM::LLVMVoidType::get(ctx);
  auto packed = LLVM::LLVMFuncOp::create(
      b, loc, ("zero_entry_" + fn.getSymName()).str(),
      LLVM::LLVMFunctionType::get(voidType, {ptr}));
  OpBuilder::InsertionGuard guard(b);
  Block *body = packed.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> args;
  LLVM::LLVMFunctionType type = fn.getFunctionType();
  for (unsigned i = 0; i < numArgs; ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    Value p = LLVM::LoadOp::create(b, loc, ptr, slot);
    Type argType = type.getParamType(i);
    args.push_back(isa<LLVM::LLVMPointerType>(argType)
                       ? p
                       : LLVM::LoadOp::create(b, loc, argType, p).getResult());
  }
  LLVM::CallOp::create(b, loc, fn, args);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return packed;
}

void ZeroExportStepAbiPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  auto abi = module->getAttrOfType<DictionaryAttr>(
      ZeroDialect::StepAbiAttrHelper::getNameStr());
  if (!abi) {
    module.emitError() << "zero-export-step-abi: the module has no "
                          "zero.step_abi descriptor; run zero-step-abi after "
                          "bufferization";
    return signalPassFailure();
  }
  for (StringRef symbol : {ZRT_STEP_ABI_SYMBOL, ZRT_STEP_ENTRIES_SYMBOL})
    if (module.lookupSymbol(symbol)) {
      module.emitError() << "zero-export-step-abi: the module already defines "
                            "@"
                         << symbol;
      return signalPassFailure();
    }

  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);

  // The packed entry points, and each one's name as a C string.
  SmallVector<std::pair<std::string, std::string>> table;
  auto entries = abi.getAs<ArrayAttr>("entries");
  if (!entries) {
    module.emitError() << "zero-export-step-abi: zero.step_abi has no entries";
    return signalPassFailure();
  }
  for (auto [i, entryAttr] : llvm::enumerate(entries)) {
    auto entry = dyn_cast<DictionaryAttr>(entryAttr);
    auto name = entry ? entry.getAs<StringAttr>("name") : StringAttr();
    auto args = entry ? entry.getAs<ArrayAttr>("args") : ArrayAttr();
    if (!name || !args) {
      module.emitError() << "zero-export-step-abi: malformed entry " << entryAttr;
      return signalPassFailure();
    }
    auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name.getValue());
    if (!fn) {
      module.emitError() << "zero-export-step-abi: entry @" << name.getValue()
                         << " is no llvm.func; run it after the lowering to "
                            "the LLVM dialect";
      return signalPassFailure();
    }
    if (fn.getFunctionType().getNumParams() != args.size() ||
        !isa<LLVM::LLVMVoidType>(fn.getFunctionType().getReturnType())) {
      fn.emitOpError() << "takes " << fn.getFunctionType().getNumParams()
                       << " LLVM arguments for the descriptor's " << args.size()
                       << " (and must return nothing); lower function "
                          "boundaries with the bare-pointer calling "
                          "convention";
      return signalPassFailure();
    }
    LLVM::LLVMFuncOp packed = buildPacked(b, fn, args.size());
    std::string nameSym = "zero_entry_name_" + std::to_string(i);
    std::string text = name.getValue().str();
    text.push_back('\0');
    LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), text.size()),
        /*isConstant=*/true, LLVM::Linkage::Private, nameSym,
        b.getStringAttr(text));
    table.emplace_back(nameSym, packed.getSymName().str());
  }

  // The descriptor, as JSON.
  std::string json = stepAbiToJson(abi);
  json.push_back('\0');
  LLVM::GlobalOp::create(
      b, loc, LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), json.size()),
      /*isConstant=*/true, LLVM::Linkage::External, ZRT_STEP_ABI_SYMBOL,
      b.getStringAttr(json));

  // {name, packed function} pairs, closed by {NULL, NULL}.
  auto pairType = LLVM::LLVMStructType::getLiteral(ctx, {ptr, ptr});
  auto tableType = LLVM::LLVMArrayType::get(pairType, table.size() + 1);
  auto global = LLVM::GlobalOp::create(b, loc, tableType, /*isConstant=*/true,
                                       LLVM::Linkage::External,
                                       ZRT_STEP_ENTRIES_SYMBOL, Attribute());
  Block *init = b.createBlock(&global.getInitializerRegion());
  b.setInsertionPointToStart(init);
  Value array = LLVM::UndefOp::create(b, loc, tableType);
  Value null = LLVM::ZeroOp::create(b, loc, ptr);
  for (unsigned i = 0; i <= table.size(); ++i) {
    Value name = i < table.size() ? LLVM::AddressOfOp::create(
                                        b, loc, ptr, table[i].first)
                                        .getResult()
                                  : null;
    Value fn = i < table.size() ? LLVM::AddressOfOp::create(
                                      b, loc, ptr, table[i].second)
                                      .getResult()
                                : null;
    array = LLVM::InsertValueOp::create(b, loc, array, name,
                                        ArrayRef<int64_t>{i, 0});
    array = LLVM::InsertValueOp::create(b, loc, array, fn,
                                        ArrayRef<int64_t>{i, 1});
  }
  LLVM::ReturnOp::create(b, loc, array);
}
} // namespace
