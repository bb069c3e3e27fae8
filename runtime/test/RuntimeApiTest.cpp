//===- RuntimeApiTest.cpp - Set-up, errors and the C99 header -------------===//

#include "RuntimeTestSupport.h"

#include <string>

#include <cmath>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <random>
#include <vector>

extern "C" {
size_t zrt_c99_sizeof_memory_stats(void);
size_t zrt_c99_sizeof_gemm_stats(void);
size_t zrt_c99_sizeof_gemm_shape(void);
size_t zrt_c99_offsetof_gemm_shape_seconds(void);
size_t zrt_c99_offsetof_memory_stats_num_frees(void);
size_t zrt_c99_offsetof_memory_stats_cached_bytes(void);
size_t zrt_c99_offsetof_memory_stats_reserved_peak(void);
size_t zrt_c99_offsetof_memory_stats_host_peak_total(void);
int zrt_c99_smoke(void);
}

using namespace zero::runtime::test;

namespace {

using RuntimeApi = RuntimeFixture;

// "cpu" and NULL select the CPU backend; re-initializing is harmless.
TEST_F(RuntimeApi, InitCpuIsIdempotent) {
  EXPECT_EQ(zrt_init("cpu", 2), 0) << zrt_last_error();
  EXPECT_EQ(zrt_init("cpu", 0), 0) << zrt_last_error();
  EXPECT_EQ(zrt_init(nullptr, -1), 0) << zrt_last_error();
  EXPECT_EQ(zrt_init("cpu", 1), 0) << zrt_last_error();
}

// The CUDA backend is named but not built: a clear error, no crash.
// The GEMM kernels in use are named, with the library and the reason; the
// kernels compute exactly (every zrt_gemm test runs on them too).
TEST_F(RuntimeApi, GemmBackendIsNamed) {
  ASSERT_EQ(zrt_init("cpu", 1), 0) << zrt_last_error();
  zrt_gemm_backend info;
  ASSERT_EQ(zrt_get_gemm_backend(&info), 0) << zrt_last_error();
  EXPECT_NE(std::string(info.library).find("OpenBLAS"), std::string::npos);
  EXPECT_STRNE(info.kernel, "");
  EXPECT_STRNE(info.detected, "");
  EXPECT_STRNE(info.chosen_by, "");
  EXPECT_NE(zrt_get_gemm_backend(nullptr), 0);
  EXPECT_STREQ(zrt_last_error(), "zrt_get_gemm_backend: out is NULL");
}

// Without a GPU, "cuda" fails with one line naming what is missing
// (RuntimeCudaTest.cpp covers both cases); with one it selects the device.
TEST_F(RuntimeApi, InitCudaNeedsADevice) {
  if (zrt_init("cuda", 0) == 0) {
    EXPECT_EQ(zrt_host_accessible(), 0);
    ASSERT_EQ(zrt_init("cpu", 1), 0) << zrt_last_error();
    return;
  }
  EXPECT_EQ(std::string(zrt_last_error())
                .rfind("zrt_init: the \"cuda\" backend is unavailable: ", 0),
            0u)
      << zrt_last_error();
}

TEST_F(RuntimeApi, InitUnknownBackend) {
  EXPECT_NE(zrt_init("tpu", 0), 0);
  EXPECT_STREQ(zrt_last_error(),
               "zrt_init: unknown backend \"tpu\" (built: cpu, cuda)");
}

// A failed init leaves the previous backend in place.
TEST_F(RuntimeApi, FailedInitKeepsBackend) {
  ASSERT_NE(zrt_init("tpu", 0), 0);
  void *p = zrt_alloc(16, ZRT_PARAMS);
  ASSERT_NE(p, nullptr) << zrt_last_error();
  zrt_free(p);
}

// After shutdown, live blocks can still be freed and the next call brings
// the CPU backend back. Shutdown releases the block cache.
TEST_F(RuntimeApi, ShutdownKeepsAllocationsValid) {
  void *p = zrt_alloc(100, ZRT_GRADS);
  void *cached = zrt_alloc(1000, ZRT_GRADS);
  ASSERT_TRUE(p && cached);
  zrt_free(cached);
  EXPECT_EQ(memoryStats().cached_bytes, 1024u);
  zrt_shutdown();
  EXPECT_EQ(memoryStats().current[ZRT_GRADS], 100u);
  EXPECT_EQ(memoryStats().cached_bytes, 0u);
  EXPECT_EQ(memoryStats().reserved_bytes, 128u);
  zrt_free(p);
  EXPECT_EQ(memoryStats().current[ZRT_GRADS], 0u);
  void *q = zrt_alloc(8, ZRT_GRADS); // lazily re-initializes "cpu"
  ASSERT_NE(q, nullptr);
  zrt_free(q);
}

TEST_F(RuntimeApi, CategoryNames) {
  EXPECT_STREQ(zrt_category_name(ZRT_PARAMS), "params");
  EXPECT_STREQ(zrt_category_name(ZRT_GRADS), "grads");
  EXPECT_STREQ(zrt_category_name(ZRT_OPTIMIZER_STATES), "optimizer_states");
  EXPECT_STREQ(zrt_category_name(ZRT_ACTIVATIONS), "activations");
  EXPECT_STREQ(zrt_category_name(ZRT_COMM), "comm");
  EXPECT_STREQ(zrt_category_name(ZRT_NUM_CATEGORIES), "unknown");
  EXPECT_STREQ(zrt_category_name(static_cast<zrt_category>(7)), "unknown");
  EXPECT_STREQ(zrt_c99_category_name(-1), "unknown");
  EXPECT_STREQ(zrt_c99_category_name(2), "optimizer_states");
}

// zrt_last_error is never NULL and keeps the last failure until the next.
TEST_F(RuntimeApi, LastErrorPersistsAcrossSuccess) {
  ASSERT_NE(zrt_last_error(), nullptr);
  ASSERT_NE(zrt_init("tpu", 0), 0);
  ASSERT_EQ(zrt_init("cpu", 1), 0);
  EXPECT_STREQ(zrt_last_error(),
               "zrt_init: unknown backend \"tpu\" (built: cpu, cuda)");
}

// target=cuda's host reads are copies: with the CPU backend, a memcpy.
TEST_F(RuntimeApi, CopyToHost) {
  float *device = static_cast<float *>(zrt_alloc(8, ZRT_ACTIVATIONS));
  ASSERT_NE(device, nullptr) << zrt_last_error();
  device[1] = 2.5f;
  float host = 0;
  zrt_copy_to_host(&host, device + 1, sizeof host);
  EXPECT_EQ(host, 2.5f);
  zrt_copy_to_host(nullptr, nullptr, 0);
  zrt_free(device);
  EXPECT_EQ(fatalMessageOf([&] { zrt_copy_to_host(&host, nullptr, 4); }),
            "zrt_copy_to_host: src is NULL");
  EXPECT_EQ(fatalMessageOf([&] { zrt_copy_to_host(&host, &host, -4); }),
            "zrt_copy_to_host: bytes = -4 is negative");
  // The driver's copies: from the host, within runtime memory, and the
  // answer that host code may touch the CPU backend's blocks.
  EXPECT_EQ(zrt_host_accessible(), 1);
  float *a = static_cast<float *>(zrt_alloc(8, ZRT_ACTIVATIONS));
  float *b = static_cast<float *>(zrt_alloc(8, ZRT_ACTIVATIONS));
  float two[2] = {1.5f, -3.0f};
  zrt_copy_from_host(a, two, sizeof two);
  zrt_copy(b, a, sizeof two);
  zrt_synchronize();
  EXPECT_EQ(b[0], 1.5f);
  EXPECT_EQ(b[1], -3.0f);
  EXPECT_EQ(fatalMessageOf([&] { zrt_copy(b, nullptr, 4); }),
            "zrt_copy: src is NULL");
  EXPECT_EQ(fatalMessageOf([&] { zrt_copy_from_host(nullptr, two, 4); }),
            "zrt_copy_from_host: dst is NULL");
  // TF32 is a GPU's: the CPU backend keeps it off.
  EXPECT_EQ(zrt_set_tf32(1), 0);
  EXPECT_EQ(zrt_set_tf32(0), 0);
  zrt_free(a);
  zrt_free(b);
}

// A step compiled for target=cuda loads its kernels at start-up without a
// failure, and on the CPU backend stops with one line at its first kernel.
TEST_F(RuntimeApi, CudaStepOnCpuRuntime) {
  static const char image[] = "not a fat binary";
  void *module = mgpuModuleLoad(const_cast<char *>(image), sizeof image);
  ASSERT_NE(module, nullptr);
  const std::string expected =
      "this step was compiled for target=cuda, and the runtime's backend is "
      "\"cpu\", which runs no GPU kernels: run it with the \"cuda\" backend "
      "(zrt_init(\"cuda\", ...); zero-run and compiled binaries choose it "
      "from the step), or compile the step for target=cpu";
  EXPECT_EQ(fatalMessageOf([] { zrt_gpu_stream(); }),
            "zrt_gpu_stream: " + expected);
  EXPECT_EQ(fatalMessageOf([&] { mgpuModuleGetFunction(module, "k"); }),
            "mgpuModuleGetFunction: " + expected);
  EXPECT_EQ(fatalMessageOf([] {
              mgpuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr,
                               nullptr, 0);
            }),
            "mgpuLaunchKernel: " + expected);
  mgpuModuleUnload(module);
  static const char ptx[] = ".version 8.0";
  void *jit = mgpuModuleLoadJIT(const_cast<char *>(ptx), 3);
  ASSERT_NE(jit, nullptr);
  mgpuModuleUnload(jit);
}

// Sync timing is a setting (the CPU's waits are no-ops), and a CPU process
// has no kernels to profile.
TEST_F(RuntimeApi, SyncTimingAndKernelStats) {
  EXPECT_EQ(zrt_set_sync_timing(1), 0);
  float a[4] = {1, 2, 3, 4}, c[4] = {};
  zrt_gemm_f32(0, 0, 2, 2, 2, a, 2, a, 2, 0.0f, c, 2);
  EXPECT_EQ(c[0], 7.0f);
  EXPECT_EQ(gemmStats().calls, 1u);
  EXPECT_EQ(zrt_set_sync_timing(0), 1);
  EXPECT_EQ(zrt_kernel_stats_count(), 0u);
  zrt_kernel_stats k;
  EXPECT_NE(zrt_get_kernel_stats(0, &k), 0);
  EXPECT_STREQ(zrt_last_error(),
               "zrt_get_kernel_stats: index 0 is out of range (0 kernels)");
  EXPECT_NE(zrt_get_kernel_stats(0, nullptr), 0);
  EXPECT_STREQ(zrt_last_error(), "zrt_get_kernel_stats: out is NULL");
}

// The message given to the fatal handler is also zrt_last_error().
TEST_F(RuntimeApi, FatalMessageIsLastError) {
  std::string message =
      fatalMessageOf([] { zrt_set_generated_category(ZRT_NUM_CATEGORIES); });
  EXPECT_EQ(message, "zrt_set_generated_category: invalid category 5");
  EXPECT_EQ(message, zrt_last_error());
}

// The handler may leave by longjmp: the runtime holds no lock while it runs,
// so the runtime works normally afterwards.
std::jmp_buf jumpTarget;
char jumpMessage[256];
void longjmpHandler(const char *message) {
  std::strncpy(jumpMessage, message, sizeof jumpMessage - 1);
  std::longjmp(jumpTarget, 1);
}

TEST_F(RuntimeApi, HandlerMayLongjmp) {
  zrt_set_fatal_handler(longjmpHandler);
  int local = 0;
  volatile bool jumped = false;
  if (setjmp(jumpTarget) == 0)
    zrt_free(&local);
  else
    jumped = true;
  zrt_set_fatal_handler(throwingFatalHandler);
  EXPECT_TRUE(jumped);
  EXPECT_EQ(std::strncmp(jumpMessage, "zrt_free: ", 10), 0) << jumpMessage;
  void *p = zrt_alloc(32, ZRT_COMM); // takes the allocation lock again
  ASSERT_NE(p, nullptr);
  zrt_free(p);
}

// The default handler prints one line and exits with status 1 (no abort).
TEST_F(RuntimeApi, DefaultHandlerExitsWithStatus1) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        zrt_set_fatal_handler(nullptr);
        zrt_gemm_f32(0, 0, -1, 2, 2, nullptr, 2, nullptr, 2, 0.0f, nullptr, 2);
      },
      ::testing::ExitedWithCode(1),
      "^zero-runtime: error: zrt_gemm_f32: m = -1 is negative\n$");
}

// runtime.h compiled as C99 sees the same layouts and works from C.
TEST_F(RuntimeApi, C99ClientAgrees) {
  EXPECT_EQ(zrt_c99_sizeof_memory_stats(), sizeof(zrt_memory_stats));
  EXPECT_EQ(zrt_c99_sizeof_gemm_stats(), sizeof(zrt_gemm_stats));
  EXPECT_EQ(zrt_c99_sizeof_gemm_shape(), sizeof(zrt_gemm_shape));
  EXPECT_EQ(zrt_c99_offsetof_gemm_shape_seconds(),
            offsetof(zrt_gemm_shape, seconds));
  EXPECT_EQ(zrt_c99_offsetof_memory_stats_num_frees(),
            offsetof(zrt_memory_stats, num_frees));
  EXPECT_EQ(zrt_c99_offsetof_memory_stats_cached_bytes(),
            offsetof(zrt_memory_stats, cached_bytes));
  EXPECT_EQ(zrt_c99_offsetof_memory_stats_reserved_peak(),
            offsetof(zrt_memory_stats, reserved_peak));
  // The fields added for the block cache come after the original ones, so
  // the original layout is unchanged.
  EXPECT_EQ(offsetof(zrt_memory_stats, num_frees),
            (2 * ZRT_NUM_CATEGORIES + 3) * sizeof(uint64_t));
  EXPECT_EQ(offsetof(zrt_memory_stats, cached_bytes),
            offsetof(zrt_memory_stats, num_frees) + sizeof(uint64_t));
  // So do the host memory's (optimizer=host).
  EXPECT_EQ(zrt_c99_offsetof_memory_stats_host_peak_total(),
            offsetof(zrt_memory_stats, host_peak_total));
  EXPECT_EQ(offsetof(zrt_memory_stats, host_current),
            offsetof(zrt_memory_stats, reserved_peak) + sizeof(uint64_t));
  EXPECT_EQ(sizeof(zrt_memory_stats),
            (4 * ZRT_NUM_CATEGORIES + 9) * sizeof(uint64_t));
  EXPECT_EQ(zrt_c99_smoke(), 0);
  EXPECT_EQ(memoryStats().num_allocs - start.num_allocs, 3u);
}

// __truncsfbf2, the compiler builtin LLVM may call from generated bf16 code
// (lib/Builtins.cpp): exported for the JIT's symbol lookup, and rounding to
// nearest even against a reference that picks the nearer of the two bf16
// neighbours in double arithmetic.
#if defined(__x86_64__) || defined(__aarch64__)
TEST(RuntimeBuiltins, TruncSfBf2RoundsToNearestEven) {
  auto *fn = reinterpret_cast<float (*)(float)>(
      dlsym(RTLD_DEFAULT, "__truncsfbf2"));
  ASSERT_NE(fn, nullptr) << "__truncsfbf2 is not exported";
  auto bitsOf = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
  };
  auto floatOf = [](uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  };
  auto expected = [&](uint32_t u) -> uint16_t {
    float x = floatOf(u);
    if (std::isnan(x))
      return 0; // checked separately
    uint16_t low = static_cast<uint16_t>(u >> 16); // toward zero
    uint32_t magnitude = low & 0x7fffu;
    if (magnitude == 0x7f80u) // infinity
      return low;
    double below = std::fabs(double(floatOf(uint32_t(low) << 16)));
    double above = magnitude + 1 == 0x7f80u
                       ? std::ldexp(1.0, 128)
                       : std::fabs(double(floatOf((uint32_t(low) + 1) << 16)));
    double ax = std::fabs(double(x));
    bool up = ax - below > above - ax ||
              (ax - below == above - ax && (low & 1u));
    return static_cast<uint16_t>(low + (up ? 1 : 0));
  };
  std::vector<uint32_t> inputs = {
      0x00000000u, 0x80000000u, 0x00000001u, 0x00008000u, 0x00018000u,
      0x007fffffu, 0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0x3f807fffu,
      0x7f7fffffu, 0x7f7f8000u, 0x7f7f7fffu, 0xff7fffffu, 0x7f800000u,
      0xff800000u, 0xbf808000u, 0xbf818000u};
  std::mt19937 random(7);
  for (int i = 0; i < 200000; ++i)
    inputs.push_back(random());
  for (uint32_t u : inputs) {
    uint32_t result = bitsOf(fn(floatOf(u)));
    ASSERT_EQ(result >> 16, 0u) << "upper bits set for input " << std::hex << u;
    if (std::isnan(floatOf(u))) {
      EXPECT_EQ(result & 0x7f80u, 0x7f80u) << std::hex << u;
      EXPECT_NE(result & 0x7fu, 0u) << std::hex << u;
      EXPECT_EQ(result & 0x40u, 0x40u) << "not quiet: " << std::hex << u;
      EXPECT_EQ(result >> 15, u >> 31) << std::hex << u;
      continue;
    }
    ASSERT_EQ(result, expected(u)) << "input " << std::hex << u;
  }
}
#endif

} // namespace
