//===- RuntimeTestSupport.h - Fixture of the runtime tests ------*- C++ -*-===//
//
// Every test starts from a runtime with no live allocation, an empty block
// cache, zeroed GEMM and collective counters, the default comm bucket and
// peaks equal to the current counts (0), and with a fatal handler
// that throws FatalError, so a test can observe a fatal error and go on. The
// handler belongs to the tests: the runtime itself never throws across its C
// ABI, it only calls the handler with no lock held.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_RUNTIMETESTSUPPORT_H
#define ZERO_RUNTIME_TEST_RUNTIMETESTSUPPORT_H

#include "zero/runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

// C99Check.c: calls made from C, where a category may be any int.
extern "C" {
const char *zrt_c99_category_name(int category);
void zrt_c99_set_generated_category(int category);
}

namespace zero::runtime::test {

/// What the fatal handler throws in tests: a std::exception, so that a
/// fatal error no test expected is reported with its message ("C++
/// exception with description ...") rather than as an unknown exception.
struct FatalError : std::runtime_error {
  explicit FatalError(const std::string &message)
      : std::runtime_error(message), message(message) {}
  std::string message;
};

[[noreturn]] inline void throwingFatalHandler(const char *message) {
  throw FatalError(message);
}

/// The message `fn` passed to the fatal handler, or "<no fatal error>".
template <typename Fn> std::string fatalMessageOf(Fn &&fn) {
  try {
    fn();
  } catch (const FatalError &e) {
    return e.message;
  }
  return "<no fatal error>";
}

inline uintptr_t address(const void *p) { return reinterpret_cast<uintptr_t>(p); }

inline zrt_memory_stats memoryStats() {
  zrt_memory_stats stats;
  zrt_get_memory_stats(&stats);
  return stats;
}

inline zrt_gemm_stats gemmStats() {
  zrt_gemm_stats stats;
  zrt_get_gemm_stats(&stats);
  return stats;
}

inline zrt_comm_stats commStats() {
  zrt_comm_stats stats;
  zrt_get_comm_stats(&stats);
  return stats;
}

class RuntimeFixture : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(zrt_init("cpu", 1), 0) << zrt_last_error();
    zrt_set_fatal_handler(throwingFatalHandler);
    zrt_set_generated_category(ZRT_ACTIVATIONS);
    ASSERT_EQ(memoryStats().current_total, 0u)
        << "an earlier test leaked runtime memory";
    zrt_release_cached();
    ASSERT_EQ(memoryStats().cached_bytes, 0u);
    ASSERT_EQ(memoryStats().reserved_bytes, 0u)
        << "an earlier test leaked a runtime block";
    zrt_reset_peaks();
    zrt_reset_gemm_stats();
    zrt_reset_comm_stats();
    zrt_set_comm_bucket_bytes(0);
    start = memoryStats();
  }

  void TearDown() override {
    zrt_set_fatal_handler(nullptr);
    zrt_set_generated_category(ZRT_ACTIVATIONS);
    zrt_memory_stats s = memoryStats();
    EXPECT_EQ(s.current_total, 0u) << "the test leaked";
    EXPECT_EQ(s.reserved_bytes, s.cached_bytes) << "the test leaked a block";
  }

  /// Counters as they were when the test started (num_allocs and num_frees
  /// are cumulative over the process).
  zrt_memory_stats start;
};

} // namespace zero::runtime::test

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "  actual: " << (haystack) << "\n  expected to contain: " << (needle)

#endif // ZERO_RUNTIME_TEST_RUNTIMETESTSUPPORT_H
