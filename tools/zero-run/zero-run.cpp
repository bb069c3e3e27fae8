//===- zero-run.cpp - Train a training-step module --------------*- C++ -*-===//
//
// zero-run MODULE.mlir: verifies a training step, compiles it with
// zero-lower-cpu, JIT-runs it through MLIR's ExecutionEngine against the zero
// runtime, and trains: initial parameters from a seed (or a file), batches
// from a token file (or the built-in corpus, or synthetic regression data),
// AdamW hyper-parameters from flags. It prints progress, writes statistics
// and final parameters on request, and can check gradients against finite
// differences.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/TrainingStep.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/InitAll.h"
#include "zero/Runner/CompiledStep.h"
#include "zero/Runner/Inputs.h"
#include "zero/Support/ParserGuard.h"
#include "zero/Transforms/Passes.h"

#include "zero/runtime.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

using namespace mlir;
using namespace mlir::zero;

namespace {
// zero-run parses its own command line: LLVM's option registry already owns
// names we need (`stats-json` is LLVM's statistics flag), and none of LLVM's
// options mean anything to a user of this tool.
struct Options {
  std::string inputFile = "-";
  unsigned steps = 100;
  uint64_t seed = 0;
  std::string dataFile, initFile, dumpParams, dumpGrads, statsJson;
  bool fixedBatch = false;
  int threads = 0;
  bool noGemmRuntime = false;
  unsigned optLevel = 2;
  std::string progress = "auto";
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8,
         weightDecay = 0.01, maxGradNorm = 1.0;
  std::vector<std::string> hyperOverrides;
  int stage = -1; ///< -1: train the contract functions as they are.
  bool checkGrads = false;
  double checkTol = 1e-6, checkFloor = 1e-6, checkStep = 1e-4;
  unsigned checkMax = 0;
};
Options opts;

constexpr const char *kUsage = R"(zero-run: compile a training-step module for the CPU and train it

USAGE: zero-run [options] <module.mlir | ->

  zero-gen gpt --preset gpt-tiny | zero-run - --steps 200 --lr 3e-3

The module must satisfy docs/training-step-ir.md (zero-opt --zero-verify
checks it). Batches: language-model steps (batch inputs 'tokens' and
'targets') read --data or the built-in corpus; regression steps ('input',
'target') get synthetic data from a fixed random teacher.

Training:
  --steps N              training steps (default 100)
  --seed S               seed of parameter init and batch sampling (default 0)
  --data FILE            uint16 token file (headerless little-endian, nanoGPT's
                         .bin); default: the built-in corpus
  --fixed-batch          train on the first batch at every step
  --init FILE            initial parameters: raw little-endian values of every
                         parameter in argument order (what --dump-params writes)
  --dump-params FILE     write the final parameters (raw, argument order)
  --dump-grads FILE      write the last step's gradients, before the optimizer
  --stats-json FILE      write losses, peak bytes by category, step time,
                         throughput and GEMM figures as JSON
  --num-threads N        GEMM (OpenBLAS) threads; 0 = one per core (default)
  --progress MODE        auto (a bar on a terminal, lines otherwise), bar,
                         lines or none
  --no-gemm-runtime      lower matmuls to loops instead of runtime GEMM calls
  --opt-level N          LLVM optimization level of the JIT, 0-3 (default 2)

ZeRO (run under mpirun for more than one rank):
  --stage S              partition the step with zero-partition for the ranks
                         of this run and train @train_step: 0 data parallel, 1
                         optimizer states sharded, 2 and gradients, 3 and
                         parameters (default under mpirun: 0). Each rank takes
                         its micro-batch (the module's batch size) of a global
                         batch of N micro-batches; rank 0 prints and writes
                         files; --dump-params writes full parameters.

  mpirun -np 4 zero-run step.mlir --stage 3 --steps 100

AdamW hyper-parameters (fed to the optimizer's zero.hyper arguments by name):
  --lr X                 learning rate (default 1e-3)
  --beta1 X              default 0.9
  --beta2 X              default 0.999
  --eps X                default 1e-8
  --weight-decay X       default 0.01
  --max-grad-norm X      global gradient-norm clip of steps generated with
                         clipping (default 1.0)
  --hyper NAME=VALUE     set any hyper-parameter by name (repeatable); 'step'
                         is always the 1-based step count

Gradient check (f64 steps):
  --check-grads          compare forward_backward's gradients with 4-point
                         central differences at the initial parameters and exit
                         (exit code 1 if the tolerance is exceeded)
  --check-grads-tol X    largest accepted relative error of a gradient,
                         ||fd - g|| / ||fd|| over its checked elements
                         (default 1e-6)
  --check-grads-floor X  smallest denominator of relative errors (default 1e-6)
  --check-grads-h X      finite-difference step (default 1e-4)
  --check-grads-max-per-param N
                         check at most N evenly spaced elements per parameter;
                         0 = all (default)
)";

[[noreturn]] void fail(const llvm::Twine &message);

void parseOptions(int argc, char **argv) {
  enum Kind { Flag, Unsigned, Int, UInt64, Double, String, List };
  struct Spec {
    const char *name;
    Kind kind;
    void *target;
  };
  const Spec specs[] = {
      {"steps", Unsigned, &opts.steps},
      {"seed", UInt64, &opts.seed},
      {"data", String, &opts.dataFile},
      {"fixed-batch", Flag, &opts.fixedBatch},
      {"init", String, &opts.initFile},
      {"dump-params", String, &opts.dumpParams},
      {"dump-grads", String, &opts.dumpGrads},
      {"stats-json", String, &opts.statsJson},
      {"num-threads", Int, &opts.threads},
      {"progress", String, &opts.progress},
      {"no-gemm-runtime", Flag, &opts.noGemmRuntime},
      {"opt-level", Unsigned, &opts.optLevel},
      {"lr", Double, &opts.lr},
      {"beta1", Double, &opts.beta1},
      {"beta2", Double, &opts.beta2},
      {"eps", Double, &opts.eps},
      {"weight-decay", Double, &opts.weightDecay},
      {"max-grad-norm", Double, &opts.maxGradNorm},
      {"hyper", List, &opts.hyperOverrides},
      {"stage", Int, &opts.stage},
      {"check-grads", Flag, &opts.checkGrads},
      {"check-grads-tol", Double, &opts.checkTol},
      {"check-grads-floor", Double, &opts.checkFloor},
      {"check-grads-h", Double, &opts.checkStep},
      {"check-grads-max-per-param", Unsigned, &opts.checkMax},
  };
  bool haveInput = false;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "-help") {
      llvm::outs() << kUsage;
      std::exit(0);
    }
    if (arg == "-" || !arg.starts_with("-")) {
      if (haveInput)
        fail("more than one input module ('" + opts.inputFile + "' and '" +
             arg + "')");
      opts.inputFile = arg.str();
      haveInput = true;
      continue;
    }
    llvm::StringRef name = arg.drop_while([](char c) { return c == '-'; });
    auto [key, inlineValue] = name.split('=');
    bool hasInline = name.contains('=');
    const Spec *spec = nullptr;
    for (const Spec &s : specs)
      if (key == s.name)
        spec = &s;
    if (!spec)
      fail("unknown option '" + arg + "' (see zero-run --help)");
    if (spec->kind == Flag) {
      if (hasInline)
        fail("option '--" + key + "' takes no value");
      *static_cast<bool *>(spec->target) = true;
      continue;
    }
    llvm::StringRef value;
    if (hasInline) {
      value = inlineValue;
    } else {
      if (i + 1 >= argc)
        fail("option '--" + key + "' needs a value (see zero-run --help)");
      value = argv[++i];
    }
    auto bad = [&](const char *what) {
      fail("option '--" + key + "' expects " + what + ", got '" + value + "'");
    };
    // A non-negative integer of the option's type.
    auto integer = [&](auto *target) {
      using T = std::remove_pointer_t<decltype(target)>;
      T v;
      if (value.getAsInteger(10, v) || v < 0)
        bad("a non-negative integer");
      *target = v;
    };
    switch (spec->kind) {
    case Unsigned:
      integer(static_cast<unsigned *>(spec->target));
      break;
    case Int:
      integer(static_cast<int *>(spec->target));
      break;
    case UInt64:
      integer(static_cast<uint64_t *>(spec->target));
      break;
    case Double: {
      double v;
      if (value.getAsDouble(v) || !std::isfinite(v))
        bad("a number");
      *static_cast<double *>(spec->target) = v;
      break;
    }
    case String:
      if (value.empty())
        bad("a non-empty value");
      *static_cast<std::string *>(spec->target) = value.str();
      break;
    case List:
      static_cast<std::vector<std::string> *>(spec->target)
          ->push_back(value.str());
      break;
    case Flag:
      break;
    }
  }
  if (opts.stage > 3)
    fail("option '--stage' expects 0, 1, 2 or 3, got " +
         llvm::Twine(opts.stage));
  if (opts.optLevel > 3)
    fail("option '--opt-level' expects 0 to 3, got " +
         llvm::Twine(opts.optLevel));
}

/// Set once the runtime is up: with more than one rank, a failure must end
/// every rank (zrt_abort), not leave the others waiting in a collective.
bool runtimeUp = false;

[[noreturn]] void fail(const llvm::Twine &message) {
  std::string line = ("zero-run: error: " + message).str();
  if (runtimeUp && zrt_world_size() > 1)
    zrt_abort(line.c_str());
  llvm::errs() << line << "\n";
  std::exit(1);
}

void failOn(llvm::Error err, llvm::StringRef context = {}) {
  if (!err)
    return;
  std::string message = llvm::toString(std::move(err));
  fail(context.empty() ? llvm::Twine(message) : context + ": " + message);
}

/// Writes `bytes` to `path` through a temporary file and a rename, so that no
/// partial file is ever left behind.
void writeAtomically(llvm::StringRef path,
                     llvm::function_ref<void(llvm::raw_ostream &)> write) {
  failOn(llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
           write(os);
           return llvm::Error::success();
         }),
         "cannot write '" + path.str() + "'");
}

/// A tensor owned by the runtime allocator, with its shape.
struct HostTensor {
  void *data = nullptr;
  llvm::SmallVector<int64_t, 4> shape;
  size_t bytes = 0;

  Buffer buffer() const { return {data, shape}; }
};

/// The runner's views of `tensors`.
std::vector<Buffer> buffersOf(const std::vector<HostTensor> &tensors) {
  std::vector<Buffer> buffers;
  for (const HostTensor &t : tensors)
    buffers.push_back(t.buffer());
  return buffers;
}

HostTensor allocate(RankedTensorType type, zrt_category category) {
  HostTensor t;
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  t.bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
  t.data = zrt_alloc(t.bytes, category);
  if (!t.data)
    fail(zrt_last_error());
  return t;
}

double readScalar(const HostTensor &t, Type elementType) {
  return elementType.isF32() ? *static_cast<float *>(t.data)
                             : *static_cast<double *>(t.data);
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Collects the optimizer's hyper-parameter values in TrainingStep order;
/// `step` is filled in per training step.
std::vector<double> hyperValues(const TrainingStep &step, int &stepSlot) {
  llvm::StringMap<double> known = {
      {"lr", opts.lr},       {"beta1", opts.beta1},
      {"beta2", opts.beta2}, {"eps", opts.eps},
      {"weight_decay", opts.weightDecay}, {"max_grad_norm", opts.maxGradNorm}};
  for (const std::string &o : opts.hyperOverrides) {
    auto [name, value] = llvm::StringRef(o).split('=');
    double v;
    if (name.empty() || value.trim().getAsDouble(v))
      fail("--hyper expects NAME=VALUE with a number, got '" + o + "'");
    known[name] = v;
  }
  std::vector<double> values;
  stepSlot = -1;
  for (const HyperInfo &h : step.hypers) {
    if (h.name == "step") {
      stepSlot = values.size();
      values.push_back(1);
      continue;
    }
    auto it = known.find(h.name);
    if (it == known.end())
      fail("the optimizer takes hyper-parameter '" + h.name +
           "', which has no default; set it with --hyper " + h.name + "=VALUE");
    values.push_back(it->second);
  }
  return values;
}

class ProgressBar {
public:
  ProgressBar(unsigned total) : total(total) {
    std::string mode = opts.progress;
    if (mode == "auto")
      mode = llvm::sys::Process::StandardErrIsDisplayed() ? "bar" : "lines";
    if (mode != "bar" && mode != "lines" && mode != "none")
      fail("--progress must be auto, bar, lines or none, got '" + opts.progress + "'");
    bar = mode == "bar";
    quiet = mode == "none";
    every = std::max(1u, total / 20);
  }
  void update(unsigned done, double loss, double tokensPerSecond) {
    if (quiet)
      return;
    if (bar) {
      constexpr unsigned width = 30;
      unsigned filled = total ? width * done / total : width;
      llvm::errs() << llvm::formatv(
          "\r  step {0,5}/{1} [{2}{3}] loss {4:f4}  {5:f0} tok/s  ", done, total,
          std::string(filled, '#'), std::string(width - filled, '.'), loss,
          tokensPerSecond);
      if (done == total)
        llvm::errs() << "\n";
      return;
    }
    if (done % every == 0 || done == total || done == 1)
      llvm::errs() << llvm::formatv("step {0}/{1} loss {2:f6} {3:f0} tok/s\n",
                                    done, total, loss, tokensPerSecond);
  }

private:
  unsigned total, every;
  bool bar = false, quiet = false;
};

/// --check-grads: 4-point central differences of the loss against every
/// (or every k-th) element's analytic gradient.
int checkGradients(CompiledStep &compiled, const TrainingStep &step,
                   std::vector<HostTensor> &params,
                   std::vector<HostTensor> &batch, HostTensor &loss,
                   std::vector<HostTensor> &grads) {
  for (const ParamInfo &p : step.params)
    if (!p.type.getElementType().isF64())
      fail("--check-grads needs an f64 training step (finite differences in "
           "f32 cannot resolve 1e-6); generate one with --dtype f64");
  std::vector<Buffer> pb = buffersOf(params), bb = buffersOf(batch),
                      gb = buffersOf(grads);
  failOn(compiled.forwardBackward(pb, bb, loss.buffer(), gb), "forward_backward");
  // Keep the analytic gradients; later calls overwrite the grad buffers.
  std::vector<std::vector<double>> analytic;
  for (auto &g : grads)
    analytic.emplace_back(static_cast<double *>(g.data),
                          static_cast<double *>(g.data) + g.bytes / 8);
  auto lossAt = [&]() {
    failOn(compiled.forwardBackward(pb, bb, loss.buffer(), gb), "forward_backward");
    return *static_cast<double *>(loss.data);
  };
  double h = opts.checkStep, worst = 0;
  int64_t checked = 0;
  llvm::outs() << llvm::formatv("{0,-36} {1,8} {2,12} {3,12} {4,12}\n",
                                "parameter", "checked", "max_abs_err",
                                "max_elem_rel", "norm_rel_err");
  for (auto [i, p] : llvm::enumerate(step.params)) {
    auto *x = static_cast<double *>(params[i].data);
    int64_t n = p.type.getNumElements();
    int64_t count = opts.checkMax == 0 ? n : std::min<int64_t>(n, opts.checkMax);
    double maxAbs = 0, maxRel = 0, diffSq = 0, fdSq = 0;
    for (int64_t c = 0; c < count; ++c) {
      int64_t e = count == n ? c : c * n / count;
      double x0 = x[e];
      double f[4];
      const double offsets[4] = {-2 * h, -h, h, 2 * h};
      for (int k = 0; k < 4; ++k) {
        x[e] = x0 + offsets[k];
        f[k] = lossAt();
      }
      x[e] = x0;
      double fd = (f[0] - 8 * f[1] + 8 * f[2] - f[3]) / (12 * h);
      double g = analytic[i][e];
      double abs = std::fabs(fd - g);
      maxAbs = std::max(maxAbs, abs);
      maxRel = std::max(maxRel, abs / std::max({std::fabs(fd), std::fabs(g),
                                                opts.checkFloor}));
      diffSq += (fd - g) * (fd - g);
      fdSq += fd * fd;
    }
    // The gradient of a tensor is wrong if it points elsewhere: compare the
    // whole (checked part of the) tensor, ||fd - g|| / ||fd||. Elementwise
    // ratios of entries near zero measure only finite-difference noise.
    double normRel = std::sqrt(diffSq) / std::max(std::sqrt(fdSq), opts.checkFloor);
    checked += count;
    worst = std::max(worst, normRel);
    llvm::outs() << llvm::formatv("{0,-36} {1,8} {2,12:e2} {3,12:e2} {4,12:e2}\n",
                                  p.name, count, maxAbs, maxRel, normRel);
  }
  bool passed = worst <= opts.checkTol;
  llvm::json::Object summary{{"checked", checked},
                             {"max_norm_rel_error", worst},
                             {"tolerance", opts.checkTol},
                             {"passed", passed}};
  llvm::outs() << llvm::formatv("{0}", llvm::json::Value(std::move(summary)))
               << "\n";
  if (!passed)
    llvm::errs() << llvm::formatv("zero-run: error: gradient check failed: a "
                                  "gradient's relative error is {0:e2} > {1:e2}\n",
                                  worst, opts.checkTol);
  return passed ? 0 : 1;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  parseOptions(argc, argv);

  if (zrt_init("cpu", opts.threads == 0 ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) : opts.threads) != 0)
    fail(zrt_last_error());
  runtimeUp = true;
  const int world = zrt_world_size(), rank = zrt_world_rank();
  if (world > 1 && opts.stage < 0)
    opts.stage = 0;
  const bool partitioned = opts.stage >= 0;
  if (partitioned && opts.checkGrads)
    fail("--check-grads checks forward_backward; run it without --stage and "
         "without mpirun");
  if (partitioned && !opts.dumpGrads.empty())
    fail("--dump-grads needs a run without --stage (a partitioned step keeps "
         "no full gradients)");
  // Only rank 0 talks and writes.
  if (rank != 0)
    opts.progress = "none";

  DialectRegistry registry;
  registerZeroDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name the location; printing whole (huge) ops helps nobody.
  context.printOpOnDiagnostic(false);

  std::string error;
  auto input = openInputFile(opts.inputFile, &error);
  if (!input)
    fail(error);
  llvm::SourceMgr sourceMgr;
  unsigned bufferId = sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  if (!screenForParserCrashes(sourceMgr, bufferId))
    return 1;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    fail("cannot parse '" + opts.inputFile + "' (see the errors above)");
  // A module already in ZeRO form (zero-opt --zero-partition output): its
  // world size must be the run's; running it as it is is not supported.
  for (auto fn : module->getOps<func::FuncOp>()) {
    auto ws = fn->getAttrOfType<IntegerAttr>(
        ZeroDialect::WorldSizeAttrHelper::getNameStr());
    if (!ws)
      continue;
    if (ws.getInt() != world)
      fail(llvm::formatv("'{0}' was partitioned for {1} ranks "
                         "(zero.world_size on @{2}) but this run has {3}: run "
                         "it under mpirun -np {1}, or pass the module before "
                         "zero-partition and zero-run partitions it for the "
                         "run's ranks",
                         opts.inputFile, ws.getInt(), fn.getSymName(), world)
               .str());
    fail("'" + opts.inputFile +
         "' is already in ZeRO form (@" + fn.getSymName().str() +
         " from zero-partition); running a partitioned module is not "
         "supported yet: pass the module before zero-partition with --stage, "
         "and zero-run partitions it");
  }
  FailureOr<TrainingStep> parsed = TrainingStep::get(*module);
  if (failed(parsed))
    fail("'" + opts.inputFile + "' does not satisfy the training-step contract "
         "(see the errors above)");
  TrainingStep &step = *parsed;
  for (const ParamInfo &p : step.params)
    if (!p.type.getElementType().isF32() && !p.type.getElementType().isF64())
      fail("parameter '" + p.name + "' is " +
           (p.type.getElementType().isBF16() ? "bf16" : "of another type") +
           "; the CPU runtime trains f32 and f64 steps only");

  int stepSlot;
  std::vector<double> hypers = hyperValues(step, stepSlot);

  llvm::Expected<BatchKind> kind = classifyBatch(step);
  if (!kind)
    failOn(kind.takeError());
  TokenData data;
  if (*kind == BatchKind::Language) {
    std::optional<unsigned> wte = step.lookupParam("wte");
    if (!wte)
      fail("language batches need a 'wte' parameter (its rows are the "
           "vocabulary) to check token ids");
    int64_t vocab = step.params[*wte].type.getDimSize(0);
    if (!opts.dataFile.empty()) {
      auto loaded = TokenData::load(opts.dataFile);
      if (!loaded)
        failOn(loaded.takeError());
      data = std::move(*loaded);
    } else {
      data = TokenData::builtinCorpus();
    }
    if (data.maxToken >= vocab)
      fail(llvm::formatv("the {0} has token id {1}, but the model's "
                         "vocabulary has {2} entries; use a model with "
                         "--vocab {3} or more",
                         data.source, data.maxToken, vocab, data.maxToken + 1)
               .str());
  } else if (!opts.dataFile.empty()) {
    fail("--data gives token files, which only language-model steps "
         "(batch inputs 'tokens' and 'targets') take");
  }

  // Buffers, each counted by the runtime in its category. A partitioned
  // step takes sharded (1-D) parameters (stage 3) and states (stages 1-3)
  // and keeps no gradients outside @train_step.
  auto sliceType = [&](RankedTensorType t) {
    int64_t padded = (t.getNumElements() + world - 1) / world * world;
    return RankedTensorType::get({padded / world}, t.getElementType());
  };
  std::vector<HostTensor> params, grads, states, batch;
  for (const ParamInfo &p : step.params) {
    params.push_back(allocate(partitioned && opts.stage == 3 ? sliceType(p.type)
                                                            : p.type,
                              ZRT_PARAMS));
    if (!partitioned)
      grads.push_back(allocate(p.type, ZRT_GRADS));
  }
  for (const StateInfo &st : step.states)
    states.push_back(allocate(partitioned && opts.stage >= 1
                                  ? sliceType(st.type)
                                  : st.type,
                              ZRT_OPTIMIZER_STATES));
  for (const BatchInfo &b : step.batch)
    batch.push_back(allocate(b.type, ZRT_ACTIVATIONS));
  auto lossType = cast<RankedTensorType>(
      step.forwardBackward.getResultTypes()[step.lossResult]);
  HostTensor loss = allocate(lossType, ZRT_ACTIVATIONS);

  // Initial parameters, full on every rank (the same seed everywhere), then
  // each rank keeps its slice when parameters are sharded.
  std::vector<HostTensor> full;
  bool sharded = partitioned && opts.stage == 3;
  if (sharded)
    for (const ParamInfo &p : step.params)
      full.push_back(allocate(p.type, ZRT_ACTIVATIONS));
  std::vector<HostTensor> &initInto = sharded ? full : params;
  if (!opts.initFile.empty()) {
    auto file = llvm::MemoryBuffer::getFile(opts.initFile, false, false);
    if (!file)
      fail("cannot read --init file '" + opts.initFile + "': " + file.getError().message());
    size_t expected = 0;
    for (auto &t : initInto)
      expected += t.bytes;
    if ((*file)->getBufferSize() != expected)
      fail(llvm::formatv("--init file '{0}' has {1} bytes; the parameters take "
                         "{2} ({3} elements)",
                         opts.initFile, (*file)->getBufferSize(), expected,
                         step.numParamElements())
               .str());
    const char *src = (*file)->getBufferStart();
    for (auto &t : initInto) {
      std::memcpy(t.data, src, t.bytes);
      src += t.bytes;
    }
  } else {
    std::vector<void *> ptrs;
    for (auto &t : initInto)
      ptrs.push_back(t.data);
    initParams(step, opts.seed, ptrs);
  }
  if (sharded) {
    for (auto [i, p] : llvm::enumerate(step.params)) {
      size_t eltBytes = p.type.getElementTypeBitWidth() / 8;
      int64_t shard = params[i].shape[0];
      int64_t begin = std::min<int64_t>(rank * shard, p.type.getNumElements());
      int64_t end = std::min<int64_t>(begin + shard, p.type.getNumElements());
      std::memcpy(params[i].data,
                  static_cast<char *>(full[i].data) + begin * eltBytes,
                  (end - begin) * eltBytes);
      zrt_free(full[i].data);
    }
    full.clear();
  }

  std::vector<void *> batchPtrs;
  for (auto &t : batch)
    batchPtrs.push_back(t.data);
  auto batches = BatchSource::create(step, *kind, &data, opts.seed, rank, world);
  if (!batches)
    failOn(batches.takeError());
  batches->fill(0, batchPtrs);

  CompiledStep::Options compileOptions;
  compileOptions.gemmToRuntime = !opts.noGemmRuntime;
  compileOptions.optLevel = opts.optLevel;
  OwningOpRef<ModuleOp> partitionedModule;
  if (partitioned) {
    // zero-partition for this run's ranks; the contract module stays
    // untouched, since `step` refers into it.
    partitionedModule = module->clone();
    PassManager pm(&context);
    ZeroPartitionPassOptions partitionOptions;
    partitionOptions.stage = opts.stage;
    partitionOptions.worldSize = world;
    pm.addPass(createZeroPartitionPass(partitionOptions));
    if (failed(pm.run(*partitionedModule)))
      fail("cannot partition '" + opts.inputFile + "' (see the errors above)");
  }
  auto compiled =
      partitioned
          ? CompiledStep::compileTrainStep(*partitionedModule, step,
                                           compileOptions)
          : CompiledStep::compile(*module, step, compileOptions);
  if (!compiled)
    failOn(compiled.takeError(), "cannot compile '" + opts.inputFile + "'");

  if (opts.checkGrads)
    return checkGradients(**compiled, step, params, batch, loss, grads);

  std::vector<Buffer> pb = buffersOf(params), gb = buffersOf(grads),
                      sb = buffersOf(states), bb = buffersOf(batch);

  Type lossElt = lossType.getElementType();
  int64_t items = itemsPerBatch(step, *kind);
  std::vector<double> losses, stepTimes;
  ProgressBar bar(opts.steps);
  zrt_reset_gemm_stats();
  zrt_reset_comm_stats();
  // Peaks from here on are the training's, not set-up's (stage 3 builds the
  // full initial parameters once before keeping its slices).
  zrt_reset_peaks();
  for (unsigned s = 0; s < opts.steps; ++s) {
    auto start = std::chrono::steady_clock::now();
    if (s > 0 && !opts.fixedBatch)
      batches->fill(s, batchPtrs);
    if (stepSlot >= 0)
      hypers[stepSlot] = s + 1;
    if (partitioned)
      failOn((*compiled)->trainStep(pb, sb, bb, loss.buffer(), hypers),
             "train_step");
    else
      failOn((*compiled)->forwardBackward(pb, bb, loss.buffer(), gb),
             "forward_backward");
    double l = readScalar(loss, lossElt);
    if (!std::isfinite(l))
      fail(llvm::formatv("the loss is {0} at step {1}; lower --lr or enable "
                         "gradient clipping",
                         l, s + 1)
               .str());
    if (!partitioned)
      failOn((*compiled)->optimizer(pb, gb, sb, hypers), "optimizer");
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    losses.push_back(l);
    stepTimes.push_back(seconds);
    bar.update(s + 1, l, items / median(stepTimes));
  }

  zrt_memory_stats mem;
  zrt_get_memory_stats(&mem);
  zrt_gemm_stats gemm;
  zrt_get_gemm_stats(&gemm);
  zrt_comm_stats comm;
  zrt_get_comm_stats(&comm);
  // The largest peak of any rank, per category (every rank takes part).
  std::vector<double> peakMax(ZRT_NUM_CATEGORIES + 1);
  for (int c = 0; c <= ZRT_NUM_CATEGORIES; ++c)
    peakMax[c] = zrt_all_reduce_scalar_max_f64(static_cast<double>(
        c < ZRT_NUM_CATEGORIES ? mem.peak[c] : mem.peak_total));

  // Full parameters for --dump-params: sharded ones are gathered (every rank
  // takes part), and rank 0 writes.
  std::vector<HostTensor> dumpParamsFrom;
  bool gathered = partitioned && opts.stage == 3 && !opts.dumpParams.empty();
  if (gathered) {
    for (auto [i, p] : llvm::enumerate(step.params)) {
      int64_t shard = params[i].shape[0];
      auto paddedType = RankedTensorType::get({shard * world},
                                              p.type.getElementType());
      HostTensor all = allocate(paddedType, ZRT_ACTIVATIONS);
      if (p.type.getElementType().isF32())
        zrt_all_gather_f32(static_cast<float *>(params[i].data),
                           static_cast<float *>(all.data), shard);
      else
        zrt_all_gather_f64(static_cast<double *>(params[i].data),
                           static_cast<double *>(all.data), shard);
      all.bytes = p.type.getNumElements() * p.type.getElementTypeBitWidth() / 8;
      dumpParamsFrom.push_back(all);
    }
  }
  if (rank != 0) {
    for (auto &t : dumpParamsFrom)
      zrt_free(t.data);
    zrt_shutdown();
    return 0;
  }
  double stepTime = median(stepTimes);
  double totalTime = 0;
  for (double t : stepTimes)
    totalTime += t;
  if (!losses.empty())
    llvm::outs() << llvm::formatv(
        "trained {0} steps: loss {1:f4} -> {2:f4}; median step {3:f2} ms, "
        "{4:f0} {5}/s; GEMM {6:f0}% of step time; compile {7:f2} s\n",
        opts.steps, losses.front(), losses.back(), stepTime * 1e3,
        stepTime > 0 ? items / stepTime : 0,
        *kind == BatchKind::Language ? "tokens" : "samples",
        totalTime > 0 ? 100 * gemm.seconds / totalTime : 0,
        (*compiled)->compileSeconds());

  if (!opts.statsJson.empty()) {
    llvm::json::Object peak;
    for (int c = 0; c < ZRT_NUM_CATEGORIES; ++c)
      peak[zrt_category_name(static_cast<zrt_category>(c))] = mem.peak[c];
    peak["total"] = mem.peak_total;
    // What the process really held at most: live bytes plus the runtime's
    // cache of freed blocks.
    peak["reserved"] = mem.reserved_peak;
    llvm::json::Object peakMaxObj;
    for (int c = 0; c < ZRT_NUM_CATEGORIES; ++c)
      peakMaxObj[zrt_category_name(static_cast<zrt_category>(c))] =
          static_cast<uint64_t>(peakMax[c]);
    peakMaxObj["total"] = static_cast<uint64_t>(peakMax[ZRT_NUM_CATEGORIES]);
    // Bytes this rank sent per step, per collective kind.
    llvm::json::Object commBytes, commCalls;
    for (int k = 0; k < ZRT_NUM_COLLECTIVES; ++k) {
      const char *name = zrt_collective_name(static_cast<zrt_collective>(k));
      commBytes[name] = opts.steps ? comm.bytes_sent[k] / opts.steps : 0;
      commCalls[name] = opts.steps ? comm.calls[k] / opts.steps : 0;
    }
    llvm::json::Array lossArray;
    for (double l : losses)
      lossArray.push_back(l);
    llvm::json::Object stats{
        {"losses", std::move(lossArray)},
        {"peak_bytes", std::move(peak)},
        {"peak_bytes_max_over_ranks", std::move(peakMaxObj)},
        {"comm_bytes", std::move(commBytes)},
        {"comm_calls", std::move(commCalls)},
        {"step_time_s", stepTime},
        {"step_time_mean_s", opts.steps ? totalTime / opts.steps : 0.0},
        {"tokens_per_s", stepTime > 0 && *kind == BatchKind::Language
                             ? items / stepTime
                             : 0.0},
        {"samples_per_s", stepTime > 0 ? step.batch[0].type.getDimSize(0) / stepTime : 0.0},
        {"params", step.numParamElements()},
        {"world_size", world},
        {"stage", opts.stage < 0 ? 0 : opts.stage},
        {"partitioned", partitioned},
        {"steps", static_cast<int64_t>(opts.steps)},
        {"compile_time_s", (*compiled)->compileSeconds()},
        {"gemm", llvm::json::Object{
                     {"calls", gemm.calls},
                     {"flops", gemm.flops},
                     {"seconds", gemm.seconds},
                     {"share_of_step_time",
                      totalTime > 0 ? gemm.seconds / totalTime : 0.0}}}};
    llvm::json::Array shapes;
    for (size_t i = 0, e = zrt_gemm_shape_count(); i < e; ++i) {
      zrt_gemm_shape shape;
      if (zrt_get_gemm_shape(i, &shape) != 0)
        continue;
      shapes.push_back(llvm::json::Object{{"dtype_bytes", shape.dtype_bytes},
                                          {"batch", shape.batch},
                                          {"m", shape.m},
                                          {"n", shape.n},
                                          {"k", shape.k},
                                          {"calls", shape.calls},
                                          {"seconds", shape.seconds}});
    }
    stats["gemm_shapes"] = std::move(shapes);
    writeAtomically(opts.statsJson, [&](llvm::raw_ostream &os) {
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(stats))) << "\n";
    });
  }
  auto dump = [&](const std::string &path, std::vector<HostTensor> &tensors) {
    writeAtomically(path, [&](llvm::raw_ostream &os) {
      for (auto &t : tensors)
        os.write(static_cast<const char *>(t.data), t.bytes);
    });
  };
  if (!opts.dumpParams.empty())
    dump(opts.dumpParams, gathered ? dumpParamsFrom : params);
  for (auto &t : dumpParamsFrom)
    zrt_free(t.data);
  if (!opts.dumpGrads.empty())
    dump(opts.dumpGrads, grads);

  for (auto *group : {&params, &grads, &states, &batch})
    for (auto &t : *group)
      zrt_free(t.data);
  zrt_free(loss.data);
  zrt_shutdown();
  return 0;
}
