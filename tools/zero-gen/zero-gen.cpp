//===- zero-gen.cpp - Reference-model training-step generator -------------===//
//
// Emits the training-step IR (forward_backward + AdamW optimizer) of a
// reference model, or with --summary one JSON line describing it:
//
//   zero-gen mlp --batch 2 --input 3 --hidden 4 --output 2
//   zero-gen gpt --preset gpt2-124m --summary
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/FlopCount.h"
#include "zero/Models/Models.h"
#include "zero/Support/OutputFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

using namespace mlir;
using namespace mlir::zero;
using models::ElementType;
namespace cl = llvm::cl;

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

static cl::OptionCategory genCategory("zero-gen options");

static cl::SubCommand
    mlpCmd("mlp", "Training step of a tanh MLP with mean-squared-error loss: "
                  "params fc{i}.weight (in x out) and fc{i}.bias, batch "
                  "'input' (batch x input) and 'target' (batch x output)");
static cl::SubCommand
    gptCmd("gpt",
           "Training step of a GPT-2 (nanoGPT) transformer with next-token "
           "cross-entropy: params wte, wpe, h{i}.*, ln_f.*; batch 'tokens' and "
           "'targets' (batch x seq, i32)");

// Options of both subcommands.
static cl::opt<std::string> outputFile(
    "o",
    cl::desc("Output file; '-' (the default) is stdout. Written to a "
             "temporary file and renamed, so an error leaves no partial file"),
    cl::value_desc("file"), cl::init("-"), cl::sub(mlpCmd), cl::sub(gptCmd),
    cl::cat(genCategory));
static cl::opt<ElementType> dtype(
    "dtype",
    cl::desc("Element type of parameters, activations, loss and "
             "hyper-parameters; bf16 is mixed precision"),
    cl::values(clEnumValN(ElementType::F32, "f32", "32-bit float (default)"),
               clEnumValN(ElementType::F64, "f64", "64-bit float"),
               clEnumValN(ElementType::BF16, "bf16",
                          "bf16 parameters, gradients and activations, each "
                          "op computing in f32; f32 loss, and AdamW updating "
                          "an f32 master copy (state kind 'master')")),
    cl::init(ElementType::F32), cl::sub(mlpCmd), cl::sub(gptCmd),
    cl::cat(genCategory));
static cl::opt<bool> clipGradNorm(
    "clip-grad-norm",
    cl::desc("Clip gradients by their global L2 norm in the optimizer "
             "(adds the hyper-parameter 'max_grad_norm')"),
    cl::sub(mlpCmd), cl::sub(gptCmd), cl::cat(genCategory));
static cl::opt<bool> summary(
    "summary",
    cl::desc("Print one JSON object instead of IR: the configuration, "
             "\"params\" (trainable parameter count), \"param_tensors\", and "
             "\"flops_per_step\" (FLOPs of forward_backward for one "
             "micro-batch, counted as in zero/Analysis/FlopCount.h)"),
    cl::sub(mlpCmd), cl::sub(gptCmd), cl::cat(genCategory));

// mlp; the defaults are MLPConfig's.
static const models::MLPConfig mlpDefaults;
static cl::opt<int64_t> mlpBatch("batch", cl::desc("Batch size (default 4)"),
                                 cl::value_desc("n"),
                                 cl::init(mlpDefaults.batch), cl::sub(mlpCmd),
                                 cl::cat(genCategory));
static cl::opt<int64_t> mlpInput("input",
                                 cl::desc("Input features (default 8)"),
                                 cl::value_desc("n"),
                                 cl::init(mlpDefaults.input), cl::sub(mlpCmd),
                                 cl::cat(genCategory));
static cl::list<int64_t>
    mlpHidden("hidden",
              cl::desc("Hidden layer widths, comma-separated (default "
                       "16,16); tanh follows each hidden layer"),
              cl::value_desc("w1,w2,..."), cl::CommaSeparated, cl::sub(mlpCmd),
              cl::cat(genCategory));
static cl::opt<int64_t> mlpOutput("output",
                                  cl::desc("Output features (default 4)"),
                                  cl::value_desc("n"),
                                  cl::init(mlpDefaults.output), cl::sub(mlpCmd),
                                  cl::cat(genCategory));

// gpt: sizes not given come from the preset.
static cl::opt<std::string>
    gptPreset("preset",
              cl::desc("Base configuration: 'gpt-tiny' (default; vocab 64, "
                       "seq 16, 2 layers, 2 heads, d-model 32, batch 2) or "
                       "'gpt2-124m' (vocab 50257, seq 1024, 12 layers, 12 "
                       "heads, d-model 768, batch 1); the size options "
                       "override it"),
              cl::value_desc("name"), cl::init("gpt-tiny"), cl::sub(gptCmd),
              cl::cat(genCategory));
static cl::opt<int64_t>
    gptLayers("layers", cl::desc("Transformer blocks, n_layer (from --preset)"),
              cl::value_desc("n"), cl::sub(gptCmd), cl::cat(genCategory));
static cl::opt<int64_t>
    gptDModel("d-model", cl::desc("Embedding width, n_embd (from --preset)"),
              cl::value_desc("n"), cl::sub(gptCmd), cl::cat(genCategory));
static cl::opt<int64_t>
    gptHeads("heads",
             cl::desc("Attention heads, n_head; must divide d-model (from "
                      "--preset)"),
             cl::value_desc("n"), cl::sub(gptCmd), cl::cat(genCategory));
static cl::opt<int64_t>
    gptSeq("seq",
           cl::desc("Sequence length, also the rows of wpe (block_size) "
                    "(from --preset)"),
           cl::value_desc("n"), cl::sub(gptCmd), cl::cat(genCategory));
static cl::opt<int64_t> gptVocab("vocab",
                                 cl::desc("Vocabulary size (from --preset)"),
                                 cl::value_desc("n"), cl::sub(gptCmd),
                                 cl::cat(genCategory));
static cl::opt<int64_t> gptBatch("batch",
                                 cl::desc("Micro-batch size (from --preset)"),
                                 cl::value_desc("n"), cl::sub(gptCmd),
                                 cl::cat(genCategory));

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

static int fail(const llvm::Twine &message) {
  llvm::errs() << "zero-gen: error: " << message << "\n";
  return 1;
}

/// Keys of the --summary object, in print order.
using SummaryFields = SmallVector<std::pair<std::string, llvm::json::Value>>;

/// Prints `fields` as one JSON object on one line, in order, with ": " and
/// ", " separators.
static void printSummary(llvm::raw_ostream &os, const SummaryFields &fields) {
  os << "{";
  for (auto [i, field] : llvm::enumerate(fields)) {
    if (i)
      os << ", ";
    os << llvm::formatv("{0}", llvm::json::Value(field.first)) << ": "
       << llvm::formatv("{0}", field.second);
  }
  os << "}\n";
}

/// Parameter statistics and FLOPs of the generated module.
static LogicalResult addModuleStatistics(ModuleOp module,
                                         SummaryFields &fields) {
  func::FuncOp fb;
  module.walk([&](func::FuncOp fn) {
    if (auto role = fn->getAttrOfType<StringAttr>("zero.role"))
      if (role.getValue() == "forward_backward")
        fb = fn;
  });
  if (!fb)
    return module.emitError("no forward_backward function");
  int64_t params = 0, tensors = 0;
  for (unsigned i = 0, e = fb.getNumArguments(); i < e; ++i) {
    if (!fb.getArgAttr(i, "zero.param"))
      continue;
    params +=
        cast<RankedTensorType>(fb.getArgument(i).getType()).getNumElements();
    ++tensors;
  }
  FailureOr<int64_t> flops = countFlops(fb);
  if (failed(flops))
    return failure();
  fields.push_back({"params", params});
  fields.push_back({"param_tensors", tensors});
  fields.push_back({"flops_per_step", *flops});
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  ignoreFileSizeSignal();
  cl::HideUnrelatedOptions(genCategory);
  cl::HideUnrelatedOptions(genCategory, mlpCmd);
  cl::HideUnrelatedOptions(genCategory, gptCmd);
  cl::ParseCommandLineOptions(
      argc, argv,
      "zero-gen: training-step IR for reference models\n\n"
      "Emits a module with a forward_backward function (loss and gradients "
      "of every parameter, backward pass written out) and an AdamW optimizer "
      "function, in the training-step contract of "
      "docs/training-step-ir.md. Run 'zero-gen mlp --help' or "
      "'zero-gen gpt --help' for the options of each model.\n");

  MLIRContext ctx(MLIRContext::Threading::DISABLED);
  ctx.printOpOnDiagnostic(false);
  // MLIR diagnostics (the generators' IR carries no useful locations) in the
  // tool's one-line format.
  ScopedDiagnosticHandler diagnostics(&ctx, [](Diagnostic &diag) {
    StringRef severity = "note";
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      severity = "error";
    else if (diag.getSeverity() == DiagnosticSeverity::Warning)
      severity = "warning";
    llvm::errs() << "zero-gen: " << severity << ": " << diag.str() << "\n";
    for (Diagnostic &note : diag.getNotes())
      llvm::errs() << "zero-gen: note: " << note.str() << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module;
  SummaryFields fields;
  if (mlpCmd) {
    models::MLPConfig config;
    config.batch = mlpBatch;
    config.input = mlpInput;
    if (!mlpHidden.empty())
      config.hidden.assign(mlpHidden.begin(), mlpHidden.end());
    config.output = mlpOutput;
    config.dtype = dtype;
    config.clipGradNorm = clipGradNorm;
    if (llvm::Error e = models::validate(config))
      return fail(toString(std::move(e)));
    module = models::buildMLP(ctx, config);
    fields = {{"model", "mlp"},
              {"batch", config.batch},
              {"input", config.input},
              {"hidden", llvm::json::Array(config.hidden)},
              {"output", config.output}};
  } else if (gptCmd) {
    std::optional<models::GPTConfig> config = models::getGPTPreset(gptPreset);
    if (!config)
      return fail("unknown --preset '" + gptPreset + "' (expected one of: " +
                  llvm::join(models::getGPTPresetNames(), ", ") + ")");
    auto override = [](int64_t &field, const cl::opt<int64_t> &opt) {
      if (opt.getNumOccurrences())
        field = opt;
    };
    override(config->vocab, gptVocab);
    override(config->seq, gptSeq);
    override(config->layers, gptLayers);
    override(config->heads, gptHeads);
    override(config->dModel, gptDModel);
    override(config->batch, gptBatch);
    config->dtype = dtype;
    config->clipGradNorm = clipGradNorm;
    if (llvm::Error e = models::validate(*config))
      return fail(toString(std::move(e)));
    module = models::buildGPT(ctx, *config);
    fields = {{"model", "gpt"},
              {"preset", std::string(gptPreset)},
              {"vocab", config->vocab},
              {"seq", config->seq},
              {"layers", config->layers},
              {"heads", config->heads},
              {"d_model", config->dModel},
              {"batch", config->batch}};
  } else {
    return fail("expected a model: 'zero-gen mlp ...' or 'zero-gen gpt ...' "
                "(see --help)");
  }
  fields.push_back({"dtype", models::stringifyElementType(dtype)});
  fields.push_back({"clip_grad_norm", static_cast<bool>(clipGradNorm)});

  // The builders only produce valid IR; anything else is our bug.
  if (!module || failed(verify(*module)))
    return fail("internal: the generated module does not verify");
  // Diagnosed already (e.g. a FLOP count beyond int64).
  if (summary && failed(addModuleStatistics(*module, fields)))
    return 1;

  if (llvm::Error e = writeOutputFile(outputFile, [&](llvm::raw_ostream &os) {
        if (summary)
          printSummary(os, fields);
        else
          module->print(os);
      }))
    return fail(toString(std::move(e)));
  return 0;
}
