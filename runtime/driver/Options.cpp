//===- Options.cpp - Parsing and checking the options ---------------------===//
//
// The option table (each option's name, kind, field, section and help),
// parsed with CLI11 and printed as --help from it, and the checks of options
// against each other; zrt_driver_usage and zrt_driver_option_arity answer
// from the same table.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "zero/driver.h"

#include "Failing.h"
#include "Files.h"
#include "LinkSpec.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>

using namespace zero::driver;

namespace {

/// A part of --help: the heading its options are listed under, and a
/// paragraph after them.
struct Section {
  const char *heading;
  const char *after;
};

const Section kSections[] = {
    {"Training",
     "Batches: language-model steps (batch inputs 'tokens' and 'targets', "
     "whose zero.token_range bounds the token ids) read --data or the "
     "built-in corpus; regression steps ('input', 'target') get synthetic "
     "data from a fixed random teacher. Under mpirun each rank takes its "
     "micro-batch (the step's batch size) of a global batch of N "
     "micro-batches; rank 0 prints and writes files. Files are written whole "
     "or not at all."},
    {"Hyper-parameters (fed to the step's zero.hyper arguments by name; a "
     "module's zero.hyper_default, as zero_mlir.torch writes the settings it "
     "was exported with, replaces the defaults below; a flag given here "
     "wins)",
     nullptr},
    {"Learning-rate schedule (the hyper-parameter 'lr' of step t, 1-based; "
     "the peak is --lr, or what replaced it; a resumed run needs the same "
     "flags)",
     nullptr},
    {"Gradient check (unpartitioned f64 steps)", nullptr},
};
enum SectionId { Training, Hyper, Schedule, GradCheck };

enum Kind { Flag, Unsigned, Int, UInt64, Double, String, List };
struct Spec {
  const char *name;
  Kind kind;
  void *target;
  const char *value; ///< What --help calls the value (none for a flag).
  SectionId section;
  /// Its --help text, wrapped there: '\n' ends a paragraph, a paragraph's
  /// leading spaces indent each of its lines, and '~' is a space that does
  /// not break a line.
  const char *help;
};

/// Every training option, bound to its field of `opts`, in --help's order.
std::vector<Spec> optionSpecs(Options &opts) {
  return {
      {"steps", Unsigned, &opts.steps, "N", Training,
       "the step count to train to (default 100): a run resumed from step K "
       "trains steps K+1..N"},
      {"seed", UInt64, &opts.seed, "S", Training,
       "seed of parameter init and batch sampling (default 0)"},
      {"data", String, &opts.dataFile, "FILE", Training,
       "uint16 token file (headerless little-endian, nanoGPT's .bin); "
       "default: the built-in corpus"},
      {"fixed-batch", Flag, &opts.fixedBatch, nullptr, Training,
       "train on the first batch at every step"},
      {"init", String, &opts.initFile, "FILE", Training,
       "initial parameters: raw little-endian values of every parameter in "
       "order (what --dump-params writes); without it each parameter is "
       "initialized as its zero.init attribute says (docs/runtime-abi.md)"},
      {"save", String, &opts.saveDir, "DIR", Training,
       "save a sharded checkpoint at the end (and every --save-every steps) "
       "to DIR/step-N: each rank writes its shards, rank 0 a manifest; a "
       "checkpoint appears whole (one rename) or not at all "
       "(docs/checkpoints.md)"},
      {"save-every", Unsigned, &opts.saveEvery, "K", Training,
       "also save after every K steps (default 0: at the end only)"},
      {"save-keep", Unsigned, &opts.saveKeep, "N", Training,
       "keep N checkpoints in DIR: the one just saved and the newest others "
       "(default 2)"},
      {"resume", String, &opts.resume, "PATH", Training,
       "continue the run saved in PATH (a checkpoint, or a --save directory: "
       "its newest one) exactly: its parameters, optimizer states, step and "
       "seed, at any number of ranks and any stage; every file's checksum is "
       "checked first"},
      {"dump-params", String, &opts.dumpParams, "FILE", Training,
       "write the final parameters (raw, in order; sharded parameters are "
       "gathered)"},
      {"dump-grads", String, &opts.dumpGrads, "FILE", Training,
       "write the last step's gradients, before the optimizer (unpartitioned "
       "steps only)"},
      {"dump-batches", String, &opts.dumpBatches, "FILE", Training,
       "write every trained step's global batch (raw, step by step: each "
       "batch input in order, the ranks' micro-batches stacked in rank "
       "order), to train a reference (PyTorch, one process) on the same "
       "data"},
      {"stats-json", String, &opts.statsJson, "FILE", Training,
       "write losses, peak bytes by category, bytes sent, step time, "
       "throughput and GEMM figures as JSON (tokens_per_s and samples_per_s "
       "are the job's, all ranks together; *_per_rank one rank's)"},
      {"trace", String, &opts.trace, "FILE", Training,
       "write the last step's timeline as Chrome trace-event JSON (Perfetto, "
       "chrome://tracing): per rank a compute track (GEMMs, the compute "
       "between them, waits for collectives) and a communication track (each "
       "collective with its kind and bytes, from start to completion)"},
      {"num-threads", Int, &opts.threads, "N", Training,
       "threads for GEMMs and parallel loops; 0 = the cores shared among the "
       "ranks on this machine (default)"},
      {"sync-timing", Flag, &opts.syncTiming, nullptr, Training,
       "GEMMs and kernels wait for the device before and after they run, so "
       "that the stats JSON's GEMM and per-kernel (\"kernels\") seconds are "
       "the device's and show where a GPU step's time goes (slower; same "
       "results; on the CPU the timings are the work's anyway). They count "
       "from the second step on (\"profiled_steps\"): the first pays for "
       "loading kernels and planning GEMMs"},
      {"tf32", Flag, &opts.tf32, nullptr, Training,
       "a target=cuda step's f32 GEMMs may use TF32 tensor cores (10-bit "
       "mantissa products, f32 accumulation); off by default. The backend "
       "(cpu or cuda) is the step's: what it was compiled for (zero-compile "
       "--target, zero-run --target)"},
      {"comm-timeout", Double, &opts.commTimeout, "S", Training,
       "end the job when a collective has waited S seconds for a rank that "
       "does not arrive (stalled or lost), with one line naming it; 0 = wait "
       "forever (default 600; zero-run's ranks wait for rank 0's compilation "
       "under the default)"},
      {"sim-link", String, &opts.simLink, "bw=G,latency=U", Training,
       "simulate an interconnect: every collective completes no earlier than "
       "U microseconds plus its bytes over G GB/s (1e9 bytes/s; 'inf' for "
       "latency only) after the last rank started it, one at a time, the "
       "same moment on every rank; a model of a link for measuring overlap "
       "where ranks share one machine's memory, not a measurement of one "
       "(runtime.h, zrt_set_sim_link)"},
      {"sim-link-alternate", Flag, &opts.simLinkAlternate, nullptr, Training,
       "with --sim-link: the link is on in every second step of the run (the "
       "2nd, 4th, ...) and off in the others, so that each step with it has "
       "a step without it just before, run by the same process on the same "
       "machine state; the stats JSON's \"step_times_s\" and "
       "\"sim_link_steps\" pair them (bench/overlap.py)"},
      {"progress", String, &opts.progress, "MODE", Training,
       "auto (a bar on a terminal, lines otherwise), bar, lines or none"},
      {"offload", String, &opts.offload, "SPEC", Training,
       "where optimizer states and parameter shards live instead of the "
       "device's memory, one of:\n"
       "optimizer=nvme,params=nvme,nvme-dir=DIR\n"
       "  ZeRO-Infinity's NVMe tier: the optimizer states (and at stage 3 the "
       "parameter shards) live in DIR/zero-rank<R>.nvme (a disk file system: "
       "O_DIRECT and io_uring), read into staging buffers around their uses "
       "and written back each step; the file is removed at the end. A "
       "compiled binary has its placements built in and takes nvme-dir=DIR\n"
       "optimizer=host\n"
       "  ZeRO-Offload: the optimizer states live in host memory next to the "
       "device and the updates run on the host (gradients copied out, "
       "parameters copied back); on the cpu backend both are the same "
       "memory, counted apart in --stats-json\n"
       "optimizer=host,params=nvme,nvme-dir=DIR\n"
       "  both (stage 3, cpu backend): the parameter shards on the NVMe tier, "
       "the optimizer states and their updates on the host, which reads each "
       "shard it updates from DIR into host memory and writes the new one "
       "back from there"},
      {"lr", Double, &opts.lr, "X", Hyper, "learning rate (default 1e-3)"},
      {"beta1", Double, &opts.beta1, "X", Hyper, "default 0.9"},
      {"beta2", Double, &opts.beta2, "X", Hyper, "default 0.999"},
      {"eps", Double, &opts.eps, "X", Hyper, "default 1e-8"},
      {"weight-decay", Double, &opts.weightDecay, "X", Hyper, "default 0.01"},
      {"max-grad-norm", Double, &opts.maxGradNorm, "X", Hyper,
       "global gradient-norm clip of steps generated with clipping (default "
       "1.0)"},
      {"hyper", List, &opts.hyperOverrides, "NAME=VALUE", Hyper,
       "set any hyper-parameter by name (repeatable); 'step' is always the "
       "1-based step count"},
      {"warmup-steps", Unsigned, &opts.warmupSteps, "W", Schedule,
       "rise linearly to the peak: lr * t / W for t <= W (default 0: start "
       "at the peak)"},
      {"lr-decay", String, &opts.lrDecay, "KIND", Schedule,
       "after the warmup: none (default: stay at the peak), cosine (min + "
       "(peak - min) * (1 + cos(pi * r)) / 2) or linear (peak - (peak - min) "
       "* r), where r~=~(t~-~W)~/~(D~-~W) goes from 0 to 1; min-lr from step "
       "D on"},
      {"decay-steps", Unsigned, &opts.decaySteps, "D", Schedule,
       "the step at which the decay reaches --min-lr (default --steps: give "
       "it when a run is to be continued past --steps on the same schedule)"},
      {"min-lr", Double, &opts.minLr, "X", Schedule,
       "where the decay ends (default a tenth of the peak)"},
      {"check-grads", Flag, &opts.checkGrads, nullptr, GradCheck,
       "compare forward_backward's gradients with 4-point central "
       "differences at the initial parameters and exit (exit code 1 if the "
       "tolerance is exceeded)"},
      {"check-grads-tol", Double, &opts.checkTol, "X", GradCheck,
       "largest accepted relative error of a gradient, ||fd~-~g||~/~||fd|| "
       "over its checked elements (default 1e-6)"},
      {"check-grads-floor", Double, &opts.checkFloor, "X", GradCheck,
       "smallest denominator of relative errors (default 1e-6)"},
      {"check-grads-h", Double, &opts.checkStep, "X", GradCheck,
       "finite-difference step (default 1e-4)"},
      {"check-grads-max-per-param", Unsigned, &opts.checkMax, "N", GradCheck,
       "check at most N evenly spaced elements per parameter; 0 = all "
       "(default)"},
  };
}

/// A bad option value: the whole one-line message.
struct BadValue : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Checks `value` as `spec`'s kind and stores it in its field; throws
/// BadValue naming the option, the value and what was expected.
void store(const Spec &spec, const std::string &value) {
  auto bad = [&](const char *what) {
    throw BadValue(std::string("option '--") + spec.name + "' expects " + what +
                   ", got '" + value + "'");
  };
  switch (spec.kind) {
  case Unsigned:
  case Int:
  case UInt64: {
    if (value.empty() ||
        value.find_first_not_of("0123456789") != std::string::npos)
      bad("a non-negative integer");
    errno = 0;
    unsigned long long v = std::strtoull(value.c_str(), nullptr, 10);
    unsigned long long max = spec.kind == UInt64 ? UINT64_MAX
                             : spec.kind == Int  ? INT32_MAX
                                                 : UINT32_MAX;
    if (errno || v > max)
      bad("a non-negative integer in range");
    if (spec.kind == Unsigned)
      *static_cast<unsigned *>(spec.target) = static_cast<unsigned>(v);
    else if (spec.kind == Int)
      *static_cast<int *>(spec.target) = static_cast<int>(v);
    else
      *static_cast<uint64_t *>(spec.target) = v;
    break;
  }
  case Double: {
    char *end = nullptr;
    errno = 0;
    double v = std::strtod(value.c_str(), &end);
    if (value.empty() || !end || *end || errno || !std::isfinite(v))
      bad("a number");
    *static_cast<double *>(spec.target) = v;
    break;
  }
  case String:
    if (value.empty())
      bad("a non-empty value");
    *static_cast<std::string *>(spec.target) = value;
    break;
  case List:
    static_cast<std::vector<std::string> *>(spec.target)->push_back(value);
    break;
  case Flag:
    break;
  }
}

constexpr size_t kWidth = 79;  ///< --help's lines are at most this long.
constexpr size_t kColumn = 25; ///< Where an option's description starts.

/// `text` wrapped to lines of at most `width` columns: '\n' ends a
/// paragraph, a paragraph's leading spaces indent each of its lines, and
/// '~' is a space that does not break a line.
std::string wrap(const std::string &text, size_t width) {
  std::string out;
  size_t start = 0;
  while (true) {
    size_t end = std::min(text.find('\n', start), text.size());
    std::string paragraph = text.substr(start, end - start);
    size_t indent =
        std::min(paragraph.find_first_not_of(' '), paragraph.size());
    std::string line(indent, ' ');
    std::istringstream words(paragraph);
    for (std::string word; words >> word;) {
      if (line.size() > indent && line.size() + 1 + word.size() > width) {
        out += line + '\n';
        line.assign(indent, ' ');
      }
      line += (line.size() > indent ? " " : "") + word;
    }
    out += line;
    if (end == text.size()) {
      std::replace(out.begin(), out.end(), '~', ' ');
      return out;
    }
    out += '\n';
    start = end + 1;
  }
}

/// --help: the options by section, each section's heading and paragraph
/// wrapped, each option's description wrapped beside it. No usage line:
/// the tool prints its own before this text.
class HelpFormatter : public CLI::Formatter {
public:
  HelpFormatter() { column_width(kColumn); }

  std::string make_option_desc(const CLI::Option *opt) const override {
    return wrap(opt->get_description(), kWidth - kColumn);
  }

  std::string make_help(const CLI::App *app, std::string,
                        CLI::AppFormatMode) const override {
    std::string out;
    for (const Section &section : kSections) {
      if (!out.empty())
        out += '\n';
      out += wrap(std::string(section.heading) + ":", kWidth) + '\n';
      for (const CLI::Option *opt :
           app->get_options([&](const CLI::Option *opt) {
             return opt->get_group() == section.heading;
           }))
        out += make_option(opt, /*is_positional=*/false);
      if (section.after)
        out += '\n' + wrap(section.after, kWidth) + '\n';
    }
    return out;
  }
};

/// The command line of the options in `specs`: one CLI11 option or flag
/// each, in its section's group. `-h` and `--help` set `help`.
void addOptions(CLI::App &app, const std::vector<Spec> &specs, bool &help) {
  app.set_help_flag();
  app.allow_extras();
  app.formatter(std::make_shared<HelpFormatter>());
  // Given twice, an option's last value counts (and --hyper's all).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_flag("-h,--help", help)->group("")->disable_flag_override();
  for (const Spec &spec : specs) {
    std::string name = std::string("--") + spec.name;
    CLI::Option *option;
    if (spec.kind == Flag) {
      option = app.add_flag(name, *static_cast<bool *>(spec.target), spec.help)
                   ->disable_flag_override();
    } else {
      // Values are checked and stored by store(), not CLI11's conversions:
      // those take 010 as octal, wrap -1 around into an unsigned and accept
      // inf and out-of-range numbers.
      option =
          app.add_option(name, spec.help)
              ->option_text(spec.value)
              ->each([spec](const std::string &value) { store(spec, value); });
      if (spec.kind == List)
        option->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    }
    option->group(kSections[spec.section].heading);
  }
}

/// The option named `key` (no dashes), or null.
const Spec *find(const std::vector<Spec> &specs, const std::string &key) {
  for (const Spec &spec : specs)
    if (key == spec.name)
      return &spec;
  return nullptr;
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
  CLI::App app;
  addOptions(app, specs, opts.help);
  // The arguments as CLI11 takes them (last first), each option as --name and
  // its value apart: an option may be spelled with any number of dashes
  // (-steps, -help), as zero-run's own options may, and --name= gives the
  // empty value (which CLI11 would take from the next argument). A flag
  // given a value is refused here, as CLI11 would take --flag=true.
  std::vector<std::string> args;
  const Spec *valueOf = nullptr; ///< The option whose value comes next.
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    size_t dashes = std::min(arg.find_first_not_of('-'), arg.size());
    size_t eq = arg.find('=');
    std::string key = arg.substr(dashes, eq - dashes);
    bool isValue = valueOf;
    valueOf = nullptr;
    const Spec *spec = isValue || !dashes ? nullptr : find(specs, key);
    if (!spec && (isValue || !dashes || key != "help")) {
      args.push_back(arg);
      continue;
    }
    if ((!spec || spec->kind == Flag) && eq != std::string::npos) {
      error = "option '--" + key + "' takes no value";
      return false;
    }
    args.push_back("--" + key);
    if (spec && spec->kind != Flag) {
      if (eq == std::string::npos)
        valueOf = spec;
      else
        args.push_back(arg.substr(eq + 1));
    }
  }
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const BadValue &e) {
    error = e.what();
    return false;
  } catch (const CLI::ParseError &e) {
    // CLI11 takes an option's value from the next argument, whatever it
    // is, so one is missing only at the end.
    error = valueOf ? std::string("option '--") + valueOf->name +
                          "' needs a value (see " + tool + " --help)"
                    : e.what();
    return false;
  }
  for (const std::string &arg : app.remaining()) {
    bool named = arg[0] == '-' && arg.find_first_not_of('-') != arg.npos;
    error = (named ? "unknown option '" : "unexpected argument '") + arg +
            "' (see " + tool + " --help)";
    return false;
  }
  for (const Spec &spec : specs)
    if (app.count(std::string("--") + spec.name))
      opts.given.insert(spec.name);
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

extern "C" const char *zrt_driver_usage(void) {
  static const std::string usage = [] {
    Options opts;
    CLI::App app;
    addOptions(app, optionSpecs(opts), opts.help);
    return app.help();
  }();
  return usage.c_str();
}

extern "C" int zrt_driver_option_arity(const char *name) {
  Options opts;
  if (!name)
    return -1;
  const std::vector<Spec> specs = optionSpecs(opts);
  const Spec *spec = find(specs, name);
  return !spec ? -1 : spec->kind == Flag ? 0 : 1;
}
