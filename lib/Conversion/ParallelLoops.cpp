//===- ParallelLoops.cpp - Loop nests on the runtime's threads ------------===//
//
// zero-parallel-loop-functions (func level) makes a function that is one
// scf.parallel nest run a range [begin, end) of its outer iterations;
// zero-parallel-calls-to-runtime (LLVM level) sends its calls to the
// runtime's zrt_parallel_for with a context buffer and a task function.
// Ours rather than upstream's scf-to-openmp: that outlines each parallel
// region with its bounds as arguments (the inner loops then no longer
// vectorize) and runs it on a second pool of threads next to the BLAS's
// (measured 1.6-2x slower on a GPT step, docs/decisions/0021-one-pool-of-threads.md).
//
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROPARALLELLOOPFUNCTIONSPASS
#define GEN_PASS_DEF_ZEROPARALLELCALLSTORUNTIMEPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kIterationsAttr = "zero.parallel_iterations";

//===----------------------------------------------------------------------===//
// zero-parallel-loop-functions
//===----------------------------------------------------------------------===//

/// The trip count of a loop dimension with constant bounds and step.
std::optional<int64_t> tripCount(Value lb, Value ub, Value step) {
  std::optional<int64_t> l = getConstantIntValue(lb),
                         u = getConstantIntValue(ub),
                         s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  if (*u <= *l)
    return 0;
  // (u - l + s - 1) / s without overflow at the ends of the int64 range.
  std::optional<int64_t> span = llvm::checkedSub(*u, *l);
  if (!span)
    return std::nullopt;
  return *span / *s + (*span % *s != 0);
}

/// a * b, saturating at `cap` (a, b >= 0).
int64_t mulCapped(int64_t a, int64_t b, int64_t cap) {
  std::optional<int64_t> product = llvm::checkedMul(a, b);
  return product ? std::min(*product, cap) : cap;
}

/// Operations one execution of `block` performs, loops counted with their
/// trip counts (1 where unknown), saturating at `cap`.
int64_t estimateWork(Block &block, int64_t cap);

int64_t loopWork(Operation *op, int64_t cap) {
  int64_t trips = 1;
  Block *body = nullptr;
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    trips = tripCount(loop.getLowerBound(), loop.getUpperBound(),
                      loop.getStep())
                .value_or(1);
    body = loop.getBody();
  } else if (auto par = dyn_cast<scf::ParallelOp>(op)) {
    for (auto [lb, ub, step] : llvm::zip(par.getLowerBound(),
                                         par.getUpperBound(), par.getStep()))
      trips = mulCapped(trips, tripCount(lb, ub, step).value_or(1), cap);
    body = par.getBody();
  } else {
    // Other ops with regions (scf.if, ...): the most expensive region.
    int64_t most = 1;
    for (Region &region : op->getRegions())
      for (Block &block : region)
        most = std::max(most, estimateWork(block, cap));
    return most;
  }
  return mulCapped(std::min(trips, cap), estimateWork(*body, cap), cap);
}

int64_t estimateWork(Block &block, int64_t cap) {
  int64_t work = 0;
  for (Operation &op : block) {
    std::optional<int64_t> sum =
        llvm::checkedAdd(work, op.getNumRegions() ? loopWork(&op, cap) : 1);
    if (!sum || *sum >= cap)
      return cap;
    work = *sum;
  }
  return std::max<int64_t>(work, 1);
}

struct ZeroParallelLoopFunctionsPass
    : public zero::impl::ZeroParallelLoopFunctionsPassBase<
          ZeroParallelLoopFunctionsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Every use of every symbol, in one walk (asking per function would
    // walk the module once per function).
    llvm::DenseMap<StringAttr, SmallVector<Operation *>> users;
    if (std::optional<SymbolTable::UseRange> uses =
            SymbolTable::getSymbolUses(&module.getBodyRegion()))
      for (const SymbolTable::SymbolUse &use : *uses)
        users[use.getSymbolRef().getRootReference()].push_back(use.getUser());
    for (func::FuncOp fn :
         llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      rewrite(fn, users[fn.getSymNameAttr()]);
  }

private:
  /// The nest of `fn` if its body is one scf.parallel among side-effect-free
  /// ops; null otherwise.
  static scf::ParallelOp soleNest(func::FuncOp fn) {
    if (fn.isExternal() || !fn.isPrivate() || fn.getNumResults() != 0 ||
        fn->hasAttr(kIterationsAttr) || !fn.getBody().hasOneBlock())
      return nullptr;
    scf::ParallelOp nest;
    for (Operation &op : fn.getBody().front()) {
      if (auto par = dyn_cast<scf::ParallelOp>(op)) {
        if (nest || par.getNumResults() != 0)
          return nullptr;
        nest = par;
        continue;
      }
      if (isa<func::ReturnOp>(op))
        continue;
      if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
        return nullptr;
    }
    return nest;
  }

  void rewrite(func::FuncOp fn, ArrayRef<Operation *> users) {
    scf::ParallelOp nest = soleNest(fn);
    if (!nest)
      return;
    // Every use must be a call we can give the two new arguments.
    SmallVector<func::CallOp> calls;
    for (Operation *user : users) {
      auto call = dyn_cast<func::CallOp>(user);
      if (!call)
        return;
      calls.push_back(call);
    }
    // The dimension to split: the first with more than one iteration, all
    // before it having exactly one.
    unsigned numDims = nest.getNumLoops();
    std::optional<unsigned> dim;
    int64_t trips = 0;
    for (unsigned d = 0; d < numDims; ++d) {
      std::optional<int64_t> n =
          tripCount(nest.getLowerBound()[d], nest.getUpperBound()[d],
                    nest.getStep()[d]);
      if (!n || *n == 0)
        return;
      if (*n == 1)
        continue;
      dim = d;
      trips = *n;
      break;
    }
    if (!dim || estimateWork(fn.getBody().front(), minWork) < minWork)
      return;

    MLIRContext *ctx = &getContext();
    Location loc = fn.getLoc();
    Type index = IndexType::get(ctx);
    if (failed(fn.insertArguments({0, 0}, {index, index}, {nullptr, nullptr},
                                  {loc, loc})))
      return;
    Value begin = fn.getArgument(0), end = fn.getArgument(1);
    OpBuilder b(nest);
    Value lb = nest.getLowerBound()[*dim], step = nest.getStep()[*dim];
    auto at = [&](Value i) {
      Value offset = arith::MulIOp::create(b, nest.getLoc(), i, step);
      return arith::AddIOp::create(b, nest.getLoc(), lb, offset).getResult();
    };
    Value newLb = at(begin), newUb = at(end);
    nest->setOperand(*dim, newLb);
    nest->setOperand(numDims + *dim, newUb);
    fn->setAttr(kIterationsAttr,
                IntegerAttr::get(IntegerType::get(ctx, 64), trips));

    for (func::CallOp call : calls) {
      OpBuilder cb(call);
      SmallVector<Value> operands{
          arith::ConstantIndexOp::create(cb, call.getLoc(), 0),
          arith::ConstantIndexOp::create(cb, call.getLoc(), trips)};
      llvm::append_range(operands, call.getOperands());
      call->setOperands(operands);
    }
  }
};

//===----------------------------------------------------------------------===//
// zero-parallel-calls-to-runtime
//===----------------------------------------------------------------------===//

/// Whether a value of `type` fits a context slot (8 bytes).
bool fitsSlot(Type type) {
  if (isa<LLVM::LLVMPointerType>(type))
    return true;
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth() <= 64;
  if (auto fp = dyn_cast<FloatType>(type))
    return fp.getWidth() <= 64;
  return false;
}

struct ZeroParallelCallsToRuntimePass
    : public zero::impl::ZeroParallelCallsToRuntimePassBase<
          ZeroParallelCallsToRuntimePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    MLIRContext *ctx = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);

    // Callees, and the task function made for each.
    llvm::DenseMap<Operation *, LLVM::LLVMFuncOp> tasks;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      auto mark = fn->getAttrOfType<IntegerAttr>(kIterationsAttr);
      if (!mark)
        continue;
      fn->removeAttr(kIterationsAttr);
      LLVM::LLVMFunctionType type = fn.getFunctionType();
      ArrayRef<Type> params = type.getParams();
      if (fn.isExternal() || type.isVarArg() ||
          !isa<LLVM::LLVMVoidType>(type.getReturnType()) ||
          params.size() < 2 || params[0] != i64 || params[1] != i64 ||
          !llvm::all_of(params.drop_front(2), fitsSlot))
        continue;
      tasks[fn] = LLVM::LLVMFuncOp(); // made on first use
      iterations[fn] = mark.getInt();
    }
    if (tasks.empty())
      return;

    SmallVector<LLVM::CallOp> calls;
    module.walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (!callee)
        return;
      Operation *fn = symbols.lookup(*callee);
      if (!fn || !tasks.count(fn))
        return;
      std::optional<int64_t> begin = constantOf(call.getArgOperands()[0]),
                             end = constantOf(call.getArgOperands()[1]);
      if (begin == 0 && end == iterations.lookup(fn))
        calls.push_back(call);
    });
    if (calls.empty())
      return;

    LLVM::LLVMFuncOp runtime = declareParallelFor(module, symbols);
    if (!runtime)
      return signalPassFailure();
    for (LLVM::CallOp call : calls) {
      auto callee = cast<LLVM::LLVMFuncOp>(symbols.lookup(*call.getCallee()));
      LLVM::LLVMFuncOp &task = tasks[callee];
      if (!task)
        task = makeTask(callee, symbols);
      auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
      Value context = contextBuffer(caller, module, symbols);
      OpBuilder b(call);
      Location loc = call.getLoc();
      for (auto [i, value] :
           llvm::enumerate(call.getArgOperands().drop_front(2))) {
        Value slot =
            LLVM::GEPOp::create(b, loc, ptr, i64, context,
                                ArrayRef<LLVM::GEPArg>{int32_t(i)});
        LLVM::StoreOp::create(b, loc, value, slot);
      }
      Value n = LLVM::ConstantOp::create(
          b, loc, i64, b.getI64IntegerAttr(iterations.lookup(callee)));
      Value body = LLVM::AddressOfOp::create(b, loc, task);
      LLVM::CallOp::create(b, loc, runtime, ValueRange{n, body, context});
      call.erase();
    }
  }

private:
  llvm::DenseMap<Operation *, int64_t> iterations;
  /// The context buffer of each caller, sized for its widest call.
  llvm::DenseMap<Operation *, Value> buffers;

  static std::optional<int64_t> constantOf(Value v) {
    auto c = v.getDefiningOp<LLVM::ConstantOp>();
    if (!c)
      return std::nullopt;
    if (auto integer = dyn_cast<IntegerAttr>(c.getValue()))
      return integer.getInt();
    return std::nullopt;
  }

  LLVM::LLVMFuncOp declareParallelFor(ModuleOp module, SymbolTable &symbols) {
    MLIRContext *ctx = module.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                            {i64, ptr, ptr});
    if (auto existing = symbols.lookup<LLVM::LLVMFuncOp>("zrt_parallel_for")) {
      if (existing.getFunctionType() != type) {
        existing.emitError("zrt_parallel_for is declared with type ")
            << existing.getFunctionType() << ", not the runtime's " << type;
        return nullptr;
      }
      return existing;
    }
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto decl = LLVM::LLVMFuncOp::create(b, module.getLoc(),
                                         "zrt_parallel_for", type);
    symbols.insert(decl);
    return decl;
  }

  /// `@<callee>_task(context, begin, end)`: loads the callee's other
  /// arguments from the context's slots and calls it on [begin, end).
  LLVM::LLVMFuncOp makeTask(LLVM::LLVMFuncOp callee, SymbolTable &symbols) {
    MLIRContext *ctx = callee.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                            {ptr, i64, i64});
    OpBuilder b(callee);
    b.setInsertionPointAfter(callee);
    Location loc = callee.getLoc();
    auto task = LLVM::LLVMFuncOp::create(
        b, loc, (callee.getSymName() + "_task").str(), type,
        LLVM::Linkage::Internal);
    symbols.insert(task);
    Block *entry = task.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    SmallVector<Value> args{entry->getArgument(1), entry->getArgument(2)};
    for (auto [i, t] :
         llvm::enumerate(callee.getFunctionType().getParams().drop_front(2))) {
      Value slot = LLVM::GEPOp::create(b, loc, ptr, i64, entry->getArgument(0),
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      args.push_back(LLVM::LoadOp::create(b, loc, t, slot));
    }
    LLVM::CallOp::create(b, loc, callee, args);
    LLVM::ReturnOp::create(b, loc, ValueRange());
    return task;
  }

  /// An i64 array on `caller`'s stack with a slot for every argument of
  /// its widest parallel call, allocated at the start of its entry block.
  Value contextBuffer(LLVM::LLVMFuncOp caller, ModuleOp module,
                      SymbolTable &symbols) {
    Value &buffer = buffers[caller];
    if (buffer)
      return buffer;
    int64_t slots = 1;
    caller.walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (callee && iterations.count(symbols.lookup(*callee)))
        slots = std::max<int64_t>(slots, call.getArgOperands().size() - 2);
    });
    MLIRContext *ctx = caller.getContext();
    auto i64 = IntegerType::get(ctx, 64);
    OpBuilder b = OpBuilder::atBlockBegin(&caller.getBody().front());
    Location loc = caller.getLoc();
    Value count = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
    buffer = LLVM::AllocaOp::create(b, loc, LLVM::LLVMPointerType::get(ctx),
                                    LLVM::LLVMArrayType::get(i64, slots), count,
                                    /*alignment=*/8);
    return buffer;
  }
};

} // namespace
