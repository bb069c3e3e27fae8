//===- RuntimeCalls.h - Calls from lowered code into the runtime -*- C++ -*-===//
//
// Shared by the passes that emit calls to the runtime's C ABI
// (runtime/include/zero/runtime.h): declaring entry points and passing
// buffers as plain pointers.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_CONVERSION_RUNTIMECALLS_H
#define ZERO_LIB_CONVERSION_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {

/// Finds or declares `func.func private @name` of `type` in `module`; a
/// symbol of that name with another type or kind is a located error.
FailureOr<func::FuncOp> getOrDeclareRuntimeFunc(ModuleOp module,
                                                StringRef name,
                                                FunctionType type);

/// A memref's metadata as i64 values and a pointer to its first element.
struct BufferView {
  Value ptr;
  SmallVector<Value> sizes;
  SmallVector<Value> strides;
};

/// The pointer to `memref`'s first element (aligned pointer plus offset) and
/// its sizes and strides, as the runtime's C ABI takes them.
BufferView getBufferView(OpBuilder &b, Location loc, Value memref);

/// Bytes a staging buffer of the NVMe tier holds for `type`: its elements'
/// bytes rounded up to kNvmeBlock, or a located error on `op` for elements
/// that are not whole bytes dividing it.
FailureOr<int64_t> stagingBytes(Operation *op, ShapedType type);

} // namespace mlir::zero

#endif // ZERO_LIB_CONVERSION_RUNTIMECALLS_H
