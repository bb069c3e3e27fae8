//===- CpuBackend.cpp - OpenBLAS backend of zero-runtime ------------------===//
//
// Host memory from calloc when it must be zero (large blocks come straight
// from mmap, so zero filling costs nothing until a page is touched) and from
// posix_memalign when it need not be, and GEMM through OpenBLAS's CBLAS
// interface. Reuse of freed blocks happens a layer up, in Runtime.cpp: this
// backend is called only when the cache has no block of the size asked for.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include <cblas.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

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

class CpuBackend final : public Backend {
public:
  const char *name() const override { return "cpu"; }

  void configure(int numThreads) override {
    if (numThreads > 0)
      openblas_set_num_threads(numThreads);
  }

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

  void gemm(DType dtype, const GemmArgs &args) override {
    checkBlasRange(args);
    if (dtype == DType::F32)
      gemmOne<float>(args, 0, 0, 0);
    else
      gemmOne<double>(args, 0, 0, 0);
  }

  // A loop of single GEMMs: OpenBLAS 0.3.21 (Debian 12) exports no batched
  // GEMM (cblas_?gemm_batch arrived in later releases), and each call already
  // spreads its M x N tiles over OpenBLAS's threads. The batched GEMMs of a
  // transformer step (attention scores and values, one per batch and head)
  // are small, so the price is one dispatch per matrix; if profiles show it,
  // the fix is to parallelize across the batch with one BLAS thread per
  // matrix, behind this same function.
  void gemmBatched(DType dtype, const BatchedGemmArgs &args) override {
    checkBlasRange(args.first);
    for (int64_t i = 0; i < args.batch; ++i) {
      if (dtype == DType::F32)
        gemmOne<float>(args.first, i * args.strideA, i * args.strideB,
                       i * args.strideC);
      else
        gemmOne<double>(args.first, i * args.strideA, i * args.strideB,
                        i * args.strideC);
    }
  }
};

} // namespace

Backend &cpuBackend() {
  // Leaked on purpose: blocks must stay releasable during static destruction.
  static Backend *backend = new CpuBackend();
  return *backend;
}

} // namespace zero::runtime
