//===- ZeroDialect.td - zero dialect definition ------------*- tablegen -*-===//
//
// The `zero` dialect: what upstream MLIR lacks to express a ZeRO training
// step: the training-step contract attributes, the token type and the started
// collectives that zero-schedule makes.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DIALECT_ZERO_IR_ZERODIALECT_TD
#define ZERO_DIALECT_ZERO_IR_ZERODIALECT_TD

include "mlir/IR/OpBase.td"

def Zero_Dialect : Dialect {
  let name = "zero";
  let cppNamespace = "::mlir::zero";
  let summary = "Zero Redundancy Optimizer (ZeRO) training-step dialect";
  let description = [{
    The `zero` dialect marks up a training step written in upstream dialects
    (`func`, `linalg`, `tensor`, `arith`, `math`, `scf`) so that the ZeRO passes
    can find its parts. See `docs/training-step-ir.md` for the full contract.

    Discardable attributes:

    | attribute | where | value |
    |---|---|---|
    | `zero.role` | `func.func` | `"forward_backward"`, `"optimizer"`, or `"train_step"` (made by zero-partition) |
    | `zero.param` | argument / result | parameter name (string) |
    | `zero.grad` | argument / result | name of the parameter it is the gradient of |
    | `zero.batch` | `forward_backward` argument | batch input name (string) |
    | `zero.loss` | `forward_backward` result | unit |
    | `zero.state` | `optimizer` argument / result | `{param = "<name>", kind = "<kind>"}` |
    | `zero.hyper` | `optimizer` argument | hyper-parameter name (string) |
    | `zero.stage`, `zero.world_size` | `train_step` | the ZeRO stage (0-3) and the number of ranks it was partitioned for |
    | `zero.manifest` | `train_step` | one `#zero.layout` per parameter (below): `name`, `shape`, `numel`, `padded` (numel rounded up to a multiple of `zero.world_size`, which must be beside it) and `shard` (padded / world size), `sharded` (which of the parameter, its gradient and its states a rank holds only its shard of: zero-partition's decision for the stage) and `grad_bytes` (bytes per element of the gradient the step holds) where an accumulator is wider than the parameter (bf16 with `accumulate`); rank r owns elements [r*shard, (r+1)*shard) of the flattened, zero-padded parameter, its gradient and its states |
    | `zero.category` | an operation that allocates (`shard` collectives, `memref.alloc`) | `"params"`, `"grads"`, `"optimizer_states"` or `"activations"`: the memory category the runtime counts its buffer to (docs/zero-form.md) |
    | `zero.init` | parameter argument | how a driver initializes the parameter: `{kind = "normal", std = 0.02 : f64}` (optional `mean`), `{kind = "uniform", low = -0.1 : f64, high = 0.1 : f64}` or `{kind = "constant", value = 1.0 : f64}`; without it the documented default of docs/runtime-abi.md applies |
    | `zero.hyper_default` | `optimizer` argument with `zero.hyper` | a float or integer: the value drivers pass when the run sets none (zero-run's `--lr` ... and `--hyper` override it) |
    | `zero.token_range` | integer batch argument | the number of token ids the input takes (ids lie in [0, n)); a driver checks its data against it |
    | `zero.sharded` | `train_step` argument or result | unit: the value holds this rank's shard of a parameter or state (set by zero-partition, the one place that decides what a stage shards) |
    | `zero.parallel_iterations` | `func.func` (or `llvm.func`) | the trip count N of the outer loop dimension a function that is one parallel loop nest runs a range of; it takes that range as its first two (`index`) arguments (zero-parallel-loop-functions; consumed by zero-parallel-calls-to-runtime) |
    | `zero.extent` | `i64` argument of a lowered step | the tensor type of the NVMe extent whose runtime handle the argument is (zero-collectives-to-runtime's lowering of a `!zero.extent` argument) |
    | `zero.space` | `train_step` argument or result; an operation | `"host"`: the value lives in host memory next to the device the step runs on (zero-offload's `optimizer=host`); on an operation: it runs on the host (an update), or the buffer it allocates is host memory (`zero.copy_start`, `memref.alloc`); `"device"` (the default) on a `zero.copy_start`: its result is device memory |
    | `zero.step_abi` | `builtin.module` | the step ABI descriptor (made by zero-step-abi): entry points and every argument's role, shape, type, shard and category (docs/runtime-abi.md) |

    The dialect checks each attribute's value kind where it is attached
    (`zero.manifest`: each layout against the world size, by runtime.h's
    `zrt_flat_layout`); the `zero-verify` pass checks the contract as a
    whole.
  }];
  let discardableAttrs = (ins
    "::mlir::StringAttr":$role,
    "::mlir::StringAttr":$param,
    "::mlir::StringAttr":$grad,
    "::mlir::StringAttr":$batch,
    "::mlir::UnitAttr":$loss,
    "::mlir::DictionaryAttr":$state,
    "::mlir::StringAttr":$hyper,
    "::mlir::IntegerAttr":$stage,
    "::mlir::IntegerAttr":$world_size,
    "::mlir::ArrayAttr":$manifest,
    "::mlir::StringAttr":$category,
    "::mlir::DictionaryAttr":$init,
    "::mlir::IntegerAttr":$token_range,
    "::mlir::Attribute":$hyper_default,
    "::mlir::DictionaryAttr":$step_abi,
    "::mlir::UnitAttr":$sharded,
    "::mlir::IntegerAttr":$parallel_iterations,
    "::mlir::TypeAttr":$extent,
    "::mlir::StringAttr":$space
  );
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::shard::ShardDialect"];
}

class Zero_Op<string mnemonic, list<Trait> traits = []>
    : Op<Zero_Dialect, mnemonic, traits>;

#endif // ZERO_DIALECT_ZERO_IR_ZERODIALECT_TD
