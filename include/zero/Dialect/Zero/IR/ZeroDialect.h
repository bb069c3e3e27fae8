//===- ZeroDialect.h - zero dialect -----------------------------*- C++ -*-===//
//
// Declares the `zero` dialect and the names of its contract attributes.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DIALECT_ZERO_IR_ZERODIALECT_H
#define ZERO_DIALECT_ZERO_IR_ZERODIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "zero/Dialect/Zero/IR/ZeroOpsDialect.h.inc"

#endif // ZERO_DIALECT_ZERO_IR_ZERODIALECT_H
