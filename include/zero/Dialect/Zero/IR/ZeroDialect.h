//===- ZeroDialect.h - zero dialect -----------------------------*- C++ -*-===//
//
// Declares the `zero` dialect, the names of its contract attributes and its
// attributes (the flat layout of a parameter, `#zero.layout`).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DIALECT_ZERO_IR_ZERODIALECT_H
#define ZERO_DIALECT_ZERO_IR_ZERODIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "zero/Dialect/Zero/IR/ZeroOpsDialect.h.inc"

#include "zero/Dialect/Zero/IR/ZeroEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "zero/Dialect/Zero/IR/ZeroAttrs.h.inc"

#endif // ZERO_DIALECT_ZERO_IR_ZERODIALECT_H
