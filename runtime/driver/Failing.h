//===- Failing.h - One-line failures of the driver --------------*- C++ -*-===//
//
// How the driver ends a run that cannot go on: one line naming the tool,
// printed once, and every rank ended.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DRIVER_FAILING_H
#define ZERO_DRIVER_FAILING_H

#include "Files.h"

#include <string>
#include <vector>

namespace zero::driver {

/// The tool's name, for messages.
extern std::string tool;

/// printf into a std::string (up to 1023 characters).
std::string format(const char *fmt, ...);

/// A failure this rank alone may see (a file it cannot write): one line, and
/// every rank ends.
[[noreturn]] void fail(const std::string &message);

/// A failure every rank should see alike (a bad option, a step that does not
/// fit the run): rank 0 prints the line and ends the job; the others wait to
/// be ended, so that the line appears once. If rank 0 did not see it (a file
/// only this rank cannot read), this rank prints it and ends the job itself.
[[noreturn]] void failAll(const std::string &message);

/// Writes `path` whole (writeFileAtomically) or ends the job with why not.
void writeOrFail(const std::string &path, const std::vector<Chunk> &chunks);

} // namespace zero::driver

#endif // ZERO_DRIVER_FAILING_H
