//===- Json.cpp - JSON values for the driver, read and written by nlohmann/json ===//

#include "Json.h"

#include <nlohmann/json.hpp>

#include <unordered_set>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace zero::driver;

JsonValue JsonValue::boolean(bool b) {
  JsonValue v;
  v.k = Kind::Bool;
  v.b = b;
  return v;
}

JsonValue JsonValue::number(double d) {
  JsonValue v;
  v.k = Kind::Number;
  v.d = d;
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.007199254740992e15) {
    v.exactInt = true;
    v.i = static_cast<int64_t>(d);
  }
  return v;
}

JsonValue JsonValue::integer(int64_t i) {
  JsonValue v;
  v.k = Kind::Number;
  v.exactInt = true;
  v.i = i;
  v.d = static_cast<double>(i);
  return v;
}

JsonValue JsonValue::string(std::string s) {
  JsonValue v;
  v.k = Kind::String;
  v.s = std::move(s);
  return v;
}

JsonValue JsonValue::array() {
  JsonValue v;
  v.k = Kind::Array;
  return v;
}

JsonValue JsonValue::object() {
  JsonValue v;
  v.k = Kind::Object;
  return v;
}

const JsonValue *JsonValue::get(const std::string &key) const {
  for (const auto &m : obj)
    if (m.first == key)
      return &m.second;
  return nullptr;
}

JsonValue &JsonValue::push(JsonValue v) {
  arr.push_back(std::move(v));
  return arr.back();
}

JsonValue &JsonValue::append(std::string key, JsonValue v) {
  obj.emplace_back(std::move(key), std::move(v));
  return obj.back().second;
}

JsonValue &JsonValue::set(const std::string &key, JsonValue v) {
  for (auto &m : obj)
    if (m.first == key)
      return m.second = std::move(v);
  obj.emplace_back(key, std::move(v));
  return obj.back().second;
}

namespace {

/// JsonValue as nlohmann/json's ordered value (members in insertion order).
nlohmann::ordered_json toLibrary(const JsonValue &v) {
  switch (v.kind()) {
  case JsonValue::Kind::Null:
    return nullptr;
  case JsonValue::Kind::Bool:
    return v.asBool();
  case JsonValue::Kind::Number:
    if (v.isInteger())
      return v.asInt();
    return v.asDouble(); // Not finite: the library writes null, as JSON has
                         // no inf or NaN.
  case JsonValue::Kind::String:
    return v.asString();
  case JsonValue::Kind::Array: {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const JsonValue &item : v.items())
      a.push_back(toLibrary(item));
    return a;
  }
  case JsonValue::Kind::Object: {
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (const auto &[key, value] : v.members())
      o[key] = toLibrary(value);
    return o;
  }
  }
  return nullptr;
}

/// Builds a JsonValue from nlohmann/json's SAX events, without recursion
/// and without exceptions, nested at most kMaxDepth deep.
class Builder {
public:
  static constexpr size_t kMaxDepth = 128;

  explicit Builder(JsonValue &root) : root(root) {}

  bool null() { return add(JsonValue()); }
  bool boolean(bool b) { return add(JsonValue::boolean(b)); }
  bool number_integer(int64_t i) { return add(JsonValue::integer(i)); }
  bool number_unsigned(uint64_t u) {
    return add(u <= static_cast<uint64_t>(INT64_MAX)
                   ? JsonValue::integer(static_cast<int64_t>(u))
                   : JsonValue::number(static_cast<double>(u)));
  }
  bool number_float(double d, const std::string &) {
    return add(JsonValue::number(d));
  }
  bool string(std::string &s) { return add(JsonValue::string(std::move(s))); }
  bool binary(std::vector<std::uint8_t> &) { return fail("binary value"); }
  bool start_object(std::size_t) { return open(JsonValue::object()); }
  bool key(std::string &k) {
    if (!stack.back().keys.insert(k).second)
      return fail("the key '" + k + "' appears twice in one object");
    pendingKey = std::move(k);
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(JsonValue::array()); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 2:
    // syntax error ...": the part after the library's tag.
    std::string what = e.what();
    size_t tag = what.find("] ");
    return fail((tag == std::string::npos ? what : what.substr(tag + 2)) +
                " at byte " + std::to_string(position));
  }

  std::string error;

private:
  bool fail(const std::string &why) {
    if (error.empty())
      error = why;
    return false;
  }
  /// Puts `v` where the next value goes: the root, the next item of the
  /// innermost array, or the member of the innermost object named by the
  /// last key. Returns where it went.
  JsonValue *place(JsonValue v) {
    if (stack.empty()) {
      root = std::move(v);
      return &root;
    }
    JsonValue &top = *stack.back().value;
    if (top.isArray())
      return &top.push(std::move(v));
    // key() saw to it that the name is new.
    return &top.append(std::move(pendingKey), std::move(v));
  }
  bool add(JsonValue v) {
    place(std::move(v));
    return true;
  }
  bool open(JsonValue container) {
    if (stack.size() >= kMaxDepth)
      return fail("nested deeper than " + std::to_string(kMaxDepth) +
                  " levels");
    stack.push_back({place(std::move(container)), {}});
    return true;
  }
  bool close() {
    stack.pop_back();
    return true;
  }

  /// An open array or object (pointers into its parent stay valid: only
  /// the innermost container grows), and the keys an object has.
  struct Open {
    JsonValue *value;
    std::unordered_set<std::string> keys;
  };
  JsonValue &root;
  std::vector<Open> stack;
  std::string pendingKey;
};

} // namespace

std::string JsonValue::dump(int indent) const {
  // Strings that are not UTF-8 (a path in another encoding) are written
  // with U+FFFD in place of the bad bytes rather than failing the write.
  return toLibrary(*this).dump(indent, ' ', /*ensure_ascii=*/false,
                               nlohmann::ordered_json::error_handler_t::replace);
}

bool zero::driver::parseJson(const std::string &text, JsonValue &out,
                             std::string &error) {
  out = JsonValue();
  Builder builder(out);
  bool ok = false;
  try {
    ok = nlohmann::ordered_json::sax_parse(text, &builder);
  } catch (const std::exception &e) {
    builder.error = e.what();
  }
  if (!ok) {
    error = builder.error.empty() ? "not a JSON value" : builder.error;
    out = JsonValue();
  }
  return ok;
}
