//===- StepMemory.h - Predicted per-rank memory of a step ------*- C++ -*-===//
//
// The bytes one rank holds while it runs a bufferized step function: the
// ZeRO model-state accounting from the step's manifest, the buffers a
// driver passes in, and the peak of what the function allocates, simulated
// over its allocations and frees in program order. zero-memory-report
// prints it; zero-schedule's memory budget holds the scheduled step to it;
// tests compare it with what the runtime measures.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_STEPMEMORY_H
#define ZERO_ANALYSIS_STEPMEMORY_H

#include "zero/Analysis/Allocations.h"
#include "zero/Analysis/Collectives.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <array>
#include <limits>

namespace mlir::zero {

/// The runtime's memory categories: kAllocCategories, then the collectives'
/// scratch (comm).
inline constexpr unsigned kNumMemoryCategories =
    std::size(kAllocCategories) + 1;
inline constexpr llvm::StringLiteral kMemoryCategories[kNumMemoryCategories] = {
    kAllocCategories[0], kAllocCategories[1], kAllocCategories[2],
    kAllocCategories[3], "comm"};

/// The runtime's NVMe extents start at and round up to this many bytes
/// (runtime.h, "NVMe offload").
inline constexpr int64_t kNvmeBlock = 4096;

/// The bytes an arena needs to hold `pieces`, each at the next
/// ZRT_COMM_ARENA_ALIGNMENT boundary after the one before, as the runtime
/// places them (INT64_MAX if that overflows).
int64_t commArenaBytes(ArrayRef<int64_t> pieces);

struct StepMemory {
  int64_t stage = -1, worldSize = 1;
  llvm::StringMap<int64_t> modelStates; ///< params, grads, optimizer_states
  llvm::StringMap<int64_t> arguments;   ///< by category
  /// Bytes on the NVMe tier by category (zero-offload's extents, each
  /// rounded up to kNvmeBlock as the runtime reserves them).
  llvm::StringMap<int64_t> nvme;
  /// Peak bytes in host memory next to the device by category
  /// (zero-offload's optimizer=host: arguments and buffers marked
  /// `zero.space = "host"`), and the peak of their total. Everything else
  /// counts as the device's.
  llvm::StringMap<int64_t> host;
  int64_t hostPeak = 0;
  int64_t largestTensor = 0; ///< bytes of the largest padded parameter
  int64_t numParams = 0;
  /// Peak of the bytes the function allocates itself.
  int64_t generatedPeak = 0;
  /// Peak of the total: argument buffers plus generated allocations.
  int64_t predictedPeak = 0;
  /// Predicted peak per category (arguments plus generated code).
  std::array<int64_t, kNumMemoryCategories> predictedByCategory{};
  /// The op of the function's entry block during which the total first
  /// reached its peak (null if the function allocates nothing).
  Operation *peakAt = nullptr;
  /// The same op where it is innermost: inside a loop body (gradient
  /// accumulation's micro-batches), the op of the body.
  Operation *innermostPeakAt = nullptr;
  /// The device's largest total while each op of the function runs (its
  /// nested ops and the buffers it takes for the call included), by op.
  llvm::DenseMap<Operation *, int64_t> during;
  /// The bytes of the total above the threshold asked for, summed over the
  /// ops of the function (before each, and at its end): how far and how
  /// long it stays over a budget.
  int64_t excess = 0;
};

/// Predicts what one rank holds while running `fn`, a bufferized step
/// function (memref arguments). Emits a located error and fails on what the
/// prediction cannot size (non-numeric or dynamic buffers, a malformed
/// manifest, sums that overflow int64). `threshold` is the budget
/// StepMemory::excess measures against. `cpuTemporaries`: whether the
/// runtime backend takes the CPU backend's temporaries for a call: f32
/// copies of a bf16 x bf16 -> f32 GEMM's operands, and the MPI
/// collectives' scratch (commScratchPieces). The CUDA backend takes
/// neither: cuBLASLt multiplies bf16 natively, and its collectives copy (a
/// world of one) or are NCCL's, whose buffers are NCCL's own.
FailureOr<StepMemory>
predictStepMemory(func::FuncOp fn,
                  int64_t threshold = std::numeric_limits<int64_t>::max(),
                  bool cpuTemporaries = true);

} // namespace mlir::zero

#endif // ZERO_ANALYSIS_STEPMEMORY_H
