//===- ParserGuard.cpp - Screen input for upstream parser crashes ---------===//
//
// Why this exists: MLIR 22's LinalgOps.cpp parses the `permutation` and
// `dimensions` lists of linalg.transpose/broadcast/reduce with
//   attributes.set(name, DenseI64ArrayAttr::parse(parser, Type{}));
// which crashes on a null attribute when the list is malformed. Upstream has
// nothing to hook into, so we find those spots in the text first. The custom
// syntax puts the keyword right after the closing `)` of `outs(...)`; in a
// generic attribute dictionary it follows `{` or `,` instead and goes through
// the normal (safe) attribute parser, so only the `) keyword =` form is
// checked.
//
//===----------------------------------------------------------------------===//

#include "zero/Support/ParserGuard.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

using namespace llvm;

namespace {
bool isIdentChar(char c) { return isAlnum(c) || c == '_' || c == '.' || c == '$'; }

/// True if `text` (from just after `=`) starts with `[` integers `]`, where
/// every integer fits in int64, as DenseI64ArrayAttr::parse accepts.
bool isI64List(StringRef text) {
  text = text.ltrim();
  if (!text.consume_front("["))
    return false;
  size_t close = text.find(']');
  if (close == StringRef::npos)
    return false;
  StringRef body = text.take_front(close).trim();
  if (body.empty())
    return true;
  SmallVector<StringRef> items;
  body.split(items, ',');
  for (StringRef item : items) {
    item = item.trim();
    bool negative = item.consume_front("-");
    (void)negative;
    uint64_t value;
    // getAsInteger with radix 0 accepts 0x.. like the MLIR lexer; anything
    // else (a `#`, a `=`, a float, an empty slot) is malformed.
    if (item.empty() || item.getAsInteger(0, value) ||
        value > static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0))
      return false;
  }
  return true;
}
} // namespace

bool mlir::zero::screenForParserCrashes(SourceMgr &sourceMgr,
                                        unsigned bufferId) {
  StringRef text = sourceMgr.getMemoryBuffer(bufferId)->getBuffer();
  bool ok = true;
  char lastSignificant = 0;
  for (size_t i = 0, e = text.size(); i < e;) {
    char c = text[i];
    if (c == '/' && text.substr(i).starts_with("//")) {
      i = text.find('\n', i);
      if (i == StringRef::npos)
        break;
      continue;
    }
    if (c == '"') {
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      ++i;
      lastSignificant = '"';
      continue;
    }
    if (isSpace(c)) {
      ++i;
      continue;
    }
    if (!isIdentChar(c)) {
      lastSignificant = c;
      ++i;
      continue;
    }
    size_t start = i;
    while (i < e && isIdentChar(text[i]))
      ++i;
    StringRef word = text.slice(start, i);
    char before = lastSignificant;
    lastSignificant = 'a';
    if (before != ')' || (word != "permutation" && word != "dimensions"))
      continue;
    StringRef rest = text.substr(i).ltrim();
    if (!rest.consume_front("="))
      continue; // The upstream parser reports this one itself.
    if (isI64List(rest))
      continue;
    sourceMgr.PrintMessage(
        SMLoc::getFromPointer(text.data() + start), SourceMgr::DK_Error,
        "malformed '" + word +
            "' list: expected '[' integers separated by ',' ']' (e.g. " +
            word + " = [1, 0])");
    ok = false;
  }
  return ok;
}
