//===- MemoryReport.cpp - Static per-rank memory of a step ----------------===//
//
// zero-memory-report: the ZeRO model-state accounting of a step and a
// prediction of its peak bytes, simulated over the allocations and frees of
// the bufferized functions. Tests compare it with what the runtime measures.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/StepMemory.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Support/OutputFile.h"
#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROMEMORYREPORTPASS
#include "zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {

/// The peak device bytes of a run of the module's step, as the training
/// driver runs it. A partitioned step is one function: its own peak. An
/// unpartitioned one (the contract's forward_backward, then its optimizer)
/// has the driver hold every model state across both calls, so forward_
/// backward's peak does not include the optimizer states it never takes:
/// the run's peak is each category's largest peak or model-state bytes,
/// summed (activations live only inside a function). What a step needs of
/// a device is this, not a function's own peak.
int64_t predictRunPeak(
    const std::vector<std::pair<func::FuncOp, StepMemory>> &reports) {
  int64_t single = 0;
  for (const auto &entry : reports)
    single = std::max(single, entry.second.predictedPeak);
  if (reports.size() < 2 ||
      llvm::any_of(reports, [](const auto &e) { return e.second.stage != -1; }))
    return single;
  int64_t total = 0;
  for (unsigned c = 0; c < kNumMemoryCategories; ++c) {
    int64_t most = 0;
    for (const auto &[fn, r] : reports)
      most = std::max({most, r.predictedByCategory[c],
                       r.modelStates.lookup(kMemoryCategories[c])});
    total += most;
  }
  return std::max(single, total);
}

struct ZeroMemoryReportPass
    : public zero::impl::ZeroMemoryReportPassBase<ZeroMemoryReportPass> {
  using Base::Base;

  void runOnOperation() override {
    std::vector<std::pair<func::FuncOp, StepMemory>> reports;
    bool ok = true;
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      auto role = fn->getAttrOfType<StringAttr>(
          ZeroDialect::RoleAttrHelper::getNameStr());
      if (!role || fn.isExternal())
        continue;
      if (llvm::any_of(fn.getArgumentTypes(),
                       [](Type t) { return isa<TensorType>(t); })) {
        fn.emitOpError("zero-memory-report needs the bufferized step: run "
                       "zero-bufferize-step first");
        ok = false;
        continue;
      }
      FailureOr<StepMemory> r = predictStepMemory(
          fn, std::numeric_limits<int64_t>::max(), target == Target::CPU);
      if (failed(r)) {
        ok = false;
        continue;
      }
      reports.emplace_back(fn, std::move(*r));
    }
    if (!ok)
      return signalPassFailure();
    int64_t runPeak = predictRunPeak(reports);
    if (output.empty()) {
      for (auto &[fn, r] : reports) {
        InFlightDiagnostic d = fn.emitRemark() << "zero-memory-report: ";
        if (r.stage >= 0)
          d << "stage " << r.stage << " on " << r.worldSize << " ranks: ";
        d << "model states params " << r.modelStates["params"] << " grads "
          << r.modelStates["grads"] << " optimizer_states "
          << r.modelStates["optimizer_states"] << " bytes; generated peak "
          << r.generatedPeak << " bytes; predicted peak total "
          << r.predictedPeak << " bytes (";
        for (unsigned c = 0; c < kNumMemoryCategories; ++c)
          d << (c ? ", " : "") << kMemoryCategories[c] << " "
            << r.predictedByCategory[c];
        d << ")";
        if (r.hostPeak)
          d << "; in host memory: optimizer_states "
            << r.host.lookup("optimizer_states") << " params "
            << r.host.lookup("params") << " grads " << r.host.lookup("grads")
            << " bytes, peak " << r.hostPeak;
        if (!r.nvme.empty())
          d << "; on NVMe: params " << r.nvme.lookup("params")
            << " optimizer_states " << r.nvme.lookup("optimizer_states")
            << " bytes";
        if (runPeak != r.predictedPeak)
          d << "; run peak " << runPeak
            << " bytes with the model states the driver holds across the "
               "contract's functions";
      }
      return;
    }
    llvm::json::Array array;
    for (auto &[fn, r] : reports) {
      llvm::json::Object states, args, byCategory;
      for (unsigned c = 0; c < kNumMemoryCategories; ++c)
        byCategory[kMemoryCategories[c]] = r.predictedByCategory[c];
      for (auto &kv : r.modelStates)
        states[kv.getKey()] = kv.getValue();
      for (auto &kv : r.arguments)
        args[kv.getKey()] = kv.getValue();
      llvm::json::Object nvme, host;
      for (auto &kv : r.nvme)
        nvme[kv.getKey()] = kv.getValue();
      for (auto &kv : r.host)
        host[kv.getKey()] = kv.getValue();
      array.push_back(llvm::json::Object{
          {"function", fn.getSymName().str()},
          {"stage", r.stage},
          {"world_size", r.worldSize},
          {"model_state_bytes", std::move(states)},
          {"argument_bytes", std::move(args)},
          {"generated_peak_bytes", r.generatedPeak},
          {"predicted_peak_bytes", r.predictedPeak},
          {"predicted_peak_bytes_by_category", std::move(byCategory)},
          {"nvme_bytes_by_category", std::move(nvme)},
          {"host_peak_bytes_by_category", std::move(host)},
          {"host_peak_bytes", r.hostPeak},
          {"run_peak_bytes", runPeak},
          {"largest_tensor_bytes", r.largestTensor},
          {"num_params", r.numParams}});
    }
    llvm::json::Value json(std::move(array));
    if (llvm::Error e = writeOutputFile(output, [&](llvm::raw_ostream &os) {
          os << llvm::formatv("{0:2}", json) << "\n";
        })) {
      // One line: a write error is about the file, not the module's text.
      mlir::emitError(getOperation().getLoc())
          << "zero-memory-report: " << llvm::toString(std::move(e));
      return signalPassFailure();
    }
  }
};
} // namespace
