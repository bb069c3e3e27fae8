//===- LinkSpec.h - The --sim-link / --link-model value ---------*- C++ -*-===//
//
// "bw=<GB/s>,latency=<microseconds>": the link a run simulates (the
// driver's --sim-link) or that zero-schedule's cost model assumes
// (zero-run's and zero-compile's --link-model); and the cost model's
// compute rates (their --compute-model). Header-only and free of
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

/// The whole of `text` as a number (strtod's syntax, 'inf' included); false
/// for empty text, trailing characters or NaN.
inline bool parseNumber(const std::string &text, double &value) {
  char *rest = nullptr;
  value = text.empty() ? NAN : std::strtod(text.c_str(), &rest);
  return !text.empty() && rest && *rest == '\0' && !std::isnan(value);
}

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
    double v = 0;
    if (!parseNumber(value, v) || v < 0)
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

/// Parses "gemm=<GFLOP/s>,vector=<GFLOP/s>,memory=<GB/s>" (any of the
/// three, each > 0 and finite) into the cost model's compute rates of one
/// rank; parts left out keep the values passed in. False with a one-line
/// message naming `option`.
inline bool parseComputeSpec(const std::string &spec, double &gemmGflops,
                             double &vectorGflops, double &memoryGbps,
                             std::string &error,
                             const char *option = "--compute-model") {
  auto bad = [&] {
    error = std::string(option) +
            " expects gemm=<GFLOP/s>,vector=<GFLOP/s>,memory=<GB/s> (any of "
            "them, each a positive number), got '" + spec + "'";
    return false;
  };
  std::vector<std::pair<std::string, std::string>> parts;
  std::string malformed;
  if (!splitKeyValues(spec, parts, malformed) || parts.empty())
    return bad();
  double gemm = gemmGflops, vector = vectorGflops, memory = memoryGbps;
  for (const auto &[key, value] : parts) {
    double v = 0;
    if (!parseNumber(value, v) || !std::isfinite(v) || v <= 0)
      return bad();
    if (key == "gemm")
      gemm = v;
    else if (key == "vector")
      vector = v;
    else if (key == "memory")
      memory = v;
    else
      return bad();
  }
  gemmGflops = gemm;
  vectorGflops = vector;
  memoryGbps = memory;
  return true;
}

} // namespace zero::driver

#endif // ZERO_RUNTIME_DRIVER_LINKSPEC_H
