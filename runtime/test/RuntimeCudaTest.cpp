//===- RuntimeCudaTest.cpp - The CUDA backend -----------------------------===//
//
// RuntimeCudaSelect runs everywhere: without a GPU (CI, the development
// machine) selecting "cuda" fails with one line naming what is missing, and
// the CPU backend works on. Every other case needs a device and skips with
// that line where there is none. On a GPU they check the backend against
// exact references: zero-filled device blocks counted per category, copies
// both ways, cuBLASLt GEMMs in f32 (TF32 off), f64 and bf16 x bf16 -> f32 on
// small integers (exact in every precision, whatever order the kernel sums
// in), batched with a broadcast operand, the collectives of a world of one,
// and a kernel launched through the mgpu* entry points from PTX text.
//
//===----------------------------------------------------------------------===//

#include "CollectiveCalls.h"
#include "RuntimeTestSupport.h"

#include <cstring>
#include <string>
#include <vector>

using namespace zero::runtime::test;

namespace {

/// Selects "cuda"; returns the reason it is unavailable, or "" on success.
std::string selectCuda() {
  if (zrt_init("cuda", 1) == 0)
    return "";
  return zrt_last_error();
}

TEST(RuntimeCudaSelect, FailsWithOneLineOrSelectsADevice) {
  std::string why = selectCuda();
  if (why.empty()) {
    // A GPU: device memory, which the host does not touch.
    EXPECT_EQ(zrt_host_accessible(), 0);
    zrt_gemm_backend info;
    ASSERT_EQ(zrt_get_gemm_backend(&info), 0);
    EXPECT_NE(std::string(info.library).find("cuBLASLt"), std::string::npos)
        << info.library;
  } else {
    EXPECT_EQ(why.rfind("zrt_init: the \"cuda\" backend is unavailable: ", 0),
              0u)
        << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
    // Selecting it again gives the same line, not a crash or a hang.
    EXPECT_EQ(selectCuda(), why);
  }
  // The CPU backend is selectable again and computes.
  ASSERT_EQ(zrt_init("cpu", 1), 0) << zrt_last_error();
  EXPECT_EQ(zrt_host_accessible(), 1);
  float a[2] = {1, 2}, b[2] = {3, 4}, c[1] = {0};
  zrt_gemm_f32(0, 0, 1, 1, 2, a, 2, b, 1, 0.0f, c, 1);
  EXPECT_EQ(c[0], 11.0f);
  // Kernels need the CUDA backend.
  zrt_set_fatal_handler(throwingFatalHandler);
  EXPECT_NE(fatalMessageOf([] { zrt_gpu_stream(); })
                .find("which runs no GPU kernels"),
            std::string::npos);
  zrt_set_fatal_handler(nullptr);
}

class RuntimeCuda : public RuntimeFixture {
protected:
  void SetUp() override {
    RuntimeFixture::SetUp();
    std::string why = selectCuda();
    if (!why.empty())
      GTEST_SKIP() << "no CUDA device here: " << why;
    onDevice = true;
  }
  void TearDown() override {
    if (onDevice) {
      zrt_synchronize();
      zrt_release_cached();
      ASSERT_EQ(zrt_init("cpu", 1), 0) << zrt_last_error();
    }
    RuntimeFixture::TearDown();
  }

  template <typename T> T *device(const std::vector<T> &host) {
    auto *p = static_cast<T *>(zrt_alloc(host.size() * sizeof(T), ZRT_ACTIVATIONS));
    zrt_copy_from_host(p, host.data(), int64_t(host.size() * sizeof(T)));
    return p;
  }
  template <typename T> std::vector<T> host(const T *p, size_t count) {
    std::vector<T> out(count);
    zrt_copy_to_host(out.data(), p, int64_t(count * sizeof(T)));
    return out;
  }

  bool onDevice = false;
};

TEST_F(RuntimeCuda, BlocksAreZeroedCountedAndCopied) {
  auto *p = static_cast<uint8_t *>(zrt_alloc(1000, ZRT_PARAMS));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(memoryStats().current[ZRT_PARAMS], 1000u);
  EXPECT_EQ(host(p, 1000), std::vector<uint8_t>(1000, 0));
  std::vector<uint8_t> values(1000);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = uint8_t(i * 7 + 1);
  zrt_copy_from_host(p, values.data(), 1000);
  EXPECT_EQ(host(p, 1000), values);
  auto *q = static_cast<uint8_t *>(zrt_alloc(1000, ZRT_GRADS));
  zrt_copy(q, p, 1000);
  EXPECT_EQ(host(q, 1000), values);
  zrt_free(p);
  zrt_free(q);
  // A cached block comes back zero-filled again.
  auto *r = static_cast<uint8_t *>(zrt_alloc(1000, ZRT_OPTIMIZER_STATES));
  EXPECT_TRUE(r == p || r == q);
  EXPECT_EQ(host(r, 1000), std::vector<uint8_t>(1000, 0));
  zrt_free(r);
  EXPECT_EQ(memoryStats().peak[ZRT_PARAMS], 1000u);
  EXPECT_EQ(memoryStats().current_total, 0u);
}

// Host memory next to the device (optimizer=host) is page-locked, counted
// apart, written by the host directly, and moved by zrt_copy_start in both
// directions after the work queued before it.
TEST_F(RuntimeCuda, HostBlocksAndCopiesBetweenSpaces) {
  auto *h = static_cast<float *>(zrt_alloc_host(256 * sizeof(float), ZRT_OPTIMIZER_STATES));
  ASSERT_NE(h, nullptr) << zrt_last_error();
  EXPECT_EQ(memoryStats().host_current[ZRT_OPTIMIZER_STATES], 256 * sizeof(float));
  EXPECT_EQ(memoryStats().current[ZRT_OPTIMIZER_STATES], 0u);
  for (int i = 0; i < 256; ++i) {
    EXPECT_EQ(h[i], 0.0f);
    h[i] = float(i);
  }
  std::vector<float> zeros(256, 0.0f);
  float *d = device(zeros);
  // Host to device, then a device-side copy queued after it on the compute
  // stream must see the bytes (the copy stream's event orders them).
  zrt_wait(zrt_copy_start(h, d, 256 * sizeof(float)));
  auto *e = static_cast<float *>(zrt_alloc(256 * sizeof(float), ZRT_ACTIVATIONS));
  zrt_copy(e, d, 256 * sizeof(float));
  std::vector<float> back = host(e, 256);
  for (int i = 0; i < 256; ++i)
    EXPECT_EQ(back[i], float(i));
  // Device to host after the queued copy into `d`.
  std::vector<float> twice(256);
  for (int i = 0; i < 256; ++i)
    twice[i] = 2.0f * float(i);
  float *src = device(twice);
  zrt_copy(d, src, 256 * sizeof(float));
  zrt_set_generated_space(ZRT_SPACE_HOST);
  auto *g = static_cast<float *>(_mlir_memref_to_llvm_aligned_alloc(64, 256 * sizeof(float)));
  zrt_set_generated_space(ZRT_SPACE_DEVICE);
  EXPECT_EQ(memoryStats().host_current[ZRT_ACTIVATIONS], 256 * sizeof(float));
  int64_t request = zrt_copy_start(d, g, 256 * sizeof(float));
  zrt_wait(request);
  for (int i = 0; i < 256; ++i)
    EXPECT_EQ(g[i], 2.0f * float(i));
  for (void *p : {static_cast<void *>(h), static_cast<void *>(d),
                  static_cast<void *>(e), static_cast<void *>(src),
                  static_cast<void *>(g)})
    zrt_free(p);
  EXPECT_EQ(memoryStats().host_current_total, 0u);
}

/// Row-major m x n = op(A) op(B) on small integers, in double.
std::vector<double> product(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                            const std::vector<double> &a, int64_t lda,
                            const std::vector<double> &b, int64_t ldb,
                            double beta, std::vector<double> c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += (ta ? a[p * lda + i] : a[i * lda + p]) *
               (tb ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = sum + beta * c[i * ldc + j];
    }
  return c;
}

std::vector<double> integers(size_t count, int seed) {
  std::vector<double> v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = double(int((i * 7 + size_t(seed) * 5) % 9) - 4);
  return v;
}

uint16_t toBf16(double v) {
  float f = float(v); // small integers: exact, and so is the truncation
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return uint16_t(bits >> 16);
}

std::vector<uint16_t> toBf16(const std::vector<double> &values) {
  std::vector<uint16_t> out;
  for (double v : values)
    out.push_back(toBf16(v));
  return out;
}

TEST_F(RuntimeCuda, GemmsMatchExactReferences) {
  const int64_t m = 5, n = 7, k = 3;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      // Leading dimensions wider than the rows they hold.
      int64_t lda = (ta ? m : k) + 2, ldb = (tb ? k : n) + 1, ldc = n + 3;
      auto a = integers(size_t((ta ? k : m) * lda), 1);
      auto b = integers(size_t((tb ? n : k) * ldb), 2);
      auto c = integers(size_t(m * ldc), 3);
      auto want = product(ta, tb, m, n, k, a, lda, b, ldb, 0.5, c, ldc);
      SCOPED_TRACE("trans_a " + std::to_string(ta) + " trans_b " +
                   std::to_string(tb));

      std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end()),
          cf(c.begin(), c.end());
      float *da = device(af), *db = device(bf), *dc = device(cf);
      zrt_gemm_f32(ta, tb, m, n, k, da, lda, db, ldb, 0.5f, dc, ldc);
      EXPECT_EQ(host(dc, cf.size()), std::vector<float>(want.begin(), want.end()));

      double *ea = device(a), *eb = device(b), *ec = device(c);
      zrt_gemm_f64(ta, tb, m, n, k, ea, lda, eb, ldb, 0.5, ec, ldc);
      EXPECT_EQ(host(ec, c.size()), want);

      std::vector<uint16_t> ah = toBf16(a), bh = toBf16(b);
      uint16_t *ha = device(ah), *hb = device(bh);
      float *hc = device(cf);
      zrt_gemm_bf16_f32(ta, tb, m, n, k, ha, lda, hb, ldb, 0.5f, hc, ldc);
      EXPECT_EQ(host(hc, cf.size()), std::vector<float>(want.begin(), want.end()));

      // A bf16 result (cuBLASLt's bf16 D): every value here is exact in
      // bf16, so rounding changes nothing.
      std::vector<uint16_t> ch = toBf16(c), wantBf16 = toBf16(want);
      uint16_t *hcb = device(ch);
      zrt_gemm_bf16_bf16(ta, tb, m, n, k, ha, lda, hb, ldb, 0.5f, hcb, ldc);
      EXPECT_EQ(host(hcb, ch.size()), wantBf16);
      zrt_free(hcb);

      for (void *p : {(void *)da, (void *)db, (void *)dc, (void *)ea,
                      (void *)eb, (void *)ec, (void *)ha, (void *)hb,
                      (void *)hc})
        zrt_free(p);
    }
}

// A long reduction (K = 20,000 over a 5 x 7 result) runs in chunks of K
// accumulated in order; with integers every sum is exact, so the chunks
// change nothing, transposed or not, with beta 0.5.
TEST_F(RuntimeCuda, LongReductionsInChunksAreExact) {
  const int64_t m = 5, n = 7, k = 20000;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      int64_t lda = ta ? m : k, ldb = tb ? k : n, ldc = n;
      auto a = integers(size_t((ta ? k : m) * lda), 8);
      auto b = integers(size_t((tb ? n : k) * ldb), 9);
      auto c = integers(size_t(m * ldc), 10);
      auto want = product(ta, tb, m, n, k, a, lda, b, ldb, 0.5, c, ldc);
      std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end()),
          cf(c.begin(), c.end());
      float *da = device(af), *db = device(bf), *dc = device(cf);
      zrt_gemm_f32(ta, tb, m, n, k, da, lda, db, ldb, 0.5f, dc, ldc);
      EXPECT_EQ(host(dc, cf.size()), std::vector<float>(want.begin(), want.end()))
          << "trans_a " << ta << " trans_b " << tb;
      zrt_free(da);
      zrt_free(db);
      zrt_free(dc);
    }
}

// A long row of C whose length is not a multiple of 16 (4,099 columns) is
// computed as its first 4,096 columns and the other 3: with integers every
// product is exact, so the result is the whole GEMM's, transposed or not,
// with beta 0.5, into f32 and (exact small integers) bf16.
TEST_F(RuntimeCuda, LongUnalignedRowsSplitExactly) {
  const int64_t m = 3, n = 4099, k = 5;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      int64_t lda = ta ? m : k, ldb = tb ? k : n, ldc = n + 5;
      auto a = integers(size_t((ta ? k : m) * lda), 11);
      auto b = integers(size_t((tb ? n : k) * ldb), 12);
      auto c = integers(size_t(m * ldc), 13);
      auto want = product(ta, tb, m, n, k, a, lda, b, ldb, 0.5, c, ldc);
      SCOPED_TRACE("trans_a " + std::to_string(ta) + " trans_b " +
                   std::to_string(tb));
      std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end()),
          cf(c.begin(), c.end());
      float *da = device(af), *db = device(bf), *dc = device(cf);
      zrt_gemm_f32(ta, tb, m, n, k, da, lda, db, ldb, 0.5f, dc, ldc);
      EXPECT_EQ(host(dc, cf.size()), std::vector<float>(want.begin(), want.end()));

      std::vector<uint16_t> ah = toBf16(a), bh = toBf16(b), ch = toBf16(c),
                            wantBf16 = toBf16(want);
      uint16_t *ha = device(ah), *hb = device(bh), *hc = device(ch);
      zrt_gemm_bf16_bf16(ta, tb, m, n, k, ha, lda, hb, ldb, 0.5f, hc, ldc);
      EXPECT_EQ(host(hc, ch.size()), wantBf16);
      for (void *p : {(void *)da, (void *)db, (void *)dc, (void *)ha,
                      (void *)hb, (void *)hc})
        zrt_free(p);
    }
}

// Operands that are views one element into a buffer (4-byte aligned, as a
// head's slice can be): the algorithm is chosen for that alignment.
TEST_F(RuntimeCuda, GemmOnUnalignedViews) {
  const int64_t m = 33, n = 17, k = 9;
  auto a = integers(size_t(m * k + 1), 6), b = integers(size_t(k * n + 1), 7);
  std::vector<double> a1(a.begin() + 1, a.end()), b1(b.begin() + 1, b.end());
  auto want = product(false, false, m, n, k, a1, k, b1, n, 0.0,
                      std::vector<double>(size_t(m * n)), n);
  std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
  float *da = device(af), *db = device(bf);
  float *dc = device(std::vector<float>(size_t(m * n + 1), 0.0f));
  zrt_gemm_f32(0, 0, m, n, k, da + 1, k, db + 1, n, 0.0f, dc + 1, n);
  auto got = host(dc, size_t(m * n + 1));
  EXPECT_EQ(std::vector<float>(got.begin() + 1, got.end()),
            std::vector<float>(want.begin(), want.end()));
  zrt_free(da);
  zrt_free(db);
  zrt_free(dc);
}

TEST_F(RuntimeCuda, BatchedGemmWithABroadcastOperand) {
  const int64_t batch = 3, m = 4, n = 2, k = 5;
  auto a = integers(size_t(batch * m * k), 4);
  auto b = integers(size_t(k * n), 5); // stride 0: one B for every product
  std::vector<double> want;
  for (int64_t i = 0; i < batch; ++i) {
    std::vector<double> ai(a.begin() + i * m * k, a.begin() + (i + 1) * m * k);
    auto ci = product(false, false, m, n, k, ai, k, b, n, 0.0,
                      std::vector<double>(size_t(m * n)), n);
    want.insert(want.end(), ci.begin(), ci.end());
  }
  std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
  float *da = device(af), *db = device(bf);
  float *dc = device(std::vector<float>(size_t(batch * m * n), 99.0f));
  // Each operand: pointer, batch stride, leading dimension.
  zrt_gemm_batched_f32(0, 0, batch, m, n, k, da, m * k, k, db, 0, n, 0.0f, dc,
                       m * n, n);
  EXPECT_EQ(host(dc, want.size()), std::vector<float>(want.begin(), want.end()));
  zrt_free(da);
  zrt_free(db);
  zrt_free(dc);
}

TEST_F(RuntimeCuda, CollectivesOfOneRankCopyOnTheDevice) {
  ASSERT_EQ(zrt_world_size(), 1);
  std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f};
  float *in = device(values);
  float *out = device(std::vector<float>(4, 7.0f));
  coll::allReduceSum<float>(in, out, 4);
  EXPECT_EQ(host(out, 4), values);
  float *gathered = device(std::vector<float>(4, 7.0f));
  coll::allGather<float>(in, gathered, 4);
  EXPECT_EQ(host(gathered, 4), values);
  int64_t request = coll::reduceScatterSumStart<float>(in, out, 4);
  zrt_wait(request);
  EXPECT_EQ(host(out, 4), values);
  zrt_free(in);
  zrt_free(out);
  zrt_free(gathered);
}

// The device collectives (NCCL on a communication stream) on the one GPU a
// check machine has: a world of one runs them instead of copying when
// ZERO_TEST_NCCL_WORLD_OF_ONE is set. In place and not, f32, f64 and bf16,
// the maximum, started and blocking, with the compute stream's work before
// the start (a fill of the input by a copy queued right before it) seen by
// the collective. More ranks need more GPUs and MPI, which the check
// machines do not have.
TEST_F(RuntimeCuda, NcclCollectivesOfOneRank) {
  ASSERT_EQ(setenv("ZERO_TEST_NCCL_WORLD_OF_ONE", "1", 1), 0);
  ASSERT_EQ(zrt_world_size(), 1);
  std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 9.0f};
  float *source = device(values);
  float *in = device(std::vector<float>(5, 0.0f));
  float *out = device(std::vector<float>(5, 7.0f));
  // Queued on the compute stream right before the start: the collective
  // must read the values, not the zeros.
  zrt_copy(in, source, int64_t(values.size() * sizeof(float)));
  int64_t request = coll::allReduceSumStart<float>(in, out, 5);
  zrt_wait(request);
  EXPECT_EQ(host(out, 5), values);
  coll::allReduceMax<float>(out, out, 5);
  EXPECT_EQ(host(out, 5), values);
  float *gathered = device(std::vector<float>(5, 7.0f));
  coll::allGather<float>(in, gathered, 5);
  EXPECT_EQ(host(gathered, 5), values);
  request = coll::reduceScatterSumStart<float>(in, gathered, 5);
  zrt_wait(request);
  EXPECT_EQ(host(gathered, 5), values);
  std::vector<double> wide = {0.1, -1e300, 2.5};
  double *win = device(wide);
  coll::allReduceSum<double>(win, win, 3);
  EXPECT_EQ(host(win, 3), wide);
  std::vector<uint16_t> half = toBf16(std::vector<double>{1.0, -2.5, 0.375});
  uint16_t *hin = device(half);
  uint16_t *hout = device(std::vector<uint16_t>(3, 0));
  request = coll::allGatherStart<uint16_t>(hin, hout, 3);
  zrt_wait(request);
  EXPECT_EQ(host(hout, 3), half);
  // No elements: nothing runs, and the start's mark goes back.
  zrt_wait(coll::allReduceSumStart<float>(in, out, 0));
  ASSERT_EQ(unsetenv("ZERO_TEST_NCCL_WORLD_OF_ONE"), 0);
  for (void *p : {(void *)source, (void *)in, (void *)out, (void *)gathered,
                  (void *)win, (void *)hin, (void *)hout})
    zrt_free(p);
}

/// out[threadIdx.x] = value, for any GPU from sm_75 on.
constexpr const char *kFillPtx = R"(
.version 7.8
.target sm_75
.address_size 64
.visible .entry fill(.param .u64 out, .param .f32 value)
{
  .reg .b32 %r<2>;
  .reg .f32 %f<2>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [out];
  ld.param.f32 %f1, [value];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.f32 [%rd4], %f1;
  ret;
}
)";

TEST_F(RuntimeCuda, KernelsLaunchOnTheComputeStream) {
  void *module = mgpuModuleLoadJIT(const_cast<char *>(kFillPtx), 2);
  ASSERT_NE(module, nullptr);
  void *fill = mgpuModuleGetFunction(module, "fill");
  ASSERT_NE(fill, nullptr);
  // Functions are kept by name.
  EXPECT_EQ(mgpuModuleGetFunction(module, "fill"), fill);
  float *out = device(std::vector<float>(64, 0.0f));
  float value = 2.5f;
  void *params[] = {&out, &value};
  mgpuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, zrt_gpu_stream(), params,
                   nullptr, 2);
  std::vector<float> want(64, 0.0f);
  std::fill(want.begin(), want.begin() + 32, 2.5f);
  EXPECT_EQ(host(out, 64), want);
  EXPECT_NE(fatalMessageOf([&] { mgpuModuleGetFunction(module, "missing"); })
                .find("cuModuleGetFunction(\"missing\")"),
            std::string::npos);
  EXPECT_NE(fatalMessageOf([&] {
              mgpuLaunchKernel(fill, 1, 1, 1, 2048, 1, 1, 0, zrt_gpu_stream(),
                               params, nullptr, 2);
            }).find("out of CUDA's range"),
            std::string::npos);
  zrt_free(out);
  mgpuModuleUnload(module);
}

TEST_F(RuntimeCuda, Tf32IsASettingOfTheCudaBackend) {
  EXPECT_EQ(zrt_set_tf32(1), 0);
  EXPECT_EQ(zrt_set_tf32(0), 1);
}

} // namespace
