//===- Collectives.h - What the runtime runs for a collective --*- C++ -*-===//
//
// The step's collectives stay typed ops (`zero.all_gather`,
// `zero.reduce_scatter`, `zero.all_reduce`, the `zero.*_start` ops) until
// zero-collectives-to-runtime lowers them. What each becomes (the
// runtime's kind, reduction and element type, and the count argument) is
// decided here once, for that lowering and for the analyses that predict
// the runtime's memory and time (zero-memory-report, zero-comm-buffers).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_COLLECTIVES_H
#define ZERO_ANALYSIS_COLLECTIVES_H

#include "mlir/IR/Operation.h"

#include <optional>

namespace mlir::zero {

/// A collective as the runtime runs it (runtime.h, zrt_collective_op). The
/// enums are runtime.h's, held as integers so that this header does not
/// need it.
struct RuntimeCollective {
  int kind = 0;         ///< zrt_collective
  int reduction = 0;    ///< zrt_reduction
  int elementType = -1; ///< zrt_element_type; -1: none the runtime takes
  int64_t elementBytes = 0;
  int64_t count = 0; ///< the entry point's count argument
  bool started = false; ///< zrt_collective_start (a zero.*_start op)
  bool scalar = false;  ///< by value, zrt_collective_scalar

  /// The descriptor (zrt_make_collective_op); needs elementType >= 0.
  uint32_t descriptor() const;
};

/// Whether the runtime's collectives take elements of `type` (f32, f64,
/// bf16).
bool isCollectiveElementType(Type type);

/// What `op` runs if it is a collective on buffers: zero.all_gather,
/// zero.reduce_scatter, zero.all_reduce, or the memref form of
/// zero.all_gather_start, zero.reduce_scatter_start or
/// zero.all_reduce_start. std::nullopt for any other op (copies and NVMe
/// transfers included) and for the tensor forms.
std::optional<RuntimeCollective> getRuntimeCollective(Operation *op);

/// The ZRT_COMM scratch buffers `c` takes while it runs on a world of
/// `worldSize` ranks with the runtime's default bucket, in the order it
/// takes them (runtime.h, zrt_comm_scratch). A piece whose size overflows
/// int64 is INT64_MAX.
SmallVector<int64_t, 2> commScratchPieces(const RuntimeCollective &c,
                                          int64_t worldSize);

} // namespace mlir::zero

#endif // ZERO_ANALYSIS_COLLECTIVES_H
