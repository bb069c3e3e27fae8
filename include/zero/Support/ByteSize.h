//===- ByteSize.h - Byte counts on command lines ----------------*- C++ -*-===//
//
// "40000000", "40MB", "38.5MiB": a byte count with an optional unit (B, kB,
// MB, GB in powers of 1000; KiB, MiB, GiB in powers of 1024), as zero-run's
// and zero-compile's --memory-budget take it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_SUPPORT_BYTESIZE_H
#define ZERO_SUPPORT_BYTESIZE_H

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <cstdint>
#include <optional>

namespace mlir::zero {

/// The bytes `text` names, rounded down to a whole byte; none if it is not
/// a non-negative number with a known unit, or does not fit int64.
inline std::optional<int64_t> parseByteSize(llvm::StringRef text) {
  text = text.trim();
  size_t numberEnd = 0;
  while (numberEnd < text.size() &&
         (llvm::isDigit(text[numberEnd]) || text[numberEnd] == '.'))
    ++numberEnd;
  llvm::StringRef number = text.take_front(numberEnd);
  llvm::StringRef unit = text.drop_front(numberEnd).trim();
  double value;
  if (number.empty() || number.getAsDouble(value) || !(value >= 0))
    return std::nullopt;
  double scale;
  if (unit.empty() || unit.equals_insensitive("b"))
    scale = 1;
  else if (unit.equals_insensitive("kb") || unit.equals_insensitive("k"))
    scale = 1e3;
  else if (unit.equals_insensitive("mb") || unit.equals_insensitive("m"))
    scale = 1e6;
  else if (unit.equals_insensitive("gb") || unit.equals_insensitive("g"))
    scale = 1e9;
  else if (unit.equals_insensitive("kib"))
    scale = 1024.0;
  else if (unit.equals_insensitive("mib"))
    scale = 1024.0 * 1024.0;
  else if (unit.equals_insensitive("gib"))
    scale = 1024.0 * 1024.0 * 1024.0;
  else
    return std::nullopt;
  double bytes = std::floor(value * scale);
  if (!(bytes < 9.2e18))
    return std::nullopt;
  return static_cast<int64_t>(bytes);
}

} // namespace mlir::zero

#endif // ZERO_SUPPORT_BYTESIZE_H
