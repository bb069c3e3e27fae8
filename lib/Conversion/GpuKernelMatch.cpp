//===- GpuKernelMatch.cpp - Which loop nests run as which kernels ---------===//
//
// The matchers and kernel-building helpers of GpuKernelMatch.h.
//
//===----------------------------------------------------------------------===//

#include "GpuKernelMatch.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"

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

using namespace mlir;

namespace mlir::zero::gpu_kernels {


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



/// Reductions need this many iterations to be worth a block.
constexpr int64_t kMinBlockReduction = 32;

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

} // namespace mlir::zero::gpu_kernels
