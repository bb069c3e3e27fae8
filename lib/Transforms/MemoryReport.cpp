//===- MemoryReport.cpp - Static per-rank memory of a step ----------------===//
//
// zero-memory-report: the ZeRO model-state accounting of a step and a
// prediction of its peak bytes, simulated over the allocations and frees of
// the bufferized functions. Tests compare it with what the runtime measures.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/Allocations.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROMEMORYREPORTPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {

int64_t bytesOf(MemRefType t) {
  return t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8);
}

/// Scratch the runtime's collective `call` allocates while it runs (its
/// ZRT_COMM receive buffers; docs/decisions.md, "Collectives reduce in one
/// fixed order"): N blocks of the segment, the segment bounded by the
/// 16 MiB bucket, and a second such buffer for an all-reduce whose count is
/// not a multiple of N.
int64_t commScratch(func::CallOp call, int64_t n) {
  StringRef callee = call.getCallee();
  if (n <= 1 || !callee.starts_with("zrt_"))
    return 0;
  int64_t b = callee.ends_with("_f64") ? 8 : 4;
  if (callee.starts_with("zrt_all_reduce_scalar_"))
    return n * b;
  bool reduceScatter = callee.starts_with("zrt_reduce_scatter_");
  bool allReduce = callee.starts_with("zrt_all_reduce_");
  if (!reduceScatter && !allReduce)
    return 0;
  IntegerAttr count;
  if (call.getNumOperands() < 3 ||
      !matchPattern(call.getOperand(2), m_Constant(&count)))
    return 0;
  int64_t c = count.getInt();
  int64_t block = reduceScatter ? c : (c + n - 1) / n;
  constexpr int64_t kBucket = 16 << 20;
  int64_t segment = std::min(block, std::max<int64_t>(1, kBucket / (n * b)));
  int64_t scratch = n * segment * b;
  if (allReduce && c % n != 0)
    scratch *= 2;
  return scratch;
}

/// The runtime's categories: kAllocCategories, then the collectives' comm.
constexpr unsigned kNumCategories = std::size(kAllocCategories) + 1;
constexpr unsigned kComm = kNumCategories - 1;
constexpr StringLiteral kCategoryNames[kNumCategories] = {
    kAllocCategories[0], kAllocCategories[1], kAllocCategories[2],
    kAllocCategories[3], "comm"};

/// The index of a category name; the dialect verifier admits only the
/// names of kAllocCategories, anything else would count as activations.
unsigned categoryIndex(StringRef name) {
  unsigned index = llvm::find(kCategoryNames, name) - std::begin(kCategoryNames);
  return index < kNumCategories ? index : categoryIndex("activations");
}

/// Live bytes by category and their peaks, each category's peak on its own
/// (as the runtime keeps them) and the peak of the total.
struct Live {
  std::array<int64_t, kNumCategories> bytes{}, peak{};
  int64_t total = 0, peakTotal = 0;

  void add(unsigned category, int64_t n) {
    bytes[category] += n;
    total += n;
    peak[category] = std::max(peak[category], bytes[category]);
    peakTotal = std::max(peakTotal, total);
  }
  /// Peaks reached by `other`, a simulation that started from this state;
  /// what it left live stays live.
  void merge(const Live &other) {
    for (unsigned c = 0; c < kNumCategories; ++c) {
      peak[c] = std::max(peak[c], other.peak[c]);
      bytes[c] = std::max(bytes[c], other.bytes[c]);
    }
    peakTotal = std::max(peakTotal, other.peakTotal);
    total = std::max(total, other.total);
  }
};

/// A live allocation: its bytes and category.
struct Allocated {
  int64_t bytes;
  unsigned category;
};

/// Simulates the live bytes of `block`'s allocations in program order, on
/// top of what `live` holds on entry. Allocations not freed in the block
/// stay live.
void simulate(Block &block, Live &live,
              llvm::DenseMap<Operation *, Allocated> &allocated, int64_t n) {
  for (Operation &op : block) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      int64_t scratch = commScratch(call, n);
      live.add(kComm, scratch);
      live.add(kComm, -scratch);
      continue;
    }
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      int64_t bytes = bytesOf(alloc.getType());
      int64_t align = alloc.getAlignment().value_or(1);
      bytes = (bytes + align - 1) / align * align;
      unsigned category = categoryIndex(getAllocationCategory(alloc));
      allocated[alloc] = {bytes, category};
      live.add(category, bytes);
      continue;
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      if (Operation *a = getAllocation(dealloc.getMemref()))
        if (auto it = allocated.find(a); it != allocated.end()) {
          live.add(it->second.category, -it->second.bytes);
          allocated.erase(it);
        }
      continue;
    }
    // Nested regions (loop bodies, conditionals): each is simulated once
    // from the current state; what they leave live stays live.
    Live before = live;
    for (Region &region : op.getRegions())
      for (Block &inner : region) {
        Live innerLive = before;
        simulate(inner, innerLive, allocated, n);
        live.merge(innerLive);
      }
  }
}

struct Report {
  func::FuncOp fn;
  int64_t stage = -1, worldSize = 1;
  llvm::StringMap<int64_t> modelStates; ///< params, grads, optimizer_states
  llvm::StringMap<int64_t> arguments;   ///< by category
  int64_t largestTensor = 0; ///< bytes of the largest padded parameter
  int64_t numParams = 0;
  int64_t generatedPeak = 0;
  int64_t predictedPeak = 0;
  /// Predicted peak per runtime category (arguments plus generated code).
  std::array<int64_t, kNumCategories> predictedByCategory{};
};

struct ZeroMemoryReportPass
    : public zero::impl::ZeroMemoryReportPassBase<ZeroMemoryReportPass> {
  using Base::Base;

  void runOnOperation() override {
    std::vector<Report> reports;
    bool ok = true;
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      auto role =
          fn->getAttrOfType<StringAttr>(ZeroDialect::RoleAttrHelper::getNameStr());
      if (!role || fn.isExternal())
        continue;
      if (llvm::any_of(fn.getArgumentTypes(),
                       [](Type t) { return isa<TensorType>(t); })) {
        fn.emitOpError("zero-memory-report needs the bufferized step: run "
                       "zero-bufferize-step first");
        ok = false;
        continue;
      }
      reports.push_back(reportFor(fn));
    }
    if (!ok)
      return signalPassFailure();
    if (output.empty()) {
      for (Report &r : reports) {
        InFlightDiagnostic d = r.fn.emitRemark() << "zero-memory-report: ";
        if (r.stage >= 0)
          d << "stage " << r.stage << " on " << r.worldSize << " ranks: ";
        d << "model states params " << r.modelStates["params"] << " grads "
          << r.modelStates["grads"] << " optimizer_states "
          << r.modelStates["optimizer_states"] << " bytes; generated peak "
          << r.generatedPeak << " bytes; predicted peak total "
          << r.predictedPeak << " bytes (";
        for (unsigned c = 0; c < kNumCategories; ++c)
          d << (c ? ", " : "") << kCategoryNames[c] << " "
            << r.predictedByCategory[c];
        d << ")";
      }
      return;
    }
    llvm::json::Array array;
    for (Report &r : reports) {
      llvm::json::Object states, args, byCategory;
      for (unsigned c = 0; c < kNumCategories; ++c)
        byCategory[kCategoryNames[c]] = r.predictedByCategory[c];
      for (auto &kv : r.modelStates)
        states[kv.getKey()] = kv.getValue();
      for (auto &kv : r.arguments)
        args[kv.getKey()] = kv.getValue();
      array.push_back(llvm::json::Object{{"function", r.fn.getSymName().str()},
                                         {"stage", r.stage},
                                         {"world_size", r.worldSize},
                                         {"model_state_bytes", std::move(states)},
                                         {"argument_bytes", std::move(args)},
                                         {"generated_peak_bytes", r.generatedPeak},
                                         {"predicted_peak_bytes", r.predictedPeak},
                                         {"predicted_peak_bytes_by_category",
                                          std::move(byCategory)},
                                         {"largest_tensor_bytes", r.largestTensor},
                                         {"num_params", r.numParams}});
    }
    std::error_code ec;
    llvm::raw_fd_ostream os(output, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      getOperation().emitError() << "zero-memory-report: cannot write '"
                                 << output << "': " << ec.message();
      return signalPassFailure();
    }
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(array))) << "\n";
  }

  Report reportFor(func::FuncOp fn) {
    Report r;
    r.fn = fn;
    for (StringRef k : {"params", "grads", "optimizer_states"})
      r.modelStates[k] = 0;
    // Buffers the caller passes, by the category a driver counts them in.
    Live live;
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
      auto t = dyn_cast<MemRefType>(fn.getArgument(i).getType());
      if (!t)
        continue;
      StringRef category =
          fn.getArgAttr(i, ZeroDialect::ParamAttrHelper::getNameStr())
              ? "params"
          : fn.getArgAttr(i, ZeroDialect::GradAttrHelper::getNameStr())
              ? "grads"
          : fn.getArgAttr(i, ZeroDialect::StateAttrHelper::getNameStr())
              ? "optimizer_states"
              : "activations";
      r.arguments[category] += bytesOf(t);
      live.add(categoryIndex(category), bytesOf(t));
    }
    int64_t argTotal = live.total;
    if (auto manifest = fn->getAttrOfType<ArrayAttr>(
            ZeroDialect::ManifestAttrHelper::getNameStr())) {
      r.stage = fn->getAttrOfType<IntegerAttr>(
                      ZeroDialect::StageAttrHelper::getNameStr())
                    .getInt();
      r.worldSize = fn->getAttrOfType<IntegerAttr>(
                          ZeroDialect::WorldSizeAttrHelper::getNameStr())
                        .getInt();
      // ZeRO accounting (Rajbhandari et al.): the sharded terms divided by
      // N, padding included. States are the arguments as partitioned.
      int64_t eltBytes = 0, fullElems = 0, shardElems = 0;
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
        if (auto t = dyn_cast<MemRefType>(fn.getArgument(i).getType());
            t && fn.getArgAttr(i, ZeroDialect::ParamAttrHelper::getNameStr()))
          eltBytes = (t.getElementTypeBitWidth() + 7) / 8;
      for (Attribute a : manifest) {
        auto d = cast<DictionaryAttr>(a);
        fullElems += d.getAs<IntegerAttr>("numel").getInt();
        shardElems += d.getAs<IntegerAttr>("shard").getInt();
        r.largestTensor =
            std::max(r.largestTensor, d.getAs<IntegerAttr>("padded").getInt());
      }
      r.largestTensor *= eltBytes;
      r.numParams = manifest.size();
      r.modelStates["params"] =
          (r.stage >= 3 ? shardElems : fullElems) * eltBytes;
      r.modelStates["grads"] =
          (r.stage >= 2 ? shardElems : fullElems) * eltBytes;
      r.modelStates["optimizer_states"] = r.arguments["optimizer_states"];
    } else {
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
        if (auto t = dyn_cast<MemRefType>(fn.getArgument(i).getType());
            t && fn.getArgAttr(i, ZeroDialect::ParamAttrHelper::getNameStr())) {
          r.largestTensor = std::max(r.largestTensor, bytesOf(t));
          ++r.numParams;
        }
      r.modelStates["params"] = r.arguments["params"];
      r.modelStates["grads"] = r.arguments["grads"];
      r.modelStates["optimizer_states"] = r.arguments["optimizer_states"];
    }
    llvm::DenseMap<Operation *, Allocated> allocated;
    simulate(fn.getBody().front(), live, allocated, r.worldSize);
    r.predictedPeak = live.peakTotal;
    r.generatedPeak = live.peakTotal - argTotal;
    r.predictedByCategory = live.peak;
    return r;
  }
};
} // namespace
