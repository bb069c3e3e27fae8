//===- Train.cpp - The training run ---------------------------------------===//

#include "Train.h"

#include "Abi.h"
#include "Buffers.h"
#include "Checkpoint.h"
#include "CheckpointManager.h"
#include "Data.h"
#include "Failing.h"
#include "Files.h"
#include "GradCheck.h"
#include "Json.h"
#include "OffloadSpec.h"
#include "Progress.h"
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

} // namespace zero::driver
