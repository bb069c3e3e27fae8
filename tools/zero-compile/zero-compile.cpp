//===- zero-compile.cpp - Ahead-of-time training binaries -----------------===//
//
// zero-compile MODULE --stage S --world-size N -o train: the same
// compilation zero-run does (zero/Target/CompileStep.h), written as an
// executable that links the object with the MLIR-free driver and the static
// runtime, or with -c as an object file and a C header declaring the step's
// entry points for linking into another program.
//
//===----------------------------------------------------------------------===//

#include "ZeroCompileConfig.h"

#include "zero/Conversion/StepAbi.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/InitAll.h"
#include "zero/Support/InputFile.h"
#include "zero/Target/CompileFlags.h"
#include "zero/Target/CompileStep.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>

using namespace mlir;
using namespace mlir::zero;

namespace {
constexpr const char *kUsageHead = R"(zero-compile: compile a training step ahead of time

USAGE: zero-compile [options] <module.mlir | -> -o <output>

  zero-gen gpt --preset gpt-tiny -o step.mlir
  zero-compile step.mlir --stage 3 --world-size 4 -o train
  mpirun -np 4 ./train --steps 100 --stats-json stats.json

Writes a standalone training executable: the step's object code linked with
the training driver and the runtime (no MLIR or LLVM at run time). It takes
zero-run's training options (./train --help) and gives the parameters
zero-run gives for the same module, stage and ranks. With -c it writes an
object file and, beside it, a C header (<output minus extension>.h) that
declares the step's entry points, for linking into another program with
libzero_runtime (docs/runtime-abi.md).

The module is a training step (docs/training-step-ir.md), a module that
zero-opt --zero-partition rewrote (its stage and world size are kept), or one
lowered by zero-opt --zero-lower-cpu.

Options:
  -o FILE                the executable (or, with -c, the object file)
  -c                     write an object file and a C header instead
)";

/// zero-compile's own flags after the shared ones (CompileFlags.h).
constexpr const char *kUsageTail =
    R"(  --offload optimizer=nvme,params=nvme
                         keep the optimizer states (params=nvme: and the
                         stage-3 parameter shards) on the NVMe tier
                         (zero-offload); the binary then takes
                         --offload nvme-dir=DIR for where
  --offload optimizer=host
                         keep the optimizer states in host memory next to
                         the device and run their updates on the host
                         (ZeRO-Offload; target=cuda and cpu)
  --offload optimizer=host,params=nvme
                         both: the stage-3 parameter shards on the NVMe tier,
                         the optimizer states and their updates on the host,
                         which reads and writes the shards it updates in
                         host memory (target=cpu)
  --linker CXX           the C++ compiler driver that links the executable
                         (default: $ZERO_LINKER, else the compiler zero-mlir
                         was built with)
)";

/// The help: zero-compile's own flags around the shared ones.
std::string usage() {
  return kUsageHead +
         llvm::formatv("  --world-size N         the number of ranks the "
                       "binary runs on (default {0},\n"
                       "                         or the partitioned "
                       "module's)\n",
                       ZeroPartitionPassOptions().worldSize)
             .str() +
         CompileFlags::help() + kUsageTail;
}

struct Options {
  std::string input = "-", output;
  bool haveInput = false, objectOnly = false;
  /// --world-size; none: the partitioned module's, else zero-partition's
  /// default.
  std::optional<int64_t> worldSize;
  /// The flags zero-run takes too, and the CompileOptions they set.
  CompileFlags flags;
  std::string linker;
};

[[noreturn]] void fail(const llvm::Twine &message) {
  llvm::errs() << "zero-compile: error: " << message << "\n";
  std::exit(1);
}

/// Ends with `error`'s line, or with none where the located diagnostics
/// printed already say it all.
[[noreturn]] void failOrDiagnosed(llvm::Error error, llvm::StringRef input) {
  if (error.isA<mlir::zero::DiagnosedError>()) {
    llvm::consumeError(std::move(error));
    std::exit(1);
  }
  fail("'" + input + "': " + llvm::toString(std::move(error)));
}

Options parseOptions(int argc, char **argv) {
  Options opts;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "-" || !arg.starts_with("-")) {
      if (opts.haveInput)
        fail("more than one input module ('" + opts.input + "' and '" + arg +
             "')");
      opts.input = arg.str();
      opts.haveInput = true;
      continue;
    }
    if (arg == "-c") {
      opts.objectOnly = true;
      continue;
    }
    llvm::StringRef name = arg.drop_while([](char c) { return c == '-'; });
    auto [key, inlineValue] = name.split('=');
    bool hasInline = name.contains('=');
    auto value = [&]() -> std::string {
      if (hasInline)
        return inlineValue.str();
      if (i + 1 >= argc)
        fail("option '" + arg + "' needs a value (see zero-compile --help)");
      return argv[++i];
    };
    auto integer = [&](int64_t min, int64_t max) -> int64_t {
      std::string v = value();
      int64_t n;
      if (llvm::StringRef(v).getAsInteger(10, n) || n < min || n > max)
        fail("option '--" + key + "' expects " + llvm::Twine(min) + " to " +
             llvm::Twine(max) + ", got '" + v + "'");
      return n;
    };
    if (key == "h" || key == "help") {
      llvm::outs() << usage();
      std::exit(0);
    } else if (key == "o") {
      opts.output = value();
    } else if (key == "world-size") {
      opts.worldSize = integer(1, 1 << 20);
    } else if (key == "offload") {
      std::string nvmeDir;
      if (llvm::Error error = opts.flags.setPlacements(value(), nvmeDir))
        fail(llvm::toString(std::move(error)));
      if (!nvmeDir.empty())
        fail("--offload nvme-dir is the training run's choice: give it to "
             "the binary (./train --offload nvme-dir=DIR)");
    } else if (key == "linker") {
      opts.linker = value();
    } else if (const CompileFlag *flag = CompileFlags::lookup(key)) {
      if (llvm::Error error =
              opts.flags.set(*flag, flag->takesValue() ? value() : ""))
        fail(llvm::toString(std::move(error)));
    } else {
      fail("unknown option '" + arg + "' (see zero-compile --help)");
    }
  }
  if (opts.output.empty())
    fail("no output given; say where with -o FILE");
  return opts;
}

/// Writes `contents` to `path` whole or not at all (a character device such
/// as /dev/null is written to directly).
void writeFile(llvm::StringRef path, llvm::StringRef contents) {
  if (llvm::Error err = llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
        os << contents;
        return llvm::Error::success();
      }))
    fail("cannot write '" + path + "': " + llvm::toString(std::move(err)));
}

std::string cType(llvm::StringRef dtype) {
  if (dtype == "f32")
    return "float";
  if (dtype == "f64")
    return "double";
  if (dtype == "bf16" || dtype == "f16")
    return "uint16_t";
  return (dtype.starts_with("i") ? "int" + dtype.drop_front().str() + "_t"
                                 : std::string("void"));
}

/// A C header declaring the entry points of `abi` with named, typed
/// parameters and comments saying what each holds.
std::string writeHeader(DictionaryAttr abi, llvm::StringRef guardName,
                        llvm::StringRef source) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto params = abi.getAs<ArrayAttr>("params");
  auto states = abi.getAs<ArrayAttr>("states");
  auto batch = abi.getAs<ArrayAttr>("batch");
  auto hypers = abi.getAs<ArrayAttr>("hypers");
  int64_t stage = abi.getAs<IntegerAttr>("stage").getInt();
  int64_t world = abi.getAs<IntegerAttr>("world_size").getInt();
  bool partitioned = abi.getAs<BoolAttr>("partitioned").getValue();
  os << "/* Generated by zero-compile from " << source << ": "
     << (partitioned ? llvm::formatv("ZeRO stage {0} for {1} ranks", stage,
                                     world)
                           .str()
                     : std::string("unpartitioned, one rank"))
     << ".\n"
        " * Link with the object file and libzero_runtime (zero/runtime.h).\n"
        " * Buffers are contiguous and row-major; the step ABI descriptor\n"
        " * (zero_step_abi, docs/runtime-abi.md) says the same as data. */\n";
  os << "#ifndef " << guardName << "\n#define " << guardName << "\n\n"
     << "#include <stdint.h>\n\n#include \"zero/step.h\"\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "extern const char zero_step_abi[];\n"
     << "extern const zrt_step_entry zero_step_entries[];\n";
  auto dict = [](Attribute a) { return cast<DictionaryAttr>(a); };
  auto str = [](DictionaryAttr d, StringRef key) {
    auto s = d.getAs<StringAttr>(key);
    return s ? s.getValue() : StringRef();
  };
  auto shapeText = [](DictionaryAttr d) {
    auto shape = d.getAs<DenseI64ArrayAttr>("shape");
    std::string s = "[";
    if (shape)
      for (auto [i, v] : llvm::enumerate(shape.asArrayRef()))
        s += (i ? "x" : "") + std::to_string(v);
    return s + "]";
  };
  for (Attribute e : abi.getAs<ArrayAttr>("entries")) {
    DictionaryAttr entry = dict(e);
    os << "\n/* @" << str(entry, "name") << " (" << str(entry, "role")
       << ") */\nvoid " << str(entry, "name") << "(";
    auto args = entry.getAs<ArrayAttr>("args");
    llvm::StringSet<> used;
    for (auto [i, a] : llvm::enumerate(args)) {
      DictionaryAttr arg = dict(a);
      StringRef role = str(arg, "role");
      int64_t index = arg.getAs<IntegerAttr>("index").getInt();
      std::string what, label;
      if (role == "param" || role == "grad") {
        DictionaryAttr p = dict(params[index]);
        label = (role == "grad" ? "grad_" : "") + str(p, "name").str();
        what = llvm::formatv("{0} '{1}' {2}", role, str(p, "name"),
                             shapeText(p));
      } else if (role == "state") {
        DictionaryAttr s = dict(states[index]);
        DictionaryAttr p =
            dict(params[s.getAs<IntegerAttr>("param").getInt()]);
        label = str(s, "kind").str() + "_" + str(p, "name").str();
        what = llvm::formatv("state '{0}' of '{1}'", str(s, "kind"),
                             str(p, "name"));
      } else if (role == "batch") {
        label = str(dict(batch[index]), "name").str();
        what = "batch '" + label + "'";
      } else if (role == "hyper") {
        label = str(dict(hypers[index]), "name").str();
        what = "hyper-parameter '" + label + "'";
      } else {
        label = "loss";
        what = "loss";
      }
      // A C identifier, unique among the parameters.
      for (char &c : label)
        if (!llvm::isAlnum(c))
          c = '_';
      if (label.empty() || llvm::isDigit(label[0]))
        label = "a_" + label;
      std::string unique = label;
      for (int n = 2; !used.insert(unique).second; ++n)
        unique = label + "_" + std::to_string(n);
      bool scalar = arg.get("scalar") != nullptr;
      if (!scalar) {
        what += ", buffer " + shapeText(arg);
        if (arg.get("sharded"))
          what += " (this rank's shard)";
        if (arg.get("out_copy"))
          what += " (out: the new value, copy it back)";
      }
      os << (i ? ",\n    " : "\n    ") << cType(str(arg, "dtype"))
         << (scalar ? " " : " *") << unique << " /* " << what << " */";
    }
    os << ");\n";
  }
  os << "\n#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n#endif /* "
     << guardName << " */\n";
  return text;
}

/// The directory of the libraries this zero-compile belongs to: the build
/// tree's or the install tree's lib/, beside bin/.
std::string libraryDir(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&libraryDir));
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(
      llvm::sys::path::parent_path(exe)));
  llvm::sys::path::append(dir, "lib");
  return std::string(dir);
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerZeroPassesAndPipelines();
  Options opts = parseOptions(argc, argv);

  auto input = readInputFile(opts.input);
  if (!input)
    fail(llvm::toString(input.takeError()));
  StepLoader loader;
  auto parsed = loader.parse(std::move(*input), opts.input);
  if (!parsed)
    failOrDiagnosed(parsed.takeError(), opts.input);
  OwningOpRef<ModuleOp> module = std::move(*parsed);

  StepInfo info = inspectStep(*module);
  CompileOptions options = opts.flags.options;
  if (opts.worldSize)
    options.pipeline.partition.worldSize = *opts.worldSize;
  else if (info.partitioned)
    options.pipeline.partition.worldSize = info.worldSize;
  if (llvm::Error error = opts.flags.check())
    fail(llvm::toString(std::move(error)));
  llvm::Expected<std::string> object = compileStep(*module, options);
  if (!object)
    failOrDiagnosed(object.takeError(), opts.input);

  if (opts.objectOnly) {
    auto abi = (*module)->getAttrOfType<DictionaryAttr>(
        ZeroDialect::StepAbiAttrHelper::getNameStr());
    if (!abi)
      fail("'" + opts.input + "' has no zero.step_abi descriptor to declare "
           "its entry points from");
    llvm::SmallString<256> header(opts.output);
    llvm::sys::path::replace_extension(header, ".h");
    if (header == opts.output)
      header += ".h";
    std::string guard = "ZERO_STEP_" +
                        llvm::sys::path::stem(opts.output).upper() + "_H";
    for (char &c : guard)
      if (!llvm::isAlnum(c))
        c = '_';
    writeFile(opts.output, *object);
    writeFile(header, writeHeader(abi, guard, opts.input == "-"
                                                  ? std::string("<stdin>")
                                                  : opts.input));
    return 0;
  }

  // Link: the object, main(), the driver, the static runtime and what the
  // runtime needs, into a temporary file beside the output, then renamed.
  std::string lib = libraryDir(argv[0]);
  llvm::SmallString<256> objectPath, linked;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "zero-step", "o", fd, objectPath))
    fail("cannot create a temporary object file: " + ec.message());
  llvm::FileRemover removeObject(objectPath);
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << *object;
    os.close();
    if (os.has_error())
      fail("cannot write '" + objectPath + "': " + os.error().message());
  }
  linked = opts.output;
  linked += ".tmp-link";
  llvm::FileRemover removeLinked(linked);
  std::string linker = opts.linker;
  if (linker.empty())
    if (const char *env = std::getenv("ZERO_LINKER"); env && *env)
      linker = env;
  if (linker.empty())
    linker = ZERO_DEFAULT_LINKER;
  auto linkerPath = llvm::sys::findProgramByName(linker);
  if (!linkerPath)
    fail("cannot find the linker '" + linker +
         "' (install g++ or pass --linker)");
  std::vector<std::string> args = {*linkerPath, "-o", std::string(linked),
                                   std::string(objectPath)};
  for (const char *name : {"libzero_driver_main.a", "libzero_driver.a",
                           "libzero_runtime.a"}) {
    llvm::SmallString<256> path(lib);
    llvm::sys::path::append(path, name);
    if (!llvm::sys::fs::exists(path))
      fail("cannot find " + path +
           " (zero-compile looks for its libraries in ../lib beside its own "
           "directory; is the build or install complete?)");
    args.push_back(std::string(path));
  }
  for (llvm::StringRef l : llvm::split(ZERO_RUNTIME_LINK_LIBRARIES, ';'))
    if (!l.empty())
      args.push_back(l.str());
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*linkerPath, argRefs, std::nullopt, {}, 0,
                                     0, &message);
  if (rc != 0)
    fail("linking failed (" + linker + " exited with " + llvm::Twine(rc) +
         (message.empty() ? "" : ": " + message) + ")");
  if (std::error_code ec = llvm::sys::fs::rename(linked, opts.output))
    fail("cannot write '" + opts.output + "': " + ec.message());
  return 0;
}
