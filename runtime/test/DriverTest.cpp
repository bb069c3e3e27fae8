//===- DriverTest.cpp - The driver's JSON, descriptor checks and options -===//

#include "Abi.h"
#include "Data.h"
#include "Json.h"
#include "Options.h"

#include "zero/driver.h"

#include <gtest/gtest.h>

#include <cstring>
#include <sstream>

using namespace zero::driver;

namespace {
// Round trip through the writer; numbers exact, strings escaped.
TEST(DriverJson, ParsesAndWritesBack) {
  JsonValue v;
  std::string error;
  ASSERT_TRUE(parseJson(
      R"({"a": [1, -2, 3.25e2, true, null], "s": "q\"\\\u00e9\n", "n": {}})",
      v, error))
      << error;
  ASSERT_TRUE(v.isObject());
  const JsonValue *a = v.get("a");
  ASSERT_TRUE(a && a->isArray());
  EXPECT_EQ(a->items()[0].asInt(), 1);
  EXPECT_EQ(a->items()[1].asInt(), -2);
  // Integral numbers are integers, however written.
  EXPECT_TRUE(a->items()[2].isInteger());
  EXPECT_DOUBLE_EQ(a->items()[2].asDouble(), 325.0);
  EXPECT_TRUE(a->items()[3].asBool());
  EXPECT_TRUE(a->items()[4].isNull());
  EXPECT_EQ(v.get("s")->asString(), "q\"\\\xc3\xa9\n");
  JsonValue back;
  ASSERT_TRUE(parseJson(v.dump(2), back, error)) << error;
  EXPECT_EQ(back.dump(-1), v.dump(-1));
}

// Malformed text is an error with the byte offset, never a crash.
TEST(DriverJson, RejectsMalformedText) {
  const char *bad[] = {"",        "{",          "[1,]",   "{\"a\" 1}",
                       "tru",     "\"\\x\"",    "1 2",    "[\"\x01\"]",
                       "{\"a\":}", "\"\\u12\""};
  for (const char *text : bad) {
    JsonValue v;
    std::string error;
    EXPECT_FALSE(parseJson(text, v, error)) << text;
    EXPECT_NE(error.find("at byte"), std::string::npos) << text;
  }
  // Deep nesting is refused, not a stack overflow.
  std::string deep(100000, '[');
  JsonValue v;
  std::string error;
  EXPECT_FALSE(parseJson(deep, v, error));
  EXPECT_NE(error.find("nested deeper than 128 levels"), std::string::npos)
      << error;
  // A name twice in one object is refused (which one would count?).
  EXPECT_FALSE(parseJson(R"({"a": 1, "b": {"a": 2}, "a": 3})", v, error));
  EXPECT_NE(error.find("the key 'a' appears twice"), std::string::npos)
      << error;
  // Text that is not UTF-8 is not JSON.
  EXPECT_FALSE(parseJson("[\"\xff\"]", v, error));
}

// A string that is not UTF-8 (a path in another encoding) is written with
// U+FFFD in place of the bad bytes, and reads back; the write never fails.
TEST(DriverJson, WritesNonUtf8Strings) {
  JsonValue v = JsonValue::object();
  v.set("path", JsonValue::string("caf\xe9"));
  std::string text = v.dump(-1), error;
  EXPECT_EQ(text, "{\"path\":\"caf\xef\xbf\xbd\"}");
  JsonValue back;
  EXPECT_TRUE(parseJson(text, back, error)) << error;
}

void packed(void **) {}

const char *kAbi = R"({"abi_version": 1, "partitioned": true, "stage": 3,
  "world_size": 2,
  "params": [{"name": "w", "dtype": "f32", "shape": [3], "numel": 3,
              "padded": 4, "shard": 2,
              "init": {"kind": "constant", "value": 1.5}}],
  "states": [], "batch": [], "hypers": [{"name": "lr", "dtype": "f32"}],
  "loss": {"dtype": "f32"},
  "entries": [{"name": "train_step", "role": "train_step", "args": [
    {"role": "param", "index": 0, "dtype": "f32", "shape": [2],
     "sharded": true},
    {"role": "hyper", "index": 0, "dtype": "f32", "scalar": true},
    {"role": "loss", "index": 0, "dtype": "f32", "shape": []}]}]})";

// A descriptor binds its entries to the table and keeps every field.
TEST(DriverAbi, ReadsADescriptor) {
  zrt_step_entry table[] = {{"train_step", packed}, {nullptr, nullptr}};
  Abi abi;
  std::string error;
  ASSERT_TRUE(readAbi(kAbi, table, abi, error)) << error;
  EXPECT_TRUE(abi.partitioned);
  EXPECT_EQ(abi.stage, 3);
  ASSERT_EQ(abi.params.size(), 1u);
  EXPECT_EQ(abi.params[0].shard, 2);
  EXPECT_EQ(abi.params[0].init.kind, InitSpec::Kind::Constant);
  const Entry *e = abi.find("train_step");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->fn, &packed);
  ASSERT_EQ(e->args.size(), 3u);
  EXPECT_TRUE(e->args[0].sharded);
  EXPECT_EQ(e->args[0].elements, 2);
  EXPECT_TRUE(e->args[1].scalar);
  EXPECT_EQ(e->args[2].elements, 1);
  // The constant init writes exactly numel elements.
  float values[4] = {0, 0, 0, -7};
  initParam(abi.params[0], 0, 0, values);
  EXPECT_EQ(values[0], 1.5f);
  EXPECT_EQ(values[2], 1.5f);
  EXPECT_EQ(values[3], -7.0f);
}

// Each kind of inconsistency is a one-line error.
TEST(DriverAbi, RejectsInconsistentDescriptors) {
  zrt_step_entry table[] = {{"train_step", packed}, {nullptr, nullptr}};
  struct Case {
    const char *from, *to, *message;
  } cases[] = {
      {"\"abi_version\": 1", "\"abi_version\": 2", "has version 2"},
      {"\"padded\": 4", "\"padded\": 5", "inconsistent layout"},
      {"\"index\": 0, \"dtype\": \"f32\", \"scalar\"",
       "\"index\": 3, \"dtype\": \"f32\", \"scalar\"", "index out of range"},
      {"\"dtype\": \"f32\", \"shape\": [3]", "\"dtype\": \"c64\", \"shape\": [3]",
       "unknown dtype 'c64'"},
      {"\"role\": \"loss\"", "\"role\": \"lost\"", "unknown role 'lost'"},
      {"\"name\": \"train_step\", \"role\"", "\"name\": \"other\", \"role\"",
       "no packed function for entry 'other'"},
      {"\"shape\": [3]", "\"shape\": [9223372036854775807, 3]",
       "element count overflows"},
  };
  for (const Case &c : cases) {
    std::string text = kAbi;
    size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, std::strlen(c.from), c.to);
    Abi abi;
    std::string error;
    EXPECT_FALSE(readAbi(text.c_str(), table, abi, error)) << c.to;
    EXPECT_NE(error.find(c.message), std::string::npos)
        << "expected '" << c.message << "' in: " << error;
  }
}

// Floats are stored in the element type; bf16 rounds to nearest even.
TEST(DriverData, StoresElements) {
  uint16_t h;
  storeElement(DType::BF16, 1.0, &h);
  EXPECT_EQ(h, 0x3F80);
  storeElement(DType::BF16, 1.00390625, &h); // halfway: rounds to even
  EXPECT_EQ(h, 0x3F80);
  EXPECT_DOUBLE_EQ(loadElement(DType::BF16, &h), 1.0);
  int64_t i;
  storeElement(DType::I64, 42.0, &i);
  EXPECT_EQ(i, 42);
}

// The training options of `args` (without argv[0]): true, or false with
// the message in `error`.
bool parse(std::vector<std::string> args, Options &opts, std::string &error) {
  args.insert(args.begin(), "train");
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  return parseOptions(static_cast<int>(argv.size()), argv.data(), opts, error);
}

// Values as --name value, --name=value or -name value; the last one counts,
// --hyper keeps every one, and `given` names what was on the command line.
TEST(DriverOptions, ParsesEveryForm) {
  Options opts;
  std::string error;
  ASSERT_TRUE(parse({"--steps", "7", "--lr=0.5", "-seed", "3", "--steps=010",
                     "--hyper", "a=1", "--hyper=b=2", "--fixed-batch", "--data",
                     "-odd-name", "-help"},
                    opts, error))
      << error;
  EXPECT_EQ(opts.steps, 10u);
  EXPECT_EQ(opts.seed, 3u);
  EXPECT_EQ(opts.lr, 0.5);
  EXPECT_EQ(opts.hyperOverrides, (std::vector<std::string>{"a=1", "b=2"}));
  EXPECT_TRUE(opts.fixedBatch);
  EXPECT_EQ(opts.dataFile, "-odd-name");
  EXPECT_TRUE(opts.help);
  EXPECT_EQ(opts.given, (std::set<std::string>{"steps", "lr", "seed", "hyper",
                                               "fixed-batch", "data"}));
}

// Each mistake is one line that names the option, the value and what was
// expected.
TEST(DriverOptions, RejectsWithOneLine) {
  struct Case {
    std::vector<std::string> args;
    const char *message;
  } cases[] = {
      {{"--stepz", "3"}, "unknown option '--stepz' (see zero-run --help)"},
      {{"-x"}, "unknown option '-x' (see zero-run --help)"},
      {{"--steps"}, "option '--steps' needs a value (see zero-run --help)"},
      {{"--steps", "abc"},
       "option '--steps' expects a non-negative integer, got 'abc'"},
      {{"--steps", "-1"},
       "option '--steps' expects a non-negative integer, got '-1'"},
      {{"--steps", "0x10"},
       "option '--steps' expects a non-negative integer, got '0x10'"},
      {{"--num-threads", "3000000000"},
       "option '--num-threads' expects a non-negative integer in range, got "
       "'3000000000'"},
      {{"--seed", "18446744073709551616"},
       "option '--seed' expects a non-negative integer in range, got "
       "'18446744073709551616'"},
      {{"--lr", "fast"}, "option '--lr' expects a number, got 'fast'"},
      {{"--lr", "inf"}, "option '--lr' expects a number, got 'inf'"},
      {{"--lr", "1e999"}, "option '--lr' expects a number, got '1e999'"},
      {{"--data="}, "option '--data' expects a non-empty value, got ''"},
      {{"--fixed-batch=1"}, "option '--fixed-batch' takes no value"},
      {{"--tf32=true"}, "option '--tf32' takes no value"},
      {{"--help=1"}, "option '--help' takes no value"},
      {{"foo"}, "unexpected argument 'foo' (see zero-run --help)"},
      {{"--hyper", "a=1", "b=2"},
       "unexpected argument 'b=2' (see zero-run --help)"},
      {{"--"}, "unexpected argument '--' (see zero-run --help)"},
      {{"--hyper", "x"}, "--hyper expects NAME=VALUE with a number, got 'x'"},
      {{"--save-keep", "0"},
       "--save-keep must be at least 1 (the checkpoint just saved)"},
  };
  for (const Case &c : cases) {
    Options opts;
    std::string error;
    EXPECT_FALSE(parse(c.args, opts, error)) << c.message;
    EXPECT_EQ(error, c.message);
  }
}

// --help lists every option the arity function knows, by section, in lines
// of at most 79 columns; the arity function knows every option it lists.
TEST(DriverOptions, HelpListsEveryOption) {
  std::string help = zrt_driver_usage();
  EXPECT_EQ(help.rfind("Training:\n", 0), 0u);
  size_t hyper = help.find("\nHyper-parameters (");
  size_t schedule = help.find("\nLearning-rate schedule (");
  size_t check = help.find("\nGradient check (");
  EXPECT_LT(help.find("\nBatches: "), hyper);
  EXPECT_LT(hyper, schedule);
  EXPECT_LT(schedule, check);
  EXPECT_NE(check, std::string::npos);
  std::istringstream lines(help);
  int listed = 0;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 79u) << line;
    if (line.rfind("  --", 0) != 0)
      continue;
    std::string name = line.substr(4, line.find(' ', 4) - 4);
    EXPECT_GE(zrt_driver_option_arity(name.c_str()), 0) << name;
    ++listed;
  }
  EXPECT_EQ(listed, 38);
  EXPECT_NE(help.find("  --sim-link bw=G,latency=U\n"), std::string::npos);
  EXPECT_NE(help.find("  --hyper NAME=VALUE     set any"), std::string::npos);
  EXPECT_EQ(zrt_driver_option_arity("tf32"), 0);
  EXPECT_EQ(zrt_driver_option_arity("hyper"), 1);
  EXPECT_EQ(zrt_driver_option_arity("help"), -1);
}
} // namespace
