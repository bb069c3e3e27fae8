//===- Pipelines.h - zero-mlir lowering pipelines ---------------*- C++ -*-===//
//
// zero-lower-cpu turns a verified training step into LLVM dialect code that
// calls the runtime (runtime/include/zero/runtime.h). It runs in two halves
// so that a driver can read the buffer ABI of the step functions in between
// (zero-run does): bufferization, then the lowering to LLVM.
// zero-train-pipeline partitions, schedules and offloads a contract module
// before the lowering.
//
// Each pipeline has one builder, which takes typed options (LowerOptions,
// TrainOptions) built from the passes' generated options structs, so that
// every default is Passes.td's. The registered textual pipelines turn their
// options into these, and zero-run and zero-compile set them directly
// (zero/Target/CompileStep.h): neither formats a pipeline string.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_CONVERSION_PIPELINES_H
#define ZERO_CONVERSION_PIPELINES_H

#include "zero/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir::zero {

/// When the lowering runs zero-fuse-row-nests.
enum class RowFusion { Auto, On, Off };

/// The lowering's options, typed: what buildLowerCPUPipeline takes. A
/// pass's option keeps its Passes.td default (the generated options
/// structs); the lowering's own switches and the GPU toolchain's choices
/// have theirs here, once. The textual pipelines' options below take their
/// defaults from this struct.
struct LowerOptions {
  /// What the step is lowered for, as zero-step-abi records it.
  Target target = ZeroStepAbiPassOptions().target;
  /// target=cuda: the GPU architecture kernels are built for, the NVPTX
  /// features, what gpu-module-to-binary embeds, and the CUDA toolkit
  /// (empty: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, then PATH).
  std::string gpuChip = "sm_90", gpuFeatures = "+ptx80", gpuFormat = "fatbin",
              gpuToolkit;
  /// Whether zero-fuse-row-nests runs (Auto: on target=cuda).
  RowFusion fuseRows = RowFusion::Auto;
  /// target=cuda: zero-gpu-kernels' threads per block.
  ZeroGpuKernelsPassOptions kernels;
  /// Matmuls to runtime GEMM calls; f32 transcendental functions as
  /// polynomials (zero-approximate-math); loop nests on the runtime's
  /// threads (zero-parallel-loop-functions).
  bool gemmToRuntime = true, approximateMath = true, parallelLoops = true;
};

/// zero-train-pipeline's options, typed: what buildTrainPipeline and
/// buildPartitionedStepPipeline take, and what zero-run and zero-compile
/// set (CompileOptions). Each pass's options are its generated struct, so
/// every default is Passes.td's.
struct TrainOptions {
  /// The lowering, and the target every pass predicts for.
  LowerOptions lower;
  /// zero-partition's stage, world-size and accumulate.
  ZeroPartitionPassOptions partition;
  /// Whether zero-schedule runs (off: every collective blocks where
  /// zero-partition put it).
  bool runSchedule = true;
  /// zero-schedule's cost model and buckets. Its target and memory-budget
  /// are the pipeline's (`lower.target`, `memoryBudget`): the builder sets
  /// them.
  ZeroSchedulePassOptions schedule;
  /// Bytes one rank may hold at the step's peak (0: none): zero-remat
  /// recomputes forward values until the unscheduled step fits, and
  /// zero-schedule keeps its prefetches within it.
  int64_t memoryBudget = ZeroRematPassOptions().memoryBudget;
  /// zero-offload's placements and read-ahead; the pass runs where a
  /// placement is not the device.
  ZeroOffloadPassOptions offload;

  /// Whether zero-offload runs.
  bool offloads() const {
    return offload.optimizer != Placement::Device ||
           offload.params != Placement::Device;
  }
};

/// The lowering's textual options, shared by zero-lower, zero-lower-cpu
/// and zero-train-pipeline: each spells a field of LowerOptions and takes
/// its default from there. (A pipeline option is an llvm::cl::opt that
/// owns its value, and a pass's option help lives in its generated class,
/// so these are declared here rather than bound to the typed fields:
/// docs/decisions/0073-options-from-ods.md.)
template <typename Derived>
struct LoweringOptions : public PassPipelineOptions<Derived> {
  using Option = mlir::detail::PassOptions::Option<bool>;
  mlir::detail::PassOptions::Option<Target> target{
      *this, "target", llvm::cl::desc("What the step is lowered for"),
      llvm::cl::init(LowerOptions().target),
      llvm::cl::values(
          clEnumValN(Target::CPU, "cpu",
                     "loops and runtime GEMM calls (OpenBLAS), MPI"),
          clEnumValN(Target::CUDA, "cuda",
                     "loop nests as NVVM kernels (upstream GPU pipeline, "
                     "ptxas), GEMMs and collectives through the runtime "
                     "on device memory"))};
  mlir::detail::PassOptions::Option<std::string> gpuChip{
      *this, "gpu-chip",
      llvm::cl::desc("target=cuda: the GPU architecture kernels are built "
                     "for (sm_90: H100, H200)"),
      llvm::cl::init(LowerOptions().gpuChip)};
  mlir::detail::PassOptions::Option<std::string> gpuFeatures{
      *this, "gpu-features",
      llvm::cl::desc("target=cuda: NVPTX features (the PTX version)"),
      llvm::cl::init(LowerOptions().gpuFeatures)};
  mlir::detail::PassOptions::Option<std::string> gpuFormat{
      *this, "gpu-format",
      llvm::cl::desc("target=cuda: what gpu-module-to-binary embeds: fatbin "
                     "(SASS for gpu-chip and its PTX), bin (SASS), isa "
                     "(PTX text, no ptxas needed)"),
      llvm::cl::init(LowerOptions().gpuFormat)};
  mlir::detail::PassOptions::Option<std::string> gpuToolkit{
      *this, "gpu-toolkit",
      llvm::cl::desc("target=cuda: the CUDA toolkit whose ptxas and "
                     "fatbinary build the kernels (empty: $CUDA_HOME, "
                     "$CUDA_PATH, /usr/local/cuda, then PATH)"),
      llvm::cl::init(LowerOptions().gpuToolkit)};
  mlir::detail::PassOptions::Option<RowFusion> fuseRows{
      *this, "fuse-rows",
      llvm::cl::desc("Run a row reduction and the nests around it that meet "
                     "it row by row as one nest over the rows "
                     "(zero-fuse-row-nests; on a GPU one kernel of a block "
                     "per row)"),
      llvm::cl::init(LowerOptions().fuseRows),
      llvm::cl::values(
          clEnumValN(RowFusion::Auto, "auto",
                     "on target=cuda, off on cpu (where a gpt d256 step "
                     "measured no faster with it)"),
          clEnumValN(RowFusion::On, "true", "on either target (the CPU "
                     "computes the same bits either way)"),
          clEnumValN(RowFusion::Off, "false", "never"))};
  mlir::detail::PassOptions::Option<int64_t> gpuBlockSize{
      *this, "gpu-block-size",
      llvm::cl::desc("target=cuda: threads per block of a parallel loop "
                     "nest (zero-gpu-kernels)"),
      llvm::cl::init(LowerOptions().kernels.blockSize)};
  Option gemmToRuntime{
      *this, "gemm-to-runtime",
      llvm::cl::desc("Lower linalg.matmul/batch_matmul to runtime GEMM calls "
                     "(OpenBLAS); off: plain loops like everything else"),
      llvm::cl::init(LowerOptions().gemmToRuntime)};
  Option approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Compute f32 tanh, exp, log, erf ... with upstream's "
                     "vectorizable polynomial approximations "
                     "(zero-approximate-math); off: libm calls"),
      llvm::cl::init(LowerOptions().approximateMath)};
  Option parallelLoops{
      *this, "parallel-loops",
      llvm::cl::desc("Run loop nests with independent outer iterations on "
                     "the runtime's threads (zero-parallel-loop-functions, "
                     "zrt_parallel_for); off: every loop on the calling "
                     "thread"),
      llvm::cl::init(LowerOptions().parallelLoops)};

  /// The typed options these spell.
  LowerOptions lowerOptions() const {
    LowerOptions lower;
    lower.target = target;
    lower.gpuChip = gpuChip;
    lower.gpuFeatures = gpuFeatures;
    lower.gpuFormat = gpuFormat;
    lower.gpuToolkit = gpuToolkit;
    lower.fuseRows = fuseRows;
    lower.kernels.blockSize = gpuBlockSize;
    lower.gemmToRuntime = gemmToRuntime;
    lower.approximateMath = approximateMath;
    lower.parallelLoops = parallelLoops;
    return lower;
  }
};

struct LowerCPUOptions : public LoweringOptions<LowerCPUOptions> {};

/// zero-train-pipeline's textual options: each spells a field of
/// TrainOptions and takes its default from there (Passes.td's, for a
/// pass's option).
struct TrainPipelineOptions : public LoweringOptions<TrainPipelineOptions> {
  PassOptions::Option<int64_t> stage{
      *this, "stage",
      llvm::cl::desc("ZeRO stage: 0 data parallel, 1 optimizer states "
                     "sharded, 2 and gradients, 3 and parameters"),
      llvm::cl::init(TrainOptions().partition.stage)};
  PassOptions::Option<int64_t> worldSize{
      *this, "world-size",
      llvm::cl::desc("Number of data-parallel ranks the step runs on"),
      llvm::cl::init(TrainOptions().partition.worldSize)};
  PassOptions::Option<int64_t> accumulate{
      *this, "accumulate",
      llvm::cl::desc("Gradient accumulation: micro-batches per step, each "
                     "batch input holding K of them (zero-partition)"),
      llvm::cl::init(TrainOptions().partition.accumulate)};
  PassOptions::Option<int64_t> paramPersistenceThreshold{
      *this, "param-persistence-threshold",
      llvm::cl::desc("Stage 3: parameters of fewer elements stay whole on "
                     "every rank (zero-partition)"),
      llvm::cl::init(TrainOptions().partition.paramPersistenceThreshold)};
  PassOptions::Option<bool> schedule{
      *this, "schedule",
      llvm::cl::desc("Overlap collectives with compute (zero-schedule); "
                     "off: every collective blocks where zero-partition put "
                     "it"),
      llvm::cl::init(TrainOptions().runSchedule)};
  PassOptions::Option<double> linkGbps{
      *this, "link-gbps",
      llvm::cl::desc("zero-schedule's cost model: link bandwidth in GB/s"),
      llvm::cl::init(TrainOptions().schedule.linkGbps)};
  PassOptions::Option<double> gemmGflops{
      *this, "gemm-gflops",
      llvm::cl::desc("zero-schedule's cost model: GEMM rate of one rank in "
                     "GFLOP/s"),
      llvm::cl::init(TrainOptions().schedule.gemmGflops)};
  PassOptions::Option<double> vectorGflops{
      *this, "vector-gflops",
      llvm::cl::desc("zero-schedule's cost model: rate of the FLOPs of "
                     "other linalg ops in GFLOP/s"),
      llvm::cl::init(TrainOptions().schedule.vectorGflops)};
  PassOptions::Option<double> memoryGbps{
      *this, "memory-gbps",
      llvm::cl::desc("zero-schedule's cost model: memory bandwidth of one "
                     "rank in GB/s"),
      llvm::cl::init(TrainOptions().schedule.memoryGbps)};
  PassOptions::Option<double> linkLatencyUs{
      *this, "link-latency-us",
      llvm::cl::desc("zero-schedule's cost model: latency of a collective "
                     "in microseconds"),
      llvm::cl::init(TrainOptions().schedule.linkLatencyUs)};
  PassOptions::Option<int64_t> bucketBytes{
      *this, "bucket-bytes",
      llvm::cl::desc("zero-schedule's buckets: consecutive collectives "
                     "smaller than this (full-size bytes) merge into one of "
                     "at most this many (0: no buckets)"),
      llvm::cl::init(TrainOptions().schedule.bucketBytes)};
  PassOptions::Option<int64_t> memoryBudget{
      *this, "memory-budget",
      llvm::cl::desc("Bytes one rank may hold at the step's peak (0: "
                     "none): zero-remat recomputes forward values until "
                     "the unscheduled step fits, zero-schedule keeps its "
                     "prefetches within it"),
      llvm::cl::init(TrainOptions().memoryBudget)};
  PassOptions::Option<Placement> offloadOptimizer{
      *this, "offload-optimizer",
      llvm::cl::desc("zero-offload's optimizer placement (after "
                     "zero-schedule)"),
      llvm::cl::init(TrainOptions().offload.optimizer),
      llvm::cl::values(
          clEnumValN(Placement::Device, "device", "in the step's memory"),
          clEnumValN(Placement::Host, "host",
                     "in host memory next to the device, updated there"),
          clEnumValN(Placement::Nvme, "nvme", "on the NVMe tier"))};
  PassOptions::Option<Placement> offloadParams{
      *this, "offload-params",
      llvm::cl::desc("zero-offload's placement of stage-3 parameter shards"),
      llvm::cl::init(TrainOptions().offload.params),
      llvm::cl::values(
          clEnumValN(Placement::Device, "device", "in the step's memory"),
          clEnumValN(Placement::Nvme, "nvme", "on the NVMe tier"))};
  PassOptions::Option<unsigned> offloadReadAhead{
      *this, "offload-read-ahead",
      llvm::cl::desc("zero-offload's read-ahead: how many uses ahead an "
                     "NVMe read starts"),
      llvm::cl::init(TrainOptions().offload.readAhead)};

  /// The typed options these spell.
  TrainOptions trainOptions() const {
    TrainOptions train;
    train.lower = this->lowerOptions();
    train.partition.stage = stage;
    train.partition.worldSize = worldSize;
    train.partition.accumulate = accumulate;
    train.partition.paramPersistenceThreshold = paramPersistenceThreshold;
    train.runSchedule = schedule;
    train.schedule.linkGbps = linkGbps;
    train.schedule.linkLatencyUs = linkLatencyUs;
    train.schedule.gemmGflops = gemmGflops;
    train.schedule.vectorGflops = vectorGflops;
    train.schedule.memoryGbps = memoryGbps;
    train.schedule.bucketBytes = bucketBytes;
    train.memoryBudget = memoryBudget;
    train.offload.optimizer = offloadOptimizer;
    train.offload.params = offloadParams;
    train.offload.readAhead = offloadReadAhead;
    return train;
  }
};

/// zero-bufferize-step's options.
struct BufferizeStepOptions : public PassPipelineOptions<BufferizeStepOptions> {
  mlir::detail::PassOptions::Option<Target> target{
      *this, "target",
      llvm::cl::desc("What the step is bufferized for: target=cuda pads "
                     "the rows of GEMM operands to aligned strides "
                     "(zero-pad-gemm-rows), which the memory prediction "
                     "must see"),
      llvm::cl::init(LowerOptions().target),
      llvm::cl::values(clEnumValN(Target::CPU, "cpu", "the CPU backend"),
                       clEnumValN(Target::CUDA, "cuda", "the CUDA backend"))};
};

/// Tensors to buffers with the step ABI: read-only inputs, in-place optimizer
/// parameters and states, out-parameters for everything else, and
/// ownership-based deallocation of every temporary. For target=cuda, the
/// rows of GEMM operands are padded to aligned strides.
void buildBufferizeStepPipeline(OpPassManager &pm, Target target);

/// Buffers to the LLVM dialect: matmuls to runtime GEMM calls, the rest to
/// loops, allocations through the runtime's accounting allocator.
void buildLowerToLLVMPipeline(OpPassManager &pm, const LowerOptions &opts);

/// Both halves: the `zero-lower-cpu` pipeline. Its output carries the step
/// ABI (zero-step-abi, zero-export-step-abi).
void buildLowerCPUPipeline(OpPassManager &pm, const LowerOptions &opts);

/// What a partitioned step still needs: zero-schedule (unless
/// `runSchedule` is off), zero-offload (where a placement is not the
/// device), then the lowering for the target. The second half of
/// `zero-train-pipeline`, and all of what zero-run and zero-compile run on
/// a module zero-partition already rewrote.
void buildPartitionedStepPipeline(OpPassManager &pm, const TrainOptions &opts);

/// `zero-train-pipeline`: zero-verify, zero-remat (with a memory budget),
/// zero-partition, then buildPartitionedStepPipeline. A contract module
/// in, an LLVM dialect module with the step ABI out.
void buildTrainPipeline(OpPassManager &pm, const TrainOptions &opts);

/// Attaches BufferizableOpInterface models to the shard collectives that
/// zero-partition emits: each bufferizes into a fresh result buffer and a
/// call of the runtime's collective.
void registerShardBufferizationModels(DialectRegistry &registry);

/// Registers `zero-train-pipeline`, `zero-lower`, `zero-lower-cpu` (and its
/// halves, `zero-bufferize-step` and `zero-lower-to-llvm`) with the
/// pass-pipeline command-line parser: each turns its textual options into
/// the typed ones above and calls the same builder the tools do.
void registerZeroPipelines();

} // namespace mlir::zero

#endif // ZERO_CONVERSION_PIPELINES_H
