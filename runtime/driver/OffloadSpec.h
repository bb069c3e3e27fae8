//===- OffloadSpec.h - The --offload value ----------------------*- C++ -*-===//
//
// "optimizer=nvme,params=nvme,nvme-dir=DIR": where a run keeps its
// optimizer states and parameter shards (zero-offload's placements, which
// zero-run and zero-compile compile in) and the directory of the NVMe tier
// (which the driver opens). Header-only and free of dependencies, so that
// the compiler tools parse it as the driver does.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_DRIVER_OFFLOADSPEC_H
#define ZERO_RUNTIME_DRIVER_OFFLOADSPEC_H

#include "KeyValues.h"

#include <string>

namespace zero::driver {

struct OffloadSpec {
  /// "device" (the default: in the step's memory), "host" (the optimizer
  /// only: states in host memory next to the device, updated there) or
  /// "nvme".
  std::string optimizer = "device", params = "device";
  std::string nvmeDir;
  bool anyNvme() const { return optimizer == "nvme" || params == "nvme"; }
};

/// Parses `spec` (comma-separated key=value parts, at least one). False
/// with a one-line message.
inline bool parseOffloadSpec(const std::string &spec, OffloadSpec &out,
                             std::string &error) {
  auto bad = [&](const std::string &why) {
    error = "--offload expects optimizer=device|host|nvme, params=device|nvme "
            "and nvme-dir=DIR, comma-separated (" +
            why + "), got '" + spec + "'";
    return false;
  };
  std::vector<std::pair<std::string, std::string>> parts;
  std::string malformed;
  if (!splitKeyValues(spec, parts, malformed))
    return bad(malformed.empty() ? "nothing given"
                                 : "'" + malformed + "' is no key=value");
  for (const auto &[key, value] : parts) {
    if (key == "optimizer") {
      if (value != "device" && value != "host" && value != "nvme")
        return bad("optimizer=" + value);
      out.optimizer = value;
    } else if (key == "params") {
      if (value != "device" && value != "nvme")
        return bad("params=" + value);
      out.params = value;
    } else if (key == "nvme-dir") {
      if (value.empty())
        return bad("an empty nvme-dir");
      out.nvmeDir = value;
    } else {
      return bad("unknown key '" + key + "'");
    }
  }
  return true;
}

} // namespace zero::driver

#endif // ZERO_RUNTIME_DRIVER_OFFLOADSPEC_H
