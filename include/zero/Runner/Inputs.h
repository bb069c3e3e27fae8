//===- Inputs.h - Parameters and batches for zero-run -----------*- C++ -*-===//
//
// What a training run feeds a step: initial parameters (from a seed, or a
// file) and batches (a token file, the built-in corpus, or synthetic
// regression data). Everything is deterministic in the seed, so two runs with
// the same flags see bit-identical inputs.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNNER_INPUTS_H
#define ZERO_RUNNER_INPUTS_H

#include "zero/Analysis/TrainingStep.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::zero {

/// SplitMix64 with Box-Muller normals: small, fast, and the same stream on
/// every platform and standard library (std::normal_distribution is not).
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

/// How parameters are initialized from the seed:
/// - GPT-2 (the step has a parameter named `wte`): biases 0, LayerNorm
///   weights (rank-1 `*.weight`) 1, matrices normal(0, 0.02), residual
///   projections (`*.c_proj.weight`) normal(0, 0.02 / sqrt(2 * layers)).
/// - Otherwise: rank-1 `*.weight` 1, other rank-1 tensors 0, matrices
///   normal(0, 1 / sqrt(fan_in)) with fan_in = the first dimension (weights
///   stored in x out, as zero-gen emits them).
/// Each parameter draws from its own stream (seed mixed with its position).
/// `buffers[i]` holds params[i] with its element type (f32 or f64).
void initParams(const TrainingStep &step, uint64_t seed,
                llvm::ArrayRef<void *> buffers);

/// A stream of token ids (the headerless little-endian uint16 `.bin` layout
/// of nanoGPT, or the built-in corpus).
struct TokenData {
  std::vector<uint16_t> tokens;
  std::string source;    ///< File name, or "built-in corpus".
  unsigned maxToken = 0; ///< Largest id in `tokens`.

  static llvm::Expected<TokenData> load(llvm::StringRef path);
  /// A small English text, tokenized by characters (ids in alphabet order).
  static TokenData builtinCorpus();
};

/// The kinds of batch a step can take, recognized by its batch inputs.
enum class BatchKind {
  /// `tokens` and `targets`, i32 tensors of one shape [B, T]: next-token
  /// prediction on a TokenData stream.
  Language,
  /// `input` [B, I] and `target` [B, O], float tensors: a fixed random
  /// teacher, target = tanh(input @ teacher), input ~ normal(0, 1).
  Regression,
};

/// Classifies the step's batch inputs, or says why none fits.
llvm::Expected<BatchKind> classifyBatch(const TrainingStep &step);

/// The batches of a training run. Language batches take B windows of T+1
/// tokens at offsets drawn from (seed, step); Regression batches draw inputs
/// from (seed, step) and apply a teacher drawn once from the seed. With
/// `worldSize` ranks the global batch has worldSize * B rows, drawn in the
/// same order on every rank, and `rank` gets rows [rank * B, (rank + 1) * B):
/// N ranks with micro-batch B see exactly the samples one rank with batch
/// N * B sees.
class BatchSource {
public:
  /// Checks once that `data` (required for Language batches) covers a
  /// sequence plus its target.
  static llvm::Expected<BatchSource> create(const TrainingStep &step,
                                            BatchKind kind,
                                            const TokenData *data,
                                            uint64_t seed, unsigned rank = 0,
                                            unsigned worldSize = 1);

  /// Fills the step's batch buffers (TrainingStep::batch order) for step
  /// `stepIndex` (0-based).
  void fill(uint64_t stepIndex, llvm::ArrayRef<void *> buffers) const;

private:
  BatchSource() = default;
  void fillLanguage(Rng &rng, llvm::ArrayRef<void *> buffers) const;
  void fillRegression(Rng &rng, llvm::ArrayRef<void *> buffers) const;

  const TrainingStep *step = nullptr;
  BatchKind kind = BatchKind::Language;
  const TokenData *data = nullptr;
  uint64_t seed = 0;
  unsigned rank = 0, worldSize = 1;
  std::vector<double> teacher; ///< Regression: in x out, from the seed.
};

/// Tokens per batch (B * T) for Language batches, rows for Regression.
int64_t itemsPerBatch(const TrainingStep &step, BatchKind kind);

} // namespace mlir::zero

#endif // ZERO_RUNNER_INPUTS_H
