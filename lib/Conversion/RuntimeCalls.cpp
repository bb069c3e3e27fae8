//===- RuntimeCalls.cpp - Calls from lowered code into the runtime --------===//

#include "RuntimeCalls.h"

#include "zero/Analysis/StepMemory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

FailureOr<func::FuncOp>
zero::getOrDeclareRuntimeFunc(ModuleOp module, StringRef name,
                              FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name)) {
    if (existing.getFunctionType() != type)
      return existing.emitOpError()
             << "conflicts with the runtime entry point '" << name
             << "', which must have type " << type;
    return existing;
  }
  if (Operation *other = module.lookupSymbol(name))
    return other->emitOpError() << "uses the name of the runtime entry point '"
                                << name << "'";
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name, type);
  fn.setPrivate();
  return fn;
}

zero::BufferView zero::getBufferView(OpBuilder &b, Location loc,
                                     Value memref) {
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  auto toI64 = [&](Value index) -> Value {
    return arith::IndexCastOp::create(b, loc, i64, index);
  };
  auto md = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  Value ptr = LLVM::IntToPtrOp::create(b, loc, ptrType, toI64(base));
  Type elementType = cast<MemRefType>(memref.getType()).getElementType();
  ptr = LLVM::GEPOp::create(b, loc, ptrType, elementType, ptr,
                            ValueRange{toI64(md.getOffset())});
  BufferView view;
  view.ptr = ptr;
  for (Value s : md.getSizes())
    view.sizes.push_back(toI64(s));
  for (Value s : md.getStrides())
    view.strides.push_back(toI64(s));
  return view;
}

/// Bytes a staging buffer of `type` holds: its elements' bytes rounded up
/// to zero::kNvmeBlock, or failure for elements that are not whole bytes.
FailureOr<int64_t> mlir::zero::stagingBytes(Operation *op, ShapedType type) {
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  if (bits % 8 != 0 || zero::kNvmeBlock % (bits / 8) != 0)
    return op->emitOpError() << "cannot stage elements of "
                             << type.getElementType()
                             << " for NVMe transfers (whole bytes that "
                                "divide 4096 are needed)";
  int64_t bytes = type.getNumElements() * (bits / 8);
  return (bytes + zero::kNvmeBlock - 1) / zero::kNvmeBlock * zero::kNvmeBlock;
}

