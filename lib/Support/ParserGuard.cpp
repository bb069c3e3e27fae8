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
// Two more found by the mutation tester (integration_tests/tools/mutate.py):
// - linalg.generic's custom parser casts every `iterator_types` entry to a
//   string unchecked; anything else (`[f32]`, `[1]`) aborts or crashes.
//   Only the custom form `linalg.generic {... iterator_types = [...]}` is
//   checked: the generic form `"linalg.generic"(...) <{...}>` takes
//   `#linalg.iterator_type<...>` through the safe attribute parser.
// - Parser::parseDenseArrayAttr asks `index` for its bit width and crashes:
//   `array<index: ...>` anywhere.
//
//===----------------------------------------------------------------------===//

#include "zero/Support/ParserGuard.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <cstring>

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

/// True if `text` (from just after `=`) is not a `[` list or is one of
/// string literals only, as linalg.generic's parser can take.
bool isStringListOrOther(StringRef text) {
  text = text.ltrim();
  if (!text.consume_front("["))
    return true; // Not a list: the upstream parser reports it itself.
  text = text.ltrim();
  if (text.consume_front("]"))
    return true;
  while (true) {
    if (!text.consume_front("\""))
      return false;
    size_t i = 0;
    while (i < text.size() && text[i] != '"')
      i += text[i] == '\\' ? 2 : 1;
    if (i >= text.size())
      return false;
    text = text.drop_front(i + 1).ltrim();
    if (text.consume_front("]"))
      return true;
    if (!text.consume_front(","))
      return false;
    text = text.ltrim();
  }
}

/// The `iterator_types = ` in the attribute dictionary that starts at `text`
/// (`{`), or an empty StringRef: found by key at bracket depth 1, strings
/// skipped.
StringRef findIteratorTypes(StringRef text) {
  int depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '{' || c == '[' || c == '(' || c == '<') {
      ++depth;
    } else if (c == '}' || c == ']' || c == ')' ||
               (c == '>' && text[i - 1] != '-')) { // `->` closes nothing.
      if (--depth <= 0)
        return {};
    } else if (depth == 1 && text.substr(i).starts_with("iterator_types") &&
               !isIdentChar(text[i - 1])) {
      StringRef rest = text.substr(i + strlen("iterator_types"));
      if (!rest.empty() && isIdentChar(rest.front()))
        continue;
      if (rest.ltrim().starts_with("="))
        return text.substr(i);
    }
  }
  return {};
}
/// `tensor.concat` with a negative `dim` passes upstream's check that dim
/// is below the rank and then indexes the shape with it. `rest` follows the
/// op's name; the dim follows the first `key` on the op's line (`dim(` in
/// the custom form, `dim = ` in the generic one's properties).
bool checkConcatDim(SourceMgr &sourceMgr, StringRef rest, StringRef key) {
  rest = rest.take_until([](char c) { return c == '\n'; });
  size_t at = rest.find(key);
  if (at == StringRef::npos)
    return true;
  StringRef value = rest.substr(at + key.size()).ltrim();
  if (!value.starts_with("-"))
    return true;
  sourceMgr.PrintMessage(SMLoc::getFromPointer(value.data()),
                         SourceMgr::DK_Error,
                         "tensor.concat's dim must be a dimension of the "
                         "operands, 0 or more (e.g. dim(1))");
  return false;
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
      size_t start = i;
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      ++i;
      lastSignificant = '"';
      // The generic form: "tensor.concat"(...) <{dim = -1 : i64}>.
      if (text.slice(start, i) == "\"tensor.concat\"")
        ok &= checkConcatDim(sourceMgr, text.substr(i), "dim = ");
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
    if (word == "array") {
      StringRef rest = text.substr(i).ltrim();
      if (rest.consume_front("<") && rest.ltrim().starts_with("index") &&
          (rest.ltrim().size() == 5 || !isIdentChar(rest.ltrim()[5]))) {
        sourceMgr.PrintMessage(
            SMLoc::getFromPointer(text.data() + start), SourceMgr::DK_Error,
            "dense array of 'index' is not supported: its elements must be "
            "integers or floats (e.g. array<i64: 1, 2>)");
        ok = false;
      }
      continue;
    }
    if (word == "tensor.concat") {
      ok &= checkConcatDim(sourceMgr, text.substr(i), "dim(");
      continue;
    }
    if (word == "linalg.generic") {
      StringRef rest = text.substr(i).ltrim();
      if (!rest.starts_with("{"))
        continue;
      StringRef key = findIteratorTypes(rest);
      if (key.empty() ||
          isStringListOrOther(key.drop_front(strlen("iterator_types"))
                                  .ltrim()
                                  .drop_front()))
        continue;
      sourceMgr.PrintMessage(
          SMLoc::getFromPointer(key.data()), SourceMgr::DK_Error,
          "malformed 'iterator_types' list: expected '[' strings separated "
          "by ',' ']' (e.g. iterator_types = [\"parallel\", \"reduction\"])");
      ok = false;
      continue;
    }
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
