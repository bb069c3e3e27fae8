//===- Allocations.cpp - Buffers of a bufferized step ---------------------===//

#include "zero/Analysis/Allocations.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

Value zero::getViewedBuffer(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

Operation *zero::getAllocation(Value memref) {
  Operation *def = getViewedBuffer(memref).getDefiningOp();
  return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(def) ? def
                                                                 : nullptr;
}

StringRef zero::getAllocationCategory(Operation *alloc) {
  if (auto category = alloc->getAttrOfType<StringAttr>(
          ZeroDialect::CategoryAttrHelper::getNameStr()))
    return category.getValue();
  return "activations";
}
