//===- CompiledStep.h - A training step compiled for the CPU ----*- C++ -*-===//
//
// Compiles a verified training-step module with zero-lower-cpu and JITs it
// with MLIR's ExecutionEngine against the zero runtime. Between the two
// halves of the pipeline it reads the buffer ABI of the step functions (which
// argument is which parameter, gradient, state, ...) from their `zero.*`
// argument attributes, so callers hand over buffers by role, not by position.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNNER_COMPILEDSTEP_H
#define ZERO_RUNNER_COMPILEDSTEP_H

#include "zero/Analysis/TrainingStep.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
namespace zero {

/// What one argument of a bufferized step function is.
struct AbiArg {
  enum class Role { Param, Grad, State, Batch, Hyper, Loss };
  Role role;
  /// Index into TrainingStep::params (Param, Grad), ::states (State),
  /// ::batch (Batch), ::hypers (Hyper); unused for Loss.
  unsigned index = 0;
  /// True for out-parameters the optimizer could not update in place: the
  /// caller passes a separate buffer and copies it back after the call.
  bool isOutCopy = false;
  /// Memref rank, or -1 for a scalar.
  int rank = -1;
};

/// Host-side description of a buffer handed to a step function.
struct Buffer {
  void *data = nullptr;
  llvm::SmallVector<int64_t, 4> shape;
};

class CompiledStep {
public:
  ~CompiledStep();

  struct Options {
    bool gemmToRuntime = true;
    /// LLVM optimization level for the JIT (0-3).
    unsigned optLevel = 2;
  };

  /// Lowers and JIT-compiles `module`, which must satisfy the training-step
  /// contract (`step` is its parsed form). Errors carry one-line messages.
  static llvm::Expected<std::unique_ptr<CompiledStep>>
  compile(ModuleOp module, const TrainingStep &step, const Options &options);

  /// Lowers and JIT-compiles `partitioned`, zero-partition's output for the
  /// module `step` was read from (it holds @train_step instead of the two
  /// contract functions).
  static llvm::Expected<std::unique_ptr<CompiledStep>>
  compileTrainStep(ModuleOp partitioned, const TrainingStep &step,
                   const Options &options);

  /// Calls @train_step: reads the batch, updates parameters and states in
  /// place (full or sharded, as partitioned), writes the global mean loss.
  llvm::Error trainStep(llvm::ArrayRef<Buffer> params,
                        llvm::ArrayRef<Buffer> states,
                        llvm::ArrayRef<Buffer> batch, Buffer loss,
                        llvm::ArrayRef<double> hypers);

  /// The argument roles of the bufferized functions, in order.
  llvm::ArrayRef<AbiArg> forwardBackwardAbi() const { return fbAbi; }
  llvm::ArrayRef<AbiArg> optimizerAbi() const { return optAbi; }

  /// Calls forward_backward: reads params and batch, writes loss and grads.
  llvm::Error forwardBackward(llvm::ArrayRef<Buffer> params,
                              llvm::ArrayRef<Buffer> batch, Buffer loss,
                              llvm::ArrayRef<Buffer> grads);
  /// Calls the optimizer: updates params and states in place. `hypers` are in
  /// TrainingStep::hypers order, each as a double converted to its type.
  llvm::Error optimizer(llvm::ArrayRef<Buffer> params,
                        llvm::ArrayRef<Buffer> grads,
                        llvm::ArrayRef<Buffer> states,
                        llvm::ArrayRef<double> hypers);

  /// Seconds spent lowering and JIT-compiling.
  double compileSeconds() const { return compileTime; }

private:
  CompiledStep() = default;
  /// The caller's buffers by role; a function uses the roles it has.
  struct Buffers {
    llvm::ArrayRef<Buffer> params, grads, states, batch;
    Buffer loss;
    Buffer lookup(const AbiArg &arg) const;
  };
  llvm::Error call(llvm::StringRef name, llvm::ArrayRef<AbiArg> abi,
                   const Buffers &buffers, llvm::ArrayRef<double> hypers);

  const TrainingStep *step = nullptr;
  static llvm::Expected<std::unique_ptr<CompiledStep>>
  compileFunctions(ModuleOp module, const TrainingStep &step,
                   const Options &options,
                   llvm::ArrayRef<std::pair<std::string, unsigned>> functions);

  std::string fbName, optName, trainName;
  std::vector<AbiArg> fbAbi, optAbi, trainAbi;
  std::unique_ptr<ExecutionEngine> engine;
  double compileTime = 0;
};

} // namespace zero
} // namespace mlir

#endif // ZERO_RUNNER_COMPILEDSTEP_H
