//===- GpuKernelMatch.h - Which loop nests run as which kernels -*- C++ -*-===//
//
// What zero-gpu-kernels and zero-fuse-row-nests share: which code may run
// as a kernel, and the shapes of reduction the kernels are built for (one
// block per place, one block for a scalar, a thread per column, a row
// kernel of several steps), matched on scf loop nests over buffers.
// Internal to lib/Conversion.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_CONVERSION_GPUKERNELMATCH_H
#define ZERO_LIB_CONVERSION_GPUKERNELMATCH_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <optional>

namespace mlir::zero::gpu_kernels {

/// The runtime's compute stream, and its copy of a device buffer to the
/// host (runtime.h); the module every kernel goes to.
constexpr llvm::StringLiteral kStreamFn = "zrt_gpu_stream";
constexpr llvm::StringLiteral kCopyToHostFn = "zrt_copy_to_host";
constexpr llvm::StringLiteral kKernelModule = "zero_kernels";

/// Whether `loop` can run as a kernel: it yields nothing to the host, and
/// everything in it computes on buffers that already exist (no calls, no
/// allocations, no copies, which are the host's or the runtime's business).
bool isKernelLoop(Operation *loop);

/// Whether `op` reads or writes the contents of a buffer (not only its
/// address): what host code must not do on the cuda target.
bool touchesBufferContents(Operation *op);

/// The allocation a view of `v` comes from, or null.
Operation *rootAllocation(Value v);

/// The trip count of a loop dimension with constant bounds and step.
std::optional<int64_t> tripCountOf(Value lb, Value ub, Value step);

/// A loop dimension with constant bounds: iv = lb + step * (0 .. trips),
/// below ub.
struct Dim {
  int64_t lb, step, trips, ub;
};

/// An update of one place of a buffer in a loop body:
/// `%old = load B[idx]; %new = combine %old, %value; store %new, B[idx]`.
struct Accumulation {
  memref::LoadOp load;
  Operation *combine;
  memref::StoreOp store;
  Value value;
  gpu::AllReduceOperation kind;
  arith::AtomicRMWKind identity;
};

/// Warp shuffles move 32 and 64 bits: a 16-bit float place's partial
/// values are f32 in a block reduction.
bool isNarrowFloat(Type type);

/// `acc`'s update on `lhs` and `rhs` of `lhs`'s type (the same operation
/// and attributes, another operand type).
Value combineAs(OpBuilder &b, Location loc, const Accumulation &acc,
                Value lhs, Value rhs);

/// The buffer a view of `v` comes from (an allocation's result or an
/// argument).
Value rootBuffer(Value v);

/// The dimensions of a nest of scf.for loops with constant bounds.
SmallVector<Dim> dimsOf(ArrayRef<scf::ForOp> nest);

/// The iterations of `dims` in all.
int64_t product(ArrayRef<Dim> dims);

/// A reduction that runs as one block per output place (`rows`, one block
/// when null): the block's threads share the iterations of `nest` and
/// combine their partial values with gpu.all_reduce.
struct BlockReduction {
  scf::ParallelOp rows;
  SmallVector<scf::ForOp> nest;
  SmallVector<Accumulation> accumulations;
};

/// A reduction over outer loops of a parallel nest (a bias gradient: for
/// each row, every column's sum grows): interchanged, one thread per column
/// adds its rows in the loop's order.
struct ColumnReduction {
  SmallVector<scf::ForOp> nest;
  scf::ParallelOp columns;
  SmallVector<Accumulation> accumulations;
  /// No place moves with the loops: each thread keeps its places' values
  /// in registers across them.
  bool placesStay;
};

/// Threads of a reduction to one place, which has one block.
constexpr int64_t kScalarReductionThreads = 1024;

/// Reductions over rows with at least this many rows share each column's
/// rows among a block's warps.
constexpr int64_t kMinColumnBlockRows = 64;

/// Rows each thread of a column block folds at least, where there are few.
constexpr int64_t kColumnBlockRowsPerThread = 8;

/// The dimensions of a parallel nest with constant bounds, each with
/// iterations, fewer than 2^31 in all; nullopt otherwise.
std::optional<SmallVector<Dim>> parallelDims(scf::ParallelOp loop);

/// A parallel nest whose body is one reduction (a LayerNorm's mean, a
/// softmax's maximum), over the buffer's contiguous dimension.
std::optional<BlockReduction> matchRowReduction(scf::ParallelOp rows);

/// A nest of scf.for loops that reduces to places that do not depend on
/// them (a gradient's sum of squares): one block.
std::optional<BlockReduction> matchScalarReduction(scf::ForOp outer);

/// Whether `body` only loads, stores and computes (no loops).
bool isFlatBody(Block &body);

/// One step of a row kernel: a reduction over the row (`nest`), or a
/// parallel nest over its elements (`dims`; one iteration where the row
/// computes a place of its own).
struct RowPhase {
  Operation *op;
  SmallVector<scf::ForOp> nest;
  SmallVector<Accumulation> accumulations;
  SmallVector<Dim> dims;
};

/// An scf.parallel over rows whose body runs steps one after another (what
/// zero-fuse-row-nests makes of a softmax or a LayerNorm): reductions of
/// the row into its places, parallel nests over its elements, and
/// arithmetic around them.
struct RowKernel {
  scf::ParallelOp rows;
  SmallVector<Dim> rowDims;
  SmallVector<RowPhase> phases;
};

/// `rows` as a row kernel: at least two steps, each a reduction nest of the
/// row or a flat parallel nest, with pure arithmetic between; nullopt
/// otherwise.
std::optional<RowKernel> matchRowKernel(scf::ParallelOp rows);

/// scf.for loops around one parallel nest that only accumulates into places
/// each of its iterations owns: the loops do not index them (a bias
/// gradient), or they move with the loops but every parallel iteration
/// keeps its own (an embedding gradient's scatter). The innermost loop's
/// body may compute and load (a token id) before the parallel nest.
std::optional<ColumnReduction> matchColumnReduction(scf::ForOp outer);

/// `v` where `b` builds: looked up in `mapping` if it has it; computed
/// again (each op cloned into `mapping`) if `scope` computes it; as it is
/// if it comes from outside. For a reduction's place, computed in a loop
/// body but needed after the loop.
Value recompute(OpBuilder &b, Value v, IRMapping &mapping, Operation *scope);

/// Ends a loop body that carries `accumulations`' partial values: each
/// combined with what this iteration adds (its update cloned with the old
/// value replaced by the partial value), and yielded.
void yieldCombined(OpBuilder &b, Location loc,
                   ArrayRef<Accumulation> accumulations, ValueRange partials,
                   IRMapping &mapping);

/// `select %c, %a, %b` in a kernel, where one side is computed from loads
/// for the select alone and the other loads nothing, and %c does not
/// depend on a load: an scf.if that computes each side in its branch, so
/// that a masked element (a causal attention's `select %above, -inf,
/// %score`) reads nothing. Only loads with no write to memory between them
/// and the select move.
LogicalResult branchMaskedLoads(arith::SelectOp select, Operation *scope);

/// The induction variables of `dims` at the linear iteration `linear`
/// (row-major, the last dimension fastest).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<Dim> dims);

} // namespace mlir::zero::gpu_kernels

#endif // ZERO_LIB_CONVERSION_GPUKERNELMATCH_H
