//===- CudaBackend.cpp - CUDA backend of zero-runtime ---------------------===//
//
// The CUDA backend's compute: copies with the driver API, GEMMs through
// cuBLASLt and generated kernels through cuLaunchKernel, all in order on one
// compute stream of one device (a Compute and the Kernels of Compute.h). Its
// memory, device and page-locked host, is CudaMemory.cpp's; its collectives
// over several ranks are NCCL's (comm/nccl/Nccl.cpp); the Backend made of them
// is cudaBackend() at the end of this file.
//
// The CUDA driver and cuBLASLt are opened with dlopen when the backend is
// first selected, through the tables of CudaSymbols.h, so the runtime links
// nothing of CUDA. The context and the driver's errors are CudaContext.h's.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "ThreadPool.h"

#ifdef ZERO_RUNTIME_HAVE_CUDA

#include "backends/cuda/CudaContext.h"
#include "backends/cuda/CudaMemory.h"
#include "comm/nccl/Nccl.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace zero::runtime {
namespace {

/// The GEMM shapes that reuse a matmul plan (descriptors and algorithm).
struct PlanKey {
  int dtype;
  bool transA, transB, tf32, betaZero, bf16C;
  /// The alignment every matrix of A, B and C has (bytes, up to 256):
  /// operands are often views into larger buffers (a head's slice), and an
  /// algorithm chosen for 16-byte alignment must not see 4-byte pointers.
  uint32_t alignA, alignB, alignC;
  int64_t batch, m, n, k, lda, ldb, ldc, strideA, strideB, strideC;
  bool operator==(const PlanKey &o) const {
    return std::memcmp(this, &o, sizeof o) == 0;
  }
};

struct PlanKeyHash {
  std::size_t operator()(const PlanKey &key) const {
    const auto *bytes = reinterpret_cast<const unsigned char *>(&key);
    std::size_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i < sizeof key; ++i)
      h = (h ^ bytes[i]) * 1099511628211ull;
    return h;
  }
};

struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo;
};

/// The largest power of two up to 256 that divides the address `ptr` and
/// the batch stride `strideBytes` (0: no batch).
uint32_t alignment(const void *ptr, int64_t strideBytes) {
  uint64_t bits = reinterpret_cast<uintptr_t>(ptr) |
                  static_cast<uint64_t>(strideBytes) | 256u;
  return static_cast<uint32_t>(bits & (~bits + 1));
}

/// The key of a GEMM's plan: every argument cuBLASLt's descriptors and
/// algorithm depend on, the operands' alignment among them. Zeroed first:
/// the key is compared and hashed as bytes, padding included.
PlanKey planKey(DType dtype, const GemmArgs &g, int64_t batch, int64_t strideA,
                int64_t strideB, int64_t strideC, bool tf32) {
  PlanKey key;
  std::memset(&key, 0, sizeof key);
  key.dtype = static_cast<int>(dtype);
  key.transA = g.transA;
  key.transB = g.transB;
  key.tf32 = tf32 && dtype == DType::F32;
  key.betaZero = g.beta == 0;
  key.bf16C = dtype == DType::BF16 && g.bf16C;
  key.batch = batch;
  key.m = g.m;
  key.n = g.n;
  key.k = g.k;
  key.lda = g.lda;
  key.ldb = g.ldb;
  key.ldc = g.ldc;
  key.strideA = strideA;
  key.strideB = strideB;
  key.strideC = strideC;
  const int64_t abBytes = dtype == DType::F64 ? 8 : dtype == DType::F32 ? 4 : 2;
  const int64_t cBytes = dtype == DType::F64 ? 8 : key.bf16C ? 2 : 4;
  key.alignA = alignment(g.a, batch > 1 ? strideA * abBytes : 0);
  key.alignB = alignment(g.b, batch > 1 ? strideB * abBytes : 0);
  key.alignC = alignment(g.c, batch > 1 ? strideC * cBytes : 0);
  return key;
}

/// cuBLASLt's workspace: what Hopper's kernels ask for at most (NVIDIA's
/// recommendation for sm_90). Held outside the memory categories, as the
/// backend's own, and reported by gemmKernel().
constexpr std::size_t kWorkspaceBytes = 32u << 20;

/// The CUDA backend's compute (GEMMs on cuBLASLt, copies, kernels, all on
/// the compute stream), the context it shares, and its other parts: the
/// device's memory and the host's next to it (CudaMemory.h) and NCCL's
/// communicator (comm/nccl/Nccl.h).
class CudaDevice final : public Compute, public Kernels, private CudaContext {
public:
  CudaDevice() { open(); }

  /// The backend these parts make.
  Backend parts() {
#ifdef ZERO_RUNTIME_HAVE_NCCL
    Communicator *communicator = &nccl;
#else
    Communicator *communicator = nullptr;
#endif
    return Backend{"cuda", *this, memory, host, this, communicator};
  }

  /// The thread count is the host's: the runtime's pool runs the host
  /// functions of a step (optimizer=host's updates). The first call with
  /// none given takes one thread per core.
  void configure(int numThreads) override {
    makeCurrent();
    if (numThreads <= 0 && !configured)
      numThreads = static_cast<int>(
          std::max(1u, std::thread::hardware_concurrency()));
    configured = true;
    if (numThreads > 0)
      ThreadPool::get().resize(numThreads);
  }

  GemmKernelInfo gemmKernel() const override { return kernelInfo; }

  bool nativeBf16Gemm() const override { return true; }

  void copyToHost(void *dst, const void *src, std::size_t bytes) override {
    makeCurrent();
    check(cu.cuMemcpyDtoHAsync_(dst, device(src), bytes, computeStream),
          "cuMemcpyDtoHAsync");
    check(cu.cuStreamSynchronize_(computeStream), "cuStreamSynchronize");
  }

  void copyFromHost(void *dst, const void *src, std::size_t bytes) override {
    makeCurrent();
    // From pageable memory the copy has taken `src` when the call returns
    // (CUDA's documented behaviour for pageable host buffers), so the
    // caller may reuse it.
    check(cu.cuMemcpyHtoDAsync_(device(dst), src, bytes, computeStream),
          "cuMemcpyHtoDAsync");
  }

  void copy(void *dst, const void *src, std::size_t bytes) override {
    makeCurrent();
    check(cu.cuMemcpyDtoDAsync_(device(dst), device(src), bytes,
                                computeStream),
          "cuMemcpyDtoDAsync");
  }

  void synchronize() override {
    makeCurrent();
    check(cu.cuStreamSynchronize_(computeStream), "cuStreamSynchronize");
  }

  /// The copy runs on the copy stream after an event of the compute
  /// stream (so after the kernels that wrote `src`); the handle is the
  /// slot of the event recorded after it. Unified addressing tells the
  /// direction from the pointers.
  int64_t copyStart(void *dst, const void *src, std::size_t bytes) override {
    makeCurrent();
    std::lock_guard<std::mutex> lock(copyMutex);
    if (!copyStream)
      check(cu.cuStreamCreate_(&copyStream, CU_STREAM_NON_BLOCKING),
            "cuStreamCreate (copies)");
    std::size_t slot;
    if (!freeSlots.empty()) {
      slot = freeSlots.back();
      freeSlots.pop_back();
    } else {
      CUevent before = nullptr, after = nullptr;
      check(cu.cuEventCreate_(&before, CU_EVENT_DISABLE_TIMING),
            "cuEventCreate");
      if (CUresult r = cu.cuEventCreate_(&after, CU_EVENT_DISABLE_TIMING);
          r != CUDA_SUCCESS) {
        cu.cuEventDestroy_(before);
        check(r, "cuEventCreate");
      }
      slot = copyEvents.size();
      copyEvents.push_back({before, after});
    }
    auto [before, after] = copyEvents[slot];
    try {
      check(cu.cuEventRecord_(before, computeStream), "cuEventRecord");
      check(cu.cuStreamWaitEvent_(copyStream, before, 0), "cuStreamWaitEvent");
      check(cu.cuMemcpyAsync_(device(dst), device(src), bytes, copyStream),
            "cuMemcpyAsync");
      check(cu.cuEventRecord_(after, copyStream), "cuEventRecord");
    } catch (...) {
      freeSlots.push_back(slot);
      throw;
    }
    return static_cast<int64_t>(slot);
  }

  void copyWait(int64_t handle) override {
    makeCurrent();
    CUevent after;
    {
      std::lock_guard<std::mutex> lock(copyMutex);
      if (handle < 0 || static_cast<std::size_t>(handle) >= copyEvents.size())
        throw Error("zrt_wait: copy " + std::to_string(handle) +
                    " was never started");
      after = copyEvents[handle].second;
    }
    check(cu.cuEventSynchronize_(after), "cuEventSynchronize (a copy)");
    std::lock_guard<std::mutex> lock(copyMutex);
    freeSlots.push_back(static_cast<std::size_t>(handle));
  }

  void *stream() override { return computeStream; }

  void *loadModule(const void *image) override {
    makeCurrent();
    CUmodule module = nullptr;
    check(cu.cuModuleLoadData_(&module, image),
          "loading the step's kernels on this " + arch +
              " device (cuModuleLoadData; were they built for it? "
              "zero-lower's gpu-chip)");
    return module;
  }

  void *moduleFunction(void *module, const char *name) override {
    makeCurrent();
    CUfunction f = nullptr;
    check(cu.cuModuleGetFunction_(&f, static_cast<CUmodule>(module), name),
          std::string("cuModuleGetFunction(\"") + name + "\")");
    return f;
  }

  void launch(void *function, const int64_t grid[3], const int64_t block[3],
              int32_t sharedBytes, void **params) override {
    makeCurrent();
    unsigned g[3], b[3];
    for (int i = 0; i < 3; ++i) {
      if (grid[i] < 1 || grid[i] > 0x7fffffff || block[i] < 1 ||
          block[i] > 1024)
        throw Error("kernel launch with grid (" + std::to_string(grid[0]) +
                    ", " + std::to_string(grid[1]) + ", " +
                    std::to_string(grid[2]) + ") and block (" +
                    std::to_string(block[0]) + ", " +
                    std::to_string(block[1]) + ", " +
                    std::to_string(block[2]) + ") is out of CUDA's range");
      g[i] = static_cast<unsigned>(grid[i]);
      b[i] = static_cast<unsigned>(block[i]);
    }
    if (sharedBytes < 0)
      throw Error("negative dynamic shared memory");
    check(cu.cuLaunchKernel_(static_cast<CUfunction>(function), g[0], g[1],
                             g[2], b[0], b[1], b[2],
                             static_cast<unsigned>(sharedBytes), computeStream,
                             params, nullptr),
          "cuLaunchKernel");
  }

  bool setTf32(bool enable) override {
    std::lock_guard<std::mutex> lock(planMutex);
    bool previous = tf32;
    tf32 = enable;
    return previous;
  }

  void gemm(DType dtype, const GemmArgs &args) override {
    int64_t chunk = reductionChunk(args);
    if (chunk == 0)
      return matmulAlignedColumns(dtype, args);
    // A long reduction in chunks of K, accumulated in order into C (beta 1
    // after the first): cuBLASLt's choice for K = 50,257 over an 8192 x 768
    // result (the logits' input gradient) ran at 39 TFLOP/s, its choices
    // for the chunks' shapes at the MLP's rates. Deterministic as before:
    // the same chunks in the same order every time.
    const int64_t elt = dtype == DType::F64 ? 8 : dtype == DType::F32 ? 4 : 2;
    GemmArgs part = args;
    for (int64_t k0 = 0; k0 < args.k; k0 += chunk) {
      part.k = std::min(chunk, args.k - k0);
      part.a = static_cast<const char *>(args.a) +
               (args.transA ? k0 * args.lda : k0) * elt;
      part.b = static_cast<const char *>(args.b) +
               (args.transB ? k0 : k0 * args.ldb) * elt;
      part.beta = k0 == 0 ? args.beta : 1.0;
      matmulAlignedColumns(dtype, part);
    }
  }

  /// One GEMM whose long rows of C (n at least 4096) with a count of
  /// columns that is not a multiple of 16 (a vocabulary of 50,257) are
  /// split: the first multiple of 16 columns, then the rest. cuBLASLt's
  /// kernels for the unaligned count stored C element by element: GPT-2's
  /// logits, 8192 x 50,257 x 768, ran at 95 TFLOP/s in bf16 and 131 in
  /// TF32. Each element is still one product over all of K, and the split
  /// is the same every call, so runs repeat bit for bit.
  /// ZERO_CUDA_GEMM_N_SPLIT=0 turns it off.
  void matmulAlignedColumns(DType dtype, const GemmArgs &args) {
    int64_t rest = args.n % 16;
    if (!nSplit || args.n < 4096 || rest == 0)
      return matmul(dtype, args, 1, 0, 0, 0);
    const int64_t elt = dtype == DType::F64 ? 8 : dtype == DType::F32 ? 4 : 2;
    const int64_t cElt = dtype == DType::F64                  ? 8
                         : dtype == DType::BF16 && args.bf16C ? 2
                                                              : 4;
    GemmArgs head = args, tail = args;
    head.n = args.n - rest;
    tail.n = rest;
    tail.b = static_cast<const char *>(args.b) +
             (args.transB ? head.n * args.ldb : head.n) * elt;
    tail.c = static_cast<char *>(args.c) + head.n * cElt;
    matmul(dtype, head, 1, 0, 0, 0);
    matmul(dtype, tail, 1, 0, 0, 0);
  }

  void gemmBatched(DType dtype, const BatchedGemmArgs &args) override {
    matmul(dtype, args.first, args.batch, args.strideA, args.strideB,
           args.strideC);
  }

private:
  void checkLt(cublasStatus_t s, const char *what) const {
    if (s != CUBLAS_STATUS_SUCCESS) {
      const char *name = lt.cublasLtGetStatusName_
                             ? lt.cublasLtGetStatusName_(s)
                             : nullptr;
      throw Error(std::string(what) + " failed: " +
                  (name ? name : "cuBLAS status " + std::to_string(int(s))));
    }
  }

  /// The K of each chunk a GEMM's reduction is split into, or 0 for none:
  /// K at least 16,384 and 4 x max(M, N), in equal chunks about
  /// max(M, N, 4096) long (multiples of 16 elements), unless ZERO_CUDA_GEMM_K_CHUNK says
  /// otherwise (0: never; a number: that chunk wherever K is longer). Not
  /// for a bf16 result, which each chunk would round.
  int64_t reductionChunk(const GemmArgs &g) const {
    if (g.bf16C)
      return 0;
    if (kChunkOverride >= 0)
      return kChunkOverride > 0 && g.k > kChunkOverride ? kChunkOverride : 0;
    int64_t side = std::max(g.m, g.n);
    if (g.k < 16384 || g.k < 4 * side)
      return 0;
    int64_t chunks = (g.k + std::max<int64_t>(side, 4096) - 1) /
                     std::max<int64_t>(side, 4096);
    return ((g.k + chunks - 1) / chunks + 15) / 16 * 16;
  }

  /// Which device this process uses: ZERO_CUDA_DEVICE, else the rank's
  /// local rank (as MPI launchers tell it) modulo the devices there are.
  int chooseDevice(int count) const {
    if (const char *v = std::getenv("ZERO_CUDA_DEVICE"); v && *v) {
      char *end = nullptr;
      long d = std::strtol(v, &end, 10);
      if (*end || d < 0 || d >= count)
        throw Error(std::string("ZERO_CUDA_DEVICE=") + v +
                    " is not a device number below " + std::to_string(count));
      return static_cast<int>(d);
    }
    for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                             "SLURM_LOCALID"})
      if (const char *v = std::getenv(name); v && *v)
        return std::atoi(v) % count;
    return 0;
  }

  void open() {
    driverLib = openDriver(cu);
    CUresult init = cu.cuInit_(0);
    if (init == CUDA_ERROR_STUB_LIBRARY)
      throw Error("the libcuda.so.1 found is the CUDA toolkit's stub, not an "
                  "NVIDIA driver: this machine has no GPU driver (take the "
                  "stubs directory off LD_LIBRARY_PATH where there is one)");
    check(init, "cuInit (no usable GPU or driver?)");
    int count = 0;
    check(cu.cuDeviceGetCount_(&count), "cuDeviceGetCount");
    if (count == 0)
      throw Error("the CUDA driver sees no device");
    int ordinal = chooseDevice(count);
    check(cu.cuDeviceGet_(&dev, ordinal), "cuDeviceGet");
    check(cu.cuDevicePrimaryCtxRetain_(&context, dev),
          "cuDevicePrimaryCtxRetain");
    makeCurrent();
    check(cu.cuStreamCreate_(&computeStream, CU_STREAM_NON_BLOCKING),
          "cuStreamCreate");

    char deviceName[256] = {};
    cu.cuDeviceGetName_(deviceName, sizeof deviceName - 1, dev);
    int major = 0, minor = 0, driverVersion = 0;
    cu.cuDeviceGetAttribute_(
        &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cu.cuDeviceGetAttribute_(
        &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    cu.cuDriverGetVersion_(&driverVersion);
    arch = "sm_" + std::to_string(major) + std::to_string(minor);

    ltLib = openCublasLt(lt);
    checkLt(lt.cublasLtCreate_(&ltHandle), "cublasLtCreate");
    CUdeviceptr ws = 0;
    check(cu.cuMemAlloc_(&ws, kWorkspaceBytes), "cuMemAlloc (cuBLASLt workspace)");
    workspace = reinterpret_cast<void *>(ws);
    memory.openArena();
    if (const char *v = std::getenv("ZERO_CUDA_GEMM_K_CHUNK"); v && *v) {
      char *end = nullptr;
      long long n = std::strtoll(v, &end, 10);
      if (*end || n < 0)
        throw Error(std::string("ZERO_CUDA_GEMM_K_CHUNK=") + v +
                    " is not a chunk length (0: no chunks)");
      kChunkOverride = n;
    }
    if (const char *v = std::getenv("ZERO_CUDA_GEMM_N_SPLIT"); v && *v) {
      if (std::string(v) != "0" && std::string(v) != "1")
        throw Error(std::string("ZERO_CUDA_GEMM_N_SPLIT=") + v +
                    " is not 0 (whole GEMMs) or 1 (aligned columns first)");
      nSplit = std::string(v) == "1";
    }

    size_t ltVersion = lt.cublasLtGetVersion_();
    kernelInfo.library = "cuBLASLt " + std::to_string(ltVersion / 10000) +
                         "." + std::to_string(ltVersion / 100 % 100) + "." +
                         std::to_string(ltVersion % 100) + " (workspace " +
                         std::to_string(kWorkspaceBytes >> 20) +
                         " MiB), CUDA driver " +
                         std::to_string(driverVersion / 1000) + "." +
                         std::to_string(driverVersion % 1000 / 10);
    kernelInfo.kernel = std::string(deviceName) + " (" + arch + "), device " +
                        std::to_string(ordinal) + " of " +
                        std::to_string(count);
    kernelInfo.detected = kernelInfo.kernel;
    kernelInfo.chosenBy = std::getenv("ZERO_CUDA_DEVICE") ? "ZERO_CUDA_DEVICE"
                                                          : "local rank";
  }

  /// Descriptors and the algorithm for one GEMM shape, made once.
  const Plan &plan(DType dtype, const GemmArgs &g, int64_t batch,
                   int64_t strideA, int64_t strideB, int64_t strideC) {
    PlanKey key = planKey(dtype, g, batch, strideA, strideB, strideC, tf32);
    auto it = plans.find(key);
    if (it != plans.end())
      return it->second;

    cudaDataType_t ab, cd, scale;
    cublasComputeType_t compute;
    switch (dtype) {
    case DType::F32:
      ab = cd = scale = CUDA_R_32F;
      compute = key.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      break;
    case DType::F64:
      ab = cd = scale = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      break;
    case DType::BF16:
    default:
      // f32 accumulation; C and D bf16 where the result is rounded (the
      // epilogue rounds to nearest even, as arith.truncf).
      ab = CUDA_R_16BF;
      cd = key.bf16C ? CUDA_R_16BF : CUDA_R_32F;
      scale = CUDA_R_32F;
      compute = CUBLAS_COMPUTE_32F;
      break;
    }

    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: a
    // row-major matrix read column-major is its transpose, so cuBLASLt's A
    // is our B and its B our A, each with its own transposition, and C is
    // n x m column-major with leading dimension ldc.
    Plan p;
    checkLt(lt.cublasLtMatmulDescCreate_(&p.desc, compute, scale),
            "cublasLtMatmulDescCreate");
    cublasOperation_t opA = g.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opB = g.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    checkLt(lt.cublasLtMatmulDescSetAttribute_(
                p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA),
            "cublasLtMatmulDescSetAttribute");
    checkLt(lt.cublasLtMatmulDescSetAttribute_(
                p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB),
            "cublasLtMatmulDescSetAttribute");
    uint64_t aRows = g.transB ? g.k : g.n, aCols = g.transB ? g.n : g.k;
    uint64_t bRows = g.transA ? g.m : g.k, bCols = g.transA ? g.k : g.m;
    checkLt(lt.cublasLtMatrixLayoutCreate_(&p.a, ab, aRows, aCols, g.ldb),
            "cublasLtMatrixLayoutCreate");
    checkLt(lt.cublasLtMatrixLayoutCreate_(&p.b, ab, bRows, bCols, g.lda),
            "cublasLtMatrixLayoutCreate");
    checkLt(lt.cublasLtMatrixLayoutCreate_(&p.c, cd, g.n, g.m, g.ldc),
            "cublasLtMatrixLayoutCreate");
    if (batch > 1) {
      int32_t count = static_cast<int32_t>(batch);
      const std::pair<cublasLtMatrixLayout_t, int64_t> strided[] = {
          {p.a, strideB}, {p.b, strideA}, {p.c, strideC}};
      for (const auto &[layout, stride] : strided) {
        checkLt(lt.cublasLtMatrixLayoutSetAttribute_(
                    layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                    sizeof count),
                "cublasLtMatrixLayoutSetAttribute");
        checkLt(lt.cublasLtMatrixLayoutSetAttribute_(
                    layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                    &stride, sizeof stride),
                "cublasLtMatrixLayoutSetAttribute");
      }
    }

    // Bit-reproducible runs: no split-K reduction that adds partial
    // products in place in the output, whose order is not fixed.
    cublasLtMatmulPreference_t pref = nullptr;
    checkLt(lt.cublasLtMatmulPreferenceCreate_(&pref),
            "cublasLtMatmulPreferenceCreate");
    uint64_t ws = kWorkspaceBytes;
    uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_MASK &
                       ~uint32_t(CUBLASLT_REDUCTION_SCHEME_INPLACE);
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    cublasStatus_t s = lt.cublasLtMatmulPreferenceSetAttribute_(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (s == CUBLAS_STATUS_SUCCESS)
      s = lt.cublasLtMatmulPreferenceSetAttribute_(
          pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes,
          sizeof schemes);
    // cuBLASLt's A is our B (see above).
    const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> aligns[] = {
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.alignB},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.alignA},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.alignC},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.alignC}};
    for (const auto &[attribute, bytes] : aligns)
      if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.cublasLtMatmulPreferenceSetAttribute_(pref, attribute, &bytes,
                                                     sizeof bytes);
    if (s == CUBLAS_STATUS_SUCCESS)
      s = lt.cublasLtMatmulAlgoGetHeuristic_(ltHandle, p.desc, p.a, p.b, p.c,
                                             p.c, pref, 1, &result, &found);
    lt.cublasLtMatmulPreferenceDestroy_(pref);
    checkLt(s, "cublasLtMatmulAlgoGetHeuristic");
    if (found < 1)
      throw Error("cuBLASLt has no algorithm for a " +
                  std::string(dtype == DType::F32   ? "f32"
                              : dtype == DType::F64 ? "f64"
                              : key.bf16C           ? "bf16 x bf16 -> bf16"
                                                    : "bf16 x bf16 -> f32") +
                  " GEMM of m = " + std::to_string(g.m) +
                  ", n = " + std::to_string(g.n) + ", k = " +
                  std::to_string(g.k) + ", batch " + std::to_string(batch));
    p.algo = result.algo;
    return plans.emplace(key, p).first->second;
  }

  void matmul(DType dtype, const GemmArgs &g, int64_t batch, int64_t strideA,
              int64_t strideB, int64_t strideC) {
    makeCurrent();
    std::lock_guard<std::mutex> lock(planMutex);
    const Plan &p = plan(dtype, g, batch, strideA, strideB, strideC);
    float alpha32 = 1.0f, beta32 = static_cast<float>(g.beta);
    double alpha64 = 1.0, beta64 = g.beta;
    const void *alpha = dtype == DType::F64 ? static_cast<const void *>(&alpha64)
                                            : &alpha32;
    const void *beta =
        dtype == DType::F64 ? static_cast<const void *>(&beta64) : &beta32;
    checkLt(lt.cublasLtMatmul_(ltHandle, p.desc, alpha, g.b, p.a, g.a, p.b,
                               beta, g.c, p.c, g.c, p.c, &p.algo, workspace,
                               kWorkspaceBytes, computeStream),
            "cublasLtMatmul");
  }

  LtApi lt;
  void *driverLib = nullptr, *ltLib = nullptr;
  CUdevice dev = 0;
  cublasLtHandle_t ltHandle = nullptr;
  void *workspace = nullptr;
  std::string arch;
  GemmKernelInfo kernelInfo;
  std::mutex planMutex;
  bool tf32 = false;
  std::unordered_map<PlanKey, Plan, PlanKeyHash> plans;
  bool configured = false;
  /// zrt_copy_start's stream, and its events by handle: (after the
  /// compute stream's work, after the copy); slots of waited copies are
  /// reused.
  std::mutex copyMutex;
  CUstream copyStream = nullptr;
  std::vector<std::pair<CUevent, CUevent>> copyEvents;
  std::vector<std::size_t> freeSlots;
  /// ZERO_CUDA_GEMM_K_CHUNK, or -1 for reductionChunk's rule.
  int64_t kChunkOverride = -1;
  /// matmulAlignedColumns splits (ZERO_CUDA_GEMM_N_SPLIT, default on).
  bool nSplit = true;
  /// The device's memory and the page-locked host memory next to it.
  CudaMemory memory{*this};
  PinnedHost host{*this};
#ifdef ZERO_RUNTIME_HAVE_NCCL
  /// Collectives over several ranks (Nccl.h).
  NcclCommunicator nccl{*this};
#endif
};

} // namespace

Backend &cudaBackend() {
  // Made once, on first use; a failure is remembered and repeated (the
  // driver cannot be initialized twice in a useful way). Leaked on purpose,
  // as the CPU backend: blocks must stay releasable during static
  // destruction.
  static std::once_flag once;
  static Backend *backend = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    try {
      backend = new Backend((new CudaDevice())->parts());
    } catch (const std::exception &e) {
      failure = e.what();
    }
  });
  if (!backend)
    throw Error("the \"cuda\" backend is unavailable: " + failure);
  return *backend;
}

} // namespace zero::runtime

#else // !ZERO_RUNTIME_HAVE_CUDA

namespace zero::runtime {

Backend &cudaBackend() {
  throw Error("this zero-runtime was built without the CUDA headers (cuda.h "
              "and cublasLt.h were not found when it was configured), so it "
              "has no \"cuda\" backend: rebuild it with the CUDA toolkit "
              "installed (-DCUDAToolkit_ROOT=...)");
}

} // namespace zero::runtime

#endif // ZERO_RUNTIME_HAVE_CUDA
