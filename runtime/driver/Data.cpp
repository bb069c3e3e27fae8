//===- Data.cpp - Parameters and batches for the driver -------------------===//

#include "Data.h"

#include "Files.h"

#include "BFloat16.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

using namespace zero::driver;

namespace {
/// The built-in corpus: original text, lower case, so its alphabet (29
/// symbols) fits the small vocabularies of test models. The text is
/// runtime/driver/corpus.txt (which the benchmarks' PyTorch peers read too);
/// CMake makes it a string literal.
constexpr const char *kCorpus =
#include "Corpus.inc"
    ;

/// Token files larger than this are refused (a guard against devices and
/// runaway inputs, far above any data set a CPU run trains on).
constexpr size_t kMaxTokenFileBytes = size_t(64) << 30;

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

uint64_t zero::driver::mixSeed(uint64_t seed, uint64_t salt) {
  Rng rng(seed ^ (salt * 0xd1342543de82ef95ULL + 0x2545f4914f6cdd1dULL));
  return rng.next();
}

void zero::driver::storeElement(DType type, double value, void *out) {
  switch (type) {
  case DType::F32: {
    float f = static_cast<float>(value);
    std::memcpy(out, &f, 4);
    return;
  }
  case DType::F64:
    std::memcpy(out, &value, 8);
    return;
  case DType::BF16: {
    uint16_t h = zero::runtime::floatToBF16(static_cast<float>(value));
    std::memcpy(out, &h, 2);
    return;
  }
  case DType::F16: {
    // Only the driver's own values reach here (hyper-parameters); f16 steps
    // are refused before training.
    uint16_t zero = 0;
    std::memcpy(out, &zero, 2);
    return;
  }
  case DType::I8: {
    int8_t v = static_cast<int8_t>(value);
    std::memcpy(out, &v, 1);
    return;
  }
  case DType::I16: {
    int16_t v = static_cast<int16_t>(value);
    std::memcpy(out, &v, 2);
    return;
  }
  case DType::I32: {
    int32_t v = static_cast<int32_t>(value);
    std::memcpy(out, &v, 4);
    return;
  }
  case DType::I64: {
    int64_t v = static_cast<int64_t>(value);
    std::memcpy(out, &v, 8);
    return;
  }
  }
}

double zero::driver::loadElement(DType type, const void *in) {
  if (type == DType::F64) {
    double d;
    std::memcpy(&d, in, 8);
    return d;
  }
  if (type == DType::BF16) {
    uint16_t h;
    std::memcpy(&h, in, 2);
    return zero::runtime::bf16ToFloat(h);
  }
  float f;
  std::memcpy(&f, in, 4);
  return f;
}

void zero::driver::initParam(const Param &param, unsigned index, uint64_t seed,
                             void *out) {
  Rng rng(mixSeed(seed, index));
  InitSpec s = param.init;
  if (s.kind == InitSpec::Kind::Default) {
    if (param.shape.size() >= 2 && param.shape[0] > 0) {
      s.kind = InitSpec::Kind::Normal;
      s.std = 1.0 / std::sqrt(static_cast<double>(param.shape[0]));
    } else {
      s.kind = InitSpec::Kind::Constant;
      s.value = 0;
    }
  }
  size_t bytes = dtypeBytes(param.dtype);
  char *p = static_cast<char *>(out);
  for (int64_t e = 0; e < param.numel; ++e) {
    double v = s.value;
    if (s.kind == InitSpec::Kind::Normal) {
      v = s.std * rng.normal();
      if (s.mean != 0)
        v += s.mean;
    } else if (s.kind == InitSpec::Kind::Uniform) {
      v = s.low + (s.high - s.low) * rng.uniform();
    }
    storeElement(param.dtype, v, p + e * bytes);
  }
}

bool TokenData::load(const std::string &path, TokenData &out,
                     std::string &error) {
  std::string bytes;
  if (!readFileLimited(path, kMaxTokenFileBytes, bytes, error, "data file"))
    return false;
  if (bytes.size() % 2 != 0) {
    error = "data file '" + path + "' has " + std::to_string(bytes.size()) +
            " bytes, not a whole number of uint16 tokens";
    return false;
  }
  out.source = path;
  out.isFile = true;
  out.tokens.resize(bytes.size() / 2);
  for (size_t i = 0; i < out.tokens.size(); ++i) {
    uint16_t t = static_cast<uint8_t>(bytes[2 * i]) |
                 static_cast<uint16_t>(static_cast<uint8_t>(bytes[2 * i + 1]))
                     << 8;
    out.tokens[i] = t;
    out.maxToken = std::max<unsigned>(out.maxToken, t);
  }
  return true;
}

TokenData TokenData::builtinCorpus() {
  std::string text(kCorpus);
  std::set<char> alphabet(text.begin(), text.end());
  std::vector<char> sorted(alphabet.begin(), alphabet.end());
  TokenData data;
  data.source = "built-in corpus";
  for (char c : text) {
    unsigned id = static_cast<unsigned>(
        std::find(sorted.begin(), sorted.end(), c) - sorted.begin());
    data.tokens.push_back(static_cast<uint16_t>(id));
    data.maxToken = std::max(data.maxToken, id);
  }
  return data;
}

bool zero::driver::classifyBatch(const Abi &abi, BatchKind &kind,
                                 std::string &error) {
  auto find = [&](const char *name) -> const BatchInput * {
    for (const BatchInput &b : abi.batch)
      if (b.name == name)
        return &b;
    return nullptr;
  };
  if (abi.batch.size() == 2) {
    const BatchInput *tokens = find("tokens"), *targets = find("targets");
    if (tokens && targets && tokens->shape == targets->shape &&
        tokens->shape.size() == 2 && tokens->dtype == DType::I32 &&
        targets->dtype == DType::I32) {
      kind = BatchKind::Language;
      return true;
    }
    const BatchInput *input = find("input"), *target = find("target");
    if (input && target && input->shape.size() == 2 &&
        target->shape.size() == 2 && input->shape[0] == target->shape[0] &&
        (input->dtype == DType::F32 || input->dtype == DType::F64 ||
         input->dtype == DType::BF16) &&
        input->dtype == target->dtype) {
      kind = BatchKind::Regression;
      return true;
    }
  }
  std::string names;
  for (const BatchInput &b : abi.batch)
    names += (names.empty() ? "'" : ", '") + b.name + "'";
  error = "the driver feeds two kinds of batch: 'tokens' and 'targets' (i32, "
          "[batch, seq]) or 'input' and 'target' (f32, f64 or bf16, [batch, "
          "features]); this step takes " +
          (names.empty() ? std::string("none") : names);
  return false;
}

int64_t zero::driver::itemsPerBatch(const Abi &abi, BatchKind kind) {
  const std::vector<int64_t> &s = abi.batch.front().shape;
  return kind == BatchKind::Language ? s[0] * s[1] : s[0];
}

bool BatchSource::init(const Abi &a, BatchKind k, const TokenData *d,
                       uint64_t s, unsigned r, unsigned n,
                       std::string &error) {
  abi = &a;
  kind = k;
  data = d;
  seed = s;
  rank = r;
  worldSize = n;
  first = a.batch[0].name == (k == BatchKind::Language ? "tokens" : "input")
              ? 0
              : 1;
  if (k == BatchKind::Language) {
    int64_t t = a.batch[0].shape[1];
    if (!d || static_cast<int64_t>(d->tokens.size()) < t + 1) {
      error = (d ? d->describe() : std::string("the data")) + " has " +
              std::to_string(d ? d->tokens.size() : 0) +
              " tokens; a sequence of " + std::to_string(t) +
              " needs at least " + std::to_string(t + 1);
      return false;
    }
    return true;
  }
  int64_t in = a.batch[first].shape[1];
  int64_t out = a.batch[1 - first].shape[1];
  Rng teacherRng(mixSeed(seed, 0x7465616368ULL));
  teacher.resize(static_cast<size_t>(in * out));
  for (double &w : teacher)
    w = teacherRng.normal() / std::sqrt(static_cast<double>(in));
  return true;
}

void BatchSource::fill(uint64_t stepIndex,
                       const std::vector<void *> &buffers) const {
  Rng rng(mixSeed(seed ^ 0x6261746368ULL, stepIndex));
  if (kind == BatchKind::Language)
    fillLanguage(rng, buffers);
  else
    fillRegression(rng, buffers);
}

void BatchSource::fillLanguage(Rng &rng,
                               const std::vector<void *> &buffers) const {
  int64_t b = abi->batch[0].shape[0];
  int64_t t = abi->batch[0].shape[1];
  auto *tokens = static_cast<int32_t *>(buffers[first]);
  auto *targets = static_cast<int32_t *>(buffers[1 - first]);
  uint64_t windows = data->tokens.size() - static_cast<uint64_t>(t);
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
                                 const std::vector<void *> &buffers) const {
  const BatchInput &inType = abi->batch[first];
  const BatchInput &outType = abi->batch[1 - first];
  int64_t rows = inType.shape[0], in = inType.shape[1], out = outType.shape[1];
  // Draw the global batch's inputs in order and keep this rank's rows.
  std::vector<double> x(static_cast<size_t>(rows * in));
  for (int64_t g = 0; g < rows * static_cast<int64_t>(worldSize); ++g)
    for (int64_t i = 0; i < in; ++i) {
      double v = rng.normal();
      int64_t r = g - static_cast<int64_t>(rank) * rows;
      if (r >= 0 && r < rows)
        x[r * in + i] = v;
    }
  size_t bytes = dtypeBytes(inType.dtype);
  char *inBuf = static_cast<char *>(buffers[first]);
  char *outBuf = static_cast<char *>(buffers[1 - first]);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < in; ++i)
      storeElement(inType.dtype, x[r * in + i], inBuf + (r * in + i) * bytes);
    for (int64_t o = 0; o < out; ++o) {
      double acc = 0;
      for (int64_t i = 0; i < in; ++i)
        acc += x[r * in + i] * teacher[i * out + o];
      storeElement(outType.dtype, std::tanh(acc),
                   outBuf + (r * out + o) * bytes);
    }
  }
}
