//===- Models.h - Reference-model training-step generators ------*- C++ -*-===//
//
// Builders for the reference models that zero-gen emits: an MLP and a
// GPT-2-style transformer, each as a training-step module in the contract of
// docs/training-step-ir.md (`forward_backward` with an explicit, hand-derived
// backward pass, and an AdamW `optimizer`). Only IR is built; weights are
// never materialized, so any size builds in milliseconds.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_MODELS_MODELS_H
#define ZERO_MODELS_MODELS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>

namespace mlir::zero::models {

/// Element type of parameters, gradients and activations. F32 and F64 also
/// hold the loss, hyper-parameters and optimizer states. BF16 is mixed
/// precision: bf16 parameters, gradients and activations, computed in f32
/// inside each op (matmuls accumulate in f32, reductions such as LayerNorm's
/// statistics and the softmax denominators stay f32), an f32 loss and
/// hyper-parameters, and AdamW holding an f32 master copy of each parameter
/// (state kind "master") next to f32 moments.
enum class ElementType { F32, F64, BF16 };

llvm::StringRef stringifyElementType(ElementType type);
std::optional<ElementType> parseElementType(llvm::StringRef name);

/// A multi-layer perceptron trained on mean squared error:
///   h_0 = x;  h_{i+1} = tanh(h_i @ W_i + b_i)  (no tanh after the last layer)
///   loss = mean over batch x output of (h_L - target)^2
/// Parameters `fc{i}.weight` (in x out) and `fc{i}.bias` (out).
struct MLPConfig {
  int64_t batch = 4;
  int64_t input = 8;
  llvm::SmallVector<int64_t> hidden = {16, 16};
  int64_t output = 4;
  ElementType dtype = ElementType::F32;
  /// Global gradient-norm clipping in the optimizer (`max_grad_norm` hyper).
  bool clipGradNorm = false;
};

/// A GPT-2 (nanoGPT) decoder trained on next-token cross-entropy: learned
/// token and position embeddings, `layers` pre-LayerNorm blocks of causal
/// multi-head attention and a GELU MLP, a final LayerNorm and an LM head
/// tied to the token embedding. The position table has `seq` rows. Token ids
/// (batch inputs `tokens` and `targets`, i32) must lie in [0, vocab); the IR
/// does not check them.
struct GPTConfig {
  int64_t vocab = 64;
  int64_t seq = 16;
  int64_t layers = 2;
  int64_t heads = 2;
  int64_t dModel = 32;
  int64_t batch = 2;
  ElementType dtype = ElementType::F32;
  bool clipGradNorm = false;
};

/// Names accepted by getGPTPreset(): "gpt2-124m" (GPT-2 small, 124,439,808
/// parameters, micro-batch 1) and "gpt-tiny" (the GPTConfig defaults).
llvm::ArrayRef<llvm::StringRef> getGPTPresetNames();
std::optional<GPTConfig> getGPTPreset(llvm::StringRef name);

/// Checks that a configuration describes a buildable model (every size >= 1,
/// d-model divisible by heads, vocabulary ids fit in i32, no tensor whose
/// element count overflows int64). The message is one line without a prefix.
llvm::Error validate(const MLPConfig &config);
llvm::Error validate(const GPTConfig &config);

/// Builds the training-step module. The configuration must pass validate();
/// otherwise an error is emitted on `ctx` and a null module returned. Loads
/// the dialects it needs into `ctx`.
OwningOpRef<ModuleOp> buildMLP(MLIRContext &ctx, const MLPConfig &config);
OwningOpRef<ModuleOp> buildGPT(MLIRContext &ctx, const GPTConfig &config);

} // namespace mlir::zero::models

#endif // ZERO_MODELS_MODELS_H
