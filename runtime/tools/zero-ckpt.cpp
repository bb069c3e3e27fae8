//===- zero-ckpt.cpp - Inspect, verify and convert checkpoints ------------===//
//
// zero-ckpt works on the sharded checkpoints that zero-run and compiled
// training binaries write with --save (docs/checkpoints.md): it prints the
// manifest, checks every file's checksum, and converts the parameters to
// and from safetensors, the format PyTorch and Hugging Face load. It links
// neither MLIR nor MPI.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace zero::driver;

namespace {

constexpr const char *kUsage = R"(zero-ckpt: inspect, verify and convert zero-mlir checkpoints

USAGE:
  zero-ckpt info PATH [--json]
      print the manifest: step, seed, the saving run's ranks and stage, every
      tensor (name, role, dtype, shape, layout) and every file (size, CRC-32);
      --json prints the manifest itself
  zero-ckpt verify PATH
      check the manifest (its own CRC-32, and its fields: layout, pieces
      aligned, in bounds, covering each tensor once, overlapping nothing),
      then the size and CRC-32 of every file against it; exit 1 with a line
      naming the manifest's field, or each file, that fails
  zero-ckpt export PATH -o FILE.safetensors
      write the parameters (whole, gathered from every shard file) to one
      safetensors file, each under its name with its shape; load it with
      safetensors.torch.load_file
  zero-ckpt import FILE.safetensors -o DIR [--seed S]
      make a new checkpoint DIR holding the file's tensors as parameters at
      step 0 (one shard file, no optimizer states): zero-run --resume DIR
      trains from these weights, at any number of ranks and any stage, with
      a fresh optimizer and seed S (default 0) for the data order

PATH is a checkpoint directory (it holds manifest.json) or a --save
directory, whose newest checkpoint is taken. Output files and directories are
written whole or not at all.
)";

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "zero-ckpt: error: %s\n", message.c_str());
  std::exit(1);
}

std::string bytesText(uint64_t bytes) {
  char buf[64];
  if (bytes >= 10000000)
    std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  else if (bytes >= 10000)
    std::snprintf(buf, sizeof buf, "%.1f kB", bytes / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  return buf;
}

CkptManifest load(const std::string &path, std::string &dir) {
  std::string error;
  CkptManifest m;
  if (!openCheckpoint(path, dir, m, error))
    fail(error);
  return m;
}

int info(const std::string &path, bool json) {
  std::string dir;
  CkptManifest m = load(path, dir);
  if (json) {
    std::fputs(manifestToJson(m).c_str(), stdout);
    return 0;
  }
  std::printf("checkpoint %s (format %lld, written by %s)\n", dir.c_str(),
              static_cast<long long>(m.version), m.producer.c_str());
  std::printf("  step %lld, seed %llu; saved by %lld rank(s) at stage %lld%s\n",
              static_cast<long long>(m.step),
              static_cast<unsigned long long>(m.seed),
              static_cast<long long>(m.worldSize),
              static_cast<long long>(m.stage),
              m.partitioned ? " (partitioned)" : "");
  if (!m.dataSource.empty())
    std::printf("  data: %s, %lld tokens (CRC-32 %08x)\n", m.dataSource.c_str(),
                static_cast<long long>(m.dataTokens), m.dataCrc);
  if (!m.hypers.empty()) {
    std::printf("  hyper-parameters:");
    for (const auto &h : m.hypers)
      std::printf(" %s=%g", h.first.c_str(), h.second);
    std::printf("\n");
  }
  int64_t params = 0, paramElems = 0, states = 0, stateElems = 0;
  for (const CkptTensor &t : m.tensors)
    (t.state ? states : params) += 1,
        (t.state ? stateElems : paramElems) += t.numel;
  std::printf("  %lld parameters (%lld elements), %lld optimizer states "
              "(%lld elements)%s\n",
              static_cast<long long>(params), static_cast<long long>(paramElems),
              static_cast<long long>(states), static_cast<long long>(stateElems),
              states ? ""
                     : ": a resumed run starts its optimizer's states (if "
                       "it keeps any) from zero");
  std::printf("  %-32s %-8s %-5s %-18s %10s %10s %s\n", "tensor", "state",
              "dtype", "shape", "padded", "shard", "pieces");
  for (const CkptTensor &t : m.tensors)
    std::printf("  %-32s %-8s %-5s %-18s %10lld %10lld %zu%s\n", t.param.c_str(),
                t.state ? t.kind.c_str() : "-", dtypeName(t.dtype),
                shapeString(t.shape).c_str(), static_cast<long long>(t.padded),
                static_cast<long long>(t.shard), t.pieces.size(),
                t.sharded ? " (sharded)" : "");
  uint64_t total = 0;
  for (const CkptFile &f : m.files)
    total += f.bytes;
  std::printf("  %zu file(s), %s:\n", m.files.size(), bytesText(total).c_str());
  for (const CkptFile &f : m.files)
    std::printf("    %-20s %14llu bytes  CRC-32 %08x\n", f.name.c_str(),
                static_cast<unsigned long long>(f.bytes), f.crc32);
  return 0;
}

int verify(const std::string &path) {
  std::string dir;
  CkptManifest m = load(path, dir);
  unsigned bad = 0;
  uint64_t total = 0;
  for (const CkptFile &f : m.files) {
    std::string error;
    total += f.bytes;
    if (!verifyFile(dir, f, error)) {
      std::fprintf(stderr, "zero-ckpt: error: %s\n", error.c_str());
      ++bad;
    }
  }
  if (bad) {
    std::fprintf(stderr, "zero-ckpt: error: %s: %u of %zu file(s) failed\n",
                 dir.c_str(), bad, m.files.size());
    return 1;
  }
  std::printf("ok: %s: %zu file(s), %llu bytes, every size and CRC-32 matches "
              "the manifest\n",
              dir.c_str(), m.files.size(), static_cast<unsigned long long>(total));
  if (m.sealed)
    std::printf("manifest sealed (CRC-32 %08x) and consistent\n", m.manifestCrc);
  else
    std::printf("manifest consistent; format version %lld has no checksum of "
                "its own (saving it again writes one)\n",
                static_cast<long long>(m.version));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    fail("no command given (info, verify, export or import)");
  }
  for (const std::string &a : args)
    if (a == "-h" || a == "--help" || a == "-help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  std::string command = args[0], input, output;
  bool json = false;
  uint64_t seed = 0;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size() || args[i + 1].empty())
        fail("option '" + a + "' needs a value (see zero-ckpt --help)");
      return args[++i];
    };
    if (a == "-o" || a == "--output") {
      output = value();
    } else if (a == "--json") {
      json = true;
    } else if (a == "--seed") {
      std::string v = value();
      errno = 0;
      char *end = nullptr;
      seed = std::strtoull(v.c_str(), &end, 10);
      if (v.find_first_not_of("0123456789") != std::string::npos || errno ||
          !end || *end)
        fail("--seed expects a non-negative 64-bit integer, got '" + v + "'");
    } else if (!a.empty() && a[0] == '-') {
      fail("unknown option '" + a + "' (see zero-ckpt --help)");
    } else if (input.empty()) {
      input = a;
    } else {
      fail("unexpected argument '" + a + "' (see zero-ckpt --help)");
    }
  }
  bool known = command == "info" || command == "verify" ||
               command == "export" || command == "import";
  if (!known)
    fail("unknown command '" + command +
         "' (info, verify, export or import; see zero-ckpt --help)");
  if (input.empty())
    fail(command + " needs " +
         (command == "import" ? "a safetensors file" : "a checkpoint PATH") +
         " (see zero-ckpt --help)");
  bool writes = command == "export" || command == "import";
  if (writes && output.empty())
    fail(command + " needs -o " +
         (command == "import" ? "DIR" : "FILE.safetensors"));
  if (!writes && !output.empty())
    fail(command + " writes nothing; it takes no -o");
  if (json && command != "info")
    fail("--json is an option of info");
  if (seed && command != "import")
    fail("--seed is an option of import");

  if (command == "info")
    return info(input, json);
  if (command == "verify")
    return verify(input);
  std::string error;
  if (command == "export") {
    std::string dir;
    CkptManifest m = load(input, dir);
    if (!exportSafetensors(dir, m, output, error))
      fail(error);
    int64_t n = 0;
    for (const CkptTensor &t : m.tensors)
      n += t.state ? 0 : 1;
    std::printf("exported %lld parameters of %s (step %lld) to %s\n",
                static_cast<long long>(n), dir.c_str(),
                static_cast<long long>(m.step), output.c_str());
    return 0;
  }
  if (!importSafetensors(input, output, seed, error))
    fail(error);
  std::string dir;
  CkptManifest m = load(output, dir);
  std::printf("imported %zu tensors of %s into checkpoint %s (step 0, seed "
              "%llu)\n",
              m.tensors.size(), input.c_str(), output.c_str(),
              static_cast<unsigned long long>(seed));
  return 0;
}
