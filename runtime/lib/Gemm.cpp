//===- Gemm.cpp - GEMMs of the C ABI --------------------------------------===//
//
// The zrt_gemm_* entry points: their arguments checked (leading dimensions,
// strides, overlapping C matrices) before the backend runs them, the bf16
// forms on backends without a bf16 GEMM of their own (widened into f32
// temporaries), and the GEMM statistics (totals, per shape, timing).
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include "BFloat16.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

using namespace zero::runtime;

std::atomic<bool> zero::runtime::syncTiming{false};

void zero::runtime::checkNonNegative(const char *name, int64_t value) {
  if (value < 0)
    throw Error(format("%s = %lld is negative", name, (long long)value));
}

void zero::runtime::checkNotNull(const char *name, const void *ptr) {
  if (!ptr)
    throw Error(format("%s is NULL", name));
}

namespace {

struct ShapeKey {
  int32_t dtypeBytes;
  int64_t batch, m, n, k;
  bool operator==(const ShapeKey &o) const {
    return dtypeBytes == o.dtypeBytes && batch == o.batch && m == o.m &&
           n == o.n && k == o.k;
  }
};

struct ShapeKeyHash {
  std::size_t operator()(const ShapeKey &key) const {
    std::size_t h = std::hash<int64_t>()(key.dtypeBytes);
    for (int64_t v : {key.batch, key.m, key.n, key.k})
      h = h * 1000003u ^ std::hash<int64_t>()(v);
    return h;
  }
};

class GemmCounters {
public:
  void record(const ShapeKey &key, double seconds) {
    std::lock_guard<std::mutex> lock(mutex);
    ++totals.calls;
    totals.flops += 2 * uint64_t(key.m) * uint64_t(key.n) * uint64_t(key.k) *
                    uint64_t(key.batch);
    totals.seconds += seconds;
    auto [it, inserted] = index.try_emplace(key, shapes.size());
    if (inserted) {
      try {
        shapes.push_back(zrt_gemm_shape{key.dtypeBytes, key.batch, key.m, key.n,
                                        key.k, 0, 0.0});
      } catch (...) {
        index.erase(it);
        throw;
      }
    }
    zrt_gemm_shape &entry = shapes[it->second];
    ++entry.calls;
    entry.seconds += seconds;
  }

  zrt_gemm_stats get() {
    std::lock_guard<std::mutex> lock(mutex);
    return totals;
  }

  std::size_t shapeCount() {
    std::lock_guard<std::mutex> lock(mutex);
    return shapes.size();
  }

  bool shape(std::size_t i, zrt_gemm_shape &out) {
    std::lock_guard<std::mutex> lock(mutex);
    if (i >= shapes.size())
      return false;
    out = shapes[i];
    return true;
  }

  void reset() {
    std::lock_guard<std::mutex> lock(mutex);
    totals = zrt_gemm_stats{0, 0, 0.0};
    shapes.clear();
    index.clear();
  }

private:
  std::mutex mutex;
  zrt_gemm_stats totals = {0, 0, 0.0};
  std::vector<zrt_gemm_shape> shapes;
  std::unordered_map<ShapeKey, std::size_t, ShapeKeyHash> index;
};

GemmCounters &gemmCounters() {
  static GemmCounters *instance = new GemmCounters();
  return *instance;
}

/// Checks that a row-major matrix with rows of `cols` elements can have row
/// stride `ld` (BLAS requires ld >= max(1, cols)).
void checkLeadingDim(const char *ld, int64_t value, const char *matrix,
                     const char *colsName, int64_t cols) {
  if (value < std::max<int64_t>(1, cols))
    throw Error(format("%s = %lld is less than max(1, %s) = %lld: the rows of "
                       "%s would overlap",
                       ld, (long long)value, colsName,
                       (long long)std::max<int64_t>(1, cols), matrix));
}

/// The C matrices of a batch must not overlap: matrix i + 1 starts at or
/// after the end of the last row of matrix i.
void checkDisjointC(const GemmCall &g) {
  if (g.batch <= 1)
    return;
  // (m - 1) * ldc + n, computed without overflow.
  __int128 extent = (__int128)(g.m - 1) * g.ldc + g.n;
  if ((__int128)g.strideC < extent)
    throw Error(format("stride_c = %lld is less than (m - 1) * ldc + n = "
                       "%lld: the C matrices of the batch would overlap",
                       (long long)g.strideC,
                       (long long)std::min<__int128>(extent, INT64_MAX)));
}

template <typename T> void scaleC(const GemmCall &g) {
  const T beta = static_cast<T>(g.beta);
  if (beta == T(1))
    return;
  for (int64_t i = 0; i < g.batch; ++i) {
    T *c = static_cast<T *>(g.c) + i * g.strideC;
    for (int64_t r = 0; r < g.m; ++r) {
      T *row = c + r * g.ldc;
      if (beta == T(0))
        std::fill(row, row + g.n, T(0));
      else
        for (int64_t j = 0; j < g.n; ++j)
          row[j] *= beta;
    }
  }
}

void gemm(DType dtype, GemmCall g, bool batched) {
  if (batched)
    checkNonNegative("batch", g.batch);
  checkNonNegative("m", g.m);
  checkNonNegative("n", g.n);
  checkNonNegative("k", g.k);
  const bool sync = syncTiming.load(std::memory_order_relaxed);
  if (sync)
    backend().compute.synchronize();
  auto start = std::chrono::steady_clock::now();
  ShapeKey key{dtypeBytes(dtype), g.batch, g.m, g.n, g.k};

  if (g.batch > 0 && g.m > 0 && g.n > 0) {
    if (g.batch <= 1)
      g.strideA = g.strideB = g.strideC = 0;
    // Rows and columns of A and B as stored (transposed operands are
    // stored k x m and n x k).
    int64_t aRows = g.transA ? g.k : g.m, aCols = g.transA ? g.m : g.k;
    int64_t bRows = g.transB ? g.n : g.k, bCols = g.transB ? g.k : g.n;
    // A matrix with one row never uses its leading dimension.
    if (aRows == 1)
      g.lda = std::max(g.lda, aCols);
    if (g.m == 1)
      g.ldc = std::max(g.ldc, g.n);
    if (bRows == 1)
      g.ldb = std::max(g.ldb, bCols);

    checkLeadingDim("ldc", g.ldc, "C", "n", g.n);
    checkNotNull("c", g.c);
    if (g.batch > 1) {
      checkNonNegative("stride_c", g.strideC);
      checkDisjointC(g);
    }
    if (g.k == 0) {
      // linalg semantics with an empty reduction: C = beta * C, computed
      // here on the host.
      if (!backend().deviceMemory.hostAccessible())
        throw Error(format("k = 0 (an empty reduction) is not supported on "
                           "the \"%s\" backend, whose memory the host cannot "
                           "scale",
                           backend().name));
      if (dtype == DType::F32)
        scaleC<float>(g);
      else
        scaleC<double>(g);
    } else {
      checkLeadingDim("lda", g.lda, "A", g.transA ? "m" : "k", aCols);
      checkLeadingDim("ldb", g.ldb, "B", g.transB ? "k" : "n", bCols);
      checkNotNull("a", g.a);
      checkNotNull("b", g.b);
      GemmArgs args{g.transA, g.transB, g.m,   g.n,    g.k,   g.a,
                    g.lda,    g.b,      g.ldb, g.beta, g.c,   g.ldc,
                    g.bf16C};
      if (g.batch == 1) {
        backend().compute.gemm(dtype, args);
      } else {
        checkNonNegative("stride_a", g.strideA);
        checkNonNegative("stride_b", g.strideB);
        backend().compute.gemmBatched(
            dtype,
            BatchedGemmArgs{g.batch, args, g.strideA, g.strideB, g.strideC});
      }
    }
  }

  if (sync)
    backend().compute.synchronize();
  auto end = std::chrono::steady_clock::now();
  std::chrono::duration<double> elapsed = end - start;
  gemmCounters().record(key, elapsed.count());
  tracer().record(ZRT_TRACE_GEMM, ZRT_NUM_COLLECTIVES, start, end, 0, &g);
}

/// A GEMM of bf16 A and B into f32 C (what a mixed-precision matmul
/// accumulates in). Debian's OpenBLAS is built without its bf16 routine
/// (cblas_sbgemm), so A and B are widened, exactly, into f32 copies (runtime
/// temporaries counted to ZRT_ACTIVATIONS, freed before returning) and
/// multiplied by the f32 GEMM. A stride of 0 (one matrix for the whole
/// batch) widens that one matrix once.
void gemmBF16(GemmCall g, bool batched) {
  // Nothing of A and B is read (or only sizes are invalid): the f32 path's
  // checks and semantics apply unchanged.
  if (g.batch <= 0 || g.m <= 0 || g.n <= 0 || g.k <= 0 || g.strideA < 0 ||
      g.strideB < 0)
    return gemm(DType::F32, g, batched);
  // A backend with a bf16 GEMM of its own (cuBLASLt) reads A and B as
  // they are.
  if (backend().compute.nativeBf16Gemm())
    return gemm(DType::BF16, g, batched);
  if (g.batch <= 1)
    g.strideA = g.strideB = 0;
  struct Widened {
    void *data = nullptr;
    ~Widened() {
      if (data)
        freeBlock(data);
    }
  } wa, wb;
  // Rows x cols as stored, `ld` apart; returns the f32 copy, rows packed.
  auto widen = [&](Widened &to, const char *name, const void *from,
                   int64_t &stride, int64_t &ld, int64_t rows, int64_t cols,
                   const char *ldName, const char *dim) {
    checkNotNull(name, from);
    if (rows == 1)
      ld = std::max(ld, cols);
    checkLeadingDim(ldName, ld, name[0] == 'a' ? "A" : "B", dim, cols);
    int64_t count = stride == 0 ? 1 : g.batch;
    to.data = allocateBlock(static_cast<std::size_t>(count * rows * cols) *
                                sizeof(float),
                            kMinAlignment, ZRT_ACTIVATIONS, /*zeroed=*/false);
    auto *src = static_cast<const uint16_t *>(from);
    auto *dst = static_cast<float *>(to.data);
    for (int64_t i = 0; i < count; ++i)
      for (int64_t r = 0; r < rows; ++r) {
        const uint16_t *row = src + i * stride + r * ld;
        float *out = dst + (i * rows + r) * cols;
        for (int64_t c = 0; c < cols; ++c)
          out[c] = bf16ToFloat(row[c]);
      }
    ld = cols;
    if (stride != 0)
      stride = rows * cols;
    return to.data;
  };
  int64_t aRows = g.transA ? g.k : g.m, aCols = g.transA ? g.m : g.k;
  int64_t bRows = g.transB ? g.n : g.k, bCols = g.transB ? g.k : g.n;
  g.a = widen(wa, "a", g.a, g.strideA, g.lda, aRows, aCols, "lda",
              g.transA ? "m" : "k");
  g.b = widen(wb, "b", g.b, g.strideB, g.ldb, bRows, bCols, "ldb",
              g.transB ? "k" : "n");
  gemm(DType::F32, g, batched);
}

/// A GEMM of bf16 A and B into bf16 C, accumulated in f32 and rounded once
/// (zrt_gemm_bf16_bf16). A backend with a native bf16 GEMM writes C as it
/// is; otherwise the f32 result goes to a temporary (C widened into it
/// first unless beta is 0), which is rounded into C: the same bits as an
/// f32 C followed by arith.truncf.
void gemmBF16Result(GemmCall g, bool batched) {
  if (g.batch <= 0 || g.m <= 0 || g.n <= 0) {
    g.bf16C = true;
    return gemm(DType::BF16, g, batched);
  }
  if (backend().compute.nativeBf16Gemm()) {
    g.bf16C = true;
    return gemm(DType::BF16, g, batched);
  }
  if (batched)
    checkNonNegative("batch", g.batch);
  if (g.batch <= 1)
    g.strideC = 0;
  if (g.m == 1)
    g.ldc = std::max(g.ldc, g.n);
  checkLeadingDim("ldc", g.ldc, "C", "n", g.n);
  checkNotNull("c", g.c);
  if (g.batch > 1) {
    checkNonNegative("stride_c", g.strideC);
    checkDisjointC(g);
  }
  struct Temporary {
    void *data = nullptr;
    ~Temporary() {
      if (data)
        freeBlock(data);
    }
  } wide;
  std::size_t count = static_cast<std::size_t>(g.batch * g.m * g.n);
  wide.data = allocateBlock(count * sizeof(float), kMinAlignment,
                            ZRT_ACTIVATIONS, /*zeroed=*/false);
  auto *c = static_cast<uint16_t *>(g.c);
  auto *f = static_cast<float *>(wide.data);
  auto forEach = [&](auto &&fn) {
    for (int64_t i = 0; i < g.batch; ++i)
      for (int64_t r = 0; r < g.m; ++r)
        for (int64_t j = 0; j < g.n; ++j)
          fn(c[i * g.strideC + r * g.ldc + j], f[(i * g.m + r) * g.n + j]);
  };
  if (g.beta != 0)
    forEach([](uint16_t &bits, float &x) { x = bf16ToFloat(bits); });
  GemmCall wideCall = g;
  wideCall.c = wide.data;
  wideCall.ldc = g.n;
  wideCall.strideC = g.m * g.n;
  gemmBF16(wideCall, batched);
  forEach([](uint16_t &bits, float &x) { bits = floatToBF16(x); });
}

/// What an entry point runs: the element types of A and B, then of C.
enum class GemmKind { F32, F64, BF16ToF32, BF16ToBF16 };

/// One GEMM entry point's work: `g` run as `kind`; an error goes to the
/// fatal handler under the entry point's name.
void runEntry(const char *entry, GemmKind kind, const GemmCall &g,
              bool batched) {
  if (!guarded(entry, [&] {
        switch (kind) {
        case GemmKind::F32:
          return gemm(DType::F32, g, batched);
        case GemmKind::F64:
          return gemm(DType::F64, g, batched);
        case GemmKind::BF16ToF32:
          return gemmBF16(g, batched);
        case GemmKind::BF16ToBF16:
          return gemmBF16Result(g, batched);
        }
      }))
    reportFatal();
}

/// An unbatched entry point: a batch of one matrix, no strides.
void runSingle(const char *entry, GemmKind kind, int32_t transA, int32_t transB,
               int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
               const void *b, int64_t ldb, double beta, void *c, int64_t ldc) {
  runEntry(entry, kind,
           GemmCall{transA != 0, transB != 0, 1, m, n, k, a, 0, lda, b, 0, ldb,
                    beta, c, 0, ldc},
           /*batched=*/false);
}

/// A batched entry point, as runtime_compute.h orders its arguments.
void runBatched(const char *entry, GemmKind kind, int32_t transA,
                int32_t transB, int64_t batch, int64_t m, int64_t n, int64_t k,
                const void *a, int64_t strideA, int64_t lda, const void *b,
                int64_t strideB, int64_t ldb, double beta, void *c,
                int64_t strideC, int64_t ldc) {
  runEntry(entry, kind,
           GemmCall{transA != 0, transB != 0, batch, m, n, k, a, strideA, lda,
                    b, strideB, ldb, beta, c, strideC, ldc},
           /*batched=*/true);
}

} // namespace

//===----------------------------------------------------------------------===//
// C ABI
//===----------------------------------------------------------------------===//

extern "C" {

void zrt_gemm_f32(int32_t trans_a, int32_t trans_b, int64_t m, int64_t n,
                  int64_t k, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float beta, float *c, int64_t ldc) {
  runSingle("zrt_gemm_f32", GemmKind::F32, trans_a, trans_b, m, n, k, a, lda, b,
            ldb, beta, c, ldc);
}

void zrt_gemm_f64(int32_t trans_a, int32_t trans_b, int64_t m, int64_t n,
                  int64_t k, const double *a, int64_t lda, const double *b,
                  int64_t ldb, double beta, double *c, int64_t ldc) {
  runSingle("zrt_gemm_f64", GemmKind::F64, trans_a, trans_b, m, n, k, a, lda, b,
            ldb, beta, c, ldc);
}

void zrt_gemm_bf16_f32(int32_t trans_a, int32_t trans_b, int64_t m, int64_t n,
                       int64_t k, const uint16_t *a, int64_t lda,
                       const uint16_t *b, int64_t ldb, float beta, float *c,
                       int64_t ldc) {
  runSingle("zrt_gemm_bf16_f32", GemmKind::BF16ToF32, trans_a, trans_b, m, n, k,
            a, lda, b, ldb, beta, c, ldc);
}

void zrt_gemm_bf16_bf16(int32_t trans_a, int32_t trans_b, int64_t m, int64_t n,
                        int64_t k, const uint16_t *a, int64_t lda,
                        const uint16_t *b, int64_t ldb, float beta, uint16_t *c,
                        int64_t ldc) {
  runSingle("zrt_gemm_bf16_bf16", GemmKind::BF16ToBF16, trans_a, trans_b, m, n,
            k, a, lda, b, ldb, beta, c, ldc);
}

void zrt_gemm_batched_f32(int32_t trans_a, int32_t trans_b, int64_t batch,
                          int64_t m, int64_t n, int64_t k, const float *a,
                          int64_t stride_a, int64_t lda, const float *b,
                          int64_t stride_b, int64_t ldb, float beta, float *c,
                          int64_t stride_c, int64_t ldc) {
  runBatched("zrt_gemm_batched_f32", GemmKind::F32, trans_a, trans_b, batch, m,
             n, k, a, stride_a, lda, b, stride_b, ldb, beta, c, stride_c, ldc);
}

void zrt_gemm_batched_f64(int32_t trans_a, int32_t trans_b, int64_t batch,
                          int64_t m, int64_t n, int64_t k, const double *a,
                          int64_t stride_a, int64_t lda, const double *b,
                          int64_t stride_b, int64_t ldb, double beta, double *c,
                          int64_t stride_c, int64_t ldc) {
  runBatched("zrt_gemm_batched_f64", GemmKind::F64, trans_a, trans_b, batch, m,
             n, k, a, stride_a, lda, b, stride_b, ldb, beta, c, stride_c, ldc);
}

void zrt_gemm_batched_bf16_f32(int32_t trans_a, int32_t trans_b,
                               int64_t batch, int64_t m, int64_t n, int64_t k,
                               const uint16_t *a, int64_t stride_a,
                               int64_t lda, const uint16_t *b,
                               int64_t stride_b, int64_t ldb, float beta,
                               float *c, int64_t stride_c, int64_t ldc) {
  runBatched("zrt_gemm_batched_bf16_f32", GemmKind::BF16ToF32, trans_a, trans_b,
             batch, m, n, k, a, stride_a, lda, b, stride_b, ldb, beta, c,
             stride_c, ldc);
}

void zrt_gemm_batched_bf16_bf16(int32_t trans_a, int32_t trans_b,
                                int64_t batch, int64_t m, int64_t n,
                                int64_t k, const uint16_t *a,
                                int64_t stride_a, int64_t lda,
                                const uint16_t *b, int64_t stride_b,
                                int64_t ldb, float beta, uint16_t *c,
                                int64_t stride_c, int64_t ldc) {
  runBatched("zrt_gemm_batched_bf16_bf16", GemmKind::BF16ToBF16, trans_a,
             trans_b, batch, m, n, k, a, stride_a, lda, b, stride_b, ldb, beta,
             c, stride_c, ldc);
}

void zrt_get_gemm_stats(zrt_gemm_stats *out) {
  if (out &&
      !guarded("zrt_get_gemm_stats", [&] { *out = gemmCounters().get(); }))
    reportFatal();
}

size_t zrt_gemm_shape_count(void) {
  size_t count = 0;
  if (!guarded("zrt_gemm_shape_count",
               [&] { count = gemmCounters().shapeCount(); }))
    reportFatal();
  return count;
}

int zrt_get_gemm_shape(size_t index, zrt_gemm_shape *out) {
  bool ok = guarded("zrt_get_gemm_shape", [&] {
    if (!out)
      throw Error("out is NULL");
    if (!gemmCounters().shape(index, *out))
      throw Error(format("index %zu is out of range (%zu shapes)", index,
                         gemmCounters().shapeCount()));
  });
  return ok ? 0 : 1;
}

int zrt_get_gemm_backend(zrt_gemm_backend *out) {
  // The strings stay valid until the next call: one copy per process.
  static GemmKernelInfo info;
  static std::mutex mutex;
  return guarded("zrt_get_gemm_backend",
                 [&] {
                   if (!out)
                     throw Error("out is NULL");
                   std::lock_guard<std::mutex> lock(mutex);
                   info = backend().compute.gemmKernel();
                   *out = zrt_gemm_backend{info.library.c_str(),
                                           info.kernel.c_str(),
                                           info.detected.c_str(),
                                           info.chosenBy.c_str()};
                 })
             ? 0
             : 1;
}

void zrt_reset_gemm_stats(void) {
  if (!guarded("zrt_reset_gemm_stats", [&] {
        gemmCounters().reset();
        resetKernelProfile();
      }))
    reportFatal();
}

int zrt_set_sync_timing(int enable) {
  return syncTiming.exchange(enable != 0) ? 1 : 0;
}

} // extern "C"
