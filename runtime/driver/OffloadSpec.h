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

#include <string>

namespace zero::driver {

struct OffloadSpec {
  /// "device" (the default: in the step's memory) or "nvme"; "host" for
  /// the optimizer parses, and the compiler says it is not supported yet.
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
  if (spec.empty())
    return bad("nothing given");
  std::size_t begin = 0;
  for (;;) {
    std::size_t end = spec.find(',', begin);
    if (end == std::string::npos)
      end = spec.size();
    std::string part = spec.substr(begin, end - begin);
    std::size_t eq = part.find('=');
    if (eq == std::string::npos)
      return bad("'" + part + "' is no key=value");
    std::string key = part.substr(0, eq), value = part.substr(eq + 1);
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
    if (end == spec.size())
      return true;
    begin = end + 1;
  }
}

} // namespace zero::driver

#endif // ZERO_RUNTIME_DRIVER_OFFLOADSPEC_H
