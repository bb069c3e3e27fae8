//===- Abi.cpp - The step ABI descriptor, read by the driver --------------===//

#include "Abi.h"

#include "Json.h"

#include <cstring>

using namespace zero::driver;

size_t zero::driver::dtypeBytes(DType type) {
  switch (type) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::BF16:
  case DType::F16:
  case DType::I16:
    return 2;
  case DType::I8:
    return 1;
  }
  return 0;
}

const char *zero::driver::dtypeName(DType type) {
  switch (type) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  case DType::I8:
    return "i8";
  case DType::I16:
    return "i16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  return "?";
}

bool zero::driver::isFloat(DType type) {
  return type == DType::F32 || type == DType::F64 || type == DType::BF16 ||
         type == DType::F16;
}

std::string zero::driver::shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool zero::driver::parseDType(const std::string &name, DType &out) {
  for (DType t : {DType::F32, DType::F64, DType::BF16, DType::F16, DType::I8,
                  DType::I16, DType::I32, DType::I64})
    if (name == dtypeName(t))
      return out = t, true;
  return false;
}

const Entry *Abi::find(const std::string &role) const {
  for (const Entry &e : entries)
    if (e.role == role)
      return &e;
  return nullptr;
}

namespace {
/// Field access with one error message for every kind of mismatch.
class Reader {
public:
  std::string error;

  bool fail(const std::string &what) {
    if (error.empty())
      error = what;
    return false;
  }
  const JsonValue *field(const JsonValue &obj, const char *name,
                         JsonValue::Kind kind, const std::string &where) {
    const JsonValue *v = obj.isObject() ? obj.get(name) : nullptr;
    if (!v || v->kind() != kind) {
      fail(where + " has no valid '" + name + "'");
      return nullptr;
    }
    return v;
  }
  bool string(const JsonValue &obj, const char *name, std::string &out,
              const std::string &where) {
    const JsonValue *v = field(obj, name, JsonValue::Kind::String, where);
    return v && (out = v->asString(), true);
  }
  bool integer(const JsonValue &obj, const char *name, int64_t &out,
               const std::string &where, int64_t min = 0) {
    const JsonValue *v = field(obj, name, JsonValue::Kind::Number, where);
    if (!v)
      return false;
    if (!v->isInteger() || v->asInt() < min)
      return fail(where + ": '" + name + "' must be an integer >= " +
                  std::to_string(min));
    out = v->asInt();
    return true;
  }
  bool flag(const JsonValue &obj, const char *name, bool &out) {
    const JsonValue *v = obj.get(name);
    out = v && v->isBool() && v->asBool();
    return true;
  }
  bool dtype(const JsonValue &obj, DType &out, const std::string &where) {
    std::string name;
    if (!string(obj, "dtype", name, where))
      return false;
    if (parseDType(name, out))
      return true;
    return fail(where + " has unknown dtype '" + name + "'");
  }
  bool shape(const JsonValue &obj, std::vector<int64_t> &out,
             const std::string &where, int64_t *elements = nullptr) {
    const JsonValue *v = field(obj, "shape", JsonValue::Kind::Array, where);
    if (!v)
      return false;
    int64_t n = 1;
    for (const JsonValue &d : v->items()) {
      if (!d.isInteger() || d.asInt() < 0)
        return fail(where + " has a shape with a negative or non-integer size");
      if (d.asInt() != 0 && n > INT64_MAX / d.asInt())
        return fail(where + " has a shape whose element count overflows");
      n *= d.asInt();
      out.push_back(d.asInt());
    }
    if (elements)
      *elements = n;
    return true;
  }
  bool number(const JsonValue &obj, const char *name, double &out,
              const std::string &where) {
    const JsonValue *v = field(obj, name, JsonValue::Kind::Number, where);
    return v && (out = v->asDouble(), true);
  }
};

/// A parameter's "init" object (`where` names the parameter).
bool readInit(Reader &r, const JsonValue &init, InitSpec &s,
              const std::string &where) {
  std::string kind;
  if (!r.string(init, "kind", kind, where + "'s init"))
    return false;
  if (kind == "normal") {
    s.kind = InitSpec::Kind::Normal;
    if (!r.number(init, "std", s.std, where + "'s init"))
      return false;
    if (init.get("mean") && !r.number(init, "mean", s.mean, where))
      return false;
  } else if (kind == "uniform") {
    s.kind = InitSpec::Kind::Uniform;
    if (!r.number(init, "low", s.low, where + "'s init") ||
        !r.number(init, "high", s.high, where + "'s init"))
      return false;
  } else if (kind == "constant") {
    s.kind = InitSpec::Kind::Constant;
    if (!r.number(init, "value", s.value, where + "'s init"))
      return false;
  } else {
    return r.fail(where + " has unknown init kind '" + kind + "'");
  }
  return true;
}

/// The descriptor's "params": each parameter's layout and init.
bool readParams(Reader &r, const JsonValue &root, Abi &abi) {
  const JsonValue *params =
      r.field(root, "params", JsonValue::Kind::Array, "the descriptor");
  if (!params)
    return false;
  for (const JsonValue &p : params->items()) {
    Param param;
    std::string where = "parameter #" + std::to_string(abi.params.size());
    int64_t elements = 0;
    if (!r.string(p, "name", param.name, where) || !r.dtype(p, param.dtype, where) ||
        !r.shape(p, param.shape, where, &elements) ||
        !r.integer(p, "numel", param.numel, where) ||
        !r.integer(p, "padded", param.padded, where) ||
        !r.integer(p, "shard", param.shard, where))
      return false;
    where = "parameter '" + param.name + "'";
    if (elements != param.numel || param.padded < param.numel ||
        param.padded != param.shard * abi.worldSize)
      return r.fail(where + " has an inconsistent layout");
    if (const JsonValue *init = p.get("init"))
      if (!readInit(r, *init, param.init, where))
        return false;
    abi.params.push_back(std::move(param));
  }
  return true;
}

/// The descriptor's "states": each optimizer state and its parameter.
bool readStates(Reader &r, const JsonValue &root, Abi &abi) {
  const JsonValue *states =
      r.field(root, "states", JsonValue::Kind::Array, "the descriptor");
  if (!states)
    return false;
  for (const JsonValue &s : states->items()) {
    State state;
    std::string where = "state #" + std::to_string(abi.states.size());
    int64_t param = 0;
    if (!r.integer(s, "param", param, where) ||
        !r.string(s, "kind", state.kind, where) || !r.dtype(s, state.dtype, where) ||
        !r.shape(s, state.shape, where))
      return false;
    if (param >= static_cast<int64_t>(abi.params.size()))
      return r.fail(where + " names no parameter");
    state.param = static_cast<unsigned>(param);
    abi.states.push_back(std::move(state));
  }
  return true;
}

/// The descriptor's "batch" inputs.
bool readBatch(Reader &r, const JsonValue &root, Abi &abi) {
  const JsonValue *batch =
      r.field(root, "batch", JsonValue::Kind::Array, "the descriptor");
  if (!batch)
    return false;
  for (const JsonValue &b : batch->items()) {
    BatchInput in;
    std::string where = "batch input #" + std::to_string(abi.batch.size());
    if (!r.string(b, "name", in.name, where) || !r.dtype(b, in.dtype, where) ||
        !r.shape(b, in.shape, where))
      return false;
    if (b.get("token_range") &&
        !r.integer(b, "token_range", in.tokenRange, where, 1))
      return false;
    abi.batch.push_back(std::move(in));
  }
  return true;
}

/// The descriptor's "hypers": each hyper-parameter and its default.
bool readHypers(Reader &r, const JsonValue &root, Abi &abi) {
  const JsonValue *hypers =
      r.field(root, "hypers", JsonValue::Kind::Array, "the descriptor");
  if (!hypers)
    return false;
  for (const JsonValue &h : hypers->items()) {
    Hyper hyper;
    std::string where = "hyper-parameter #" + std::to_string(abi.hypers.size());
    if (!r.string(h, "name", hyper.name, where) || !r.dtype(h, hyper.dtype, where))
      return false;
    if (h.get("default")) {
      if (!r.number(h, "default", hyper.defaultValue, where))
        return false;
      hyper.hasDefault = true;
    }
    abi.hypers.push_back(std::move(hyper));
  }
  return true;
}

/// One argument of an entry (`where` names it), checked against the lists
/// read before it.
bool readArg(Reader &r, const JsonValue &a, const Abi &abi, Arg &arg,
             const std::string &argWhere) {
  std::string role;
  int64_t index = 0;
  if (!r.string(a, "role", role, argWhere) ||
      !r.integer(a, "index", index, argWhere) ||
      !r.dtype(a, arg.dtype, argWhere))
    return false;
  r.flag(a, "scalar", arg.scalar);
  r.flag(a, "sharded", arg.sharded);
  r.flag(a, "out_copy", arg.outCopy);
  if (a.get("placement")) {
    std::string placement;
    if (!r.string(a, "placement", placement, argWhere))
      return false;
    if (placement != "nvme" && placement != "host")
      return r.fail(argWhere + " has placement '" + placement +
                         "'; this driver knows 'nvme' and 'host'");
    arg.nvme = placement == "nvme";
    arg.host = placement == "host";
  }
  if (!arg.scalar && !r.shape(a, arg.shape, argWhere, &arg.elements))
    return false;
  size_t limit = 0;
  if (role == "param" || role == "grad") {
    arg.role = role == "param" ? Role::Param : Role::Grad;
    limit = abi.params.size();
  } else if (role == "state") {
    arg.role = Role::State;
    limit = abi.states.size();
  } else if (role == "batch") {
    arg.role = Role::Batch;
    limit = abi.batch.size();
  } else if (role == "hyper") {
    arg.role = Role::Hyper;
    limit = abi.hypers.size();
  } else if (role == "loss") {
    arg.role = Role::Loss;
    limit = 1;
  } else {
    return r.fail(argWhere + " has unknown role '" + role + "'");
  }
  if (index >= static_cast<int64_t>(limit))
    return r.fail(argWhere + " has an index out of range");
  arg.index = static_cast<unsigned>(index);
  if (arg.scalar && arg.role != Role::Hyper)
    return r.fail(argWhere + " is a scalar but no hyper-parameter");
  return true;
}

} // namespace

bool zero::driver::readAbi(const char *json, const zrt_step_entry *table,
                           Abi &abi, std::string &error) {
  if (!json) {
    error = "the step exports no ABI descriptor (" ZRT_STEP_ABI_SYMBOL ")";
    return false;
  }
  JsonValue root;
  std::string parseError;
  if (!parseJson(json, root, parseError)) {
    error = "the step's ABI descriptor is not valid JSON: " + parseError;
    return false;
  }
  Reader r;
  auto done = [&](bool ok) {
    if (!ok)
      error = "the step's ABI descriptor is malformed: " + r.error;
    return ok;
  };
  int64_t version = 0;
  if (!r.integer(root, "abi_version", version, "the descriptor"))
    return done(false);
  if (version != ZRT_STEP_ABI_VERSION) {
    error = "the step's ABI descriptor has version " + std::to_string(version) +
            " but this driver reads version " +
            std::to_string(ZRT_STEP_ABI_VERSION) +
            "; compile the step with the zero-mlir this driver belongs to";
    return false;
  }
  if (!r.flag(root, "partitioned", abi.partitioned) ||
      !r.integer(root, "stage", abi.stage, "the descriptor") ||
      !r.integer(root, "world_size", abi.worldSize, "the descriptor", 1))
    return done(false);
  if (abi.stage > 3)
    return done(r.fail("stage " + std::to_string(abi.stage) + " is not 0-3"));
  // The runtime backend the step was lowered for; descriptors written
  // before target=cuda existed have none and are CPU steps.
  if (root.get("backend") && !r.string(root, "backend", abi.backend, "the descriptor"))
    return done(false);
  if (abi.backend != "cpu" && abi.backend != "cuda")
    return done(r.fail("the descriptor's backend '" + abi.backend +
                       "' is neither 'cpu' nor 'cuda'"));

  if (!readParams(r, root, abi) || !readStates(r, root, abi) ||
      !readBatch(r, root, abi) || !readHypers(r, root, abi))
    return done(false);

  const JsonValue *loss =
      r.field(root, "loss", JsonValue::Kind::Object, "the descriptor");
  if (!loss || !r.dtype(*loss, abi.lossType, "the loss"))
    return done(false);

  const JsonValue *entries =
      r.field(root, "entries", JsonValue::Kind::Array, "the descriptor");
  if (!entries)
    return done(false);
  for (const JsonValue &e : entries->items()) {
    Entry entry;
    std::string where = "entry #" + std::to_string(abi.entries.size());
    if (!r.string(e, "name", entry.name, where) ||
        !r.string(e, "role", entry.role, where))
      return done(false);
    where = "entry '" + entry.name + "'";
    const JsonValue *args = r.field(e, "args", JsonValue::Kind::Array, where);
    if (!args)
      return done(false);
    for (const JsonValue &a : args->items()) {
      Arg arg;
      std::string argWhere =
          where + " argument #" + std::to_string(entry.args.size());
      if (!readArg(r, a, abi, arg, argWhere))
        return done(false);
      entry.args.push_back(std::move(arg));
    }
    for (const zrt_step_entry *t = table; t && t->name; ++t)
      if (entry.name == t->name)
        entry.fn = t->fn;
    if (!entry.fn) {
      error = "the step exports no packed function for entry '" + entry.name +
              "' in " ZRT_STEP_ENTRIES_SYMBOL;
      return false;
    }
    abi.entries.push_back(std::move(entry));
  }
  return done(true);
}
