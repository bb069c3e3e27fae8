//===- CompileFlags.cpp - The flags zero-run and zero-compile share -------===//
//
// One table: each shared flag's name, help and setter. The help takes its
// defaults from a default CompileOptions, whose pass options are the
// generated structs of Passes.td; the compound values (--link-model,
// --compute-model, --offload) are parsed by the driver's own header-only
// parsers, so a tool and the training driver read them alike.
//
//===----------------------------------------------------------------------===//

#include "zero/Target/CompileFlags.h"

#include "zero/Support/ByteSize.h"

#include "LinkSpec.h"
#include "OffloadSpec.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::zero;

namespace {

/// `text` as an integer from `min` to `max`, or none.
std::optional<int64_t> integer(llvm::StringRef text, int64_t min, int64_t max) {
  int64_t n;
  if (text.getAsInteger(10, n) || n < min || n > max)
    return std::nullopt;
  return n;
}

llvm::Error rangeError(llvm::StringRef name, int64_t min, int64_t max,
                       llvm::StringRef given) {
  return llvm::createStringError("option '--" + name + "' expects " +
                                 llvm::Twine(min) + " to " + llvm::Twine(max) +
                                 ", got '" + given + "'");
}

/// A default as the help prints it.
std::string number(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

/// The spellings of the targets and placements on the command line (the
/// passes' enum options spell them the same way).
const char *targetName(Target target) {
  return target == Target::CUDA ? "cuda" : "cpu";
}

Placement placement(llvm::StringRef name) {
  return name == "nvme"   ? Placement::Nvme
         : name == "host" ? Placement::Host
                          : Placement::Device;
}

constexpr int64_t kMaxStage = 3, kMaxMicroBatches = 1 << 20, kMaxOptLevel = 3;

/// The shared flags, in the order the tools' help lists them.
const CompileFlag kFlags[] = {
    {"stage", "S",
     [](const CompileOptions &defaults) {
       return llvm::formatv(
                  "partition a training step with zero-partition for ZeRO "
                  "stage S: 0 data parallel, 1 optimizer states sharded, 2 "
                  "and gradients, 3 and parameters (default: {0} on more "
                  "than one rank; on one rank without --stage, the contract "
                  "functions as they are)",
                  defaults.pipeline.partition.stage)
           .str();
     },
     [](CompileFlags &flags, llvm::StringRef value) -> llvm::Error {
       std::optional<int64_t> stage = integer(value, 0, kMaxStage);
       if (!stage)
         return rangeError("stage", 0, kMaxStage, value);
       flags.options.pipeline.partition.stage = *stage;
       flags.options.stageGiven = true;
       return llvm::Error::success();
     }},
    {"accumulate", "K",
     [](const CompileOptions &defaults) {
       return llvm::formatv(
                  "gradient accumulation: zero-partition runs forward and "
                  "backward on K micro-batches per step, each the size of "
                  "the module's batch, and the optimizer once on their mean "
                  "gradient (the global batch becomes K micro-batches per "
                  "rank; default {0})",
                  defaults.pipeline.partition.accumulate)
           .str();
     },
     [](CompileFlags &flags, llvm::StringRef value) -> llvm::Error {
       std::optional<int64_t> k = integer(value, 1, kMaxMicroBatches);
       if (!k)
         return llvm::createStringError(
             "option '--accumulate' expects at least 1 "
             "micro-batch per step (at most " +
             llvm::Twine(kMaxMicroBatches) + "), got '" + value + "'");
       flags.options.pipeline.partition.accumulate = *k;
       return llvm::Error::success();
     }},
    {"param-persistence-threshold", "N",
     [](const CompileOptions &defaults) {
       return llvm::formatv(
                  "stage 3: parameters of fewer than N elements stay whole "
                  "on every rank (no gathers; their gradients and optimizer "
                  "states stay sharded), as DeepSpeed's "
                  "stage3_param_persistence_threshold: N times their bytes "
                  "for a gather less each time they are read (default {0}: "
                  "every parameter sharded; results are bit-identical "
                  "either way)",
                  defaults.pipeline.partition.paramPersistenceThreshold)
           .str();
     },
     [](CompileFlags &flags, llvm::StringRef value) -> llvm::Error {
       std::optional<int64_t> n =
           integer(value, 0, std::numeric_limits<int64_t>::max());
       if (!n)
         return llvm::createStringError(
             "option '--param-persistence-threshold' expects a number of "
             "elements >= 0, got '" +
             value + "'");
       flags.options.pipeline.partition.paramPersistenceThreshold = *n;
       return llvm::Error::success();
     }},
    {"opt-level", "N",
     [](const CompileOptions &defaults) {
       return llvm::formatv("LLVM optimization level, 0-{0} (default {1})",
                            kMaxOptLevel, defaults.object.optLevel)
           .str();
     },
     [](CompileFlags &flags, llvm::StringRef value) -> llvm::Error {
       std::optional<int64_t> level = integer(value, 0, kMaxOptLevel);
       if (!level)
         return rangeError("opt-level", 0, kMaxOptLevel, value);
       flags.options.object.optLevel = static_cast<unsigned>(*level);
       return llvm::Error::success();
     }},
    {"target", "cpu|cuda",
     [](const CompileOptions &defaults) {
       return llvm::formatv(
                  "what the step runs on (default {0}): cuda lowers loop "
                  "nests to GPU kernels (NVVM, {1} by default) and runs "
                  "them, cuBLASLt GEMMs and copies on one device, on one "
                  "rank (NCCL collectives are not built yet); the CUDA "
                  "driver and cuBLASLt are found at run time "
                  "(LD_LIBRARY_PATH)",
                  targetName(defaults.pipeline.lower.target),
                  defaults.pipeline.lower.gpuChip)
           .str();
     },
     [](CompileFlags &flags, llvm::StringRef value) -> llvm::Error {
       for (Target target : {Target::CPU, Target::CUDA})
         if (value == targetName(target)) {
           flags.options.pipeline.lower.target = target;
           return llvm::Error::success();
         }
       return llvm::createStringError(
           "option '--target' expects cpu or cuda, got '" + value + "'");
     }},
    {"target-cpu", "CPU",
     [](const CompileOptions &defaults) {
       return defaults.object.cpu +
              " (default) or an LLVM CPU name (x86-64-v3, ...)";
     },
     [](CompileFlags &flags, llvm::StringRef value) -> llvm::Error {
       flags.options.object.cpu = value.str();
       return llvm::Error::success();
     }},
    {"no-gemm-runtime", "",
     [](const CompileOptions &) {
       return std::string(
           "lower matmuls to loops instead of runtime GEMM calls");
     },
     [](CompileFlags &flags, llvm::StringRef) -> llvm::Error {
       flags.options.pipeline.lower.gemmToRuntime = false;
       return llvm::Error::success();
     }},
    {"no-schedule", "",
     [](const CompileOptions &) {
       return std::string(
           "leave every collective blocking where zero-partition put it "
           "(default: zero-schedule overlaps them with compute; at stages "
           "1-2 it updates parameters in the backward pass or keeps their "
           "shards for the next step's gathers, whichever its cost model "
           "predicts faster, parameter by parameter; results are "
           "bit-identical either way)");
     },
     [](CompileFlags &flags, llvm::StringRef) -> llvm::Error {
       flags.options.pipeline.runSchedule = false;
       return llvm::Error::success();
     }},
    {"link-model", "bw=G,latency=U",
     [](const CompileOptions &defaults) {
       return llvm::formatv(
                  "the link zero-schedule's cost model assumes: G GB/s, U "
                  "microseconds per collective (default: zero-run's "
                  "--sim-link where given, else bw={0},latency={1}; give "
                  "what the run will simulate)",
                  number(defaults.pipeline.schedule.linkGbps),
                  number(defaults.pipeline.schedule.linkLatencyUs))
           .str();
     },
     [](CompileFlags &flags, llvm::StringRef value) -> llvm::Error {
       return flags.setLink(value, "--link-model");
     }},
    {"compute-model", "gemm=G,vector=V,memory=M",
     [](const CompileOptions &defaults) {
       const ZeroSchedulePassOptions &schedule = defaults.pipeline.schedule;
       return llvm::formatv(
                  "the compute rates of one rank zero-schedule's cost model "
                  "assumes: GEMMs at G GFLOP/s, other linalg ops at V "
                  "GFLOP/s plus their bytes at M GB/s (default "
                  "gemm={0},vector={1},memory={2}; any part may be left "
                  "out). Fit them to the machine from a run's --stats-json "
                  "as bench/overlap.py does (docs/zero-form.md, \"The cost "
                  "model\")",
                  number(schedule.gemmGflops), number(schedule.vectorGflops),
                  number(schedule.memoryGbps))
           .str();
     },
     [](CompileFlags &flags, llvm::StringRef value) -> llvm::Error {
       ZeroSchedulePassOptions &schedule = flags.options.pipeline.schedule;
       std::string error;
       if (!::zero::driver::parseComputeSpec(value.str(), schedule.gemmGflops,
                                             schedule.vectorGflops,
                                             schedule.memoryGbps, error))
         return llvm::createStringError(error);
       return llvm::Error::success();
     }},
    {"bucket-bytes", "SIZE",
     [](const CompileOptions &defaults) {
       return llvm::formatv(
                  "zero-schedule merges consecutive all-gathers, "
                  "reduce-scatters and all-reduces smaller than SIZE "
                  "(full-size bytes: 65536, 256KiB, 1MB) into buckets of at "
                  "most SIZE: one latency and one hand-off to the "
                  "communication thread each (default {0}; 0: no buckets). "
                  "Results are bit-identical for every SIZE",
                  defaults.pipeline.schedule.bucketBytes)
           .str();
     },
     [](CompileFlags &flags, llvm::StringRef value) -> llvm::Error {
       std::optional<int64_t> bytes = parseByteSize(value);
       if (!bytes)
         return llvm::createStringError(
             "option '--bucket-bytes' expects a byte count "
             "such as 65536, 256KiB or 1MB (0: no buckets), "
             "got '" +
             value + "'");
       flags.options.pipeline.schedule.bucketBytes = *bytes;
       return llvm::Error::success();
     }},
    {"memory-budget", "SIZE",
     [](const CompileOptions &) {
       return std::string(
           "bytes one rank may hold at the step's peak, as "
           "zero-memory-report predicts it (40000000, 40MB, 38MiB): "
           "zero-remat recomputes forward values in the backward pass "
           "(fewest FLOPs per byte first) until the step fits, and "
           "prefetches that would exceed it start later; a step that cannot "
           "fit does not compile (the error says by how much)");
     },
     [](CompileFlags &flags, llvm::StringRef value) -> llvm::Error {
       std::optional<int64_t> bytes = parseByteSize(value);
       if (!bytes || *bytes == 0)
         return llvm::createStringError(
             "option '--memory-budget' expects a positive byte "
             "count such as 40000000, 40MB or 38MiB, got '" +
             value + "'");
       flags.options.pipeline.memoryBudget = *bytes;
       return llvm::Error::success();
     }},
};

/// Appends `flag`'s help entry: the flag from column 2 (its text on the
/// next line when the flag reaches column 23), the text from column 25,
/// wrapped before column 80.
void appendEntry(std::string &out, const std::string &flag,
                 llvm::StringRef text) {
  constexpr size_t kIndent = 25, kWidth = 79;
  std::string line = "  " + flag;
  if (line.size() + 2 > kIndent) {
    out += line + "\n";
    line.clear();
  }
  line.resize(kIndent, ' ');
  llvm::SmallVector<llvm::StringRef> words;
  text.split(words, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef word : words) {
    if (line.size() > kIndent && line.size() + 1 + word.size() > kWidth) {
      out += line + "\n";
      line.assign(kIndent, ' ');
    }
    if (line.size() > kIndent)
      line += ' ';
    line += word.str();
  }
  out += line + "\n";
}
} // namespace

const CompileFlag *CompileFlags::lookup(llvm::StringRef name) {
  for (const CompileFlag &flag : kFlags)
    if (flag.name == name)
      return &flag;
  return nullptr;
}

std::string CompileFlags::help() {
  const CompileOptions defaults;
  std::string text;
  for (const CompileFlag &flag : kFlags)
    appendEntry(text,
                "--" + flag.name.str() +
                    (flag.takesValue() ? " " + flag.value.str() : ""),
                flag.help(defaults));
  return text;
}

llvm::Error CompileFlags::set(const CompileFlag &flag, llvm::StringRef value) {
  if (llvm::Error error = flag.set(*this, value))
    return error;
  givenNames.insert(flag.name);
  return llvm::Error::success();
}

llvm::Error CompileFlags::setLink(llvm::StringRef spec,
                                  llvm::StringRef option) {
  double gbps = 0, latencyUs = 0;
  std::string error;
  if (!::zero::driver::parseLinkSpec(spec.str(), gbps, latencyUs, error,
                                     option.str().c_str()))
    return llvm::createStringError(error);
  ZeroSchedulePassOptions &schedule = options.pipeline.schedule;
  // An infinitely fast link: collectives cost their latency.
  schedule.linkGbps = std::isinf(gbps) ? 1e9 : gbps;
  schedule.linkLatencyUs = latencyUs;
  return llvm::Error::success();
}

llvm::Error CompileFlags::setPlacements(llvm::StringRef spec,
                                        std::string &nvmeDir) {
  ::zero::driver::OffloadSpec offload;
  std::string error;
  if (!::zero::driver::parseOffloadSpec(spec.str(), offload, error))
    return llvm::createStringError(error);
  options.pipeline.offload.optimizer = placement(offload.optimizer);
  options.pipeline.offload.params = placement(offload.params);
  nvmeDir = offload.nvmeDir;
  return llvm::Error::success();
}

llvm::Error CompileFlags::check() const {
  if (given("bucket-bytes") && !options.pipeline.runSchedule)
    return llvm::createStringError(
        "--bucket-bytes sizes zero-schedule's buckets, and "
        "--no-schedule leaves the collectives unscheduled: "
        "drop one of the two");
  return llvm::Error::success();
}
