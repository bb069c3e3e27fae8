//===- Trainer.h - The state of one training run ----------------*- C++ -*-===//
//
// train() in parts: set-up (the runtime, the step's checks, hyper-parameters,
// data, buffers, a resumed checkpoint, initial parameters, batches), the
// steps, and the end (figures, the summary line, --stats-json, dumps). What
// one part leaves for the next is a member. Train.cpp holds the set-up and
// the steps, TrainReport.cpp the end.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DRIVER_TRAINER_H
#define ZERO_DRIVER_TRAINER_H

#include "Abi.h"
#include "Buffers.h"
#include "Checkpoint.h"
#include "CheckpointManager.h"
#include "Data.h"
#include "Files.h"
#include "Json.h"
#include "OffloadSpec.h"
#include "Options.h"
#include "Progress.h"

#include "zero/driver.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace zero::driver {

/// One run. Not copied or moved: views and checkpoint tensors point into
/// its buffers.
class Trainer {
public:
  Trainer(const zrt_driver_program &program, Options &opts)
      : program(program), opts(opts) {}
  Trainer(const Trainer &) = delete;
  Trainer &operator=(const Trainer &) = delete;

  /// Everything before the first step, from zrt_init on; a run that cannot
  /// go on ends here with one line.
  void setUp();
  /// --check-grads instead of training: its exit code.
  int checkGrads();
  /// Trains steps startStep+1..opts.steps (saving and tracing as asked).
  void runSteps();
  /// Figures, the summary line and files; frees the buffers and shuts the
  /// runtime down. Returns the exit code.
  int finish();

private:
  // Set-up, in the order setUp() runs them (Train.cpp).
  void initRuntime();
  void checkPartitioning();
  void openOffload();
  void checkStep();
  void setUpHypers();
  void loadData();
  void allocateBuffers();
  void setUpCheckpoints();
  void initParameters();
  void setUpBatches();
  void drawBatchDump();
  void fillBatches(unsigned step);

  // The steps (Train.cpp).
  void step(unsigned s, ProgressBar &bar);

  // The end (TrainReport.cpp).
  void summarize();
  void writeStats();
  void addLossStats(JsonValue &stats);
  void addMemoryStats(JsonValue &stats);
  void addCommStats(JsonValue &stats);
  void addTimeStats(JsonValue &stats);
  void addGemmStats(JsonValue &stats);
  void writeDumps(const std::vector<Chunk> &paramChunks);

  const zrt_driver_program &program;
  Options &opts;

  Abi abi;
  int world = 1, rank = 0;
  const Entry *trainStep = nullptr, *fb = nullptr, *opt = nullptr;

  // The NVMe tier and host memory next to the device: what the step keeps
  // there (compiled in), and where the NVMe tier is (the run's choice).
  OffloadSpec offload;
  bool statesOnNvme = false, paramsOnNvme = false, statesOnHost = false;

  Buffers b;
  // The hyper-parameters 'step' and 'lr' in b.hypers (-1: not taken), and
  // the learning-rate schedule.
  int stepSlot = -1, lrSlot = -1;
  bool scheduled = false;
  double peakLr = 0, minLr = 0;

  BatchKind kind = BatchKind::Language;
  TokenData data;

  // Checkpoints: the tensors saved and resumed, the manifest's run-wide
  // fields, and where a resumed run starts.
  std::vector<Held> held;
  CkptManifest base;
  int64_t startStep = 0;
  double resumeSeconds = 0;
  std::string resumedFrom;

  // Batches are drawn into the batch buffers, or into host copies that go
  // to the device.
  std::vector<HostView> batchViews;
  std::vector<void *> batchPtrs;
  BatchSource batches;
  /// --dump-batches: every trained step's global batch.
  std::vector<char> batchDump;

  // Throughput as users compare it: the job's items a step (every rank
  // trains its own micro-batches), with a rank's beside it.
  int64_t rankItems = 0, items = 0;
  std::vector<double> losses, stepTimes, lrs;
  // The steps the GEMM and kernel counters cover: stepTimes[profileFrom..].
  size_t profileFrom = 0;
  std::vector<double> saveSeconds;
  // --trace: the last step's timeline.
  double traceWall = 0, traceEnd = 0;
  bool traced = false;
  unsigned trained = 0;

  // What the end reports: the runtime's counters, the largest peak of any
  // rank per category (then of the total), and rank 0's median step time,
  // the time of the steps the GEMM and kernel counters cover, the compile
  // time and the GEMM library.
  zrt_memory_stats mem{};
  zrt_gemm_stats gemm{};
  zrt_comm_stats comm{};
  zrt_nvme_stats nvme{};
  std::vector<double> peakMax;
  double stepTime = 0, totalTime = 0, compile = 0;
  zrt_gemm_backend blas{"", "", "", ""};
};

} // namespace zero::driver

#endif // ZERO_DRIVER_TRAINER_H
