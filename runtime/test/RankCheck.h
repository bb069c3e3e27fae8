//===- RankCheck.h - CHECK for the runtime's MPI test programs --*- C++ -*-===//
//
// CHECK(cond, format, ...) counts a check in `checks` and, when `cond` is
// false, a failure in `failures`, printing the rank, the place, the
// condition and the message to stderr. The including file defines `rank`,
// `failures` and `checks` (ints) where the macro is used.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_RANKCHECK_H
#define ZERO_RUNTIME_TEST_RANKCHECK_H

#include <cstdio>

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    ++checks;                                                                  \
    if (!(cond)) {                                                             \
      ++failures;                                                              \
      std::fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", rank,         \
                   __FILE__, __LINE__, #cond);                                 \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fputc('\n', stderr);                                                \
    }                                                                          \
  } while (0)

#endif // ZERO_RUNTIME_TEST_RANKCHECK_H
