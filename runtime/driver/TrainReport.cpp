//===- TrainReport.cpp - The end of a training run ------------------------===//
//
// What a run reports when its steps are done (Trainer.h): the runtime's
// figures, the summary line, --stats-json, and the --dump-* files.
//
//===----------------------------------------------------------------------===//

#include "Trainer.h"

#include "Failing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace zero::driver {

int Trainer::finish() {
  zrt_get_memory_stats(&mem);
  zrt_get_gemm_stats(&gemm);
  zrt_get_comm_stats(&comm);
  zrt_get_nvme_stats(&nvme);
  // The largest peak of any rank, per category (every rank takes part).
  peakMax.assign(ZRT_NUM_CATEGORIES + 1, 0.0);
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
    summarize();
    if (!opts.statsJson.empty())
      writeStats();
    writeDumps(paramChunks);
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

void Trainer::summarize() {
  stepTime = median(stepTimes);
  // The time of the steps the GEMM and kernel counters cover.
  totalTime = 0;
  for (size_t i = profileFrom; i < stepTimes.size(); ++i)
    totalTime += stepTimes[i];
  compile = program.compile_seconds;
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
}

void Trainer::writeStats() {
  JsonValue stats = JsonValue::object();
  addLossStats(stats);
  addMemoryStats(stats);
  addCommStats(stats);
  addTimeStats(stats);
  addGemmStats(stats);
  std::string text = stats.dump(2) + "\n";
  writeOrFail(opts.statsJson, {{text.data(), text.size()}});
}

void Trainer::addLossStats(JsonValue &stats) {
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
}

void Trainer::addMemoryStats(JsonValue &stats) {
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
}

void Trainer::addCommStats(JsonValue &stats) {
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
}

void Trainer::addTimeStats(JsonValue &stats) {
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
}

void Trainer::addGemmStats(JsonValue &stats) {
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
}

void Trainer::writeDumps(const std::vector<Chunk> &paramChunks) {
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

} // namespace zero::driver
