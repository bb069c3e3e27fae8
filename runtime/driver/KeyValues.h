//===- KeyValues.h - "key=value,key=value" option values --------*- C++ -*-===//
//
// The shape of the driver's compound option values (--sim-link,
// --link-model, --offload). Header-only and free of dependencies, so that
// the compiler tools split them as the driver does.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_DRIVER_KEYVALUES_H
#define ZERO_RUNTIME_DRIVER_KEYVALUES_H

#include <string>
#include <utility>
#include <vector>

namespace zero::driver {

/// Splits `spec` at commas into key=value parts. False when `spec` is empty
/// or a part has no '=' (`malformed` is then that part).
inline bool splitKeyValues(const std::string &spec,
                           std::vector<std::pair<std::string, std::string>> &out,
                           std::string &malformed) {
  out.clear();
  malformed.clear();
  if (spec.empty())
    return false;
  std::size_t begin = 0;
  for (;;) {
    std::size_t end = spec.find(',', begin);
    if (end == std::string::npos)
      end = spec.size();
    std::string part = spec.substr(begin, end - begin);
    std::size_t eq = part.find('=');
    if (eq == std::string::npos) {
      malformed = part;
      return false;
    }
    out.emplace_back(part.substr(0, eq), part.substr(eq + 1));
    if (end == spec.size())
      return true;
    begin = end + 1;
  }
}

} // namespace zero::driver

#endif // ZERO_RUNTIME_DRIVER_KEYVALUES_H
