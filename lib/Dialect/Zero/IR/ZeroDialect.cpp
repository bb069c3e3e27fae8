//===- ZeroDialect.cpp - zero dialect ---------------------------*- C++ -*-===//
//
// The dialect registration, its attributes (`#zero.layout`) and the
// per-attribute checks of the training-step contract attributes. Each check
// looks at one attribute where it is attached (`zero.manifest` with the
// `zero.world_size` its layouts are for); the contract as a whole (roles,
// pairing, types) is zero-verify's job.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/IR/ZeroOps.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

#include "zero/runtime.h"

using namespace mlir;
using namespace mlir::zero;

#include "zero/Dialect/Zero/IR/ZeroOpsDialect.cpp.inc"

#include "zero/Dialect/Zero/IR/ZeroEnums.cpp.inc"

/// `[3, 5]`, `[]` for a 0-d parameter: a layout's shape.
static ParseResult parseShape(AsmParser &parser, SmallVector<int64_t> &shape) {
  auto parseDim = [&]() -> ParseResult {
    int64_t dim;
    if (parser.parseInteger(dim))
      return failure();
    shape.push_back(dim);
    return success();
  };
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim);
}

static void printShape(AsmPrinter &printer, ArrayRef<int64_t> shape) {
  printer << '[';
  llvm::interleaveComma(shape, printer);
  printer << ']';
}

#define GET_ATTRDEF_CLASSES
#include "zero/Dialect/Zero/IR/ZeroAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "zero/Dialect/Zero/IR/ZeroOpsTypes.cpp.inc"

#define GET_OP_CLASSES
#include "zero/Dialect/Zero/IR/ZeroOps.cpp.inc"

void ZeroDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "zero/Dialect/Zero/IR/ZeroAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "zero/Dialect/Zero/IR/ZeroOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "zero/Dialect/Zero/IR/ZeroOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Started collectives and zero.wait
//===----------------------------------------------------------------------===//

namespace {

/// Elements of a shaped type with a static shape.
int64_t numElements(Type type) {
  return cast<ShapedType>(type).getNumElements();
}

/// Row-major without gaps (any offset): what the runtime's pointer and count
/// describe.
bool isContiguous(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  int64_t expected = 1;
  for (int64_t i = type.getRank() - 1; i >= 0; --i) {
    if (type.getDimSize(i) != 1 && strides[i] != expected)
      return false;
    expected *= type.getDimSize(i);
  }
  return true;
}

/// Static shapes, contiguous memrefs and one element type for a
/// collective's input and result.
LogicalResult verifyBuffers(Operation *op, Value input, Value result) {
  for (Value v : {input, result}) {
    auto type = cast<ShapedType>(v.getType());
    if (!type.hasStaticShape())
      return op->emitOpError() << "needs static shapes, got " << type;
    if (auto memref = dyn_cast<MemRefType>(type))
      if (!isContiguous(memref))
        return op->emitOpError()
               << "needs contiguous row-major buffers, got " << memref;
  }
  Type inElt = cast<ShapedType>(input.getType()).getElementType();
  Type outElt = cast<ShapedType>(result.getType()).getElementType();
  if (inElt != outElt)
    return op->emitOpError() << "has input element type " << inElt
                             << " but result element type " << outElt;
  return success();
}

/// Checks what every start op needs: one form or the other, static shapes,
/// contiguous memrefs, the same element type, and a token that one
/// zero.wait consumes (with the pending tensor, in the tensor form).
LogicalResult verifyStart(Operation *op, Value input, Value output,
                          Value pending, Value token) {
  bool tensors = isa<RankedTensorType>(input.getType());
  if (tensors && (output || !pending))
    return op->emitOpError("on tensors returns the pending result and takes "
                           "no output operand");
  if (!tensors && (!output || pending))
    return op->emitOpError("on memrefs takes an output operand (`into`) and "
                           "returns only the token");
  if (failed(verifyBuffers(op, input, tensors ? pending : output)))
    return failure();
  if (!token.hasOneUse() || !isa<WaitOp>(*token.getUsers().begin()))
    return op->emitOpError("token must have exactly one use, a zero.wait");
  if (pending) {
    auto wait = cast<WaitOp>(*token.getUsers().begin());
    if (!pending.hasOneUse() || wait.getPending() != pending)
      return op->emitOpError("pending result must have exactly one use: the "
                             "zero.wait of its token");
  }
  return success();
}

/// Shapes of a gather (in n, out N*n, both 1-D) or a reduce-scatter (the
/// other way round).
LogicalResult verifyBlocks(Operation *op, Type small, Type large,
                           StringRef smallName, StringRef largeName) {
  if (cast<ShapedType>(small).getRank() != 1 ||
      cast<ShapedType>(large).getRank() != 1)
    return op->emitOpError("works on 1-D values (zero-partition's flat form)");
  int64_t n = numElements(small), total = numElements(large);
  if (n == 0 ? total != 0 : total % n != 0)
    return op->emitOpError()
           << "has " << largeName << " of " << total
           << " elements, not a multiple of the " << n << " elements of its "
           << smallName;
  return success();
}

Value resultOf(Value output, Value pending) { return pending ? pending : output; }

/// Memory effects of a start: reads its input, writes its output, and
/// communicates.
void startEffects(
    Value input, Value output,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects,
    Operation *op) {
  effects.emplace_back(MemoryEffects::Write::get(), CommResource::get());
  if (isa<MemRefType>(input.getType()))
    effects.emplace_back(MemoryEffects::Read::get(),
                         &op->getOpOperand(0), SideEffects::DefaultResource::get());
  if (output)
    effects.emplace_back(MemoryEffects::Write::get(), &op->getOpOperand(1),
                         SideEffects::DefaultResource::get());
}

} // namespace

LogicalResult AllGatherStartOp::verify() {
  if (failed(verifyStart(*this, getInput(), getOutput(), getPending(),
                         getToken())))
    return failure();
  return verifyBlocks(*this, getInput().getType(),
                      resultOf(getOutput(), getPending()).getType(), "input",
                      "result");
}

LogicalResult ReduceScatterStartOp::verify() {
  if (failed(verifyStart(*this, getInput(), getOutput(), getPending(),
                         getToken())))
    return failure();
  return verifyBlocks(*this, resultOf(getOutput(), getPending()).getType(),
                      getInput().getType(), "result", "input");
}

/// A start whose result has its input's shape (`what`: "an all-reduce").
template <typename OpT>
static LogicalResult verifyShapeKept(OpT op, StringRef what) {
  if (failed(verifyStart(op, op.getInput(), op.getOutput(), op.getPending(),
                         op.getToken())))
    return failure();
  auto in = cast<ShapedType>(op.getInput().getType());
  auto out =
      cast<ShapedType>(resultOf(op.getOutput(), op.getPending()).getType());
  if (in.getShape() != out.getShape())
    return op.emitOpError() << "has input shape of " << in << " but result of "
                            << out << "; " << what << " keeps the shape";
  return success();
}

LogicalResult AllReduceStartOp::verify() {
  return verifyShapeKept(*this, "an all-reduce");
}

void AllGatherStartOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  startEffects(getInput(), getOutput(), effects, *this);
}

void ReduceScatterStartOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  startEffects(getInput(), getOutput(), effects, *this);
}

void AllReduceStartOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  startEffects(getInput(), getOutput(), effects, *this);
}

//===----------------------------------------------------------------------===//
// Collectives on buffers and the communication arena
//===----------------------------------------------------------------------===//

namespace {
/// A blocking collective reads its input, writes its output, and
/// communicates.
void collectiveEffects(
    Operation *op,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Write::get(), CommResource::get());
  effects.emplace_back(MemoryEffects::Read::get(), &op->getOpOperand(0),
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), &op->getOpOperand(1),
                       SideEffects::DefaultResource::get());
}
} // namespace

LogicalResult AllGatherOp::verify() {
  if (failed(verifyBuffers(*this, getInput(), getOutput())))
    return failure();
  return verifyBlocks(*this, getInput().getType(), getOutput().getType(),
                      "input", "output");
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyBuffers(*this, getInput(), getOutput())))
    return failure();
  return verifyBlocks(*this, getOutput().getType(), getInput().getType(),
                      "output", "input");
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyBuffers(*this, getInput(), getOutput())))
    return failure();
  if (getInput().getType().getShape() != getOutput().getType().getShape())
    return emitOpError() << "has input shape of " << getInput().getType()
                         << " but output of " << getOutput().getType()
                         << "; an all-reduce keeps the shape";
  shard::ReductionKind kind = getReduction();
  if (kind != shard::ReductionKind::Sum && kind != shard::ReductionKind::Max)
    return emitOpError() << "reduces with "
                         << shard::stringifyReductionKind(kind)
                         << "; the runtime's all-reduce takes sum and max";
  return success();
}

void AllGatherOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  collectiveEffects(*this, effects);
}

void ReduceScatterOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  collectiveEffects(*this, effects);
}

void AllReduceOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  collectiveEffects(*this, effects);
}

LogicalResult CommReserveOp::verify() {
  if (getBytesAttr().getInt() < 0)
    return emitOpError() << "reserves " << getBytesAttr().getInt()
                         << " bytes; the arena's size is >= 0";
  return success();
}

void CommReserveOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Write::get(), CommResource::get());
}

void CommReleaseOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Write::get(), CommResource::get());
}

//===----------------------------------------------------------------------===//
// The NVMe tier
//===----------------------------------------------------------------------===//

LogicalResult
ExtentType::verify(function_ref<InFlightDiagnostic()> emitError,
                   RankedTensorType tensorType) {
  if (!tensorType.hasStaticShape())
    return emitError() << "!zero.extent needs a static shape, got "
                       << tensorType;
  if (!tensorType.getElementType().isIntOrFloat())
    return emitError() << "!zero.extent holds integers or floats, got "
                       << tensorType.getElementType();
  return success();
}

namespace {
/// The staging side of a transfer must hold the extent's tensor: the same
/// shape and element type, and as a memref a contiguous row-major one.
LogicalResult verifyStaged(Operation *op, Type staged, ExtentType extent,
                           StringRef what) {
  auto shaped = cast<ShapedType>(staged);
  RankedTensorType kept = extent.getTensorType();
  if (shaped.getShape() != kept.getShape() ||
      shaped.getElementType() != kept.getElementType())
    return op->emitOpError() << "has " << what << " of type " << staged
                             << ", but its extent holds " << kept;
  if (auto memref = dyn_cast<MemRefType>(staged))
    if (!isContiguous(memref))
      return op->emitOpError()
             << "needs a contiguous row-major buffer, got " << memref;
  return success();
}

/// The token of a start goes to exactly one zero.wait.
LogicalResult verifyToken(Operation *op, Value token) {
  if (!token.hasOneUse() || !isa<WaitOp>(*token.getUsers().begin()))
    return op->emitOpError("token must have exactly one use, a zero.wait");
  return success();
}
} // namespace

LogicalResult ReadStartOp::verify() {
  if (bool(getOutput()) == bool(getPending()))
    return emitOpError("returns the pending tensor (tensor form) or reads "
                       "into an output operand (memref form), not both");
  if (failed(verifyStaged(*this,
                          getPending() ? Type(getPending().getType())
                                       : Type(getOutput().getType()),
                          getExtent().getType(),
                          getPending() ? "pending result" : "output")) ||
      failed(verifyToken(*this, getToken())))
    return failure();
  if (Value pending = getPending()) {
    auto wait = cast<WaitOp>(*getToken().getUsers().begin());
    if (!pending.hasOneUse() || wait.getPending() != pending)
      return emitOpError("pending result must have exactly one use: the "
                         "zero.wait of its token");
  }
  return success();
}

LogicalResult WriteStartOp::verify() {
  if (failed(verifyStaged(*this, getInput().getType(), getExtent().getType(),
                          "input")))
    return failure();
  return verifyToken(*this, getToken());
}

void ReadStartOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Write::get(), NvmeResource::get());
  if (getOutput())
    effects.emplace_back(MemoryEffects::Write::get(), &getOutputMutable()[0],
                         SideEffects::DefaultResource::get());
}

void WriteStartOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Write::get(), NvmeResource::get());
  if (isa<MemRefType>(getInput().getType()))
    effects.emplace_back(MemoryEffects::Read::get(), &getInputMutable(),
                         SideEffects::DefaultResource::get());
}

//===----------------------------------------------------------------------===//
// Copies between host and device memory
//===----------------------------------------------------------------------===//

bool CopyStartOp::toHost() {
  auto space = (*this)->getAttrOfType<StringAttr>(
      ZeroDialect::SpaceAttrHelper::getNameStr());
  return space && space.getValue() == "host";
}

LogicalResult CopyStartOp::verify() {
  if (!(*this)->getAttrOfType<StringAttr>(
          ZeroDialect::SpaceAttrHelper::getNameStr()))
    return emitOpError("needs 'zero.space', the memory space it copies to "
                       "(\"host\" or \"device\")");
  return verifyShapeKept(*this, "a copy");
}

void CopyStartOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // Ordered against the other transfers and collectives (a copy stream).
  effects.emplace_back(MemoryEffects::Write::get(), CommResource::get());
  if (isa<MemRefType>(getInput().getType()))
    effects.emplace_back(MemoryEffects::Read::get(), &getInputMutable(),
                         SideEffects::DefaultResource::get());
  if (getOutput())
    effects.emplace_back(MemoryEffects::Write::get(), &getOutputMutable()[0],
                         SideEffects::DefaultResource::get());
}

LogicalResult WaitOp::verify() {
  Operation *start = getToken().getDefiningOp();
  if (!isa_and_nonnull<AllGatherStartOp, ReduceScatterStartOp,
                       AllReduceStartOp, ReadStartOp, WriteStartOp,
                       CopyStartOp>(start))
    return emitOpError("token must come from a zero.*_start op in the same "
                       "region");
  Value pending = start->getResult(0).getType() == getToken().getType()
                      ? Value()
                      : start->getResult(0);
  if (pending != getPending())
    return emitOpError(pending ? "must take the pending tensor of its start"
                       : isa<WriteStartOp>(start)
                           ? "takes no pending tensor: a write returns none"
                           : "takes no pending tensor: its start works on "
                             "memrefs");
  if (bool(getResult()) != bool(getPending()) ||
      (getResult() && getResult().getType() != getPending().getType()))
    return emitOpError("returns a tensor of the pending tensor's type exactly "
                       "when it takes one");
  // The start's form: a write on tensors has no pending tensor but keeps
  // its tensor input.
  auto write = dyn_cast<WriteStartOp>(start);
  bool onTensors = write ? write.hasTensorSemantics() : bool(pending);
  for (Value v : getKeep())
    if (isa<MemRefType>(v.getType()) == onTensors)
      return emitOpError(onTensors ? "keeps tensors, as its start works on "
                                     "tensors"
                                   : "keeps memrefs, as its start works on "
                                     "memrefs");
  return success();
}

void WaitOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Write::get(), CommResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), NvmeResource::get());
  for (OpOperand &operand : getKeepMutable())
    if (isa<MemRefType>(operand.get().getType())) {
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    }
}

//===----------------------------------------------------------------------===//
// The flat layout (#zero.layout) and zero.manifest
//===----------------------------------------------------------------------===//

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringAttr name, ArrayRef<int64_t> shape,
                                 int64_t numel, int64_t padded, int64_t shard,
                                 ShardedParts sharded,
                                 std::optional<int64_t> gradBytes) {
  if (!name || name.getValue().empty())
    return emitError() << "#zero.layout needs the parameter's name, e.g. "
                          "name = \"fc0.weight\"";
  auto layoutOf = [&]() {
    return emitError() << "#zero.layout of '" << name.getValue() << "' ";
  };
  std::optional<int64_t> product = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return layoutOf() << "has shape [" << shape
                        << "]; a layout is of a static shape (sizes >= 0)";
    product = product ? llvm::checkedMul(*product, dim) : std::nullopt;
  }
  if (!product)
    return layoutOf() << "has shape [" << shape
                      << "], whose number of elements overflows int64";
  if (*product != numel)
    return layoutOf() << "has numel = " << numel << ", but shape [" << shape
                      << "] has " << *product << " elements";
  if (gradBytes && *gradBytes < 1)
    return layoutOf() << "has grad_bytes = " << *gradBytes
                      << "; it is the bytes per element of a gradient wider "
                         "than the parameter, a positive number (without "
                         "it, the parameter's)";
  return success();
}

LogicalResult
LayoutAttr::verifyWorldSize(function_ref<InFlightDiagnostic()> emitError,
                            int64_t worldSize) const {
  int64_t padded, shard;
  if (zrt_flat_layout(getNumel(), worldSize, &padded, &shard) != 0)
    return emitError() << "layout of '" << getName().getValue()
                       << "': " << getNumel()
                       << " elements padded to a multiple of " << worldSize
                       << " overflow int64";
  if (getPadded() != padded)
    return emitError() << "layout of '" << getName().getValue()
                       << "' has padded = " << getPadded() << "; its "
                       << getNumel() << " elements on " << worldSize
                       << " ranks (zero.world_size) pad to " << padded
                       << ", the least multiple of " << worldSize
                       << " at or above " << getNumel();
  if (getShard() != shard)
    return emitError() << "layout of '" << getName().getValue()
                       << "' has shard = " << getShard() << "; padded / "
                       << "zero.world_size is " << padded << " / " << worldSize
                       << " = " << shard;
  return success();
}

namespace {
/// Checks that `manifest` holds one #zero.layout per parameter, each named
/// once and laid out for the `zero.world_size` beside it.
LogicalResult verifyManifest(Operation *op, ArrayAttr manifest) {
  auto world = op->getAttrOfType<IntegerAttr>(
      ZeroDialect::WorldSizeAttrHelper::getNameStr());
  if (!world)
    return op->emitOpError() << "'zero.manifest' needs an integer "
                                "'zero.world_size' beside it, the number of "
                                "ranks its layouts are for";
  int64_t worldSize = world.getInt();
  if (worldSize < 1)
    return op->emitOpError() << "'zero.manifest' is laid out for "
                                "zero.world_size = "
                             << worldSize << "; a world has at least one rank";
  llvm::StringSet<> names;
  for (auto [i, element] : llvm::enumerate(manifest)) {
    auto layout = dyn_cast<LayoutAttr>(element);
    if (!layout)
      return op->emitOpError()
             << "'zero.manifest' element #" << i << " is " << element
             << ", not a #zero.layout (one per parameter, #zero.layout<name "
                "= \"w\", shape = [4], numel = 4, padded = 4, shard = 2, "
                "sharded = states>)";
    if (!names.insert(layout.getName().getValue()).second)
      return op->emitOpError() << "'zero.manifest' lays out '"
                               << layout.getName().getValue() << "' twice";
    if (failed(layout.verifyWorldSize(
            [&] { return op->emitOpError() << "'zero.manifest': "; },
            worldSize)))
      return failure();
  }
  return success();
}

enum class Site { Operation, Argument, Result };

/// Checks that `attr` holds a non-empty string.
LogicalResult verifyName(function_ref<InFlightDiagnostic()> emitError,
                         NamedAttribute attr) {
  auto str = dyn_cast<StringAttr>(attr.getValue());
  if (!str)
    return emitError() << "'" << attr.getName().getValue()
                       << "' must be a string naming the "
                       << (attr.getName().getValue() == "zero.hyper"
                               ? "hyper-parameter"
                               : attr.getName().getValue() == "zero.batch"
                                     ? "batch input"
                                     : "parameter")
                       << ", e.g. \"fc0.weight\"";
  if (str.getValue().empty())
    return emitError() << "'" << attr.getName().getValue()
                       << "' must not be an empty string";
  return success();
}

/// Checks `{param = "<name>", kind = "<kind>"}`.
LogicalResult verifyState(function_ref<InFlightDiagnostic()> emitError,
                          NamedAttribute attr) {
  auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
  auto fail = [&]() {
    return emitError() << "'zero.state' must be a dictionary {param = "
                          "\"<param name>\", kind = \"<state kind>\"}";
  };
  if (!dict || dict.size() != 2)
    return fail();
  auto param = dict.getAs<StringAttr>("param");
  auto kind = dict.getAs<StringAttr>("kind");
  if (!param || !kind || param.getValue().empty() || kind.getValue().empty())
    return fail();
  return success();
}

/// Checks `{kind = "normal" | "uniform" | "constant", ...}` with the float
/// fields each kind needs.
LogicalResult verifyInit(function_ref<InFlightDiagnostic()> emitError,
                         NamedAttribute attr) {
  auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
  auto kind = dict ? dict.getAs<StringAttr>("kind") : StringAttr();
  if (!kind)
    return emitError() << "'zero.init' must be a dictionary with a kind: "
                          "{kind = \"normal\", std = 0.02 : f64}, {kind = "
                          "\"uniform\", low = -0.1 : f64, high = 0.1 : f64} or "
                          "{kind = \"constant\", value = 1.0 : f64}";
  SmallVector<StringRef> required, optional;
  if (kind.getValue() == "normal") {
    required = {"std"};
    optional = {"mean"};
  } else if (kind.getValue() == "uniform") {
    required = {"low", "high"};
  } else if (kind.getValue() == "constant") {
    required = {"value"};
  } else {
    return emitError() << "'zero.init' kind must be \"normal\", \"uniform\" "
                          "or \"constant\", got \""
                       << kind.getValue() << "\"";
  }
  for (NamedAttribute field : dict) {
    StringRef name = field.getName().getValue();
    if (name == "kind")
      continue;
    if (!llvm::is_contained(required, name) &&
        !llvm::is_contained(optional, name))
      return emitError() << "'zero.init' of kind \"" << kind.getValue()
                         << "\" has no field '" << name << "'";
    auto value = dyn_cast<FloatAttr>(field.getValue());
    if (!value || !value.getValue().isFinite())
      return emitError() << "'zero.init' field '" << name
                         << "' must be a finite float, e.g. 0.02 : f64";
    if (name == "std" && value.getValueAsDouble() < 0)
      return emitError() << "'zero.init' field 'std' must not be negative";
  }
  for (StringRef name : required)
    if (!dict.get(name))
      return emitError() << "'zero.init' of kind \"" << kind.getValue()
                         << "\" needs a field '" << name << "'";
  if (kind.getValue() == "uniform" &&
      dict.getAs<FloatAttr>("low").getValueAsDouble() >
          dict.getAs<FloatAttr>("high").getValueAsDouble())
    return emitError() << "'zero.init' needs low <= high";
  return success();
}

/// Checks one `zero.*` attribute attached at `site`.
LogicalResult verifyZeroAttr(function_ref<InFlightDiagnostic()> emitError,
                             NamedAttribute attr, Site site) {
  StringRef name = attr.getName().getValue();
  if (name == ZeroDialect::RoleAttrHelper::getNameStr()) {
    if (site != Site::Operation)
      return emitError() << "'zero.role' belongs on a func.func, not on a "
                            "function argument or result";
    auto role = dyn_cast<StringAttr>(attr.getValue());
    if (!role || (role.getValue() != "forward_backward" &&
                  role.getValue() != "optimizer" &&
                  role.getValue() != "train_step"))
      return emitError() << "'zero.role' must be \"forward_backward\", "
                            "\"optimizer\" or \"train_step\"";
    return success();
  }
  if (name == ZeroDialect::StageAttrHelper::getNameStr() ||
      name == ZeroDialect::WorldSizeAttrHelper::getNameStr() ||
      name == ZeroDialect::ManifestAttrHelper::getNameStr()) {
    if (site != Site::Operation)
      return emitError() << "'" << name
                         << "' belongs on a train_step function";
    bool isManifest = name == ZeroDialect::ManifestAttrHelper::getNameStr();
    if (isManifest ? !isa<ArrayAttr>(attr.getValue())
                   : !isa<IntegerAttr>(attr.getValue()))
      return emitError() << "'" << name << "' must be "
                         << (isManifest ? "an array of #zero.layout"
                                        : "an integer");
    return success();
  }
  if (name == ZeroDialect::CategoryAttrHelper::getNameStr()) {
    if (site != Site::Operation)
      return emitError() << "'zero.category' belongs on the operation that "
                            "allocates a buffer";
    auto category = dyn_cast<StringAttr>(attr.getValue());
    if (!category || !llvm::is_contained(
                         ArrayRef<StringRef>{"params", "grads",
                                             "optimizer_states", "activations"},
                         category.getValue()))
      return emitError() << "'zero.category' must be \"params\", \"grads\", "
                            "\"optimizer_states\" or \"activations\"";
    return success();
  }
  if (name == ZeroDialect::StepAbiAttrHelper::getNameStr()) {
    if (site != Site::Operation)
      return emitError() << "'zero.step_abi' belongs on the module";
    return success();
  }
  if (name == ZeroDialect::InitAttrHelper::getNameStr()) {
    if (site != Site::Argument)
      return emitError() << "'zero.init' belongs on a parameter argument";
    return verifyInit(emitError, attr);
  }
  if (name == ZeroDialect::ShardedAttrHelper::getNameStr()) {
    if (site == Site::Operation || !isa<UnitAttr>(attr.getValue()))
      return emitError() << "'zero.sharded' is a unit attribute of a "
                            "train_step argument or result";
    return success();
  }
  if (name == ZeroDialect::ExtentAttrHelper::getNameStr()) {
    auto type = dyn_cast<TypeAttr>(attr.getValue());
    if (site != Site::Argument || !type ||
        !isa<RankedTensorType>(type.getValue()))
      return emitError() << "'zero.extent' belongs on an argument and names "
                            "a tensor type";
    return success();
  }
  if (name == ZeroDialect::SpaceAttrHelper::getNameStr()) {
    auto space = dyn_cast<StringAttr>(attr.getValue());
    if (!space || (space.getValue() != "host" && space.getValue() != "device"))
      return emitError() << "'zero.space' must be \"host\" or \"device\"";
    return success();
  }
  if (name == ZeroDialect::TokenRangeAttrHelper::getNameStr()) {
    if (site != Site::Argument)
      return emitError() << "'zero.token_range' belongs on a batch argument";
    auto range = dyn_cast<IntegerAttr>(attr.getValue());
    if (!range || range.getValue().getSExtValue() < 1)
      return emitError() << "'zero.token_range' must be a positive integer "
                            "(the number of token ids, e.g. 50257 : i64)";
    return success();
  }
  if (name == ZeroDialect::HyperDefaultAttrHelper::getNameStr()) {
    if (site != Site::Argument)
      return emitError() << "'zero.hyper_default' belongs on a "
                            "hyper-parameter argument";
    if (!isa<FloatAttr, IntegerAttr>(attr.getValue()))
      return emitError() << "'zero.hyper_default' must be a number (e.g. "
                            "3.0e-04 : f64), the hyper-parameter's default";
    return success();
  }
  if (name == ZeroDialect::ParallelIterationsAttrHelper::getNameStr()) {
    auto count = dyn_cast<IntegerAttr>(attr.getValue());
    if (site != Site::Operation || !count ||
        count.getValue().getSExtValue() < 2)
      return emitError() << "'zero.parallel_iterations' belongs on a "
                            "function and must be an integer of at least 2 "
                            "(the trip count of its parallel loop)";
    return success();
  }
  bool isArgOrResultAttr =
      name == ZeroDialect::ParamAttrHelper::getNameStr() ||
      name == ZeroDialect::GradAttrHelper::getNameStr() ||
      name == ZeroDialect::StateAttrHelper::getNameStr() ||
      name == ZeroDialect::BatchAttrHelper::getNameStr() ||
      name == ZeroDialect::HyperAttrHelper::getNameStr() ||
      name == ZeroDialect::LossAttrHelper::getNameStr();
  if (!isArgOrResultAttr)
    return emitError() << "unknown zero dialect attribute '" << name
                       << "'; expected one of zero.role, zero.param, "
                          "zero.grad, zero.batch, zero.loss, zero.state, "
                          "zero.hyper, zero.stage, zero.world_size, "
                          "zero.manifest, zero.category, zero.init, "
                          "zero.token_range, zero.hyper_default, "
                          "zero.step_abi, zero.sharded, "
                          "zero.parallel_iterations, zero.extent, zero.space";
  if (site == Site::Operation)
    return emitError() << "'" << name
                       << "' belongs on a function argument or result, not "
                          "on an operation";
  // Which argument or result may carry which role is the contract's business
  // (zero-verify); lowered forms move result roles onto out-parameters.
  if (name == ZeroDialect::LossAttrHelper::getNameStr()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return emitError() << "'zero.loss' is a unit attribute: write "
                            "{zero.loss} with no value";
    return success();
  }
  if (name == ZeroDialect::StateAttrHelper::getNameStr())
    return verifyState(emitError, attr);
  return verifyName(emitError, attr);
}
} // namespace

LogicalResult ZeroDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName().getValue() == StepAbiAttrHelper::getNameStr() &&
      !isa<ModuleOp>(op))
    return op->emitOpError() << "'zero.step_abi' belongs on the module";
  // Lowering carries the role from func.func to llvm.func.
  if (attr.getName().getValue() == RoleAttrHelper::getNameStr() &&
      !isa<FunctionOpInterface>(op))
    return op->emitOpError()
           << "'zero.role' belongs on a func.func, not on '"
           << op->getName() << "'";
  if (failed(verifyZeroAttr([&] { return op->emitOpError(); }, attr,
                            Site::Operation)))
    return failure();
  // The layouts' rule needs the world size beside them.
  if (attr.getName().getValue() == ManifestAttrHelper::getNameStr())
    return verifyManifest(op, cast<ArrayAttr>(attr.getValue()));
  return success();
}

LogicalResult ZeroDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  return verifyZeroAttr(
      [&] { return op->emitOpError() << "argument #" << argIndex << ": "; },
      attr, Site::Argument);
}

LogicalResult ZeroDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  return verifyZeroAttr(
      [&] { return op->emitOpError() << "result #" << resultIndex << ": "; },
      attr, Site::Result);
}
