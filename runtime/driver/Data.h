//===- Data.h - Parameters and batches for the driver -----------*- C++ -*-===//
//
// What a training run feeds a step: initial parameters (each as its
// descriptor says) and batches (a token file, the built-in corpus, or
// synthetic regression data). Everything is deterministic in the seed, so
// two runs with the same flags see bit-identical inputs, on any number of
// ranks.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DRIVER_DATA_H
#define ZERO_DRIVER_DATA_H

#include "Abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zero::driver {

/// SplitMix64 with Box-Muller normals: the same stream on every platform and
/// standard library (std::normal_distribution is not).
class Rng {
public:
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in (0, 1].
  double uniform();
  double normal();
  /// Uniform integer in [0, bound).
  uint64_t below(uint64_t bound);

private:
  uint64_t state;
  bool haveSpare = false;
  double spare = 0;
};

/// Derives an independent stream seed from a seed and a salt.
uint64_t mixSeed(uint64_t seed, uint64_t salt);

/// Writes the initial value of parameter `index` (all `numel` elements, in
/// its element type) to `out`, from its own stream of `seed`.
void initParam(const Param &param, unsigned index, uint64_t seed, void *out);

/// A stream of token ids (nanoGPT's headerless little-endian uint16 `.bin`,
/// or the built-in corpus).
struct TokenData {
  std::vector<uint16_t> tokens;
  std::string source;    ///< File name, or "built-in corpus".
  unsigned maxToken = 0; ///< Largest id in `tokens`.

  static bool load(const std::string &path, TokenData &out, std::string &error);
  /// A small English text, tokenized by characters (ids in alphabet order).
  static TokenData builtinCorpus();
  /// What messages call it: "the built-in corpus" or "the token file
  /// 'PATH'".
  std::string describe() const {
    return isFile ? "the token file '" + source + "'" : "the " + source;
  }
  bool isFile = false;
};

/// The kinds of batch the driver feeds, recognized by the batch inputs'
/// names: `tokens` and `targets` (i32 [B, T], next-token prediction on a
/// TokenData stream) or `input` [B, I] and `target` [B, O] (floats: a fixed
/// random teacher, target = tanh(input @ teacher)).
enum class BatchKind { Language, Regression };

/// Classifies the step's batch inputs, or says why none fits.
bool classifyBatch(const Abi &abi, BatchKind &kind, std::string &error);

/// The batches of a run. With `worldSize` ranks the global batch has
/// worldSize * B rows, drawn in the same order on every rank, and `rank`
/// gets rows [rank * B, (rank + 1) * B): N ranks with micro-batch B see
/// exactly the samples one rank with batch N * B sees.
class BatchSource {
public:
  bool init(const Abi &abi, BatchKind kind, const TokenData *data,
            uint64_t seed, unsigned rank, unsigned worldSize,
            std::string &error);
  /// Fills the batch buffers (descriptor order) for step `stepIndex`.
  void fill(uint64_t stepIndex, const std::vector<void *> &buffers) const;

private:
  void fillLanguage(Rng &rng, const std::vector<void *> &buffers) const;
  void fillRegression(Rng &rng, const std::vector<void *> &buffers) const;

  const Abi *abi = nullptr;
  BatchKind kind = BatchKind::Language;
  const TokenData *data = nullptr;
  uint64_t seed = 0;
  unsigned rank = 0, worldSize = 1;
  unsigned first = 0; ///< Index of `tokens` / `input`.
  std::vector<double> teacher;
};

/// Tokens per batch (B * T) for Language batches, rows for Regression.
int64_t itemsPerBatch(const Abi &abi, BatchKind kind);

/// Stores `value` as one element of `type` at `out` (floats rounded to
/// nearest even, integers truncated).
void storeElement(DType type, double value, void *out);
/// Reads one element of a float type.
double loadElement(DType type, const void *in);

} // namespace zero::driver

#endif // ZERO_DRIVER_DATA_H
