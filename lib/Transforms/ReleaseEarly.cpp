//===- ReleaseEarly.cpp - Free buffers after their last use ---------------===//
//
// zero-release-early: ownership-based deallocation (upstream) places frees at
// the end of a block; this pass moves each unconditional memref.dealloc to
// right after the buffer's last use in that block. Upstream has no pass that
// shortens buffer lifetimes this way (buffer-hoisting moves allocations, not
// frees).
//
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "zero-release-early"

namespace mlir::zero {
#define GEN_PASS_DEF_ZERORELEASEEARLYPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

/// Values that carry a buffer's address without being a memref (index or
/// pointer casts of it): their users are uses of the buffer too.
bool carriesAddress(Value v) {
  return isa<IndexType, IntegerType, LLVM::LLVMPointerType>(v.getType());
}

struct ZeroReleaseEarlyPass
    : public zero::impl::ZeroReleaseEarlyPassBase<ZeroReleaseEarlyPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](FunctionOpInterface fn) { runOnFunction(fn); });
  }

  void runOnFunction(FunctionOpInterface fn) {
    SmallVector<memref::DeallocOp> deallocs;
    fn.walk([&](memref::DeallocOp op) { deallocs.push_back(op); });
    if (deallocs.empty())
      return;
    BufferViewFlowAnalysis flow(fn);
    // Positions of ops in their blocks, numbered once: comparing positions
    // with isBeforeInBlock after each move would renumber the whole block
    // every time, quadratic in the length of a step function. Moves change
    // no position that a later decision reads (deallocs only move up past
    // ops that are not deallocs' uses), so they are applied at the end.
    llvm::DenseMap<Operation *, unsigned> position;
    llvm::SmallPtrSet<Block *, 8> numbered;
    auto before = [&](Operation *a, Operation *b) {
      Block *block = a->getBlock();
      if (numbered.insert(block).second) {
        unsigned i = 0;
        for (Operation &op : *block)
          position[&op] = i++;
      }
      return position.lookup(a) < position.lookup(b);
    };
    SmallVector<std::pair<memref::DeallocOp, Operation *>> moves;
    for (memref::DeallocOp dealloc : deallocs) {
      Block *block = dealloc->getBlock();
      // Everything that may refer to the freed memory: the values it derives
      // from and every view of those.
      llvm::SmallPtrSet<Value, 16> aliases;
      for (Value root : flow.resolveReverse(dealloc.getMemref()))
        for (Value v : flow.resolve(root))
          aliases.insert(v);
      aliases.insert(dealloc.getMemref());

      Operation *last = nullptr;
      bool movable = true;
      auto noteUse = [&](Operation *user) {
        if (user == dealloc.getOperation())
          return;
        Operation *inBlock = block->findAncestorOpInBlock(*user);
        if (!inBlock) {
          // A use outside this block (e.g. in an enclosing region after it):
          // the dealloc's position is not ours to judge.
          movable = false;
          return;
        }
        if (inBlock == dealloc.getOperation() ||
            before(dealloc.getOperation(), inBlock)) {
          movable = false;
          return;
        }
        if (!last || before(last, inBlock))
          last = inBlock;
      };
      SmallVector<Value> worklist(aliases.begin(), aliases.end());
      llvm::SmallPtrSet<Value, 32> visited(aliases.begin(), aliases.end());
      while (!worklist.empty() && movable) {
        Value v = worklist.pop_back_val();
        if (Operation *def = v.getDefiningOp())
          noteUse(def);
        for (Operation *user : v.getUsers()) {
          noteUse(user);
          for (Value result : user->getResults())
            if (carriesAddress(result) && visited.insert(result).second)
              worklist.push_back(result);
        }
      }
      if (!movable || !last || last->getNextNode() == dealloc.getOperation())
        continue;
      moves.push_back({dealloc, last});
    }
    for (auto [dealloc, last] : moves) {
      LLVM_DEBUG(llvm::dbgs() << "moving " << dealloc << " after " << *last
                              << "\n");
      dealloc->moveAfter(last);
    }
  }
};
} // namespace
