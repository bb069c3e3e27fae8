//===- TraceWriter.h - --trace: the last step traced ------------*- C++ -*-===//
//
// The timeline of a traced step (GEMMs, the compute between them, waits,
// collectives) of every rank, gathered to rank 0 and written as Chrome
// trace-event JSON.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DRIVER_TRACEWRITER_H
#define ZERO_DRIVER_TRACEWRITER_H

#include <string>

namespace zero::driver {

/// Writes the traced step of every rank to `path` (rank 0 writes; every
/// rank takes part). `wall` is this rank's system-clock time at
/// zrt_trace_start: ranks' traces are aligned by it (exact on one machine,
/// as close as the clocks are across machines).
void writeTrace(const std::string &path, double wall, double stepEnd);

} // namespace zero::driver

#endif // ZERO_DRIVER_TRACEWRITER_H
