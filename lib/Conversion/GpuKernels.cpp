//===- GpuKernels.cpp - Loop nests to GPU launches (target=cuda) -----------===//
//
// zero-gpu-kernels: every loop nest of a lowered step becomes a gpu.launch,
// and host code stops touching device memory. The mapping itself is
// upstream's (collapseParallelLoops, tileParallelLoop, the
// scf.parallel-to-gpu.launch patterns); what upstream has no pass for is
// deciding which code is a kernel (GpuKernelMatch.h), the reductions'
// kernels, and what the host may not do with device buffers.
//
//===----------------------------------------------------------------------===//

#include "GpuKernelMatch.h"
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
#define GEN_PASS_DEF_ZEROGPUKERNELSPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero::gpu_kernels;

namespace {

/// A gpu.launch of `blocks` blocks of `threads` threads (both along x),
/// with `b` inside it, before its terminator.
gpu::LaunchOp openLaunch(OpBuilder &b, Location loc, int64_t blocks,
                         int64_t threads) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value gridX = arith::ConstantIndexOp::create(b, loc, blocks);
  Value blockX = arith::ConstantIndexOp::create(b, loc, threads);
  auto launch =
      gpu::LaunchOp::create(b, loc, gridX, one, one, blockX, one, one);
  b.setInsertionPointToEnd(&launch.getBody().front());
  b.setInsertionPoint(gpu::TerminatorOp::create(b, loc));
  return launch;
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
    SmallVector<Dim> rowDims;
    if (r.rows)
      rowDims = *parallelDims(r.rows);
    SmallVector<Dim> dims = dimsOf(r.nest);
    int64_t iterations = product(dims);
    int64_t limit = r.rows ? static_cast<int64_t>(blockSize)
                           : kScalarReductionThreads;
    int64_t threads = std::min<int64_t>(limit, llvm::alignTo(iterations, 32));
    gpu::LaunchOp launch = openLaunch(b, loc, product(rowDims), threads);
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
    gpu::LaunchOp launch = openLaunch(b, loc, product(k.rowDims), threads);
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

  /// Parallel nests: one dimension, tiles of blockSize, tiles to blocks and
  /// elements to threads.
  LogicalResult launchParallelNests(func::FuncOp fn,
                                    ArrayRef<scf::ParallelOp> parallel) {
    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);
    auto identity = AffineMap::getMultiDimIdentityMap(1, ctx);
    auto mapTo = [&](gpu::Processor p) {
      return gpu::ParallelLoopDimMappingAttr::get(ctx, p, identity, identity);
    };
    for (scf::ParallelOp loop : parallel) {
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
    if (!parallel.empty()) {
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
    return success();
  }

  /// Correctly rounded square roots, as on the CPU: convert-gpu-to-nvvm
  /// sends math.sqrt (and LLVM's sqrt intrinsic) to libdevice's
  /// __nv_sqrtf, which is sqrt.approx unless the module sets
  /// __CUDA_PREC_SQRT, which MLIR's NVVM target has no flag for. NVVM's
  /// own round-to-nearest intrinsic is sqrt.rn.
  /// math.rsqrt is 1 / sqrt, as the CPU's math-to-llvm computes it (not
  /// libdevice's rsqrt.approx).
  static void roundSquareRoots(func::FuncOp fn) {
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
          Value one =
              arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
          root = arith::DivFOp::create(b, loc, one, root);
        }
        op->getResult(0).replaceAllUsesWith(root);
        op->erase();
      });
    });
  }

  /// Scalars the host needs: copied into a stack slot after the work
  /// queued before them.
  LogicalResult copyReadsToHost(ModuleOp module, func::FuncOp fn,
                                ArrayRef<memref::LoadOp> reads) {
    MLIRContext *ctx = &getContext();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i64 = IntegerType::get(ctx, 64);
    FailureOr<func::FuncOp> copy = zero::getOrDeclareRuntimeFunc(
        module, kCopyToHostFn, FunctionType::get(ctx, {ptr, ptr, i64}, {}));
    if (failed(copy))
      return failure();
    OpBuilder entry = OpBuilder::atBlockBegin(&fn.getBody().front());
    for (memref::LoadOp load : reads) {
      Location loc = load.getLoc();
      Type element = load.getType();
      if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8)
        return load.emitOpError()
               << "reads a " << element
               << " from device memory in host code; the cuda target "
                  "copies only whole-byte scalars to the host";
      auto slot =
          memref::AllocaOp::create(entry, loc, MemRefType::get({}, element));
      OpBuilder b(load);
      Value source = load.getMemRef();
      int64_t rank = load.getMemRefType().getRank();
      if (rank > 0) {
        SmallVector<OpFoldResult> offsets(load.getIndices().begin(),
                                          load.getIndices().end());
        SmallVector<OpFoldResult> ones(rank, b.getIndexAttr(1));
        source = memref::SubViewOp::create(b, loc, source, offsets, ones, ones);
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
    return success();
  }

  LogicalResult convertFunction(ModuleOp module, func::FuncOp fn) {
    Work work;
    if (failed(collect(fn.getBody().front(), work)))
      return failure();
    for (Block &block : llvm::drop_begin(fn.getBody()))
      if (failed(collect(block, work)))
        return failure();

    // Reductions over outer loops: the parallel nest outside, each thread
    // adding its column's rows in the loop's order.
    for (ColumnReduction &columns : work.columns) {
      work.parallel.push_back(interchange(columns));
      ++numInterchanged;
    }

    if (failed(launchParallelNests(fn, work.parallel)))
      return failure();

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

    roundSquareRoots(fn);

    if (!work.reads.empty() && failed(copyReadsToHost(module, fn, work.reads)))
      return failure();
    return success();
  }
};

} // namespace
