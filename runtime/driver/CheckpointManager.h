//===- CheckpointManager.h - Saving and resuming the run --------*- C++ -*-===//
//
// The run's side of checkpoints: which buffers a checkpoint holds and which
// elements each rank saves and loads, --save's sharded save and --resume's
// checked load. The format and its files are Checkpoint.h's.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DRIVER_CHECKPOINTMANAGER_H
#define ZERO_DRIVER_CHECKPOINTMANAGER_H

#include "Abi.h"
#include "Buffers.h"
#include "Checkpoint.h"
#include "Options.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zero::driver {

/// A buffer of the run as a checkpoint tensor: the parameter or state, its
/// full shape, the run's layout, and the elements this rank holds.
struct Held {
  CkptTensor tensor;
  Tensor *buffer;
  /// Elements [begin, end) of the flattened tensor that this rank saves
  /// (its slice, with ranks splitting the replicated tensors the same way)
  /// and loads (its slice if sharded, else everything).
  int64_t saveBegin, saveEnd, loadBegin, loadEnd;
};

/// The run's parameters and optimizer states as checkpoint tensors. The
/// flat layout (padded, shard) is the descriptor's.
std::vector<Held> heldTensors(const Abi &abi, Buffers &b, int rank);

/// Saves the run after `step` steps into opts.saveDir/step-N. Every rank
/// writes its file into a temporary directory, rank 0 adds the manifest
/// with every file's size and CRC-32 and publishes the directory with one
/// rename. A failure (a full disk) ends the job with one line; the
/// previous checkpoint stays as it was. Returns the seconds it took.
double saveCheckpoint(const std::vector<Held> &held, const CkptManifest &base,
                      const Options &opts, int64_t step, unsigned saveIndex);

/// Loads checkpoint `path` into the run's buffers: the tensors are matched
/// by name and checked against the step, each rank verifies the checksums
/// of its share of the files, then reads the elements it holds (any pieces,
/// saved by any number of ranks). Returns the manifest.
CkptManifest resumeCheckpoint(std::vector<Held> &held, const std::string &path,
                              std::string &dir);

} // namespace zero::driver

#endif // ZERO_DRIVER_CHECKPOINTMANAGER_H
