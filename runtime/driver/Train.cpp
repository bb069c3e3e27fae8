//===- Train.cpp - The training run ---------------------------------------===//
//
// train(), and the set-up and steps of its Trainer (Trainer.h).
//
//===----------------------------------------------------------------------===//

#include "Train.h"
#include "Trainer.h"

#include "Failing.h"
#include "GradCheck.h"
#include "TraceWriter.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace zero::driver {

int train(const zrt_driver_program &program, Options &opts) {
  Trainer trainer(program, opts);
  trainer.setUp();
  if (opts.checkGrads)
    return trainer.checkGrads();
  trainer.runSteps();
  return trainer.finish();
}

void Trainer::setUp() {
  initRuntime();
  checkPartitioning();
  openOffload();
  checkStep();
  setUpHypers();
  loadData();
  allocateBuffers();
  setUpCheckpoints();
  initParameters();
  setUpBatches();
  drawBatchDump();
}

int Trainer::checkGrads() {
  return checkGradients(abi, *fb, b, opts);
}

void Trainer::initRuntime() {
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
  world = zrt_world_size();
  rank = zrt_world_rank();
  if (rank != 0)
    opts.progress = "none";
}

void Trainer::checkPartitioning() {
  if (abi.partitioned && abi.worldSize != world)
    failAll(format("the step was partitioned for %lld ranks but this run has "
                   "%d: run it under mpirun -np %lld, or compile it for %d "
                   "ranks",
                   static_cast<long long>(abi.worldSize), world,
                   static_cast<long long>(abi.worldSize), world));
  trainStep = abi.find("train_step");
  fb = abi.find("forward_backward");
  opt = abi.find("optimizer");
  if (!abi.partitioned && world > 1)
    failAll(format("the step is not partitioned, so it trains on one rank "
                   "only, but this run has %d; partition it for %d ranks "
                   "(zero-run --stage S, zero-compile --stage S --world-size "
                   "%d)",
                   world, world, world));
  if (!trainStep && !(fb && opt))
    failAll("the step has neither a train_step entry nor forward_backward "
            "and optimizer entries");
}

void Trainer::openOffload() {
  // The NVMe tier: what the step keeps there is compiled in (the
  // descriptor's placements); where is the run's choice.
  std::string error;
  if (!opts.offload.empty() && !parseOffloadSpec(opts.offload, offload, error))
    failAll(error);
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
}

void Trainer::checkStep() {
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
}

void Trainer::setUpHypers() {
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
  scheduled = opts.warmupSteps > 0 || opts.lrDecay != "none";
  peakLr = lrSlot >= 0 ? b.hypers[lrSlot] : 0;
  minLr = opts.minLr >= 0 ? opts.minLr : peakLr / 10;
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
}

void Trainer::loadData() {
  std::string error;
  if (!classifyBatch(abi, kind, error))
    failAll(error);
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
}

void Trainer::allocateBuffers() {
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
}

void Trainer::setUpCheckpoints() {
  // A resumed run: parameters, optimizer states, step and seed from the
  // checkpoint.
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
}

void Trainer::initParameters() {
  // Initial parameters: each built whole (the same on every rank), then a
  // sharded one keeps this rank's slice.
  std::string error;
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
}

void Trainer::setUpBatches() {
  for (Tensor &t : b.batch) {
    batchViews.emplace_back(t, /*load=*/false);
    batchPtrs.push_back(batchViews.back().data);
  }
  std::string error;
  if (!batches.init(abi, kind, &data, opts.seed, static_cast<unsigned>(rank),
                    static_cast<unsigned>(world), error))
    failAll(error);
  fillBatches(0);
}

void Trainer::fillBatches(unsigned step) {
  batches.fill(step, batchPtrs);
  for (HostView &v : batchViews)
    v.store();
}

void Trainer::drawBatchDump() {
  // --dump-batches: rank 0 draws every rank's micro-batch of each step to be
  // trained (the draw depends only on the seed, the step and the rank) and
  // stacks them in rank order: the global batch a one-process reference
  // trains on. Plain host memory, outside the counted categories.
  if (!opts.dumpBatches.empty() && rank == 0) {
    std::string error;
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
}

void Trainer::runSteps() {
  rankItems = itemsPerBatch(abi, kind);
  items = rankItems * world;
  ProgressBar bar(opts.steps, opts.progress,
                  kind == BatchKind::Language ? "tok" : "samples", world);
  zrt_reset_gemm_stats();
  zrt_reset_comm_stats();
  zrt_reset_nvme_stats();
  // Peaks from here on are the training's, not set-up's.
  zrt_reset_peaks();
  for (unsigned s = static_cast<unsigned>(startStep); s < opts.steps; ++s)
    step(s, bar);
  if (!opts.saveDir.empty() && startStep == static_cast<int64_t>(opts.steps) &&
      opts.resume.empty())
    saveSeconds.push_back(saveCheckpoint(held, base, opts, startStep, 1));
  trained = opts.steps - static_cast<unsigned>(startStep);

  if (!opts.trace.empty()) {
    if (!traced)
      failAll("--trace FILE traces the last step, and this run trains none "
              "(it is at --steps already)");
    writeTrace(opts.trace, traceWall, traceEnd);
  }
}

void Trainer::step(unsigned s, ProgressBar &bar) {
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

} // namespace zero::driver
