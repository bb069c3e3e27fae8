//===- ZeroOps.td - zero dialect operations ----------------*- tablegen -*-===//
//
// Operations of the `zero` dialect. Upstream `shard` ops carry the blocking
// collectives on tensors; only what upstream lacks is defined here: their
// form on buffers (what bufferization makes of them), collectives that
// start now and complete at a `zero.wait`, the communication arena, and
// the transfers of the NVMe tier (zero-offload). Every collective stays one
// of these typed ops until zero-collectives-to-runtime, the last step
// before LLVM, turns them into calls of the runtime (runtime.h).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DIALECT_ZERO_IR_ZEROOPS_TD
#define ZERO_DIALECT_ZERO_IR_ZEROOPS_TD

include "zero/Dialect/Zero/IR/ZeroDialect.td"
include "zero/Dialect/Zero/IR/ZeroAttrs.td"
include "mlir/Dialect/Shard/IR/ShardBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Zero_TokenType : TypeDef<Zero_Dialect, "Token"> {
  let mnemonic = "token";
  let summary = "A started collective, completed by zero.wait";
  let description = [{
    The handle of a collective in flight: made by a `zero.*_start` op and
    consumed by exactly one `zero.wait`. Lowered to the runtime's request
    number (`i64`, runtime.h "Asynchronous collectives").
  }];
}

def Zero_ExtentType : TypeDef<Zero_Dialect, "Extent"> {
  let mnemonic = "extent";
  let summary = "A tensor kept on the NVMe tier";
  let description = [{
    The value of a tensor that lives in an extent of the rank's NVMe file
    (zero-offload's `optimizer=nvme`, `params=nvme`), not in memory: a
    function argument of this type is read into a staging buffer with
    `zero.read_start` and written back with `zero.write_start`. Lowered to
    the runtime's extent handle (`i64`, runtime.h "NVMe offload").

    ```mlir
    %m: !zero.extent<tensor<1024xf32>>
    ```
  }];
  let parameters = (ins "::mlir::RankedTensorType":$tensorType);
  let assemblyFormat = "`<` $tensorType `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Collectives on buffers
//===----------------------------------------------------------------------===//

class Zero_CollectiveOp<string mnemonic, string what>
    : Zero_Op<mnemonic, [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let arguments = (ins AnyMemRef:$input, AnyMemRef:$output);
  let assemblyFormat = [{
    $input `into` $output attr-dict `:` type($input) `into` type($output)
  }];
  let hasVerifier = 1;
  string summaryText = what # " over the data-parallel ranks, on buffers";
  string form = [{
    Reads `input` and writes `output` (static shapes, contiguous row-major,
    one element type), blocking: the bufferized form of the `shard`
    collective, made by bufferization. Collectives, blocking or started, run
    in program order on every rank.
  }];
}

def Zero_AllGatherOp : Zero_CollectiveOp<"all_gather", "An all-gather"> {
  let summary = summaryText;
  let description = [{
    Every rank's 1-D `input` of n elements, concatenated in rank order into
    the 1-D `output` of N*n elements: `shard.all_gather` along axis 0 of the
    grid of all ranks.
  }] # form # [{

    ```mlir
    zero.all_gather %shard into %full : memref<64xf32> into memref<128xf32>
    ```
  }];
}

def Zero_ReduceScatterOp
    : Zero_CollectiveOp<"reduce_scatter", "A sum reduce-scatter"> {
  let summary = summaryText;
  let description = [{
    The elementwise sum over the ranks of the 1-D `input` (N*n elements),
    of which this rank keeps block `rank` (n elements) in `output`:
    `shard.reduce_scatter` with `sum` along axis 0, summed in rank order.
  }] # form;
}

def Zero_AllReduceOp : Zero_Op<"all_reduce",
    [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "An all-reduce over the data-parallel ranks, on buffers";
  let description = [{
    The elementwise `reduction` (`sum` or `max`) over the ranks of `input`,
    any static shape, into `output` of the same shape (which may be
    `input`): `shard.all_reduce`, combined in rank order. A rank-0 buffer
    of f32 or f64 is a scalar, which the runtime takes by value.
    Collectives, blocking or started, run in program order on every rank.

    ```mlir
    zero.all_reduce %partial into %total reduction = max
        : memref<f32> into memref<f32>
    ```
  }];
  let arguments = (ins AnyMemRef:$input, AnyMemRef:$output,
      DefaultValuedAttr<Shard_ReductionKindAttr,
                        "::mlir::shard::ReductionKind::Sum">:$reduction);
  let assemblyFormat = [{
    $input `into` $output (`reduction` `=` $reduction^)? attr-dict `:`
    type($input) `into` type($output)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// The communication arena
//===----------------------------------------------------------------------===//

def Zero_CommReserveOp : Zero_Op<"comm_reserve",
    [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Reserves communication scratch for started collectives";
  let description = [{
    Adds a buffer of `bytes` to the communication arena unless one at least
    that large is reserved already; the started collectives in flight take
    their scratch from it (runtime.h, "The communication arena").
    zero-comm-buffers places these where the CPU target's started
    reductions need them, and zero-memory-report counts them.

    ```mlir
    zero.comm_reserve 4096
    ```
  }];
  let arguments = (ins I64Attr:$bytes);
  let assemblyFormat = "$bytes attr-dict";
  let hasVerifier = 1;
}

def Zero_CommReleaseOp : Zero_Op<"comm_release",
    [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Frees the communication arena";
  let description = [{
    Waits until no collective uses the arena, then frees every buffer of it.
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Started collectives
//===----------------------------------------------------------------------===//

def Zero_TensorOrMemRef : AnyTypeOf<[AnyRankedTensor, AnyMemRef]>;

class Zero_StartOp<string mnemonic, string what>
    : Zero_Op<mnemonic, [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let arguments = (ins Zero_TensorOrMemRef:$input,
                       Optional<AnyMemRef>:$output);
  let results = (outs Optional<AnyRankedTensor>:$pending,
                      Zero_TokenType:$token);
  let assemblyFormat = [{
    $input (`into` $output^)? attr-dict `:` type($input)
    (`into` type($output)^)? (`->` type($pending)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The tensor form (pending result) or the memref form (output operand).
    bool hasTensorSemantics() { return getPending() != nullptr; }
  }];
  string summaryText = "Starts " # what # " over the data-parallel ranks";
  string forms = [{
    On tensors, the op returns the result as `pending`, a tensor that only
    the matching `zero.wait` may use, and the token; on memrefs it writes
    `output` (static shape, contiguous row-major) and returns the token. Either
    way the result exists only after the `zero.wait` of the token, and
    `input` must stay unchanged until then (the wait lists it). Collectives,
    started or blocking, run in program order on every rank.
  }];
}

def Zero_AllGatherStartOp
    : Zero_StartOp<"all_gather_start", "an all-gather"> {
  let summary = summaryText;
  let description = [{
    Every rank's 1-D `input` of n elements, concatenated in rank order into
    a 1-D result of N*n elements: `shard.all_gather` along axis 0 of the
    grid of all ranks, started.
  }] # forms # [{

    ```mlir
    %pending, %token = zero.all_gather_start %shard
        : tensor<64xf32> -> tensor<128xf32>
    %full = zero.wait %token, %pending : tensor<128xf32>
        keep(%shard : tensor<64xf32>) -> tensor<128xf32>

    %t = zero.all_gather_start %in into %out
        : memref<64xf32> into memref<128xf32>
    zero.wait %t keep(%in, %out : memref<64xf32>, memref<128xf32>)
    ```
  }];
}

def Zero_ReduceScatterStartOp
    : Zero_StartOp<"reduce_scatter_start", "a sum reduce-scatter"> {
  let summary = summaryText;
  let description = [{
    The elementwise sum over the ranks of the 1-D `input` (N*n elements),
    of which this rank keeps block `rank` (n elements): `shard.reduce_scatter`
    with `sum` along axis 0, started. The sum is taken in rank order, as the
    blocking form does.
  }] # forms;
}

def Zero_AllReduceStartOp
    : Zero_StartOp<"all_reduce_start", "a sum all-reduce"> {
  let summary = summaryText;
  let description = [{
    The elementwise sum over the ranks of `input`, any static shape:
    `shard.all_reduce` with `sum`, started. On tensors it may work in place
    (the pending result aliases `input` where bufferization finds that safe);
    on memrefs `output` may be `input`.
  }] # forms;
}

//===----------------------------------------------------------------------===//
// Transfers of the NVMe tier
//===----------------------------------------------------------------------===//

def Zero_ReadStartOp
    : Zero_Op<"read_start",
              [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Starts reading a tensor from the NVMe tier";
  let description = [{
    Reads the tensor kept in `extent`. On tensors the op returns it as
    `pending`, a tensor that only the matching `zero.wait` may use; on
    memrefs it reads into `output`, a staging buffer of the extent's shape
    (contiguous, row-major, allocated with 4096-byte alignment and room for
    the bytes rounded up to 4096, as O_DIRECT needs: bufferization makes it
    so). Either way the data exists only after the `zero.wait` of the
    token. `zero.category` names the memory category of the staging buffer.

    ```mlir
    %pending, %token = zero.read_start %m {zero.category = "optimizer_states"}
        : !zero.extent<tensor<1024xf32>> -> tensor<1024xf32>
    %v = zero.wait %token, %pending : tensor<1024xf32> -> tensor<1024xf32>

    %t = zero.read_start %m into %buf
        : !zero.extent<tensor<1024xf32>> into memref<1024xf32>
    zero.wait %t keep(%buf : memref<1024xf32>)
    ```
  }];
  let arguments = (ins Zero_ExtentType:$extent, Optional<AnyMemRef>:$output);
  let results = (outs Optional<AnyRankedTensor>:$pending,
                      Zero_TokenType:$token);
  let assemblyFormat = [{
    $extent (`into` $output^)? attr-dict `:` type($extent)
    (`into` type($output)^)? (`->` type($pending)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool hasTensorSemantics() { return getPending() != nullptr; }
  }];
}

def Zero_WriteStartOp
    : Zero_Op<"write_start",
              [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Starts writing a tensor to the NVMe tier";
  let description = [{
    Writes `input` (a tensor, or a staging buffer as `zero.read_start`
    reads into) to `extent`, replacing what it held. `input` must stay
    unchanged until the `zero.wait` of the token, which lists it in `keep`.

    ```mlir
    %t = zero.write_start %new to %m
        : tensor<1024xf32> to !zero.extent<tensor<1024xf32>>
    zero.wait %t keep(%new : tensor<1024xf32>)
    ```
  }];
  let arguments = (ins Zero_TensorOrMemRef:$input, Zero_ExtentType:$extent);
  let results = (outs Zero_TokenType:$token);
  let assemblyFormat = [{
    $input `to` $extent attr-dict `:` type($input) `to` type($extent)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool hasTensorSemantics() {
      return ::mlir::isa<::mlir::RankedTensorType>(getInput().getType());
    }
  }];
}

//===----------------------------------------------------------------------===//
// Copies between host and device memory
//===----------------------------------------------------------------------===//

def Zero_CopyStartOp
    : Zero_Op<"copy_start",
              [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Starts a copy between device and host memory";
  let description = [{
    Copies `input` into a buffer of the memory space `zero.space` names:
    `"host"` (host memory next to the device the step runs on) or
    `"device"` (the step's own memory). zero-offload's `optimizer=host`
    moves an update's device operands to the host and its new parameter
    back with it. On tensors the op returns the copy as `pending`, a tensor
    that only the matching `zero.wait` may use; on memrefs it writes
    `output` (static shape, contiguous row-major, the same shape and
    element type). Either way the copy exists only after the `zero.wait`
    of the token, and `input` must stay unchanged until then (the wait
    lists it). `zero.category` names the memory category of the new
    buffer. On the CPU target both spaces are host memory, counted apart;
    on CUDA the copy runs on a stream of its own, after the work queued
    before it.

    ```mlir
    %pending, %token = zero.copy_start %grad
        {zero.space = "host", zero.category = "grads"}
        : tensor<1024xf32> -> tensor<1024xf32>
    %g = zero.wait %token, %pending : tensor<1024xf32>
        keep(%grad : tensor<1024xf32>) -> tensor<1024xf32>

    %t = zero.copy_start %in into %out {zero.space = "host"}
        : memref<1024xf32> into memref<1024xf32>
    zero.wait %t keep(%in, %out : memref<1024xf32>, memref<1024xf32>)
    ```
  }];
  let arguments = (ins Zero_TensorOrMemRef:$input,
                       Optional<AnyMemRef>:$output);
  let results = (outs Optional<AnyRankedTensor>:$pending,
                      Zero_TokenType:$token);
  let assemblyFormat = [{
    $input (`into` $output^)? attr-dict `:` type($input)
    (`into` type($output)^)? (`->` type($pending)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool hasTensorSemantics() { return getPending() != nullptr; }
    /// Whether the copy goes to host memory (`zero.space = "host"`).
    bool toHost();
  }];
}

def Zero_WaitOp
    : Zero_Op<"wait", [AttrSizedOperandSegments,
                       DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Waits for a started collective or transfer";
  let description = [{
    Completes the collective or NVMe transfer that made `token`. On tensors it takes the
    start's `pending` tensor and returns the result (the same buffer once
    bufferized); `keep` lists what the collective reads or writes until now
    (its input; on memrefs also its output), so that nothing frees or
    overwrites those buffers while the collective is in flight.

    ```mlir
    %full = zero.wait %token, %pending : tensor<128xf32>
        keep(%shard : tensor<64xf32>) -> tensor<128xf32>
    zero.wait %t keep(%in, %out : memref<64xf32>, memref<128xf32>)
    ```
  }];
  let arguments = (ins Zero_TokenType:$token,
                       Optional<AnyRankedTensor>:$pending,
                       Variadic<Zero_TensorOrMemRef>:$keep);
  let results = (outs Optional<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    $token (`,` $pending^ `:` type($pending))?
    (`keep` `(` $keep^ `:` type($keep) `)`)? attr-dict
    (`->` type($result)^)?
  }];
  let hasVerifier = 1;
}

#endif // ZERO_DIALECT_ZERO_IR_ZEROOPS_TD
