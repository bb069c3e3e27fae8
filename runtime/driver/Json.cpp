//===- Json.cpp - A small JSON reader and writer for the driver -----------===//

#include "Json.h"

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

JsonValue &JsonValue::set(const std::string &key, JsonValue v) {
  for (auto &m : obj)
    if (m.first == key)
      return m.second = std::move(v);
  obj.emplace_back(key, std::move(v));
  return obj.back().second;
}

namespace {
void quote(std::string &out, const std::string &s) {
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\r':
      out += "\\r";
      break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out.push_back(static_cast<char>(c));
      }
    }
  }
  out.push_back('"');
}
} // namespace

void JsonValue::dumpTo(std::string &out, int indent, int depth) const {
  auto newline = [&](int level) {
    if (indent < 0)
      return;
    out.push_back('\n');
    out.append(static_cast<size_t>(indent * level), ' ');
  };
  switch (k) {
  case Kind::Null:
    out += "null";
    return;
  case Kind::Bool:
    out += b ? "true" : "false";
    return;
  case Kind::Number: {
    char buf[32];
    if (exactInt)
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(i));
    else if (!std::isfinite(d))
      std::snprintf(buf, sizeof buf, "null"); // JSON has no inf or NaN
    else
      std::snprintf(buf, sizeof buf, "%.17g", d);
    out += buf;
    return;
  }
  case Kind::String:
    quote(out, s);
    return;
  case Kind::Array:
    out.push_back('[');
    for (size_t n = 0; n < arr.size(); ++n) {
      if (n)
        out.push_back(',');
      newline(depth + 1);
      arr[n].dumpTo(out, indent, depth + 1);
    }
    if (!arr.empty())
      newline(depth);
    out.push_back(']');
    return;
  case Kind::Object:
    out.push_back('{');
    for (size_t n = 0; n < obj.size(); ++n) {
      if (n)
        out.push_back(',');
      newline(depth + 1);
      quote(out, obj[n].first);
      out += indent < 0 ? ":" : ": ";
      obj[n].second.dumpTo(out, indent, depth + 1);
    }
    if (!obj.empty())
      newline(depth);
    out.push_back('}');
    return;
  }
}

std::string JsonValue::dump(int indent) const {
  std::string out;
  dumpTo(out, indent, 0);
  return out;
}

namespace {
class Parser {
public:
  explicit Parser(const std::string &text) : t(text) {}

  bool parse(JsonValue &out, std::string &error) {
    bool ok = value(out, 0);
    if (ok) {
      skip();
      if (pos != t.size())
        ok = fail("trailing data");
    }
    if (!ok)
      error = message + " at byte " + std::to_string(pos);
    return ok;
  }

private:
  bool fail(const char *what) {
    if (message.empty())
      message = what;
    return false;
  }
  void skip() {
    while (pos < t.size() &&
           (t[pos] == ' ' || t[pos] == '\n' || t[pos] == '\t' || t[pos] == '\r'))
      ++pos;
  }
  bool literal(const char *word) {
    size_t n = std::strlen(word);
    if (t.compare(pos, n, word) != 0)
      return fail("invalid literal");
    pos += n;
    return true;
  }
  bool value(JsonValue &out, int depth) {
    if (depth > 128)
      return fail("nested too deeply");
    skip();
    if (pos >= t.size())
      return fail("unexpected end");
    char c = t[pos];
    if (c == '{')
      return object(out, depth);
    if (c == '[')
      return array(out, depth);
    if (c == '"') {
      std::string s;
      if (!string(s))
        return false;
      out = JsonValue::string(std::move(s));
      return true;
    }
    if (c == 't')
      return literal("true") && (out = JsonValue::boolean(true), true);
    if (c == 'f')
      return literal("false") && (out = JsonValue::boolean(false), true);
    if (c == 'n')
      return literal("null") && (out = JsonValue(), true);
    return number(out);
  }
  bool number(JsonValue &out) {
    size_t start = pos;
    if (pos < t.size() && t[pos] == '-')
      ++pos;
    bool integral = true, digits = false;
    while (pos < t.size() && t[pos] >= '0' && t[pos] <= '9')
      ++pos, digits = true;
    if (pos < t.size() && t[pos] == '.') {
      integral = false;
      ++pos;
      while (pos < t.size() && t[pos] >= '0' && t[pos] <= '9')
        ++pos;
    }
    if (pos < t.size() && (t[pos] == 'e' || t[pos] == 'E')) {
      integral = false;
      ++pos;
      if (pos < t.size() && (t[pos] == '+' || t[pos] == '-'))
        ++pos;
      while (pos < t.size() && t[pos] >= '0' && t[pos] <= '9')
        ++pos;
    }
    if (!digits)
      return fail("invalid value");
    std::string text = t.substr(start, pos - start);
    if (integral) {
      errno = 0;
      char *end = nullptr;
      long long v = std::strtoll(text.c_str(), &end, 10);
      if (errno == 0 && end && *end == 0) {
        out = JsonValue::integer(v);
        return true;
      }
    }
    out = JsonValue::number(std::strtod(text.c_str(), nullptr));
    return true;
  }
  static void appendUtf8(std::string &s, unsigned cp) {
    if (cp < 0x80) {
      s.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      s.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      s.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      s.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  bool hex4(unsigned &cp) {
    if (pos + 4 > t.size())
      return fail("truncated \\u escape");
    cp = 0;
    for (int n = 0; n < 4; ++n) {
      char c = t[pos++];
      cp <<= 4;
      if (c >= '0' && c <= '9')
        cp |= c - '0';
      else if (c >= 'a' && c <= 'f')
        cp |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        cp |= c - 'A' + 10;
      else
        return fail("invalid \\u escape");
    }
    return true;
  }
  bool string(std::string &s) {
    ++pos; // opening quote
    while (pos < t.size()) {
      char c = t[pos++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in string");
      if (c != '\\') {
        s.push_back(c);
        continue;
      }
      if (pos >= t.size())
        break;
      char e = t[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        s.push_back(e);
        break;
      case 'b':
        s.push_back('\b');
        break;
      case 'f':
        s.push_back('\f');
        break;
      case 'n':
        s.push_back('\n');
        break;
      case 'r':
        s.push_back('\r');
        break;
      case 't':
        s.push_back('\t');
        break;
      case 'u': {
        unsigned cp;
        if (!hex4(cp))
          return false;
        if (cp >= 0xD800 && cp < 0xDC00 && pos + 6 <= t.size() &&
            t[pos] == '\\' && t[pos + 1] == 'u') {
          pos += 2;
          unsigned low;
          if (!hex4(low))
            return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(s, cp);
        break;
      }
      default:
        return fail("invalid escape");
      }
    }
    return fail("unterminated string");
  }
  bool array(JsonValue &out, int depth) {
    ++pos;
    out = JsonValue::array();
    skip();
    if (pos < t.size() && t[pos] == ']')
      return ++pos, true;
    while (true) {
      JsonValue item;
      if (!value(item, depth + 1))
        return false;
      out.push(std::move(item));
      skip();
      if (pos < t.size() && t[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < t.size() && t[pos] == ']')
        return ++pos, true;
      return fail("expected ',' or ']'");
    }
  }
  bool object(JsonValue &out, int depth) {
    ++pos;
    out = JsonValue::object();
    skip();
    if (pos < t.size() && t[pos] == '}')
      return ++pos, true;
    while (true) {
      skip();
      if (pos >= t.size() || t[pos] != '"')
        return fail("expected a member name");
      std::string key;
      if (!string(key))
        return false;
      skip();
      if (pos >= t.size() || t[pos] != ':')
        return fail("expected ':'");
      ++pos;
      JsonValue item;
      if (!value(item, depth + 1))
        return false;
      out.set(key, std::move(item));
      skip();
      if (pos < t.size() && t[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < t.size() && t[pos] == '}')
        return ++pos, true;
      return fail("expected ',' or '}'");
    }
  }

  const std::string &t;
  size_t pos = 0;
  std::string message;
};
} // namespace

bool zero::driver::parseJson(const std::string &text, JsonValue &out,
                             std::string &error) {
  return Parser(text).parse(out, error);
}
