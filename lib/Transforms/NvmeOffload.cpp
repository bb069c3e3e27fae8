//===- NvmeOffload.cpp - Model states on the NVMe tier --------------------===//
//
// zero-offload's optimizer=nvme and params=nvme: each such argument of
// @train_step becomes a !zero.extent, read into a staging tensor before
// each operation that uses it and written back once its new value exists
// (Passes.td has the placement rules; docs/zero-form.md the picture).
//
//===----------------------------------------------------------------------===//

#include "Offload.h"

#include "BlockMotion.h"


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

using namespace mlir;
using namespace mlir::zero;
using namespace mlir::zero::offload;

namespace {

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

} // namespace

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
  unsigned wholeParams = 0;
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
      // A whole parameter at stage 3 is persistent (zero-partition's
      // param-persistence-threshold): it stays in the step's memory.
      if (!func.getArgAttr(i, shardedName)) {
        ++wholeParams;
        continue;
      }
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
  if (params == Placement::Nvme && wholeParams &&
      llvm::none_of(offloaded,
                    [](const Offloaded &o) { return o.category == "params"; }))
    return func.emitOpError()
           << "params=nvme offloads the parameter shards of stage 3, and no "
              "parameter of this step is a shard (zero.sharded): each is "
              "persistent (zero-partition's param-persistence-threshold)";
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
