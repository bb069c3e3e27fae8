//===- TestHooks.cpp - Faults and paths only the tests take ---------------===//

#include "TestHooks.h"

#include <cstdlib>
#include <cstring>

namespace zero::runtime {

namespace {
/// An integer environment variable, or -1 where it is unset or empty.
int64_t integerHook(const char *name) {
  const char *value = std::getenv(name);
  return value && *value ? std::atoll(value) : -1;
}
} // namespace

bool stallHere(int rank, int64_t collective) {
  static const int64_t stallRank = integerHook("ZERO_TEST_STALL_RANK");
  static const int64_t stallAt = integerHook("ZERO_TEST_STALL_AT");
  return stallRank >= 0 && stallAt >= 0 && stallRank == rank &&
         stallAt == collective;
}

bool ncclWorldOfOne() {
  const char *value = std::getenv("ZERO_TEST_NCCL_WORLD_OF_ONE");
  return value && *value && std::strcmp(value, "0") != 0;
}

} // namespace zero::runtime
