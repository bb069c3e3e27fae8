//===- Abi.h - The step ABI descriptor, read by the driver ------*- C++ -*-===//
//
// The driver's view of a compiled step: the descriptor's JSON
// (docs/runtime-abi.md) parsed and checked once, with each entry function
// bound to its packed form from the entry table.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DRIVER_ABI_H
#define ZERO_DRIVER_ABI_H

#include "zero/step.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zero::driver {

enum class DType { F32, F64, BF16, F16, I8, I16, I32, I64 };

size_t dtypeBytes(DType type);
const char *dtypeName(DType type);
bool isFloat(DType type);
/// "[64, 32]".
std::string shapeString(const std::vector<int64_t> &shape);
/// The dtype called `name` ("f32", "bf16", ...); false if there is none.
bool parseDType(const std::string &name, DType &out);

/// How a parameter is initialized (`zero.init`); Default when the module
/// says nothing: normal(0, 1/sqrt(shape[0])) for tensors of rank >= 2, zero
/// otherwise (docs/runtime-abi.md).
struct InitSpec {
  enum class Kind { Default, Normal, Uniform, Constant } kind = Kind::Default;
  double mean = 0, std = 0, low = 0, high = 0, value = 0;
};

struct Param {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  int64_t numel, padded, shard;
  InitSpec init;
};

struct State {
  unsigned param;
  std::string kind;
  DType dtype;
  std::vector<int64_t> shape;
};

struct BatchInput {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  int64_t tokenRange = 0; ///< 0: not given.
};

struct Hyper {
  std::string name;
  DType dtype;
  bool hasDefault = false; ///< The module's zero.hyper_default.
  double defaultValue = 0;
};

enum class Role { Param, Grad, State, Batch, Hyper, Loss };

struct Arg {
  Role role;
  unsigned index;
  DType dtype;
  std::vector<int64_t> shape;
  int64_t elements = 1;
  bool scalar = false, sharded = false, outCopy = false;
  /// On the NVMe tier: passed as the extent's handle (an int64 by value).
  bool nvme = false;
  /// In host memory next to the device (zero-offload's optimizer=host).
  bool host = false;
};

struct Entry {
  std::string name, role;
  std::vector<Arg> args;
  zrt_packed_fn fn = nullptr;
};

struct Abi {
  bool partitioned = false;
  int64_t stage = 0, worldSize = 1;
  /// The runtime backend the step was lowered for: "cpu" or "cuda".
  std::string backend = "cpu";
  std::vector<Param> params;
  std::vector<State> states;
  std::vector<BatchInput> batch;
  std::vector<Hyper> hypers;
  DType lossType = DType::F32;
  std::vector<Entry> entries;

  /// The entry with `role` ("train_step", "forward_backward", "optimizer"),
  /// or nullptr.
  const Entry *find(const std::string &role) const;
};

/// Reads and checks the descriptor, binding every entry to `table`. On
/// failure returns false with a one-line message.
bool readAbi(const char *json, const zrt_step_entry *table, Abi &abi,
             std::string &error);

} // namespace zero::driver

#endif // ZERO_DRIVER_ABI_H
