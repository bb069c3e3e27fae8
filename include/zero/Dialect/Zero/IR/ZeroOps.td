//===- ZeroOps.td - zero dialect operations ----------------*- tablegen -*-===//
//
// Operations of the `zero` dialect. Upstream `shard` ops carry the
// collectives; only what upstream lacks is defined here.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DIALECT_ZERO_IR_ZEROOPS_TD
#define ZERO_DIALECT_ZERO_IR_ZEROOPS_TD

include "zero/Dialect/Zero/IR/ZeroDialect.td"

#endif // ZERO_DIALECT_ZERO_IR_ZEROOPS_TD
