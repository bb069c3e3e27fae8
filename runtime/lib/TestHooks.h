//===- TestHooks.h - Faults and paths only the tests take -------*- C++ -*-===//
//
// The runtime's test hooks exist for the tests alone: a rank that stops
// itself where a test needs a stalled rank
// (integration_tests/zero-run/stall.test), and the device collectives run on
// one GPU where a world of one would copy (the check machines have one GPU).
// Each is a ZERO_TEST_* environment variable, read here and nowhere else;
// the production code asks these functions where a hook may act. Unset, a
// hook does nothing. (The driver's hooks are runtime/driver/TestHooks.h.)
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TESTHOOKS_H
#define ZERO_RUNTIME_TESTHOOKS_H

#include <cstdint>

namespace zero::runtime {

/// ZERO_TEST_STALL_RANK=R and ZERO_TEST_STALL_AT=K (read once): whether
/// `rank` is R and `collective` (numbered from 1 per rank) is K, where rank
/// R stops itself (SIGSTOP) as a stalled rank would.
bool stallHere(int rank, int64_t collective);

/// ZERO_TEST_NCCL_WORLD_OF_ONE, set and not "0": a world of one runs the
/// device collectives (NCCL) instead of copying. Read at every call: a unit
/// test sets it for one case (runtime/test/RuntimeCudaTest.cpp).
bool ncclWorldOfOne();

} // namespace zero::runtime

#endif // ZERO_RUNTIME_TESTHOOKS_H
