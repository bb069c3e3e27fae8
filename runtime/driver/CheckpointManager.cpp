//===- CheckpointManager.cpp - Saving and resuming the run ----------------===//

#include "CheckpointManager.h"

#include "Failing.h"
#include "Files.h"
#include "TestHooks.h"

#include "zero/runtime.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

using namespace zero::driver;

namespace {

std::string describeTensor(const CkptTensor &t) {
  return std::string(dtypeName(t.dtype)) + " " + shapeString(t.shape);
}
} // namespace

namespace zero::driver {

std::vector<Held> heldTensors(const Abi &abi, Buffers &b, int rank) {
  std::vector<Held> held;
  auto add = [&](const Param &p, bool state, const std::string &kind,
                 Tensor &t) {
    Held h;
    h.tensor.state = state;
    h.tensor.param = p.name;
    h.tensor.kind = kind;
    h.tensor.dtype = t.dtype;
    h.tensor.shape = p.shape;
    h.tensor.numel = p.numel;
    h.tensor.padded = p.padded;
    h.tensor.shard = p.shard;
    h.tensor.sharded = t.elements != p.numel;
    if (h.tensor.sharded && t.elements != p.shard)
      failAll(h.tensor.label() + " has " + std::to_string(t.elements) +
              " elements, neither the parameter's " + std::to_string(p.numel) +
              " nor its shard of " + std::to_string(p.shard) +
              "; checkpoints hold elementwise states only");
    h.buffer = &t;
    h.saveBegin = std::min<int64_t>(rank * p.shard, p.numel);
    h.saveEnd = std::min<int64_t>(h.saveBegin + p.shard, p.numel);
    h.loadBegin = h.tensor.sharded ? h.saveBegin : 0;
    h.loadEnd = h.tensor.sharded ? h.saveEnd : p.numel;
    held.push_back(std::move(h));
  };
  for (size_t i = 0; i < abi.params.size(); ++i)
    add(abi.params[i], false, "", b.params[i]);
  for (size_t s = 0; s < abi.states.size(); ++s)
    add(abi.params[abi.states[s].param], true, abi.states[s].kind, b.states[s]);
  return held;
}

double saveCheckpoint(const std::vector<Held> &held, const CkptManifest &base,
                      const Options &opts, int64_t step, unsigned saveIndex) {
  auto start = std::chrono::steady_clock::now();
  const int rank = zrt_world_rank(), world = zrt_world_size();
  const std::string root = opts.saveDir, final = checkpointDirName(step);
  const std::string temp = "." + final + ".tmp", tempPath = root + "/" + temp;
  auto failed = [&](const std::string &why) {
    fail(format("checkpoint of step %lld not saved: ", static_cast<long long>(step)) +
         why + " (an earlier checkpoint in '" + root + "' is untouched)");
  };
  std::string error;
  char ready = 1;
  if (rank == 0) {
    if (!makeDirectories(root, error))
      failed(error);
    removeTree(tempPath);
    if (::mkdir(tempPath.c_str(), 0777) != 0)
      failed("cannot create '" + tempPath + "': " + std::strerror(errno));
  }
  // Everyone writes once the directory exists. Not a counted collective:
  // a save does not change the step's communication figures.
  if (zrt_broadcast_bytes(&ready, 1, 0) != 0)
    fail(zrt_last_error());

  // Every rank's pieces, in tensor order per file: rank q saves elements
  // [q * shard, (q + 1) * shard) of each tensor.
  CkptManifest m = base;
  m.step = step;
  m.files.assign(world, CkptFile());
  for (int q = 0; q < world; ++q)
    m.files[q].name = shardFileName(q);
  std::vector<Chunk> mine;
  // Tensors on the NVMe tier are read into memory for the save.
  std::vector<HostView> views;
  views.reserve(held.size());
  for (const Held &h : held) {
    CkptTensor t = h.tensor;
    size_t eb = dtypeBytes(t.dtype);
    for (int q = 0; q < world; ++q) {
      int64_t begin = std::min<int64_t>(q * t.shard, t.numel);
      int64_t end = std::min<int64_t>(begin + t.shard, t.numel);
      if (begin >= end)
        continue;
      t.pieces.push_back({static_cast<unsigned>(q), m.files[q].bytes, begin, end});
      m.files[q].bytes += static_cast<uint64_t>(end - begin) * eb;
    }
    m.tensors.push_back(std::move(t));
    if (h.saveBegin < h.saveEnd) {
      views.emplace_back(*h.buffer);
      const char *data = static_cast<const char *>(views.back().data);
      int64_t first = h.tensor.sharded ? 0 : h.saveBegin;
      mine.push_back({data + first * eb,
                      static_cast<size_t>(h.saveEnd - h.saveBegin) * eb});
    }
  }
  const std::string file = tempPath + "/" + shardFileName(rank);
  testHooks().beforeSaveWrite(saveIndex, shardFileName(rank), file, mine);
  // Every rank learns every file's CRC-32 (sizes it knows) or why it could
  // not be written, so that one line reports a failed save and rank 0
  // clears the temporary directory.
  struct {
    uint32_t crc = 0, failed = 0;
    char error[504] = {};
  } report;
  if (!writeShardFile(file, mine, report.crc, error)) {
    report.failed = 1;
    std::snprintf(report.error, sizeof report.error, "%s", error.c_str());
  }
  std::string firstError;
  for (int q = 0; q < world; ++q) {
    auto r = report;
    if (zrt_broadcast_bytes(&r, sizeof r, q) != 0)
      fail(zrt_last_error());
    m.files[q].crc32 = r.crc;
    if (r.failed && firstError.empty())
      firstError = world > 1 ? format("rank %d: %s", q, r.error) : r.error;
  }
  if (!firstError.empty()) {
    if (rank == 0)
      removeTree(tempPath);
    failAll(format("checkpoint of step %lld not saved: ",
                   static_cast<long long>(step)) +
            firstError + " (an earlier checkpoint in '" + root +
            "' is untouched)");
  }
  if (rank == 0) {
    std::string text = manifestToJson(m);
    std::string path = tempPath + "/" + kManifestName;
    testHooks().beforeSaveWrite(saveIndex, kManifestName, path,
                                {{text.data(), text.size()}});
    uint32_t ignored;
    if (!writeShardFile(path, {{text.data(), text.size()}}, ignored, error) ||
        !publishCheckpoint(root, temp, final, error))
      failed(error);
    pruneCheckpoints(root, opts.saveKeep, final);
  }
  // The save is over on every rank once rank 0 has published it.
  if (zrt_broadcast_bytes(&ready, 1, 0) != 0)
    fail(zrt_last_error());
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  if (rank == 0 && opts.progress != "none") {
    uint64_t bytes = 0;
    for (const CkptFile &f : m.files)
      bytes += f.bytes;
    std::fprintf(stderr, "saved %s/%s: %.1f MB in %d file(s), %.2f s\n",
                 root.c_str(), final.c_str(), bytes / 1e6, world, seconds);
  }
  return seconds;
}

CkptManifest resumeCheckpoint(std::vector<Held> &held, const std::string &path,
                              std::string &dir) {
  const int rank = zrt_world_rank(), world = zrt_world_size();
  std::string error;
  CkptManifest m;
  if (!openCheckpoint(path, dir, m, error))
    failAll(error);
  const std::string from = "checkpoint '" + dir + "'";
  bool fresh = !m.hasStates();
  for (const Held &h : held) {
    const CkptTensor &want = h.tensor;
    if (want.state && fresh)
      continue;
    const CkptTensor *t = m.find(want.param, want.kind);
    if (!t)
      failAll(from + " has no " + want.label() +
              "; it was saved from a different model or optimizer");
    if (t->dtype != want.dtype || t->shape != want.shape)
      failAll(want.label() + " is " + describeTensor(*t) + " in " + from +
              " but " + describeTensor(want) + " in this step");
  }
  for (const CkptTensor &t : m.tensors) {
    bool used = false;
    for (const Held &h : held)
      used |= h.tensor.param == t.param && h.tensor.kind == t.kind &&
              h.tensor.state == t.state;
    if (!used)
      failAll(from + " has " + t.label() + ", which this step " +
              (t.state ? "does not keep (a different optimizer)"
                       : "does not have (a different model)"));
  }
  // Checksums: the files split among the ranks.
  for (size_t f = static_cast<size_t>(rank); f < m.files.size(); f += world)
    if (!verifyFile(dir, m.files[f], error))
      fail(error + "; resume refused");
  CkptReader reader(dir, m);
  for (Held &h : held) {
    if (h.tensor.state && fresh)
      continue;
    const CkptTensor *t = m.find(h.tensor.param, h.tensor.kind);
    HostView view(*h.buffer, /*load=*/false);
    if (!reader.read(*t, h.loadBegin, h.loadEnd, view.data, error))
      fail(error + "; resume refused");
    view.store();
  }
  return m;
}

} // namespace zero::driver
