//===- Target.h - What a step runs on ---------------------------*- C++ -*-===//

#ifndef ZERO_SUPPORT_TARGET_H
#define ZERO_SUPPORT_TARGET_H

namespace mlir::zero {

/// Where the step runs (zero-lower's target, recorded by zero-step-abi): the
/// passes' `target` option and what the analyses predict for.
enum class Target { CPU, CUDA };

} // namespace mlir::zero

#endif // ZERO_SUPPORT_TARGET_H
