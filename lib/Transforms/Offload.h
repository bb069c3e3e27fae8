//===- Offload.h - zero-offload's two placements ----------------*- C++ -*-===//
//
// What zero-offload's pass (Offload.cpp) runs: the NVMe tier's reads and
// writes (Offloader, NvmeOffload.cpp) and the host's updates and copies
// (HostOffloader, HostOffload.cpp). Internal to lib/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_TRANSFORMS_OFFLOAD_H
#define ZERO_LIB_TRANSFORMS_OFFLOAD_H

#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::zero::offload {

/// One argument that moves to the NVMe tier.
struct Offloaded {
  unsigned arg;
  int result = -1; ///< the result that returned its new value, or -1
  StringRef category;
  RankedTensorType type;
};

/// A write of an offloaded argument's new value: after `after` (null: at
/// the start of the block), completed before item `due` (or before the
/// return when `due` is past the last item).
struct Write {
  unsigned arg;
  Value value;
  Operation *after = nullptr;
  size_t due = 0;
};

/// A started read of an offloaded argument, and its staged value once
/// waited for.
struct Read {
  Value pending, token, value;
};

/// optimizer=nvme, params=nvme: the arguments that move to the NVMe tier,
/// read into a staging tensor before each operation that uses them and
/// written back once their new value exists.
class Offloader {
public:
  Offloader(func::FuncOp func, Placement optimizer, Placement params,
            unsigned readAhead)
      : func(func), optimizer(optimizer), params(params),
        readAhead(readAhead) {}

  LogicalResult run();
  unsigned numOffloaded = 0, numReads = 0, numWrites = 0;

private:
  LogicalResult collect();
  void hoistUpdates();
  void collectItems();
  LogicalResult planWrites();
  /// The reads before each item and the writes after it, swept in block
  /// order.
  void insertTransfers();
  /// Starts the reads of item `k`'s arguments at `b`'s insertion point.
  void startReads(OpBuilder &b, size_t k);
  /// Starts write `i` right after `anchor` (its `after`, or a write started
  /// after that); returns the start.
  Operation *startWrite(OpBuilder &b, size_t i, Operation *anchor);
  void waitWrite(OpBuilder &b, size_t i);
  /// Waits for the started writes due before item `due`.
  void waitWrites(OpBuilder &b, size_t due);

  func::FuncOp func;
  Placement optimizer, params;
  unsigned readAhead;
  SmallVector<Offloaded> offloaded;
  func::ReturnOp ret;
  /// Operations of the entry block that use offloaded arguments, in order,
  /// and which arguments each reads.
  SmallVector<Operation *> items;
  SmallVector<SmallVector<unsigned>> itemArgs;
  DenseMap<Operation *, size_t> itemIndex;
  SmallVector<Write> writes;
  DenseMap<unsigned, const Offloaded *> byArg;
  /// Staged reads: per item, the started read of each argument it reads.
  SmallVector<llvm::MapVector<unsigned, Read>> reads;
  /// Per write, its token and the value it keeps until its wait.
  SmallVector<std::pair<Value, Value>> writeTokens;
};

/// optimizer=host: the states in host memory, the operations that update
/// them run there, with their operands copied over and their results back.
class HostOffloader {
public:
  explicit HostOffloader(func::FuncOp func) : func(func) {}
  LogicalResult run();
  unsigned numOffloaded = 0, numHostOps = 0, numCopies = 0;

private:
  /// The host copy of `v` for `user`: started right after `v` exists,
  /// waited for right before the first host operation that reads it;
  /// shared by the host operations that only read `v` unless `exclusive`
  /// (a destination the user overwrites).
  Value toHost(Value v, Operation *user, StringRef category, bool exclusive);

  /// The optimizer-state arguments, checked.
  LogicalResult findStates();
  /// Marks the states as host memory and collects the operations that read
  /// them, which run on the host.
  LogicalResult placeStatesOnHost();
  /// Runs the host operation `op` on the host: its device operands copied
  /// over, its results copied back where the device reads them.
  void runOnHost(Operation &op);
  void copyBack(Operation &op, OpResult result);
  LogicalResult checkNewStatesOnHost();

  /// A copied gradient that a reduction's wait (and pure ops after it)
  /// produce.
  struct Reduced {
    Operation *start;
    WaitOp wait;
    /// From the wait's user to the copy's input.
    SmallVector<Operation *> chain;
    CopyStartOp copy;
  };
  /// The copied gradients whose chain back to their reduction's wait can
  /// move, in the order their reductions start.
  SmallVector<Reduced> findReducedCopies();
  void hoistReducedCopies();
  void completeCopiesEarly();
  void storeParametersEarly();

  func::FuncOp func;
  func::ReturnOp ret;
  SmallVector<unsigned> states;
  /// The operations that read a state, which run on the host.
  DenseSet<Operation *> hostOps;
  DenseSet<Value> onHost;
  DenseMap<Value, Value> hostCopies;
  /// The host operations in block order.
  SmallVector<Operation *> hostOrder;
  /// The copies to the host of values the step computes (gradients).
  SmallVector<CopyStartOp> computedCopies;
  /// A new value's copy back whose first device use stores it into an
  /// argument's buffer: the host operation's index, the wait, the store.
  struct Store {
    size_t hostIndex;
    Operation *wait;
    bufferization::MaterializeInDestinationOp store;
  };
  SmallVector<Store> stores;
};

/// An update that overwrites its parameter without reading it (bf16
/// parameters rounded from the f32 master weights) computes into a fresh
/// tensor instead: the old parameter then needs no copy to the host
/// (optimizer=host) and no read from the NVMe tier (params=nvme). Updates
/// are the linalg operations on tensors that read an optimizer state; the
/// operation is marked with the parameters' category, which the fresh
/// buffer takes when it is bufferized.
void computeUnreadParametersFresh(func::FuncOp func);

} // namespace mlir::zero::offload

#endif // ZERO_LIB_TRANSFORMS_OFFLOAD_H
