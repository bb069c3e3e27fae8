//===- FuseRowNests.cpp - A row's steps as one nest ------------------------===//
//
// zero-fuse-row-nests: consecutive parallel nests over the same rows (a
// softmax's or a LayerNorm's steps) become one nest whose body runs the
// steps one after another, which zero-gpu-kernels turns into one kernel a
// row (Passes.td has the rules).
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
#define GEN_PASS_DEF_ZEROFUSEROWNESTSPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero::gpu_kernels;

namespace {

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
