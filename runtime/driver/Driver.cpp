//===- Driver.cpp - The MLIR-free training driver -------------------------===//
//
// zrt_driver_main: the training loop of zero-run and of zero-compile's
// binaries. Everything it knows about the model comes from the step ABI
// descriptor: which buffers to allocate (and in which memory category),
// how to initialize each parameter, which batch inputs to fill, which
// hyper-parameters to pass, and which entry functions to call in which order.
//
//===----------------------------------------------------------------------===//

#include "zero/driver.h"

#include "Abi.h"
#include "Checkpoint.h"
#include "Data.h"
#include "Files.h"
#include "Json.h"
#include "LinkSpec.h"
#include "OffloadSpec.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <csignal>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace zero::driver;

namespace {

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

/// The tool's name, for messages.
std::string tool = "zero-run";

struct Options {
  unsigned steps = 100;
  uint64_t seed = 0;
  std::string dataFile, initFile, dumpParams, dumpGrads, dumpBatches,
      statsJson, trace;
  std::string saveDir, resume;
  unsigned saveEvery = 0, saveKeep = 2;
  bool fixedBatch = false;
  int threads = 0;
  double commTimeout = 600;
  std::string simLink;
  double linkGbps = 0, linkLatencyUs = 0;
  bool simLinkAlternate = false;
  std::string offload;
  std::string progress = "auto";
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8,
         weightDecay = 0.01, maxGradNorm = 1.0;
  // The learning-rate schedule (lrAt): linear warmup, then a decay.
  unsigned warmupSteps = 0, decaySteps = 0;
  std::string lrDecay = "none";
  double minLr = -1; ///< -1: a tenth of the peak learning rate.
  std::vector<std::string> hyperOverrides;
  bool checkGrads = false;
  bool tf32 = false;
  bool syncTiming = false;
  double checkTol = 1e-6, checkFloor = 1e-6, checkStep = 1e-4;
  unsigned checkMax = 0;
  bool help = false;
  std::set<std::string> given; ///< Options on the command line, by name.
};

constexpr const char *kUsage = R"(Training:
  --steps N              the step count to train to (default 100): a run
                         resumed from step K trains steps K+1..N
  --seed S               seed of parameter init and batch sampling (default 0)
  --data FILE            uint16 token file (headerless little-endian, nanoGPT's
                         .bin); default: the built-in corpus
  --fixed-batch          train on the first batch at every step
  --init FILE            initial parameters: raw little-endian values of every
                         parameter in order (what --dump-params writes);
                         without it each parameter is initialized as its
                         zero.init attribute says (docs/runtime-abi.md)
  --save DIR             save a sharded checkpoint at the end (and every
                         --save-every steps) to DIR/step-N: each rank writes
                         its shards, rank 0 a manifest; a checkpoint appears
                         whole (one rename) or not at all
                         (docs/checkpoints.md)
  --save-every K         also save after every K steps (default 0: at the
                         end only)
  --save-keep N          keep N checkpoints in DIR: the one just saved and
                         the newest others (default 2)
  --resume PATH          continue the run saved in PATH (a checkpoint, or a
                         --save directory: its newest one) exactly: its
                         parameters, optimizer states, step and seed, at any
                         number of ranks and any stage; every file's checksum
                         is checked first
  --dump-params FILE     write the final parameters (raw, in order; sharded
                         parameters are gathered)
  --dump-grads FILE      write the last step's gradients, before the optimizer
                         (unpartitioned steps only)
  --dump-batches FILE    write every trained step's global batch (raw, step
                         by step: each batch input in order, the ranks'
                         micro-batches stacked in rank order), to train a
                         reference (PyTorch, one process) on the same data
  --stats-json FILE      write losses, peak bytes by category, bytes sent,
                         step time, throughput and GEMM figures as JSON
                         (tokens_per_s and samples_per_s are the job's, all
                         ranks together; *_per_rank one rank's)
  --trace FILE           write the last step's timeline as Chrome trace-event
                         JSON (Perfetto, chrome://tracing): per rank a compute
                         track (GEMMs, the compute between them, waits for
                         collectives) and a communication track (each
                         collective with its kind and bytes, from start to
                         completion)
  --num-threads N        threads for GEMMs and parallel loops; 0 = the cores
                         shared among the ranks on this machine (default)
  --sync-timing          GEMMs and kernels wait for the device before and
                         after they run, so that the stats JSON's GEMM and
                         per-kernel ("kernels") seconds are the device's and
                         show where a GPU step's time goes (slower; same
                         results; on the CPU the timings are the work's
                         anyway). They count from the second step on
                         ("profiled_steps"): the first pays for loading
                         kernels and planning GEMMs
  --tf32                 a target=cuda step's f32 GEMMs may use TF32 tensor
                         cores (10-bit mantissa products, f32 accumulation);
                         off by default. The backend (cpu or cuda) is the
                         step's: what it was compiled for (zero-compile
                         --target, zero-run --target)
  --comm-timeout S       end the job when a collective has waited S seconds
                         for a rank that does not arrive (stalled or lost),
                         with one line naming it; 0 = wait forever
                         (default 600; zero-run's ranks wait for rank 0's
                         compilation under the default)
  --sim-link bw=G,latency=U
                         simulate an interconnect: every collective completes
                         no earlier than U microseconds plus its bytes over G
                         GB/s (1e9 bytes/s; 'inf' for latency only) after
                         the last rank started it, one at a time, the same
                         moment on every rank; a model of a link for
                         measuring overlap where ranks share one machine's
                         memory, not a measurement of one (runtime.h,
                         zrt_set_sim_link)
  --sim-link-alternate   with --sim-link: the link is on in every second step
                         of the run (the 2nd, 4th, ...) and off in the
                         others, so that each step with it has a step without
                         it just before, run by the same process on the same
                         machine state; the stats JSON's "step_times_s" and
                         "sim_link_steps" pair them (bench/overlap.py)
  --progress MODE        auto (a bar on a terminal, lines otherwise), bar,
                         lines or none
  --offload optimizer=nvme,params=nvme,nvme-dir=DIR
                         ZeRO-Infinity's NVMe tier: the optimizer states
                         (and at stage 3 the parameter shards) live in
                         DIR/zero-rank<R>.nvme (a disk file system: O_DIRECT
                         and io_uring), read into staging buffers around
                         their uses and written back each step; the file is
                         removed at the end. A compiled binary has its
                         placements built in and takes nvme-dir=DIR
  --offload optimizer=host
                         ZeRO-Offload: the optimizer states live in host
                         memory next to the device and the updates run on
                         the host (gradients copied out, parameters copied
                         back); on the cpu backend both are the same
                         memory, counted apart in --stats-json
  --offload optimizer=host,params=nvme,nvme-dir=DIR
                         both (stage 3, cpu backend): the parameter shards
                         on the NVMe tier, the optimizer states and their
                         updates on the host, which reads each shard it
                         updates from DIR into host memory and writes the
                         new one back from there

Batches: language-model steps (batch inputs 'tokens' and 'targets', whose
zero.token_range bounds the token ids) read --data or the built-in corpus;
regression steps ('input', 'target') get synthetic data from a fixed random
teacher. Under mpirun each rank takes its micro-batch (the step's batch
size) of a global batch of N micro-batches; rank 0 prints and writes files.
Files are written whole or not at all.

Hyper-parameters (fed to the step's zero.hyper arguments by name; a
module's zero.hyper_default, as zero_mlir.torch writes the settings it was
exported with, replaces the defaults below; a flag given here wins):
  --lr X                 learning rate (default 1e-3)
  --beta1 X              default 0.9
  --beta2 X              default 0.999
  --eps X                default 1e-8
  --weight-decay X       default 0.01
  --max-grad-norm X      global gradient-norm clip of steps generated with
                         clipping (default 1.0)
  --hyper NAME=VALUE     set any hyper-parameter by name (repeatable); 'step'
                         is always the 1-based step count

Learning-rate schedule (the hyper-parameter 'lr' of step t, 1-based; the
peak is --lr, or what replaced it; a resumed run needs the same flags):
  --warmup-steps W       rise linearly to the peak: lr * t / W for t <= W
                         (default 0: start at the peak)
  --lr-decay KIND        after the warmup: none (default: stay at the peak),
                         cosine (min + (peak - min) * (1 + cos(pi * r)) / 2)
                         or linear (peak - (peak - min) * r), where
                         r = (t - W) / (D - W) goes from 0 to 1; min-lr from
                         step D on
  --decay-steps D        the step at which the decay reaches --min-lr
                         (default --steps: give it when a run is to be
                         continued past --steps on the same schedule)
  --min-lr X             where the decay ends (default a tenth of the peak)

Gradient check (unpartitioned f64 steps):
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

enum Kind { Flag, Unsigned, Int, UInt64, Double, String, List };
struct Spec {
  const char *name;
  Kind kind;
  void *target;
};

/// Every training option, bound to its field of `opts`.
std::vector<Spec> optionSpecs(Options &opts) {
  return {
      {"steps", Unsigned, &opts.steps},
      {"seed", UInt64, &opts.seed},
      {"data", String, &opts.dataFile},
      {"fixed-batch", Flag, &opts.fixedBatch},
      {"init", String, &opts.initFile},
      {"save", String, &opts.saveDir},
      {"save-every", Unsigned, &opts.saveEvery},
      {"save-keep", Unsigned, &opts.saveKeep},
      {"resume", String, &opts.resume},
      {"dump-params", String, &opts.dumpParams},
      {"dump-grads", String, &opts.dumpGrads},
      {"dump-batches", String, &opts.dumpBatches},
      {"stats-json", String, &opts.statsJson},
      {"trace", String, &opts.trace},
      {"num-threads", Int, &opts.threads},
      {"comm-timeout", Double, &opts.commTimeout},
      {"sim-link", String, &opts.simLink},
      {"sim-link-alternate", Flag, &opts.simLinkAlternate},
      {"progress", String, &opts.progress},
      {"offload", String, &opts.offload},
      {"lr", Double, &opts.lr},
      {"beta1", Double, &opts.beta1},
      {"beta2", Double, &opts.beta2},
      {"eps", Double, &opts.eps},
      {"weight-decay", Double, &opts.weightDecay},
      {"max-grad-norm", Double, &opts.maxGradNorm},
      {"hyper", List, &opts.hyperOverrides},
      {"warmup-steps", Unsigned, &opts.warmupSteps},
      {"lr-decay", String, &opts.lrDecay},
      {"decay-steps", Unsigned, &opts.decaySteps},
      {"min-lr", Double, &opts.minLr},
      {"check-grads", Flag, &opts.checkGrads},
      {"tf32", Flag, &opts.tf32},
      {"sync-timing", Flag, &opts.syncTiming},
      {"check-grads-tol", Double, &opts.checkTol},
      {"check-grads-floor", Double, &opts.checkFloor},
      {"check-grads-h", Double, &opts.checkStep},
      {"check-grads-max-per-param", Unsigned, &opts.checkMax},
  };
}

/// Parses the training options; false with a one-line message on error.
bool parseOptions(int argc, char **argv, Options &opts, std::string &error) {
  const std::vector<Spec> specs = optionSpecs(opts);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "-help") {
      opts.help = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      error = "unexpected argument '" + arg + "' (see " + tool + " --help)";
      return false;
    }
    std::string name = arg.substr(arg.find_first_not_of('-'));
    size_t eq = name.find('=');
    bool hasInline = eq != std::string::npos;
    std::string key = name.substr(0, eq);
    const Spec *spec = nullptr;
    for (const Spec &s : specs)
      if (key == s.name)
        spec = &s;
    if (!spec) {
      error = "unknown option '" + arg + "' (see " + tool + " --help)";
      return false;
    }
    if (spec->kind == Flag) {
      if (hasInline) {
        error = "option '--" + key + "' takes no value";
        return false;
      }
      *static_cast<bool *>(spec->target) = true;
      opts.given.insert(key);
      continue;
    }
    std::string value;
    if (hasInline) {
      value = name.substr(eq + 1);
    } else {
      if (i + 1 >= argc) {
        error = "option '--" + key + "' needs a value (see " + tool + " --help)";
        return false;
      }
      value = argv[++i];
    }
    opts.given.insert(key);
    auto bad = [&](const char *what) {
      error = "option '--" + key + "' expects " + what + ", got '" + value +
              "'";
      return false;
    };
    switch (spec->kind) {
    case Unsigned:
    case Int:
    case UInt64: {
      if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos)
        return bad("a non-negative integer");
      errno = 0;
      unsigned long long v = std::strtoull(value.c_str(), nullptr, 10);
      unsigned long long max = spec->kind == UInt64   ? UINT64_MAX
                               : spec->kind == Int    ? INT32_MAX
                                                      : UINT32_MAX;
      if (errno || v > max)
        return bad("a non-negative integer in range");
      if (spec->kind == Unsigned)
        *static_cast<unsigned *>(spec->target) = static_cast<unsigned>(v);
      else if (spec->kind == Int)
        *static_cast<int *>(spec->target) = static_cast<int>(v);
      else
        *static_cast<uint64_t *>(spec->target) = v;
      break;
    }
    case Double: {
      char *end = nullptr;
      errno = 0;
      double v = std::strtod(value.c_str(), &end);
      if (value.empty() || !end || *end || errno || !std::isfinite(v))
        return bad("a number");
      *static_cast<double *>(spec->target) = v;
      break;
    }
    case String:
      if (value.empty())
        return bad("a non-empty value");
      *static_cast<std::string *>(spec->target) = value;
      break;
    case List:
      static_cast<std::vector<std::string> *>(spec->target)->push_back(value);
      break;
    case Flag:
      break;
    }
  }
  if (!(opts.commTimeout >= 0)) {
    error = "--comm-timeout must be a number of seconds >= 0 (0: no "
            "deadline)";
    return false;
  }
  if (!opts.simLink.empty() &&
      !zero::driver::parseLinkSpec(opts.simLink, opts.linkGbps, opts.linkLatencyUs, error))
    return false;
  if (opts.simLinkAlternate && opts.simLink.empty()) {
    error = "--sim-link-alternate needs --sim-link bw=G,latency=U (the link "
            "to turn on and off)";
    return false;
  }
  if (opts.saveEvery && opts.saveDir.empty()) {
    error = "--save-every needs --save DIR (where to save)";
    return false;
  }
  if (opts.saveKeep == 0) {
    error = "--save-keep must be at least 1 (the checkpoint just saved)";
    return false;
  }
  if (!opts.resume.empty() && !opts.initFile.empty()) {
    error = "--resume and --init both give the initial parameters; use one";
    return false;
  }
  if (opts.checkGrads && (!opts.resume.empty() || !opts.saveDir.empty())) {
    error = "--check-grads checks the initial parameters and trains "
            "nothing; it takes no --resume or --save";
    return false;
  }
  if (opts.progress != "auto" && opts.progress != "bar" &&
      opts.progress != "lines" && opts.progress != "none") {
    error = "--progress must be auto, bar, lines or none, got '" +
            opts.progress + "'";
    return false;
  }
  if (opts.lrDecay != "none" && opts.lrDecay != "cosine" &&
      opts.lrDecay != "linear") {
    error = "--lr-decay must be none, cosine or linear, got '" + opts.lrDecay +
            "'";
    return false;
  }
  if (opts.lrDecay == "none" &&
      (opts.given.count("decay-steps") || opts.given.count("min-lr"))) {
    error = std::string("--") +
            (opts.given.count("decay-steps") ? "decay-steps" : "min-lr") +
            " shapes a decay; give --lr-decay cosine or linear with it";
    return false;
  }
  if (opts.given.count("min-lr") && opts.minLr < 0) {
    error = "--min-lr must be >= 0";
    return false;
  }
  if (opts.lrDecay != "none") {
    // D defaults to --steps.
    unsigned d = opts.given.count("decay-steps") ? opts.decaySteps : opts.steps;
    if (d <= opts.warmupSteps) {
      error = "the decay ends at step " + std::to_string(d) +
              (opts.given.count("decay-steps") ? " (--decay-steps)"
                                               : " (--steps)") +
              ", not after the warmup's " + std::to_string(opts.warmupSteps) +
              " steps; give --decay-steps above --warmup-steps";
      return false;
    }
    opts.decaySteps = d;
  }
  for (const std::string &o : opts.hyperOverrides) {
    size_t eq = o.find('=');
    char *end = nullptr;
    if (eq == std::string::npos || eq == 0 ||
        (std::strtod(o.c_str() + eq + 1, &end), !end || *end ||
                                                    eq + 1 == o.size())) {
      error = "--hyper expects NAME=VALUE with a number, got '" + o + "'";
      return false;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Failing
//===----------------------------------------------------------------------===//


/// The learning rate of step t (1-based) under --warmup-steps, --lr-decay,
/// --decay-steps and --min-lr, for the peak `peak` and the floor `minLr`.
double lrAt(const Options &opts, double peak, double minLr, unsigned t) {
  if (t <= opts.warmupSteps)
    return peak * t / opts.warmupSteps;
  if (opts.lrDecay == "none")
    return peak;
  if (t >= opts.decaySteps)
    return minLr;
  double r = static_cast<double>(t - opts.warmupSteps) /
             (opts.decaySteps - opts.warmupSteps);
  if (opts.lrDecay == "cosine")
    return minLr + (peak - minLr) * 0.5 * (1 + std::cos(M_PI * r));
  return peak - (peak - minLr) * r;
}

std::string format(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  char buf[1024];
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

/// A failure this rank alone may see (a file it cannot write): one line, and
/// every rank ends.
[[noreturn]] void fail(const std::string &message) {
  std::string line = tool + ": error: " + message;
  zrt_abort(line.c_str());
}

/// A failure every rank should see alike (a bad option, a step that does not
/// fit the run): rank 0 prints the line and ends the job; the others wait to
/// be ended, so that the line appears once. If rank 0 did not see it (a file
/// only this rank cannot read), this rank prints it and ends the job itself.
[[noreturn]] void failAll(const std::string &message) {
  std::string line = tool + ": error: " + message;
  zrt_abort_all(line.c_str());
}

/// What stops this rank from writing an output the options name, or empty:
/// checked before anything trains (and, in zero-run, before compiling), so
/// that a long run's result is not lost to a path found bad at its end.
/// Nothing is left behind. Rank 0 writes the files; every rank writes into
/// --save's directory.
std::string outputProblem(const Options &opts, int rank) {
  std::string error;
  if (rank == 0) {
    const std::pair<const char *, const std::string *> files[] = {
        {"stats-json", &opts.statsJson}, {"dump-params", &opts.dumpParams},
        {"dump-grads", &opts.dumpGrads}, {"dump-batches", &opts.dumpBatches},
        {"trace", &opts.trace}};
    for (const auto &[name, path] : files)
      if (!path->empty() && !probeOutputFile(*path, error))
        return std::string("--") + name + ": " + error;
  }
  if (!opts.saveDir.empty() && !probeOutputDirectory(opts.saveDir, error))
    return "--save: " + error;
  return "";
}

//===----------------------------------------------------------------------===//
// Buffers and calls
//===----------------------------------------------------------------------===//

struct Tensor {
  void *data = nullptr;
  /// On the NVMe tier instead of in memory: the extent's handle.
  int64_t extent = 0;
  /// In host memory next to the device (the host reads it directly).
  bool host = false;
  int64_t elements = 0;
  DType dtype = DType::F32;
  size_t bytes() const { return static_cast<size_t>(elements) * dtypeBytes(dtype); }
  bool held() const { return data || extent; }
};

/// A zero-filled tensor counted in `category`: in memory, with `nvme` an
/// extent of the NVMe tier, with `host` in host memory next to the device
/// (zero-offload's optimizer=host).
Tensor allocate(int64_t elements, DType dtype, zrt_category category,
                bool nvme = false, bool host = false) {
  Tensor t;
  t.elements = elements;
  t.dtype = dtype;
  t.host = host;
  if (nvme)
    t.extent = zrt_nvme_alloc(t.bytes(), category);
  else if (host)
    t.data = zrt_alloc_host(t.bytes(), category);
  else
    t.data = zrt_alloc(t.bytes(), category);
  if (!t.held())
    fail(zrt_last_error());
  return t;
}

/// Whether the selected backend's buffers are host memory (cpu) or device
/// memory the driver reaches through copies (cuda); set after zrt_init.
bool hostMemory = true;

/// A tensor's values in memory for the driver to read or change: the
/// tensor itself, or for one on the NVMe tier or in device memory a copy in
/// the driver's own memory (not the runtime's: the step's figures stay its
/// own) that `store` writes back.
class HostView {
public:
  explicit HostView(Tensor &t, bool load = true) : t(&t) {
    if (!t.extent && (hostMemory || t.host)) {
      data = t.data;
      return;
    }
    copy.assign(t.bytes(), 0);
    data = copy.data();
    if (!load)
      return;
    if (t.extent ? zrt_nvme_read(t.extent, data, t.bytes()) != 0
                 : (zrt_copy_to_host(data, t.data, t.bytes()), false))
      fail(zrt_last_error());
  }
  void store() {
    if (t->extent) {
      if (zrt_nvme_write(t->extent, data, t->bytes()) != 0)
        fail(zrt_last_error());
    } else if (!hostMemory && !t->host) {
      zrt_copy_from_host(t->data, data, t->bytes());
    }
  }
  Tensor *t;
  std::vector<char> copy;
  void *data = nullptr;
};

/// The run's buffers, by role and descriptor index.
struct Buffers {
  std::vector<Tensor> params, grads, states, batch, hyperBuffers;
  Tensor loss;
  /// Hyper-parameter values in descriptor order.
  std::vector<double> hypers;
};

/// Sets each optimizer state of kind "master" (a mixed-precision step's
/// higher-precision copy of its parameter) to its parameter, converted: the
/// whole parameter, or this rank's slice of it when the state is sharded and
/// the parameter is not (stages 1-2); padding past the parameter is zero.
/// Every other state starts at zero.
void initMasterStates(const Abi &abi, Buffers &b, int rank) {
  for (size_t s = 0; s < abi.states.size(); ++s) {
    if (abi.states[s].kind != "master")
      continue;
    const Param &p = abi.params[abi.states[s].param];
    Tensor &param = b.params[abi.states[s].param];
    Tensor &state = b.states[s];
    HostView from(param), to(state, /*load=*/false);
    // The parameter's element that the state's element 0 holds.
    int64_t begin = param.elements == state.elements
                        ? 0
                        : static_cast<int64_t>(rank) * p.shard;
    size_t fromBytes = dtypeBytes(param.dtype), toBytes = dtypeBytes(state.dtype);
    for (int64_t e = 0; e < state.elements; ++e) {
      int64_t at = begin + e;
      double v = at < param.elements
                     ? loadElement(param.dtype, static_cast<const char *>(
                                                    from.data) +
                                                    at * fromBytes)
                     : 0.0;
      storeElement(state.dtype, v, static_cast<char *>(to.data) + e * toBytes);
    }
    to.store();
  }
}

/// Calls `entry` with `b`'s buffers; out-parameters get scratch buffers
/// copied back afterwards.
void call(const Entry &entry, Buffers &b) {
  std::vector<void *> args(entry.args.size());
  std::vector<uint64_t> scalars(entry.args.size());
  std::vector<std::pair<Tensor, void *>> copies;
  for (size_t i = 0; i < entry.args.size(); ++i) {
    const Arg &arg = entry.args[i];
    if (arg.scalar) {
      storeElement(arg.dtype, b.hypers[arg.index], &scalars[i]);
      args[i] = &scalars[i];
      continue;
    }
    Tensor *t = nullptr;
    switch (arg.role) {
    case Role::Param:
      t = &b.params[arg.index];
      break;
    case Role::Grad:
      t = &b.grads[arg.index];
      break;
    case Role::State:
      t = &b.states[arg.index];
      break;
    case Role::Batch:
      t = &b.batch[arg.index];
      break;
    case Role::Hyper: {
      t = &b.hyperBuffers[arg.index];
      HostView value(*t, /*load=*/false);
      storeElement(arg.dtype, b.hypers[arg.index], value.data);
      value.store();
      break;
    }
    case Role::Loss:
      t = &b.loss;
      break;
    }
    if (!t->held() || t->elements != arg.elements || t->dtype != arg.dtype ||
        (t->extent != 0) != arg.nvme || t->host != arg.host)
      fail("entry '" + entry.name + "' argument #" + std::to_string(i) +
           " does not match the buffer the descriptor gave its role");
    // An extent goes by value: args[i] points at the handle.
    args[i] = arg.nvme ? static_cast<void *>(&t->extent) : t->data;
    if (arg.outCopy) {
      // A second copy of the parameter or state: counted as one, as
      // zero-memory-report counts the argument.
      zrt_category category = arg.role == Role::Param   ? ZRT_PARAMS
                              : arg.role == Role::Grad  ? ZRT_GRADS
                              : arg.role == Role::State ? ZRT_OPTIMIZER_STATES
                                                        : ZRT_ACTIVATIONS;
      Tensor scratch =
          allocate(arg.elements, arg.dtype, category, false, arg.host);
      copies.emplace_back(scratch, t->data);
      args[i] = scratch.data;
    }
  }
  entry.fn(args.data());
  for (auto &c : copies) {
    // Host memory next to the device (optimizer=host) is the host's to
    // copy: the step has completed every transfer into it.
    if (c.first.host && !hostMemory)
      std::memcpy(c.second, c.first.data, c.first.bytes());
    else
      zrt_copy(c.second, c.first.data, static_cast<int64_t>(c.first.bytes()));
    zrt_free(c.first.data);
  }
}

/// The loss the last call wrote.
double readLoss(const Abi &abi, Buffers &b) {
  HostView loss(b.loss);
  return loadElement(abi.lossType, loss.data);
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

class ProgressBar {
public:
  /// `unit`: what the rate counts (tok for tokens, samples); `ranks`: the
  /// job's, whose rate update() is given (a rank's is shown beside it).
  ProgressBar(unsigned total, std::string mode, std::string unit, int ranks)
      : total(total), ranks(ranks), unit(std::move(unit)) {
    if (mode == "auto")
      mode = isatty(STDERR_FILENO) ? "bar" : "lines";
    bar = mode == "bar";
    quiet = mode == "none";
    every = std::max(1u, total / 20);
  }
  /// `lr` >= 0: the step's scheduled learning rate, shown after the loss.
  void update(unsigned done, double loss, double rate, double lr = -1) {
    if (quiet)
      return;
    char lrText[32] = "", rankText[48] = "";
    if (lr >= 0)
      std::snprintf(lrText, sizeof lrText, " lr %.3g", lr);
    if (ranks > 1)
      std::snprintf(rankText, sizeof rankText, " (%.0f a rank)", rate / ranks);
    if (bar) {
      constexpr unsigned width = 30;
      unsigned filled = total ? width * done / total : width;
      std::fprintf(stderr, "\r  step %5u/%u [%s%s] loss %.4f%s  %.0f %s/s%s  ",
                   done, total, std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), loss, lrText,
                   rate, unit.c_str(), rankText);
      if (done == total)
        std::fprintf(stderr, "\n");
      return;
    }
    if (done % every == 0 || done == total || done == 1)
      std::fprintf(stderr, "step %u/%u loss %.6f%s %.0f %s/s%s\n", done,
                   total, loss, lrText, rate, unit.c_str(), rankText);
  }

private:
  unsigned total, every;
  int ranks;
  std::string unit;
  bool bar = false, quiet = false;
};

void writeOrFail(const std::string &path, const std::vector<Chunk> &chunks) {
  std::string error;
  if (!writeFileAtomically(path, chunks, error))
    fail(error);
}

//===----------------------------------------------------------------------===//
// --trace
//===----------------------------------------------------------------------===//

/// This rank's traced events as Chrome trace events, comma-separated: pid
/// the rank, thread 0 compute (GEMMs, blocking waits, and "compute" for
/// the gaps between them up to `stepEnd`), thread 1 the communication
/// link. Times in microseconds, shifted by `offset` seconds.
std::string traceEvents(int rank, double offset, double stepEnd) {
  std::vector<zrt_trace_event> events(zrt_trace_count());
  for (size_t i = 0; i < events.size(); ++i)
    if (zrt_trace_get(i, &events[i]) != 0)
      fail(std::string("reading the trace: ") + zrt_last_error());
  std::stable_sort(events.begin(), events.end(),
                   [](const zrt_trace_event &a, const zrt_trace_event &b) {
                     return a.begin < b.begin;
                   });
  std::string out;
  auto emit = [&](JsonValue e) {
    if (!out.empty())
      out += ",\n";
    out += e.dump(-1);
  };
  auto meta = [&](const char *what, int tid, const std::string &name) {
    JsonValue e = JsonValue::object();
    e.set("name", JsonValue::string(what));
    e.set("ph", JsonValue::string("M"));
    e.set("pid", JsonValue::integer(rank));
    if (tid >= 0)
      e.set("tid", JsonValue::integer(tid));
    JsonValue args = JsonValue::object();
    args.set("name", JsonValue::string(name));
    e.set("args", std::move(args));
    emit(std::move(e));
  };
  meta("process_name", -1, "rank " + std::to_string(rank));
  meta("thread_name", 0, "compute");
  meta("thread_name", 1, "communication");
  auto slice = [&](int tid, const std::string &name, const char *cat,
                   double begin, double end, JsonValue args) {
    JsonValue e = JsonValue::object();
    e.set("name", JsonValue::string(name));
    e.set("cat", JsonValue::string(cat));
    e.set("ph", JsonValue::string("X"));
    e.set("pid", JsonValue::integer(rank));
    e.set("tid", JsonValue::integer(tid));
    e.set("ts", JsonValue::number((begin + offset) * 1e6));
    e.set("dur", JsonValue::number(std::max(0.0, end - begin) * 1e6));
    e.set("args", std::move(args));
    emit(std::move(e));
  };
  double cursor = 0;
  auto computeUntil = [&](double t) {
    if (t > cursor)
      slice(0, "compute", "compute", cursor, t, JsonValue::object());
    cursor = std::max(cursor, t);
  };
  for (const zrt_trace_event &e : events) {
    JsonValue args = JsonValue::object();
    const char *kind = zrt_collective_name(e.collective);
    switch (e.kind) {
    case ZRT_TRACE_GEMM: {
      computeUntil(e.begin);
      args.set("flops", JsonValue::integer(static_cast<int64_t>(e.flops)));
      std::string name = format("gemm %lldx%lldx%lld", (long long)e.m,
                                (long long)e.n, (long long)e.k);
      if (e.batch > 1)
        name = format("gemm %lld x ", (long long)e.batch) + name.substr(5);
      slice(0, name, "gemm", e.begin, e.end, std::move(args));
      cursor = std::max(cursor, e.end);
      break;
    }
    case ZRT_TRACE_BLOCKED:
    case ZRT_TRACE_WAIT:
      computeUntil(e.begin);
      if (e.kind == ZRT_TRACE_BLOCKED)
        args.set("bytes", JsonValue::integer(static_cast<int64_t>(e.bytes)));
      slice(0,
            std::string(e.kind == ZRT_TRACE_BLOCKED ? "blocked " : "wait ") +
                kind,
            "wait", e.begin, e.end, std::move(args));
      cursor = std::max(cursor, e.end);
      break;
    case ZRT_TRACE_COLLECTIVE:
      args.set("bytes", JsonValue::integer(static_cast<int64_t>(e.bytes)));
      slice(1, kind, "comm", e.begin, e.end, std::move(args));
      break;
    }
  }
  computeUntil(stepEnd);
  return out;
}

/// Writes the traced step of every rank to `path` (rank 0 writes; every
/// rank takes part). `wall` is this rank's system-clock time at
/// zrt_trace_start: ranks' traces are aligned by it (exact on one machine,
/// as close as the clocks are across machines).
void writeTrace(const std::string &path, double wall, double stepEnd) {
  const int rank = zrt_world_rank(), world = zrt_world_size();
  auto broadcast = [&](void *data, size_t bytes, int root) {
    if (zrt_broadcast_bytes(data, bytes, root) != 0)
      fail(std::string("gathering the trace: ") + zrt_last_error());
  };
  std::vector<double> walls(world);
  for (int r = 0; r < world; ++r) {
    double w = wall;
    broadcast(&w, sizeof w, r);
    walls[r] = w;
  }
  double first = *std::min_element(walls.begin(), walls.end());
  std::string mine = traceEvents(rank, wall - first, stepEnd);
  std::string all = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  for (int r = 0; r < world; ++r) {
    uint64_t size = r == rank ? mine.size() : 0;
    broadcast(&size, sizeof size, r);
    std::string part = r == rank ? mine : std::string(size, '\0');
    broadcast(part.data(), size, r);
    if (r > 0)
      all += ",\n";
    all += part;
  }
  all += "\n]}\n";
  if (rank == 0)
    writeOrFail(path, {{all.data(), all.size()}});
}

//===----------------------------------------------------------------------===//
// The gradient check
//===----------------------------------------------------------------------===//

int checkGradients(const Abi &abi, const Entry &fb, Buffers &b,
                   const Options &opts) {
  for (const Param &p : abi.params)
    if (p.dtype != DType::F64)
      failAll("--check-grads needs an f64 training step (finite differences "
              "in f32 cannot resolve 1e-6); generate one with --dtype f64");
  call(fb, b);
  std::vector<std::vector<double>> analytic;
  for (Tensor &g : b.grads) {
    HostView view(g);
    analytic.emplace_back(static_cast<double *>(view.data),
                          static_cast<double *>(view.data) + g.elements);
  }
  auto lossAt = [&]() {
    call(fb, b);
    return readLoss(abi, b);
  };
  double h = opts.checkStep, worst = 0;
  int64_t checked = 0;
  std::printf("%-36s %8s %12s %12s %12s\n", "parameter", "checked",
              "max_abs_err", "max_elem_rel", "norm_rel_err");
  for (size_t i = 0; i < abi.params.size(); ++i) {
    HostView param(b.params[i]);
    auto *x = static_cast<double *>(param.data);
    int64_t n = abi.params[i].numel;
    int64_t count = opts.checkMax == 0 ? n : std::min<int64_t>(n, opts.checkMax);
    double maxAbs = 0, maxRel = 0, diffSq = 0, fdSq = 0;
    for (int64_t c = 0; c < count; ++c) {
      int64_t e = count == n ? c : c * n / count;
      double x0 = x[e];
      double f[4];
      const double offsets[4] = {-2 * h, -h, h, 2 * h};
      for (int k = 0; k < 4; ++k) {
        x[e] = x0 + offsets[k];
        param.store();
        f[k] = lossAt();
      }
      x[e] = x0;
      param.store();
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
    double normRel =
        std::sqrt(diffSq) / std::max(std::sqrt(fdSq), opts.checkFloor);
    checked += count;
    worst = std::max(worst, normRel);
    std::printf("%-36s %8lld %12.2e %12.2e %12.2e\n",
                abi.params[i].name.c_str(), static_cast<long long>(count),
                maxAbs, maxRel, normRel);
  }
  bool passed = worst <= opts.checkTol;
  JsonValue summary = JsonValue::object();
  summary.set("checked", JsonValue::integer(checked));
  summary.set("max_norm_rel_error", JsonValue::number(worst));
  summary.set("tolerance", JsonValue::number(opts.checkTol));
  summary.set("passed", JsonValue::boolean(passed));
  std::printf("%s\n", summary.dump(-1).c_str());
  std::fflush(stdout);
  if (!passed)
    std::fprintf(stderr,
                 "%s: error: gradient check failed: a gradient's relative "
                 "error is %.2e > %.2e\n",
                 tool.c_str(), worst, opts.checkTol);
  return passed ? 0 : 1;
}

//===----------------------------------------------------------------------===//
// Checkpoints
//===----------------------------------------------------------------------===//

/// A buffer of the run as a checkpoint tensor: the parameter or state, its
/// full shape, the run's layout, and the elements this rank holds.
struct Held {
  CkptTensor tensor;
  Tensor *buffer;
  /// Elements [begin, end) of the flattened tensor that this rank saves
  /// (its slice, with ranks splitting the replicated tensors the same way)
  /// and loads (its slice if sharded, else everything).
  int64_t saveBegin, saveEnd, loadBegin, loadEnd;
};

/// The run's parameters and optimizer states as checkpoint tensors. The
/// flat layout (padded, shard) is the descriptor's.
std::vector<Held> heldTensors(const Abi &abi, Buffers &b, int rank) {
  std::vector<Held> held;
  auto add = [&](const Param &p, bool state, const std::string &kind,
                 Tensor &t) {
    Held h;
    h.tensor.state = state;
    h.tensor.param = p.name;
    h.tensor.kind = kind;
    h.tensor.dtype = t.dtype;
    h.tensor.shape = p.shape;
    h.tensor.numel = p.numel;
    h.tensor.padded = p.padded;
    h.tensor.shard = p.shard;
    h.tensor.sharded = t.elements != p.numel;
    if (h.tensor.sharded && t.elements != p.shard)
      failAll(h.tensor.label() + " has " + std::to_string(t.elements) +
              " elements, neither the parameter's " + std::to_string(p.numel) +
              " nor its shard of " + std::to_string(p.shard) +
              "; checkpoints hold elementwise states only");
    h.buffer = &t;
    h.saveBegin = std::min<int64_t>(rank * p.shard, p.numel);
    h.saveEnd = std::min<int64_t>(h.saveBegin + p.shard, p.numel);
    h.loadBegin = h.tensor.sharded ? h.saveBegin : 0;
    h.loadEnd = h.tensor.sharded ? h.saveEnd : p.numel;
    held.push_back(std::move(h));
  };
  for (size_t i = 0; i < abi.params.size(); ++i)
    add(abi.params[i], false, "", b.params[i]);
  for (size_t s = 0; s < abi.states.size(); ++s)
    add(abi.params[abi.states[s].param], true, abi.states[s].kind, b.states[s]);
  return held;
}

std::string describeTensor(const CkptTensor &t) {
  return std::string(dtypeName(t.dtype)) + " " + shapeString(t.shape);
}

/// ZERO_TEST_KILL_IN_SAVE=K:FILE: in this run's K-th save, the process
/// that writes FILE (`rank-00001.bin`, `manifest.json`) writes half of it
/// and kills itself, as a crash in the middle of a save would.
bool killInSave(unsigned save, const std::string &file) {
  const char *hook = std::getenv("ZERO_TEST_KILL_IN_SAVE");
  if (!hook)
    return false;
  std::string h = hook;
  size_t colon = h.find(':');
  return colon != std::string::npos &&
         std::strtoul(h.c_str(), nullptr, 10) == save &&
         h.substr(colon + 1) == file;
}

[[noreturn]] void writeHalfAndDie(const std::string &path,
                                  std::vector<Chunk> chunks) {
  size_t total = 0;
  for (const Chunk &c : chunks)
    total += c.bytes;
  size_t left = total / 2;
  for (Chunk &c : chunks) {
    c.bytes = std::min(c.bytes, left);
    left -= c.bytes;
  }
  uint32_t crc;
  std::string ignored;
  writeShardFile(path, chunks, crc, ignored);
  std::raise(SIGKILL);
  std::abort();
}

/// Saves the run after `step` steps into opts.saveDir/step-N. Every rank
/// writes its file into a temporary directory, rank 0 adds the manifest
/// with every file's size and CRC-32 and publishes the directory with one
/// rename. A failure (a full disk) ends the job with one line; the
/// previous checkpoint stays as it was. Returns the seconds it took.
double saveCheckpoint(const std::vector<Held> &held, const CkptManifest &base,
                      const Options &opts, int64_t step, unsigned saveIndex) {
  auto start = std::chrono::steady_clock::now();
  const int rank = zrt_world_rank(), world = zrt_world_size();
  const std::string root = opts.saveDir, final = checkpointDirName(step);
  const std::string temp = "." + final + ".tmp", tempPath = root + "/" + temp;
  auto failed = [&](const std::string &why) {
    fail(format("checkpoint of step %lld not saved: ", static_cast<long long>(step)) +
         why + " (an earlier checkpoint in '" + root + "' is untouched)");
  };
  std::string error;
  char ready = 1;
  if (rank == 0) {
    if (!makeDirectories(root, error))
      failed(error);
    removeTree(tempPath);
    if (::mkdir(tempPath.c_str(), 0777) != 0)
      failed("cannot create '" + tempPath + "': " + std::strerror(errno));
  }
  // Everyone writes once the directory exists. Not a counted collective:
  // a save does not change the step's communication figures.
  if (zrt_broadcast_bytes(&ready, 1, 0) != 0)
    fail(zrt_last_error());

  // Every rank's pieces, in tensor order per file: rank q saves elements
  // [q * shard, (q + 1) * shard) of each tensor.
  CkptManifest m = base;
  m.step = step;
  m.files.assign(world, CkptFile());
  for (int q = 0; q < world; ++q)
    m.files[q].name = shardFileName(q);
  std::vector<Chunk> mine;
  // Tensors on the NVMe tier are read into memory for the save.
  std::vector<HostView> views;
  views.reserve(held.size());
  for (const Held &h : held) {
    CkptTensor t = h.tensor;
    size_t eb = dtypeBytes(t.dtype);
    for (int q = 0; q < world; ++q) {
      int64_t begin = std::min<int64_t>(q * t.shard, t.numel);
      int64_t end = std::min<int64_t>(begin + t.shard, t.numel);
      if (begin >= end)
        continue;
      t.pieces.push_back({static_cast<unsigned>(q), m.files[q].bytes, begin, end});
      m.files[q].bytes += static_cast<uint64_t>(end - begin) * eb;
    }
    m.tensors.push_back(std::move(t));
    if (h.saveBegin < h.saveEnd) {
      views.emplace_back(*h.buffer);
      const char *data = static_cast<const char *>(views.back().data);
      int64_t first = h.tensor.sharded ? 0 : h.saveBegin;
      mine.push_back({data + first * eb,
                      static_cast<size_t>(h.saveEnd - h.saveBegin) * eb});
    }
  }
  const std::string file = tempPath + "/" + shardFileName(rank);
  if (killInSave(saveIndex, shardFileName(rank)))
    writeHalfAndDie(file, mine);
  // Every rank learns every file's CRC-32 (sizes it knows) or why it could
  // not be written, so that one line reports a failed save and rank 0
  // clears the temporary directory.
  struct {
    uint32_t crc = 0, failed = 0;
    char error[504] = {};
  } report;
  if (!writeShardFile(file, mine, report.crc, error)) {
    report.failed = 1;
    std::snprintf(report.error, sizeof report.error, "%s", error.c_str());
  }
  std::string firstError;
  for (int q = 0; q < world; ++q) {
    auto r = report;
    if (zrt_broadcast_bytes(&r, sizeof r, q) != 0)
      fail(zrt_last_error());
    m.files[q].crc32 = r.crc;
    if (r.failed && firstError.empty())
      firstError = world > 1 ? format("rank %d: %s", q, r.error) : r.error;
  }
  if (!firstError.empty()) {
    if (rank == 0)
      removeTree(tempPath);
    failAll(format("checkpoint of step %lld not saved: ",
                   static_cast<long long>(step)) +
            firstError + " (an earlier checkpoint in '" + root +
            "' is untouched)");
  }
  if (rank == 0) {
    std::string text = manifestToJson(m);
    std::string path = tempPath + "/" + kManifestName;
    if (killInSave(saveIndex, kManifestName))
      writeHalfAndDie(path, {{text.data(), text.size()}});
    uint32_t ignored;
    if (!writeShardFile(path, {{text.data(), text.size()}}, ignored, error) ||
        !publishCheckpoint(root, temp, final, error))
      failed(error);
    pruneCheckpoints(root, opts.saveKeep, final);
  }
  // The save is over on every rank once rank 0 has published it.
  if (zrt_broadcast_bytes(&ready, 1, 0) != 0)
    fail(zrt_last_error());
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  if (rank == 0 && opts.progress != "none") {
    uint64_t bytes = 0;
    for (const CkptFile &f : m.files)
      bytes += f.bytes;
    std::fprintf(stderr, "saved %s/%s: %.1f MB in %d file(s), %.2f s\n",
                 root.c_str(), final.c_str(), bytes / 1e6, world, seconds);
  }
  return seconds;
}

/// Loads checkpoint `path` into the run's buffers: the tensors are matched
/// by name and checked against the step, each rank verifies the checksums
/// of its share of the files, then reads the elements it holds (any pieces,
/// saved by any number of ranks). Returns the manifest.
CkptManifest resumeCheckpoint(std::vector<Held> &held, const std::string &path,
                              std::string &dir) {
  const int rank = zrt_world_rank(), world = zrt_world_size();
  std::string error;
  CkptManifest m;
  if (!openCheckpoint(path, dir, m, error))
    failAll(error);
  const std::string from = "checkpoint '" + dir + "'";
  bool fresh = !m.hasStates();
  for (const Held &h : held) {
    const CkptTensor &want = h.tensor;
    if (want.state && fresh)
      continue;
    const CkptTensor *t = m.find(want.param, want.kind);
    if (!t)
      failAll(from + " has no " + want.label() +
              "; it was saved from a different model or optimizer");
    if (t->dtype != want.dtype || t->shape != want.shape)
      failAll(want.label() + " is " + describeTensor(*t) + " in " + from +
              " but " + describeTensor(want) + " in this step");
  }
  for (const CkptTensor &t : m.tensors) {
    bool used = false;
    for (const Held &h : held)
      used |= h.tensor.param == t.param && h.tensor.kind == t.kind &&
              h.tensor.state == t.state;
    if (!used)
      failAll(from + " has " + t.label() + ", which this step " +
              (t.state ? "does not keep (a different optimizer)"
                       : "does not have (a different model)"));
  }
  // Checksums: the files split among the ranks.
  for (size_t f = static_cast<size_t>(rank); f < m.files.size(); f += world)
    if (!verifyFile(dir, m.files[f], error))
      fail(error + "; resume refused");
  CkptReader reader(dir, m);
  for (Held &h : held) {
    if (h.tensor.state && fresh)
      continue;
    const CkptTensor *t = m.find(h.tensor.param, h.tensor.kind);
    HostView view(*h.buffer, /*load=*/false);
    if (!reader.read(*t, h.loadBegin, h.loadEnd, view.data, error))
      fail(error + "; resume refused");
    view.store();
  }
  return m;
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

int train(const zrt_driver_program &program, Options &opts) {
  int threads = opts.threads;
  if (threads == 0) {
    // One per core, shared among the ranks on this machine (as the MPI
    // launcher tells them apart): ranks that each take every core would
    // fight over them.
    int cores =
        static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    int local = 1;
    for (const char *name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
      if (const char *value = std::getenv(name))
        local = std::max(1, std::atoi(value));
    threads = std::max(1, cores / local);
  }
  zrt_set_comm_timeout(opts.commTimeout);
  // The step says which backend runs it (its descriptor's `backend`).
  Abi abi;
  std::string error;
  if (!readAbi(program.abi_json, program.entries, abi, error))
    failAll(error);
  if (zrt_init(abi.backend.c_str(), threads) != 0)
    failAll(zrt_last_error());
  hostMemory = zrt_host_accessible() != 0;
  if (opts.tf32) {
    if (abi.backend != "cuda")
      failAll("--tf32: TF32 is a GPU's; this step was compiled for target=" +
              abi.backend);
    zrt_set_tf32(1);
  }
  zrt_set_sync_timing(opts.syncTiming ? 1 : 0);
  if (!opts.simLink.empty() &&
      zrt_set_sim_link(opts.linkGbps * 1e9, opts.linkLatencyUs * 1e-6) != 0)
    fail(zrt_last_error());
  const int world = zrt_world_size(), rank = zrt_world_rank();
  if (rank != 0)
    opts.progress = "none";

  if (abi.partitioned && abi.worldSize != world)
    failAll(format("the step was partitioned for %lld ranks but this run has "
                   "%d: run it under mpirun -np %lld, or compile it for %d "
                   "ranks",
                   static_cast<long long>(abi.worldSize), world,
                   static_cast<long long>(abi.worldSize), world));
  const Entry *trainStep = abi.find("train_step");
  const Entry *fb = abi.find("forward_backward");
  const Entry *opt = abi.find("optimizer");
  if (!abi.partitioned && world > 1)
    failAll(format("the step is not partitioned, so it trains on one rank "
                   "only, but this run has %d; partition it for %d ranks "
                   "(zero-run --stage S, zero-compile --stage S --world-size "
                   "%d)",
                   world, world, world));
  if (!trainStep && !(fb && opt))
    failAll("the step has neither a train_step entry nor forward_backward "
            "and optimizer entries");

  // The NVMe tier: what the step keeps there is compiled in (the
  // descriptor's placements); where is the run's choice.
  OffloadSpec offload;
  if (!opts.offload.empty() && !parseOffloadSpec(opts.offload, offload, error))
    failAll(error);
  bool statesOnNvme = false, paramsOnNvme = false, statesOnHost = false;
  for (const Entry &e : abi.entries)
    for (const Arg &arg : e.args) {
      if (arg.nvme) {
        statesOnNvme |= arg.role == Role::State;
        paramsOnNvme |= arg.role == Role::Param;
      }
      statesOnHost |= arg.host && arg.role == Role::State;
    }
  if (!hostMemory && (statesOnNvme || paramsOnNvme || offload.anyNvme() ||
                      !offload.nvmeDir.empty()))
    failAll("--offload: the NVMe tier runs with the cpu backend only, and "
            "this step was compiled for target=" + abi.backend);
  auto recompile = [&](const char *what, const char *spec) {
    failAll(format("--offload %s: this step keeps its %s in memory, and "
                   "placements are compiled in: compile it with %s (zero-run "
                   "does when it compiles the step itself)",
                   spec, what,
                   tool == "zero-run" ? "--offload on a module before "
                                        "zero-offload"
                                      : "zero-compile --offload"));
  };
  if (offload.optimizer == "nvme" && !statesOnNvme && !abi.states.empty())
    recompile("optimizer states", "optimizer=nvme");
  if (offload.params == "nvme" && !paramsOnNvme)
    recompile("parameters", "params=nvme");
  if (offload.optimizer == "host" && !statesOnHost && !abi.states.empty())
    recompile("optimizer states", "optimizer=host");
  if (statesOnNvme || paramsOnNvme) {
    if (offload.nvmeDir.empty())
      failAll(format("this step keeps its %s on the NVMe tier (zero-offload): "
                     "give --offload nvme-dir=DIR, a directory on a disk file "
                     "system",
                     statesOnNvme && paramsOnNvme ? "optimizer states and "
                                                    "parameter shards"
                     : statesOnNvme ? "optimizer states"
                                    : "parameter shards"));
    // Every rank opens its file in the same directory: a bad one is
    // reported once.
    if (zrt_nvme_open(offload.nvmeDir.c_str()) != 0)
      failAll(zrt_last_error());
  } else if (!offload.nvmeDir.empty()) {
    failAll("--offload nvme-dir=" + offload.nvmeDir +
            ": this step keeps nothing on the NVMe tier (compile it with "
            "--offload optimizer=nvme or params=nvme)");
  }
  if (opts.checkGrads && !fb)
    failAll("--check-grads checks forward_backward, which a partitioned "
            "step does not have; check the step before partitioning (no "
            "--stage, one rank)");
  if (!opts.dumpGrads.empty() && !fb)
    failAll("--dump-grads needs an unpartitioned step (a partitioned step "
            "keeps no full gradients)");
  for (const Param &p : abi.params)
    if (p.dtype != DType::F32 && p.dtype != DType::F64 &&
        p.dtype != DType::BF16)
      failAll("parameter '" + p.name + "' is " + dtypeName(p.dtype) +
              "; the CPU runtime trains f32, f64 and bf16 steps only");
  if (!isFloat(abi.lossType) || abi.lossType == DType::F16)
    failAll(std::string("the loss is ") + dtypeName(abi.lossType) +
            "; expected f32, f64 or bf16");

  // Hyper-parameters by name; `step` is filled in per step. A flag given
  // on the command line wins over the module's zero.hyper_default, which
  // wins over the flag's own default; --hyper NAME=VALUE wins over all.
  std::map<std::string, double> known = {
      {"lr", opts.lr},       {"beta1", opts.beta1},
      {"beta2", opts.beta2}, {"eps", opts.eps},
      {"weight_decay", opts.weightDecay}, {"max_grad_norm", opts.maxGradNorm}};
  for (const Hyper &hyper : abi.hypers) {
    std::string flag = hyper.name;
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (hyper.hasDefault && !opts.given.count(flag))
      known[hyper.name] = hyper.defaultValue;
  }
  for (const std::string &o : opts.hyperOverrides)
    known[o.substr(0, o.find('='))] = std::strtod(o.c_str() + o.find('=') + 1, nullptr);
  Buffers b;
  int stepSlot = -1, lrSlot = -1;
  for (size_t h = 0; h < abi.hypers.size(); ++h) {
    const Hyper &hyper = abi.hypers[h];
    if (hyper.dtype == DType::F16)
      failAll("hyper-parameter '" + hyper.name +
              "' is f16, which the driver does not pass");
    if (hyper.name == "step") {
      stepSlot = static_cast<int>(h);
      b.hypers.push_back(1);
      continue;
    }
    if (hyper.name == "lr")
      lrSlot = static_cast<int>(h);
    auto it = known.find(hyper.name);
    if (it == known.end())
      failAll("the optimizer takes hyper-parameter '" + hyper.name +
              "', which has no default; set it with --hyper " + hyper.name +
              "=VALUE");
    b.hypers.push_back(it->second);
  }
  // The schedule sets 'lr' step by step from its peak, the value above.
  bool scheduled = opts.warmupSteps > 0 || opts.lrDecay != "none";
  double peakLr = lrSlot >= 0 ? b.hypers[lrSlot] : 0;
  double minLr = opts.minLr >= 0 ? opts.minLr : peakLr / 10;
  if (scheduled && lrSlot < 0)
    failAll(std::string("--") +
            (opts.warmupSteps > 0 ? "warmup-steps" : "lr-decay") +
            " schedules the hyper-parameter 'lr', which this step's optimizer "
            "does not take");
  if (scheduled && !(peakLr > 0))
    failAll(format("a learning-rate schedule rises to a peak above 0, and "
                   "the peak (--lr) is %g",
                   peakLr));
  if (scheduled && opts.lrDecay != "none" && minLr > peakLr)
    failAll(format("--min-lr %g is above the peak learning rate %g; a decay "
                   "ends below its peak",
                   minLr, peakLr));

  BatchKind kind;
  if (!classifyBatch(abi, kind, error))
    failAll(error);
  TokenData data;
  if (kind == BatchKind::Language) {
    int64_t range = abi.batch[0].tokenRange;
    for (const BatchInput &in : abi.batch)
      if (in.tokenRange == 0)
        failAll("batch input '" + in.name +
                "' takes token ids but says not how many (zero.token_range "
                "on its argument); add it to the module so that the data can "
                "be checked");
      else
        range = std::min(range, in.tokenRange);
    if (!opts.dataFile.empty()) {
      if (!TokenData::load(opts.dataFile, data, error))
        failAll(error);
    } else {
      data = TokenData::builtinCorpus();
    }
    if (static_cast<int64_t>(data.maxToken) >= range)
      failAll(format("%s has token id %u, but the model takes ids below "
                     "%lld (zero.token_range); use a model with --vocab %u or "
                     "more",
                     data.describe().c_str(), data.maxToken,
                     static_cast<long long>(range), data.maxToken + 1));
  } else if (!opts.dataFile.empty()) {
    failAll("--data gives token files, which only language-model steps "
            "(batch inputs 'tokens' and 'targets') take");
  }

  // Buffers, each counted in its category, shaped as the entries take them.
  b.params.resize(abi.params.size());
  b.states.resize(abi.states.size());
  b.batch.resize(abi.batch.size());
  b.hyperBuffers.resize(abi.hypers.size());
  if (fb)
    b.grads.resize(abi.params.size());
  b.loss = allocate(1, abi.lossType, ZRT_ACTIVATIONS);
  for (const Entry &e : abi.entries)
    for (const Arg &arg : e.args) {
      if (arg.scalar || arg.outCopy)
        continue;
      std::vector<Tensor> *group = nullptr;
      zrt_category category = ZRT_ACTIVATIONS;
      switch (arg.role) {
      case Role::Param:
        group = &b.params;
        category = ZRT_PARAMS;
        break;
      case Role::Grad:
        group = &b.grads;
        category = ZRT_GRADS;
        break;
      case Role::State:
        group = &b.states;
        category = ZRT_OPTIMIZER_STATES;
        break;
      case Role::Batch:
        group = &b.batch;
        break;
      case Role::Hyper:
        group = &b.hyperBuffers;
        break;
      case Role::Loss:
        continue;
      }
      Tensor &t = (*group)[arg.index];
      if (!t.held())
        t = allocate(arg.elements, arg.dtype, category, arg.nvme, arg.host);
    }
  for (size_t i = 0; i < abi.params.size(); ++i)
    if (!b.params[i].held())
      failAll("parameter '" + abi.params[i].name + "' is no entry's argument");
  for (size_t s = 0; s < b.states.size(); ++s)
    if (!b.states[s].held())
      failAll("optimizer state '" + abi.states[s].kind + "' of '" +
              abi.params[abi.states[s].param].name + "' is no entry's argument");

  // A resumed run: parameters, optimizer states, step and seed from the
  // checkpoint.
  std::vector<Held> held;
  CkptManifest base;
  int64_t startStep = 0;
  double resumeSeconds = 0;
  std::string resumedFrom;
  if (!opts.saveDir.empty() || !opts.resume.empty()) {
    held = heldTensors(abi, b, rank);
    base.producer = tool;
    base.worldSize = world;
    base.stage = abi.stage;
    base.partitioned = abi.partitioned;
    if (kind == BatchKind::Language) {
      base.dataSource = data.source;
      base.dataTokens = static_cast<int64_t>(data.tokens.size());
      base.dataCrc = crc32Update(0, data.tokens.data(),
                                 data.tokens.size() * sizeof(uint16_t));
    }
    for (size_t h = 0; h < abi.hypers.size(); ++h)
      if (static_cast<int>(h) != stepSlot)
        base.hypers.emplace_back(abi.hypers[h].name, b.hypers[h]);
  }
  if (!opts.resume.empty()) {
    auto start = std::chrono::steady_clock::now();
    CkptManifest m = resumeCheckpoint(held, opts.resume, resumedFrom);
    resumeSeconds = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    startStep = m.step;
    opts.seed = m.seed;
    if (startStep > static_cast<int64_t>(opts.steps))
      failAll(format("checkpoint '%s' is at step %lld, past --steps %u (the "
                     "step count to train to); give --steps %lld or more",
                     resumedFrom.c_str(), static_cast<long long>(startStep),
                     opts.steps, static_cast<long long>(startStep)));
    bool statesFromZero = !m.hasStates() && !abi.states.empty();
    if (statesFromZero)
      initMasterStates(abi, b, rank);
    if (rank == 0 && statesFromZero && startStep > 0)
      std::fprintf(stderr,
                   "%s: warning: %s holds no optimizer states; this step's "
                   "optimizer starts its states from zero at step %lld\n",
                   tool.c_str(), resumedFrom.c_str(),
                   static_cast<long long>(startStep + 1));
    if (rank == 0 && opts.progress != "none") {
      std::fprintf(stderr,
                   "resumed from %s: step %lld, saved by %lld rank(s) at "
                   "stage %lld; %.2f s\n",
                   resumedFrom.c_str(), static_cast<long long>(startStep),
                   static_cast<long long>(m.worldSize),
                   static_cast<long long>(m.stage), resumeSeconds);
      if (!m.dataSource.empty() && !base.dataSource.empty() &&
          (m.dataTokens != base.dataTokens || m.dataCrc != base.dataCrc))
        std::fprintf(stderr,
                     "%s: warning: the checkpoint was trained on %s (%lld "
                     "tokens), this run reads %s (%lld tokens): the batches "
                     "from here on are not the ones the saved run would "
                     "have seen\n",
                     tool.c_str(), m.dataSource.c_str(),
                     static_cast<long long>(m.dataTokens),
                     base.dataSource.c_str(),
                     static_cast<long long>(base.dataTokens));
    }
  }
  base.seed = opts.seed;

  // Initial parameters: each built whole (the same on every rank), then a
  // sharded one keeps this rank's slice.
  std::string initBytes;
  size_t initOffset = 0;
  if (!opts.initFile.empty()) {
    size_t expected = 0;
    int64_t elements = 0;
    for (const Param &p : abi.params) {
      expected += static_cast<size_t>(p.numel) * dtypeBytes(p.dtype);
      elements += p.numel;
    }
    if (!readFileLimited(opts.initFile, expected, initBytes, error,
                         "--init file") ||
        initBytes.size() != expected)
      failAll(error.empty()
                  ? format("--init file '%s' has %zu bytes; the parameters "
                           "take %zu (%lld elements)",
                           opts.initFile.c_str(), initBytes.size(), expected,
                           static_cast<long long>(elements))
                  : error + format(" (the parameters take %zu bytes)", expected));
  }
  // In groups of up to kInitGroupBytes, whose parameters are drawn on
  // threads of their own (each parameter's stream is its own, so the
  // values do not depend on the threads): a deep model's billions of
  // normal draws take seconds, not minutes.
  constexpr size_t kInitGroupBytes = size_t(1) << 30;
  struct Pending {
    size_t index;
    HostView view;
    Tensor full;
    std::vector<char> fullHost;
    bool sharded;
  };
  for (size_t first = 0; first < abi.params.size() && opts.resume.empty();) {
    std::vector<std::unique_ptr<Pending>> group;
    size_t groupBytes = 0;
    for (; first < abi.params.size() &&
           (group.empty() || groupBytes < kInitGroupBytes);
         ++first) {
      const Param &p = abi.params[first];
      Tensor &t = b.params[first];
      auto q = std::make_unique<Pending>(
          Pending{first, HostView(t, /*load=*/false), t, {}, false});
      q->sharded = t.elements != p.numel;
      q->full.data = q->view.data;
      // The whole parameter, of which this rank keeps a slice: in runtime
      // memory where the host can reach it (counted as activations during
      // set-up), in the driver's own otherwise.
      if (q->sharded) {
        if (hostMemory) {
          q->full = allocate(p.numel, p.dtype, ZRT_ACTIVATIONS);
        } else {
          q->full.elements = p.numel;
          q->fullHost.resize(q->full.bytes());
          q->full.data = q->fullHost.data();
        }
      }
      groupBytes += q->full.bytes();
      if (!initBytes.empty()) {
        std::memcpy(q->full.data, initBytes.data() + initOffset,
                    q->full.bytes());
        initOffset += q->full.bytes();
      }
      group.push_back(std::move(q));
    }
    if (initBytes.empty()) {
      size_t workers = std::min<size_t>(
          group.size(), std::max(1u, std::thread::hardware_concurrency()));
      std::atomic<size_t> next{0};
      auto draw = [&] {
        for (size_t k; (k = next++) < group.size();)
          initParam(abi.params[group[k]->index],
                    static_cast<unsigned>(group[k]->index), opts.seed,
                    group[k]->full.data);
      };
      std::vector<std::thread> threads;
      for (size_t w = 1; w < workers; ++w)
        threads.emplace_back(draw);
      draw();
      for (std::thread &th : threads)
        th.join();
    }
    for (auto &q : group) {
      const Param &p = abi.params[q->index];
      if (q->sharded) {
        size_t eltBytes = dtypeBytes(p.dtype);
        int64_t begin = std::min<int64_t>(rank * p.shard, p.numel);
        int64_t end = std::min<int64_t>(begin + p.shard, p.numel);
        std::memcpy(q->view.data,
                    static_cast<char *>(q->full.data) + begin * eltBytes,
                    static_cast<size_t>(end - begin) * eltBytes);
        if (hostMemory)
          zrt_free(q->full.data);
      }
      q->view.store();
    }
  }
  if (opts.resume.empty())
    initMasterStates(abi, b, rank);
  initBytes.clear();
  initBytes.shrink_to_fit();

  // Batches are drawn into the batch buffers, or into host copies that go
  // to the device.
  std::vector<HostView> batchViews;
  std::vector<void *> batchPtrs;
  for (Tensor &t : b.batch) {
    batchViews.emplace_back(t, /*load=*/false);
    batchPtrs.push_back(batchViews.back().data);
  }
  BatchSource batches;
  if (!batches.init(abi, kind, &data, opts.seed, static_cast<unsigned>(rank),
                    static_cast<unsigned>(world), error))
    failAll(error);
  auto fillBatches = [&](unsigned step) {
    batches.fill(step, batchPtrs);
    for (HostView &v : batchViews)
      v.store();
  };
  fillBatches(0);

  // --dump-batches: rank 0 draws every rank's micro-batch of each step to be
  // trained (the draw depends only on the seed, the step and the rank) and
  // stacks them in rank order: the global batch a one-process reference
  // trains on. Plain host memory, outside the counted categories.
  std::vector<char> batchDump;
  if (!opts.dumpBatches.empty() && rank == 0) {
    std::vector<BatchSource> sources(static_cast<size_t>(world));
    for (int r = 0; r < world; ++r)
      if (!sources[r].init(abi, kind, &data, opts.seed,
                           static_cast<unsigned>(r),
                           static_cast<unsigned>(world), error))
        failAll(error);
    std::vector<std::vector<char>> micro(b.batch.size());
    std::vector<void *> microPtrs;
    for (size_t i = 0; i < b.batch.size(); ++i) {
      micro[i].resize(b.batch[i].bytes());
      microPtrs.push_back(micro[i].data());
    }
    for (unsigned s = static_cast<unsigned>(startStep); s < opts.steps; ++s) {
      std::vector<std::vector<char>> global(b.batch.size());
      for (int r = 0; r < world; ++r) {
        sources[r].fill(opts.fixedBatch ? 0 : s, microPtrs);
        for (size_t i = 0; i < micro.size(); ++i)
          global[i].insert(global[i].end(), micro[i].begin(), micro[i].end());
      }
      for (const std::vector<char> &g : global)
        batchDump.insert(batchDump.end(), g.begin(), g.end());
    }
  }

  if (opts.checkGrads)
    return checkGradients(abi, *fb, b, opts);

  // Throughput as users compare it: the job's items a step (every rank
  // trains its own micro-batches), with a rank's beside it.
  const int64_t rankItems = itemsPerBatch(abi, kind);
  const int64_t items = rankItems * world;
  std::vector<double> losses, stepTimes, lrs;
  // The steps the GEMM and kernel counters cover: stepTimes[profileFrom..].
  size_t profileFrom = 0;
  ProgressBar bar(opts.steps, opts.progress,
                  kind == BatchKind::Language ? "tok" : "samples", world);
  zrt_reset_gemm_stats();
  zrt_reset_comm_stats();
  zrt_reset_nvme_stats();
  // Peaks from here on are the training's, not set-up's.
  zrt_reset_peaks();
  std::vector<double> saveSeconds;
  // --trace: the last step's timeline.
  double traceWall = 0, traceEnd = 0;
  bool traced = false;
  for (unsigned s = static_cast<unsigned>(startStep); s < opts.steps; ++s) {
    bool trace = !opts.trace.empty() && s + 1 == opts.steps;
    if (trace) {
      zrt_trace_start();
      traceWall = std::chrono::duration<double>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    }
    if (opts.simLinkAlternate) {
      // Between steps nothing is in flight: every collective of the last
      // step was waited for, and every rank switches at the same step.
      bool on = (s - static_cast<unsigned>(startStep)) % 2 == 1;
      if (zrt_set_sim_link(on ? opts.linkGbps * 1e9 : 0.0,
                           on ? opts.linkLatencyUs * 1e-6 : 0.0) != 0)
        failAll(zrt_last_error());
    }
    auto start = std::chrono::steady_clock::now();
    if (s > 0 && !opts.fixedBatch)
      fillBatches(s);
    if (stepSlot >= 0)
      b.hypers[stepSlot] = s + 1;
    if (scheduled)
      b.hypers[lrSlot] = lrAt(opts, peakLr, minLr, s + 1);
    if (lrSlot >= 0)
      lrs.push_back(b.hypers[lrSlot]);
    if (trainStep) {
      call(*trainStep, b);
    } else {
      call(*fb, b);
      call(*opt, b);
    }
    double l = readLoss(abi, b);
    if (!std::isfinite(l))
      failAll(format("the loss is %g at step %u; lower --lr or enable "
                     "gradient clipping",
                     l, s + 1));
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    if (trace) {
      zrt_trace_stop();
      traceEnd = seconds;
      traced = true;
    }
    losses.push_back(l);
    stepTimes.push_back(seconds);
    // --sync-timing profiles the steady state: the first step's one-time
    // costs (module loads, GEMM plans, cuBLASLt's lazily loaded kernels)
    // would make the slowest kernels those that ran first.
    if (opts.syncTiming && stepTimes.size() == 1 &&
        s + 1 < opts.steps) {
      zrt_reset_gemm_stats();
      profileFrom = 1;
    }
    double m = median(stepTimes);
    bar.update(s + 1, l, m > 0 ? items / m : 0,
               scheduled ? b.hypers[lrSlot] : -1);
    if (!opts.saveDir.empty() &&
        ((opts.saveEvery && (s + 1) % opts.saveEvery == 0) ||
         s + 1 == opts.steps)) {
      // Memory peaks and communication figures stay the step's own.
      saveSeconds.push_back(saveCheckpoint(held, base, opts, s + 1,
                                           static_cast<unsigned>(saveSeconds.size() + 1)));
    }
  }
  if (!opts.saveDir.empty() && startStep == static_cast<int64_t>(opts.steps) &&
      opts.resume.empty())
    saveSeconds.push_back(saveCheckpoint(held, base, opts, startStep, 1));
  const unsigned trained = opts.steps - static_cast<unsigned>(startStep);

  if (!opts.trace.empty()) {
    if (!traced)
      failAll("--trace FILE traces the last step, and this run trains none "
              "(it is at --steps already)");
    writeTrace(opts.trace, traceWall, traceEnd);
  }

  zrt_memory_stats mem;
  zrt_get_memory_stats(&mem);
  zrt_gemm_stats gemm;
  zrt_get_gemm_stats(&gemm);
  zrt_comm_stats comm;
  zrt_get_comm_stats(&comm);
  zrt_nvme_stats nvme;
  zrt_get_nvme_stats(&nvme);
  // The largest peak of any rank, per category (every rank takes part).
  std::vector<double> peakMax(ZRT_NUM_CATEGORIES + 1);
  for (int c = 0; c <= ZRT_NUM_CATEGORIES; ++c)
    peakMax[c] = zrt_collective_scalar(
        zrt_make_collective_op(ZRT_SCALAR_ALL_REDUCE, ZRT_REDUCE_MAX,
                               ZRT_ELEMENT_F64),
        static_cast<double>(c < ZRT_NUM_CATEGORIES ? mem.peak[c]
                                                   : mem.peak_total));

  // Full parameters for --dump-params: sharded ones are gathered (every
  // rank takes part), and rank 0 writes.
  std::vector<Tensor> gathered;
  gathered.reserve(abi.params.size());
  std::vector<HostView> views;
  std::vector<Chunk> paramChunks;
  if (!opts.dumpParams.empty())
    for (size_t i = 0; i < abi.params.size(); ++i) {
      const Param &p = abi.params[i];
      Tensor &t = b.params[i];
      if (t.elements == p.numel) {
        views.emplace_back(t);
        paramChunks.push_back({views.back().data, t.bytes()});
        continue;
      }
      // The shard in runtime memory (read first from the NVMe tier, which
      // only the cpu backend has).
      void *data = t.data;
      if (t.extent) {
        views.emplace_back(t);
        data = views.back().data;
      }
      Tensor all = allocate(p.padded, p.dtype, ZRT_ACTIVATIONS);
      zrt_element_type type = p.dtype == DType::F32    ? ZRT_ELEMENT_F32
                              : p.dtype == DType::BF16 ? ZRT_ELEMENT_BF16
                                                       : ZRT_ELEMENT_F64;
      zrt_collective_run(
          zrt_make_collective_op(ZRT_ALL_GATHER, ZRT_REDUCE_NONE, type), data,
          all.data, t.elements);
      gathered.push_back(all);
      views.emplace_back(gathered.back());
      paramChunks.push_back({views.back().data,
                             static_cast<size_t>(p.numel) * dtypeBytes(p.dtype)});
    }

  if (rank == 0) {
    double stepTime = median(stepTimes);
    // The time of the steps the GEMM and kernel counters cover.
    double totalTime = 0;
    for (size_t i = profileFrom; i < stepTimes.size(); ++i)
      totalTime += stepTimes[i];
    double compile = program.compile_seconds;
    zrt_gemm_backend blas{"", "", "", ""};
    zrt_get_gemm_backend(&blas);
    std::string resumed =
        startStep > 0 ? format(" (steps %lld-%u, resumed)",
                               static_cast<long long>(startStep + 1), opts.steps)
                      : "";
    if (losses.empty())
      std::printf("nothing to train: %s%s is at step %u, the --steps to "
                  "train to\n",
                  resumedFrom.empty() ? "the run" : "checkpoint ",
                  resumedFrom.c_str(), opts.steps);
    if (!losses.empty())
      std::printf("trained %u steps%s: loss %.4f -> %.4f; median step %.2f ms, "
                  "%.0f %s/s%s; GEMM %.0f%% of step time (%s kernels); "
                  "%d threads; compile %.2f s\n",
                  trained, resumed.c_str(), losses.front(), losses.back(), stepTime * 1e3,
                  stepTime > 0 ? items / stepTime : 0,
                  kind == BatchKind::Language ? "tokens" : "samples",
                  world > 1 ? format(" (%.0f a rank, %d ranks)",
                                     stepTime > 0 ? rankItems / stepTime : 0,
                                     world)
                                  .c_str()
                            : "",
                  totalTime > 0 ? 100 * gemm.seconds / totalTime : 0,
                  blas.kernel, zrt_get_num_threads(),
                  compile < 0 ? 0.0 : compile);
    std::fflush(stdout);

    if (!opts.statsJson.empty()) {
      JsonValue stats = JsonValue::object();
      JsonValue lossArray = JsonValue::array();
      for (double l : losses)
        lossArray.push(JsonValue::number(l));
      stats.set("losses", std::move(lossArray));
      if (lrSlot >= 0) {
        // The learning rate each trained step used (--warmup-steps,
        // --lr-decay).
        JsonValue lrArray = JsonValue::array();
        for (double v : lrs)
          lrArray.push(JsonValue::number(v));
        stats.set("lrs", std::move(lrArray));
      }
      JsonValue peak = JsonValue::object(), peakMaxObj = JsonValue::object();
      for (int c = 0; c < ZRT_NUM_CATEGORIES; ++c) {
        const char *name = zrt_category_name(static_cast<zrt_category>(c));
        peak.set(name, JsonValue::integer(static_cast<int64_t>(mem.peak[c])));
        peakMaxObj.set(name,
                       JsonValue::integer(static_cast<int64_t>(peakMax[c])));
      }
      peak.set("total", JsonValue::integer(static_cast<int64_t>(mem.peak_total)));
      // What the process really held at most: live bytes plus the
      // runtime's cache of freed blocks.
      peak.set("reserved",
               JsonValue::integer(static_cast<int64_t>(mem.reserved_peak)));
      peakMaxObj.set("total", JsonValue::integer(static_cast<int64_t>(
                                  peakMax[ZRT_NUM_CATEGORIES])));
      stats.set("peak_bytes", std::move(peak));
      stats.set("peak_bytes_max_over_ranks", std::move(peakMaxObj));
      if (statesOnHost) {
        // Host memory next to the device (optimizer=host), this rank's.
        JsonValue host = JsonValue::object();
        for (int c = 0; c < ZRT_NUM_CATEGORIES; ++c)
          host.set(zrt_category_name(static_cast<zrt_category>(c)),
                   JsonValue::integer(static_cast<int64_t>(mem.host_peak[c])));
        host.set("total",
                 JsonValue::integer(static_cast<int64_t>(mem.host_peak_total)));
        stats.set("host_peak_bytes", std::move(host));
      }
      // Bytes this rank sent per step, per collective kind.
      JsonValue commBytes = JsonValue::object(), commCalls = JsonValue::object();
      for (int k = 0; k < ZRT_NUM_COLLECTIVES; ++k) {
        const char *name = zrt_collective_name(static_cast<zrt_collective>(k));
        commBytes.set(name, JsonValue::integer(static_cast<int64_t>(
                                trained ? comm.bytes_sent[k] / trained : 0)));
        commCalls.set(name, JsonValue::integer(static_cast<int64_t>(
                                trained ? comm.calls[k] / trained : 0)));
      }
      stats.set("comm_bytes", std::move(commBytes));
      stats.set("comm_calls", std::move(commCalls));
      // Seconds per step: the collectives' own time (on whichever thread
      // ran them), and the time the step was blocked waiting for started
      // ones.
      double commSeconds = 0;
      for (int k = 0; k < ZRT_NUM_COLLECTIVES; ++k)
        commSeconds += comm.seconds[k];
      stats.set("comm_seconds_per_step",
                JsonValue::number(trained ? commSeconds / trained : 0.0));
      stats.set("wait_seconds_per_step",
                JsonValue::number(trained ? comm.wait_seconds / trained : 0.0));
      if (statesOnNvme || paramsOnNvme) {
        // Rank 0's figures; every rank's file holds the same extents.
        JsonValue tier = JsonValue::object(), reserved = JsonValue::object();
        for (int c = 0; c < ZRT_NUM_CATEGORIES; ++c)
          reserved.set(zrt_category_name(static_cast<zrt_category>(c)),
                       JsonValue::integer(static_cast<int64_t>(nvme.reserved[c])));
        tier.set("dir", JsonValue::string(offload.nvmeDir));
        tier.set("reserved_bytes", std::move(reserved));
        tier.set("file_bytes", JsonValue::integer(static_cast<int64_t>(nvme.file_bytes)));
        tier.set("disk_bytes", JsonValue::integer(static_cast<int64_t>(nvme.disk_bytes)));
        tier.set("read_bytes_per_step",
                 JsonValue::integer(trained ? static_cast<int64_t>(nvme.read_bytes / trained) : 0));
        tier.set("written_bytes_per_step",
                 JsonValue::integer(trained ? static_cast<int64_t>(nvme.written_bytes / trained) : 0));
        tier.set("wait_seconds_per_step",
                 JsonValue::number(trained ? nvme.wait_seconds / trained : 0.0));
        stats.set("nvme", std::move(tier));
      }
      if (!opts.simLink.empty()) {
        JsonValue link = JsonValue::object();
        link.set("gbps", JsonValue::number(std::isinf(opts.linkGbps)
                                               ? -1.0
                                               : opts.linkGbps));
        link.set("latency_us", JsonValue::number(opts.linkLatencyUs));
        link.set("alternate", JsonValue::boolean(opts.simLinkAlternate));
        stats.set("sim_link", std::move(link));
      }
      // Every trained step's time, in order; with --sim-link-alternate,
      // whether the link was on in it.
      JsonValue times = JsonValue::array();
      for (double t : stepTimes)
        times.push(JsonValue::number(t));
      stats.set("step_times_s", std::move(times));
      if (opts.simLinkAlternate) {
        JsonValue on = JsonValue::array();
        // The run's second, fourth, ... steps had it.
        for (size_t i = 0; i < stepTimes.size(); ++i)
          on.push(JsonValue::boolean(i % 2 == 1));
        stats.set("sim_link_steps", std::move(on));
      }
      stats.set("step_time_s", JsonValue::number(stepTime));
      // The mean over the steps the GEMM and kernel counters cover
      // ("profiled_steps": all of them, but the first with --sync-timing).
      const size_t profiled = stepTimes.size() - profileFrom;
      stats.set("step_time_mean_s",
                JsonValue::number(profiled ? totalTime / profiled : 0.0));
      stats.set("profiled_steps",
                JsonValue::integer(static_cast<int64_t>(profiled)));
      // The job's throughput, and one rank's (named apart).
      const bool language = kind == BatchKind::Language;
      const double jobRate = stepTime > 0 ? items / stepTime : 0.0,
                   rankRate = stepTime > 0 ? rankItems / stepTime : 0.0;
      const int64_t samples = abi.batch[0].shape[0];
      stats.set("tokens_per_s", JsonValue::number(language ? jobRate : 0.0));
      stats.set("tokens_per_s_per_rank",
                JsonValue::number(language ? rankRate : 0.0));
      stats.set("samples_per_s",
                JsonValue::number(stepTime > 0 ? samples * world / stepTime
                                               : 0.0));
      stats.set("samples_per_s_per_rank",
                JsonValue::number(stepTime > 0 ? samples / stepTime : 0.0));
      int64_t numel = 0;
      for (const Param &p : abi.params)
        numel += p.numel;
      stats.set("params", JsonValue::integer(numel));
      stats.set("world_size", JsonValue::integer(world));
      // The runtime backend (the step's target); on "cuda" the GEMM
      // seconds are the host's time to queue them, not the device's.
      stats.set("backend", JsonValue::string(abi.backend));
      stats.set("tf32", JsonValue::boolean(opts.tf32));
      stats.set("stage", JsonValue::integer(abi.stage));
      stats.set("partitioned", JsonValue::boolean(abi.partitioned));
      stats.set("steps", JsonValue::integer(trained));
      stats.set("first_step", JsonValue::integer(startStep + 1));
      if (!opts.saveDir.empty() || !opts.resume.empty()) {
        JsonValue ckpt = JsonValue::object();
        JsonValue saves = JsonValue::array();
        for (double t : saveSeconds)
          saves.push(JsonValue::number(t));
        ckpt.set("save_seconds", std::move(saves));
        ckpt.set("resume_seconds", JsonValue::number(resumeSeconds));
        if (!resumedFrom.empty())
          ckpt.set("resumed_from", JsonValue::string(resumedFrom));
        stats.set("checkpoint", std::move(ckpt));
      }
      stats.set("compile_time_s", JsonValue::number(compile < 0 ? 0.0 : compile));
      stats.set("ahead_of_time", JsonValue::boolean(compile < 0));
      JsonValue gemmObj = JsonValue::object();
      gemmObj.set("calls", JsonValue::integer(static_cast<int64_t>(gemm.calls)));
      gemmObj.set("flops", JsonValue::integer(static_cast<int64_t>(gemm.flops)));
      gemmObj.set("seconds", JsonValue::number(gemm.seconds));
      gemmObj.set("share_of_step_time",
                  JsonValue::number(totalTime > 0 ? gemm.seconds / totalTime : 0.0));
      gemmObj.set("library", JsonValue::string(blas.library));
      gemmObj.set("kernel", JsonValue::string(blas.kernel));
      gemmObj.set("detected_kernel", JsonValue::string(blas.detected));
      gemmObj.set("kernel_chosen_by", JsonValue::string(blas.chosen_by));
      stats.set("gemm", std::move(gemmObj));
      stats.set("threads", JsonValue::integer(zrt_get_num_threads()));
      JsonValue shapes = JsonValue::array();
      for (size_t i = 0, e = zrt_gemm_shape_count(); i < e; ++i) {
        zrt_gemm_shape shape;
        if (zrt_get_gemm_shape(i, &shape) != 0)
          continue;
        JsonValue s = JsonValue::object();
        s.set("dtype_bytes", JsonValue::integer(shape.dtype_bytes));
        s.set("batch", JsonValue::integer(shape.batch));
        s.set("m", JsonValue::integer(shape.m));
        s.set("n", JsonValue::integer(shape.n));
        s.set("k", JsonValue::integer(shape.k));
        s.set("calls", JsonValue::integer(static_cast<int64_t>(shape.calls)));
        s.set("seconds", JsonValue::number(shape.seconds));
        shapes.push(std::move(s));
      }
      stats.set("gemm_shapes", std::move(shapes));
      // Generated kernels (target=cuda), the slowest first; their seconds
      // (and the GEMMs') are the device's with --sync-timing.
      std::vector<zrt_kernel_stats> kernels;
      for (size_t i = 0, e = zrt_kernel_stats_count(); i < e; ++i) {
        zrt_kernel_stats k;
        if (zrt_get_kernel_stats(i, &k) == 0 && k.launches > 0)
          kernels.push_back(k);
      }
      std::stable_sort(kernels.begin(), kernels.end(),
                       [](const zrt_kernel_stats &a, const zrt_kernel_stats &b) {
                         return a.seconds > b.seconds;
                       });
      JsonValue kernelArray = JsonValue::array();
      for (const zrt_kernel_stats &k : kernels) {
        JsonValue o = JsonValue::object();
        o.set("name", JsonValue::string(k.name));
        o.set("launches", JsonValue::integer(static_cast<int64_t>(k.launches)));
        o.set("seconds", JsonValue::number(k.seconds));
        kernelArray.push(std::move(o));
      }
      stats.set("kernels", std::move(kernelArray));
      stats.set("sync_timing", JsonValue::boolean(opts.syncTiming));
      std::string text = stats.dump(2) + "\n";
      writeOrFail(opts.statsJson, {{text.data(), text.size()}});
    }
    if (!opts.dumpParams.empty())
      writeOrFail(opts.dumpParams, paramChunks);
    if (!opts.dumpBatches.empty())
      writeOrFail(opts.dumpBatches, {{batchDump.data(), batchDump.size()}});
    if (!opts.dumpGrads.empty()) {
      std::vector<Chunk> chunks;
      std::vector<HostView> grads;
      for (Tensor &g : b.grads) {
        grads.emplace_back(g);
        chunks.push_back({grads.back().data, g.bytes()});
      }
      writeOrFail(opts.dumpGrads, chunks);
    }
  }

  for (Tensor &t : gathered)
    zrt_free(t.data);
  for (auto *group : {&b.params, &b.grads, &b.states, &b.batch, &b.hyperBuffers})
    for (Tensor &t : *group)
      zrt_free(t.data);
  zrt_free(b.loss.data);
  zrt_shutdown();
  return 0;
}
} // namespace

extern "C" const char *zrt_driver_usage(void) { return kUsage; }

extern "C" int zrt_driver_option_arity(const char *name) {
  Options opts;
  if (!name)
    return -1;
  for (const Spec &s : optionSpecs(opts))
    if (std::strcmp(s.name, name) == 0)
      return s.kind == Flag ? 0 : 1;
  return -1;
}

extern "C" int zrt_driver_check_args(int argc, char **argv, char *error,
                                     size_t size) {
  Options opts;
  std::string message;
  if (parseOptions(argc, argv, opts, message) &&
      (opts.help ||
       (message = outputProblem(opts, zrt_world_rank())).empty()))
    return 0;
  if (error && size)
    std::snprintf(error, size, "%s", message.c_str());
  return 1;
}

extern "C" int zrt_driver_main(int argc, char **argv,
                               const zrt_driver_program *program) {
  if (!program) {
    std::fprintf(stderr, "zero-driver: error: no program given\n");
    return 1;
  }
  if (program->tool && *program->tool)
    tool = program->tool;
  Options opts;
  std::string error;
  if (!parseOptions(argc, argv, opts, error))
    failAll(error);
  if (opts.help) {
    if (program->usage)
      std::fputs(program->usage, stdout);
    else
      std::printf("%s: train a compiled training step (run it under mpirun "
                  "for more than one rank)\n\nUSAGE: %s [options]\n\n",
                  tool.c_str(), tool.c_str());
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (std::string problem = outputProblem(opts, zrt_world_rank());
      !problem.empty())
    failAll(problem);
  return train(*program, opts);
}
