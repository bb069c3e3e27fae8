//===- Allocations.cpp - Buffers of a bufferized step ---------------------===//

#include "zero/Analysis/Allocations.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

Operation *zero::getAllocation(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (isa<memref::AllocOp, memref::AllocaOp>(def))
      return def;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return nullptr;
    memref = view.getViewSource();
  }
  return nullptr;
}

StringRef zero::getAllocationCategory(Operation *alloc) {
  if (auto category = alloc->getAttrOfType<StringAttr>(
          ZeroDialect::CategoryAttrHelper::getNameStr()))
    return category.getValue();
  return "activations";
}
