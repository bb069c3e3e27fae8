//===- Offload.cpp - Keep model states on the NVMe tier -------------------===//
//
// zero-offload: the optimizer states (optimizer=nvme) and the stage-3
// parameter shards (params=nvme) of @train_step leave memory. Each such
// argument becomes a !zero.extent, read into a staging tensor before each
// operation that uses it and written back once its new value exists
// (Passes.td has the placement rules; docs/zero-form.md the picture).
//
//===----------------------------------------------------------------------===//

#include "BlockMotion.h"

#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "zero-offload"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROOFFLOADPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {

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

/// Moves the pure `op` up as placeEarly does, its private producers first:
/// the pure ops whose results only `op` reads (a gradient's scaling before
/// its update), each as early as its own inputs allow. A producer that
/// reads nothing (a tensor.empty its result is computed into) lands right
/// before `op` instead, so that its buffer's life does not grow. Collectives
/// stay where they are: their order is zero-schedule's.
void hoistWithProducers(Block &block, Operation *op) {
  SmallVector<Operation *> producers;
  forEachUsedValue(op, [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || !(def = inBlock(block, def)) || def == op || !isPure(def) ||
        isa<shard::ShardDialect>(def->getDialect()) || isCheapToHoist(def) ||
        llvm::is_contained(producers, def))
      return;
    if (llvm::all_of(def->getUsers(), [&](Operation *user) {
          return inBlock(block, user) == op;
        }))
      producers.push_back(def);
  });
  SmallVector<Operation *> sources;
  for (Operation *producer : producers) {
    if (producer->getNumOperands() == 0 && producer->getNumRegions() == 0) {
      // Out of the way while `op` moves, then right before it.
      zero::moveOpBefore(producer, &block.front());
      sources.push_back(producer);
    } else {
      hoistWithProducers(block, producer);
    }
  }
  placeEarly(block, op, nullptr);
  for (Operation *source : sources)
    zero::moveOpBefore(source, op);
}

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

LogicalResult Offloader::collect() {
  StringRef stateName = ZeroDialect::StateAttrHelper::getNameStr();
  StringRef paramName = ZeroDialect::ParamAttrHelper::getNameStr();
  StringRef shardedName = ZeroDialect::ShardedAttrHelper::getNameStr();
  auto stage = func->getAttrOfType<IntegerAttr>(
      ZeroDialect::StageAttrHelper::getNameStr());
  if (params == Placement::Nvme && (!stage || stage.getInt() != 3))
    return func.emitOpError()
           << "params=nvme keeps parameter shards on NVMe, which needs "
              "stage 3; this step is stage "
           << (stage ? std::to_string(stage.getInt()) : std::string("?"))
           << " and holds full parameters (run zero-partition with stage=3)";
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    Type type = func.getArgument(i).getType();
    if (isa<ExtentType>(type))
      return func.emitOpError() << "argument #" << i
                                << " is on the NVMe tier already: run "
                                   "zero-offload once";
    auto state = func.getArgAttrOfType<DictionaryAttr>(i, stateName);
    auto param = func.getArgAttrOfType<StringAttr>(i, paramName);
    Offloaded o;
    o.arg = i;
    if (state && optimizer == Placement::Nvme) {
      o.category = "optimizer_states";
    } else if (param && params == Placement::Nvme) {
      if (!func.getArgAttr(i, shardedName))
        return func.emitOpError()
               << "argument #" << i << " (parameter " << param
               << ") is not a shard (zero.sharded); params=nvme offloads "
                  "the shards of stage 3";
      o.category = "params";
    } else {
      continue;
    }
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() ||
        !tensor.getElementType().isIntOrFloat() ||
        tensor.getElementType().getIntOrFloatBitWidth() % 8 != 0 ||
        4096 % (tensor.getElementType().getIntOrFloatBitWidth() / 8) != 0)
      return func.emitOpError()
             << "argument #" << i << " has type " << type
             << "; the NVMe tier keeps statically shaped tensors of whole-"
                "byte integers or floats";
    o.type = tensor;
    // Its new value is the result with the same role.
    for (unsigned r = 0; r < func.getNumResults(); ++r) {
      bool same =
          state ? func.getResultAttr(r, stateName) == state
                : func.getResultAttr(r, paramName) == param;
      if (same) {
        o.result = static_cast<int>(r);
        break;
      }
    }
    offloaded.push_back(o);
  }
  return success();
}

void Offloader::hoistUpdates() {
  Block &block = func.getBody().front();
  // Updates as early as their inputs allow: an update of an offloaded value
  // right after its gradient is complete (in the backward pass, where
  // zero-schedule left that reduction's wait) rather than where the
  // optimizer came in, so that the transfers around it overlap the rest
  // of the backward pass. Updates are pure: they compute the same values
  // wherever they are.
  for (const Offloaded &o : offloaded) {
    if (o.result < 0)
      continue;
    Operation *def = ret.getOperand(o.result).getDefiningOp();
    if (def && (def = inBlock(block, def)) && isPure(def))
      hoistWithProducers(block, def);
  }
}

void Offloader::collectItems() {
  Block &block = func.getBody().front();
  // The items: every operation of the block that uses an offloaded
  // argument, except the return where it hands the argument back as its
  // own (unchanged) new value.
  DenseMap<Operation *, SmallVector<unsigned>> uses;
  for (const Offloaded &o : offloaded) {
    BlockArgument arg = func.getArgument(o.arg);
    for (OpOperand &use : arg.getUses()) {
      Operation *owner = block.findAncestorOpInBlock(*use.getOwner());
      if (owner == ret && static_cast<int>(use.getOperandNumber()) == o.result)
        continue;
      SmallVector<unsigned> &args = uses[owner];
      if (!llvm::is_contained(args, o.arg))
        args.push_back(o.arg);
    }
  }
  for (Operation &op : block)
    if (auto it = uses.find(&op); it != uses.end()) {
      items.push_back(&op);
      itemArgs.push_back(it->second);
    }
  for (size_t k = 0; k < items.size(); ++k)
    itemIndex[items[k]] = k;
}

LogicalResult Offloader::planWrites() {
  Block &block = func.getBody().front();
  // The writes: after the later of the new value's definition and the last
  // use of the old one, completed before the use after next.
  for (const Offloaded &o : offloaded) {
    if (o.result < 0)
      continue;
    Value v = ret.getOperand(o.result);
    if (v == func.getArgument(o.arg))
      continue;
    if (isa<BlockArgument>(v))
      return func.emitOpError()
             << "returns argument #" << cast<BlockArgument>(v).getArgNumber()
             << " as the new value of argument #" << o.arg
             << "; zero-offload needs each offloaded value's update "
                "computed in the step";
    Write w;
    w.arg = o.arg;
    w.value = v;
    w.after = block.findAncestorOpInBlock(*v.getDefiningOp());
    for (size_t k = 0; k < items.size(); ++k)
      if (items[k] != ret && llvm::is_contained(itemArgs[k], o.arg) &&
          w.after->isBeforeInBlock(items[k]))
        w.after = items[k];
    // The first item after `after`, and the one after it.
    size_t next = 0;
    while (next < items.size() && !w.after->isBeforeInBlock(items[next]))
      ++next;
    w.due = next + 1;
    writes.push_back(w);
  }
  return success();
}

void Offloader::startReads(OpBuilder &b, size_t k) {
  MLIRContext *ctx = func.getContext();
  StringRef categoryName = ZeroDialect::CategoryAttrHelper::getNameStr();
  for (unsigned arg : itemArgs[k]) {
    // A wait keeps what its start read: the start's staged value.
    if (auto wait = dyn_cast<WaitOp>(items[k]))
      if (auto it = itemIndex.find(wait.getToken().getDefiningOp());
          it != itemIndex.end() && reads[it->second].count(arg))
        continue;
    const Offloaded &o = *byArg[arg];
    auto read = ReadStartOp::create(b, func.getArgument(arg).getLoc(),
                                    TypeRange{o.type, TokenType::get(ctx)},
                                    func.getArgument(arg), Value());
    read->setAttr(categoryName, b.getStringAttr(o.category));
    reads[k][arg] = {read.getPending(), read.getToken(), Value()};
    ++numReads;
  }
}

Operation *Offloader::startWrite(OpBuilder &b, size_t i, Operation *anchor) {
  MLIRContext *ctx = func.getContext();
  StringRef categoryName = ZeroDialect::CategoryAttrHelper::getNameStr();
  b.setInsertionPointAfter(anchor);
  auto write = WriteStartOp::create(
      b, writes[i].after->getLoc(), TypeRange{TokenType::get(ctx)},
      writes[i].value, func.getArgument(writes[i].arg));
  write->setAttr(categoryName, b.getStringAttr(byArg[writes[i].arg]->category));
  writeTokens[i] = {write.getToken(), writes[i].value};
  ++numWrites;
  return write;
}

void Offloader::waitWrite(OpBuilder &b, size_t i) {
  WaitOp::create(b, ret.getLoc(), TypeRange{}, writeTokens[i].first, Value(),
                 ValueRange{writeTokens[i].second});
}

void Offloader::waitWrites(OpBuilder &b, size_t due) {
  for (size_t i = 0; i < writes.size(); ++i)
    if (writes[i].due == due && writeTokens[i].first)
      waitWrite(b, i);
}

void Offloader::insertTransfers() {
  OpBuilder b(func.getContext());
  reads.resize(items.size());
  writeTokens.resize(writes.size());
  // The first `readAhead` items' reads start one operation before the
  // first item.
  if (!items.empty()) {
    Operation *first = items.front();
    b.setInsertionPoint(first->getPrevNode() ? first->getPrevNode() : first);
    for (size_t k = 0; k < std::min<size_t>(readAhead, items.size()); ++k)
      startReads(b, k);
  }
  for (size_t k = 0; k < items.size(); ++k) {
    Operation *item = items[k];
    b.setInsertionPoint(item);
    for (auto &[arg, read] : reads[k]) {
      read.value = WaitOp::create(b, item->getLoc(), read.pending.getType(),
                                  read.token, read.pending, ValueRange{})
                       .getResult();
    }
    waitWrites(b, k);
    // The item reads the staged values (a wait's keep: its start's).
    for (unsigned arg : itemArgs[k]) {
      Value staged;
      if (auto it = reads[k].find(arg); it != reads[k].end()) {
        staged = it->second.value;
      } else {
        auto wait = cast<WaitOp>(item);
        staged = reads[itemIndex[wait.getToken().getDefiningOp()]][arg].value;
      }
      func.getArgument(arg).replaceUsesWithIf(staged, [&](OpOperand &use) {
        return item->isAncestor(use.getOwner()) &&
               !(use.getOwner() == ret &&
                 static_cast<int>(use.getOperandNumber()) ==
                     byArg[arg]->result);
      });
    }
    // Writes that follow this item, then the reads `readAhead` items on.
    Operation *last = item;
    for (size_t i = 0; i < writes.size(); ++i)
      if (writes[i].after == item)
        last = startWrite(b, i, last);
    if (k + readAhead < items.size()) {
      b.setInsertionPointAfter(last);
      startReads(b, k + readAhead);
    }
  }
  // Writes after operations that are no item; a wait due before an item
  // the sweep has passed goes there now.
  for (size_t i = 0; i < writes.size(); ++i)
    if (!writeTokens[i].first) {
      startWrite(b, i, writes[i].after);
      if (writes[i].due < items.size()) {
        b.setInsertionPoint(items[writes[i].due]);
        waitWrite(b, i);
        writes[i].due = SIZE_MAX;
      }
    }
  // The rest complete before the return.
  b.setInsertionPoint(ret);
  for (size_t i = 0; i < writes.size(); ++i)
    if (writes[i].due != SIZE_MAX && writes[i].due >= items.size())
      waitWrite(b, i);
}

LogicalResult Offloader::run() {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("zero-offload needs a function of one block");
  if (failed(collect()))
    return failure();
  if (offloaded.empty())
    return success();
  Block &block = func.getBody().front();
  ret = cast<func::ReturnOp>(block.getTerminator());

  hoistUpdates();
  collectItems();
  if (failed(planWrites()))
    return failure();

  // Arguments become extents.
  MLIRContext *ctx = func.getContext();
  for (const Offloaded &o : offloaded) {
    func.getArgument(o.arg).setType(ExtentType::get(ctx, o.type));
    byArg[o.arg] = &o;
  }
  numOffloaded = offloaded.size();

  insertTransfers();

  // The new values leave the results.
  llvm::BitVector gone(func.getNumResults());
  for (const Offloaded &o : offloaded)
    if (o.result >= 0)
      gone.set(o.result);
  ret->eraseOperands(gone);
  if (failed(func.eraseResults(gone)))
    return func.emitOpError("could not drop the offloaded results");
  func.setType(FunctionType::get(ctx, block.getArgumentTypes(),
                                 func.getResultTypes()));
  return success();
}

//===----------------------------------------------------------------------===//
// optimizer=host: the states in host memory, their updates run there
//===----------------------------------------------------------------------===//

/// Whether `v` is a parameter argument, or a view of one (a stage 0-2
/// update's slice of its parameter).
bool isParameterView(func::FuncOp func, Value v) {
  StringRef paramName = ZeroDialect::ParamAttrHelper::getNameStr();
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tensor::ExtractSliceOp, tensor::CollapseShapeOp,
             tensor::ExpandShapeOp>(def))
      return false;
    v = def->getOperand(0);
  }
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner()->isEntryBlock() &&
         arg.getOwner()->getParentOp() == func &&
         func.getArgAttr(arg.getArgNumber(), paramName);
}

/// The NVMe read whose staged value `v` is, when `user` is all that reads
/// that value (zero-offload's params=nvme reads a shard for each use).
ReadStartOp stagedReadFor(Value v, Operation *user) {
  auto wait = v.getDefiningOp<WaitOp>();
  if (!wait || wait.getResult() != v)
    return {};
  auto read = wait.getToken().getDefiningOp<ReadStartOp>();
  if (!read || !llvm::all_of(v.getUsers(), [&](Operation *u) {
        return u == user;
      }))
    return {};
  return read;
}

/// An update that overwrites its parameter without reading it (bf16
/// parameters rounded from the f32 master weights) computes into a fresh
/// tensor instead: the old parameter then needs no copy to the host
/// (optimizer=host) and no read from the NVMe tier (params=nvme). Updates
/// are the linalg operations on tensors that read an optimizer state; the
/// operation is marked with the parameters' category, which the fresh
/// buffer takes when it is bufferized.
void computeUnreadParametersFresh(func::FuncOp func) {
  StringRef stateName = ZeroDialect::StateAttrHelper::getNameStr();
  if (!func.getBody().hasOneBlock())
    return;
  Block &block = func.getBody().front();
  OpBuilder b(func.getContext());
  for (Operation &op : block) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
        op.getNumRegions() != 1)
      continue;
    bool readsState = llvm::any_of(op.getOperands(), [&](Value v) {
      auto arg = dyn_cast<BlockArgument>(v);
      return arg && arg.getOwner() == &block &&
             func.getArgAttr(arg.getArgNumber(), stateName);
    });
    if (!readsState)
      continue;
    for (OpOperand &init : linalgOp.getDpsInitsMutable()) {
      Value v = init.get();
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || !type.hasStaticShape() || !isParameterView(func, v) ||
          linalgOp.payloadUsesValueFromOperand(&init))
        continue;
      b.setInsertionPoint(&op);
      init.set(tensor::EmptyOp::create(b, op.getLoc(), type.getShape(),
                                       type.getElementType()));
      op.setAttr(ZeroDialect::CategoryAttrHelper::getNameStr(),
                 b.getStringAttr("params"));
      // A view only this init took goes with it.
      while (Operation *def = v.getDefiningOp()) {
        if (!def->use_empty() || !isPure(def))
          break;
        Value source = def->getOperand(0);
        def->erase();
        v = source;
      }
    }
  }
}

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

Value HostOffloader::toHost(Value v, Operation *user, StringRef category,
                            bool exclusive) {
  if (!exclusive)
    if (Value copy = hostCopies.lookup(v))
      return copy;
  MLIRContext *ctx = func.getContext();
  Block &block = func.getBody().front();
  OpBuilder b(ctx);
  if (Operation *def = v.getDefiningOp())
    b.setInsertionPointAfter(block.findAncestorOpInBlock(*def));
  else
    b.setInsertionPointToStart(&block);
  auto copy = CopyStartOp::create(b, v.getLoc(),
                                  TypeRange{v.getType(), TokenType::get(ctx)},
                                  v, Value());
  copy->setAttr(ZeroDialect::SpaceAttrHelper::getNameStr(),
                b.getStringAttr("host"));
  copy->setAttr(ZeroDialect::CategoryAttrHelper::getNameStr(),
                b.getStringAttr(category));
  b.setInsertionPoint(user);
  Value waited = WaitOp::create(b, user->getLoc(), v.getType(),
                                copy.getToken(), copy.getPending(),
                                ValueRange{v})
                     .getResult();
  ++numCopies;
  if (!exclusive)
    hostCopies[v] = waited;
  onHost.insert(waited);
  if (v.getDefiningOp())
    computedCopies.push_back(copy);
  return waited;
}

LogicalResult HostOffloader::findStates() {
  StringRef stateName = ZeroDialect::StateAttrHelper::getNameStr();
  StringRef spaceName = ZeroDialect::SpaceAttrHelper::getNameStr();
  // The states: host memory, as arguments and as results.
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (!func.getArgAttr(i, stateName))
      continue;
    Type type = func.getArgument(i).getType();
    if (isa<ExtentType>(type))
      return func.emitOpError() << "argument #" << i
                                << " is on the NVMe tier already: run "
                                   "zero-offload once";
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() ||
        !tensor.getElementType().isIntOrFloat() ||
        tensor.getElementType().getIntOrFloatBitWidth() % 8 != 0)
      return func.emitOpError()
             << "argument #" << i << " has type " << type
             << "; optimizer=host keeps statically shaped tensors of "
                "whole-byte integers or floats in host memory";
    if (func.getArgAttr(i, spaceName))
      return func.emitOpError() << "argument #" << i
                                << " is in host memory already: run "
                                   "zero-offload once";
    states.push_back(i);
  }
  return success();
}

LogicalResult HostOffloader::placeStatesOnHost() {
  StringRef stateName = ZeroDialect::StateAttrHelper::getNameStr();
  StringRef spaceName = ZeroDialect::SpaceAttrHelper::getNameStr();
  Block &block = func.getBody().front();
  StringAttr host = StringAttr::get(func.getContext(), "host");
  for (unsigned i : states) {
    BlockArgument arg = func.getArgument(i);
    func.setArgAttr(i, spaceName, host);
    onHost.insert(arg);
    for (OpOperand &use : arg.getUses()) {
      Operation *owner = block.findAncestorOpInBlock(*use.getOwner());
      if (owner == ret)
        continue;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(owner);
      if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
          owner->getNumRegions() != 1 || owner != use.getOwner())
        return owner->emitOpError()
               << "reads optimizer state argument #" << i
               << ", and optimizer=host runs what reads a state on the "
                  "host: only linalg operations on tensors (the "
                  "optimizer's updates) can run there";
      hostOps.insert(owner);
    }
  }
  for (unsigned r = 0; r < func.getNumResults(); ++r)
    if (func.getResultAttr(r, stateName))
      func.setResultAttr(r, spaceName, host);
  numOffloaded = states.size();
  return success();
}

void HostOffloader::runOnHost(Operation &op) {
  StringRef spaceName = ZeroDialect::SpaceAttrHelper::getNameStr();
  StringAttr host = StringAttr::get(func.getContext(), "host");
  auto linalgOp = cast<linalg::LinalgOp>(op);
  for (OpOperand &operand : op.getOpOperands()) {
    Value v = operand.get();
    if (!isa<RankedTensorType>(v.getType()) || onHost.contains(v))
      continue;
    // An init without contents (an update that computes its parameter
    // fresh) needs no copy: bufferization allocates it, in host memory
    // when only host operations use it.
    if (v.getDefiningOp<tensor::EmptyOp>() && linalgOp.isDpsInit(&operand) &&
        v.hasOneUse())
      continue;
    // A parameter shard read from the NVMe tier for this update alone
    // (params=nvme) is read into host memory: no copy.
    if (ReadStartOp read = stagedReadFor(v, &op)) {
      read->setAttr(spaceName, host);
      onHost.insert(v);
      continue;
    }
    StringRef category = isParameterView(func, v)       ? "params"
                         : linalgOp.isDpsInit(&operand) ? "activations"
                                                        : "grads";
    // A destination the update overwrites gets a copy of its own: a
    // shared one would make bufferization copy it again, into memory
    // the host cannot reach on a device.
    operand.set(toHost(v, &op, category,
                       /*exclusive=*/linalgOp.isDpsInit(&operand)));
  }
  op.setAttr(spaceName, host);
  ++numHostOps;
  for (OpResult result : op.getResults())
    copyBack(op, result);
  hostOrder.push_back(&op);
}

void HostOffloader::copyBack(Operation &op, OpResult result) {
  StringRef spaceName = ZeroDialect::SpaceAttrHelper::getNameStr();
  StringRef paramName = ZeroDialect::ParamAttrHelper::getNameStr();
  StringAttr host = StringAttr::get(func.getContext(), "host");
  MLIRContext *ctx = func.getContext();
  Block &block = func.getBody().front();
  OpBuilder b(ctx);
  onHost.insert(result);
  SmallVector<OpOperand *> deviceUses;
  Operation *first = nullptr;
  for (OpOperand &use : result.getUses()) {
    Operation *owner = block.findAncestorOpInBlock(*use.getOwner());
    if (hostOps.contains(owner))
      continue;
    if (owner == ret && func.getResultAttr(use.getOperandNumber(), spaceName))
      continue;
    // Written to the NVMe tier (params=nvme) from host memory, and
    // kept until that write completes.
    if (auto write = dyn_cast<WriteStartOp>(use.getOwner());
        write && use.get() == write.getInput()) {
      write->setAttr(spaceName, host);
      continue;
    }
    if (auto wait = dyn_cast<WaitOp>(use.getOwner());
        wait && isa_and_nonnull<WriteStartOp>(wait.getToken().getDefiningOp()))
      continue;
    deviceUses.push_back(&use);
    if (!first || owner->isBeforeInBlock(first))
      first = owner;
  }
  if (deviceUses.empty())
    return;
  b.setInsertionPointAfter(&op);
  auto copy = CopyStartOp::create(
      b, op.getLoc(), TypeRange{result.getType(), TokenType::get(ctx)}, result,
      Value());
  copy->setAttr(spaceName, b.getStringAttr("device"));
  copy->setAttr(ZeroDialect::CategoryAttrHelper::getNameStr(),
                b.getStringAttr("params"));
  b.setInsertionPoint(first);
  Value back = WaitOp::create(b, op.getLoc(), result.getType(), copy.getToken(),
                              copy.getPending(), ValueRange{result})
                   .getResult();
  ++numCopies;
  for (OpOperand *use : deviceUses)
    use->set(back);
  // Returned as a parameter's new value (stage 0): stored into that
  // parameter's argument, so that bufferization updates the argument's
  // buffer in place rather than return another one.
  for (OpOperand *use : deviceUses) {
    if (use->getOwner() != ret || first != ret)
      continue;
    auto name = func.getResultAttrOfType<StringAttr>(use->getOperandNumber(),
                                                     paramName);
    if (!name)
      continue;
    for (BlockArgument arg : func.getArguments())
      if (func.getArgAttr(arg.getArgNumber(), paramName) == name &&
          arg.getType() == back.getType()) {
        b.setInsertionPoint(ret);
        auto store = bufferization::MaterializeInDestinationOp::create(
            b, op.getLoc(), back.getType(), back, arg);
        use->set(store.getResult());
        first = store;
        break;
      }
    break;
  }
  if (auto store = dyn_cast<bufferization::MaterializeInDestinationOp>(first))
    stores.push_back({hostOrder.size(), back.getDefiningOp(), store});
}

LogicalResult HostOffloader::checkNewStatesOnHost() {
  StringRef stateName = ZeroDialect::StateAttrHelper::getNameStr();
  // Every new state comes out of a host operation (or is the state
  // itself): the driver keeps the results in host memory.
  for (unsigned r = 0; r < func.getNumResults(); ++r) {
    if (!func.getResultAttr(r, stateName))
      continue;
    Value v = ret.getOperand(r);
    if (onHost.contains(v))
      continue;
    Operation *def = v.getDefiningOp();
    return (def ? def->emitOpError() : func.emitOpError())
           << "computes the new value of optimizer state result #" << r
           << " on the device; optimizer=host needs every state's new "
              "value computed on the host, by an operation that reads a "
              "state";
  }
  return success();
}

SmallVector<HostOffloader::Reduced> HostOffloader::findReducedCopies() {
  SmallVector<Reduced> reduced;
  for (CopyStartOp copy : computedCopies) {
    Reduced r;
    r.copy = copy;
    Value x = copy.getInput();
    Operation *user = copy;
    bool ok = true;
    while (Operation *def = x.getDefiningOp()) {
      if (auto wait = dyn_cast<WaitOp>(def)) {
        r.wait = wait;
        break;
      }
      // Pure, one result that only the chain (and the copy's wait, which
      // keeps it) reads, and one tensor operand to follow.
      SmallVector<Value> tensors;
      for (Value operand : def->getOperands())
        if (isa<RankedTensorType>(operand.getType()))
          tensors.push_back(operand);
      if (!isPure(def) || def->getNumResults() != 1 || tensors.size() != 1 ||
          isa<shard::ShardDialect>(def->getDialect()) ||
          llvm::any_of(def->getUsers(), [&](Operation *u) {
            return u != user && !(isa<WaitOp>(u) && u == *copy.getToken()
                                                            .getUsers()
                                                            .begin());
          })) {
        ok = false;
        break;
      }
      r.chain.push_back(def);
      user = def;
      x = tensors.front();
    }
    Operation *copyWait = *copy.getToken().getUsers().begin();
    if (!ok || !r.wait || !r.wait.getResult() ||
        llvm::any_of(r.wait.getResult().getUsers(), [&](Operation *u) {
          return u != user && u != copyWait;
        }))
      continue;
    r.start = r.wait.getToken().getDefiningOp();
    if (!isa_and_nonnull<AllReduceStartOp, ReduceScatterStartOp>(r.start))
      continue;
    std::reverse(r.chain.begin(), r.chain.end());
    reduced.push_back(std::move(r));
  }
  llvm::sort(reduced, [](const Reduced &a, const Reduced &b) {
    return a.start->isBeforeInBlock(b.start);
  });
  return reduced;
}

void HostOffloader::hoistReducedCopies() {
  Block &block = func.getBody().front();
  // A gradient whose reduction zero-schedule waits for where the update
  // needs it (after the backward pass, where zero-partition put the
  // optimizer) would stay on the device until then. Its wait, the pure ops
  // only the copy reads (the 1/N scaling, a reshape) and the copy move up
  // to right after the next copied gradient's reduction starts, so that it
  // leaves during the backward pass.
  SmallVector<Reduced> reduced = findReducedCopies();
  for (size_t i = 0; i < reduced.size(); ++i) {
    Reduced &r = reduced[i];
    // Where zero-schedule waits before the next reduction starts (or for
    // the last one), the wait stays and the rest follows it.
    Operation *at = i + 1 < reduced.size() ? reduced[i + 1].start : r.wait;
    if (!at->isBeforeInBlock(r.wait))
      at = r.wait;
    // Everything the chain reads from outside must exist there already.
    DenseSet<Operation *> moving(r.chain.begin(), r.chain.end());
    moving.insert(r.wait);
    bool dominated = true;
    for (Operation *op : r.chain)
      forEachUsedValue(op, [&](Value v) {
        Operation *def = v.getDefiningOp();
        if (def && (def = inBlock(block, def)) && !moving.contains(def) &&
            !def->isBeforeInBlock(at) && def != at)
          dominated = false;
      });
    if (!dominated)
      continue;
    if (at != r.wait.getOperation())
      zero::moveOpAfter(r.wait, at);
    Operation *last = r.wait;
    for (Operation *op : r.chain) {
      zero::moveOpAfter(op, last);
      last = op;
    }
    zero::moveOpAfter(r.copy, last);
  }
}

void HostOffloader::completeCopiesEarly() {
  // A computed value's copy completes once the next one has started
  // (a gradient's, once the next gradient is out), not right before its
  // update: its device buffer is then freed during the backward pass, and
  // the device has the next gradient's work queued while the copy runs.
  llvm::sort(computedCopies, [](CopyStartOp a, CopyStartOp b) {
    return a->isBeforeInBlock(b);
  });
  for (size_t i = 0; i + 1 < computedCopies.size(); ++i) {
    Operation *wait = *computedCopies[i].getToken().getUsers().begin();
    Operation *next = computedCopies[i + 1];
    if (next->isBeforeInBlock(wait))
      zero::moveOpAfter(wait, next);
  }
}

void HostOffloader::storeParametersEarly() {
  Block &block = func.getBody().front();
  // A new parameter that only goes into its argument's buffer (stage 0,
  // where zero-partition writes every parameter back at the end) is
  // written there two updates later rather than at the end: the device
  // then holds two new parameters at a time, not all of them, while each
  // copy still has the next update's time to complete.
  for (Store &st : stores) {
    if (st.hostIndex + 2 >= hostOrder.size())
      continue;
    Operation *at = hostOrder[st.hostIndex + 2];
    // Its first input wait, if any, so the store goes before the waits.
    while (Operation *prev = at->getPrevNode())
      if (isa<WaitOp>(prev) && prev != st.wait)
        at = prev;
      else
        break;
    auto dest = dyn_cast<BlockArgument>(st.store.getDest());
    if (!dest || dest.getOwner() != &block || !at->isBeforeInBlock(st.wait) ||
        !st.store->hasOneUse() || *st.store->user_begin() != ret)
      continue;
    // Nothing after the new place may read the argument's old value,
    // directly or through a view of it (a slice, a reshape).
    SmallVector<Value> views{dest};
    bool readLater = false;
    while (!views.empty() && !readLater) {
      Value v = views.pop_back_val();
      for (Operation *user : v.getUsers()) {
        Operation *owner = block.findAncestorOpInBlock(*user);
        if (owner == st.store || owner == ret)
          continue;
        if (isa<tensor::ExtractSliceOp, tensor::CollapseShapeOp,
                tensor::ExpandShapeOp, tensor::ReshapeOp>(user))
          views.append(user->result_begin(), user->result_end());
        if (!owner->isBeforeInBlock(at))
          readLater = true;
      }
    }
    if (readLater)
      continue;
    zero::moveOpBefore(st.wait, at);
    zero::moveOpBefore(st.store, at);
  }
}

LogicalResult HostOffloader::run() {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("zero-offload needs a function of one block");
  Block &block = func.getBody().front();
  ret = cast<func::ReturnOp>(block.getTerminator());

  if (failed(findStates()))
    return failure();
  if (states.empty())
    return success();
  if (failed(placeStatesOnHost()))
    return failure();

  // In block order: every tensor operand from the device is copied to the
  // host; every result the device reads is copied back.
  for (Operation &op : llvm::make_early_inc_range(block))
    if (hostOps.contains(&op))
      runOnHost(op);

  if (failed(checkNewStatesOnHost()))
    return failure();

  hoistReducedCopies();
  completeCopiesEarly();
  storeParametersEarly();
  return success();
}

struct ZeroOffloadPass
    : public zero::impl::ZeroOffloadPassBase<ZeroOffloadPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (readAhead < 1) {
      module.emitError("zero-offload read-ahead=0: a use's read must start "
                       "before it (read-ahead is at least 1)");
      return signalPassFailure();
    }
    if (optimizer == Placement::Device && params == Placement::Device)
      return;
    SmallVector<func::FuncOp> steps;
    module.walk([&](func::FuncOp f) {
      auto role =
          f->getAttrOfType<StringAttr>(ZeroDialect::RoleAttrHelper::getNameStr());
      if (role && role.getValue() == "train_step")
        steps.push_back(f);
    });
    if (steps.empty()) {
      module.emitError("zero-offload works on the ZeRO form's @train_step "
                       "(zero.role = \"train_step\"): run zero-partition "
                       "first");
      return signalPassFailure();
    }
    for (func::FuncOp f : steps) {
      computeUnreadParametersFresh(f);
      // The NVMe tier first: with optimizer=host and params=nvme the
      // shards' transfers are placed as without the host, and the host
      // then takes the updates, their reads and writes included.
      if (optimizer == Placement::Nvme || params == Placement::Nvme) {
        Offloader offloader(f,
                            optimizer == Placement::Nvme ? Placement::Nvme
                                                         : Placement::Device,
                            params, readAhead);
        if (failed(offloader.run()))
          return signalPassFailure();
        numOffloaded += offloader.numOffloaded;
        numReads += offloader.numReads;
        numWrites += offloader.numWrites;
      }
      if (optimizer == Placement::Host) {
        HostOffloader offloader(f);
        if (failed(offloader.run()))
          return signalPassFailure();
        numOffloaded += offloader.numOffloaded;
        numHostOps += offloader.numHostOps;
        numCopies += offloader.numCopies;
      }
    }
  }
};

} // namespace
