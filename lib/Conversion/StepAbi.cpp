//===- StepAbi.cpp - The step ABI descriptor ------------------------------===//
//
// zero-step-abi: after bufferization, records what a driver needs to call
// the step functions as one dictionary on the module (`zero.step_abi`): the
// model's parameters with their flat layout (from zero.manifest) and
// initialization, the optimizer states, batch inputs, hyper-parameters and
// loss, and every entry function's arguments in order, each with its role,
// shape, element type, memory category and shard. zero-export-step-abi later
// writes it into the object as JSON (docs/runtime-abi.md).
//
//===----------------------------------------------------------------------===//

#include "zero/Conversion/StepAbi.h"

#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Transforms/Passes.h"

#include "zero/step.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROSTEPABIPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

std::optional<std::string> mlir::zero::abiTypeName(Type type) {
  if (type.isF32())
    return std::string("f32");
  if (type.isF64())
    return std::string("f64");
  if (type.isBF16())
    return std::string("bf16");
  if (type.isF16())
    return std::string("f16");
  if (type.isIndex())
    return std::string("i64");
  if (auto i = dyn_cast<IntegerType>(type);
      i && (i.getWidth() == 8 || i.getWidth() == 16 || i.getWidth() == 32 ||
            i.getWidth() == 64))
    return "i" + std::to_string(i.getWidth());
  return std::nullopt;
}

namespace {
llvm::json::Value toJson(Attribute attr) {
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.getValue();
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getValue().getSExtValue();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr)) {
    llvm::json::Array out;
    for (int64_t v : a.asArrayRef())
      out.push_back(v);
    return out;
  }
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array out;
    for (Attribute e : a)
      out.push_back(toJson(e));
    return out;
  }
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object out;
    for (NamedAttribute e : d)
      out[e.getName().getValue()] = toJson(e.getValue());
    return out;
  }
  return nullptr;
}
} // namespace

std::string mlir::zero::stepAbiToJson(DictionaryAttr abi) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << toJson(abi);
  return text;
}

namespace {
/// Builds the descriptor of one module; every error is located at the
/// function or argument it is about.
class AbiBuilder {
public:
  AbiBuilder(ModuleOp module, Target target)
      : module(module), target(target), b(module.getContext()) {}

  FailureOr<DictionaryAttr> build();

private:
  LogicalResult collectParams(ArrayRef<func::FuncOp> entries);
  FailureOr<DictionaryAttr> describeArg(func::FuncOp fn, unsigned i,
                                        llvm::StringSet<> &seen);
  /// What argument `i` is for the descriptor: its role, memory category,
  /// name, and index in its role's list.
  struct ArgRole {
    StringRef role, category, name;
    unsigned index = 0;
  };
  /// Checks that argument `i` is a buffer or scalar the step ABI passes;
  /// the name of its element type.
  FailureOr<std::string> argDType(func::FuncOp fn, unsigned i);
  /// Argument `i`'s role; a state, batch input or hyper-parameter seen for
  /// the first time joins its list (of element type `dtypeName`).
  FailureOr<ArgRole> argRole(func::FuncOp fn, unsigned i, StringRef dtypeName,
                             MemRefType memref);
  InFlightDiagnostic argError(func::FuncOp fn, unsigned i) {
    return fn.emitOpError() << "argument #" << i << ": ";
  }
  /// Index of `name` in `list`, appending `make()` if it is new.
  unsigned lookupOrAdd(SmallVector<Attribute> &list,
                       llvm::StringMap<unsigned> &index, StringRef key,
                       function_ref<Attribute()> make) {
    auto [it, inserted] = index.try_emplace(key, list.size());
    if (inserted)
      list.push_back(make());
    return it->second;
  }

  ModuleOp module;
  Target target;
  Builder b;
  bool partitioned = false;
  int64_t stage = 0, worldSize = 1;
  SmallVector<Attribute> params, states, batch, hypers;
  llvm::StringMap<unsigned> paramIndex, stateIndex, batchIndex, hyperIndex;
  Attribute loss;
};

/// The buffer argument `i` of `fn` stands for: its memref type, or for an
/// NVMe extent (a `!zero.extent`, or once lowered the runtime's i64 handle
/// with `zero.extent`) the memref of the tensor the extent holds.
MemRefType bufferType(func::FuncOp fn, unsigned i) {
  Type type = fn.getArgument(i).getType();
  if (auto memref = dyn_cast<MemRefType>(type))
    return memref;
  if (auto extent = dyn_cast<ExtentType>(type))
    return MemRefType::get(extent.getTensorType().getShape(),
                           extent.getTensorType().getElementType());
  if (auto extent = fn.getArgAttrOfType<TypeAttr>(
          i, ZeroDialect::ExtentAttrHelper::getNameStr()))
    if (auto tensor = dyn_cast<RankedTensorType>(extent.getValue());
        tensor && type.isInteger(64))
      return MemRefType::get(tensor.getShape(), tensor.getElementType());
  return {};
}

/// Whether argument `i` of `fn` is an NVMe extent handle.
bool isExtent(func::FuncOp fn, unsigned i) {
  return !isa<MemRefType>(fn.getArgument(i).getType()) && bufferType(fn, i);
}

LogicalResult AbiBuilder::collectParams(ArrayRef<func::FuncOp> entries) {
  // The layout comes from zero-partition's manifest when there is one, and
  // is the unsharded one (world size 1) otherwise.
  func::FuncOp train;
  for (func::FuncOp fn : entries)
    if (fn->getAttr(ZeroDialect::ManifestAttrHelper::getNameStr()))
      train = fn;
  // Element type and initialization of each parameter, from the argument
  // that holds it.
  llvm::StringMap<std::pair<Type, DictionaryAttr>> argInfo;
  llvm::StringMap<SmallVector<int64_t>> fullShape;
  for (func::FuncOp fn : entries)
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
      if (auto name = fn.getArgAttrOfType<StringAttr>(
              i, ZeroDialect::ParamAttrHelper::getNameStr())) {
        MemRefType memref = bufferType(fn, i);
        if (!memref)
          return argError(fn, i) << "parameter '" << name.getValue()
                                 << "' is not a buffer after bufferization";
        auto init = fn.getArgAttrOfType<DictionaryAttr>(
            i, ZeroDialect::InitAttrHelper::getNameStr());
        auto &info = argInfo[name.getValue()];
        if (!info.first || (init && !info.second))
          info = {memref.getElementType(), init};
        if (!train && !fullShape.count(name.getValue()))
          fullShape[name.getValue()] = llvm::to_vector(memref.getShape());
      }

  auto addParam = [&](StringRef name, ArrayRef<int64_t> shape, int64_t numel,
                      int64_t padded, int64_t shard) -> LogicalResult {
    auto it = argInfo.find(name);
    if (it == argInfo.end())
      return module.emitError() << "parameter '" << name
                                << "' of the manifest is no argument of a "
                                   "step function";
    std::optional<std::string> dtype = abiTypeName(it->second.first);
    if (!dtype)
      return module.emitError()
             << "parameter '" << name << "' has element type "
             << it->second.first << ", which the step ABI cannot describe";
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("name", b.getStringAttr(name)),
        b.getNamedAttr("dtype", b.getStringAttr(*dtype)),
        b.getNamedAttr("shape", b.getDenseI64ArrayAttr(shape)),
        b.getNamedAttr("numel", b.getI64IntegerAttr(numel)),
        b.getNamedAttr("padded", b.getI64IntegerAttr(padded)),
        b.getNamedAttr("shard", b.getI64IntegerAttr(shard))};
    if (it->second.second)
      fields.push_back(b.getNamedAttr("init", it->second.second));
    paramIndex[name] = params.size();
    params.push_back(b.getDictionaryAttr(fields));
    return success();
  };

  if (train) {
    partitioned = true;
    auto stageAttr = train->getAttrOfType<IntegerAttr>(
        ZeroDialect::StageAttrHelper::getNameStr());
    auto worldAttr = train->getAttrOfType<IntegerAttr>(
        ZeroDialect::WorldSizeAttrHelper::getNameStr());
    if (!stageAttr || !worldAttr)
      return train.emitOpError()
             << "has a zero.manifest but no zero.stage or zero.world_size";
    stage = stageAttr.getInt();
    worldSize = worldAttr.getInt();
    if (stage < 0 || stage > 3 || worldSize < 1)
      return train.emitOpError() << "has stage " << stage << " and world size "
                                 << worldSize << "; expected 0-3 and >= 1";
    // Each layout was checked against the world size by the dialect.
    auto manifest = train->getAttrOfType<ArrayAttr>(
        ZeroDialect::ManifestAttrHelper::getNameStr());
    for (LayoutAttr layout : manifest.getAsRange<LayoutAttr>())
      if (failed(addParam(layout.getName().getValue(), layout.getShape(),
                          layout.getNumel(), layout.getPadded(),
                          layout.getShard())))
        return failure();
    return success();
  }
  // Unpartitioned: parameters in the order of their first appearance.
  for (func::FuncOp fn : entries)
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
      if (auto name = fn.getArgAttrOfType<StringAttr>(
              i, ZeroDialect::ParamAttrHelper::getNameStr());
          name && !paramIndex.count(name.getValue())) {
        ArrayRef<int64_t> shape = fullShape[name.getValue()];
        MemRefType buffer = bufferType(fn, i);
        if (!buffer || !buffer.hasStaticShape())
          return argError(fn, i)
                 << "is parameter '" << name.getValue()
                 << "' but no statically shaped buffer (or NVMe extent of "
                    "one): "
                 << fn.getArgument(i).getType();
        int64_t numel = buffer.getNumElements();
        if (failed(addParam(name.getValue(), shape, numel, numel, numel)))
          return failure();
      }
  return success();
}

FailureOr<std::string> AbiBuilder::argDType(func::FuncOp fn, unsigned i) {
  Type type = fn.getArgument(i).getType();
  MemRefType memref = bufferType(fn, i);
  bool extent = isExtent(fn, i);
  if (extent && !fn.getArgAttr(i, ZeroDialect::ParamAttrHelper::getNameStr()) &&
      !fn.getArgAttr(i, ZeroDialect::StateAttrHelper::getNameStr()))
    return argError(fn, i) << "is an NVMe extent but neither a parameter nor "
                              "an optimizer state";
  if (memref && (!memref.hasStaticShape() || !memref.getLayout().isIdentity()))
    return argError(fn, i) << "is " << type
                           << "; the step ABI passes contiguous buffers of "
                              "static shape only";
  if (!memref && !type.isIntOrIndexOrFloat())
    return argError(fn, i) << "is " << type
                           << "; the step ABI passes buffers and scalars only";
  // A scalar is a hyper-parameter and nothing else (an argument that also
  // carries a buffer role would be described as a buffer below).
  if (!memref &&
      (!fn.getArgAttr(i, ZeroDialect::HyperAttrHelper::getNameStr()) ||
       llvm::any_of(ArrayRef<StringRef>{
                        ZeroDialect::LossAttrHelper::getNameStr(),
                        ZeroDialect::ParamAttrHelper::getNameStr(),
                        ZeroDialect::GradAttrHelper::getNameStr(),
                        ZeroDialect::StateAttrHelper::getNameStr(),
                        ZeroDialect::BatchAttrHelper::getNameStr()},
                    [&](StringRef attr) { return fn.getArgAttr(i, attr); })))
    return argError(fn, i) << "is the scalar " << type
                           << "; only hyper-parameters are passed as scalars, "
                              "and with no other role (run zero-verify first: "
                              "it says which role is wrong)";
  Type elt = memref ? memref.getElementType() : type;
  std::optional<std::string> dtype = abiTypeName(elt);
  if (!dtype)
    return argError(fn, i) << "has element type " << elt
                           << ", which the step ABI cannot describe";
  return *dtype;
}

FailureOr<AbiBuilder::ArgRole>
AbiBuilder::argRole(func::FuncOp fn, unsigned i, StringRef dtypeName,
                    MemRefType memref) {
  std::optional<std::string> dtype = dtypeName.str();
  auto str = [&](StringRef attr) {
    auto s = fn.getArgAttrOfType<StringAttr>(i, attr);
    return s ? s.getValue() : StringRef();
  };
  ArgRole r;
  StringRef &role = r.role, &category = r.category, &name = r.name;
  unsigned &index = r.index;
  std::string key;
  if (fn.getArgAttr(i, ZeroDialect::LossAttrHelper::getNameStr())) {
    role = "loss";
    category = "activations";
    name = "loss";
    loss = b.getDictionaryAttr(
        {b.getNamedAttr("dtype", b.getStringAttr(*dtype))});
  } else if (StringRef p = str(ZeroDialect::ParamAttrHelper::getNameStr());
             !p.empty()) {
    role = "param";
    category = "params";
    name = p;
    auto it = paramIndex.find(p);
    if (it == paramIndex.end())
      return argError(fn, i) << "parameter '" << p
                             << "' is missing from zero.manifest";
    index = it->second;
  } else if (StringRef g = str(ZeroDialect::GradAttrHelper::getNameStr());
             !g.empty()) {
    role = "grad";
    category = "grads";
    name = g;
    auto it = paramIndex.find(g);
    if (it == paramIndex.end())
      return argError(fn, i) << "is the gradient of '" << g
                             << "', which is no parameter";
    index = it->second;
  } else if (auto dict = fn.getArgAttrOfType<DictionaryAttr>(
                 i, ZeroDialect::StateAttrHelper::getNameStr())) {
    role = "state";
    category = "optimizer_states";
    auto param = dict.getAs<StringAttr>("param");
    auto kind = dict.getAs<StringAttr>("kind");
    if (!param || !kind || !paramIndex.count(param.getValue()))
      return argError(fn, i) << "is an optimizer state of no known parameter";
    name = kind.getValue();
    key = (param.getValue() + "/" + kind.getValue()).str();
    unsigned paramIdx = paramIndex[param.getValue()];
    index = lookupOrAdd(states, stateIndex, key, [&] {
      return b.getDictionaryAttr(
          {b.getNamedAttr("param", b.getI64IntegerAttr(paramIdx)),
           b.getNamedAttr("kind", kind),
           b.getNamedAttr("dtype", b.getStringAttr(*dtype)),
           b.getNamedAttr("shape",
                          b.getDenseI64ArrayAttr(memref.getShape()))});
    });
  } else if (StringRef bn = str(ZeroDialect::BatchAttrHelper::getNameStr());
             !bn.empty()) {
    role = "batch";
    category = "activations";
    name = bn;
    index = lookupOrAdd(batch, batchIndex, bn, [&] {
      SmallVector<NamedAttribute> fields = {
          b.getNamedAttr("name", b.getStringAttr(bn)),
          b.getNamedAttr("dtype", b.getStringAttr(*dtype)),
          b.getNamedAttr("shape", b.getDenseI64ArrayAttr(memref.getShape()))};
      if (auto range = fn.getArgAttrOfType<IntegerAttr>(
              i, ZeroDialect::TokenRangeAttrHelper::getNameStr()))
        fields.push_back(b.getNamedAttr("token_range", range));
      return b.getDictionaryAttr(fields);
    });
  } else if (StringRef h = str(ZeroDialect::HyperAttrHelper::getNameStr());
             !h.empty()) {
    role = "hyper";
    category = "activations";
    name = h;
    index = lookupOrAdd(hypers, hyperIndex, h, [&] {
      SmallVector<NamedAttribute> fields = {
          b.getNamedAttr("name", b.getStringAttr(h)),
          b.getNamedAttr("dtype", b.getStringAttr(*dtype))};
      // The default as f64, whatever the argument's type.
      Attribute value = fn.getArgAttr(
          i, ZeroDialect::HyperDefaultAttrHelper::getNameStr());
      if (auto f = dyn_cast_or_null<FloatAttr>(value))
        fields.push_back(b.getNamedAttr(
            "default", b.getF64FloatAttr(f.getValue().convertToDouble())));
      else if (auto n = dyn_cast_or_null<IntegerAttr>(value))
        fields.push_back(b.getNamedAttr(
            "default", b.getF64FloatAttr(static_cast<double>(
                           n.getValue().getSExtValue()))));
      return b.getDictionaryAttr(fields);
    });
  } else {
    return argError(fn, i) << "has no zero.* role";
  }
  return r;
}

FailureOr<DictionaryAttr> AbiBuilder::describeArg(func::FuncOp fn, unsigned i,
                                                  llvm::StringSet<> &seen) {
  Type type = fn.getArgument(i).getType();
  MemRefType memref = bufferType(fn, i);
  bool extent = isExtent(fn, i);
  FailureOr<std::string> dtype = argDType(fn, i);
  if (failed(dtype))
    return failure();
  FailureOr<ArgRole> r = argRole(fn, i, *dtype, memref);
  if (failed(r))
    return failure();
  StringRef role = r->role, category = r->category, name = r->name;
  unsigned index = r->index;
  if (memref && !memref.getShape().empty() && (role == "hyper" || role == "loss"))
    return argError(fn, i) << "is a " << role << " of shape " << type
                           << "; expected a scalar or a 0-d buffer";

  // A parameter or state that appears a second time is an out-parameter of
  // buffer-results-to-out-params: the new value the function could not
  // write in place. The caller passes a scratch buffer and copies it back.
  bool outCopy = (role == "param" || role == "state") &&
                 !seen.insert((role + ":" + Twine(index)).str()).second;
  // Which buffers hold a shard is zero-partition's decision, marked on the
  // argument (zero.sharded); the size must agree with the manifest.
  bool sharded = static_cast<bool>(
      fn.getArgAttr(i, ZeroDialect::ShardedAttrHelper::getNameStr()));
  if (sharded && role != "param" && role != "state" && role != "grad")
    return argError(fn, i) << "is marked zero.sharded but is a " << role;
  if (role == "param" || role == "grad" || role == "state") {
    unsigned p = role == "state" ? cast<DictionaryAttr>(states[index])
                                       .getAs<IntegerAttr>("param")
                                       .getInt()
                                 : index;
    auto param = cast<DictionaryAttr>(params[p]);
    int64_t expected = param.getAs<IntegerAttr>(sharded ? "shard" : "numel")
                           .getInt();
    if (memref.getNumElements() != expected)
      return argError(fn, i)
             << "holds " << memref.getNumElements() << " elements of '"
             << param.getAs<StringAttr>("name").getValue() << "'; the "
             << (sharded ? "shard" : "whole tensor") << " has " << expected;
  }
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("role", b.getStringAttr(role)),
      b.getNamedAttr("name", b.getStringAttr(name)),
      b.getNamedAttr("index", b.getI64IntegerAttr(index)),
      b.getNamedAttr("dtype", b.getStringAttr(*dtype)),
      b.getNamedAttr("category", b.getStringAttr(category))};
  if (memref)
    fields.push_back(
        b.getNamedAttr("shape", b.getDenseI64ArrayAttr(memref.getShape())));
  else
    fields.push_back(b.getNamedAttr("scalar", b.getBoolAttr(true)));
  if (sharded)
    fields.push_back(b.getNamedAttr("sharded", b.getBoolAttr(true)));
  if (outCopy)
    fields.push_back(b.getNamedAttr("out_copy", b.getBoolAttr(true)));
  if (extent)
    fields.push_back(b.getNamedAttr("placement", b.getStringAttr("nvme")));
  else if (auto space = fn.getArgAttrOfType<StringAttr>(
               i, ZeroDialect::SpaceAttrHelper::getNameStr());
           space && space.getValue() == "host")
    fields.push_back(b.getNamedAttr("placement", b.getStringAttr("host")));
  return b.getDictionaryAttr(fields);
}

FailureOr<DictionaryAttr> AbiBuilder::build() {
  SmallVector<func::FuncOp> entries;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn->getAttr(ZeroDialect::RoleAttrHelper::getNameStr()))
      entries.push_back(fn);
  if (entries.empty())
    return module.emitError()
           << "zero-step-abi: no function with a zero.role; run it on a "
              "bufferized training step (zero-bufferize-step)";
  for (func::FuncOp fn : entries)
    if (fn.isExternal() || fn.getNumResults() != 0)
      return fn.emitOpError()
             << "is not a bufferized step function (it "
             << (fn.isExternal() ? "has no body" : "returns values")
             << "); run zero-bufferize-step before zero-step-abi";
  if (failed(collectParams(entries)))
    return failure();

  SmallVector<Attribute> entryAttrs;
  for (func::FuncOp fn : entries) {
    llvm::StringSet<> seen;
    SmallVector<Attribute> args;
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
      FailureOr<DictionaryAttr> arg = describeArg(fn, i, seen);
      if (failed(arg))
        return failure();
      args.push_back(*arg);
    }
    entryAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("name", b.getStringAttr(fn.getSymName())),
         b.getNamedAttr("role",
                        fn->getAttr(ZeroDialect::RoleAttrHelper::getNameStr())),
         b.getNamedAttr("args", b.getArrayAttr(args))}));
  }
  if (!loss)
    return module.emitError() << "zero-step-abi: no step function writes a "
                                 "loss (an argument marked zero.loss)";
  return b.getDictionaryAttr({
      b.getNamedAttr("abi_version", b.getI64IntegerAttr(ZRT_STEP_ABI_VERSION)),
      b.getNamedAttr("partitioned", b.getBoolAttr(partitioned)),
      b.getNamedAttr("stage", b.getI64IntegerAttr(stage)),
      b.getNamedAttr("world_size", b.getI64IntegerAttr(worldSize)),
      b.getNamedAttr("backend",
                     b.getStringAttr(target == Target::CUDA ? "cuda" : "cpu")),
      b.getNamedAttr("params", b.getArrayAttr(params)),
      b.getNamedAttr("states", b.getArrayAttr(states)),
      b.getNamedAttr("batch", b.getArrayAttr(batch)),
      b.getNamedAttr("hypers", b.getArrayAttr(hypers)),
      b.getNamedAttr("loss", loss),
      b.getNamedAttr("entries", b.getArrayAttr(entryAttrs)),
  });
}

struct ZeroStepAbiPass
    : public zero::impl::ZeroStepAbiPassBase<ZeroStepAbiPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<DictionaryAttr> abi = AbiBuilder(module, target).build();
    if (failed(abi))
      return signalPassFailure();
    module->setAttr(ZeroDialect::StepAbiAttrHelper::getNameStr(), *abi);
  }
};
} // namespace
