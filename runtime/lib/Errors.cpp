//===- Errors.cpp - The error channel of the C ABI ------------------------===//
//
// Every entry point reports a failure the same way: as one line in this
// thread's lastError (zrt_last_error), and, for calls that have no way to
// return it, to the fatal handler (zrt_set_fatal_handler). C++ exceptions
// are used inside and stop at `guarded` (RuntimeInternal.h).
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include "comm/Comm.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

using namespace zero::runtime;

namespace zero::runtime {

thread_local char lastError[kErrorCapacity] = "";

void setLastError(const char *entry, const char *message) noexcept {
  std::snprintf(lastError, kErrorCapacity, "%s: %s", entry, message);
}

} // namespace zero::runtime

namespace {

/// Prints one line and ends the process; in a world of more than one rank,
/// with the rank in the line and MPI_Abort, so no rank waits forever for
/// this one in a collective.
void defaultFatalHandler(const char *message) {
  char line[kErrorCapacity + 64];
  int size = comm::currentSize();
  if (size > 1)
    std::snprintf(line, sizeof line, "zero-runtime: error: rank %d of %d: %s",
                  comm::currentRank(), size, message);
  else
    std::snprintf(line, sizeof line, "zero-runtime: error: %s", message);
  comm::terminate(line);
}

std::atomic<zrt_fatal_handler> fatalHandler{nullptr};

} // namespace

void zero::runtime::reportFatal() {
  char message[kErrorCapacity];
  std::memcpy(message, lastError, kErrorCapacity);
  zrt_fatal_handler handler = fatalHandler.load();
  (handler ? handler : defaultFatalHandler)(message);
}

std::string zero::runtime::format(const char *fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
}

extern "C" {

const char *zrt_last_error(void) { return lastError; }

void zrt_set_fatal_handler(zrt_fatal_handler handler) {
  fatalHandler.store(handler);
}

} // extern "C"
