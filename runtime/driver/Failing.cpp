//===- Failing.cpp - One-line failures of the driver ----------------------===//

#include "Failing.h"

#include "zero/runtime.h"

#include <cstdarg>
#include <cstdio>

namespace zero::driver {

std::string tool = "zero-run";

std::string format(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  char buf[1024];
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

[[noreturn]] void fail(const std::string &message) {
  std::string line = tool + ": error: " + message;
  zrt_abort(line.c_str());
}

[[noreturn]] void failAll(const std::string &message) {
  std::string line = tool + ": error: " + message;
  zrt_abort_all(line.c_str());
}

void writeOrFail(const std::string &path, const std::vector<Chunk> &chunks) {
  std::string error;
  if (!writeFileAtomically(path, chunks, error))
    fail(error);
}

} // namespace zero::driver
