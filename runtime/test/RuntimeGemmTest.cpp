//===- RuntimeGemmTest.cpp - GEMM results, validation and counters --------===//
//
// Inputs are small integers, so every product and partial sum is exact in
// float and double whatever order OpenBLAS sums in: results are compared
// with a naive triple loop for equality, not within a tolerance.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"
#include "../lib/BFloat16.h"

#include <climits>
#include <cstring>
#include <cmath>
#include <limits>
#include <vector>

using namespace zero::runtime::test;

namespace {

using RuntimeGemm = RuntimeFixture;

constexpr double kSentinel = 12345.0; // fills padding; must survive

/// A row-major rows x cols matrix inside a buffer with row stride `ld`,
/// padding filled with kSentinel.
template <typename T> struct Matrix {
  int64_t rows, cols, ld;
  std::vector<T> data;

  Matrix(int64_t rows, int64_t cols, int64_t ld, int seed)
      : rows(rows), cols(cols), ld(ld),
        data(std::max<int64_t>(1, rows * ld), T(kSentinel)) {
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        at(i, j) = T(int((i * 7 + j * 3 + seed * 5) % 7) - 3); // in [-3, 3]
  }
  T &at(int64_t i, int64_t j) { return data[i * ld + j]; }
};

/// C = A*B + beta*C in double, the reference.
template <typename T>
std::vector<T> reference(Matrix<T> &a, Matrix<T> &b, double beta, Matrix<T> c) {
  for (int64_t i = 0; i < c.rows; ++i)
    for (int64_t j = 0; j < c.cols; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < a.cols; ++p)
        sum += double(a.at(i, p)) * double(b.at(p, j));
      double old = beta == 0 ? 0.0 : beta * double(c.at(i, j));
      c.at(i, j) = T(sum + old);
    }
  return c.data;
}

void gemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
          const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  zrt_gemm_f32(0, 0, m, n, k, a, lda, b, ldb, beta, c, ldc);
}
void gemm(int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
          const double *b, int64_t ldb, double beta, double *c, int64_t ldc) {
  zrt_gemm_f64(0, 0, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

struct Shape {
  int64_t m, n, k;
};

// Odd shapes, with and without padded leading dimensions, beta 0, 1 and
// others; checks every element, padding included.
template <typename T> void checkShapes() {
  const Shape shapes[] = {{1, 1, 1},     {3, 5, 7},   {17, 13, 11},
                          {64, 33, 129}, {5, 1, 9},   {1, 7, 3},
                          {2, 3, 1},     {31, 64, 2}, {96, 80, 72}};
  for (const Shape &s : shapes)
    for (int64_t pad : {0, 3})
      for (double beta : {0.0, 1.0, 0.5, -2.0}) {
        SCOPED_TRACE(testing::Message()
                     << "m=" << s.m << " n=" << s.n << " k=" << s.k
                     << " pad=" << pad << " beta=" << beta);
        Matrix<T> a(s.m, s.k, s.k + pad, 1), b(s.k, s.n, s.n + pad, 2),
            c(s.m, s.n, s.n + 2 * pad, 3);
        std::vector<T> expected = reference(a, b, beta, c);
        gemm(s.m, s.n, s.k, a.data.data(), a.ld, b.data.data(), b.ld, T(beta),
             c.data.data(), c.ld);
        ASSERT_EQ(c.data, expected);
      }
}

TEST_F(RuntimeGemm, F32MatchesNaiveLoop) { checkShapes<float>(); }
TEST_F(RuntimeGemm, F64MatchesNaiveLoop) { checkShapes<double>(); }

/// The transpose of `m`, stored with row stride `ld` (>= m.rows).
template <typename T> Matrix<T> transposed(Matrix<T> &m, int64_t ld) {
  Matrix<T> t(m.cols, m.rows, ld, 0);
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j)
      t.at(j, i) = m.at(i, j);
  return t;
}

// Transposed operands (A stored k x m, B stored n x k, as linalg.matmul
// with transposed indexing maps reads them) give exactly A*B, padded
// leading dimensions and single rows or columns included, and a leading
// dimension shorter than a stored row is refused with the stored width.
template <typename T> void checkTransposed() {
  const Shape shapes[] = {{1, 1, 1}, {3, 5, 7}, {17, 13, 11}, {1, 7, 3},
                          {5, 1, 9}, {2, 3, 1}, {64, 33, 129}};
  for (const Shape &s : shapes)
    for (int ta : {0, 1})
      for (int tb : {0, 1})
        for (int64_t pad : {0, 2}) {
          SCOPED_TRACE(testing::Message()
                       << "m=" << s.m << " n=" << s.n << " k=" << s.k
                       << " ta=" << ta << " tb=" << tb << " pad=" << pad);
          Matrix<T> a(s.m, s.k, s.k + pad, 1), b(s.k, s.n, s.n + pad, 2),
              c(s.m, s.n, s.n + pad, 3);
          std::vector<T> expected = reference(a, b, 1.0, c);
          Matrix<T> at = ta ? transposed(a, s.m + pad) : a;
          Matrix<T> bt = tb ? transposed(b, s.k + pad) : b;
          if constexpr (sizeof(T) == 4)
            zrt_gemm_f32(ta, tb, s.m, s.n, s.k, at.data.data(), at.ld,
                         bt.data.data(), bt.ld, 1.0f, c.data.data(), c.ld);
          else
            zrt_gemm_f64(ta, tb, s.m, s.n, s.k, at.data.data(), at.ld,
                         bt.data.data(), bt.ld, 1.0, c.data.data(), c.ld);
          ASSERT_EQ(c.data, expected);
        }
}

TEST_F(RuntimeGemm, TransposedF32) { checkTransposed<float>(); }
TEST_F(RuntimeGemm, TransposedF64) { checkTransposed<double>(); }

TEST_F(RuntimeGemm, TransposedBatched) {
  const int64_t batch = 3, m = 4, n = 5, k = 6;
  std::vector<float> c(batch * m * n, 0.0f), expected(batch * m * n, 0.0f);
  std::vector<float> a(batch * k * m), b(batch * n * k);
  for (int64_t i = 0; i < batch; ++i) {
    Matrix<float> ai(m, k, k, 1 + int(i)), bi(k, n, n, 4 + int(i)),
        ci(m, n, n, 0);
    std::fill(ci.data.begin(), ci.data.end(), 0.0f);
    std::vector<float> ei = reference(ai, bi, 1.0, ci);
    Matrix<float> at = transposed(ai, m), bt = transposed(bi, k);
    std::copy(at.data.begin(), at.data.end(), a.begin() + i * k * m);
    std::copy(bt.data.begin(), bt.data.end(), b.begin() + i * n * k);
    std::copy(ei.begin(), ei.end(), expected.begin() + i * m * n);
  }
  zrt_gemm_batched_f32(1, 1, batch, m, n, k, a.data(), k * m, m, b.data(),
                       n * k, k, 1.0f, c.data(), m * n, n);
  EXPECT_EQ(c, expected);
}

TEST_F(RuntimeGemm, TransposedLeadingDimensions) {
  float A[64] = {0}, B[64] = {0}, C[64] = {0};
  auto expectFatal = [&](auto call, const char *message) {
    EXPECT_EQ(fatalMessageOf(call), message);
  };
  // A transposed is stored k x m = 5 x 2: lda must be at least m = 2.
  expectFatal([&] { zrt_gemm_f32(1, 0, 2, 3, 5, A, 1, B, 3, 0, C, 3); },
              "zrt_gemm_f32: lda = 1 is less than max(1, m) = 2: the rows of "
              "A would overlap");
  // B transposed is stored n x k = 3 x 5: ldb must be at least k = 5.
  expectFatal([&] { zrt_gemm_f32(0, 1, 2, 3, 5, A, 5, B, 4, 0, C, 3); },
              "zrt_gemm_f32: ldb = 4 is less than max(1, k) = 5: the rows of "
              "B would overlap");
}

// Several threads give the same exact result.
TEST_F(RuntimeGemm, TwoThreadsMatchNaiveLoop) {
  ASSERT_EQ(zrt_init("cpu", 2), 0);
  Matrix<float> a(257, 300, 300, 1), b(300, 190, 191, 2), c(257, 190, 190, 3);
  std::vector<float> expected = reference(a, b, 1.0, c);
  zrt_gemm_f32(0, 0, 257, 190, 300, a.data.data(), a.ld, b.data.data(), b.ld, 1.0f,
               c.data.data(), c.ld);
  EXPECT_EQ(c.data, expected);
  ASSERT_EQ(zrt_init("cpu", 1), 0);
}

// GEMMs large enough to be split over the runtime's threads (by rows when
// C is taller, by columns when it is wider; whole matrices per thread for a
// batch at least as large as the pool, each matrix split otherwise) give
// the exact result for every transpose, padding and beta.
template <typename T> void checkSplit() {
  ASSERT_EQ(zrt_init("cpu", 3), 0);
  ASSERT_EQ(zrt_get_num_threads(), 3);
  const Shape shapes[] = {{130, 97, 90}, {40, 300, 100}, {33, 33, 1200}};
  for (const Shape &s : shapes)
    for (int ta : {0, 1})
      for (int tb : {0, 1})
        for (double beta : {0.0, 1.0, -2.0}) {
          SCOPED_TRACE(testing::Message() << "m=" << s.m << " n=" << s.n
                                          << " k=" << s.k << " ta=" << ta
                                          << " tb=" << tb << " beta=" << beta);
          Matrix<T> a(s.m, s.k, s.k + 1, 1), b(s.k, s.n, s.n + 2, 2),
              c(s.m, s.n, s.n + 3, 3);
          std::vector<T> expected = reference(a, b, beta, c);
          Matrix<T> at = ta ? transposed(a, s.m + 1) : a;
          Matrix<T> bt = tb ? transposed(b, s.k + 2) : b;
          if constexpr (sizeof(T) == 4)
            zrt_gemm_f32(ta, tb, s.m, s.n, s.k, at.data.data(), at.ld,
                         bt.data.data(), bt.ld, float(beta), c.data.data(),
                         c.ld);
          else
            zrt_gemm_f64(ta, tb, s.m, s.n, s.k, at.data.data(), at.ld,
                         bt.data.data(), bt.ld, beta, c.data.data(), c.ld);
          ASSERT_EQ(c.data, expected);
        }
  for (int64_t batch : {2, 4, 7}) {
    SCOPED_TRACE(testing::Message() << "batch=" << batch);
    const int64_t m = 100, n = 90, k = 120;
    std::vector<T> a(batch * m * k), b(batch * k * n), c(batch * m * n),
        expected(batch * m * n);
    for (int64_t i = 0; i < batch; ++i) {
      Matrix<T> ai(m, k, k, 1 + int(i)), bi(k, n, n, 3 + int(i)),
          ci(m, n, n, 5 + int(i));
      std::vector<T> ei = reference(ai, bi, 1.0, ci);
      std::copy(ai.data.begin(), ai.data.end(), a.begin() + i * m * k);
      std::copy(bi.data.begin(), bi.data.end(), b.begin() + i * k * n);
      std::copy(ci.data.begin(), ci.data.end(), c.begin() + i * m * n);
      std::copy(ei.begin(), ei.end(), expected.begin() + i * m * n);
    }
    if constexpr (sizeof(T) == 4)
      zrt_gemm_batched_f32(0, 0, batch, m, n, k, a.data(), m * k, k, b.data(),
                           k * n, n, 1.0f, c.data(), m * n, n);
    else
      zrt_gemm_batched_f64(0, 0, batch, m, n, k, a.data(), m * k, k, b.data(),
                           k * n, n, 1.0, c.data(), m * n, n);
    ASSERT_EQ(c, expected);
  }
  ASSERT_EQ(zrt_init("cpu", 1), 0);
}

TEST_F(RuntimeGemm, SplitOverThreadsF32) { checkSplit<float>(); }
TEST_F(RuntimeGemm, SplitOverThreadsF64) { checkSplit<double>(); }

// As in BLAS, beta = 0 overwrites C without reading it: NaN does not leak.
TEST_F(RuntimeGemm, BetaZeroIgnoresNaN) {
  Matrix<float> a(4, 5, 5, 1), b(5, 6, 6, 2), c(4, 6, 6, 3);
  std::vector<float> expected = reference(a, b, 0.0, c);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 6; ++j)
      c.at(i, j) = std::numeric_limits<float>::quiet_NaN();
  zrt_gemm_f32(0, 0, 4, 6, 5, a.data.data(), 5, b.data.data(), 6, 0.0f, c.data.data(),
               6);
  EXPECT_EQ(c.data, expected);
}

// batch_matmul with padded batch strides, and a batch stride of 0 for B
// (one weight matrix shared by the batch).
template <typename T> void checkBatched(bool shareB) {
  const int64_t batch = 5, m = 7, n = 9, k = 6, lda = 8, ldb = 11, ldc = 10;
  const int64_t strideA = m * lda + 4, strideB = shareB ? 0 : k * ldb + 1,
                strideC = m * ldc + 3;
  std::vector<Matrix<T>> as, bs, cs;
  std::vector<T> a(batch * strideA, T(kSentinel)),
      b(std::max<int64_t>(batch * strideB, k * ldb), T(kSentinel)),
      c(batch * strideC, T(kSentinel)), expected = c;
  for (int64_t i = 0; i < batch; ++i) {
    Matrix<T> ai(m, k, lda, 1 + int(i)), bi(k, n, ldb, shareB ? 2 : 7 + int(i)),
        ci(m, n, ldc, 3 + int(i));
    std::vector<T> ei = reference(ai, bi, 1.0, ci);
    std::copy(ai.data.begin(), ai.data.end(), a.begin() + i * strideA);
    if (!shareB || i == 0)
      std::copy(bi.data.begin(), bi.data.end(), b.begin() + i * strideB);
    std::copy(ci.data.begin(), ci.data.end(), c.begin() + i * strideC);
    std::copy(ei.begin(), ei.end(), expected.begin() + i * strideC);
  }
  if constexpr (sizeof(T) == 4)
    zrt_gemm_batched_f32(0, 0, batch, m, n, k, a.data(), strideA, lda, b.data(),
                         strideB, ldb, 1.0f, c.data(), strideC, ldc);
  else
    zrt_gemm_batched_f64(0, 0, batch, m, n, k, a.data(), strideA, lda, b.data(),
                         strideB, ldb, 1.0, c.data(), strideC, ldc);
  EXPECT_EQ(c, expected);
}

TEST_F(RuntimeGemm, BatchedF32) { checkBatched<float>(false); }
TEST_F(RuntimeGemm, BatchedF64) { checkBatched<double>(false); }
TEST_F(RuntimeGemm, BatchedSharedB) { checkBatched<float>(true); }

// k == 0: an empty reduction leaves C = beta * C; A and B are not read.
TEST_F(RuntimeGemm, EmptyReductionScalesByBeta) {
  std::vector<double> c = {1, 2, 3, kSentinel, 4, 5, 6, kSentinel};
  zrt_gemm_f64(0, 0, 2, 3, 0, nullptr, 0, nullptr, 0, 1.0, c.data(), 4);
  EXPECT_EQ(c, (std::vector<double>{1, 2, 3, kSentinel, 4, 5, 6, kSentinel}));
  zrt_gemm_f64(0, 0, 2, 3, 0, nullptr, 0, nullptr, 0, 2.0, c.data(), 4);
  EXPECT_EQ(c, (std::vector<double>{2, 4, 6, kSentinel, 8, 10, 12, kSentinel}));
  c[1] = std::nan("");
  zrt_gemm_f64(0, 0, 2, 3, 0, nullptr, 0, nullptr, 0, 0.0, c.data(), 4);
  EXPECT_EQ(c, (std::vector<double>{0, 0, 0, kSentinel, 0, 0, 0, kSentinel}));

  std::vector<float> cb = {1, 2, kSentinel, 3, 4, kSentinel};
  zrt_gemm_batched_f32(0, 0, 2, 1, 2, 0, nullptr, 0, 0, nullptr, 0, 0, 0.5f,
                       cb.data(), 3, 2);
  EXPECT_EQ(cb, (std::vector<float>{0.5, 1, kSentinel, 1.5, 2, kSentinel}));
}

// Empty outputs are no-ops, whatever the pointers.
TEST_F(RuntimeGemm, EmptyOutputIsNoOp) {
  zrt_gemm_f32(0, 0, 0, 5, 5, nullptr, 5, nullptr, 5, 0.0f, nullptr, 5);
  zrt_gemm_f32(0, 0, 5, 0, 5, nullptr, 5, nullptr, 0, 0.0f, nullptr, 0);
  zrt_gemm_batched_f64(0, 0, 0, 3, 3, 3, nullptr, 0, 3, nullptr, 0, 3, 0.0, nullptr,
                       0, 3);
  zrt_gemm_stats s = gemmStats();
  EXPECT_EQ(s.calls, 3u);
  EXPECT_EQ(s.flops, 0u);
}

// A single-row matrix may have any leading dimension (memref strides of
// unit dimensions are arbitrary), and batch 1 ignores batch strides.
TEST_F(RuntimeGemm, SingleRowAnyLeadingDimension) {
  Matrix<float> a(1, 4, 4, 1), b(4, 3, 3, 2), c(1, 3, 3, 3);
  std::vector<float> expected = reference(a, b, 1.0, c);
  zrt_gemm_batched_f32(0, 0, 1, 1, 3, 4, a.data.data(), -7, 1, b.data.data(), -1, 3,
                       1.0f, c.data.data(), 0, 0);
  EXPECT_EQ(c.data, expected);
}

// Invalid arguments reach the fatal handler with a message naming the
// argument; C is untouched and nothing is counted.
TEST_F(RuntimeGemm, InvalidArgumentsAreFatal) {
  std::vector<float> a(64, 1), b(64, 1), c(64, kSentinel);
  const std::vector<float> c0 = c;
  float *A = a.data(), *B = b.data(), *C = c.data();
  auto expectFatal = [&](auto call, const char *message) {
    EXPECT_EQ(fatalMessageOf(call), message);
    EXPECT_EQ(c, c0);
  };
  expectFatal([&] { zrt_gemm_f32(0, 0, -1, 2, 2, A, 2, B, 2, 0, C, 2); },
              "zrt_gemm_f32: m = -1 is negative");
  expectFatal([&] { zrt_gemm_f32(0, 0, 2, -2, 2, A, 2, B, 2, 0, C, 2); },
              "zrt_gemm_f32: n = -2 is negative");
  expectFatal([&] { zrt_gemm_f32(0, 0, 2, 2, -3, A, 2, B, 2, 0, C, 2); },
              "zrt_gemm_f32: k = -3 is negative");
  expectFatal([&] { zrt_gemm_f32(0, 0, 2, 3, 5, A, 4, B, 3, 0, C, 3); },
              "zrt_gemm_f32: lda = 4 is less than max(1, k) = 5: the rows of "
              "A would overlap");
  expectFatal([&] { zrt_gemm_f32(0, 0, 2, 3, 5, A, 5, B, 2, 0, C, 3); },
              "zrt_gemm_f32: ldb = 2 is less than max(1, n) = 3: the rows of "
              "B would overlap");
  expectFatal([&] { zrt_gemm_f32(0, 0, 2, 3, 5, A, 5, B, 3, 0, C, 1); },
              "zrt_gemm_f32: ldc = 1 is less than max(1, n) = 3: the rows of "
              "C would overlap");
  expectFatal([&] { zrt_gemm_f32(0, 0, 2, 3, 0, A, 5, B, 3, 0, C, 2); },
              "zrt_gemm_f32: ldc = 2 is less than max(1, n) = 3: the rows of "
              "C would overlap");
  expectFatal([&] { zrt_gemm_f32(0, 0, 2, 2, 2, nullptr, 2, B, 2, 0, C, 2); },
              "zrt_gemm_f32: a is NULL");
  expectFatal([&] { zrt_gemm_f32(0, 0, 2, 2, 2, A, 2, B, 2, 0, nullptr, 2); },
              "zrt_gemm_f32: c is NULL");
  expectFatal(
      [&] { zrt_gemm_f32(0, 0, int64_t(INT_MAX) + 1, 1, 1, A, 1, B, 1, 0, C, 1); },
      "zrt_gemm_f32: m = 2147483648 exceeds the range of OpenBLAS's 32-bit "
      "integer interface");
  expectFatal(
      [&] { zrt_gemm_batched_f32(0, 0, -1, 2, 2, 2, A, 4, 2, B, 4, 2, 0, C, 4, 2); },
      "zrt_gemm_batched_f32: batch = -1 is negative");
  expectFatal(
      [&] { zrt_gemm_batched_f32(0, 0, 2, 2, 2, 2, A, -4, 2, B, 4, 2, 0, C, 4, 2); },
      "zrt_gemm_batched_f32: stride_a = -4 is negative");
  expectFatal(
      [&] { zrt_gemm_batched_f32(0, 0, 3, 2, 3, 2, A, 4, 2, B, 6, 3, 0, C, 5, 3); },
      "zrt_gemm_batched_f32: stride_c = 5 is less than (m - 1) * ldc + n = "
      "6: the C matrices of the batch would overlap");
  double da[2] = {2, 3}, db[1] = {4}, dc[2] = {0, 0};
  EXPECT_EQ(
      fatalMessageOf([&] { zrt_gemm_f64(0, 0, 1, 1, 1, da, 1, db, 1, 0, dc, -1); }),
      "<no fatal error>"); // a single row may have any ldc
  EXPECT_EQ(dc[0], 8.0);
  EXPECT_EQ(
      fatalMessageOf([&] { zrt_gemm_f64(0, 0, 2, 1, 1, da, 1, db, 1, 0, dc, 0); }),
      "zrt_gemm_f64: ldc = 0 is less than max(1, n) = 1: the rows of C "
      "would overlap");
  EXPECT_EQ(gemmStats().calls, 1u); // only the valid single-row call
}

// Totals and the per-shape breakdown after a known sequence of calls.
TEST_F(RuntimeGemm, Counters) {
  std::vector<float> f(4096, 1);
  std::vector<double> d(4096, 1);
  zrt_gemm_f32(0, 0, 8, 16, 4, f.data(), 4, f.data(), 16, 0, f.data() + 2048, 16);
  zrt_gemm_f32(0, 0, 8, 16, 4, f.data(), 4, f.data(), 16, 1, f.data() + 2048, 16);
  zrt_gemm_f64(0, 0, 3, 5, 7, d.data(), 7, d.data(), 5, 0, d.data() + 2048, 5);
  zrt_gemm_batched_f32(0, 0, 6, 8, 16, 4, f.data(), 32, 4, f.data(), 64, 16, 0,
                       f.data() + 2048, 128, 16);
  zrt_gemm_batched_f32(0, 0, 1, 8, 16, 4, f.data(), 0, 4, f.data(), 0, 16, 0,
                       f.data() + 2048, 0, 16); // same entry as unbatched
  zrt_gemm_stats s = gemmStats();
  EXPECT_EQ(s.calls, 5u);
  EXPECT_EQ(s.flops, 3u * 2 * 8 * 16 * 4 + 2 * 3 * 5 * 7 + 6u * 2 * 8 * 16 * 4);
  EXPECT_GE(s.seconds, 0.0);

  ASSERT_EQ(zrt_gemm_shape_count(), 3u);
  zrt_gemm_shape e;
  ASSERT_EQ(zrt_get_gemm_shape(0, &e), 0);
  EXPECT_EQ(e.dtype_bytes, 4);
  EXPECT_EQ(e.batch, 1);
  EXPECT_EQ(e.m, 8);
  EXPECT_EQ(e.n, 16);
  EXPECT_EQ(e.k, 4);
  EXPECT_EQ(e.calls, 3u);
  double seconds = e.seconds;
  ASSERT_EQ(zrt_get_gemm_shape(1, &e), 0);
  EXPECT_EQ(e.dtype_bytes, 8);
  EXPECT_EQ(e.batch, 1);
  EXPECT_EQ(e.m, 3);
  EXPECT_EQ(e.n, 5);
  EXPECT_EQ(e.k, 7);
  EXPECT_EQ(e.calls, 1u);
  seconds += e.seconds;
  ASSERT_EQ(zrt_get_gemm_shape(2, &e), 0);
  EXPECT_EQ(e.dtype_bytes, 4);
  EXPECT_EQ(e.batch, 6);
  EXPECT_EQ(e.calls, 1u);
  seconds += e.seconds;
  EXPECT_DOUBLE_EQ(seconds, s.seconds);

  EXPECT_NE(zrt_get_gemm_shape(3, &e), 0);
  EXPECT_STREQ(zrt_last_error(),
               "zrt_get_gemm_shape: index 3 is out of range (3 shapes)");
  EXPECT_NE(zrt_get_gemm_shape(0, nullptr), 0);
  EXPECT_STREQ(zrt_last_error(), "zrt_get_gemm_shape: out is NULL");

  zrt_reset_gemm_stats();
  s = gemmStats();
  EXPECT_EQ(s.calls, 0u);
  EXPECT_EQ(s.flops, 0u);
  EXPECT_EQ(s.seconds, 0.0);
  EXPECT_EQ(zrt_gemm_shape_count(), 0u);
}

} // namespace

namespace {
uint16_t bf16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return static_cast<uint16_t>(u >> 16); // exact for the small integers used
}
} // namespace

// bf16 operands into bf16 C: the f32 result rounded once, to nearest even,
// exactly what zrt_gemm_bf16_f32 followed by a rounding gives (values with
// more bits than bf16 holds, so the rounding matters); beta reads the bf16
// C; batched with strides and ldc beyond n; the f32 temporaries are freed.
TEST_F(RuntimeGemm, Bf16IntoBf16) {
  const int64_t batch = 2, m = 3, n = 5, k = 7, ldc = 8;
  std::vector<uint16_t> a(batch * m * k), b(k * n);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = zero::runtime::floatToBF16(0.1f * float(int(i * 7 % 13) - 6));
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = zero::runtime::floatToBF16(0.37f * float(int(i * 5 % 11) - 5));
  for (float beta : {0.0f, 0.75f}) {
    std::vector<uint16_t> c(batch * m * ldc), start(c.size());
    for (size_t i = 0; i < c.size(); ++i)
      c[i] = start[i] = zero::runtime::floatToBF16(0.3f * float(i % 5));
    // The reference: f32 C from the same bf16 C, then rounded.
    std::vector<float> wide(c.size());
    for (size_t i = 0; i < c.size(); ++i)
      wide[i] = zero::runtime::bf16ToFloat(c[i]);
    zrt_gemm_batched_bf16_f32(0, 0, batch, m, n, k, a.data(), m * k, k,
                              b.data(), 0, n, beta, wide.data(), m * ldc, ldc);
    std::vector<uint16_t> expected(start);
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j) {
          size_t at = size_t(i * m * ldc + r * ldc + j);
          expected[at] = zero::runtime::floatToBF16(wide[at]);
        }
    zrt_reset_peaks();
    zrt_gemm_batched_bf16_bf16(0, 0, batch, m, n, k, a.data(), m * k, k,
                               b.data(), 0, n, beta, c.data(), m * ldc, ldc);
    EXPECT_EQ(c, expected) << "beta " << beta;
    EXPECT_NE(c, start);
    zrt_memory_stats s = memoryStats();
    // A and B widened, and the f32 result: batch * m * n floats.
    EXPECT_EQ(s.peak[ZRT_ACTIVATIONS],
              uint64_t(batch * m * k + k * n + batch * m * n) * 4);
    EXPECT_EQ(s.current[ZRT_ACTIVATIONS], 0u);
  }
  std::vector<uint16_t> one(m * n);
  zrt_gemm_bf16_bf16(0, 0, m, n, k, a.data(), k, b.data(), n, 0.0f,
                     one.data(), n);
  std::vector<float> oneWide(m * n);
  zrt_gemm_bf16_f32(0, 0, m, n, k, a.data(), k, b.data(), n, 0.0f,
                    oneWide.data(), n);
  for (size_t i = 0; i < one.size(); ++i)
    EXPECT_EQ(one[i], zero::runtime::floatToBF16(oneWide[i])) << i;
  EXPECT_EQ(fatalMessageOf([&] {
              zrt_gemm_bf16_bf16(0, 0, 2, 3, 5, a.data(), 5, b.data(), 3, 0,
                                 one.data(), 2);
            }),
            "zrt_gemm_bf16_bf16: ldc = 2 is less than max(1, n) = 3: the rows "
            "of C would overlap");
}

// bf16 operands into f32 C: the product of the exactly widened operands,
// transposed and with leading dimensions beyond the rows, batched with a
// shared B (stride 0); the widened copies are ZRT_ACTIVATIONS temporaries
// of exactly the A and B sizes, freed before the call returns.
TEST_F(RuntimeGemm, Bf16IntoF32) {
  const int64_t batch = 3, m = 4, n = 5, k = 6, lda = 7, ldb = 9;
  // A stored k x m (transposed) with row stride lda, one per batch; B
  // stored k x n with row stride ldb, one for the whole batch.
  std::vector<uint16_t> a(batch * k * lda, bf16Bits(kSentinel)),
      b(k * ldb, bf16Bits(kSentinel));
  std::vector<float> expected(batch * m * n), c(batch * m * n, 0.5f);
  auto av = [&](int64_t i, int64_t p, int64_t r) {
    return float(int((i * 5 + p * 3 + r) % 7) - 3);
  };
  auto bv = [&](int64_t p, int64_t j) { return float(int((p + 2 * j) % 5) - 2); };
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t r = 0; r < m; ++r)
        a[i * k * lda + p * lda + r] = bf16Bits(av(i, p, r));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j)
      b[p * ldb + j] = bf16Bits(bv(p, j));
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j) {
        float sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += av(i, p, r) * bv(p, j);
        expected[i * m * n + r * n + j] = sum + 2.0f * 0.5f;
      }
  zrt_reset_peaks();
  zrt_gemm_batched_bf16_f32(1, 0, batch, m, n, k, a.data(), k * lda, lda,
                            b.data(), 0, ldb, 2.0f, c.data(), m * n, n);
  EXPECT_EQ(c, expected);
  zrt_memory_stats s = memoryStats();
  EXPECT_EQ(s.peak[ZRT_ACTIVATIONS], uint64_t(batch * k * m + k * n) * 4);
  EXPECT_EQ(s.current[ZRT_ACTIVATIONS], 0u);

  std::vector<float> one(m * n, 0.0f), first(expected.begin(),
                                             expected.begin() + m * n);
  for (float &v : first)
    v -= 1.0f; // beta 0 here
  zrt_gemm_bf16_f32(1, 0, m, n, k, a.data(), lda, b.data(), ldb, 0.0f,
                    one.data(), n);
  EXPECT_EQ(one, first);
  // Invalid leading dimensions are refused before anything is read.
  EXPECT_EQ(fatalMessageOf([&] {
              zrt_gemm_bf16_f32(0, 0, 2, 3, 5, a.data(), 4, b.data(), 3, 0,
                                c.data(), 3);
            }),
            "zrt_gemm_bf16_f32: lda = 4 is less than max(1, k) = 5: the rows "
            "of A would overlap");
}
