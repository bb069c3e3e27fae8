//===- StepMemory.cpp - Predicted per-rank memory of a step ---------------===//
//
// The simulation behind zero-memory-report and zero-schedule's memory
// budget (StepMemory.h).
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/StepMemory.h"
#include "zero/runtime.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <limits>

using namespace mlir;
using namespace mlir::zero;

namespace {

/// The bytes of a buffer, or a located error where the element type has no
/// size the runtime allocates by, or the size does not fit int64 (the report
/// never prints a wrapped number).
FailureOr<int64_t> bytesOf(Location loc, MemRefType t) {
  Type elt = t.getElementType();
  if (!elt.isIntOrFloat())
    return emitError(loc) << "zero-memory-report: buffer of type " << t
                          << " has element type " << elt
                          << ", whose size the report does not know; "
                             "training steps hold integer and float buffers";
  if (!t.hasStaticShape())
    return emitError(loc) << "zero-memory-report: buffer of type " << t
                          << " has a dynamic shape; the report needs static "
                             "sizes";
  std::optional<int64_t> bytes = (elt.getIntOrFloatBitWidth() + 7) / 8;
  for (int64_t d : t.getShape())
    bytes = bytes ? llvm::checkedMul(*bytes, d) : std::nullopt;
  if (!bytes)
    return emitError(loc) << "zero-memory-report: the byte size of " << t
                          << " overflows 64 bits";
  return *bytes;
}

} // namespace

/// Where the runtime places the pieces of a collective's scratch in the
/// communication arena.
constexpr int64_t kCommArenaAlignment = ZRT_COMM_ARENA_ALIGNMENT;

namespace {

/// `pieces` placed in an arena of `capacity` bytes as the runtime places
/// them: in order, each at the next alignment boundary, while it fits.
struct ArenaPlacement {
  int64_t end = 0;     ///< the end of the last piece placed
  int64_t outside = 0; ///< the bytes of the pieces that did not fit
};
ArenaPlacement placeInArena(ArrayRef<int64_t> pieces, int64_t capacity) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  ArenaPlacement p;
  for (int64_t piece : pieces) {
    int64_t offset =
        p.end > kMax - kCommArenaAlignment
            ? kMax
            : static_cast<int64_t>(llvm::alignTo(p.end, kCommArenaAlignment));
    if (offset <= capacity && piece <= capacity - offset)
      p.end = offset + piece;
    else
      p.outside = llvm::checkedAdd(p.outside, piece).value_or(kMax);
  }
  return p;
}

} // namespace

int64_t mlir::zero::commArenaBytes(ArrayRef<int64_t> pieces) {
  ArenaPlacement p =
      placeInArena(pieces, std::numeric_limits<int64_t>::max());
  return p.outside ? std::numeric_limits<int64_t>::max() : p.end;
}

namespace {

constexpr unsigned kComm = kNumMemoryCategories - 1;

/// The index of a category name; the dialect verifier admits only the
/// names of kAllocCategories, anything else would count as activations.
unsigned categoryIndex(StringRef name) {
  unsigned index =
      llvm::find(kMemoryCategories, name) - std::begin(kMemoryCategories);
  return index < kNumMemoryCategories ? index : categoryIndex("activations");
}

/// Live bytes by category in one memory space, and their peaks: each
/// category's peak on its own (as the runtime keeps them) and the peak of
/// the total.
struct SpaceCounts {
  std::array<int64_t, kNumMemoryCategories> bytes{}, peak{};
  int64_t total = 0, peakTotal = 0;

  /// Adds `n` bytes to `category`; false (and nothing changed) when a sum
  /// no longer fits int64.
  bool add(unsigned category, int64_t n) {
    std::optional<int64_t> b = llvm::checkedAdd(bytes[category], n);
    std::optional<int64_t> t = llvm::checkedAdd(total, n);
    if (!b || !t)
      return false;
    bytes[category] = *b;
    total = *t;
    peak[category] = std::max(peak[category], bytes[category]);
    peakTotal = std::max(peakTotal, total);
    return true;
  }
  /// Peaks reached by `other`, a simulation that started from this state;
  /// what it left live stays live.
  void merge(const SpaceCounts &other) {
    for (unsigned c = 0; c < kNumMemoryCategories; ++c) {
      peak[c] = std::max(peak[c], other.peak[c]);
      bytes[c] = std::max(bytes[c], other.bytes[c]);
    }
    total = std::max(total, other.total);
    peakTotal = std::max(peakTotal, other.peakTotal);
  }
};

/// The device's live bytes (the counts this derives from), host memory's
/// apart (zero.space = "host"), and where the device's total peaks.
struct Live : SpaceCounts {
  SpaceCounts host;
  /// The top-level op being simulated, and the one where the total first
  /// reached its peak; the same for the innermost op (inside loop bodies).
  Operation *current = nullptr, *peakAt = nullptr;
  Operation *innermost = nullptr, *innermostPeakAt = nullptr;
  /// Set once a sum no longer fits int64; the sums are then meaningless.
  bool overflowed = false;
  /// The communication arena (zrt_comm_reserve): its largest buffer, the
  /// one collectives take their scratch from, and the bytes of all its
  /// buffers, counted to comm.
  int64_t arena = 0, arenaTotal = 0;
  /// The bytes above `threshold` summed over the ops simulated (saturated).
  int64_t threshold = std::numeric_limits<int64_t>::max(), excess = 0;

  /// Adds what the total holds above the threshold now to the excess.
  void sample() {
    if (total > threshold)
      excess = llvm::checkedAdd(excess, total - threshold)
                   .value_or(std::numeric_limits<int64_t>::max());
  }

  /// The device's largest total since the op being simulated began.
  int64_t sinceOp = 0;
  /// That figure of each op simulated, itself and what it nests included.
  llvm::DenseMap<Operation *, int64_t> *during = nullptr;

  void add(unsigned category, int64_t n) {
    int64_t before = peakTotal;
    if (!SpaceCounts::add(category, n)) {
      overflowed = true;
      return;
    }
    sinceOp = std::max(sinceOp, total);
    if (peakTotal > before) {
      peakAt = current;
      innermostPeakAt = innermost;
    }
  }
  void addHost(unsigned category, int64_t n) {
    if (!host.add(category, n))
      overflowed = true;
  }
  void merge(const Live &other) {
    if (other.peakTotal > peakTotal) {
      peakAt = other.peakAt;
      innermostPeakAt = other.innermostPeakAt;
    }
    SpaceCounts::merge(other);
    host.merge(other.host);
    excess = std::max(excess, other.excess);
    sinceOp = std::max(sinceOp, other.sinceOp);
    overflowed |= other.overflowed;
  }
};

/// A live allocation: its bytes, category and whether it is host memory.
struct Allocated {
  int64_t bytes;
  unsigned category;
  bool host;
};

/// Whether `op` (an argument's function, an allocation) marks host memory.
bool isHostSpace(Attribute space) {
  auto s = dyn_cast_or_null<StringAttr>(space);
  return s && s.getValue() == "host";
}

/// Simulates the live bytes of `block`'s allocations in program order, on
/// top of what `live` holds on entry. Allocations not freed in the block
/// stay live.
LogicalResult simulate(Block &block, Live &live,
                       llvm::DenseMap<Operation *, Allocated> &allocated,
                       int64_t n, bool topLevel, bool cpuTemporaries) {
  // Started collectives (zero.*_start, then the zero.wait of its token):
  // the communication thread takes a collective's scratch at some moment
  // between the two, one collective at a time. From the arena
  // (zero.comm_reserve, which zero-comm-buffers sizes for every started
  // collective), nothing more; otherwise the prediction holds the largest
  // scratch outside it in flight from each start to its wait.
  llvm::DenseMap<Value, int64_t> inFlight;
  auto largestInFlight = [&] {
    int64_t m = 0;
    for (auto &[request, bytes] : inFlight)
      m = std::max(m, bytes);
    return m;
  };
  auto one = [&](Operation &op) -> LogicalResult {
    live.sample();
    if (topLevel)
      live.current = &op;
    live.innermost = &op;
    if (auto reserve = dyn_cast<CommReserveOp>(op)) {
      // A larger reservation adds a buffer; the others stay.
      int64_t bytes = reserve.getBytesAttr().getInt();
      if (bytes > live.arena) {
        live.add(kComm, bytes);
        live.arena = bytes;
        std::optional<int64_t> total = llvm::checkedAdd(live.arenaTotal, bytes);
        live.overflowed |= !total;
        live.arenaTotal = total.value_or(0);
      }
      return success();
    }
    if (isa<CommReleaseOp>(op)) {
      live.add(kComm, -live.arenaTotal);
      live.arena = live.arenaTotal = 0;
      return success();
    }
    if (auto wait = dyn_cast<WaitOp>(op)) {
      int64_t before = largestInFlight();
      inFlight.erase(wait.getToken());
      live.add(kComm, largestInFlight() - before);
      return success();
    }
    if (std::optional<RuntimeCollective> c = getRuntimeCollective(&op)) {
      SmallVector<int64_t, 2> pieces;
      if (cpuTemporaries)
        pieces = commScratchPieces(*c, n);
      int64_t scratch = placeInArena(pieces, live.arena).outside;
      if (scratch == std::numeric_limits<int64_t>::max() ||
          llvm::is_contained(pieces, std::numeric_limits<int64_t>::max()))
        live.overflowed = true;
      if (c->started) {
        int64_t before = largestInFlight();
        inFlight[op.getResult(0)] = scratch;
        live.add(kComm, largestInFlight() - before);
        return success();
      }
      // A blocking collective runs after every started one has completed
      // (and freed its scratch).
      live.add(kComm, -largestInFlight());
      for (auto &entry : inFlight)
        entry.second = 0;
      live.add(kComm, scratch);
      live.add(kComm, -scratch);
      return success();
    }
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      FailureOr<int64_t> size = bytesOf(alloc.getLoc(), alloc.getType());
      if (failed(size))
        return failure();
      int64_t align = alloc.getAlignment().value_or(1);
      std::optional<int64_t> bytes = llvm::checkedAdd(*size, align - 1);
      if (!bytes)
        return alloc.emitOpError()
               << "zero-memory-report: the aligned size overflows 64 bits";
      *bytes = *bytes / align * align;
      unsigned category = categoryIndex(getAllocationCategory(alloc));
      bool host =
          isHostSpace(alloc->getAttr(ZeroDialect::SpaceAttrHelper::getNameStr()));
      allocated[alloc] = {*bytes, category, host};
      if (host)
        live.addHost(category, *bytes);
      else
        live.add(category, *bytes);
      return success();
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      if (Operation *a = getAllocation(dealloc.getMemref()))
        if (auto it = allocated.find(a); it != allocated.end()) {
          if (it->second.host)
            live.addHost(it->second.category, -it->second.bytes);
          else
            live.add(it->second.category, -it->second.bytes);
          allocated.erase(it);
        }
      return success();
    }
    // A bf16 matmul accumulating into f32 runs as zrt_gemm_bf16_f32 (or its
    // batched form), which on the CPU widens A and B into f32 temporaries
    // for the call (runtime.h); the CUDA backend multiplies bf16 natively.
    if (cpuTemporaries && isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
        op.getNumOperands() == 3) {
      auto a = dyn_cast<MemRefType>(op.getOperand(0).getType());
      auto b = dyn_cast<MemRefType>(op.getOperand(1).getType());
      auto c = dyn_cast<MemRefType>(op.getOperand(2).getType());
      if (a && b && c && a.hasStaticShape() && b.hasStaticShape() &&
          a.getElementType().isBF16() && b.getElementType().isBF16() &&
          c.getElementType().isF32()) {
        int64_t widened =
            llvm::checkedMul(llvm::checkedAdd(a.getNumElements(),
                                              b.getNumElements())
                                 .value_or(std::numeric_limits<int64_t>::max()),
                             int64_t(4))
                .value_or(std::numeric_limits<int64_t>::max());
        if (widened == std::numeric_limits<int64_t>::max())
          live.overflowed = true;
        unsigned activations = categoryIndex("activations");
        live.add(activations, widened);
        live.add(activations, -widened);
      }
    }
    // Nested regions (loop bodies, conditionals): each is simulated once
    // from the current state; what they leave live stays live.
    Live before = live;
    for (Region &region : op.getRegions())
      for (Block &inner : region) {
        Live innerLive = before;
        if (failed(
                simulate(inner, innerLive, allocated, n, /*topLevel=*/false,
                         cpuTemporaries)))
          return failure();
        live.merge(innerLive);
      }
    return success();
  };
  for (Operation &op : block) {
    int64_t outer = live.sinceOp;
    live.sinceOp = live.total;
    if (failed(one(op)))
      return failure();
    if (live.during)
      (*live.during)[&op] = live.sinceOp;
    live.sinceOp = std::max(outer, live.sinceOp);
  }
  return success();
}

/// The step's stage and world size, which the report prints beside the
/// manifest's accounting, read with a located error for anything missing
/// (a hand-written step is not to be trusted). The dialect has checked the
/// manifest's layouts against the world size.
LogicalResult readStage(func::FuncOp fn, StepMemory &r) {
  auto stage = fn->getAttrOfType<IntegerAttr>(
      ZeroDialect::StageAttrHelper::getNameStr());
  auto world = fn->getAttrOfType<IntegerAttr>(
      ZeroDialect::WorldSizeAttrHelper::getNameStr());
  if (!stage || !world)
    return fn.emitOpError()
           << "has a zero.manifest but no integer "
           << (stage ? ZeroDialect::WorldSizeAttrHelper::getNameStr()
                     : ZeroDialect::StageAttrHelper::getNameStr())
           << "; zero-memory-report reads the three together, as "
              "zero-partition writes them";
  r.stage = stage.getInt();
  r.worldSize = world.getInt();
  if (r.stage < 0 || r.stage > 3 || r.worldSize < 1)
    return fn.emitOpError() << "has zero.stage = " << r.stage
                            << " and zero.world_size = " << r.worldSize
                            << "; the stage must be 0 to 3 and the world "
                               "size at least 1";
  return success();
}

} // namespace

FailureOr<StepMemory> zero::predictStepMemory(func::FuncOp fn,
                                              int64_t threshold,
                                              bool cpuTemporaries) {
  StepMemory r;
  for (StringRef k : {"params", "grads", "optimizer_states"})
    r.modelStates[k] = 0;
  auto overflow = [&](StringRef what) {
    return fn.emitOpError()
           << "zero-memory-report: " << what << " overflows 64 bits";
  };
  // Buffers the caller passes, by the category a driver counts them in.
  Live live;
  int64_t paramEltBytes = 0;
  // The parameters the step takes as shards, by name: stage 3's (but its
  // persistent ones), and those whose gathers zero-schedule deferred
  // (defer-gathers).
  llvm::StringSet<> shardedParams;
  auto noteSharded = [&](unsigned i) {
    auto name = fn.getArgAttrOfType<StringAttr>(
        i, ZeroDialect::ParamAttrHelper::getNameStr());
    if (name && fn.getArgAttr(i, ZeroDialect::ShardedAttrHelper::getNameStr()))
      shardedParams.insert(name.getValue());
  };
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
    auto t = dyn_cast<MemRefType>(fn.getArgument(i).getType());
    // An NVMe extent (zero-offload's !zero.extent, or as lowered an i64
    // handle with zero.extent): its reserved bytes, rounded up to the
    // runtime's 4096, are on the NVMe tier, not in memory.
    TypeAttr extent = fn.getArgAttrOfType<TypeAttr>(
        i, ZeroDialect::ExtentAttrHelper::getNameStr());
    if (auto type = dyn_cast<ExtentType>(fn.getArgument(i).getType()))
      extent = TypeAttr::get(type.getTensorType());
    if (extent) {
      auto tensor = dyn_cast<RankedTensorType>(extent.getValue());
      if (!tensor || !tensor.hasStaticShape())
        return fn.emitOpError() << "argument #" << i
                                << " has a zero.extent that is no static "
                                   "tensor type";
      bool isParam =
          fn.getArgAttr(i, ZeroDialect::ParamAttrHelper::getNameStr()) !=
          nullptr;
      int64_t eltBytes = (tensor.getElementTypeBitWidth() + 7) / 8;
      int64_t bytes = tensor.getNumElements() * eltBytes;
      int64_t reserved = (bytes + kNvmeBlock - 1) / kNvmeBlock * kNvmeBlock;
      r.nvme[isParam ? "params" : "optimizer_states"] += reserved;
      if (isParam) {
        noteSharded(i);
        paramEltBytes = eltBytes;
        r.largestTensor = std::max(r.largestTensor, bytes);
        ++r.numParams;
      }
      continue;
    }
    if (!t)
      continue;
    FailureOr<int64_t> bytes = bytesOf(fn.getArgument(i).getLoc(), t);
    if (failed(bytes))
      return failure();
    bool isParam =
        fn.getArgAttr(i, ZeroDialect::ParamAttrHelper::getNameStr()) != nullptr;
    noteSharded(i);
    StringRef category =
        isParam                                                       ? "params"
        : fn.getArgAttr(i, ZeroDialect::GradAttrHelper::getNameStr()) ? "grads"
        : fn.getArgAttr(i, ZeroDialect::StateAttrHelper::getNameStr())
            ? "optimizer_states"
            : "activations";
    if (isHostSpace(
            fn.getArgAttr(i, ZeroDialect::SpaceAttrHelper::getNameStr()))) {
      // In host memory next to the device (optimizer=host).
      live.addHost(categoryIndex(category), *bytes);
      continue;
    }
    std::optional<int64_t> sum =
        llvm::checkedAdd(r.arguments[category], *bytes);
    if (!sum)
      return overflow("the argument bytes of category '" + category.str() +
                      "'");
    r.arguments[category] = *sum;
    live.add(categoryIndex(category), *bytes);
    if (isParam) {
      paramEltBytes = (t.getElementTypeBitWidth() + 7) / 8;
      r.largestTensor = std::max(r.largestTensor, *bytes);
      ++r.numParams;
    }
  }
  if (live.overflowed)
    return overflow("the total of the argument bytes");
  int64_t argTotal = live.total;
  for (StringRef k : {"params", "grads", "optimizer_states"})
    r.modelStates[k] = r.arguments.lookup(k);
  if (auto manifest = fn->getAttrOfType<ArrayAttr>(
          ZeroDialect::ManifestAttrHelper::getNameStr())) {
    if (failed(readStage(fn, r)))
      return failure();
    // ZeRO accounting (Rajbhandari et al.): the sharded terms divided by
    // N, padding included, as each layout says which parts are sharded
    // (zero-partition's decision, parameter by parameter). States are the
    // arguments as partitioned. A parameter counts as a shard also where
    // the step takes it so after zero-schedule deferred its gathers. Gradients
    // count at the bytes the step holds them in (an accumulator's, where the
    // layout gives one).
    std::optional<int64_t> paramElems = 0, gradBytes = 0;
    int64_t largest = 0;
    for (LayoutAttr m : manifest.getAsRange<LayoutAttr>()) {
      int64_t elems =
          m.paramsSharded() || shardedParams.contains(m.getName().getValue())
              ? m.getShard()
              : m.getNumel();
      paramElems =
          paramElems ? llvm::checkedAdd(*paramElems, elems) : std::nullopt;
      largest = std::max(largest, m.getPadded());
      std::optional<int64_t> g =
          llvm::checkedMul(m.gradsSharded() ? m.getShard() : m.getNumel(),
                           m.getGradBytes().value_or(paramEltBytes));
      gradBytes = gradBytes && g ? llvm::checkedAdd(*gradBytes, *g)
                                 : std::nullopt;
    }
    std::optional<int64_t> largestBytes =
        llvm::checkedMul(largest, paramEltBytes);
    std::optional<int64_t> params =
        paramElems ? llvm::checkedMul(*paramElems, paramEltBytes)
                   : std::nullopt;
    std::optional<int64_t> grads = gradBytes;
    if (!largestBytes || !params || !grads)
      return overflow("the model-state bytes of the manifest");
    r.largestTensor = *largestBytes;
    r.numParams = manifest.size();
    r.modelStates["params"] = *params;
    r.modelStates["grads"] = *grads;
  }
  llvm::DenseMap<Operation *, Allocated> allocated;
  live.threshold = threshold;
  live.during = &r.during;
  if (failed(simulate(fn.getBody().front(), live, allocated, r.worldSize,
                      /*topLevel=*/true, cpuTemporaries)))
    return failure();
  live.sample();
  r.excess = live.excess;
  if (live.overflowed)
    return overflow("the live bytes of the step");
  r.predictedPeak = live.peakTotal;
  r.generatedPeak = live.peakTotal - argTotal;
  r.predictedByCategory = live.peak;
  for (unsigned c = 0; c < kNumMemoryCategories; ++c)
    if (live.host.peak[c])
      r.host[kMemoryCategories[c]] = live.host.peak[c];
  r.hostPeak = live.host.peakTotal;
  r.peakAt = live.peakAt;
  r.innermostPeakAt = live.innermostPeakAt;
  return r;
}
