//===- ZeroOps.h - zero dialect operations ----------------------*- C++ -*-===//

#ifndef ZERO_DIALECT_ZERO_IR_ZEROOPS_H
#define ZERO_DIALECT_ZERO_IR_ZEROOPS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"

#define GET_OP_CLASSES
#include "zero/Dialect/Zero/IR/ZeroOps.h.inc"

#endif // ZERO_DIALECT_ZERO_IR_ZEROOPS_H
