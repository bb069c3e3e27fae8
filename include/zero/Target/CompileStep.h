//===- CompileStep.h - One compilation for every way of running -*- C++ -*-===//
//
// zero-run and zero-compile compile a step the same way: find out which form
// the module is in (a training-step contract, a module zero-partition already
// rewrote, or one already lowered with its step ABI), run the registered
// pipeline that form needs (zero-train-pipeline or zero-lower-cpu), and emit
// an object file (ObjectFile.h).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TARGET_COMPILESTEP_H
#define ZERO_TARGET_COMPILESTEP_H

#include "zero/Target/ObjectFile.h"
#include "zero/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>

#include <optional>
#include <string>

namespace mlir::zero {

enum class StepForm {
  /// forward_backward and optimizer (docs/training-step-ir.md).
  Contract,
  /// @train_step from zero-partition, with zero.stage and zero.world_size.
  Partitioned,
  /// LLVM dialect with the step ABI (zero-lower-cpu's output).
  Lowered,
};

struct StepInfo {
  StepForm form = StepForm::Contract;
  /// Whether zero-partition rewrote the module (Partitioned, or Lowered
  /// from a partitioned module), and what it was run with.
  bool partitioned = false;
  int64_t stage = 0, worldSize = 1;
};

/// The failure of a parse or a pipeline whose diagnostics are printed
/// already, one located line each: a tool that gets it prints nothing more
/// and exits non-zero.
class DiagnosedError : public llvm::ErrorInfo<DiagnosedError> {
public:
  static char ID;
  explicit DiagnosedError(std::string what) : what(std::move(what)) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

private:
  std::string what;
};

/// Prints each diagnostic as one line, `file:line:col: error: message`,
/// without the source line under it: a located diagnostic on a function
/// would otherwise echo its signature, which in a real model's step is
/// kilobytes. Notes follow as lines of their own.
class OneLineDiagnosticHandler : public SourceMgrDiagnosticHandler {
public:
  OneLineDiagnosticHandler(llvm::SourceMgr &mgr, MLIRContext *ctx);
};

/// A step module read for compilation: a context with every dialect the
/// pipelines use, and diagnostics printed one line each with their source
/// locations for as long as the loader lives (the passes report through it
/// too).
class StepLoader {
public:
  StepLoader();
  /// Parses `input` (named `name` in messages); the parser's diagnostics
  /// are printed, and the error is a DiagnosedError.
  llvm::Expected<OwningOpRef<ModuleOp>>
  parse(std::unique_ptr<llvm::MemoryBuffer> input, llvm::StringRef name);
  MLIRContext &getContext() { return *context; }

private:
  std::unique_ptr<MLIRContext> context;
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<OneLineDiagnosticHandler> handler;
};

/// The pipeline compileStep runs on `module` (empty: none), printed with
/// every option of every pass spelled out: what a cache of compiled steps
/// keys a build by, so that a pass option added later changes the key
/// without anyone listing it.
llvm::Expected<std::string> printedPipeline(ModuleOp module,
                                            const struct CompileOptions &options);

/// Classifies `module`.
StepInfo inspectStep(ModuleOp module);

/// The --target option's help, as zero-compile and zero-run print it (a
/// string literal, so it joins their usage texts).
#define ZERO_TARGET_OPTION_HELP                                                \
  "  --target cpu|cuda      what the step runs on (default cpu): cuda lowers\n" \
  "                         loop nests to GPU kernels (NVVM, sm_90 by "      \
  "default)\n"                                                               \
  "                         and runs them, cuBLASLt GEMMs and copies on one\n" \
  "                         device, on one rank (NCCL collectives are not "  \
  "built\n"                                                                  \
  "                         yet); the CUDA driver and cuBLASLt are found at " \
  "run\n"                                                                    \
  "                         time (LD_LIBRARY_PATH)\n"

/// --compute-model's help, the same in zero-compile and zero-run.
#define ZERO_COMPUTE_MODEL_OPTION_HELP                                         \
  "  --compute-model gemm=G,vector=V,memory=M\n"                              \
  "                         the compute rates of one rank zero-schedule's\n"   \
  "                         cost model assumes: GEMMs at G GFLOP/s, other\n"   \
  "                         linalg ops at V GFLOP/s plus their bytes at M\n"   \
  "                         GB/s (default gemm=100,vector=16,memory=20; any\n" \
  "                         part may be left out). Fit them to the machine\n"  \
  "                         from a run's --stats-json as bench/overlap.py\n"   \
  "                         does (docs/zero-form.md, \"The cost model\")\n"

/// --bucket-bytes' help, the same in zero-compile and zero-run.
#define ZERO_BUCKET_BYTES_OPTION_HELP                                          \
  "  --bucket-bytes SIZE    zero-schedule merges consecutive all-gathers,\n"   \
  "                         reduce-scatters and all-reduces smaller than\n"   \
  "                         SIZE (full-size bytes: 65536, 256KiB, 1MB) into\n" \
  "                         buckets of at most SIZE: one latency and one\n"    \
  "                         hand-off to the communication thread each\n"      \
  "                         (default 65536; 0: no buckets). Results are\n"    \
  "                         bit-identical for every SIZE\n"

struct CompileOptions {
  /// Contract modules: partition for this stage (0-3); none: lower the
  /// contract functions as they are on one rank, stage 0 on more.
  std::optional<int64_t> stage;
  /// The number of ranks the step runs on.
  int64_t worldSize = 1;
  /// Micro-batches per step (zero-partition's accumulate; contract modules).
  int64_t accumulate = 1;
  bool gemmToRuntime = true;
  /// zero-schedule, with its cost model's link (GB/s, microseconds).
  bool schedule = true;
  /// zero-schedule's defaults (Passes.td, the one place they are written).
  double linkGbps = ZeroSchedulePassOptions().linkGbps;
  double linkLatencyUs = ZeroSchedulePassOptions().linkLatencyUs;
  /// The cost model's compute rates of one rank (zero-schedule's
  /// gemm-gflops, vector-gflops, memory-gbps).
  double gemmGflops = ZeroSchedulePassOptions().gemmGflops,
         vectorGflops = ZeroSchedulePassOptions().vectorGflops,
         memoryGbps = ZeroSchedulePassOptions().memoryGbps;
  /// zero-schedule's memory budget in bytes per rank (0: none).
  int64_t memoryBudget = 0;
  /// zero-schedule's bucket-bytes: collectives smaller than this merge
  /// into buckets of at most this many bytes (0: no buckets).
  int64_t bucketBytes = ZeroSchedulePassOptions().bucketBytes;
  /// zero-offload's placements: "device", "host" or "nvme".
  std::string offloadOptimizer = "device", offloadParams = "device";
  /// What the step is lowered for: "cpu" or "cuda" (zero-lower's target;
  /// the step's descriptor then names the runtime backend that runs it).
  std::string target = "cpu";
  ObjectOptions object;
};

/// --bucket-bytes' value in zero-compile and zero-run: a byte count (0: no
/// buckets), or the one-line error naming the option.
llvm::Expected<int64_t> parseBucketBytesOption(llvm::StringRef text);

/// `value` as text that parses back to the same double ("%.17g";
/// "inf" for infinity): for pass options in textual pipelines and for cache
/// keys. llvm::formatv's default for a double keeps 2 decimals, which made
/// a 0.150197 GB/s link reach zero-schedule as 0.15.
std::string exactNumber(double value);

/// The textual pipeline `compileStep` runs on a module of `info`'s form, as
/// passes on the module without the `builtin.module(...)` anchor (empty for
/// a lowered module), or an error naming the mismatch (a module
/// partitioned for other ranks or another stage).
llvm::Expected<std::string> pipelineFor(const StepInfo &info,
                                        const CompileOptions &options);

/// Lowers `module` in place with `pipelineFor`'s pipeline and emits its
/// object file. Diagnostics of the passes go to the context's handler; the
/// error is one line.
llvm::Expected<std::string> compileStep(ModuleOp module,
                                        const CompileOptions &options);

} // namespace mlir::zero

#endif // ZERO_TARGET_COMPILESTEP_H
