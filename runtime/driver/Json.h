//===- Json.h - JSON values for the driver ----------------------*- C++ -*-===//
//
// The driver reads the step ABI descriptor and checkpoint manifests (JSON)
// and writes statistics; it links neither LLVM nor MLIR. A JsonValue is a
// plain tree the driver builds and walks; nlohmann/json (header-only,
// Debian's nlohmann-json3-dev) reads and writes the text, so compiled
// training binaries stay self-contained.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DRIVER_JSON_H
#define ZERO_DRIVER_JSON_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace zero::driver {

class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  JsonValue() = default;
  static JsonValue boolean(bool b);
  static JsonValue number(double d);
  static JsonValue integer(int64_t i);
  static JsonValue string(std::string s);
  static JsonValue array();
  static JsonValue object();

  Kind kind() const { return k; }
  bool isNull() const { return k == Kind::Null; }
  bool isBool() const { return k == Kind::Bool; }
  bool isNumber() const { return k == Kind::Number; }
  bool isString() const { return k == Kind::String; }
  bool isArray() const { return k == Kind::Array; }
  bool isObject() const { return k == Kind::Object; }
  /// Whether the number is an integer that int64 holds exactly.
  bool isInteger() const { return k == Kind::Number && exactInt; }

  bool asBool() const { return b; }
  double asDouble() const { return d; }
  int64_t asInt() const { return i; }
  const std::string &asString() const { return s; }
  const std::vector<JsonValue> &items() const { return arr; }
  const std::vector<std::pair<std::string, JsonValue>> &members() const {
    return obj;
  }
  /// The member called `key`, or nullptr.
  const JsonValue *get(const std::string &key) const;

  /// Building.
  JsonValue &push(JsonValue v);
  JsonValue &set(const std::string &key, JsonValue v);
  /// A member added without looking for one of that name (the caller knows
  /// it is new: the parser, which refuses duplicate names).
  JsonValue &append(std::string key, JsonValue v);

  /// Serializes with two-space indentation (indent < 0: compact).
  std::string dump(int indent = 2) const;

private:
  Kind k = Kind::Null;
  bool b = false, exactInt = false;
  double d = 0;
  int64_t i = 0;
  std::string s;
  std::vector<JsonValue> arr;
  std::vector<std::pair<std::string, JsonValue>> obj;
};

/// Parses `text` as one JSON value (RFC 8259, by nlohmann/json: UTF-8
/// only, at most 128 levels deep, no name twice in one object). On error,
/// returns false and sets `error` to a message with the line, column and
/// byte offset.
bool parseJson(const std::string &text, JsonValue &out, std::string &error);

} // namespace zero::driver

#endif // ZERO_DRIVER_JSON_H
