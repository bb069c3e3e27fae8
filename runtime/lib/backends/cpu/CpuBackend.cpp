//===- CpuBackend.cpp - OpenBLAS backend of zero-runtime ------------------===//
//
// Two of the runtime's interfaces (Backend.h), and no more: host memory
// (HostMemory, the Allocator of both memory spaces) from calloc when it must
// be zero (large blocks come straight from mmap, so zero filling costs
// nothing until a page is touched) and from posix_memalign when it need not
// be, and GEMM through OpenBLAS's CBLAS interface (CpuCompute). Reuse of
// freed blocks happens a layer up, in Memory.cpp: the allocator is called
// only when the cache has no block of the size asked for. The backend runs
// no GPU kernels, and its blocks are the MPI collectives' (comm/mpi).
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "ThreadPool.h"

#include <cblas.h>

#include <dlfcn.h>
#include <strings.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace zero::runtime {
namespace {

/// OpenBLAS's CBLAS takes `blasint` (int in the LP64 build Debian ships).
/// Sizes beyond it are rejected rather than silently truncated.
void checkBlasRange(const GemmArgs &g) {
  const struct {
    const char *name;
    int64_t value;
  } fields[] = {{"m", g.m},     {"n", g.n},     {"k", g.k},
                {"lda", g.lda}, {"ldb", g.ldb}, {"ldc", g.ldc}};
  for (const auto &f : fields)
    if (f.value > static_cast<int64_t>(INT_MAX))
      throw Error(std::string(f.name) + " = " + std::to_string(f.value) +
                  " exceeds the range of OpenBLAS's 32-bit integer interface");
}

template <typename T>
void gemmOne(const GemmArgs &g, int64_t offA, int64_t offB, int64_t offC) {
  const T *a = static_cast<const T *>(g.a) + offA;
  const T *b = static_cast<const T *>(g.b) + offB;
  T *c = static_cast<T *>(g.c) + offC;
  auto m = static_cast<blasint>(g.m), n = static_cast<blasint>(g.n),
       k = static_cast<blasint>(g.k), lda = static_cast<blasint>(g.lda),
       ldb = static_cast<blasint>(g.ldb), ldc = static_cast<blasint>(g.ldc);
  CBLAS_TRANSPOSE ta = g.transA ? CblasTrans : CblasNoTrans,
                  tb = g.transB ? CblasTrans : CblasNoTrans;
  if constexpr (sizeof(T) == 4)
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb,
                static_cast<float>(g.beta), c, ldc);
  else
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, g.beta, c,
                ldc);
}

//===----------------------------------------------------------------------===//
// GEMMs on the runtime's threads
//===----------------------------------------------------------------------===//
//
// OpenBLAS runs single-threaded; a GEMM is split into blocks of rows or
// columns of C, each a single-threaded OpenBLAS call, that the pool's
// threads share. The blocks are a function of the GEMM's shape alone, never
// of the number of threads: each element of C is then computed by the same
// OpenBLAS call, with the same kernels and over k in the same order,
// whatever the number of threads, so results do not depend on it. (Splitting
// by the thread count did not guarantee that: OpenBLAS picks kernels by a
// call's size, and on AMD's Zen kernels a block of half the rows was summed
// in another order than the whole matrix.) Measured on this project's step
// shapes, the split reaches what OpenBLAS's own threads reach
// (docs/results.md), without a second set of threads.

/// A block has at least this many FLOPs: below it the split would cost
/// more than it saves.
constexpr int64_t kMinParallelFlops = int64_t(1) << 21;
/// At most this many blocks: enough for the pools of the machines this
/// runs on, few enough that each OpenBLAS call stays large.
constexpr int64_t kMaxBlocks = 16;
/// A block is at least this many rows or columns long: each OpenBLAS call
/// packs the whole other operand again, which shorter blocks pay for
/// (16 blocks of 48 columns made the gpt d256 step 15-20% slower than 2 of
/// 384 on 2 threads; blocks of 128 or more, 4-6%).
constexpr int64_t kMinBlockLength = 128;
/// Blocks of rows or columns are multiples of this (the register blocking
/// of OpenBLAS's x86-64 kernels divides it), so only the last block has
/// edge code.
constexpr int64_t kBlockAlign = 16;

/// Rows [m0, m1) (or, splitting columns, columns [n0, n1)) of C = op(A)op(B).
GemmArgs subGemm(const GemmArgs &g, int dtypeBytes, bool splitRows,
                 int64_t from, int64_t to) {
  GemmArgs sub = g;
  auto advance = [&](const void *p, int64_t elements) {
    return static_cast<const char *>(p) + elements * dtypeBytes;
  };
  if (splitRows) {
    sub.m = to - from;
    sub.a = advance(g.a, g.transA ? from : from * g.lda);
    sub.c = const_cast<char *>(advance(g.c, from * g.ldc));
  } else {
    sub.n = to - from;
    sub.b = advance(g.b, g.transB ? from * g.ldb : from);
    sub.c = const_cast<char *>(advance(g.c, from));
  }
  return sub;
}

/// How a GEMM of this shape is cut: the longer side of C, into `count`
/// blocks of `block` rows or columns (the last one shorter). The count is a
/// power of two, so that 2 or 4 threads get equal shares.
struct Blocks {
  bool splitRows;
  int64_t extent, block, count;

  explicit Blocks(const GemmArgs &g) {
    splitRows = g.m >= g.n;
    extent = splitRows ? g.m : g.n;
    int64_t byWork = 2 * g.m * g.n * g.k / kMinParallelFlops;
    int64_t most = std::min({kMaxBlocks, byWork, extent / kMinBlockLength});
    count = 1;
    while (count * 2 <= most)
      count *= 2;
    block = (extent + count - 1) / count;
    block = (block + kBlockAlign - 1) / kBlockAlign * kBlockAlign;
    count = (extent + block - 1) / block;
  }

  /// Block i of `g` (whose matrices start `offA`, `offB`, `offC` elements
  /// in).
  template <typename T>
  void run(const GemmArgs &g, int64_t i, int64_t offA = 0, int64_t offB = 0,
           int64_t offC = 0) const {
    GemmArgs one = g;
    one.a = static_cast<const T *>(g.a) + offA;
    one.b = static_cast<const T *>(g.b) + offB;
    one.c = static_cast<T *>(g.c) + offC;
    int64_t from = i * block, to = std::min(extent, from + block);
    if (from < to)
      gemmOne<T>(count == 1 ? one : subGemm(one, sizeof(T), splitRows, from, to),
                 0, 0, 0);
  }
};

template <typename T> struct SplitGemm {
  const GemmArgs *g;
  Blocks blocks;

  static void chunk(void *self, int64_t i) {
    auto *s = static_cast<SplitGemm *>(self);
    s->blocks.template run<T>(*s->g, i);
  }
};

/// One GEMM on the pool's threads.
template <typename T> void gemmParallel(const GemmArgs &g) {
  SplitGemm<T> split{&g, Blocks(g)};
  if (split.blocks.count == 1 || ThreadPool::get().threads() <= 1) {
    for (int64_t i = 0; i < split.blocks.count; ++i)
      split.blocks.template run<T>(g, i);
    return;
  }
  ThreadPool::get().run(split.blocks.count, &SplitGemm<T>::chunk, &split);
}

template <typename T> struct BatchChunks {
  const BatchedGemmArgs *b;
  Blocks blocks;
  int64_t perChunk;

  static void chunk(void *self, int64_t i) {
    auto *s = static_cast<BatchChunks *>(self);
    const BatchedGemmArgs &b = *s->b;
    int64_t end = std::min(b.batch, (i + 1) * s->perChunk);
    for (int64_t j = i * s->perChunk; j < end; ++j)
      for (int64_t k = 0; k < s->blocks.count; ++k)
        s->blocks.template run<T>(b.first, k, j * b.strideA, j * b.strideB,
                         j * b.strideC);
  }
};

/// A batched GEMM: whole matrices per thread when there are at least as
/// many as threads, otherwise each matrix on all of them; either way each
/// matrix in the blocks its shape gives.
template <typename T> void gemmBatchedParallel(const BatchedGemmArgs &b) {
  ThreadPool &pool = ThreadPool::get();
  int64_t threads = pool.threads();
  const GemmArgs &g = b.first;
  if (threads > 1 && b.batch >= threads &&
      2 * g.m * g.n * g.k * b.batch >= kMinParallelFlops) {
    int64_t perChunk = (b.batch + threads - 1) / threads;
    BatchChunks<T> chunks{&b, Blocks(g), perChunk};
    pool.run((b.batch + perChunk - 1) / perChunk, &BatchChunks<T>::chunk,
             &chunks);
    return;
  }
  for (int64_t j = 0; j < b.batch; ++j) {
    GemmArgs one = g;
    one.a = static_cast<const T *>(g.a) + j * b.strideA;
    one.b = static_cast<const T *>(g.b) + j * b.strideB;
    one.c = static_cast<T *>(g.c) + j * b.strideC;
    gemmParallel<T>(one);
  }
}

//===----------------------------------------------------------------------===//
// GEMM kernel choice
//===----------------------------------------------------------------------===//
//
// OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernels by CPU model
// when it is loaded, and a model it does not know (a newer Xeon under KVM,
// say) gets the generic SSE kernels: 3-5x slower than what the CPU can
// run. The runtime therefore picks by instruction sets instead, the most
// capable of OpenBLAS's x86-64 kernel sets that the CPU and the OS support,
// when that is more capable than OpenBLAS's own pick, and checks the result
// on a GEMM with an exact answer. The switch goes through OpenBLAS's
// exported gotoblas_dynamic_quit/gotoblas_dynamic_init, which re-read
// OPENBLAS_CORETYPE; they are looked up at run time, so a BLAS without them
// just keeps its own kernels (and says so).

/// OpenBLAS's x86-64 kernel sets by capability: the instruction sets each
/// needs, and a rank (a higher rank runs wider vectors).
struct KernelSet {
  const char *name;
  int rank;
  bool (*supported)();
};

bool hasAvx() { return __builtin_cpu_supports("avx"); }
bool hasAvx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
bool hasAvxFma() {
  return __builtin_cpu_supports("avx") && __builtin_cpu_supports("fma");
}
bool hasAvx512() {
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq") && hasAvx2();
}
bool hasAvx512Bf16() {
  return hasAvx512() && __builtin_cpu_supports("avx512bf16");
}

// libgcc's __builtin_cpu_supports reports AVX and AVX-512 only where the OS
// saves their registers (XGETBV), so a kernel set listed as supported runs.
const KernelSet kKernelSets[] = {
    {"Cooperlake", 4, hasAvx512Bf16}, {"SkylakeX", 3, hasAvx512},
    {"Haswell", 2, hasAvx2},          {"Zen", 2, hasAvx2},
    {"Sandybridge", 1, hasAvx},       {"Bulldozer", 1, hasAvx},
    {"Piledriver", 1, hasAvxFma},     {"Steamroller", 1, hasAvxFma},
    {"Excavator", 1, hasAvx2},
};

const KernelSet *findKernelSet(const std::string &name) {
  for (const KernelSet &k : kKernelSets)
    if (strcasecmp(k.name, name.c_str()) == 0)
      return &k;
  return nullptr;
}

/// The most capable kernel set this CPU runs, or null (SSE only).
const KernelSet *bestKernelSet() {
  for (const KernelSet &k : kKernelSets)
    if (k.supported())
      return &k;
  return nullptr;
}

std::string currentKernel() {
  const char *name = openblas_get_corename();
  return name ? name : "unknown";
}

/// Switches OpenBLAS to the kernels `name`; false if this OpenBLAS cannot
/// switch (no DYNAMIC_ARCH entry points) or did not take the name.
bool switchKernels(const std::string &name) {
  using Fn = void (*)();
  auto quit = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit"));
  auto init = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init"));
  if (!quit || !init)
    return false;
  // OpenBLAS's worker threads, started when it loaded, must not run while
  // its kernel table is replaced: a switch beside them crashed in
  // gotoblas_dynamic_init about once in forty runs of zrt_init
  // (RuntimeDeviceCollectives.StallWorldOfOneHook). Shut down, the pool
  // starts again at the next threaded call, as after OpenBLAS's own
  // blas_shutdown.
  using ShutdownFn = int (*)();
  if (auto shutdown = reinterpret_cast<ShutdownFn>(
          dlsym(RTLD_DEFAULT, "blas_thread_shutdown_")))
    shutdown();
  const char *old = std::getenv("OPENBLAS_CORETYPE");
  std::string saved = old ? old : "";
  setenv("OPENBLAS_CORETYPE", name.c_str(), 1);
  quit();
  init();
  if (old)
    setenv("OPENBLAS_CORETYPE", saved.c_str(), 1);
  else
    unsetenv("OPENBLAS_CORETYPE");
  return strcasecmp(currentKernel().c_str(), name.c_str()) == 0;
}

/// A GEMM whose exact answer is known (small integers: every partial sum
/// is exact in float, whatever order the kernel sums in), through the
/// kernels now in use; odd sizes exercise the edge code.
bool kernelsComputeCorrectly() {
  const int m = 37, n = 29, k = 41;
  std::vector<float> a(m * k), b(k * n), c(m * n, 1.0f), want(m * n, 1.0f);
  for (int i = 0; i < m * k; ++i)
    a[i] = float((i * 7) % 5 - 2);
  for (int i = 0; i < k * n; ++i)
    b[i] = float((i * 3) % 7 - 3);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p)
        want[i * n + j] += a[i * k + p] * b[p * n + j];
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
              a.data(), k, b.data(), n, 1.0f, c.data(), n);
  return c == want;
}

GemmKernelInfo chooseKernels() {
  GemmKernelInfo info;
  const char *config = openblas_get_config();
  info.library = config ? config : "OpenBLAS";
  info.detected = info.kernel = currentKernel();
  info.chosenBy = "blas";

  const char *forced = std::getenv("ZERO_BLAS_KERNEL");
  std::string request = forced && *forced ? forced : "auto";
  const KernelSet *target = nullptr;
  if (request == "blas") {
    return info;
  } else if (request == "auto") {
    // A user's OPENBLAS_CORETYPE was applied when OpenBLAS loaded; an
    // explicit ZERO_BLAS_KERNEL=auto overrides it.
    if (!forced && std::getenv("OPENBLAS_CORETYPE")) {
      info.chosenBy = "OPENBLAS_CORETYPE";
      return info;
    }
    target = bestKernelSet();
    const KernelSet *detected = findKernelSet(info.detected);
    if (!target || (detected && detected->rank >= target->rank))
      return info;
  } else {
    target = findKernelSet(request);
    if (!target) {
      std::string known;
      for (const KernelSet &k : kKernelSets)
        known += std::string(known.empty() ? "" : ", ") + k.name;
      throw Error("ZERO_BLAS_KERNEL=" + request +
                  " names no kernel set (auto, blas, " + known + ")");
    }
    if (!target->supported())
      throw Error("ZERO_BLAS_KERNEL=" + request +
                  ": this CPU lacks the instruction sets those kernels use");
  }
  if (!switchKernels(target->name) || !kernelsComputeCorrectly()) {
    // Back to what OpenBLAS chose, which is what ran before.
    switchKernels(info.detected);
    info.kernel = currentKernel();
    info.chosenBy = "blas (switching to " + std::string(target->name) +
                    " kernels failed)";
    return info;
  }
  info.kernel = currentKernel();
  info.chosenBy = request == "auto" ? "cpu-features" : "ZERO_BLAS_KERNEL";
  return info;
}

/// Host memory: from calloc when it must be zero, from posix_memalign when
/// it need not be. The CPU backend's blocks in both memory spaces.
class HostMemory final : public Allocator {
public:
  Block allocate(std::size_t bytes, std::size_t alignment,
                 bool zeroed) override {
    if (!zeroed) {
      void *base = nullptr;
      if (posix_memalign(&base, alignment, bytes) != 0)
        throw std::bad_alloc();
      return Block{base, base};
    }
    // calloc aligns to alignof(max_align_t) only; over-allocate by
    // `alignment` and round the pointer up.
    if (bytes > SIZE_MAX - alignment)
      throw std::bad_alloc();
    void *base = std::calloc(1, bytes + alignment);
    if (!base)
      throw std::bad_alloc();
    auto address = reinterpret_cast<std::uintptr_t>(base);
    address = (address + alignment - 1) & ~(std::uintptr_t(alignment) - 1);
    return Block{reinterpret_cast<void *>(address), base};
  }

  void fillZero(void *ptr, std::size_t bytes) override {
    std::memset(ptr, 0, bytes);
  }

  void deallocate(const Block &block) noexcept override {
    std::free(block.handle);
  }
};

/// OpenBLAS on the runtime's threads, on host memory: every copy is a
/// memcpy, done when it returns.
class CpuCompute final : public Compute {
public:
  void configure(int numThreads) override {
    if (!kernelChosen) {
      kernel = chooseKernels();
      kernelChosen = true;
      // OpenBLAS's own count (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS or one
      // per core) until told otherwise.
      if (numThreads <= 0)
        numThreads = openblas_get_num_threads();
    }
    if (numThreads > 0)
      ThreadPool::get().resize(numThreads);
    // Every GEMM is split over the pool: OpenBLAS's threads never start.
    openblas_set_num_threads(1);
  }

  GemmKernelInfo gemmKernel() const override { return kernel; }

  void gemm(DType dtype, const GemmArgs &args) override {
    checkBlasRange(args);
    if (dtype == DType::F32)
      gemmParallel<float>(args);
    else
      gemmParallel<double>(args);
  }

  // OpenBLAS 0.3.21 (Debian 12) exports no batched GEMM (cblas_?gemm_batch
  // arrived in later releases): the batch is spread over the pool's
  // threads, one single-threaded GEMM per matrix.
  void gemmBatched(DType dtype, const BatchedGemmArgs &args) override {
    checkBlasRange(args.first);
    if (dtype == DType::F32)
      gemmBatchedParallel<float>(args);
    else
      gemmBatchedParallel<double>(args);
  }

  void copyToHost(void *dst, const void *src, std::size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }

  void copyFromHost(void *dst, const void *src, std::size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }

  void copy(void *dst, const void *src, std::size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }

  int64_t copyStart(void *dst, const void *src, std::size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return 0;
  }

  void copyWait(int64_t) override {}

private:
  bool kernelChosen = false;
  GemmKernelInfo kernel;
};

} // namespace

Backend &cpuBackend() {
  // Leaked on purpose: blocks must stay releasable during static
  // destruction. No kernels, and the MPI collectives take its blocks.
  static Allocator *memory = new HostMemory();
  static Backend *backend =
      new Backend{"cpu", *new CpuCompute(), *memory, *memory};
  return *backend;
}

} // namespace zero::runtime
