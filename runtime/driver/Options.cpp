//===- Options.cpp - Parsing and checking the options ---------------------===//
//
// The option table (names, kinds and the fields they set), the --help
// text, and the checks of options against each other; zrt_driver_usage and
// zrt_driver_option_arity answer from the same table.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "zero/driver.h"

#include "Failing.h"
#include "Files.h"
#include "LinkSpec.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

using namespace zero::driver;

namespace {

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

/// The options checked against each other (after every one is parsed);
/// false with a one-line message.
bool checkOptions(Options &opts, std::string &error) {
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

} // namespace

namespace zero::driver {

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
  return checkOptions(opts, error);
}

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

} // namespace zero::driver

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
