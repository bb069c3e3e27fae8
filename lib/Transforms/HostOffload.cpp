//===- HostOffload.cpp - Optimizer states in host memory ------------------===//
//
// zero-offload's optimizer=host: the optimizer states live in host memory
// next to the device, the operations that update them run on the host,
// their device operands copied over and their new values copied back
// (Passes.td has the rules).
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

} // namespace

void mlir::zero::offload::computeUnreadParametersFresh(func::FuncOp func) {
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
