//===- zero-run.cpp - Compile a training step once and train it -----------===//
//
// zero-run MODULE: compiles a training step for the ranks of the job and
// trains it with the MLIR-free driver (zero/driver.h), the same driver
// zero-compile links into training binaries. A job compiles once: rank 0
// lowers the module with the pipeline its form needs
// (zero/Target/CompileStep.h, with the flags zero-compile shares,
// CompileFlags.h) and emits an object file, or takes it from the on-disk
// cache; every rank receives the object over the runtime's broadcast and
// links it into its own process (LLVM's JIT linker, no system linker).
//
//===----------------------------------------------------------------------===//

#include "zero/InitAll.h"
#include "zero/Support/InputFile.h"
#include "zero/Target/CompileFlags.h"
#include "zero/Target/CompileStep.h"

#include "zero/driver.h"
#include "zero/runtime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <thread>

using namespace mlir;
using namespace mlir::zero;

namespace {
constexpr const char *kUsageHead = R"(zero-run: compile a training step once and train it on the CPU or a GPU

USAGE: [mpirun -np N] zero-run [options] <module.mlir | ->

  zero-gen gpt --preset gpt-tiny | zero-run - --steps 200 --lr 3e-3
  mpirun -np 4 zero-run step.mlir --stage 3 --steps 100

The module is a training step (docs/training-step-ir.md), a module that
zero-opt --zero-partition rewrote for this job's number of ranks, or one
lowered by zero-opt --zero-lower-cpu (it carries its step ABI). Rank 0
compiles it (or takes it from the cache), the other ranks load what rank 0
compiled, and every rank trains with the driver that zero-compile's binaries
use too.

Compilation:
)";

/// zero-run's own flags after the shared ones (CompileFlags.h).
constexpr const char *kUsageTail =
    R"(  --cache-dir DIR        where compiled steps are kept, keyed by the module,
                         these options and the compiler (default:
                         $ZERO_CACHE_DIR, else $XDG_CACHE_HOME/zero-mlir,
                         else ~/.cache/zero-mlir)
  --no-cache             compile without reading or writing the cache

)";

struct RunOptions {
  std::string input = "-";
  bool haveInput = false;
  /// The flags zero-compile takes too, and the CompileOptions they set.
  CompileFlags flags;
  /// The driver's --sim-link and --offload, which compilation reads too.
  std::string simLink, offload;
  std::string cacheDir;
  bool noCache = false;
  bool help = false;
  /// Everything else, for the driver (argv[0] first).
  std::vector<char *> forwarded;
};

/// A failure this rank alone may meet: one line, and the job ends.
[[noreturn]] void fail(const llvm::Twine &message) {
  std::string line = ("zero-run: error: " + message).str();
  zrt_abort(line.c_str());
}

/// A failure every rank meets alike (an option, an output path): printed
/// once, by rank 0.
[[noreturn]] void failAll(const llvm::Twine &message) {
  std::string line = ("zero-run: error: " + message).str();
  zrt_abort_all(line.c_str());
}

/// Splits zero-run's own options from the driver's.
RunOptions parseOptions(int argc, char **argv) {
  RunOptions opts;
  opts.forwarded.push_back(argv[0]);
  auto value = [&](int &i, llvm::StringRef key, llvm::StringRef inlineValue,
                   bool hasInline) -> std::string {
    if (hasInline)
      return inlineValue.str();
    if (i + 1 >= argc)
      failAll("option '--" + key + "' needs a value (see zero-run --help)");
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "-" || !arg.starts_with("-")) {
      if (opts.haveInput)
        failAll("more than one input module ('" + opts.input + "' and '" + arg +
             "')");
      opts.input = arg.str();
      opts.haveInput = true;
      continue;
    }
    llvm::StringRef name = arg.drop_while([](char c) { return c == '-'; });
    auto [key, inlineValue] = name.split('=');
    bool hasInline = name.contains('=');
    auto flag = [&]() {
      if (hasInline)
        failAll("option '--" + key + "' takes no value");
    };
    if (key == "h" || key == "help") {
      opts.help = true;
    } else if (const CompileFlag *shared = CompileFlags::lookup(key)) {
      if (!shared->takesValue())
        flag();
      if (llvm::Error error = opts.flags.set(
              *shared, shared->takesValue()
                           ? value(i, key, inlineValue, hasInline)
                           : ""))
        failAll(llvm::toString(std::move(error)));
    } else if (key == "cache-dir") {
      opts.cacheDir = value(i, key, inlineValue, hasInline);
      if (opts.cacheDir.empty())
        failAll("option '--cache-dir' expects a directory");
    } else if (key == "no-cache") {
      flag();
      opts.noCache = true;
    } else {
      // The driver's: keep its value with it.
      int arity = zrt_driver_option_arity(key.str().c_str());
      if (arity < 0)
        failAll("unknown option '" + arg + "' (see zero-run --help)");
      opts.forwarded.push_back(argv[i]);
      if (key == "sim-link")
        opts.simLink = hasInline ? inlineValue.str()
                                 : (i + 1 < argc ? argv[i + 1] : "");
      // The placements are compiled in; the driver opens the directory.
      if (key == "offload")
        opts.offload = hasInline ? inlineValue.str()
                                 : (i + 1 < argc ? argv[i + 1] : "");
      if (!hasInline && arity == 1 && i + 1 < argc)
        opts.forwarded.push_back(argv[++i]);
    }
  }
  return opts;
}

std::string defaultCacheDir() {
  if (const char *dir = std::getenv("ZERO_CACHE_DIR"); dir && *dir)
    return dir;
  llvm::SmallString<128> path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    path = xdg;
  else if (!llvm::sys::path::home_directory(path))
    return "";
  else
    llvm::sys::path::append(path, ".cache");
  llvm::sys::path::append(path, "zero-mlir");
  return std::string(path);
}

/// The cache key: the module's bytes, the pipeline that compiles it as
/// printed with every pass option (printedPipeline: an option added to a
/// pass changes it by itself), the code generator's target, and this very
/// executable (any rebuild of the compiler starts a new cache).
std::string cacheKey(llvm::StringRef module, llvm::StringRef pipeline,
                     const CompileOptions &options, const char *argv0) {
  llvm::SHA256 hash;
  hash.update("zero-run cache v4\n");
  hash.update(LLVM_VERSION_STRING "\n");
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&defaultCacheDir));
  if (auto self = llvm::MemoryBuffer::getFile(exe, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false))
    hash.update((*self)->getBuffer());
  else
    hash.update("unknown executable " + exe);
  hash.update("\npipeline=");
  hash.update(pipeline);
  hash.update("\nobject=" + describeTarget(options.object) + "\n");
  hash.update(module);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

/// Rank 0's part: the object file of the step, from the cache or compiled
/// now. Errors are one line; the passes' diagnostics are printed already.
llvm::Expected<std::string> obtainObject(const RunOptions &opts,
                                         const CompileOptions &options,
                                         const char *argv0, double &seconds) {
  auto start = std::chrono::steady_clock::now();
  auto input = readInputFile(opts.input);
  if (!input)
    return input.takeError();
  std::string dir = opts.noCache ? "" : opts.cacheDir;
  if (dir.empty() && !opts.noCache)
    dir = defaultCacheDir();
  // The loader keeps the text alive; the key needs the module's form, so
  // the module is parsed first (a fraction of what compiling it takes).
  llvm::StringRef text = (*input)->getBuffer();
  StepLoader loader;
  auto module = loader.parse(std::move(*input), opts.input);
  if (!module)
    return module.takeError();
  std::string cached;
  if (!dir.empty()) {
    llvm::Expected<std::string> pipeline = printedPipeline(**module, options);
    if (!pipeline)
      return llvm::createStringError("'" + opts.input + "': " +
                                     llvm::toString(pipeline.takeError()));
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path,
                            cacheKey(text, *pipeline, options, argv0) + ".o");
    cached = std::string(path);
    if (auto hit = llvm::MemoryBuffer::getFile(cached, false, false)) {
      seconds = std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - start)
                    .count();
      return (*hit)->getBuffer().str();
    }
  }

  llvm::Expected<std::string> object = compileStep(**module, options);
  if (!object) {
    llvm::Error error = object.takeError();
    if (error.isA<DiagnosedError>())
      return error;
    return llvm::createStringError("'" + opts.input + "': " +
                                   llvm::toString(std::move(error)));
  }
  if (!cached.empty()) {
    // Best effort: a cache that cannot be written only costs time. The
    // object appears whole or not at all.
    if (!llvm::sys::fs::create_directories(dir))
      (void)llvm::writeToOutput(cached, [&](llvm::raw_ostream &os) {
        os << *object;
        return llvm::Error::success();
      });
  }
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                          start)
                .count();
  return object;
}

/// Links the object into this process and returns the step's exports.
struct LoadedStep {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  const char *abi = nullptr;
  const zrt_step_entry *entries = nullptr;
};

llvm::Expected<LoadedStep> loadObject(std::string object) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  LoadedStep step;
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit)
    return jit.takeError();
  step.jit = std::move(*jit);
  // The runtime, libm and libc: whatever this process has loaded.
  auto generator = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      step.jit->getDataLayout().getGlobalPrefix());
  if (!generator)
    return generator.takeError();
  step.jit->getMainJITDylib().addGenerator(std::move(*generator));
  if (llvm::Error err = step.jit->addObjectFile(
          llvm::MemoryBuffer::getMemBufferCopy(object, "zero-step.o")))
    return std::move(err);
  auto abi = step.jit->lookup(ZRT_STEP_ABI_SYMBOL);
  if (!abi)
    return abi.takeError();
  auto entries = step.jit->lookup(ZRT_STEP_ENTRIES_SYMBOL);
  if (!entries)
    return entries.takeError();
  // Runs the object's constructors, if it has any.
  if (llvm::Error err = step.jit->initialize(step.jit->getMainJITDylib()))
    return std::move(err);
  step.abi = abi->toPtr<const char *>();
  step.entries = entries->toPtr<const zrt_step_entry *>();
  return step;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerZeroPassesAndPipelines();
  RunOptions opts = parseOptions(argc, argv);
  std::string usage = kUsageHead + CompileFlags::help() + kUsageTail +
                      zrt_driver_usage();
  if (opts.help) {
    llvm::outs() << usage;
    return 0;
  }
  char argsError[512];
  if (zrt_driver_check_args(static_cast<int>(opts.forwarded.size()),
                            opts.forwarded.data(), argsError,
                            sizeof argsError) != 0)
    failAll(argsError);

  const int world = zrt_world_size(), rank = zrt_world_rank();
  if (llvm::Error error = opts.flags.check())
    failAll(llvm::toString(std::move(error)));
  if (!opts.offload.empty()) {
    // The driver opens the directory.
    std::string nvmeDir;
    if (llvm::Error error = opts.flags.setPlacements(opts.offload, nvmeDir))
      failAll(llvm::toString(std::move(error)));
  }
  // The cost model's link: --link-model, else the link the run simulates.
  if (!opts.flags.given("link-model") && !opts.simLink.empty())
    if (llvm::Error error = opts.flags.setLink(opts.simLink, "--sim-link"))
      failAll(llvm::toString(std::move(error)));
  CompileOptions options = opts.flags.options;
  options.pipeline.partition.worldSize = world;

  // Rank 0 compiles; the others wait (sleeping) for the object's size, then
  // for its bytes. Size 0 says that compilation failed.
  std::string object;
  double compileSeconds = 0;
  std::string failure;
  bool diagnosed = false;
  if (rank == 0) {
    auto obtained =
        obtainObject(opts, options, argv[0], compileSeconds);
    if (obtained) {
      object = std::move(*obtained);
    } else {
      llvm::Error error = obtained.takeError();
      // The located lines printed say it all.
      diagnosed = error.isA<DiagnosedError>();
      failure = llvm::toString(std::move(error));
    }
  }
  uint64_t size = object.size();
  if (zrt_broadcast_bytes(&size, sizeof size, 0) != 0)
    fail(zrt_last_error());
  if (size == 0) {
    if (rank == 0 && diagnosed)
      zrt_abort(nullptr);
    if (rank == 0)
      fail(failure.empty() ? std::string("compilation produced no object")
                           : failure);
    // Rank 0 ends the job with its message.
    std::this_thread::sleep_for(std::chrono::seconds(30));
    zrt_abort(nullptr);
  }
  object.resize(size);
  if (zrt_broadcast_bytes(object.data(), size, 0) != 0)
    fail(zrt_last_error());

  auto loaded = loadObject(std::move(object));
  if (!loaded)
    failAll("cannot load the compiled step: " +
         llvm::toString(loaded.takeError()));
  zrt_driver_program program = {"zero-run", loaded->abi, loaded->entries,
                                compileSeconds, usage.c_str()};
  return zrt_driver_main(static_cast<int>(opts.forwarded.size()),
                         opts.forwarded.data(), &program);
}
