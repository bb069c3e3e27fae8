//===- Pipelines.cpp - zero-mlir lowering pipelines -----------------------===//
//
// Upstream passes do all the work but three: zero-prepare-bufferization and
// zero-finalize-bufferization fix the step functions' buffer ABI around the
// upstream bufferization passes, and zero-linalg-to-runtime sends matmuls to
// the runtime's GEMM (upstream has no linalg-to-BLAS lowering).
//
//===----------------------------------------------------------------------===//

#include "zero/Conversion/Pipelines.h"

#include "zero/Analysis/PredictedMemory.h"

#include "zero/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdlib>

using namespace mlir;

void zero::buildBufferizeStepPipeline(OpPassManager &pm, Target target) {
  // Transposed matmul operands are read in place (GEMM transpose flags)
  // rather than copied every step.
  pm.addPass(createZeroFoldTransposesPass());
  // Elementwise chains in one loop nest each; matmuls stay matmuls (not
  // upstream's linalg-fuse-elementwise-ops, which would fold transposes
  // into contractions that the GEMM lowering no longer recognizes).
  ZeroFuseElementwisePassOptions fuse;
  fuse.bf16GemmResults = target == Target::CUDA;
  pm.addPass(createZeroFuseElementwisePass(fuse));
  pm.addPass(createZeroPrepareBufferizationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createZeroFinalizeBufferizationPass());
  pm.addPass(createCanonicalizerPass());
  // Upstream's buffer-deallocation-pipeline, with the deallocations of
  // distinct allocations split before the simplification, which would
  // split them with a quadratic number of alias queries.
  memref::ExpandReallocPassOptions realloc;
  realloc.emitDeallocs = false;
  pm.addNestedPass<func::FuncOp>(memref::createExpandReallocPass(realloc));
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(
      bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addPass(createZeroSplitDeallocsPass());
  pm.addNestedPass<func::FuncOp>(
      bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addPass(createZeroReleaseEarlyPass());
  // After the frees are placed: a started gather whose buffer is only
  // copied into a parameter gathers into the parameter.
  pm.addNestedPass<func::FuncOp>(createZeroGatherIntoDestinationPass());
  // The collectives' buffers placed, before anything predicts the step's
  // memory (the collectives stay typed ops until the LLVM lowering).
  ZeroCommBuffersPassOptions commBuffers;
  commBuffers.target = target;
  pm.addPass(createZeroCommBuffersPass(commBuffers));
  // cuBLASLt's tensor-core kernels need leading dimensions aligned to 16
  // bytes: a GEMM operand with odd rows (a vocabulary of 50,257) gets
  // padded rows. Here rather than in the lowering, so that the memory
  // prediction of the bufferized step counts the padding.
  if (target == Target::CUDA) {
    pm.addNestedPass<func::FuncOp>(createZeroPadGemmRowsPass());
    // A bf16 GEMM's f32 result that is only rounded: cuBLASLt writes the
    // bf16 buffer itself (half the bytes, one pass fewer). Lowered here,
    // for the same reason: the prediction must not count the f32 buffer.
    ZeroLinalgToRuntimePassOptions rounded;
    rounded.bf16Results = true;
    rounded.bf16ResultsOnly = true;
    pm.addPass(createZeroLinalgToRuntimePass(rounded));
  }
}

/// The CUDA toolkit gpu-module-to-binary takes ptxas and fatbinary from:
/// the option, else $CUDA_HOME, $CUDA_PATH or /usr/local/cuda where it
/// exists, else none (upstream then searches PATH).
static std::string cudaToolkit(const std::string &option) {
  if (!option.empty())
    return option;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *dir = std::getenv(var); dir && *dir)
      return dir;
  if (llvm::sys::fs::is_directory("/usr/local/cuda"))
    return "/usr/local/cuda";
  return "";
}

void zero::buildLowerToLLVMPipeline(OpPassManager &pm,
                                    const LowerOptions &opts) {
  const bool cuda = opts.target == Target::CUDA;
  // The one conversion of the collectives, transfers and arena to the
  // runtime's calls.
  pm.addPass(createZeroCollectivesToRuntimePass());
  pm.addPass(createZeroAllocCategoriesPass());
  if (opts.gemmToRuntime)
    pm.addPass(createZeroLinalgToRuntimePass());
  // On the GPU a contiguous copy is a kernel too: the host's memcpy cannot
  // reach device buffers.
  ZeroLowerStridedCopyPassOptions copies;
  copies.contiguous = cuda;
  pm.addPass(createZeroLowerStridedCopyPass(copies));
  // The operations that run on the host next to the device (zero-offload's
  // optimizer=host) in functions of their own, before the loop lowering
  // drops their marks.
  if (cuda)
    pm.addPass(createZeroOutlineHostOpsPass());
  // scf.parallel where linalg's iterators are parallel, scf.for for
  // reductions.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  // A softmax's or a LayerNorm's nests as one over the rows: on a GPU one
  // block per row reads the row from memory once.
  if (opts.fuseRows == RowFusion::On ||
      (opts.fuseRows == RowFusion::Auto && cuda))
    pm.addNestedPass<func::FuncOp>(createZeroFuseRowNestsPass());
  // Many small functions: compile time linear in the number of loops.
  pm.addPass(createZeroOutlineLoopNestsPass());
  if (cuda) {
    // Each distinct loop nest one kernel, in one gpu.module, launched on
    // the runtime's compute stream.
    pm.addPass(createZeroGpuKernelsPass(opts.kernels));
    // Sizes and strides into the kernels as constants: the grid mapping
    // computes them outside the launch, and a kernel that receives them
    // as arguments divides by a variable (a 64-bit division per element
    // and dimension) where a constant divisor becomes a multiply.
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createGpuLaunchSinkIndexComputationsPass());
    pm.addPass(createGpuKernelOutliningPass());
    pm.addPass(createZeroGpuLaunchStreamsPass());
  }
  // Over the runtime's threads: every nest on the CPU, the host's nests
  // on cuda (the rest are kernels now).
  if (opts.parallelLoops)
    pm.addPass(createZeroParallelLoopFunctionsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (cuda) {
    // The kernels to NVVM before the host's conversions run over the
    // module (upstream's gpu-lower-to-nvvm-pipeline does the same, with a
    // host lowering of its own that ours replaces).
    GpuNVVMAttachTargetOptions target;
    target.chip = opts.gpuChip;
    target.features = opts.gpuFeatures;
    target.optLevel = 3;
    pm.addPass(createGpuNVVMAttachTarget(target));
    ConvertGpuOpsToNVVMOpsOptions nvvm;
    nvvm.indexBitwidth = 64;
    pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(nvvm));
    pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
    pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
    pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  }
  // f32 tanh, exp, log, ... as polynomials that vectorize with the loops
  // around them; then intrinsics where LLVM has them (sqrt, pow, ...), libm
  // for the rest (f64, or everything with approximate-math=false).
  if (opts.approximateMath)
    pm.addPass(createZeroApproximateMathPass());
  // bf16 arithmetic left in host code (a gradient scaled by 1/N, a max) in
  // f32 and rounded after each op, as LLVM's own promotion would compute
  // it, then every bf16 conversion as integer code: the step's own
  // conversions then need no __truncsfbf2 builtin on CPUs without a bf16
  // conversion instruction (GCC 12's libgcc has none to link). LLVM can
  // still call it where it legalizes bf16 vectors it formed itself; the
  // runtime defines it for that (runtime/lib/Builtins.cpp).
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16"};
  emulate.targetTypeStr = "f32";
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  pm.addPass(createZeroExpandBf16Pass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  // Every allocation goes through _mlir_memref_to_llvm_{alloc,free}, which
  // the runtime implements with per-category accounting.
  // Aligned allocation asks for exactly the bytes a buffer needs (rounded
  // up to its 64-byte alignment); the plain form over-allocates by the
  // alignment to align by hand, which the accounting would count.
  FinalizeMemRefToLLVMConversionPassOptions memref;
  memref.useGenericFunctions = true;
  memref.useAlignedAlloc = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memref));
  // One pointer per buffer at function boundaries (every step buffer has a
  // static shape and the identity layout): the entry functions take what a
  // C caller has, and zero-export-step-abi's packed forms stay simple.
  // (Its cost per memref argument is the length of the entry block.)
  pm.addPass(createZeroSeparateEntryBlockPass());
  ConvertFuncToLLVMPassOptions func;
  func.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(func));
  pm.addPass(createConvertControlFlowToLLVMPass());
  if (cuda)
    pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (cuda) {
    GpuModuleToBinaryPassOptions binary;
    binary.compilationTarget = opts.gpuFormat;
    binary.toolkitPath = cudaToolkit(opts.gpuToolkit);
    pm.addPass(createGpuModuleToBinaryPass(binary));
  }
  if (opts.parallelLoops)
    pm.addPass(createZeroParallelCallsToRuntimePass());
  pm.addPass(createZeroStripContractAttributesPass());
}

void zero::buildLowerCPUPipeline(OpPassManager &pm,
                                 const LowerOptions &opts) {
  buildBufferizeStepPipeline(pm, opts.target);
  // The signatures are final now: record them for drivers.
  ZeroStepAbiPassOptions abi;
  abi.target = opts.target;
  pm.addPass(createZeroStepAbiPass(abi));
  buildLowerToLLVMPipeline(pm, opts);
  pm.addPass(createZeroExportStepAbiPass());
}

void zero::buildPartitionedStepPipeline(OpPassManager &pm,
                                        const TrainOptions &opts) {
  if (opts.runSchedule) {
    // The budget's prediction is the target's (its bufferize-pipeline left
    // at the pass's default, the target's bufferization).
    ZeroSchedulePassOptions schedule = opts.schedule;
    schedule.memoryBudget = opts.memoryBudget;
    schedule.target = opts.lower.target;
    pm.addPass(createZeroSchedulePass(schedule));
  }
  if (opts.offloads())
    pm.addPass(createZeroOffloadPass(opts.offload));
  buildLowerCPUPipeline(pm, opts.lower);
}

void zero::buildTrainPipeline(OpPassManager &pm, const TrainOptions &opts) {
  pm.addPass(createZeroVerifyPass());
  if (opts.memoryBudget > 0) {
    // The peak zero-remat holds is the partitioned step's, unscheduled:
    // the floor zero-schedule's own budget check starts from.
    ZeroRematPassOptions remat;
    remat.memoryBudget = opts.memoryBudget;
    remat.target = opts.lower.target;
    remat.predictPipeline =
        llvm::formatv("zero-partition{{stage={0} world-size={1} "
                      "accumulate={2}},{3}",
                      opts.partition.stage, opts.partition.worldSize,
                      opts.partition.accumulate,
                      bufferizeStepPipeline(opts.lower.target))
            .str();
    pm.addPass(createZeroRematPass(remat));
  }
  pm.addPass(createZeroPartitionPass(opts.partition));
  buildPartitionedStepPipeline(pm, opts);
}

void zero::registerZeroPipelines() {
  PassPipelineRegistration<TrainPipelineOptions>(
      "zero-train-pipeline",
      "Verify, partition for ZeRO (stage, world-size) and lower a training "
      "step for a target: what zero-run and zero-compile run",
      [](OpPassManager &pm, const TrainPipelineOptions &opts) {
        buildTrainPipeline(pm, opts.trainOptions());
      });
  auto lower = [](OpPassManager &pm, const LowerCPUOptions &opts) {
    buildLowerCPUPipeline(pm, opts.lowerOptions());
  };
  PassPipelineRegistration<LowerCPUOptions>(
      "zero-lower",
      "Lower a verified training step for a target (cpu, cuda) to LLVM "
      "dialect code that calls the zero runtime (bufferize-step, then "
      "lower-to-llvm)",
      lower);
  PassPipelineRegistration<LowerCPUOptions>(
      "zero-lower-cpu", "zero-lower, whose target is cpu unless given",
      lower);
  PassPipelineRegistration<BufferizeStepOptions>(
      "zero-bufferize-step",
      "First half of zero-lower-cpu: bufferize a training step with the "
      "runtime's buffer ABI",
      [](OpPassManager &pm, const BufferizeStepOptions &opts) {
        buildBufferizeStepPipeline(pm, opts.target);
      });
  PassPipelineRegistration<LowerCPUOptions>(
      "zero-lower-to-llvm",
      "Second half of zero-lower-cpu: buffers to the LLVM dialect",
      [](OpPassManager &pm, const LowerCPUOptions &opts) {
        buildLowerToLLVMPipeline(pm, opts.lowerOptions());
      });
}
