//===- Pipelines.h - zero-mlir lowering pipelines ---------------*- C++ -*-===//
//
// zero-lower-cpu turns a verified training step into LLVM dialect code that
// calls the runtime (runtime/include/zero/runtime.h). It runs in two halves
// so that a driver can read the buffer ABI of the step functions in between
// (zero-run does): bufferization, then the lowering to LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_CONVERSION_PIPELINES_H
#define ZERO_CONVERSION_PIPELINES_H

#include "zero/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::zero {

/// When the lowering runs zero-fuse-row-nests.
enum class RowFusion { Auto, On, Off };

/// The lowering's options, shared by zero-lower, zero-lower-cpu and
/// zero-train-pipeline.
template <typename Derived>
struct LoweringOptions : public PassPipelineOptions<Derived> {
  using Option = mlir::detail::PassOptions::Option<bool>;
  mlir::detail::PassOptions::Option<Target> target{
      *this, "target", llvm::cl::desc("What the step is lowered for"),
      llvm::cl::init(Target::CPU),
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
      llvm::cl::init("sm_90")};
  mlir::detail::PassOptions::Option<std::string> gpuFeatures{
      *this, "gpu-features",
      llvm::cl::desc("target=cuda: NVPTX features (the PTX version)"),
      llvm::cl::init("+ptx80")};
  mlir::detail::PassOptions::Option<std::string> gpuFormat{
      *this, "gpu-format",
      llvm::cl::desc("target=cuda: what gpu-module-to-binary embeds: fatbin "
                     "(SASS for gpu-chip and its PTX), bin (SASS), isa "
                     "(PTX text, no ptxas needed)"),
      llvm::cl::init("fatbin")};
  mlir::detail::PassOptions::Option<std::string> gpuToolkit{
      *this, "gpu-toolkit",
      llvm::cl::desc("target=cuda: the CUDA toolkit whose ptxas and "
                     "fatbinary build the kernels (empty: $CUDA_HOME, "
                     "$CUDA_PATH, /usr/local/cuda, then PATH)"),
      llvm::cl::init("")};
  mlir::detail::PassOptions::Option<RowFusion> fuseRows{
      *this, "fuse-rows",
      llvm::cl::desc("Run a row reduction and the nests around it that meet "
                     "it row by row as one nest over the rows "
                     "(zero-fuse-row-nests; on a GPU one kernel of a block "
                     "per row)"),
      llvm::cl::init(RowFusion::Auto),
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
      llvm::cl::init(256)};
  Option gemmToRuntime{
      *this, "gemm-to-runtime",
      llvm::cl::desc("Lower linalg.matmul/batch_matmul to runtime GEMM calls "
                     "(OpenBLAS); off: plain loops like everything else"),
      llvm::cl::init(true)};
  Option approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Compute f32 tanh, exp, log, erf ... with upstream's "
                     "vectorizable polynomial approximations "
                     "(zero-approximate-math); off: libm calls"),
      llvm::cl::init(true)};
  Option parallelLoops{
      *this, "parallel-loops",
      llvm::cl::desc("Run loop nests with independent outer iterations on "
                     "the runtime's threads (zero-parallel-loop-functions, "
                     "zrt_parallel_for); off: every loop on the calling "
                     "thread"),
      llvm::cl::init(true)};
};

struct LowerCPUOptions : public LoweringOptions<LowerCPUOptions> {};

struct TrainPipelineOptions : public LoweringOptions<TrainPipelineOptions> {
  PassOptions::Option<int64_t> stage{
      *this, "stage",
      llvm::cl::desc("ZeRO stage: 0 data parallel, 1 optimizer states "
                     "sharded, 2 and gradients, 3 and parameters"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> worldSize{
      *this, "world-size",
      llvm::cl::desc("Number of data-parallel ranks the step runs on"),
      llvm::cl::init(1)};
  PassOptions::Option<int64_t> accumulate{
      *this, "accumulate",
      llvm::cl::desc("Gradient accumulation: micro-batches per step, each "
                     "batch input holding K of them (zero-partition)"),
      llvm::cl::init(1)};
  PassOptions::Option<bool> schedule{
      *this, "schedule",
      llvm::cl::desc("Overlap collectives with compute (zero-schedule); "
                     "off: every collective blocks where zero-partition put "
                     "it"),
      llvm::cl::init(true)};
  PassOptions::Option<double> linkGbps{
      *this, "link-gbps",
      llvm::cl::desc("zero-schedule's cost model: link bandwidth in GB/s"),
      llvm::cl::init(ZeroSchedulePassOptions().linkGbps)};
  PassOptions::Option<double> gemmGflops{
      *this, "gemm-gflops",
      llvm::cl::desc("zero-schedule's cost model: GEMM rate of one rank in "
                     "GFLOP/s"),
      llvm::cl::init(ZeroSchedulePassOptions().gemmGflops)};
  PassOptions::Option<double> vectorGflops{
      *this, "vector-gflops",
      llvm::cl::desc("zero-schedule's cost model: rate of the FLOPs of "
                     "other linalg ops in GFLOP/s"),
      llvm::cl::init(ZeroSchedulePassOptions().vectorGflops)};
  PassOptions::Option<double> memoryGbps{
      *this, "memory-gbps",
      llvm::cl::desc("zero-schedule's cost model: memory bandwidth of one "
                     "rank in GB/s"),
      llvm::cl::init(ZeroSchedulePassOptions().memoryGbps)};
  PassOptions::Option<double> linkLatencyUs{
      *this, "link-latency-us",
      llvm::cl::desc("zero-schedule's cost model: latency of a collective "
                     "in microseconds"),
      llvm::cl::init(ZeroSchedulePassOptions().linkLatencyUs)};
  PassOptions::Option<int64_t> bucketBytes{
      *this, "bucket-bytes",
      llvm::cl::desc("zero-schedule's buckets: consecutive collectives "
                     "smaller than this (full-size bytes) merge into one of "
                     "at most this many (0: no buckets)"),
      llvm::cl::init(ZeroSchedulePassOptions().bucketBytes)};
  PassOptions::Option<int64_t> memoryBudget{
      *this, "memory-budget",
      llvm::cl::desc("Bytes one rank may hold at the step's peak (0: "
                     "none): zero-remat recomputes forward values until "
                     "the unscheduled step fits, zero-schedule keeps its "
                     "prefetches within it"),
      llvm::cl::init(0)};
  PassOptions::Option<Placement> offloadOptimizer{
      *this, "offload-optimizer",
      llvm::cl::desc("zero-offload's optimizer placement (after "
                     "zero-schedule)"),
      llvm::cl::init(Placement::Device),
      llvm::cl::values(
          clEnumValN(Placement::Device, "device", "in the step's memory"),
          clEnumValN(Placement::Host, "host",
                     "in host memory next to the device, updated there"),
          clEnumValN(Placement::Nvme, "nvme", "on the NVMe tier"))};
  PassOptions::Option<Placement> offloadParams{
      *this, "offload-params",
      llvm::cl::desc("zero-offload's placement of stage-3 parameter shards"),
      llvm::cl::init(Placement::Device),
      llvm::cl::values(
          clEnumValN(Placement::Device, "device", "in the step's memory"),
          clEnumValN(Placement::Nvme, "nvme", "on the NVMe tier"))};
  PassOptions::Option<unsigned> offloadReadAhead{
      *this, "offload-read-ahead",
      llvm::cl::desc("zero-offload's read-ahead: how many uses ahead an "
                     "NVMe read starts"),
      llvm::cl::init(3)};
};

/// zero-bufferize-step's options.
struct BufferizeStepOptions : public PassPipelineOptions<BufferizeStepOptions> {
  mlir::detail::PassOptions::Option<Target> target{
      *this, "target",
      llvm::cl::desc("What the step is bufferized for: target=cuda pads "
                     "the rows of GEMM operands to aligned strides "
                     "(zero-pad-gemm-rows), which the memory prediction "
                     "must see"),
      llvm::cl::init(Target::CPU),
      llvm::cl::values(clEnumValN(Target::CPU, "cpu", "the CPU backend"),
                       clEnumValN(Target::CUDA, "cuda", "the CUDA backend"))};
};

/// Tensors to buffers with the step ABI: read-only inputs, in-place optimizer
/// parameters and states, out-parameters for everything else, and
/// ownership-based deallocation of every temporary. For target=cuda, the
/// rows of GEMM operands are padded to aligned strides.
void buildBufferizeStepPipeline(OpPassManager &pm,
                                Target target = Target::CPU);

/// Buffers to the LLVM dialect: matmuls to runtime GEMM calls, the rest to
/// loops, allocations through the runtime's accounting allocator.
void buildLowerToLLVMPipeline(OpPassManager &pm, const LowerCPUOptions &opts);

/// Both halves: the `zero-lower-cpu` pipeline. Its output carries the step
/// ABI (zero-step-abi, zero-export-step-abi).
void buildLowerCPUPipeline(OpPassManager &pm, const LowerCPUOptions &opts);

/// `zero-train-pipeline`: zero-verify, zero-partition, then the lowering for
/// the target. A contract module in, an LLVM dialect module with the step
/// ABI out.
void buildTrainPipeline(OpPassManager &pm, const TrainPipelineOptions &opts);

/// Attaches BufferizableOpInterface models to the shard collectives that
/// zero-partition emits: each bufferizes into a fresh result buffer and a
/// call of the runtime's collective.
void registerShardBufferizationModels(DialectRegistry &registry);

/// Registers `zero-lower-cpu` (and its halves, `zero-bufferize-step` and
/// `zero-lower-to-llvm`) with the pass-pipeline command-line parser.
void registerZeroPipelines();

} // namespace mlir::zero

#endif // ZERO_CONVERSION_PIPELINES_H
