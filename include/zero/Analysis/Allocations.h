//===- Allocations.h - Buffers of a bufferized step -------------*- C++ -*-===//
//
// Which allocation a memref value refers to, and the memory category the
// runtime counts that allocation to. Shared by the passes that tag
// allocations (the collectives' bufferization), lower the tags to runtime
// calls (zero-alloc-categories) and predict memory (zero-memory-report), so
// that prediction and measurement follow one rule.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_ALLOCATIONS_H
#define ZERO_ANALYSIS_ALLOCATIONS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace mlir::zero {

/// The value whose buffer `memref` views: `memref` followed through
/// view-like ops (subview, reshapes, casts) to the first value that is no
/// view (an allocation's result, a function argument, ...).
Value getViewedBuffer(Value memref);

/// The memref.alloc or memref.alloca whose buffer `memref` views, through
/// view-like ops (subview, reshapes, casts); null if it comes from anything
/// else (a function argument, a call result, a loop-carried value).
Operation *getAllocation(Value memref);

/// The memory categories of generated allocations, in the order of the
/// runtime's zrt_category (runtime/include/zero/runtime.h).
inline constexpr llvm::StringLiteral kAllocCategories[] = {
    "params", "grads", "optimizer_states", "activations"};

/// The category `alloc` counts to: its `zero.category` attribute, or
/// "activations", the runtime's default for generated code.
StringRef getAllocationCategory(Operation *alloc);

} // namespace mlir::zero

#endif // ZERO_ANALYSIS_ALLOCATIONS_H
