//===- TrainingStep.cpp - The training-step contract ----------------------===//
//
// Reads and checks the training-step contract (docs/training-step-ir.md).
// Checks keep going after a violation where the rest can still be read, so a
// user sees every problem of a module in one run.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/TrainingStep.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "zero-training-step"

using namespace mlir;
using namespace mlir::zero;

namespace {
constexpr StringLiteral kForwardBackward = "forward_backward";
constexpr StringLiteral kOptimizer = "optimizer";

StringRef roleAttrName() { return ZeroDialect::RoleAttrHelper::getNameStr(); }
StringRef paramAttrName() {
  return ZeroDialect::ParamAttrHelper::getNameStr();
}
StringRef gradAttrName() { return ZeroDialect::GradAttrHelper::getNameStr(); }
StringRef batchAttrName() {
  return ZeroDialect::BatchAttrHelper::getNameStr();
}
StringRef lossAttrName() { return ZeroDialect::LossAttrHelper::getNameStr(); }
StringRef stateAttrName() {
  return ZeroDialect::StateAttrHelper::getNameStr();
}
StringRef hyperAttrName() {
  return ZeroDialect::HyperAttrHelper::getNameStr();
}

bool isSupportedFloat(Type t) { return t.isF32() || t.isF64() || t.isBF16(); }

/// The `zero.*` role attributes in `attrs` (an argument's or result's
/// dictionary). `zero.init`, `zero.token_range` and `zero.hyper_default`
/// describe an argument that already has a role; they are no roles
/// themselves.
SmallVector<NamedAttribute> zeroAttrs(DictionaryAttr attrs) {
  SmallVector<NamedAttribute> out;
  if (!attrs)
    return out;
  for (NamedAttribute a : attrs) {
    StringRef name = a.getName().getValue();
    if (name.starts_with("zero.") &&
        name != ZeroDialect::InitAttrHelper::getNameStr() &&
        name != ZeroDialect::TokenRangeAttrHelper::getNameStr() &&
        name != ZeroDialect::HyperDefaultAttrHelper::getNameStr() &&
        name != ZeroDialect::ShardedAttrHelper::getNameStr())
      out.push_back(a);
  }
  return out;
}

/// A `zero.hyper_default` on argument `i` of `fn` whose role is not
/// `zero.hyper` is an error at the argument.
bool misplacedHyperDefault(func::FuncOp fn, unsigned i, StringRef role,
                           StringRef what) {
  if (role == hyperAttrName() ||
      !fn.getArgAttr(i, ZeroDialect::HyperDefaultAttrHelper::getNameStr()))
    return false;
  emitError(fn.getArgument(i).getLoc())
      << what << " has 'zero.hyper_default' but is no hyper-parameter; "
      << "put the default on the optimizer's zero.hyper argument";
  return true;
}

std::string listNames(ArrayRef<ParamInfo> params) {
  std::string s;
  for (auto [i, p] : llvm::enumerate(params)) {
    if (i)
      s += ", ";
    if (i == 8) {
      s += "...";
      break;
    }
    s += "'" + p.name + "'";
  }
  return s;
}

/// Checks a parameter-like tensor type: ranked, static, f32/bf16/f64.
LogicalResult checkParamType(Location loc, StringRef what, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return emitError(loc) << what << " must be a ranked tensor, got " << type
                          << "; wrap scalars as tensor<f32>";
  if (!tensor.hasStaticShape())
    return emitError(loc) << what << " must have a static shape, got " << type
                          << "; fix every dimension at generation time";
  if (!isSupportedFloat(tensor.getElementType()))
    return emitError(loc) << what << " has element type "
                          << tensor.getElementType()
                          << "; supported element types are f32, bf16 and f64";
  return success();
}

/// Bytes of one element of a tensor, where the element type has a size.
std::optional<int64_t> elementBytes(Type t) {
  if (t.isIntOrFloat())
    return (static_cast<int64_t>(t.getIntOrFloatBitWidth()) + 7) / 8;
  if (isa<IndexType>(t))
    return 8;
  if (auto c = dyn_cast<ComplexType>(t))
    if (std::optional<int64_t> b = elementBytes(c.getElementType()))
      return 2 * *b;
  if (auto v = dyn_cast<VectorType>(t); v && v.hasStaticShape())
    if (std::optional<int64_t> b = elementBytes(v.getElementType())) {
      std::optional<int64_t> n = *b;
      for (int64_t d : v.getShape())
        n = n ? llvm::checkedMul(*n, d) : std::nullopt;
      return n;
    }
  return std::nullopt;
}

/// Why a static shaped type is too large to address: its element count or
/// its byte size does not fit int64 (every size downstream, the manifest's
/// included, is an int64). Empty when it fits.
std::string overflowOf(ShapedType t) {
  std::optional<int64_t> numel = 1;
  for (int64_t d : t.getShape())
    numel = numel ? llvm::checkedMul(*numel, d) : std::nullopt;
  if (!numel)
    return "its element count overflows 64 bits";
  std::optional<int64_t> elt = elementBytes(t.getElementType());
  if (elt && !llvm::checkedMul(*numel, *elt))
    return "its byte size overflows 64 bits";
  return "";
}

/// Reports every value of `fn` whose shaped type is not static, or too
/// large to count in int64.
LogicalResult checkStaticShapes(func::FuncOp fn) {
  bool ok = true;
  auto isDynamic = [](Type t) {
    auto shaped = dyn_cast<ShapedType>(t);
    return shaped && (!shaped.hasRank() || !shaped.hasStaticShape());
  };
  auto overflow = [&](Type t) {
    auto shaped = dyn_cast<ShapedType>(t);
    return shaped && !isDynamic(t) ? overflowOf(shaped) : std::string();
  };
  for (BlockArgument arg : fn.getArguments())
    if (std::string why = overflow(arg.getType()); !why.empty()) {
      emitError(arg.getLoc())
          << "argument #" << arg.getArgNumber() << " of type " << arg.getType()
          << " is too large: " << why
          << "; every tensor must fit 2^63 - 1 bytes";
      ok = false;
    }
  fn.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments()) {
          if (op == fn.getOperation())
            continue;
          if (isDynamic(arg.getType())) {
            op->emitOpError() << "has a block argument of dynamic type "
                              << arg.getType()
                              << "; the training step must use static shapes";
            ok = false;
          } else if (std::string why = overflow(arg.getType()); !why.empty()) {
            op->emitOpError() << "has a block argument of type "
                              << arg.getType() << " that is too large: " << why
                              << "; every tensor must fit 2^63 - 1 bytes";
            ok = false;
          }
        }
    for (auto [i, t] : llvm::enumerate(op->getResultTypes())) {
      if (isDynamic(t)) {
        op->emitOpError() << "produces dynamic type " << t
                          << "; the training step must use static shapes";
        ok = false;
        break;
      }
      if (std::string why = overflow(t); !why.empty()) {
        op->emitOpError() << "result #" << i << " of type " << t
                          << " is too large: " << why
                          << "; every tensor must fit 2^63 - 1 bytes";
        ok = false;
        break;
      }
    }
  });
  return success(ok);
}

/// The dialects whose ops the lowering (zero-lower-cpu) handles in a
/// training step's functions; anything else would pass verify and fail in
/// bufferization or the LLVM conversion.
constexpr StringLiteral kLoweredDialects[] = {
    "func", "arith", "math",   "tensor",       "linalg",
    "scf",  "cf",    "affine", "bufferization"};

/// Reports every op of `fn` that no lowering of zero-mlir handles.
LogicalResult checkDialects(func::FuncOp fn) {
  bool ok = true;
  // Pre-order, so that the body of a rejected op is not reported again.
  fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == fn.getOperation())
      return WalkResult::advance();
    StringRef ns = op->getName().getDialectNamespace();
    if (op->isRegistered() && llvm::is_contained(kLoweredDialects, ns))
      return WalkResult::advance();
    op->emitError() << "op '" << op->getName()
                    << "' is from a dialect zero-mlir does not lower; the "
                       "training step may only use the func, arith, math, "
                       "tensor, linalg, scf, cf, affine and bufferization "
                       "dialects (lower '"
                    << ns << "' ops to linalg in the frontend first)";
    ok = false;
    return WalkResult::skip();
  });
  return success(ok);
}

/// Which parameter's data a tensor in the optimizer derives from.
/// kNone: from no parameter yet (tensor.empty, constants).
constexpr int kNone = -1;

class OptimizerBodyChecker {
public:
  OptimizerBodyChecker(TrainingStep &step) : step(step) {}

  LogicalResult run();

private:
  bool isScalarLike(Type t) {
    auto shaped = dyn_cast<ShapedType>(t);
    return !shaped || shaped.getRank() == 0;
  }
  int ownerOf(Value v) {
    auto it = owner.find(v);
    return it == owner.end() ? kNone : it->second;
  }
  /// Merges the owners of the non-scalar tensor operands of `op`; reports an
  /// error if two parameters meet.
  FailureOr<int> mergeOwners(Operation *op, ValueRange values);
  LogicalResult checkLinalg(linalg::LinalgOp op);

  TrainingStep &step;
  llvm::DenseMap<Value, int> owner;
};

FailureOr<int> OptimizerBodyChecker::mergeOwners(Operation *op,
                                                 ValueRange values) {
  int merged = kNone;
  for (Value v : values) {
    if (isScalarLike(v.getType()))
      continue;
    int o = ownerOf(v);
    if (o == kNone)
      continue;
    if (merged != kNone && merged != o)
      return op->emitOpError()
             << "combines tensors of parameters '" << step.params[merged].name
             << "' and '" << step.params[o].name
             << "'; the optimizer must update each parameter on its own "
                "(combine parameters only through scalars, e.g. a global norm)";
    merged = o;
  }
  return merged;
}

LogicalResult OptimizerBodyChecker::checkLinalg(linalg::LinalgOp op) {
  if (linalg::isaContractionOpInterface(op))
    return op->emitOpError()
           << "is a contraction; the optimizer may only contain elementwise "
              "tensor ops, full reductions and scalar arithmetic (move "
              "matrix products into forward_backward)";
  bool hasReduction = op.getNumReductionLoops() > 0;
  if (hasReduction && op.getNumParallelLoops() > 0)
    return op->emitOpError()
           << "is a partial reduction; the optimizer may only reduce whole "
              "tensors to a scalar (rank-0) result, since parameters are "
              "sharded flat";
  for (OpOperand &operand : op->getOpOperands()) {
    Type t = operand.get().getType();
    if (isScalarLike(t))
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isIdentity())
      return op->emitOpError()
             << "accesses operand #" << operand.getOperandNumber()
             << " with indexing map " << AffineMapAttr::get(map)
             << "; in the optimizer every tensor must be accessed elementwise "
                "(identity map), since parameters are sharded flat";
    if (hasReduction && op.isDpsInit(&operand))
      return op->emitOpError() << "reduces into a non-scalar tensor; "
                                  "reductions in the optimizer must be full";
  }
  // The body may only compute on the elements it is handed.
  Operation *bad = nullptr;
  op->walk([&](Operation *inner) {
    if (inner != op.getOperation() && !bad &&
        !isa<arith::ArithDialect, math::MathDialect>(inner->getDialect()) &&
        !isa<linalg::YieldOp>(inner))
      bad = inner;
  });
  if (bad)
    return op->emitOpError()
           << "has '" << bad->getName()
           << "' in its body; optimizer math must be elementwise and must not "
              "depend on an element's position, since parameters are sharded "
              "flat";
  return success();
}

LogicalResult OptimizerBodyChecker::run() {
  func::FuncOp fn = step.optimizer;
  for (const ParamInfo &p : step.params) {
    unsigned idx = &p - step.params.data();
    owner[fn.getArgument(p.optArg)] = idx;
    owner[fn.getArgument(p.optGrad)] = idx;
  }
  for (const StateInfo &s : step.states)
    owner[fn.getArgument(s.optArg)] = s.param;

  bool ok = true;
  for (Operation &op : fn.getBody().getOps()) {
    // (Multi-block bodies need cf ops, which the allow-list rejects.)
    // Ops that may appear; everything else is rejected with its name.
    bool allowed =
        isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) ||
        isa<func::ReturnOp, tensor::EmptyOp, linalg::LinalgOp>(op);
    if (auto extract = dyn_cast<tensor::ExtractOp>(op))
      allowed = extract.getTensor().getType().getRank() == 0;
    if (auto fromElements = dyn_cast<tensor::FromElementsOp>(op))
      allowed = fromElements.getType().getRank() == 0;
    if (!allowed) {
      op.emitOpError()
          << "is not allowed in the optimizer; it may only contain "
             "elementwise tensor ops (linalg elementwise/generic, arith, "
             "math), full reductions to a scalar, tensor.empty, rank-0 "
             "tensor.extract/from_elements and scalar arithmetic";
      ok = false;
      continue;
    }
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      if (failed(checkLinalg(linalgOp))) {
        ok = false;
        continue;
      }
    if (isa<func::ReturnOp>(op))
      continue;
    FailureOr<int> merged = mergeOwners(&op, op.getOperands());
    if (failed(merged)) {
      ok = false;
      continue;
    }
    for (Value r : op.getResults())
      if (!isScalarLike(r.getType()))
        owner[r] = *merged;
  }
  if (!ok)
    return failure();

  // Each new parameter / state must come from its own parameter's data.
  Operation *ret = fn.getBody().back().getTerminator();
  auto checkResult = [&](unsigned resultIdx, unsigned paramIdx) {
    int o = ownerOf(ret->getOperand(resultIdx));
    if (o != kNone && o != static_cast<int>(paramIdx)) {
      fn.emitOpError() << "result #" << resultIdx << " for parameter '"
                       << step.params[paramIdx].name
                       << "' is computed from parameter '"
                       << step.params[o].name << "'";
      ok = false;
    }
  };
  for (auto [i, p] : llvm::enumerate(step.params))
    checkResult(p.optResult, i);
  for (const StateInfo &s : step.states)
    checkResult(s.optResult, s.param);
  return success(ok);
}

class ContractReader {
public:
  explicit ContractReader(ModuleOp module) : module(module) {}
  FailureOr<TrainingStep> read();

private:
  LogicalResult findFunctions();
  LogicalResult readForwardBackward();
  LogicalResult readOptimizerArgs();
  LogicalResult readOptimizerResults();

  /// The single `zero.*` role attribute of argument/result, or failure.
  FailureOr<NamedAttribute> singleRole(Location loc, StringRef what,
                                       DictionaryAttr attrs);
  /// The role of `fn`'s argument `i` (`what` in errors), or failure; a
  /// misplaced `zero.hyper_default` is reported and clears `ok`, but the
  /// role is returned so that the argument's other checks still run.
  FailureOr<NamedAttribute> argumentRole(func::FuncOp fn, unsigned i,
                                         StringRef what, bool &ok);

  ModuleOp module;
  TrainingStep step;
  llvm::StringMap<unsigned> paramIndex;
  /// Parameters already reported as malformed; later checks skip them
  /// instead of reporting follow-on errors.
  llvm::StringSet<> rejectedParams;
};

FailureOr<NamedAttribute> ContractReader::singleRole(Location loc,
                                                     StringRef what,
                                                     DictionaryAttr attrs) {
  SmallVector<NamedAttribute> roles = zeroAttrs(attrs);
  if (roles.empty())
    return emitError(loc) << what
                          << " has no zero.* role attribute; every argument "
                             "and result of a training-step function needs "
                             "exactly one";
  if (roles.size() > 1)
    return emitError(loc) << what << " has " << roles.size()
                          << " roles ('" << roles[0].getName().getValue()
                          << "' and '" << roles[1].getName().getValue()
                          << "'); give it exactly one";
  return roles.front();
}

FailureOr<NamedAttribute> ContractReader::argumentRole(func::FuncOp fn,
                                                       unsigned i,
                                                       StringRef what,
                                                       bool &ok) {
  FailureOr<NamedAttribute> role =
      singleRole(fn.getArgument(i).getLoc(), what, fn.getArgAttrDict(i));
  if (failed(role)) {
    ok = false;
    return failure();
  }
  if (misplacedHyperDefault(fn, i, role->getName().getValue(), what))
    ok = false;
  return role;
}

LogicalResult ContractReader::findFunctions() {
  bool ok = true;
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto role = fn->getAttrOfType<StringAttr>(roleAttrName());
    // A train_step (zero-partition's output) is no part of the contract.
    if (!role || (role.getValue() != kForwardBackward &&
                  role.getValue() != kOptimizer))
      continue;
    func::FuncOp &slot = role.getValue() == kForwardBackward
                             ? step.forwardBackward
                             : step.optimizer;
    if (slot) {
      InFlightDiagnostic diag = fn.emitOpError()
                                << "is a second function with zero.role = \""
                                << role.getValue()
                                << "\"; a module holds exactly one";
      diag.attachNote(slot.getLoc()) << "the first one is here";
      ok = false;
      continue;
    }
    if (fn.isExternal()) {
      fn.emitOpError() << "has zero.role = \"" << role.getValue()
                       << "\" but no body; give the function a body";
      ok = false;
    }
    slot = fn;
  }
  for (auto [fn, role] : {std::pair{step.forwardBackward, kForwardBackward},
                          std::pair{step.optimizer, kOptimizer}})
    if (!fn) {
      module.emitError() << "training-step module has no function with "
                            "zero.role = \""
                         << role << "\"; mark it with attributes {zero.role = \""
                         << role << "\"}";
      ok = false;
    }
  return success(ok);
}

LogicalResult ContractReader::readForwardBackward() {
  func::FuncOp fn = step.forwardBackward;
  bool ok = true;
  bool seenBatch = false;
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
    Location loc = fn.getArgument(i).getLoc();
    std::string what = "forward_backward argument #" + std::to_string(i);
    FailureOr<NamedAttribute> role = argumentRole(fn, i, what, ok);
    if (failed(role))
      continue;
    StringRef kind = role->getName().getValue();
    Type type = fn.getArgument(i).getType();
    if (kind == paramAttrName()) {
      StringRef name = cast<StringAttr>(role->getValue()).getValue();
      if (seenBatch) {
        emitError(loc) << "parameter '" << name
                       << "' follows a batch argument; list all parameters "
                          "before the batch inputs";
        ok = false;
      }
      if (failed(checkParamType(loc, "parameter '" + name.str() + "'", type))) {
        rejectedParams.insert(name);
        ok = false;
        continue;
      }
      auto [it, inserted] = paramIndex.try_emplace(name, step.params.size());
      if (!inserted) {
        emitError(loc) << "duplicate parameter name '" << name
                       << "'; parameter names must be unique";
        ok = false;
        continue;
      }
      ParamInfo p;
      p.name = name.str();
      p.type = cast<RankedTensorType>(type);
      p.fbArg = i;
      p.fbResult = p.optArg = p.optGrad = p.optResult = ~0u;
      step.params.push_back(p);
    } else if (kind == batchAttrName()) {
      seenBatch = true;
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || !tensor.hasStaticShape() ||
          !(tensor.getElementType().isIntOrFloat())) {
        emitError(loc) << "batch input must be a statically shaped tensor of "
                          "integers or floats, got "
                       << type;
        ok = false;
        continue;
      }
      step.batch.push_back(
          {cast<StringAttr>(role->getValue()).str(), tensor, i});
    } else {
      emitError(loc) << "'" << kind
                     << "' is not a forward_backward argument role; use "
                        "zero.param or zero.batch";
      ok = false;
    }
  }
  if (ok && step.params.empty()) {
    fn.emitOpError() << "has no zero.param argument; a training step needs "
                        "at least one parameter";
    ok = false;
  }

  // Results: (loss, grads in parameter order).
  unsigned numResults = fn.getNumResults();
  if (numResults == 0 || !fn.getResultAttr(0, lossAttrName())) {
    fn.emitOpError() << "must return the loss first, marked {zero.loss}";
    return failure();
  }
  if (zeroAttrs(fn.getResultAttrDict(0)).size() != 1) {
    fn.emitOpError() << "result #0 is the loss and must carry no other zero.* "
                        "role";
    ok = false;
  }
  auto lossType = dyn_cast<RankedTensorType>(fn.getResultTypes()[0]);
  if (!lossType || lossType.getRank() != 0 ||
      !isSupportedFloat(lossType.getElementType())) {
    fn.emitOpError() << "loss must be a rank-0 tensor of f32, bf16 or f64, "
                        "got "
                     << fn.getResultTypes()[0];
    ok = false;
  }
  step.lossResult = 0;
  for (unsigned r = 1; r < numResults; ++r) {
    std::string what = "forward_backward result #" + std::to_string(r);
    FailureOr<NamedAttribute> role =
        singleRole(fn.getLoc(), what, fn.getResultAttrDict(r));
    if (failed(role)) {
      ok = false;
      continue;
    }
    if (role->getName().getValue() != gradAttrName()) {
      fn.emitOpError() << "result #" << r << " is marked '"
                       << role->getName().getValue()
                       << "'; after the loss, forward_backward returns only "
                          "gradients marked zero.grad";
      ok = false;
      continue;
    }
    StringRef name = cast<StringAttr>(role->getValue()).getValue();
    if (rejectedParams.contains(name))
      continue;
    auto it = paramIndex.find(name);
    if (it == paramIndex.end()) {
      fn.emitOpError() << "result #" << r
                       << " is the gradient of unknown parameter '" << name
                       << "'; parameters are " << listNames(step.params);
      ok = false;
      continue;
    }
    ParamInfo &p = step.params[it->second];
    if (p.fbResult != ~0u) {
      fn.emitOpError() << "result #" << r << " is a second gradient of '"
                       << name << "' (the first is result #" << p.fbResult
                       << ")";
      ok = false;
      continue;
    }
    p.fbResult = r;
    if (it->second + 1 != r) {
      fn.emitOpError() << "result #" << r << " is the gradient of '" << name
                       << "' but must be the gradient of parameter #"
                       << r - 1
                       << "; return gradients in parameter order";
      ok = false;
    }
    if (fn.getResultTypes()[r] != p.type) {
      fn.emitOpError() << "gradient of '" << name << "' has type "
                       << fn.getResultTypes()[r]
                       << " but the parameter has type " << p.type
                       << "; they must match";
      ok = false;
    }
  }
  for (const ParamInfo &p : step.params)
    if (p.fbResult == ~0u) {
      fn.emitOpError() << "returns no gradient for parameter '" << p.name
                       << "'; add a result marked {zero.grad = \"" << p.name
                       << "\"}";
      ok = false;
    }
  return success(ok);
}

LogicalResult ContractReader::readOptimizerArgs() {
  func::FuncOp fn = step.optimizer;
  bool ok = true;
  // Arguments come in groups: params, grads, states, hyper-parameters.
  enum Group { Params, Grads, States, Hypers };
  const char *groupNames[] = {"parameters", "gradients", "optimizer states",
                              "hyper-parameters"};
  int current = Params;
  unsigned numParams = 0, numGrads = 0;
  llvm::StringSet<> hyperNames;
  llvm::StringSet<> stateKeys;
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
    Location loc = fn.getArgument(i).getLoc();
    Type type = fn.getArgument(i).getType();
    std::string what = "optimizer argument #" + std::to_string(i);
    FailureOr<NamedAttribute> role = argumentRole(fn, i, what, ok);
    if (failed(role))
      continue;
    StringRef kind = role->getName().getValue();
    int group = kind == paramAttrName()   ? Params
                : kind == gradAttrName()  ? Grads
                : kind == stateAttrName() ? States
                : kind == hyperAttrName() ? Hypers
                                          : -1;
    if (group < 0) {
      emitError(loc) << "'" << kind
                     << "' is not an optimizer argument role; use zero.param, "
                        "zero.grad, zero.state or zero.hyper";
      ok = false;
      continue;
    }
    if (group < current) {
      emitError(loc) << what << " is one of the " << groupNames[group]
                     << " but follows the " << groupNames[current]
                     << "; order the arguments as parameters, gradients, "
                        "optimizer states, hyper-parameters";
      ok = false;
      continue;
    }
    current = group;

    if (group == Hypers) {
      StringRef name = cast<StringAttr>(role->getValue()).getValue();
      // A scalar, or a 0-d tensor of one as torch-mlir passes scalars.
      auto tensor = dyn_cast<RankedTensorType>(type);
      bool scalar =
          type.isIntOrFloat() || (tensor && tensor.getRank() == 0 &&
                                  tensor.getElementType().isIntOrFloat());
      if (!scalar) {
        emitError(loc) << "hyper-parameter '" << name
                       << "' must be a scalar integer or float, got " << type
                       << "; a rank-0 tensor of one is accepted too";
        ok = false;
      } else if (!hyperNames.insert(name).second) {
        emitError(loc) << "duplicate hyper-parameter '" << name << "'";
        ok = false;
      } else {
        step.hypers.push_back(
            {name.str(), tensor ? tensor.getElementType() : type, i});
      }
      continue;
    }

    if (group == States) {
      auto dict = cast<DictionaryAttr>(role->getValue());
      StringRef paramName = dict.getAs<StringAttr>("param").getValue();
      StringRef stateKind = dict.getAs<StringAttr>("kind").getValue();
      auto it = paramIndex.find(paramName);
      if (it == paramIndex.end()) {
        emitError(loc) << "optimizer state '" << stateKind
                       << "' names unknown parameter '" << paramName
                       << "'; parameters are " << listNames(step.params);
        ok = false;
        continue;
      }
      if (!stateKeys.insert((paramName + "\x1f" + stateKind).str()).second) {
        emitError(loc) << "parameter '" << paramName
                       << "' has two optimizer states of kind '" << stateKind
                       << "'";
        ok = false;
        continue;
      }
      ParamInfo &p = step.params[it->second];
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || tensor.getShape() != p.type.getShape() ||
          !isSupportedFloat(tensor.getElementType())) {
        emitError(loc) << "optimizer state '" << stateKind << "' of '"
                       << paramName << "' has type " << type
                       << "; it must be a float tensor of the parameter's "
                          "shape "
                       << p.type;
        ok = false;
        continue;
      }
      p.states.push_back(step.states.size());
      step.states.push_back({stateKind.str(), it->second, tensor, i, ~0u});
      continue;
    }

    // Params and grads must mirror forward_backward's parameters, in order.
    StringRef name = cast<StringAttr>(role->getValue()).getValue();
    unsigned &count = group == Params ? numParams : numGrads;
    unsigned pos = count++;
    StringRef noun = group == Params ? "parameter" : "gradient";
    if (pos >= step.params.size()) {
      emitError(loc) << "optimizer " << noun << " '" << name
                     << "' has no matching parameter in forward_backward "
                        "(which has "
                     << step.params.size() << ")";
      ok = false;
      continue;
    }
    ParamInfo &p = step.params[pos];
    if (name != p.name) {
      emitError(loc) << "optimizer " << noun << " #" << pos << " is '" << name
                     << "' but forward_backward parameter #" << pos << " is '"
                     << p.name << "'; list them in the same order";
      ok = false;
      continue;
    }
    if (type != p.type) {
      emitError(loc) << "optimizer " << noun << " '" << name << "' has type "
                     << type << " but the parameter has type " << p.type;
      ok = false;
      continue;
    }
    (group == Params ? p.optArg : p.optGrad) = i;
  }
  for (ParamInfo &p : step.params) {
    if (p.optArg == ~0u && ok) {
      fn.emitOpError() << "has no argument for parameter '" << p.name
                       << "'; add one marked {zero.param = \"" << p.name
                       << "\"}";
      ok = false;
    }
    if (p.optGrad == ~0u && ok) {
      fn.emitOpError() << "has no argument for the gradient of '" << p.name
                       << "'; add one marked {zero.grad = \"" << p.name
                       << "\"}";
      ok = false;
    }
  }
  return success(ok);
}

LogicalResult ContractReader::readOptimizerResults() {
  func::FuncOp fn = step.optimizer;
  unsigned expected = step.params.size() + step.states.size();
  if (fn.getNumResults() != expected) {
    fn.emitOpError() << "must return " << expected << " results ("
                     << step.params.size() << " new parameters, then "
                     << step.states.size() << " new optimizer states), got "
                     << fn.getNumResults();
    return failure();
  }
  bool ok = true;
  for (unsigned r = 0; r < expected; ++r) {
    bool isParam = r < step.params.size();
    DictionaryAttr attrs = fn.getResultAttrDict(r);
    Type type = fn.getResultTypes()[r];
    Type want;
    Attribute wantAttr;
    StringRef wantName;
    if (isParam) {
      ParamInfo &p = step.params[r];
      want = p.type;
      wantName = paramAttrName();
      wantAttr = StringAttr::get(fn.getContext(), p.name);
      p.optResult = r;
    } else {
      StateInfo &s = step.states[r - step.params.size()];
      want = s.type;
      wantName = stateAttrName();
      wantAttr = fn.getArgAttr(s.optArg, stateAttrName());
      s.optResult = r;
    }
    Attribute got = attrs ? attrs.get(wantName) : Attribute();
    if (!got || got != wantAttr || zeroAttrs(attrs).size() != 1) {
      fn.emitOpError() << "result #" << r << " must be marked {" << wantName
                       << " = " << wantAttr << "}: new parameters come in "
                       << "parameter order, then new states in the order of "
                          "the state arguments";
      ok = false;
      continue;
    }
    if (type != want) {
      fn.emitOpError() << "result #" << r << " has type " << type
                       << " but must have type " << want
                       << " like the value it replaces";
      ok = false;
    }
  }
  return success(ok);
}

FailureOr<TrainingStep> ContractReader::read() {
  if (failed(findFunctions()))
    return failure();
  bool ok = succeeded(readForwardBackward());
  ok &= succeeded(checkStaticShapes(step.forwardBackward));
  ok &= succeeded(checkDialects(step.forwardBackward));
  if (!ok)
    return failure();
  if (failed(readOptimizerArgs()) || failed(readOptimizerResults()))
    return failure();
  if (failed(checkStaticShapes(step.optimizer)) ||
      failed(checkDialects(step.optimizer)) ||
      failed(OptimizerBodyChecker(step).run()))
    return failure();
  LLVM_DEBUG(llvm::dbgs() << "training step: " << step.params.size()
                          << " params, " << step.states.size() << " states, "
                          << step.batch.size() << " batch inputs, "
                          << step.hypers.size() << " hyper-parameters\n");
  return step;
}
} // namespace

FailureOr<TrainingStep> TrainingStep::get(ModuleOp module) {
  return ContractReader(module).read();
}

std::optional<unsigned> TrainingStep::lookupParam(StringRef name) const {
  for (auto [i, p] : llvm::enumerate(params))
    if (p.name == name)
      return i;
  return std::nullopt;
}

int64_t TrainingStep::numParamElements() const {
  int64_t n = 0;
  for (const ParamInfo &p : params)
    n += p.type.getNumElements();
  return n;
}
