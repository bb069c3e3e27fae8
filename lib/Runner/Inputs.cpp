//===- Inputs.cpp - Parameters and batches for zero-run -------------------===//

#include "zero/Runner/Inputs.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

using namespace mlir;
using namespace mlir::zero;

namespace {
llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The built-in corpus: original text, lower case, so its alphabet (31
/// symbols) fits the small vocabularies of test models.
constexpr const char *kCorpus =
    "the river starts high in the hills, where snow melts in the spring.\n"
    "it runs down over stones and under trees, and it grows as small\n"
    "streams join it. in the valley the river turns slow and wide, and\n"
    "the farms along its banks draw water for their fields. a mill stands\n"
    "where the water falls, and its wheel turns all day and all night.\n"
    "the miller grinds the grain that the farmers bring, and the bread\n"
    "that comes from the flour feeds the town. at the end of the valley\n"
    "the river meets the sea. the tide comes in and the tide goes out,\n"
    "and the salt water and the fresh water mix in the mouth of the river.\n"
    "boats wait in the harbor for the tide, and when it turns they sail.\n"
    "some carry flour, some carry wood, and some carry nothing but men\n"
    "who want to see what lies past the edge of the water. the sea is\n"
    "wide and the sky is wide, and a boat is small between them. still,\n"
    "the boats go out, and most of them come back, and the river runs on.\n"
    "in winter the hills are white and the river is quiet. ice forms at\n"
    "its edges, and the mill wheel stops. the farmers mend their tools and\n"
    "the sailors mend their nets, and everyone waits for the spring. when\n"
    "the snow melts again the river wakes, the wheel turns, the boats sail,\n"
    "and the year begins once more, as it has for as long as anyone knows.\n";
} // namespace

uint64_t Rng::next() {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double Rng::uniform() {
  // 53 random bits, shifted into (0, 1].
  return (static_cast<double>(next() >> 11) + 1.0) * 0x1.0p-53;
}

double Rng::normal() {
  if (haveSpare) {
    haveSpare = false;
    return spare;
  }
  double r = std::sqrt(-2.0 * std::log(uniform()));
  double theta = 2.0 * M_PI * uniform();
  spare = r * std::sin(theta);
  haveSpare = true;
  return r * std::cos(theta);
}

uint64_t Rng::below(uint64_t bound) {
  // Rejection sampling: no modulo bias.
  uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t x;
  do
    x = next();
  while (x >= limit);
  return x % bound;
}

uint64_t mlir::zero::mixSeed(uint64_t seed, uint64_t salt) {
  Rng rng(seed ^ (salt * 0xd1342543de82ef95ULL + 0x2545f4914f6cdd1dULL));
  return rng.next();
}

void mlir::zero::initParams(const TrainingStep &step, uint64_t seed,
                            llvm::ArrayRef<void *> buffers) {
  bool gpt2 = step.lookupParam("wte").has_value();
  std::set<std::string> blocks;
  for (const ParamInfo &p : step.params) {
    StringRef name = p.name;
    if (name.starts_with("h") && name.contains('.'))
      blocks.insert(name.split('.').first.str());
  }
  double layers = std::max<size_t>(1, blocks.size());
  for (auto [i, p] : llvm::enumerate(step.params)) {
    StringRef name = p.name;
    int64_t n = p.type.getNumElements();
    bool isF32 = p.type.getElementType().isF32();
    Rng rng(mixSeed(seed, i));
    double constant = 0, stddev = 0;
    if (p.type.getRank() == 1) {
      constant = name.ends_with(".weight") ? 1.0 : 0.0;
    } else if (gpt2) {
      stddev = 0.02;
      if (name.ends_with("c_proj.weight"))
        stddev /= std::sqrt(2.0 * layers);
    } else {
      stddev = 1.0 / std::sqrt(static_cast<double>(p.type.getDimSize(0)));
    }
    for (int64_t e = 0; e < n; ++e) {
      double v = stddev > 0 ? stddev * rng.normal() : constant;
      if (isF32)
        static_cast<float *>(buffers[i])[e] = static_cast<float>(v);
      else
        static_cast<double *>(buffers[i])[e] = v;
    }
  }
}

llvm::Expected<TokenData> TokenData::load(StringRef path) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return makeError("cannot read data file '" + path +
                     "': " + file.getError().message());
  StringRef bytes = (*file)->getBuffer();
  if (bytes.size() % 2 != 0)
    return makeError("data file '" + path + "' has " +
                     llvm::Twine(bytes.size()) +
                     " bytes, not a whole number of uint16 tokens");
  TokenData data;
  data.source = path.str();
  data.tokens.resize(bytes.size() / 2);
  for (size_t i = 0; i < data.tokens.size(); ++i) {
    uint16_t t = static_cast<uint8_t>(bytes[2 * i]) |
                 static_cast<uint16_t>(static_cast<uint8_t>(bytes[2 * i + 1]))
                     << 8;
    data.tokens[i] = t;
    data.maxToken = std::max<unsigned>(data.maxToken, t);
  }
  return data;
}

TokenData TokenData::builtinCorpus() {
  StringRef text(kCorpus);
  std::set<char> alphabet(text.begin(), text.end());
  std::vector<char> sorted(alphabet.begin(), alphabet.end());
  TokenData data;
  data.source = "built-in corpus";
  for (char c : text) {
    unsigned id = llvm::find(sorted, c) - sorted.begin();
    data.tokens.push_back(static_cast<uint16_t>(id));
    data.maxToken = std::max(data.maxToken, id);
  }
  return data;
}

llvm::Expected<BatchKind> mlir::zero::classifyBatch(const TrainingStep &step) {
  auto find = [&](StringRef name) -> const BatchInfo * {
    for (const BatchInfo &b : step.batch)
      if (b.name == name)
        return &b;
    return nullptr;
  };
  if (step.batch.size() == 2) {
    const BatchInfo *tokens = find("tokens"), *targets = find("targets");
    if (tokens && targets && tokens->type == targets->type &&
        tokens->type.getRank() == 2 &&
        tokens->type.getElementType().isInteger(32))
      return BatchKind::Language;
    const BatchInfo *input = find("input"), *target = find("target");
    if (input && target && input->type.getRank() == 2 &&
        target->type.getRank() == 2 &&
        input->type.getDimSize(0) == target->type.getDimSize(0) &&
        isa<FloatType>(input->type.getElementType()) &&
        input->type.getElementType() == target->type.getElementType())
      return BatchKind::Regression;
  }
  std::string names;
  for (const BatchInfo &b : step.batch)
    names += (names.empty() ? "'" : ", '") + b.name + "'";
  return makeError("zero-run feeds two kinds of batch: 'tokens' and "
                   "'targets' (i32, [batch, seq]) or 'input' and 'target' "
                   "(float, [batch, features]); this step takes " +
                   (names.empty() ? std::string("none") : names));
}

int64_t mlir::zero::itemsPerBatch(const TrainingStep &step, BatchKind kind) {
  RankedTensorType t = step.batch.front().type;
  return kind == BatchKind::Language ? t.getNumElements() : t.getDimSize(0);
}

llvm::Expected<BatchSource>
BatchSource::create(const TrainingStep &step, BatchKind kind,
                    const TokenData *data, uint64_t seed, unsigned rank,
                    unsigned worldSize) {
  BatchSource source;
  source.step = &step;
  source.kind = kind;
  source.data = data;
  source.seed = seed;
  source.rank = rank;
  source.worldSize = worldSize;
  if (kind == BatchKind::Language) {
    int64_t t = step.batch[0].type.getDimSize(1);
    if (!data || static_cast<int64_t>(data->tokens.size()) < t + 1)
      return makeError("the " + (data ? data->source : std::string("data")) +
                       " has " + llvm::Twine(data ? data->tokens.size() : 0) +
                       " tokens; a sequence of " + llvm::Twine(t) +
                       " needs at least " + llvm::Twine(t + 1));
    return source;
  }
  unsigned inputIdx = step.batch[0].name == "input" ? 0 : 1;
  int64_t in = step.batch[inputIdx].type.getDimSize(1);
  int64_t out = step.batch[1 - inputIdx].type.getDimSize(1);
  Rng teacherRng(mixSeed(seed, 0x7465616368ULL));
  source.teacher.resize(in * out);
  for (double &w : source.teacher)
    w = teacherRng.normal() / std::sqrt(static_cast<double>(in));
  return source;
}

void BatchSource::fill(uint64_t stepIndex,
                       llvm::ArrayRef<void *> buffers) const {
  Rng rng(mixSeed(seed ^ 0x6261746368ULL, stepIndex));
  if (kind == BatchKind::Language)
    fillLanguage(rng, buffers);
  else
    fillRegression(rng, buffers);
}

void BatchSource::fillLanguage(Rng &rng,
                               llvm::ArrayRef<void *> buffers) const {
  int64_t b = step->batch[0].type.getDimSize(0);
  int64_t t = step->batch[0].type.getDimSize(1);
  unsigned tokensIdx = step->batch[0].name == "tokens" ? 0 : 1;
  auto *tokens = static_cast<int32_t *>(buffers[tokensIdx]);
  auto *targets = static_cast<int32_t *>(buffers[1 - tokensIdx]);
  uint64_t windows = data->tokens.size() - t;
  for (int64_t global = 0; global < b * worldSize; ++global) {
    uint64_t offset = rng.below(windows);
    int64_t row = global - static_cast<int64_t>(rank) * b;
    if (row < 0 || row >= b)
      continue;
    for (int64_t i = 0; i < t; ++i) {
      tokens[row * t + i] = data->tokens[offset + i];
      targets[row * t + i] = data->tokens[offset + i + 1];
    }
  }
}

void BatchSource::fillRegression(Rng &rng,
                                 llvm::ArrayRef<void *> buffers) const {
  unsigned inputIdx = step->batch[0].name == "input" ? 0 : 1;
  RankedTensorType inType = step->batch[inputIdx].type;
  RankedTensorType outType = step->batch[1 - inputIdx].type;
  int64_t rows = inType.getDimSize(0), in = inType.getDimSize(1),
          out = outType.getDimSize(1);
  // Draw the global batch's inputs in order and keep this rank's rows.
  std::vector<double> x(rows * in);
  for (int64_t g = 0; g < rows * static_cast<int64_t>(worldSize); ++g)
    for (int64_t i = 0; i < in; ++i) {
      double v = rng.normal();
      int64_t r = g - static_cast<int64_t>(rank) * rows;
      if (r >= 0 && r < rows)
        x[r * in + i] = v;
    }
  bool isF32 = inType.getElementType().isF32();
  auto store = [&](void *buf, int64_t i, double v) {
    if (isF32)
      static_cast<float *>(buf)[i] = static_cast<float>(v);
    else
      static_cast<double *>(buf)[i] = v;
  };
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < in; ++i)
      store(buffers[inputIdx], r * in + i, x[r * in + i]);
    for (int64_t o = 0; o < out; ++o) {
      double acc = 0;
      for (int64_t i = 0; i < in; ++i)
        acc += x[r * in + i] * teacher[i * out + o];
      store(buffers[1 - inputIdx], r * out + o, std::tanh(acc));
    }
  }
}
