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
#include "Data.h"
#include "Files.h"
#include "Json.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
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
  std::string dataFile, initFile, dumpParams, dumpGrads, statsJson;
  bool fixedBatch = false;
  int threads = 0;
  double commTimeout = 600;
  std::string progress = "auto";
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8,
         weightDecay = 0.01, maxGradNorm = 1.0;
  std::vector<std::string> hyperOverrides;
  bool checkGrads = false;
  double checkTol = 1e-6, checkFloor = 1e-6, checkStep = 1e-4;
  unsigned checkMax = 0;
  bool help = false;
};

constexpr const char *kUsage = R"(Training:
  --steps N              training steps (default 100)
  --seed S               seed of parameter init and batch sampling (default 0)
  --data FILE            uint16 token file (headerless little-endian, nanoGPT's
                         .bin); default: the built-in corpus
  --fixed-batch          train on the first batch at every step
  --init FILE            initial parameters: raw little-endian values of every
                         parameter in order (what --dump-params writes);
                         without it each parameter is initialized as its
                         zero.init attribute says (docs/runtime-abi.md)
  --dump-params FILE     write the final parameters (raw, in order; sharded
                         parameters are gathered)
  --dump-grads FILE      write the last step's gradients, before the optimizer
                         (unpartitioned steps only)
  --stats-json FILE      write losses, peak bytes by category, bytes sent,
                         step time, throughput and GEMM figures as JSON
  --num-threads N        threads for GEMMs and parallel loops; 0 = the cores
                         shared among the ranks on this machine (default)
  --comm-timeout S       end the job when a collective has waited S seconds
                         for a rank that does not arrive (stalled or lost),
                         with one line naming it; 0 = wait forever
                         (default 600; zero-run's ranks wait for rank 0's
                         compilation under the default)
  --progress MODE        auto (a bar on a terminal, lines otherwise), bar,
                         lines or none

Batches: language-model steps (batch inputs 'tokens' and 'targets', whose
zero.token_range bounds the token ids) read --data or the built-in corpus;
regression steps ('input', 'target') get synthetic data from a fixed random
teacher. Under mpirun each rank takes its micro-batch (the step's batch
size) of a global batch of N micro-batches; rank 0 prints and writes files.
Files are written whole or not at all.

Hyper-parameters (fed to the step's zero.hyper arguments by name):
  --lr X                 learning rate (default 1e-3)
  --beta1 X              default 0.9
  --beta2 X              default 0.999
  --eps X                default 1e-8
  --weight-decay X       default 0.01
  --max-grad-norm X      global gradient-norm clip of steps generated with
                         clipping (default 1.0)
  --hyper NAME=VALUE     set any hyper-parameter by name (repeatable); 'step'
                         is always the 1-based step count

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
      {"dump-params", String, &opts.dumpParams},
      {"dump-grads", String, &opts.dumpGrads},
      {"stats-json", String, &opts.statsJson},
      {"num-threads", Int, &opts.threads},
      {"comm-timeout", Double, &opts.commTimeout},
      {"progress", String, &opts.progress},
      {"lr", Double, &opts.lr},
      {"beta1", Double, &opts.beta1},
      {"beta2", Double, &opts.beta2},
      {"eps", Double, &opts.eps},
      {"weight-decay", Double, &opts.weightDecay},
      {"max-grad-norm", Double, &opts.maxGradNorm},
      {"hyper", List, &opts.hyperOverrides},
      {"check-grads", Flag, &opts.checkGrads},
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
  if (opts.progress != "auto" && opts.progress != "bar" &&
      opts.progress != "lines" && opts.progress != "none") {
    error = "--progress must be auto, bar, lines or none, got '" +
            opts.progress + "'";
    return false;
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
  if (zrt_world_size() > 1 && zrt_world_rank() != 0)
    std::this_thread::sleep_for(std::chrono::seconds(10));
  fail(message);
}

//===----------------------------------------------------------------------===//
// Buffers and calls
//===----------------------------------------------------------------------===//

struct Tensor {
  void *data = nullptr;
  int64_t elements = 0;
  DType dtype = DType::F32;
  size_t bytes() const { return static_cast<size_t>(elements) * dtypeBytes(dtype); }
};

Tensor allocate(int64_t elements, DType dtype, zrt_category category) {
  Tensor t;
  t.elements = elements;
  t.dtype = dtype;
  t.data = zrt_alloc(t.bytes(), category);
  if (!t.data)
    fail(zrt_last_error());
  return t;
}

/// The run's buffers, by role and descriptor index.
struct Buffers {
  std::vector<Tensor> params, grads, states, batch, hyperBuffers;
  Tensor loss;
  /// Hyper-parameter values in descriptor order.
  std::vector<double> hypers;
};

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
    case Role::Hyper:
      t = &b.hyperBuffers[arg.index];
      storeElement(arg.dtype, b.hypers[arg.index], t->data);
      break;
    case Role::Loss:
      t = &b.loss;
      break;
    }
    if (!t->data || t->elements != arg.elements || t->dtype != arg.dtype)
      fail("entry '" + entry.name + "' argument #" + std::to_string(i) +
           " does not match the buffer the descriptor gave its role");
    args[i] = t->data;
    if (arg.outCopy) {
      Tensor scratch = allocate(arg.elements, arg.dtype, ZRT_ACTIVATIONS);
      copies.emplace_back(scratch, t->data);
      args[i] = scratch.data;
    }
  }
  entry.fn(args.data());
  for (auto &c : copies) {
    std::memcpy(c.second, c.first.data, c.first.bytes());
    zrt_free(c.first.data);
  }
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
  ProgressBar(unsigned total, std::string mode) : total(total) {
    if (mode == "auto")
      mode = isatty(STDERR_FILENO) ? "bar" : "lines";
    bar = mode == "bar";
    quiet = mode == "none";
    every = std::max(1u, total / 20);
  }
  void update(unsigned done, double loss, double rate) {
    if (quiet)
      return;
    if (bar) {
      constexpr unsigned width = 30;
      unsigned filled = total ? width * done / total : width;
      std::fprintf(stderr, "\r  step %5u/%u [%s%s] loss %.4f  %.0f tok/s  ",
                   done, total, std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), loss, rate);
      if (done == total)
        std::fprintf(stderr, "\n");
      return;
    }
    if (done % every == 0 || done == total || done == 1)
      std::fprintf(stderr, "step %u/%u loss %.6f %.0f tok/s\n", done, total,
                   loss, rate);
  }

private:
  unsigned total, every;
  bool bar = false, quiet = false;
};

void writeOrFail(const std::string &path, const std::vector<Chunk> &chunks) {
  std::string error;
  if (!writeFileAtomically(path, chunks, error))
    fail(error);
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
  for (const Tensor &g : b.grads)
    analytic.emplace_back(static_cast<double *>(g.data),
                          static_cast<double *>(g.data) + g.elements);
  auto lossAt = [&]() {
    call(fb, b);
    return loadElement(abi.lossType, b.loss.data);
  };
  double h = opts.checkStep, worst = 0;
  int64_t checked = 0;
  std::printf("%-36s %8s %12s %12s %12s\n", "parameter", "checked",
              "max_abs_err", "max_elem_rel", "norm_rel_err");
  for (size_t i = 0; i < abi.params.size(); ++i) {
    auto *x = static_cast<double *>(b.params[i].data);
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
  if (zrt_init("cpu", threads) != 0)
    fail(zrt_last_error());
  const int world = zrt_world_size(), rank = zrt_world_rank();
  if (rank != 0)
    opts.progress = "none";

  Abi abi;
  std::string error;
  if (!readAbi(program.abi_json, program.entries, abi, error))
    failAll(error);
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
  if (opts.checkGrads && !fb)
    failAll("--check-grads checks forward_backward, which a partitioned "
            "step does not have; check the step before partitioning (no "
            "--stage, one rank)");
  if (!opts.dumpGrads.empty() && !fb)
    failAll("--dump-grads needs an unpartitioned step (a partitioned step "
            "keeps no full gradients)");
  for (const Param &p : abi.params)
    if (p.dtype != DType::F32 && p.dtype != DType::F64)
      failAll("parameter '" + p.name + "' is " + dtypeName(p.dtype) +
              "; the CPU runtime trains f32 and f64 steps only");
  if (!isFloat(abi.lossType) || abi.lossType == DType::F16)
    failAll(std::string("the loss is ") + dtypeName(abi.lossType) +
            "; expected f32, f64 or bf16");

  // Hyper-parameters by name; `step` is filled in per step.
  std::map<std::string, double> known = {
      {"lr", opts.lr},       {"beta1", opts.beta1},
      {"beta2", opts.beta2}, {"eps", opts.eps},
      {"weight_decay", opts.weightDecay}, {"max_grad_norm", opts.maxGradNorm}};
  for (const std::string &o : opts.hyperOverrides)
    known[o.substr(0, o.find('='))] = std::strtod(o.c_str() + o.find('=') + 1, nullptr);
  Buffers b;
  int stepSlot = -1;
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
    auto it = known.find(hyper.name);
    if (it == known.end())
      failAll("the optimizer takes hyper-parameter '" + hyper.name +
              "', which has no default; set it with --hyper " + hyper.name +
              "=VALUE");
    b.hypers.push_back(it->second);
  }

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
      failAll(format("the %s has token id %u, but the model takes ids below "
                     "%lld (zero.token_range); use a model with --vocab %u or "
                     "more",
                     data.source.c_str(), data.maxToken,
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
      if (!t.data)
        t = allocate(arg.elements, arg.dtype, category);
    }
  for (size_t s = 0; s < b.states.size(); ++s)
    if (!b.states[s].data)
      failAll("optimizer state '" + abi.states[s].kind + "' of '" +
              abi.params[abi.states[s].param].name + "' is no entry's argument");

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
  for (size_t i = 0; i < abi.params.size(); ++i) {
    const Param &p = abi.params[i];
    Tensor &t = b.params[i];
    if (!t.data)
      failAll("parameter '" + p.name + "' is no entry's argument");
    bool sharded = t.elements != p.numel;
    Tensor full = sharded ? allocate(p.numel, p.dtype, ZRT_ACTIVATIONS) : t;
    size_t eltBytes = dtypeBytes(p.dtype);
    if (!initBytes.empty()) {
      std::memcpy(full.data, initBytes.data() + initOffset, full.bytes());
      initOffset += full.bytes();
    } else {
      initParam(p, static_cast<unsigned>(i), opts.seed, full.data);
    }
    if (sharded) {
      int64_t begin = std::min<int64_t>(rank * p.shard, p.numel);
      int64_t end = std::min<int64_t>(begin + p.shard, p.numel);
      std::memcpy(t.data, static_cast<char *>(full.data) + begin * eltBytes,
                  static_cast<size_t>(end - begin) * eltBytes);
      zrt_free(full.data);
    }
  }
  initBytes.clear();
  initBytes.shrink_to_fit();

  std::vector<void *> batchPtrs;
  for (Tensor &t : b.batch)
    batchPtrs.push_back(t.data);
  BatchSource batches;
  if (!batches.init(abi, kind, &data, opts.seed, static_cast<unsigned>(rank),
                    static_cast<unsigned>(world), error))
    failAll(error);
  batches.fill(0, batchPtrs);

  if (opts.checkGrads)
    return checkGradients(abi, *fb, b, opts);

  int64_t items = itemsPerBatch(abi, kind);
  std::vector<double> losses, stepTimes;
  ProgressBar bar(opts.steps, opts.progress);
  zrt_reset_gemm_stats();
  zrt_reset_comm_stats();
  // Peaks from here on are the training's, not set-up's.
  zrt_reset_peaks();
  for (unsigned s = 0; s < opts.steps; ++s) {
    auto start = std::chrono::steady_clock::now();
    if (s > 0 && !opts.fixedBatch)
      batches.fill(s, batchPtrs);
    if (stepSlot >= 0)
      b.hypers[stepSlot] = s + 1;
    if (trainStep) {
      call(*trainStep, b);
    } else {
      call(*fb, b);
      call(*opt, b);
    }
    double l = loadElement(abi.lossType, b.loss.data);
    if (!std::isfinite(l))
      failAll(format("the loss is %g at step %u; lower --lr or enable "
                     "gradient clipping",
                     l, s + 1));
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    losses.push_back(l);
    stepTimes.push_back(seconds);
    double m = median(stepTimes);
    bar.update(s + 1, l, m > 0 ? items / m : 0);
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

  // Full parameters for --dump-params: sharded ones are gathered (every
  // rank takes part), and rank 0 writes.
  std::vector<Tensor> gathered;
  std::vector<Chunk> paramChunks;
  if (!opts.dumpParams.empty())
    for (size_t i = 0; i < abi.params.size(); ++i) {
      const Param &p = abi.params[i];
      Tensor &t = b.params[i];
      if (t.elements == p.numel) {
        paramChunks.push_back({t.data, t.bytes()});
        continue;
      }
      Tensor all = allocate(p.padded, p.dtype, ZRT_ACTIVATIONS);
      if (p.dtype == DType::F32)
        zrt_all_gather_f32(static_cast<float *>(t.data),
                           static_cast<float *>(all.data), t.elements);
      else
        zrt_all_gather_f64(static_cast<double *>(t.data),
                           static_cast<double *>(all.data), t.elements);
      gathered.push_back(all);
      paramChunks.push_back(
          {all.data, static_cast<size_t>(p.numel) * dtypeBytes(p.dtype)});
    }

  if (rank == 0) {
    double stepTime = median(stepTimes);
    double totalTime = 0;
    for (double t : stepTimes)
      totalTime += t;
    double compile = program.compile_seconds;
    zrt_gemm_backend blas{"", "", "", ""};
    zrt_get_gemm_backend(&blas);
    if (!losses.empty())
      std::printf("trained %u steps: loss %.4f -> %.4f; median step %.2f ms, "
                  "%.0f %s/s; GEMM %.0f%% of step time (%s kernels); "
                  "%d threads; compile %.2f s\n",
                  opts.steps, losses.front(), losses.back(), stepTime * 1e3,
                  stepTime > 0 ? items / stepTime : 0,
                  kind == BatchKind::Language ? "tokens" : "samples",
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
      // Bytes this rank sent per step, per collective kind.
      JsonValue commBytes = JsonValue::object(), commCalls = JsonValue::object();
      for (int k = 0; k < ZRT_NUM_COLLECTIVES; ++k) {
        const char *name = zrt_collective_name(static_cast<zrt_collective>(k));
        commBytes.set(name, JsonValue::integer(static_cast<int64_t>(
                                opts.steps ? comm.bytes_sent[k] / opts.steps : 0)));
        commCalls.set(name, JsonValue::integer(static_cast<int64_t>(
                                opts.steps ? comm.calls[k] / opts.steps : 0)));
      }
      stats.set("comm_bytes", std::move(commBytes));
      stats.set("comm_calls", std::move(commCalls));
      stats.set("step_time_s", JsonValue::number(stepTime));
      stats.set("step_time_mean_s",
                JsonValue::number(opts.steps ? totalTime / opts.steps : 0.0));
      stats.set("tokens_per_s",
                JsonValue::number(stepTime > 0 && kind == BatchKind::Language
                                      ? items / stepTime
                                      : 0.0));
      stats.set("samples_per_s",
                JsonValue::number(stepTime > 0 ? abi.batch[0].shape[0] / stepTime
                                               : 0.0));
      int64_t numel = 0;
      for (const Param &p : abi.params)
        numel += p.numel;
      stats.set("params", JsonValue::integer(numel));
      stats.set("world_size", JsonValue::integer(world));
      stats.set("stage", JsonValue::integer(abi.stage));
      stats.set("partitioned", JsonValue::boolean(abi.partitioned));
      stats.set("steps", JsonValue::integer(opts.steps));
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
      std::string text = stats.dump(2) + "\n";
      writeOrFail(opts.statsJson, {{text.data(), text.size()}});
    }
    if (!opts.dumpParams.empty())
      writeOrFail(opts.dumpParams, paramChunks);
    if (!opts.dumpGrads.empty()) {
      std::vector<Chunk> chunks;
      for (const Tensor &g : b.grads)
        chunks.push_back({g.data, g.bytes()});
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
  if (parseOptions(argc, argv, opts, message))
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
  return train(*program, opts);
}
