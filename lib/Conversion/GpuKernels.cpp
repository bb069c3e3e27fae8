//===- GpuKernels.cpp - Loop nests to GPU launches (target=cuda) ----------===//
//
// zero-gpu-kernels: every loop nest of a lowered step becomes a gpu.launch,
// and host code stops touching device memory. zero-gpu-launch-streams: after
// upstream gpu-kernel-outlining, every launch goes on the runtime's compute
// stream. The mapping itself is upstream's (collapseParallelLoops,
// tileParallelLoop, the scf.parallel-to-gpu.launch patterns); what upstream
// has no pass for is deciding which code is a kernel, what the host may not
// do with device buffers, and the stream the launches share with the
// runtime's GEMMs.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Transforms/Passes.h"

#include "mlir/Conversion/SCFToGPU/SCFToGPU.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROFUSEROWNESTSPASS
#define GEN_PASS_DEF_ZEROGPUKERNELSPASS
#define GEN_PASS_DEF_ZEROGPULAUNCHSTREAMSPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kStreamFn = "zrt_gpu_stream";
constexpr llvm::StringLiteral kCopyToHostFn = "zrt_copy_to_host";
constexpr llvm::StringLiteral kKernelModule = "zero_kernels";

/// Whether `loop` can run as a kernel: it yields nothing to the host, and
/// everything in it computes on buffers that already exist (no calls, no
/// allocations, no copies, which are the host's or the runtime's business).
bool isKernelLoop(Operation *loop) {
  if (loop->getNumResults() != 0)
    return false;
  WalkResult result = loop->walk([&](Operation *op) {
    if (op == loop || isa<memref::LoadOp, memref::StoreOp>(op))
      return WalkResult::advance();
    if (isa<scf::ForOp, scf::ParallelOp, scf::IfOp, scf::WhileOp,
            scf::YieldOp, scf::ConditionOp, scf::ReduceOp,
            scf::ReduceReturnOp>(op))
      return WalkResult::advance();
    if (op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
        !isa<CallOpInterface>(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

/// Whether `op` reads or writes the contents of a buffer (not only its
/// address): what host code must not do on the cuda target.
bool touchesBufferContents(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
    Value v = e.getValue();
    return v && isa<BaseMemRefType>(v.getType()) &&
           isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect());
  });
}

/// The allocation a view of `v` comes from, or null.
Operation *rootAllocation(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      v = view.getViewSource();
      continue;
    }
    return def;
  }
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// The trip count of a loop dimension with constant bounds and step.
std::optional<int64_t> tripCountOf(Value lb, Value ub, Value step) {
  std::optional<int64_t> l = getConstantIntValue(lb),
                         u = getConstantIntValue(ub),
                         s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0 || *l < 0 || *u < *l)
    return std::nullopt;
  int64_t span = *u - *l;
  return span / *s + (span % *s != 0);
}

/// A loop dimension with constant bounds: iv = lb + step * (0 .. trips),
/// below ub.
struct Dim {
  int64_t lb, step, trips, ub;
};

/// The combining kinds of an accumulation's update: the all-reduce that
/// combines threads' partial values, and the atomic kind whose identity
/// starts each thread's partial value.
std::optional<std::pair<gpu::AllReduceOperation, arith::AtomicRMWKind>>
combiningKinds(Operation *op) {
  using Kinds = std::pair<gpu::AllReduceOperation, arith::AtomicRMWKind>;
  using gpu::AllReduceOperation;
  using arith::AtomicRMWKind;
  return llvm::TypeSwitch<Operation *, std::optional<Kinds>>(op)
      .Case([](arith::AddFOp) {
        return Kinds{AllReduceOperation::ADD, AtomicRMWKind::addf};
      })
      .Case([](arith::AddIOp) {
        return Kinds{AllReduceOperation::ADD, AtomicRMWKind::addi};
      })
      .Case([](arith::MulFOp) {
        return Kinds{AllReduceOperation::MUL, AtomicRMWKind::mulf};
      })
      .Case([](arith::MaximumFOp) {
        return Kinds{AllReduceOperation::MAXIMUMF, AtomicRMWKind::maximumf};
      })
      .Case([](arith::MinimumFOp) {
        return Kinds{AllReduceOperation::MINIMUMF, AtomicRMWKind::minimumf};
      })
      .Case([](arith::MaxNumFOp) {
        return Kinds{AllReduceOperation::MAXNUMF, AtomicRMWKind::maxnumf};
      })
      .Case([](arith::MinNumFOp) {
        return Kinds{AllReduceOperation::MINNUMF, AtomicRMWKind::minnumf};
      })
      .Default([](Operation *) { return std::nullopt; });
}

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
bool isNarrowFloat(Type type) { return type.isBF16() || type.isF16(); }

/// Whether `kind` gives the same result in a wider type, rounded back:
/// maximum and minimum pick one of their operands.
bool isExactInWiderType(gpu::AllReduceOperation kind) {
  using gpu::AllReduceOperation;
  return kind == AllReduceOperation::MAXIMUMF ||
         kind == AllReduceOperation::MINIMUMF ||
         kind == AllReduceOperation::MAXNUMF ||
         kind == AllReduceOperation::MINNUMF;
}

/// Whether a block reduction (gpu.all_reduce) can combine `accs`: 16-bit
/// float places only for the kinds that are exact in f32.
bool blockReducible(ArrayRef<Accumulation> accs) {
  return llvm::all_of(accs, [](const Accumulation &acc) {
    return !isNarrowFloat(acc.combine->getResult(0).getType()) ||
           isExactInWiderType(acc.kind);
  });
}

/// `acc`'s update on `lhs` and `rhs` of `lhs`'s type (the same operation
/// and attributes, another operand type).
Value combineAs(OpBuilder &b, Location loc, const Accumulation &acc,
                Value lhs, Value rhs) {
  OperationState state(loc, acc.combine->getName());
  state.addOperands({lhs, rhs});
  state.addTypes(lhs.getType());
  state.addAttributes(acc.combine->getAttrs());
  return b.create(state)->getResult(0);
}

/// The buffer a view of `v` comes from (an allocation's result or an
/// argument).
Value rootBuffer(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    v = view.getViewSource();
  }
  return v;
}

/// Whether `v` is computed, inside `scope`, from a value `isSource` accepts.
bool dependsOn(Value v, llvm::function_ref<bool(Value)> isSource,
               Operation *scope) {
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (isSource(x))
      return true;
    Operation *def = x.getDefiningOp();
    if (def && scope->isProperAncestor(def))
      llvm::append_range(work, def->getOperands());
  }
  return false;
}

/// The accumulations of a loop body in which every store is one, and which
/// is otherwise loads and operations without regions or memory effects;
/// failure for anything else. An accumulation's place (buffer and indices)
/// must not depend on the reduction's induction variables (unless
/// `placeMayMove` accepts its store), what it adds
/// must not depend on any accumulator's old value, and nothing else in the
/// body may read an accumulator's buffer: then the iterations of the
/// reduction can be split among threads and their partial values combined
/// (associatively, in another order than the loop's).
FailureOr<SmallVector<Accumulation>> matchAccumulations(
    Block &body, ArrayRef<Value> reductionIvs, Operation *scope,
    llvm::function_ref<bool(memref::StoreOp)> placeMayMove = nullptr) {
  SmallVector<Accumulation> found;
  SmallVector<memref::LoadOp> loads;
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions() != 0)
      return failure();
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      loads.push_back(load);
      continue;
    }
    auto store = dyn_cast<memref::StoreOp>(op);
    if (!store) {
      if (!isMemoryEffectFree(&op))
        return failure();
      continue;
    }
    Operation *combine = store.getValue().getDefiningOp();
    if (!combine || combine->getBlock() != &body || !combine->hasOneUse() ||
        combine->getNumOperands() != 2)
      return failure();
    auto kinds = combiningKinds(combine);
    Type type = store.getValue().getType();
    if (!kinds || !(type.isF32() || type.isF64() || type.isBF16() ||
                    type.isF16() || type.isInteger(32) || type.isInteger(64)))
      return failure();
    Accumulation acc{nullptr, combine, store, nullptr, kinds->first,
                     kinds->second};
    for (unsigned i = 0; i < 2 && !acc.load; ++i) {
      auto old = combine->getOperand(i).getDefiningOp<memref::LoadOp>();
      if (old && old->getBlock() == &body && old->hasOneUse() &&
          old.getMemRef() == store.getMemRef() &&
          llvm::equal(old.getIndices(), store.getIndices())) {
        acc.load = old;
        acc.value = combine->getOperand(1 - i);
      }
    }
    if (!acc.load)
      return failure();
    found.push_back(acc);
  }
  if (found.empty())
    return failure();

  auto isReductionIv = [&](Value v) {
    return llvm::is_contained(reductionIvs, v);
  };
  DenseSet<Value> olds;
  DenseSet<Value> roots;
  for (Accumulation &acc : found) {
    olds.insert(acc.load.getResult());
    if (!roots.insert(rootBuffer(acc.store.getMemRef())).second)
      return failure();
  }
  for (Accumulation &acc : found) {
    if ((dependsOn(acc.store.getMemRef(), isReductionIv, scope) ||
         llvm::any_of(acc.store.getIndices(),
                      [&](Value index) {
                        return dependsOn(index, isReductionIv, scope);
                      })) &&
        !(placeMayMove && placeMayMove(acc.store)))
      return failure();
    if (dependsOn(acc.value, [&](Value v) { return olds.contains(v); },
                  scope))
      return failure();
  }
  for (memref::LoadOp load : loads)
    if (!olds.contains(load.getResult()) &&
        roots.contains(rootBuffer(load.getMemRef())))
      return failure();
  return found;
}

/// `outer` and the scf.for loops perfectly nested in it, each with constant
/// bounds, an index induction variable and no results, their iterations
/// fewer than 2^62 in all; failure otherwise.
FailureOr<SmallVector<scf::ForOp>> forNest(scf::ForOp outer) {
  SmallVector<scf::ForOp> nest{outer};
  int64_t iterations = 1;
  while (true) {
    scf::ForOp loop = nest.back();
    std::optional<int64_t> trips = tripCountOf(
        loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
    if (loop.getNumResults() != 0 || !trips ||
        !loop.getInductionVar().getType().isIndex() ||
        (*trips != 0 && iterations > (int64_t(1) << 62) / *trips))
      return failure();
    iterations *= *trips;
    Block *body = loop.getBody();
    auto inner = dyn_cast<scf::ForOp>(body->front());
    if (!inner || body->getOperations().size() != 2)
      return nest;
    nest.push_back(inner);
  }
}

SmallVector<Dim> dimsOf(ArrayRef<scf::ForOp> nest) {
  SmallVector<Dim> dims;
  for (scf::ForOp loop : nest)
    dims.push_back({*getConstantIntValue(loop.getLowerBound()),
                    *getConstantIntValue(loop.getStep()),
                    *tripCountOf(loop.getLowerBound(), loop.getUpperBound(),
                                 loop.getStep()),
                    *getConstantIntValue(loop.getUpperBound())});
  return dims;
}

int64_t product(ArrayRef<Dim> dims) {
  int64_t n = 1;
  for (const Dim &d : dims)
    n *= d.trips;
  return n;
}

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

/// Reductions need this many iterations to be worth a block.
constexpr int64_t kMinBlockReduction = 32;
/// Threads of a reduction to one place, which has one block.
constexpr int64_t kScalarReductionThreads = 1024;
/// Reductions over rows with at least this many rows share each column's
/// rows among a block's warps.
constexpr int64_t kMinColumnBlockRows = 64;
/// Rows each thread of a column block folds at least, where there are few.
constexpr int64_t kColumnBlockRowsPerThread = 8;

/// The dimensions of a parallel nest with constant bounds, each with
/// iterations, fewer than 2^31 in all; nullopt otherwise.
std::optional<SmallVector<Dim>> parallelDims(scf::ParallelOp loop) {
  SmallVector<Dim> dims;
  int64_t iterations = 1;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> trips = tripCountOf(lb, ub, step);
    if (!trips || *trips == 0 || iterations > INT32_MAX / *trips)
      return std::nullopt;
    iterations *= *trips;
    dims.push_back({*getConstantIntValue(lb), *getConstantIntValue(step),
                    *trips, *getConstantIntValue(ub)});
  }
  return dims;
}

/// The scf.for nest from `outer`, of at least `minIterations` iterations,
/// as a block reduction whose places `scope`'s iterations own (its
/// accumulations a block's threads can split); nullopt otherwise.
std::optional<BlockReduction> matchReductionNest(scf::ForOp outer,
                                                 Operation *scope,
                                                 int64_t minIterations) {
  FailureOr<SmallVector<scf::ForOp>> nest = forNest(outer);
  if (failed(nest) || product(dimsOf(*nest)) < minIterations)
    return std::nullopt;
  SmallVector<Value> ivs = llvm::map_to_vector(
      *nest, [](scf::ForOp loop) { return loop.getInductionVar(); });
  FailureOr<SmallVector<Accumulation>> accs =
      matchAccumulations(*nest->back().getBody(), ivs, scope);
  if (failed(accs) || !blockReducible(*accs))
    return std::nullopt;
  return BlockReduction{nullptr, std::move(*nest), std::move(*accs)};
}

/// A parallel nest whose body is one reduction (a LayerNorm's mean, a
/// softmax's maximum), over the buffer's contiguous dimension.
std::optional<BlockReduction> matchRowReduction(scf::ParallelOp rows) {
  if (!parallelDims(rows))
    return std::nullopt;
  Block *body = rows.getBody();
  if (body->getOperations().size() < 2)
    return std::nullopt;
  auto outer = dyn_cast<scf::ForOp>(*std::prev(body->end(), 2));
  if (!outer)
    return std::nullopt;
  for (Operation &op : body->without_terminator())
    if (&op != outer &&
        (op.getNumRegions() != 0 || !isMemoryEffectFree(&op)))
      return std::nullopt;
  std::optional<BlockReduction> reduction =
      matchReductionNest(outer, rows, kMinBlockReduction);
  if (!reduction)
    return std::nullopt;
  // Threads of a block read neighbouring elements only if the reduction
  // walks a buffer's last dimension; otherwise a thread per row reads
  // neighbours, and the nest stays one.
  Value innermost = reduction->nest.back().getInductionVar();
  bool contiguous = false;
  reduction->nest.back().getBody()->walk([&](memref::LoadOp load) {
    if (load.getIndices().empty())
      return;
    contiguous |= dependsOn(
        load.getIndices().back(), [&](Value v) { return v == innermost; },
        rows);
  });
  if (!contiguous)
    return std::nullopt;
  reduction->rows = rows;
  return reduction;
}

/// A nest of scf.for loops that reduces to places that do not depend on
/// them (a gradient's sum of squares): one block.
std::optional<BlockReduction> matchScalarReduction(scf::ForOp outer) {
  return matchReductionNest(outer, outer, kMinBlockReduction);
}

/// Whether `body` only loads, stores and computes (no loops).
bool isFlatBody(Block &body) {
  return llvm::all_of(body.without_terminator(), [](Operation &op) {
    return op.getNumRegions() == 0 &&
           (isa<memref::LoadOp, memref::StoreOp>(op) ||
            isMemoryEffectFree(&op));
  });
}

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

std::optional<RowKernel> matchRowKernel(scf::ParallelOp rows) {
  std::optional<SmallVector<Dim>> rowDims = parallelDims(rows);
  if (!rowDims || rows.getNumReductions() != 0)
    return std::nullopt;
  RowKernel kernel{rows, std::move(*rowDims), {}};
  for (Operation &op : rows.getBody()->without_terminator()) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      std::optional<BlockReduction> reduction =
          matchReductionNest(loop, rows, /*minIterations=*/1);
      if (!reduction)
        return std::nullopt;
      kernel.phases.push_back({&op, std::move(reduction->nest),
                               std::move(reduction->accumulations), {}});
      continue;
    }
    if (auto inner = dyn_cast<scf::ParallelOp>(op)) {
      std::optional<SmallVector<Dim>> dims = parallelDims(inner);
      if (!dims || inner.getNumReductions() != 0 ||
          !isFlatBody(*inner.getBody()))
        return std::nullopt;
      kernel.phases.push_back({&op, {}, {}, std::move(*dims)});
      continue;
    }
    if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
      return std::nullopt;
  }
  if (kernel.phases.size() < 2)
    return std::nullopt;
  return kernel;
}

/// Whether every iteration of `columns` stores to its own places of the
/// store's buffer, whatever the reduction's iteration: the buffer is a
/// buffer itself or a unit-stride subview of one, and each of `columns`'
/// induction variables is the index of a dimension whose subview offset
/// does not depend on the reduction (`table[ids[n], c] += rows[n, c]`: the
/// row moves with n, the column is c's alone).
bool ownsPlaces(memref::StoreOp store, scf::ParallelOp columns,
                ArrayRef<Value> reductionIvs, Operation *scope) {
  auto isReductionIv = [&](Value v) {
    return llvm::is_contained(reductionIvs, v);
  };
  // Per index of the store: where its dimension starts in a buffer that
  // does not move with the reduction.
  Value buffer = store.getMemRef();
  SmallVector<OpFoldResult> offsets(
      store.getIndices().size(),
      IntegerAttr::get(IndexType::get(store.getContext()), 0));
  if (dependsOn(buffer, isReductionIv, scope)) {
    auto view = buffer.getDefiningOp<memref::SubViewOp>();
    if (!view || !view.hasUnitStride() ||
        dependsOn(view.getSource(), isReductionIv, scope))
      return false;
    llvm::SmallBitVector dropped = view.getDroppedDims();
    offsets.clear();
    for (auto [d, offset] : llvm::enumerate(view.getMixedOffsets()))
      if (!dropped.test(d))
        offsets.push_back(offset);
  }
  for (Value iv : columns.getInductionVars()) {
    bool owned = false;
    for (auto [index, offset] : llvm::zip(store.getIndices(), offsets)) {
      auto offsetValue = dyn_cast<Value>(offset);
      if (index == iv &&
          (!offsetValue || !dependsOn(offsetValue, isReductionIv, scope)))
        owned = true;
    }
    if (!owned)
      return false;
  }
  return true;
}

/// scf.for loops around one parallel nest that only accumulates into places
/// each of its iterations owns: the loops do not index them (a bias
/// gradient), or they move with the loops but every parallel iteration
/// keeps its own (an embedding gradient's scatter). The innermost loop's
/// body may compute and load (a token id) before the parallel nest.
std::optional<ColumnReduction> matchColumnReduction(scf::ForOp outer) {
  FailureOr<SmallVector<scf::ForOp>> nest = forNest(outer);
  // (Without iterations the nest touches no place; interchanged, the
  // places that stay would be loaded and stored.)
  if (failed(nest) || product(dimsOf(*nest)) == 0)
    return std::nullopt;
  Block *body = nest->back().getBody();
  if (body->getOperations().size() < 2)
    return std::nullopt;
  auto columns = dyn_cast<scf::ParallelOp>(*std::prev(body->end(), 2));
  if (!columns || columns.getNumReductions() != 0)
    return std::nullopt;
  SmallVector<memref::LoadOp> prefixLoads;
  for (Operation &op : body->without_terminator()) {
    if (&op == columns.getOperation())
      continue;
    if (auto load = dyn_cast<memref::LoadOp>(op))
      prefixLoads.push_back(load);
    else if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
      return std::nullopt;
  }
  for (Value bound : columns->getOperands())
    if (Operation *def = bound.getDefiningOp();
        def && outer->isAncestor(def))
      return std::nullopt;
  SmallVector<Value> ivs = llvm::map_to_vector(
      *nest, [](scf::ForOp loop) { return loop.getInductionVar(); });
  FailureOr<SmallVector<Accumulation>> accs = matchAccumulations(
      *columns.getBody(), ivs, outer, [&](memref::StoreOp store) {
        return ownsPlaces(store, columns, ivs, outer);
      });
  if (failed(accs))
    return std::nullopt;
  // What the loops load before the parallel nest must not be written in it.
  for (memref::LoadOp load : prefixLoads)
    for (Accumulation &acc : *accs)
      if (rootBuffer(load.getMemRef()) == rootBuffer(acc.store.getMemRef()))
        return std::nullopt;
  bool placesStay = llvm::all_of(*accs, [&](Accumulation &acc) {
    auto isReductionIv = [&](Value v) { return llvm::is_contained(ivs, v); };
    return !dependsOn(acc.store.getMemRef(), isReductionIv, outer) &&
           llvm::none_of(acc.store.getIndices(), [&](Value index) {
             return dependsOn(index, isReductionIv, outer);
           });
  });
  return ColumnReduction{std::move(*nest), columns, std::move(*accs),
                         placesStay};
}

/// `v` where `b` builds: looked up in `mapping` if it has it; computed
/// again (each op cloned into `mapping`) if `scope` computes it; as it is
/// if it comes from outside. For a reduction's place, computed in a loop
/// body but needed after the loop.
Value recompute(OpBuilder &b, Value v, IRMapping &mapping, Operation *scope) {
  if (Value mapped = mapping.lookupOrNull(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  if (!def || !scope->isAncestor(def))
    return v;
  for (Value operand : def->getOperands())
    recompute(b, operand, mapping, scope);
  b.clone(*def, mapping);
  return mapping.lookup(v);
}

/// Ends a loop body that carries `accumulations`' partial values: each
/// combined with what this iteration adds (its update cloned with the old
/// value replaced by the partial value), and yielded.
void yieldCombined(OpBuilder &b, Location loc,
                   ArrayRef<Accumulation> accumulations, ValueRange partials,
                   IRMapping &mapping) {
  SmallVector<Value> next;
  for (auto [acc, partial] : llvm::zip(accumulations, partials)) {
    mapping.map(acc.load->getResult(0), partial);
    next.push_back(b.clone(*acc.combine, mapping)->getResult(0));
  }
  scf::YieldOp::create(b, loc, next);
}

/// The operations of `select`'s block that compute its operand `side` (the
/// true or the false value) for it alone: loads and operations without
/// regions or side effects, each of whose results only the chain or that
/// operand uses (a value the other operand also uses, such as an
/// accumulator's old value in `select %keep, %old + %x, %old`, stays
/// outside); in block order.
SmallVector<Operation *> exclusiveChain(OpOperand &side,
                                        arith::SelectOp select) {
  Value value = side.get();
  // A use the chain may have: by an op of the chain, or as `side`.
  auto inChainOr = [&](OpOperand &use, const DenseSet<Operation *> &ops) {
    return &use == &side || ops.contains(use.getOwner());
  };
  Block *block = select->getBlock();
  DenseSet<Operation *> chain;
  SmallVector<Operation *> work;
  if (Operation *def = value.getDefiningOp())
    work.push_back(def);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (chain.contains(op) || op->getBlock() != block ||
        op->getNumRegions() != 0 ||
        !(isa<memref::LoadOp>(op) || isMemoryEffectFree(op)))
      continue;
    bool exclusive = llvm::all_of(op->getUses(), [&](OpOperand &use) {
      return inChainOr(use, chain);
    });
    if (!exclusive)
      continue;
    chain.insert(op);
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        work.push_back(def);
  }
  // Operands were visited after their users: a user left out earlier may
  // now be exclusive too, but leaving it out only keeps more work outside.
  SmallVector<Operation *> ordered(chain.begin(), chain.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  // An op whose users are not all in the final chain cannot move.
  SmallVector<Operation *> movable;
  DenseSet<Operation *> kept;
  for (Operation *op : llvm::reverse(ordered)) {
    bool ok = llvm::all_of(op->getUses(),
                           [&](OpOperand &use) { return inChainOr(use, kept); });
    if (ok) {
      kept.insert(op);
      movable.push_back(op);
    }
  }
  std::reverse(movable.begin(), movable.end());
  return movable;
}

/// `select %c, %a, %b` in a kernel, where one side is computed from loads
/// for the select alone and the other loads nothing, and %c does not
/// depend on a load: an scf.if that computes each side in its branch, so
/// that a masked element (a causal attention's `select %above, -inf,
/// %score`) reads nothing. Only loads with no write to memory between them
/// and the select move.
LogicalResult branchMaskedLoads(arith::SelectOp select, Operation *scope) {
  if (!select.getType().isIntOrIndexOrFloat() ||
      !select.getCondition().getType().isInteger(1))
    return failure();
  auto isLoad = [](Value v) {
    return static_cast<bool>(v.getDefiningOp<memref::LoadOp>());
  };
  if (dependsOn(select.getCondition(), isLoad, scope))
    return failure();
  SmallVector<Operation *> sides[2] = {
      exclusiveChain(select->getOpOperand(1), select),
      exclusiveChain(select->getOpOperand(2), select)};
  auto loads = [](ArrayRef<Operation *> chain) {
    return llvm::count_if(chain, [](Operation *op) {
      return isa<memref::LoadOp>(op);
    });
  };
  if ((loads(sides[0]) == 0) == (loads(sides[1]) == 0))
    return failure();
  // Nothing between the first moved op and the select writes memory.
  DenseSet<Operation *> moved;
  Operation *first = select;
  for (ArrayRef<Operation *> side : sides)
    for (Operation *op : side) {
      moved.insert(op);
      if (op->isBeforeInBlock(first))
        first = op;
    }
  for (Operation *op = first; op != select.getOperation();
       op = op->getNextNode())
    if (!moved.contains(op) && !isMemoryEffectFree(op) &&
        !isa<memref::LoadOp>(op))
      return failure();

  OpBuilder b(select);
  Location loc = select.getLoc();
  auto branch = [&](ArrayRef<Operation *> side, Value result) {
    return [&, side, result](OpBuilder &at, Location) {
      IRMapping map;
      for (Operation *op : side)
        at.clone(*op, map);
      scf::YieldOp::create(at, loc, map.lookupOrDefault(result));
    };
  };
  auto branched = scf::IfOp::create(
      b, loc, select.getCondition(),
      branch(sides[0], select.getTrueValue()),
      branch(sides[1], select.getFalseValue()));
  select.getResult().replaceAllUsesWith(branched.getResult(0));
  select.erase();
  for (ArrayRef<Operation *> side : sides)
    for (Operation *op : llvm::reverse(side))
      op->erase();
  return success();
}

/// The induction variables of `dims` at the linear iteration `linear`
/// (row-major, the last dimension fastest).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<Dim> dims) {
  SmallVector<Value> ivs(dims.size());
  Value rest = linear;
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    Value trips = arith::ConstantIndexOp::create(b, loc, dims[d].trips);
    Value position =
        d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, trips).getResult();
    if (d != 0)
      rest = arith::DivUIOp::create(b, loc, rest, trips);
    Value iv = arith::MulIOp::create(
        b, loc, position, arith::ConstantIndexOp::create(b, loc, dims[d].step));
    ivs[d] = arith::AddIOp::create(
        b, loc, iv, arith::ConstantIndexOp::create(b, loc, dims[d].lb));
  }
  return ivs;
}

struct ZeroGpuKernelsPass
    : public zero::impl::ZeroGpuKernelsPassBase<ZeroGpuKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (blockSize < 1 || blockSize > 1024) {
      module.emitError() << "zero-gpu-kernels: block-size must be 1 to 1024 "
                            "threads, not "
                         << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    for (auto fn : llvm::to_vector(module.getOps<func::FuncOp>())) {
      // Functions that run on the host next to the device (optimizer=host's
      // updates, zero-outline-host-ops) read host memory: they stay.
      auto space = fn->getAttrOfType<StringAttr>(
          zero::ZeroDialect::SpaceAttrHelper::getNameStr());
      if (fn.isExternal() || (space && space.getValue() == "host"))
        continue;
      if (failed(convertFunction(module, fn)))
        return signalPassFailure();
    }
  }

private:
  struct Work {
    SmallVector<scf::ParallelOp> parallel;
    SmallVector<ColumnReduction> columns;
    SmallVector<ColumnReduction> columnBlocks;
    SmallVector<BlockReduction> blocks;
    SmallVector<RowKernel> rowKernels;
    SmallVector<Operation *> serial;
    SmallVector<memref::LoadOp> reads;
  };

  /// Sorts the host code of `block` (and of host loops in it) into work.
  LogicalResult collect(Block &block, Work &work) {
    for (Operation &op : block) {
      if (isa<scf::ForOp, scf::ParallelOp>(op) && isKernelLoop(&op)) {
        if (auto parallel = dyn_cast<scf::ParallelOp>(op);
            parallel && parallel.getNumReductions() == 0) {
          if (std::optional<BlockReduction> rows = matchRowReduction(parallel))
            work.blocks.push_back(std::move(*rows));
          else if (std::optional<RowKernel> kernel = matchRowKernel(parallel))
            work.rowKernels.push_back(std::move(*kernel));
          else
            work.parallel.push_back(parallel);
        } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
          if (std::optional<ColumnReduction> columns =
                  matchColumnReduction(loop))
            (wantsColumnBlocks(*columns) ? work.columnBlocks : work.columns)
                .push_back(std::move(*columns));
          else if (std::optional<BlockReduction> scalar =
                       matchScalarReduction(loop))
            work.blocks.push_back(std::move(*scalar));
          else
            work.serial.push_back(&op);
        } else {
          work.serial.push_back(&op);
        }
        continue;
      }
      if (isa<memref::StoreOp>(op)) {
        work.serial.push_back(&op);
        continue;
      }
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        if (!isa_and_nonnull<memref::AllocaOp>(
                rootAllocation(load.getMemRef())))
          work.reads.push_back(load);
        continue;
      }
      if (isa<memref::CopyOp>(op))
        return op.emitOpError()
               << "copies device buffers in host code, which the cuda "
                  "target cannot run; lower copies to loops first "
                  "(zero-lower-strided-copy{contiguous=true})";
      if (op.getNumRegions() == 0 &&
          !isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op) &&
          touchesBufferContents(&op))
        return op.emitOpError()
               << "reads or writes a buffer in host code, which the cuda "
                  "target cannot run (device memory); only loop nests of "
                  "loads, stores and arithmetic become kernels";
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          if (failed(collect(inner, work)))
            return failure();
    }
    return success();
  }

  /// The parallel nest of `c` outside its scf.for loops.
  scf::ParallelOp interchange(ColumnReduction &c) {
    scf::ForOp outer = c.nest.front();
    OpBuilder b(outer);
    Location loc = outer.getLoc();
    SmallVector<Dim> dims = dimsOf(c.nest);
    IRMapping map;
    // One iteration of the loops: the innermost loop's body, then the
    // parallel nest's.
    DenseSet<Operation *> updates;
    if (c.placesStay)
      for (Accumulation &acc : c.accumulations)
        updates.insert_range(
            ArrayRef<Operation *>{acc.load, acc.combine, acc.store});
    auto cloneIteration = [&](OpBuilder &inner) {
      for (Operation &op : c.nest.back().getBody()->without_terminator())
        if (&op != c.columns.getOperation())
          inner.clone(op, map);
      for (Operation &op : c.columns.getBody()->without_terminator())
        if (!updates.contains(&op))
          inner.clone(op, map);
    };
    auto cst = [&](OpBuilder &inner, int64_t v) {
      return arith::ConstantIndexOp::create(inner, loc, v);
    };
    std::function<void(OpBuilder &, size_t)> buildLoops =
        [&](OpBuilder &inner, size_t d) {
          if (d == dims.size())
            return cloneIteration(inner);
          scf::ForOp::create(
              inner, loc, cst(inner, dims[d].lb),
              cst(inner, dims[d].ub),
              cst(inner, dims[d].step), ValueRange{},
              [&](OpBuilder &nested, Location, Value iv, ValueRange) {
                map.map(c.nest[d].getInductionVar(), iv);
                buildLoops(nested, d + 1);
                scf::YieldOp::create(nested, loc);
              });
        };
    // Places that stay: loaded once, carried through the loops (linearized
    // to one, in the same order), stored once; the loads of what is added
    // no longer wait for the previous iteration's store.
    auto buildCarried = [&](OpBuilder &inner) {
      IRMapping place = map;
      auto atPlace = [&](Value v) {
        return recompute(inner, v, place, outer);
      };
      SmallVector<Value> buffers, olds;
      SmallVector<SmallVector<Value>> indices;
      for (Accumulation &acc : c.accumulations) {
        buffers.push_back(atPlace(acc.store.getMemRef()));
        indices.push_back(
            llvm::map_to_vector(acc.store.getIndices(), atPlace));
        olds.push_back(memref::LoadOp::create(inner, loc, buffers.back(),
                                              indices.back()));
      }
      auto loop = scf::ForOp::create(
          inner, loc, cst(inner, 0), cst(inner, product(dims)),
          cst(inner, 1), olds,
          [&](OpBuilder &body, Location, Value iteration, ValueRange values) {
            for (auto [loop, iv] :
                 llvm::zip(c.nest, delinearize(body, loc, iteration, dims)))
              map.map(loop.getInductionVar(), iv);
            cloneIteration(body);
            yieldCombined(body, loc, c.accumulations, values, map);
          });
      for (auto [result, buffer, index] :
           llvm::zip(loop.getResults(), buffers, indices))
        memref::StoreOp::create(inner, loc, result, buffer, index);
    };
    auto columns = scf::ParallelOp::create(
        b, c.columns.getLoc(), c.columns.getLowerBound(),
        c.columns.getUpperBound(), c.columns.getStep(),
        [&](OpBuilder &inner, Location, ValueRange ivs) {
          map.map(c.columns.getInductionVars(), ivs);
          if (c.placesStay)
            buildCarried(inner);
          else
            buildLoops(inner, 0);
        });
    outer.erase();
    return columns;
  }

  /// Whether `c` runs as column blocks: its places stay, its columns have
  /// constant bounds (fewer than 2^31 / 32 blocks of them), and it has
  /// rows enough for a block's warps to share.
  bool wantsColumnBlocks(ColumnReduction &c) {
    if (!c.placesStay || blockSize < 64 ||
        product(dimsOf(c.nest)) < kMinColumnBlockRows)
      return false;
    int64_t columns = 1;
    for (auto [lb, ub, step] :
         llvm::zip(c.columns.getLowerBound(), c.columns.getUpperBound(),
                   c.columns.getStep())) {
      std::optional<int64_t> trips = tripCountOf(lb, ub, step);
      if (!trips || *trips == 0 || columns > INT32_MAX / *trips)
        return false;
      columns *= *trips;
    }
    return true;
  }

  /// `c` as one gpu.launch: blocks of 32 x (block-size / 32) threads; a
  /// thread's x is its column (32 neighbouring columns: coalesced), its y
  /// the residue of the rows it folds into a partial value from the
  /// identity, (y, y + height, ...). The partial values meet in workgroup
  /// memory; after a barrier the block's first row of threads combines
  /// each column's place with them in order of y. The order depends only
  /// on the block size, so runs repeat bit for bit.
  void launchColumnBlocks(ColumnReduction &c) {
    scf::ForOp outer = c.nest.front();
    OpBuilder b(outer);
    Location loc = outer.getLoc();
    MLIRContext *ctx = &getContext();
    auto cst = [&](OpBuilder &at, int64_t v) {
      return arith::ConstantIndexOp::create(at, loc, v);
    };
    // (wantsColumnBlocks checked the bounds.)
    SmallVector<Dim> columnDims = *parallelDims(c.columns);
    SmallVector<Dim> dims = dimsOf(c.nest);
    int64_t columns = product(columnDims), rows = product(dims);
    constexpr int64_t width = 32;
    // A block per 32 columns is few blocks (a bias gradient of 768 columns
    // has 24, for a GPU of 132 multiprocessors): each takes as many threads
    // as a block may have, 32 on each column, down to 8 when each would
    // fold fewer than 8 rows.
    int64_t height = std::clamp<int64_t>(rows / kColumnBlockRowsPerThread, 8,
                                         32);
    auto shared = gpu::AddressSpaceAttr::get(
        ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
    SmallVector<Type> partialTypes;
    for (Accumulation &acc : c.accumulations)
      partialTypes.push_back(MemRefType::get(
          {height, width}, acc.store.getValue().getType(), AffineMap(),
          shared));
    Value one = cst(b, 1);
    auto launch = gpu::LaunchOp::create(
        b, loc, cst(b, (columns + width - 1) / width), one, one,
        cst(b, width), cst(b, height), one, /*dynamicSharedMemorySize=*/nullptr,
        /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{}, partialTypes);
    Block &body = launch.getBody().front();
    b.setInsertionPointToEnd(&body);
    b.setInsertionPoint(gpu::TerminatorOp::create(b, loc));
    Value x = launch.getThreadIds().x, y = launch.getThreadIds().y;
    Value column = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                                      cst(b, width)),
        x);
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          column, cst(b, columns));
    IRMapping map;
    map.map(c.columns.getInductionVars(),
            delinearize(b, loc, column, columnDims));

    SmallVector<Value> identities;
    for (Accumulation &acc : c.accumulations)
      identities.push_back(arith::getIdentityValue(
          acc.identity, acc.store.getValue().getType(), b, loc));
    DenseSet<Operation *> updates;
    for (Accumulation &acc : c.accumulations)
      updates.insert_range(
          ArrayRef<Operation *>{acc.load, acc.combine, acc.store});
    // This thread's partial values: its column's rows y, y + height, ...
    auto partials = scf::IfOp::create(
        b, loc, inRange,
        [&](OpBuilder &then, Location) {
          auto loop = scf::ForOp::create(
              then, loc, y, cst(then, rows), cst(then, height), identities,
              [&](OpBuilder &inner, Location, Value iteration,
                  ValueRange values) {
                for (auto [loop, iv] : llvm::zip(
                         c.nest, delinearize(inner, loc, iteration, dims)))
                  map.map(loop.getInductionVar(), iv);
                for (Operation &op :
                     c.nest.back().getBody()->without_terminator())
                  if (&op != c.columns.getOperation())
                    inner.clone(op, map);
                for (Operation &op : c.columns.getBody()->without_terminator())
                  if (!updates.contains(&op))
                    inner.clone(op, map);
                yieldCombined(inner, loc, c.accumulations, values, map);
              });
          scf::YieldOp::create(then, loc, loop.getResults());
        },
        [&](OpBuilder &otherwise, Location) {
          scf::YieldOp::create(otherwise, loc, identities);
        });
    for (auto [partial, buffer] :
         llvm::zip(partials.getResults(), launch.getWorkgroupAttributions()))
      memref::StoreOp::create(b, loc, partial, buffer, ValueRange{y, x});
    gpu::BarrierOp::create(b, loc);

    // The first row of threads: each place, then the partial values of its
    // column in order of y.
    Value first = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, cst(b, 0)),
        inRange);
    scf::IfOp::create(b, loc, first, [&](OpBuilder &then, Location) {
      IRMapping place;
      place.map(c.columns.getInductionVars(),
                llvm::map_to_vector(c.columns.getInductionVars(),
                                    [&](Value iv) { return map.lookup(iv); }));
      auto atPlace = [&](Value v) {
        return recompute(then, v, place, outer);
      };
      for (auto [acc, buffer] :
           llvm::zip(c.accumulations, launch.getWorkgroupAttributions())) {
        Value target = atPlace(acc.store.getMemRef());
        SmallVector<Value> indices =
            llvm::map_to_vector(acc.store.getIndices(), atPlace);
        Value old = memref::LoadOp::create(then, loc, target, indices);
        auto fold = scf::ForOp::create(
            then, loc, cst(then, 0), cst(then, height), cst(then, 1),
            ValueRange{old},
            [&](OpBuilder &inner, Location, Value r, ValueRange value) {
              IRMapping step;
              step.map(acc.load.getResult(), value.front());
              step.map(acc.value, memref::LoadOp::create(
                                      inner, loc, buffer, ValueRange{r, x}));
              scf::YieldOp::create(
                  inner, loc, inner.clone(*acc.combine, step)->getResult(0));
            });
        memref::StoreOp::create(then, loc, fold.getResult(0), target, indices);
      }
      scf::YieldOp::create(then, loc);
    });
    outer.erase();
  }

  /// `r` as one gpu.launch: a block per place (per iteration of `r.rows`),
  /// whose threads each combine every so manyth iteration of the nest into
  /// a partial value from the combining kind's identity; gpu.all_reduce
  /// combines the partial values, and thread 0 combines the total into the
  /// place. The order of the sum depends only on the block size.
  void launchBlockReduction(BlockReduction &r) {
    Operation *root = r.rows ? r.rows.getOperation() : r.nest.front();
    OpBuilder b(root);
    Location loc = root->getLoc();
    auto cst = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    SmallVector<Dim> rowDims;
    if (r.rows)
      rowDims = *parallelDims(r.rows);
    SmallVector<Dim> dims = dimsOf(r.nest);
    int64_t iterations = product(dims);
    int64_t limit = r.rows ? static_cast<int64_t>(blockSize)
                           : kScalarReductionThreads;
    int64_t threads = std::min<int64_t>(limit, llvm::alignTo(iterations, 32));
    Value one = cst(1);
    auto launch = gpu::LaunchOp::create(b, loc, cst(product(rowDims)), one,
                                        one, cst(threads), one, one);
    Block &body = launch.getBody().front();
    b.setInsertionPointToEnd(&body);
    b.setInsertionPoint(gpu::TerminatorOp::create(b, loc));
    Value thread = launch.getThreadIds().x;

    // The place: the row's induction variables and what the parallel body
    // computes from them before the reduction.
    IRMapping map;
    if (r.rows) {
      map.map(r.rows.getInductionVars(),
              delinearize(b, loc, launch.getBlockIds().x, rowDims));
      for (Operation &op : r.rows.getBody()->without_terminator())
        if (&op != r.nest.front().getOperation())
          b.clone(op, map);
    }
    emitBlockReduction(b, loc, thread, threads, r.nest, r.accumulations, map);
    root->erase();
  }

  /// `k` as one gpu.launch: a block per row, whose threads run its phases
  /// in order with a barrier between each two. A reduction is a block
  /// reduction (emitBlockReduction: thread 0 updates the row's places);
  /// in a parallel phase each thread takes every so manyth iteration. A
  /// phase's loads of what the phases before it stored (a row's maximum,
  /// the row itself) come after the barrier, from the same block.
  void launchRowKernel(RowKernel &k) {
    OpBuilder b(k.rows);
    Location loc = k.rows.getLoc();
    auto cst = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    int64_t widest = 1;
    for (RowPhase &phase : k.phases) {
      SmallVector<Dim> dims = phase.nest.empty() ? phase.dims
                                                 : dimsOf(phase.nest);
      widest = std::max(widest, product(dims));
    }
    int64_t threads =
        std::min<int64_t>(blockSize, llvm::alignTo(widest, 32));
    Value one = cst(1);
    auto launch = gpu::LaunchOp::create(b, loc, cst(product(k.rowDims)), one,
                                        one, cst(threads), one, one);
    Block &body = launch.getBody().front();
    b.setInsertionPointToEnd(&body);
    b.setInsertionPoint(gpu::TerminatorOp::create(b, loc));
    Value thread = launch.getThreadIds().x;

    IRMapping map;
    map.map(k.rows.getInductionVars(),
            delinearize(b, loc, launch.getBlockIds().x, k.rowDims));
    DenseSet<Operation *> phaseOps;
    for (RowPhase &phase : k.phases)
      phaseOps.insert(phase.op);
    for (Operation &op : k.rows.getBody()->without_terminator())
      if (!phaseOps.contains(&op))
        b.clone(op, map);
    for (auto [i, phase] : llvm::enumerate(k.phases)) {
      if (i != 0)
        gpu::BarrierOp::create(b, loc);
      if (!phase.nest.empty()) {
        emitBlockReduction(b, loc, thread, threads, phase.nest,
                           phase.accumulations, map);
        continue;
      }
      auto inner = cast<scf::ParallelOp>(phase.op);
      IRMapping step = map;
      scf::ForOp::create(
          b, loc, thread, cst(product(phase.dims)), cst(threads),
          ValueRange{},
          [&](OpBuilder &nested, Location, Value iteration, ValueRange) {
            step.map(inner.getInductionVars(),
                     delinearize(nested, loc, iteration, phase.dims));
            for (Operation &op : inner.getBody()->without_terminator())
              nested.clone(op, step);
            scf::YieldOp::create(nested, loc);
          });
    }
    k.rows.erase();
  }

  /// Where `b` builds, in a launch whose `threads` threads (`thread` this
  /// one's) all get here: the reduction `nest` with `accumulations`, its
  /// outer values mapped by `map`. Each thread combines every so manyth
  /// iteration into a partial value from the combining kind's identity,
  /// gpu.all_reduce combines the partial values, and thread 0 combines the
  /// total into the place.
  void emitBlockReduction(OpBuilder &b, Location loc, Value thread,
                          int64_t threads, SmallVector<scf::ForOp> nest,
                          SmallVector<Accumulation> accumulations,
                          IRMapping map) {
    MLIRContext *ctx = &getContext();
    auto cst = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    SmallVector<Dim> dims = dimsOf(nest);
    int64_t iterations = product(dims);
    IRMapping place = map;

    // Each thread's partial values (f32 for a 16-bit float place: only
    // maximum and minimum get here, which f32 computes exactly).
    auto narrow = [](Accumulation &acc) {
      return isNarrowFloat(acc.store.getValue().getType());
    };
    SmallVector<Value> identities;
    for (Accumulation &acc : accumulations)
      identities.push_back(arith::getIdentityValue(
          acc.identity,
          narrow(acc) ? b.getF32Type() : acc.store.getValue().getType(), b,
          loc));
    Block &reduced = *nest.back().getBody();
    auto partials = scf::ForOp::create(
        b, loc, thread, cst(iterations), cst(threads), identities,
        [&](OpBuilder &inner, Location, Value iteration, ValueRange partial) {
          SmallVector<Value> ivs = delinearize(inner, loc, iteration, dims);
          for (auto [loop, iv] : llvm::zip(nest, ivs))
            map.map(loop.getInductionVar(), iv);
          DenseSet<Operation *> updates;
          for (Accumulation &acc : accumulations)
            updates.insert_range(ArrayRef<Operation *>{
                acc.load, acc.combine, acc.store});
          for (Operation &op : reduced.without_terminator())
            if (!updates.contains(&op))
              inner.clone(op, map);
          SmallVector<Value> next;
          for (auto [acc, value] : llvm::zip(accumulations, partial)) {
            if (narrow(acc)) {
              Value wide = arith::ExtFOp::create(
                  inner, loc, value.getType(), map.lookupOrDefault(acc.value));
              next.push_back(combineAs(inner, loc, acc, value, wide));
              continue;
            }
            map.map(acc.load.getResult(), value);
            next.push_back(inner.clone(*acc.combine, map)->getResult(0));
          }
          scf::YieldOp::create(inner, loc, next);
        });

    SmallVector<Value> totals;
    for (auto [acc, partial] :
         llvm::zip(accumulations, partials.getResults()))
      totals.push_back(gpu::AllReduceOp::create(
          b, loc, partial, gpu::AllReduceOperationAttr::get(ctx, acc.kind),
          /*uniform=*/true));
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        thread, cst(0));
    scf::IfOp::create(b, loc, first, [&](OpBuilder &then, Location) {
      // The place's buffer and indices, computed again from the row (they
      // may have been computed inside the reduction's body).
      auto atPlace = [&](Value v) {
        return recompute(then, v, place, nest.front());
      };
      // Every place first: a place may be computed from what another
      // accumulation adds, which the combines below map to its total.
      SmallVector<Value> buffers;
      SmallVector<SmallVector<Value>> indices;
      for (Accumulation &acc : accumulations) {
        buffers.push_back(atPlace(acc.store.getMemRef()));
        indices.push_back(
            llvm::map_to_vector(acc.store.getIndices(), atPlace));
      }
      for (auto [acc, total, buffer, index] :
           llvm::zip(accumulations, totals, buffers, indices)) {
        Value old = memref::LoadOp::create(then, loc, buffer, index);
        Value updated;
        if (narrow(acc)) {
          Value wide = arith::ExtFOp::create(then, loc, total.getType(), old);
          updated = arith::TruncFOp::create(
              then, loc, old.getType(), combineAs(then, loc, acc, wide, total));
        } else {
          IRMapping step = place;
          step.map(acc.load.getResult(), old);
          step.map(acc.value, total);
          updated = then.clone(*acc.combine, step)->getResult(0);
        }
        memref::StoreOp::create(then, loc, updated, buffer, index);
      }
      scf::YieldOp::create(then, loc);
    });
  }

  LogicalResult convertFunction(ModuleOp module, func::FuncOp fn) {
    Work work;
    if (failed(collect(fn.getBody().front(), work)))
      return failure();
    for (Block &block : llvm::drop_begin(fn.getBody()))
      if (failed(collect(block, work)))
        return failure();
    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);

    // Reductions over outer loops: the parallel nest outside, each thread
    // adding its column's rows in the loop's order.
    for (ColumnReduction &columns : work.columns) {
      work.parallel.push_back(interchange(columns));
      ++numInterchanged;
    }

    // Parallel nests: one dimension, tiles of blockSize, tiles to blocks and
    // elements to threads.
    auto identity = AffineMap::getMultiDimIdentityMap(1, ctx);
    auto mapTo = [&](gpu::Processor p) {
      return gpu::ParallelLoopDimMappingAttr::get(ctx, p, identity, identity);
    };
    for (scf::ParallelOp loop : work.parallel) {
      if (loop.getNumLoops() > 1) {
        Operation *next = loop->getNextNode();
        std::vector<unsigned> all(loop.getNumLoops());
        std::iota(all.begin(), all.end(), 0u);
        collapseParallelLoops(rewriter, loop, {all});
        loop = cast<scf::ParallelOp>(next->getPrevNode());
      }
      auto [outer, inner] =
          scf::tileParallelLoop(loop, {blockSize}, /*noMinMaxBounds=*/true);
      // Nested parallel loops (a reduction's inner parallel part) run
      // sequentially in their thread.
      inner.getBody()->walk([&](scf::ParallelOp nested) {
        SmallVector<gpu::ParallelLoopDimMappingAttr> seq(
            nested.getNumLoops(), mapTo(gpu::Processor::Sequential));
        (void)gpu::setMappingAttr(nested, seq);
      });
      if (failed(gpu::setMappingAttr(outer, {mapTo(gpu::Processor::BlockX)})) ||
          failed(gpu::setMappingAttr(inner, {mapTo(gpu::Processor::ThreadX)})))
        return outer.emitOpError("cannot be mapped to GPU blocks and threads");
      ++numParallel;
    }
    if (!work.parallel.empty()) {
      RewritePatternSet patterns(ctx);
      populateParallelLoopToGPUPatterns(patterns);
      ConversionTarget target(*ctx);
      target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      configureParallelLoopToGPULegality(target);
      if (failed(applyPartialConversion(fn, target, std::move(patterns))))
        return fn.emitOpError("has a parallel loop nest that could not be "
                              "mapped to a GPU launch");
      finalizeParallelLoopToGPUConversion(fn);
      // The patterns' own marker, which finalize does not always find.
      fn.walk([](gpu::LaunchOp launch) {
        launch->removeAttr("SCFToGPU_visited");
      });
    }

    // Reductions: a block per output place, its threads' partial values
    // combined by gpu.all_reduce.
    for (BlockReduction &reduction : work.blocks) {
      launchBlockReduction(reduction);
      ++numBlockReductions;
    }
    // Rows whose reductions and elementwise steps run one after another:
    // a block per row.
    for (RowKernel &kernel : work.rowKernels) {
      launchRowKernel(kernel);
      ++numRowKernels;
    }
    // Long reductions over rows: a block per 32 columns, its warps sharing
    // the rows.
    for (ColumnReduction &columns : work.columnBlocks) {
      launchColumnBlocks(columns);
      ++numColumnBlocks;
    }

    // Serial nests and stores: one thread, the same order as on the CPU.
    for (Operation *op : work.serial) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
      Block &body = launch.getBody().front();
      b.setInsertionPointToEnd(&body);
      auto terminator = gpu::TerminatorOp::create(b, loc);
      op->moveBefore(terminator);
      ++numSerial;
    }

    // A masked element's loads only where it is not masked (a causal
    // attention's upper triangle, half of each score row).
    fn.walk([&](gpu::LaunchOp launch) {
      SmallVector<arith::SelectOp> selects;
      launch.walk([&](arith::SelectOp select) { selects.push_back(select); });
      for (arith::SelectOp select : selects)
        if (succeeded(branchMaskedLoads(select, launch)))
          ++numMaskedLoads;
    });

    // Correctly rounded square roots, as on the CPU: convert-gpu-to-nvvm
    // sends math.sqrt (and LLVM's sqrt intrinsic) to libdevice's
    // __nv_sqrtf, which is sqrt.approx unless the module sets
    // __CUDA_PREC_SQRT, which MLIR's NVVM target has no flag for. NVVM's
    // own round-to-nearest intrinsic is sqrt.rn.
    // math.rsqrt is 1 / sqrt, as the CPU's math-to-llvm computes it (not
    // libdevice's rsqrt.approx).
    fn.walk([&](gpu::LaunchOp launch) {
      launch.walk([&](Operation *op) {
        if (!isa<math::SqrtOp, math::RsqrtOp>(op))
          return;
        Type type = op->getResult(0).getType();
        StringRef intrinsic = type.isF32()   ? "llvm.nvvm.sqrt.rn.f"
                              : type.isF64() ? "llvm.nvvm.sqrt.rn.d"
                                             : "";
        if (intrinsic.empty())
          return;
        OpBuilder b(op);
        Location loc = op->getLoc();
        Value root = LLVM::CallIntrinsicOp::create(
                         b, loc, type, b.getStringAttr(intrinsic),
                         ValueRange{op->getOperand(0)})
                         .getResult(0);
        if (isa<math::RsqrtOp>(op)) {
          Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
          root = arith::DivFOp::create(b, loc, one, root);
        }
        op->getResult(0).replaceAllUsesWith(root);
        op->erase();
      });
    });

    // Scalars the host needs: copied into a stack slot after the work
    // queued before them.
    if (!work.reads.empty()) {
      Type ptr = LLVM::LLVMPointerType::get(ctx);
      Type i64 = IntegerType::get(ctx, 64);
      FailureOr<func::FuncOp> copy = zero::getOrDeclareRuntimeFunc(
          module, kCopyToHostFn,
          FunctionType::get(ctx, {ptr, ptr, i64}, {}));
      if (failed(copy))
        return failure();
      OpBuilder entry = OpBuilder::atBlockBegin(&fn.getBody().front());
      for (memref::LoadOp load : work.reads) {
        Location loc = load.getLoc();
        Type element = load.getType();
        if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8)
          return load.emitOpError()
                 << "reads a " << element
                 << " from device memory in host code; the cuda target "
                    "copies only whole-byte scalars to the host";
        auto slot = memref::AllocaOp::create(
            entry, loc, MemRefType::get({}, element));
        OpBuilder b(load);
        Value source = load.getMemRef();
        int64_t rank = load.getMemRefType().getRank();
        if (rank > 0) {
          SmallVector<OpFoldResult> offsets(load.getIndices().begin(),
                                            load.getIndices().end());
          SmallVector<OpFoldResult> ones(rank, b.getIndexAttr(1));
          source = memref::SubViewOp::create(b, loc, source, offsets, ones,
                                             ones);
        }
        zero::BufferView dst = zero::getBufferView(b, loc, slot);
        zero::BufferView src = zero::getBufferView(b, loc, source);
        Value bytes = arith::ConstantIntOp::create(
            b, loc, i64, element.getIntOrFloatBitWidth() / 8);
        func::CallOp::create(b, loc, *copy, ValueRange{dst.ptr, src.ptr, bytes});
        Value value = memref::LoadOp::create(b, loc, slot, ValueRange{});
        load.replaceAllUsesWith(value);
        load.erase();
        ++numHostReads;
      }
    }
    return success();
  }
};

struct ZeroGpuLaunchStreamsPass
    : public zero::impl::ZeroGpuLaunchStreamsPassBase<
          ZeroGpuLaunchStreamsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<gpu::GPUModuleOp> kernelModules(
        module.getOps<gpu::GPUModuleOp>());
    if (kernelModules.empty())
      return;

    // One kernel module: the first one, renamed, takes the others' kernels.
    SymbolTable moduleSymbols(module);
    gpu::GPUModuleOp merged = module.lookupSymbol<gpu::GPUModuleOp>(
        kKernelModule);
    if (!merged) {
      merged = kernelModules.front();
      if (failed(SymbolTable::replaceAllSymbolUses(
              merged, StringAttr::get(ctx, kKernelModule), module))) {
        merged.emitOpError("could not be renamed");
        return signalPassFailure();
      }
      moduleSymbols.setSymbolName(merged, kKernelModule);
    }
    SymbolTable kernels(merged);
    // Old kernel reference -> new one.
    DenseMap<Attribute, SymbolRefAttr> moved;
    for (gpu::GPUModuleOp other : kernelModules) {
      if (other == merged)
        continue;
      if (other.getTargetsAttr() != merged.getTargetsAttr()) {
        other.emitOpError("has other targets than the step's other kernels");
        return signalPassFailure();
      }
      for (Operation &op :
           llvm::make_early_inc_range(other.getBody()->getOperations())) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol)
          continue;
        StringAttr oldName = symbol.getNameAttr();
        op.remove();
        // insert() renames on a clash.
        StringAttr newName = kernels.insert(&op);
        moved[SymbolRefAttr::get(other.getNameAttr(),
                                 {FlatSymbolRefAttr::get(oldName)})] =
            SymbolRefAttr::get(merged.getNameAttr(),
                               {FlatSymbolRefAttr::get(newName)});
      }
      other.erase();
    }

    // Every launch on the runtime's stream.
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    FailureOr<func::FuncOp> streamFn = zero::getOrDeclareRuntimeFunc(
        module, kStreamFn, FunctionType::get(ctx, {}, {ptr}));
    if (failed(streamFn))
      return signalPassFailure();
    auto tokenType = gpu::AsyncTokenType::get(ctx);
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    for (gpu::LaunchFuncOp launch : launches) {
      SymbolRefAttr kernel = launch.getKernel();
      if (auto it = moved.find(kernel); it != moved.end())
        kernel = it->second;
      if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
          launch.getAsyncObject()) {
        launch.emitOpError("is already asynchronous; zero-gpu-launch-streams "
                           "expects the synchronous launches of "
                           "gpu-kernel-outlining");
        return signalPassFailure();
      }
      OpBuilder b(launch);
      Location loc = launch.getLoc();
      Value stream = func::CallOp::create(b, loc, *streamFn, ValueRange{})
                         .getResult(0);
      Value token =
          UnrealizedConversionCastOp::create(b, loc, tokenType, stream)
              .getResult(0);
      std::optional<gpu::KernelDim3> cluster;
      if (launch.hasClusterSize())
        cluster = launch.getClusterSizeOperandValues();
      gpu::LaunchFuncOp::create(
          b, loc, kernel, launch.getGridSizeOperandValues(),
          launch.getBlockSizeOperandValues(),
          launch.getDynamicSharedMemorySize(), launch.getKernelOperands(),
          tokenType, ValueRange{token}, cluster);
      launch.erase();
    }
  }
};

//===----------------------------------------------------------------------===//
// zero-fuse-row-nests
//===----------------------------------------------------------------------===//

/// Row nests with this many rows keep a GPU busy whatever their length.
constexpr int64_t kMinRowNestRows = 512;
/// Elementwise iterations a row that fewer rows may take (4 a thread of a
/// 256-thread block).
constexpr int64_t kMaxFewRowsWork = 1024;

/// A nest zero-fuse-row-nests may take: an scf.parallel without
/// reductions, with constant bounds, that computes on buffers only; its
/// body loads, stores and computes (`reduces` false), or is a row
/// reduction in zero-gpu-kernels' form.
struct RowNest {
  scf::ParallelOp loop;
  SmallVector<Dim> dims;
  bool reduces;
};

std::optional<RowNest> matchRowNest(scf::ParallelOp loop) {
  if (loop.getNumReductions() != 0 || !isKernelLoop(loop))
    return std::nullopt;
  std::optional<SmallVector<Dim>> dims = parallelDims(loop);
  if (!dims)
    return std::nullopt;
  if (isFlatBody(*loop.getBody()))
    return RowNest{loop, std::move(*dims), false};
  if (!matchRowReduction(loop))
    return std::nullopt;
  return RowNest{loop, std::move(*dims), true};
}

bool sameDims(ArrayRef<Dim> a, ArrayRef<Dim> b) {
  return a.size() == b.size() &&
         llvm::all_of(llvm::zip(a, b), [](auto pair) {
           auto [x, y] = pair;
           return x.lb == y.lb && x.step == y.step && x.trips == y.trips;
         });
}

/// Whether `nests`, run row by row (a row of the first, then the same row
/// of the second, ...), compute what they compute one after another: every
/// buffer one of them writes and another accesses is accessed by all of
/// them through one value defined outside them, its leading `rank` indices
/// the nest's leading induction variables (the row's own places).
bool rowsIndependent(ArrayRef<RowNest> nests, size_t rank) {
  struct Access {
    Value memref;
    SmallVector<Value> indices;
    unsigned nest;
    bool write;
  };
  llvm::MapVector<Value, SmallVector<Access>> byBuffer;
  for (auto [i, nest] : llvm::enumerate(nests)) {
    scf::ParallelOp loop = nest.loop;
    loop.walk([&](Operation *op) {
      if (auto load = dyn_cast<memref::LoadOp>(op))
        byBuffer[rootBuffer(load.getMemRef())].push_back(
            {load.getMemRef(), llvm::to_vector(load.getIndices()),
             static_cast<unsigned>(i), false});
      else if (auto store = dyn_cast<memref::StoreOp>(op))
        byBuffer[rootBuffer(store.getMemRef())].push_back(
            {store.getMemRef(), llvm::to_vector(store.getIndices()),
             static_cast<unsigned>(i), true});
    });
  }
  for (auto &[root, accesses] : byBuffer) {
    bool written = llvm::any_of(accesses, [](const Access &a) {
      return a.write;
    });
    bool shared = llvm::any_of(accesses, [&](const Access &a) {
      return a.nest != accesses.front().nest;
    });
    if (!written || !shared)
      continue;
    for (const Access &a : accesses) {
      scf::ParallelOp loop = nests[a.nest].loop;
      Operation *def = a.memref.getDefiningOp();
      if (a.memref != accesses.front().memref ||
          (def && loop->isAncestor(def)) || a.indices.size() < rank)
        return false;
      for (size_t d = 0; d < rank; ++d)
        if (a.indices[d] != loop.getInductionVars()[d])
          return false;
    }
  }
  return true;
}

struct ZeroFuseRowNestsPass
    : public zero::impl::ZeroFuseRowNestsPassBase<ZeroFuseRowNestsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      fuseBlock(*block);
  }

private:
  /// What may move above a fused nest: an allocation without operands, an
  /// operation without regions or side effects.
  static bool movable(Operation &op) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op))
      return alloc->getNumOperands() == 0;
    return op.getNumRegions() == 0 && isMemoryEffectFree(&op);
  }

  void fuseBlock(Block &block) {
    SmallVector<RowNest> chain;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (auto loop = dyn_cast<scf::ParallelOp>(op))
        if (std::optional<RowNest> nest = matchRowNest(loop)) {
          chain.push_back(std::move(*nest));
          continue;
        }
      if (movable(op))
        continue;
      fuseChain(chain);
      chain.clear();
    }
    fuseChain(chain);
  }

  /// Groups of `chain` around its row reductions, each fused.
  void fuseChain(MutableArrayRef<RowNest> chain) {
    size_t n = chain.size(), i = 0;
    while (i < n) {
      size_t j = i;
      while (j < n && !chain[j].reduces)
        ++j;
      if (j == n)
        return;
      ArrayRef<Dim> rows = chain[j].dims;
      size_t rank = rows.size();
      int64_t rowCount = product(rows);
      auto fits = [&](const RowNest &nest) {
        if (nest.reduces)
          return sameDims(nest.dims, rows);
        if (nest.dims.size() < rank ||
            !sameDims(ArrayRef<Dim>(nest.dims).take_front(rank), rows))
          return false;
        return rowCount >= kMinRowNestRows ||
               product(ArrayRef<Dim>(nest.dims).drop_front(rank)) <=
                   kMaxFewRowsWork;
      };
      size_t k = j;
      while (k > i && fits(chain[k - 1]))
        --k;
      while (k < j && !rowsIndependent(chain.slice(k, j + 1 - k), rank))
        ++k;
      size_t e = j + 1;
      while (e < n && fits(chain[e]) &&
             rowsIndependent(chain.slice(k, e + 1 - k), rank))
        ++e;
      if (e - k >= 2)
        fuse(chain.slice(k, e - k), rank);
      i = e;
    }
  }

  void fuse(MutableArrayRef<RowNest> nests, size_t rank) {
    Operation *first = nests.front().loop, *last = nests.back().loop;
    DenseSet<Operation *> members;
    for (RowNest &nest : nests)
      members.insert(nest.loop);
    // What lies between the nests goes above them, in order.
    for (Operation *op = first->getNextNode(); op != last;) {
      Operation *next = op->getNextNode();
      if (!members.contains(op))
        op->moveBefore(first);
      op = next;
    }
    OpBuilder b(first);
    Location loc = first->getLoc();
    auto cst = [&](OpBuilder &at, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(at, loc, v);
    };
    ArrayRef<Dim> rows = ArrayRef<Dim>(nests.front().dims).take_front(rank);
    SmallVector<Value> lbs, ubs, steps;
    for (const Dim &d : rows) {
      lbs.push_back(cst(b, d.lb));
      ubs.push_back(cst(b, d.ub));
      steps.push_back(cst(b, d.step));
    }
    scf::ParallelOp::create(
        b, loc, lbs, ubs, steps,
        [&](OpBuilder &body, Location, ValueRange ivs) {
          for (RowNest &nest : nests) {
            ValueRange own = nest.loop.getInductionVars();
            IRMapping map;
            for (size_t d = 0; d < rank; ++d)
              map.map(own[d], ivs[d]);
            auto cloneBody = [&](OpBuilder &at) {
              for (Operation &op : nest.loop.getBody()->without_terminator())
                at.clone(op, map);
            };
            if (nest.reduces) {
              cloneBody(body);
              continue;
            }
            // The rest of its dimensions (one iteration where it has the
            // rows' alone).
            SmallVector<Value> innerLbs, innerUbs, innerSteps;
            for (const Dim &d : ArrayRef<Dim>(nest.dims).drop_front(rank)) {
              innerLbs.push_back(cst(body, d.lb));
              innerUbs.push_back(cst(body, d.ub));
              innerSteps.push_back(cst(body, d.step));
            }
            if (innerLbs.empty()) {
              innerLbs.push_back(cst(body, 0));
              innerUbs.push_back(cst(body, 1));
              innerSteps.push_back(cst(body, 1));
            }
            scf::ParallelOp::create(
                body, loc, innerLbs, innerUbs, innerSteps,
                [&](OpBuilder &inner, Location, ValueRange innerIvs) {
                  for (size_t d = rank; d < own.size(); ++d)
                    map.map(own[d], innerIvs[d - rank]);
                  cloneBody(inner);
                });
          }
        });
    for (RowNest &nest : nests)
      nest.loop.erase();
    numFused += nests.size();
    ++numRowNests;
  }
};

} // namespace

