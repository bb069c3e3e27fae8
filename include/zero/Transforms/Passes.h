//===- Passes.h - zero-mlir passes ------------------------------*- C++ -*-===//

#ifndef ZERO_TRANSFORMS_PASSES_H
#define ZERO_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Support/Target.h"

namespace mlir::zero {

/// Where zero-offload keeps a kind of model state.
enum class Placement { Device, Host, Nvme };

/// How zero-remat chooses what to recompute.
enum class RematPolicy { Budget, Blocks };

#define GEN_PASS_DECL
#include "zero/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Transforms/Passes.h.inc"

} // namespace mlir::zero

#endif // ZERO_TRANSFORMS_PASSES_H
