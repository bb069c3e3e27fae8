//===- OutlineLoopNests.cpp - One function per top-level loop nest --------===//
//
// zero-outline-loop-nests: moves each loop nest that is a direct child of a
// function body into a private noinline function of its own, so that LLVM
// and scf-to-cf work on many small functions instead of one with tens of
// thousands of loops (their cost per loop grows with the function). Ours
// because upstream's outlineSingleBlockRegion passes constants and views as
// arguments, which hides loop bounds and strides from LLVM's vectorizer.
// zero-outline-host-ops: the same for the operations marked to run on the
// host next to a device (zero-offload's optimizer=host), into functions
// that zero-gpu-kernels leaves on the host.
//
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "zero-outline-loop-nests"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROOUTLINELOOPNESTSPASS
#define GEN_PASS_DEF_ZEROOUTLINEHOSTOPSPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

/// Adds LLVM function attributes (`passthrough`) to `fn`.
void addPassthrough(func::FuncOp fn, ArrayRef<StringRef> names) {
  Builder b(fn.getContext());
  SmallVector<Attribute> all;
  if (auto old = fn->getAttrOfType<ArrayAttr>("passthrough"))
    all.append(old.begin(), old.end());
  for (StringRef name : names)
    if (!llvm::is_contained(all, b.getStringAttr(name)))
      all.push_back(b.getStringAttr(name));
  fn->setAttr("passthrough", b.getArrayAttr(all));
}

/// Whether `op` may be cloned into the outlined function instead of passing
/// its result: no side effects, no regions (constants, views, index math).
bool isClonable(Operation *op) {
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

std::string bodyKey(func::FuncOp fn);

/// Whether `loop` is glue rather than a nest to compile as one: its body
/// (not a loop inside it) calls a function or allocates.
bool isGlueLoop(scf::ForOp loop) {
  return llvm::any_of(*loop.getBody(), [](Operation &op) {
    return isa<CallOpInterface, memref::AllocOp>(op);
  });
}

/// Whether `a` comes before `b` in their function, where they may lie in
/// different blocks (a nest in a glue loop captures values from the
/// function body and from the loop's body): compared where their
/// ancestors share a block, an op before the ops nested in it.
bool isBefore(Operation *a, Operation *b) {
  for (Operation *x = a; x; x = x->getParentOp())
    for (Operation *y = b; y; y = y->getParentOp())
      if (x->getBlock() == y->getBlock())
        return x == y ? x == a && a != b : x->isBeforeInBlock(y);
  return false;
}

/// Whether `fn` runs on the host next to a device (`zero.space = "host"`,
/// zero-outline-host-ops' functions and the nests outlined from them).
bool isHostFunction(func::FuncOp fn) {
  auto space = fn->getAttrOfType<StringAttr>(
      zero::ZeroDialect::SpaceAttrHelper::getNameStr());
  return space && space.getValue() == "host";
}

/// Moves ops into private functions of their own, sharing equal ones.
class Outliner {
public:
  explicit Outliner(ModuleOp module) : symbols(module) {}

  /// Outlines `nest` of `parent` into `@<parent>_<kind><index>`, placed
  /// after `last` (which it becomes), or calls an equal function made
  /// before. The function is marked `zero.space = "host"` when `host` is
  /// set.
  func::FuncOp outline(Operation *nest, func::FuncOp parent, StringRef kind,
                       bool host, unsigned &index, Operation *&last);

  unsigned numOutlined = 0, numShared = 0;

private:
  SymbolTable symbols;
  /// Outlined functions by their printed type and body: a nest equal to one
  /// outlined before (the same op of every layer of a deep model) calls
  /// that function instead of a copy, so LLVM compiles each distinct nest
  /// once whatever the depth.
  llvm::StringMap<func::FuncOp> byBody;
};

struct ZeroOutlineLoopNestsPass
    : public zero::impl::ZeroOutlineLoopNestsPassBase<
          ZeroOutlineLoopNestsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Outliner outliner(module);
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp fn : functions) {
      if (fn.isExternal())
        continue;
      unsigned index = 0;
      Operation *last = fn;
      // What is left is glue: allocations, calls and pointer arithmetic in
      // one basic block. LLVM's instruction scheduler costs more than
      // linear time in the length of a block, and the glue gains nothing
      // from it, so it is compiled without optimization.
      if (outlineNestsOf(fn.getBody().front(), fn, outliner, index, last) &&
          unoptimizedGlue)
        addPassthrough(fn, {"noinline", "optnone"});
    }
    numOutlined += outliner.numOutlined;
    numShared += outliner.numShared;
  }

private:
  /// Outlines the loop nests of `block`, a block of `fn`'s glue; whether
  /// there were any. A loop that is glue itself (its body calls the
  /// runtime or allocates: gradient accumulation's loop over the
  /// micro-batches holds a whole forward and backward pass) has the nests
  /// of its body outlined first, so that it becomes a loop of calls and
  /// LLVM never sees the step's nests in one function; then it is
  /// outlined like any nest.
  bool outlineNestsOf(Block &block, func::FuncOp fn, Outliner &outliner,
                      unsigned &index, Operation *&last) {
    SmallVector<Operation *> nests;
    for (Operation &op : block)
      if (isa<scf::ForOp, scf::ParallelOp>(op))
        nests.push_back(&op);
    for (Operation *nest : nests) {
      bool glue = false;
      if (auto loop = dyn_cast<scf::ForOp>(nest); loop && isGlueLoop(loop))
        glue = outlineNestsOf(*loop.getBody(), fn, outliner, index, last);
      // A host function's nests run on the host too.
      func::FuncOp outlined =
          outliner.outline(nest, fn, "loop", isHostFunction(fn), index, last);
      if (glue && unoptimizedGlue)
        addPassthrough(outlined, {"optnone"});
    }
    return !nests.empty();
  }
};

struct ZeroOutlineHostOpsPass
    : public zero::impl::ZeroOutlineHostOpsPassBase<ZeroOutlineHostOpsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Outliner outliner(module);
    StringRef spaceName = zero::ZeroDialect::SpaceAttrHelper::getNameStr();
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp fn : functions) {
      if (fn.isExternal() || isHostFunction(fn))
        continue;
      SmallVector<Operation *> ops;
      bool ok = true;
      fn.walk([&](Operation *op) {
        auto space = op->getAttrOfType<StringAttr>(spaceName);
        if (!space || space.getValue() != "host" || isa<memref::AllocOp>(op))
          return;
        if (op->getBlock() != &fn.getBody().front()) {
          op->emitOpError("runs on the host (zero.space = \"host\") inside "
                          "a loop or region; zero-outline-host-ops moves "
                          "only operations of a function's entry block");
          ok = false;
        } else if (op->getNumResults() != 0) {
          op->emitOpError("runs on the host (zero.space = \"host\") and "
                          "returns values; bufferize first (the host "
                          "updates work on buffers)");
          ok = false;
        }
        ops.push_back(op);
      });
      if (!ok)
        return signalPassFailure();
      unsigned index = 0;
      Operation *last = fn;
      for (Operation *op : ops) {
        op->removeAttr(spaceName);
        outliner.outline(op, fn, "host", /*host=*/true, index, last);
      }
    }
    numOutlined += outliner.numOutlined;
  }
};

/// The text that identifies `fn` up to its name: its type and its body in
/// generic form, without locations.
std::string bodyKey(func::FuncOp fn) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << fn.getFunctionType() << "\n";
  OpPrintingFlags flags;
  flags.printGenericOpForm().useLocalScope();
  fn.getBody().front().walk<WalkOrder::PreOrder>([&](Operation *op) {
    // Nested ops print with their parent.
    if (op->getParentOp() == fn.getOperation()) {
      op->print(os, flags);
      os << "\n";
    }
  });
  return key;
}

func::FuncOp Outliner::outline(Operation *nest, func::FuncOp parent,
                               StringRef kind, bool host, unsigned &index,
                               Operation *&last) {
  // What the nest reads from outside: its operands and the values its
  // regions use. Clonable producers are followed up to their own operands;
  // what is left becomes an argument.
  llvm::SetVector<Value> captured;
  for (Value v : nest->getOperands())
    captured.insert(v);
  getUsedValuesDefinedAbove(nest->getRegions(), captured);
  llvm::SetVector<Operation *> cloned;
  llvm::SetVector<Value> arguments;
  SmallVector<Value> worklist(captured.begin(), captured.end());
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (def && isClonable(def)) {
      if (cloned.insert(def))
        worklist.append(def->operand_begin(), def->operand_end());
      continue;
    }
    arguments.insert(v);
  }
  // Arguments in a fixed order: the parent's arguments by number, then
  // values by their definition in the parent (equal nests then get equal
  // functions, and reading the IR is easier).
  SmallVector<Value> args(arguments.begin(), arguments.end());
  llvm::stable_sort(args, [](Value a, Value b) {
    auto argA = dyn_cast<BlockArgument>(a), argB = dyn_cast<BlockArgument>(b);
    if (argA || argB) {
      if (!argA || !argB)
        return bool(argA);
      return argA.getArgNumber() < argB.getArgNumber();
    }
    Operation *opA = a.getDefiningOp(), *opB = b.getDefiningOp();
    if (opA != opB)
      return isBefore(opA, opB);
    return cast<OpResult>(a).getResultNumber() <
           cast<OpResult>(b).getResultNumber();
  });
  arguments = llvm::SetVector<Value>(args.begin(), args.end());
  // Clone in the parent's order, so that every op follows its operands.
  SmallVector<Operation *> ordered(cloned.begin(), cloned.end());
  llvm::sort(ordered, isBefore);

  MLIRContext *ctx = parent.getContext();
  SmallVector<Type> argTypes;
  for (Value v : arguments)
    argTypes.push_back(v.getType());
  auto type = FunctionType::get(ctx, argTypes, nest->getResultTypes());
  OpBuilder b(parent);
  b.setInsertionPointAfter(last);
  std::string name;
  do {
    name = (parent.getSymName() + "_" + kind + llvm::Twine(index++)).str();
  } while (symbols.lookup(name));
  auto fn = func::FuncOp::create(b, nest->getLoc(), name, type);
  fn.setPrivate();
  // LLVM's inliner would otherwise inline every single-call private
  // function back and rebuild the one large function.
  addPassthrough(fn, {"noinline"});
  // Internal to the object: two steps linked into one program must not
  // clash on these names.
  fn->setAttr("llvm.linkage",
              LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
  if (host)
    fn->setAttr(zero::ZeroDialect::SpaceAttrHelper::getNameStr(),
                b.getStringAttr("host"));
  symbols.insert(fn);

  Block *body = fn.addEntryBlock();
  IRMapping map;
  for (auto [v, arg] : llvm::zip(arguments, body->getArguments()))
    map.map(v, arg);
  b.setInsertionPointToStart(body);
  for (Operation *op : ordered)
    b.clone(*op, map);
  Operation *copy = b.clone(*nest, map);
  func::ReturnOp::create(b, nest->getLoc(), copy->getResults());

  std::string key = (host ? "host\n" : "") + bodyKey(fn);
  auto [it, inserted] = byBody.try_emplace(key, fn);
  if (!inserted) {
    symbols.erase(fn);
    fn = it->second;
    ++numShared;
  } else {
    last = fn;
  }

  b.setInsertionPoint(nest);
  auto call =
      func::CallOp::create(b, nest->getLoc(), fn, arguments.getArrayRef());
  nest->replaceAllUsesWith(call.getResults());
  nest->erase();
  // Views and constants only the nest used are dead now.
  for (Operation *op : llvm::reverse(ordered))
    if (op->use_empty())
      op->erase();
  ++numOutlined;
  LLVM_DEBUG(llvm::dbgs() << "outlined a " << kind << " op of @"
                          << parent.getSymName()
                          << " into @" << name << " (" << arguments.size()
                          << " arguments)\n");
  return fn;
}

} // namespace
