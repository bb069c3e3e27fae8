//===- LinkSpec.h - The --sim-link / --link-model value ---------*- C++ -*-===//
//
// "bw=<GB/s>,latency=<microseconds>": the link a run simulates (the
// driver's --sim-link) or that zero-schedule's cost model assumes
// (zero-run's and zero-compile's --link-model). Header-only and free of
// dependencies, so that the compiler tools parse it as the driver does.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_DRIVER_LINKSPEC_H
#define ZERO_RUNTIME_DRIVER_LINKSPEC_H

#include "KeyValues.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace zero::driver {

/// Parses `spec` into a bandwidth in GB/s (1e9 bytes/s; INFINITY when left
/// out or 'inf') and a latency in microseconds (0 when left out); at least
/// one part must be given. False with a one-line message naming `option`.
inline bool parseLinkSpec(const std::string &spec, double &gbps,
                          double &latencyUs, std::string &error,
                          const char *option = "--sim-link") {
  gbps = std::numeric_limits<double>::infinity();
  latencyUs = 0;
  auto bad = [&] {
    error = std::string(option) +
            " expects bw=<GB/s>,latency=<microseconds> (bw > 0 or 'inf', "
            "latency >= 0), got '" + spec + "'";
    return false;
  };
  std::vector<std::pair<std::string, std::string>> parts;
  std::string malformed;
  if (!splitKeyValues(spec, parts, malformed))
    return bad();
  for (const auto &[key, value] : parts) {
    char *rest = nullptr;
    double v = value.empty() ? NAN : std::strtod(value.c_str(), &rest);
    if (value.empty() || !rest || *rest != '\0' || std::isnan(v) || v < 0)
      return bad();
    if (key == "bw" && v > 0)
      gbps = v;
    else if (key == "latency" && !std::isinf(v))
      latencyUs = v;
    else
      return bad();
  }
  return true;
}

} // namespace zero::driver

#endif // ZERO_RUNTIME_DRIVER_LINKSPEC_H
