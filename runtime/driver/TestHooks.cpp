//===- TestHooks.cpp - Faults the integration tests inject ----------------===//

#include "TestHooks.h"

#include "Checkpoint.h"

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdlib>

using namespace zero::driver;

namespace {

[[noreturn]] void writeHalfAndDie(const std::string &path,
                                  std::vector<Chunk> chunks) {
  size_t total = 0;
  for (const Chunk &c : chunks)
    total += c.bytes;
  size_t left = total / 2;
  for (Chunk &c : chunks) {
    c.bytes = std::min(c.bytes, left);
    left -= c.bytes;
  }
  uint32_t crc;
  std::string ignored;
  writeShardFile(path, chunks, crc, ignored);
  std::raise(SIGKILL);
  std::abort();
}
} // namespace

namespace zero::driver {

TestHooks TestHooks::fromEnvironment() {
  TestHooks hooks;
  if (const char *hook = std::getenv("ZERO_TEST_KILL_IN_SAVE")) {
    std::string h = hook;
    size_t colon = h.find(':');
    if (colon != std::string::npos) {
      hooks.killInSaveSet = true;
      hooks.killInSaveIndex = std::strtoul(h.c_str(), nullptr, 10);
      hooks.killInSaveFile = h.substr(colon + 1);
    }
  }
  return hooks;
}

bool TestHooks::killInSave(unsigned save, const std::string &file) const {
  return killInSaveSet && killInSaveIndex == save && killInSaveFile == file;
}

void TestHooks::beforeSaveWrite(unsigned save, const std::string &file,
                                const std::string &path,
                                const std::vector<Chunk> &chunks) const {
  if (killInSave(save, file))
    writeHalfAndDie(path, chunks);
}

const TestHooks &testHooks() {
  // The environment does not change while the driver runs.
  static const TestHooks hooks = TestHooks::fromEnvironment();
  return hooks;
}

} // namespace zero::driver
