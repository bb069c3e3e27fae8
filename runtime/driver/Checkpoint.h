//===- Checkpoint.h - Sharded checkpoints: format and files -----*- C++ -*-===//
//
// The on-disk form of a training run (docs/checkpoints.md): a directory with
// one shard file per saving rank (`rank-00000.bin`, raw little-endian
// elements) and `manifest.json`, which says everything a reader needs: the
// tensors (parameters and optimizer states) with names, dtypes and shapes,
// which elements of each flattened tensor sit where in which file, the
// saving run's layout (world size, stage, padding), the step and seed that
// resume the run exactly, and the size and CRC-32 of every file.
//
// Nothing here talks to other ranks: the driver (Driver.cpp) coordinates a
// save and a resume, zero-ckpt inspects, verifies and converts. Readers are
// driven by the manifest alone, so a checkpoint saved by N ranks at one
// stage loads at M ranks and any stage.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DRIVER_CHECKPOINT_H
#define ZERO_DRIVER_CHECKPOINT_H

#include "Abi.h"
#include "Files.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace zero::driver {

/// The manifest's format version. Version 2 seals the manifest with its own
/// CRC-32 (kManifestChecksumKey); version 1, written before, has none and is
/// still read. Readers refuse other versions.
constexpr int64_t kCheckpointVersion = 2;
constexpr const char *kManifestName = "manifest.json";
/// The manifest's last member: the CRC-32 of every byte of the file before
/// this key (docs/checkpoints.md).
constexpr const char *kManifestChecksumKey = "manifest_crc32";

/// Limits a manifest must stay within: no run has more ranks, a stage is
/// one of ZeRO's, and a shape has at most this many dimensions.
constexpr int64_t kMaxCheckpointWorldSize = int64_t(1) << 20;
constexpr int64_t kMaxCheckpointStage = 3;
constexpr size_t kMaxCheckpointRank = 32;

/// Elements [begin, end) of a flattened tensor, stored at byte `offset` of
/// file `file` (an index into the manifest's files).
struct CkptPiece {
  unsigned file = 0;
  uint64_t offset = 0;
  int64_t begin = 0, end = 0;
};

/// A parameter or one of its optimizer states.
struct CkptTensor {
  bool state = false;
  std::string param; ///< The parameter's name.
  std::string kind;  ///< The state's kind (`exp_avg`, ...); empty for params.
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t numel = 0;
  /// The saving run's flat layout (docs/runtime-abi.md): numel padded to a
  /// multiple of the world size, and each rank's slice of it.
  int64_t padded = 0, shard = 0;
  /// Whether the saving run held it as shards (else every rank had it whole).
  bool sharded = false;
  std::vector<CkptPiece> pieces;

  /// "parameter 'w'" or "optimizer state 'exp_avg' of 'w'", for messages.
  std::string label() const;
};

struct CkptFile {
  std::string name;
  uint64_t bytes = 0;
  uint32_t crc32 = 0;
};

struct CkptManifest {
  int64_t version = kCheckpointVersion;
  std::string producer;
  /// Steps trained; a resumed run goes on with step + 1.
  int64_t step = 0;
  /// The seed of parameter init and batch sampling: with the step it fixes
  /// the data order of every later step.
  uint64_t seed = 0;
  int64_t worldSize = 1, stage = 0;
  bool partitioned = false;
  /// The token data of a language-model run (empty source: none).
  std::string dataSource;
  int64_t dataTokens = 0;
  uint32_t dataCrc = 0;
  /// Hyper-parameters of the saving run, by name (informational).
  std::vector<std::pair<std::string, double>> hypers;
  std::vector<CkptTensor> tensors;
  std::vector<CkptFile> files;
  /// As read: whether the manifest carried its own checksum (version 2),
  /// and its value.
  bool sealed = false;
  uint32_t manifestCrc = 0;

  /// The tensor for parameter `param` (kind empty) or its state `kind`.
  const CkptTensor *find(const std::string &param,
                         const std::string &kind = "") const;
  /// Whether any tensor is an optimizer state (an imported checkpoint has
  /// none: its optimizer starts fresh).
  bool hasStates() const;
};

/// `rank-00003.bin`.
std::string shardFileName(int rank);
/// `step-00000010`, the directory a save at `step` publishes.
std::string checkpointDirName(int64_t step);

/// The manifest's text, sealed with its checksum.
std::string manifestToJson(const CkptManifest &m);
/// Parses and checks a manifest, and fails with one line naming the field
/// that is wrong: every field present and typed and within the limits above;
/// each tensor's layout (padded, shard) that of its world size; pieces
/// inside their tensor and covering it exactly once, at offsets aligned to
/// the element size, inside their file and overlapping no other piece of
/// it; then (version 2) the manifest's own checksum, which catches an edit
/// that leaves all of that consistent. `where` names it in errors.
bool manifestFromJson(const std::string &text, CkptManifest &m,
                      std::string &error, const std::string &where);

/// `path` is a checkpoint (it has a manifest) or a --save directory, whose
/// newest published `step-N` is taken. Sets `dir` to the checkpoint.
bool resolveCheckpoint(const std::string &path, std::string &dir,
                       std::string &error);
bool readManifest(const std::string &dir, CkptManifest &m, std::string &error);
/// resolveCheckpoint, then readManifest of what it found.
bool openCheckpoint(const std::string &path, std::string &dir, CkptManifest &m,
                    std::string &error);

/// zlib's CRC-32 of `bytes` at `data`, continuing `crc` (0 to start).
uint32_t crc32Update(uint32_t crc, const void *data, size_t bytes);
/// Checks that `dir/file` has the manifest's size and CRC-32; the error
/// names the file and says what is wrong.
bool verifyFile(const std::string &dir, const CkptFile &file,
                std::string &error);

/// Reads elements [begin, end) of tensor `t` (any pieces they span) to
/// `out`; the error names the file if it is short or unreadable.
class CkptReader {
public:
  CkptReader(std::string dir, const CkptManifest &m) : dir(std::move(dir)), m(m) {}
  ~CkptReader();
  bool read(const CkptTensor &t, int64_t begin, int64_t end, void *out,
            std::string &error);

private:
  std::string dir;
  const CkptManifest &m;
  std::map<unsigned, int> fds;
};

/// Writes a new file `path` (it must not exist) with `chunks`, flushed to
/// disk, and returns its CRC-32. A full disk or any other error: false, a
/// one-line message naming the file, and the file removed.
bool writeShardFile(const std::string &path, const std::vector<Chunk> &chunks,
                    uint32_t &crc, std::string &error);
/// mkdir -p.
bool makeDirectories(const std::string &path, std::string &error);
/// rm -r, quietly.
void removeTree(const std::string &path);
/// Makes the complete checkpoint in directory `temp` visible as `final`
/// (both in directory `root`) with one rename, replacing an older `final`,
/// and flushes `root`.
bool publishCheckpoint(const std::string &root, const std::string &temp,
                       const std::string &final, std::string &error);
/// Removes all but `keep` published checkpoints in `root`: `current` (the
/// one just saved, whatever its step) and the newest others; and temporary
/// directories that an interrupted save left behind.
void pruneCheckpoints(const std::string &root, unsigned keep,
                      const std::string &current);

/// Writes the parameters of checkpoint `dir` (verified first) to one
/// safetensors file, each under its name with its shape; atomically.
bool exportSafetensors(const std::string &dir, const CkptManifest &m,
                       const std::string &out, std::string &error);
/// Makes checkpoint directory `outDir` (which must not exist) from the
/// tensors of a safetensors file: world size 1, step 0, the given seed, no
/// optimizer states (a resumed run starts its optimizer fresh).
bool importSafetensors(const std::string &in, const std::string &outDir,
                       uint64_t seed, std::string &error);

} // namespace zero::driver

#endif // ZERO_DRIVER_CHECKPOINT_H
