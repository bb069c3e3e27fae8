//===- CompiledStep.cpp - A training step compiled for the CPU ------------===//

#include "zero/Runner/CompiledStep.h"

#include "zero/Conversion/Pipelines.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"

#include "zero/runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"

#include <chrono>
#include <cstring>
#include <mutex>

using namespace mlir;
using namespace mlir::zero;

namespace {
llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Runs `pm` on `module`; on failure the error holds the diagnostics.
llvm::Error runPipeline(PassManager &pm, ModuleOp module, StringRef what) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &diag) {
    os << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  if (failed(pm.run(module)))
    return makeError("lowering failed in " + what + ": " +
                     StringRef(diagnostics).trim());
  return llvm::Error::success();
}

/// Reads the role of every argument of the bufferized function `name`.
llvm::Expected<std::vector<AbiArg>> readAbi(ModuleOp module, StringRef name,
                                            const TrainingStep &step,
                                            unsigned numOriginalArgs) {
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn)
    return makeError("function @" + name + " vanished during lowering");
  std::vector<AbiArg> abi;
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
    AbiArg arg;
    Type type = fn.getArgument(i).getType();
    if (auto memref = dyn_cast<MemRefType>(type))
      arg.rank = memref.getRank();
    auto str = [&](StringRef attr) {
      auto s = fn.getArgAttrOfType<StringAttr>(i, attr);
      return s ? s.getValue() : StringRef();
    };
    if (fn.getArgAttr(i, ZeroDialect::LossAttrHelper::getNameStr())) {
      arg.role = AbiArg::Role::Loss;
    } else if (StringRef p = str(ZeroDialect::ParamAttrHelper::getNameStr());
               !p.empty()) {
      arg.role = AbiArg::Role::Param;
      arg.index = *step.lookupParam(p);
    } else if (StringRef g = str(ZeroDialect::GradAttrHelper::getNameStr());
               !g.empty()) {
      arg.role = AbiArg::Role::Grad;
      arg.index = *step.lookupParam(g);
    } else if (auto dict = fn.getArgAttrOfType<DictionaryAttr>(
                   i, ZeroDialect::StateAttrHelper::getNameStr())) {
      arg.role = AbiArg::Role::State;
      StringRef param = dict.getAs<StringAttr>("param").getValue();
      StringRef kind = dict.getAs<StringAttr>("kind").getValue();
      bool found = false;
      for (auto [s, state] : llvm::enumerate(step.states))
        if (state.kind == kind && step.params[state.param].name == param) {
          arg.index = s;
          found = true;
        }
      if (!found)
        return makeError("unknown optimizer state in the lowered @" + name);
    } else if (StringRef b = str(ZeroDialect::BatchAttrHelper::getNameStr());
               !b.empty()) {
      arg.role = AbiArg::Role::Batch;
      arg.index = llvm::find_if(step.batch,
                                [&](const BatchInfo &x) { return x.name == b; }) -
                  step.batch.begin();
    } else if (StringRef h = str(ZeroDialect::HyperAttrHelper::getNameStr());
               !h.empty()) {
      arg.role = AbiArg::Role::Hyper;
      arg.index = llvm::find_if(step.hypers,
                                [&](const HyperInfo &x) { return x.name == h; }) -
                  step.hypers.begin();
    } else {
      return makeError("argument #" + llvm::Twine(i) + " of the lowered @" +
                       name + " has no zero.* role");
    }
    // Parameters and states appended by buffer-results-to-out-params are
    // updates the optimizer could not make in place.
    arg.isOutCopy =
        i >= numOriginalArgs &&
        (arg.role == AbiArg::Role::Param || arg.role == AbiArg::Role::State);
    abi.push_back(arg);
  }
  return abi;
}
} // namespace

CompiledStep::~CompiledStep() = default;

llvm::Expected<std::unique_ptr<CompiledStep>>
CompiledStep::compile(ModuleOp module, const TrainingStep &step,
                      const Options &options) {
  // Op handles are cheap copies; their accessors are not const.
  func::FuncOp fb = step.forwardBackward, opt = step.optimizer;
  return compileFunctions(module, step, options,
                          {{fb.getSymName().str(), fb.getNumArguments()},
                           {opt.getSymName().str(), opt.getNumArguments()}});
}

llvm::Expected<std::unique_ptr<CompiledStep>>
CompiledStep::compileTrainStep(ModuleOp partitioned, const TrainingStep &step,
                               const Options &options) {
  auto train = partitioned.lookupSymbol<func::FuncOp>("train_step");
  if (!train)
    return makeError("the partitioned module has no @train_step");
  return compileFunctions(partitioned, step, options,
                          {{"train_step", train.getNumArguments()}});
}

llvm::Expected<std::unique_ptr<CompiledStep>> CompiledStep::compileFunctions(
    ModuleOp module, const TrainingStep &step, const Options &options,
    ArrayRef<std::pair<std::string, unsigned>> functions) {
  static std::once_flag llvmInit;
  std::call_once(llvmInit, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto start = std::chrono::steady_clock::now();

  std::unique_ptr<CompiledStep> compiled(new CompiledStep());
  compiled->step = &step;

  OwningOpRef<ModuleOp> lowered(module.clone());
  MLIRContext *ctx = module.getContext();
  {
    PassManager pm(ctx);
    buildBufferizeStepPipeline(pm);
    if (llvm::Error err = runPipeline(pm, *lowered, "zero-bufferize-step"))
      return std::move(err);
  }
  for (auto [i, fn] : llvm::enumerate(functions)) {
    auto abi = readAbi(*lowered, fn.first, step, fn.second);
    if (!abi)
      return abi.takeError();
    if (functions.size() == 1) {
      compiled->trainName = fn.first;
      compiled->trainAbi = std::move(*abi);
    } else if (i == 0) {
      compiled->fbName = fn.first;
      compiled->fbAbi = std::move(*abi);
    } else {
      compiled->optName = fn.first;
      compiled->optAbi = std::move(*abi);
    }
  }
  {
    PassManager pm(ctx);
    LowerCPUOptions lowerOptions;
    lowerOptions.gemmToRuntime = options.gemmToRuntime;
    buildLowerToLLVMPipeline(pm, lowerOptions);
    if (llvm::Error err = runPipeline(pm, *lowered, "zero-lower-to-llvm"))
      return std::move(err);
  }

  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  ctx->appendDialectRegistry(registry);

  auto transformer = makeOptimizingTransformer(options.optLevel,
                                               /*sizeLevel=*/0, nullptr);
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.enableGDBNotificationListener = false;
  engineOptions.enablePerfNotificationListener = false;
  auto engine = ExecutionEngine::create(*lowered, engineOptions);
  if (!engine)
    return makeError("JIT compilation failed: " +
                     llvm::toString(engine.takeError()));
  compiled->engine = std::move(*engine);
  compiled->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    auto add = [&](StringRef name, void *fn) {
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                             llvm::JITSymbolFlags::Exported};
    };
    // Every runtime entry point lowered code calls: GEMM, the allocation
    // hooks and categories, the collectives of zero-partition's output.
#define ZERO_RUNTIME_SYMBOL(fn) add(#fn, reinterpret_cast<void *>(&fn))
    ZERO_RUNTIME_SYMBOL(zrt_gemm_f32);
    ZERO_RUNTIME_SYMBOL(zrt_gemm_f64);
    ZERO_RUNTIME_SYMBOL(zrt_gemm_batched_f32);
    ZERO_RUNTIME_SYMBOL(zrt_gemm_batched_f64);
    ZERO_RUNTIME_SYMBOL(_mlir_memref_to_llvm_alloc);
    ZERO_RUNTIME_SYMBOL(_mlir_memref_to_llvm_aligned_alloc);
    ZERO_RUNTIME_SYMBOL(_mlir_memref_to_llvm_free);
    ZERO_RUNTIME_SYMBOL(zrt_set_generated_category);
    ZERO_RUNTIME_SYMBOL(zrt_world_rank);
    ZERO_RUNTIME_SYMBOL(zrt_all_gather_f32);
    ZERO_RUNTIME_SYMBOL(zrt_all_gather_f64);
    ZERO_RUNTIME_SYMBOL(zrt_reduce_scatter_sum_f32);
    ZERO_RUNTIME_SYMBOL(zrt_reduce_scatter_sum_f64);
    ZERO_RUNTIME_SYMBOL(zrt_all_reduce_sum_f32);
    ZERO_RUNTIME_SYMBOL(zrt_all_reduce_sum_f64);
    ZERO_RUNTIME_SYMBOL(zrt_all_reduce_max_f32);
    ZERO_RUNTIME_SYMBOL(zrt_all_reduce_max_f64);
    ZERO_RUNTIME_SYMBOL(zrt_all_reduce_scalar_sum_f32);
    ZERO_RUNTIME_SYMBOL(zrt_all_reduce_scalar_sum_f64);
    ZERO_RUNTIME_SYMBOL(zrt_all_reduce_scalar_max_f32);
    ZERO_RUNTIME_SYMBOL(zrt_all_reduce_scalar_max_f64);
#undef ZERO_RUNTIME_SYMBOL
    return map;
  });
  compiled->engine->initialize();
  // The JIT generates machine code on first lookup; do it now, so that
  // compile time is reported here and not in the first training step.
  for (const auto &function : functions) {
    const std::string &name = function.first;
    auto fn = compiled->engine->lookupPacked(name);
    if (!fn)
      return makeError("JIT compilation of @" + name +
                       " failed: " + llvm::toString(fn.takeError()));
  }
  compiled->compileTime = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  return compiled;
}

Buffer CompiledStep::Buffers::lookup(const AbiArg &arg) const {
  switch (arg.role) {
  case AbiArg::Role::Param:
    return params[arg.index];
  case AbiArg::Role::Grad:
    return grads[arg.index];
  case AbiArg::Role::State:
    return states[arg.index];
  case AbiArg::Role::Batch:
    return batch[arg.index];
  case AbiArg::Role::Loss:
    return loss;
  case AbiArg::Role::Hyper:
    break;
  }
  return Buffer();
}

llvm::Error CompiledStep::call(StringRef name, ArrayRef<AbiArg> abi,
                               const Buffers &buffers,
                               ArrayRef<double> hypers) {
  // The packed wrapper `_mlir_<name>(void **)` takes one pointer per LLVM
  // argument; a rank-r memref is expanded into (allocated, aligned, offset,
  // sizes[r], strides[r]).
  size_t numSlots = 0;
  for (const AbiArg &arg : abi)
    numSlots += arg.rank < 0 ? 1 : 3 + 2 * arg.rank;
  std::vector<int64_t> slots(numSlots);
  std::vector<void *> args;
  args.reserve(numSlots);
  struct Copy {
    void *from, *to;
    size_t bytes;
  };
  std::vector<Copy> copies;
  size_t next = 0;
  auto push = [&](int64_t value) {
    slots[next] = value;
    args.push_back(&slots[next++]);
  };
  for (const AbiArg &arg : abi) {
    if (arg.rank < 0) {
      // A scalar hyper-parameter, stored in its own type.
      Type type = step->hypers[arg.index].type;
      double value = hypers[arg.index];
      int64_t bits = 0;
      if (type.isF32()) {
        float f = static_cast<float>(value);
        std::memcpy(&bits, &f, sizeof f);
      } else if (type.isF64()) {
        std::memcpy(&bits, &value, sizeof value);
      } else if (type.isInteger()) {
        bits = static_cast<int64_t>(value);
      } else {
        return makeError("hyper-parameter '" + step->hypers[arg.index].name +
                         "' has a type the CPU runner does not pass");
      }
      push(bits);
      continue;
    }
    Buffer buffer = buffers.lookup(arg);
    if (static_cast<int>(buffer.shape.size()) != arg.rank)
      return makeError("buffer of rank " + llvm::Twine(buffer.shape.size()) +
                       " passed for a rank-" + llvm::Twine(arg.rank) +
                       " argument of @" + name);
    void *data = buffer.data;
    if (arg.isOutCopy) {
      int64_t elements = 1;
      for (int64_t d : buffer.shape)
        elements *= d;
      size_t bytes = elements * (arg.role == AbiArg::Role::State
                                     ? step->states[arg.index]
                                           .type.getElementTypeBitWidth()
                                     : step->params[arg.index]
                                           .type.getElementTypeBitWidth()) /
                     8;
      data = zrt_alloc(bytes, ZRT_ACTIVATIONS);
      if (!data)
        return makeError(zrt_last_error());
      copies.push_back({data, buffer.data, bytes});
    }
    push(reinterpret_cast<intptr_t>(data));
    push(reinterpret_cast<intptr_t>(data));
    push(0);
    for (int64_t d : buffer.shape)
      push(d);
    int64_t stride = 1;
    SmallVector<int64_t, 4> strides(buffer.shape.size());
    for (int i = static_cast<int>(buffer.shape.size()) - 1; i >= 0; --i) {
      strides[i] = stride;
      stride *= buffer.shape[i];
    }
    for (int64_t s : strides)
      push(s);
  }
  llvm::Error err = engine->invokePacked(name, args);
  for (const Copy &copy : copies) {
    if (!err)
      std::memcpy(copy.to, copy.from, copy.bytes);
    zrt_free(copy.from);
  }
  return err;
}

llvm::Error CompiledStep::forwardBackward(ArrayRef<Buffer> params,
                                          ArrayRef<Buffer> batch, Buffer loss,
                                          ArrayRef<Buffer> grads) {
  return call(fbName, fbAbi, {params, grads, {}, batch, loss}, {});
}

llvm::Error CompiledStep::optimizer(ArrayRef<Buffer> params,
                                    ArrayRef<Buffer> grads,
                                    ArrayRef<Buffer> states,
                                    ArrayRef<double> hypers) {
  return call(optName, optAbi, {params, grads, states, {}, {}}, hypers);
}

llvm::Error CompiledStep::trainStep(ArrayRef<Buffer> params,
                                    ArrayRef<Buffer> states,
                                    ArrayRef<Buffer> batch, Buffer loss,
                                    ArrayRef<double> hypers) {
  return call(trainName, trainAbi, {params, {}, states, batch, loss}, hypers);
}
