//===- TestHooks.h - Faults the integration tests inject --------*- C++ -*-===//
//
// The driver's test hooks exist for the integration tests alone: they make
// the driver fail where a test needs a failure (a crash halfway through a
// save, integration_tests/checkpoint/atomic.test) to show what the driver
// leaves behind. Each is a ZERO_TEST_* environment variable, read here once
// and nowhere else; the production code asks testHooks() at the point where
// a fault may be injected. Unset, a hook does nothing.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DRIVER_TESTHOOKS_H
#define ZERO_DRIVER_TESTHOOKS_H

#include "Files.h"

#include <string>
#include <vector>

namespace zero::driver {

struct TestHooks {
  /// ZERO_TEST_KILL_IN_SAVE=K:FILE: in this run's K-th save, the process
  /// that writes FILE (`rank-00001.bin`, `manifest.json`) writes half of it
  /// and kills itself, as a crash in the middle of a save would.
  bool killInSaveSet = false;
  unsigned long killInSaveIndex = 0; ///< K, as strtoul reads it.
  std::string killInSaveFile;        ///< FILE.

  /// Reads every hook from the environment.
  static TestHooks fromEnvironment();

  /// Whether ZERO_TEST_KILL_IN_SAVE names the run's `save`-th save (from 1)
  /// and `file`, a checkpoint file's name.
  bool killInSave(unsigned save, const std::string &file) const;

  /// Called by the `save`-th save before it writes `file` (the name) at
  /// `path`: if killInSave(save, file), writes half of `chunks` there and
  /// kills the process; otherwise returns.
  void beforeSaveWrite(unsigned save, const std::string &file,
                       const std::string &path,
                       const std::vector<Chunk> &chunks) const;
};

/// The process's hooks, read from the environment at the first call.
const TestHooks &testHooks();

} // namespace zero::driver

#endif // ZERO_DRIVER_TESTHOOKS_H
