//===- ZeroOps.h - zero dialect operations ----------------------*- C++ -*-===//

#ifndef ZERO_DIALECT_ZERO_IR_ZEROOPS_H
#define ZERO_DIALECT_ZERO_IR_ZEROOPS_H

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"

#define GET_TYPEDEF_CLASSES
#include "zero/Dialect/Zero/IR/ZeroOpsTypes.h.inc"

namespace mlir::zero {
/// The side-effect resource of communication: every started collective and
/// every wait writes it, so no pass reorders collectives among themselves
/// or removes one whose result looks unused (the other ranks wait for it).
struct CommResource : public SideEffects::Resource::Base<CommResource> {
  StringRef getName() final { return "zero.comm"; }
};
/// The side-effect resource of the NVMe tier: every started transfer and
/// every wait of one writes it, so transfers keep their order.
struct NvmeResource : public SideEffects::Resource::Base<NvmeResource> {
  StringRef getName() final { return "zero.nvme"; }
};
} // namespace mlir::zero

#define GET_OP_CLASSES
#include "zero/Dialect/Zero/IR/ZeroOps.h.inc"

#endif // ZERO_DIALECT_ZERO_IR_ZEROOPS_H
