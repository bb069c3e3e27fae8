//===- Passes.td - zero-mlir pass definitions --------------*- tablegen -*-===//
//
// Every pass of zero-mlir is declared here; `zero-opt --help` and
// docs generated from this file (build/docs/ZeroPasses.md) describe them.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TRANSFORMS_PASSES_TD
#define ZERO_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

/// The runtime backend a step is lowered for (zero-lower's target). Passes
/// that predict memory take it too: the CPU's bf16 GEMM widens its
/// operands into f32 temporaries and its MPI collectives take scratch, the
/// CUDA backend's do neither.
class ZeroTargetOption<string description>
    : Option<"target", "target", "::mlir::zero::Target",
             "::mlir::zero::Target::CPU", description,
             [{::llvm::cl::values(
               clEnumValN(::mlir::zero::Target::CPU, "cpu",
                          "host memory, OpenBLAS (backend \"cpu\")"),
               clEnumValN(::mlir::zero::Target::CUDA, "cuda",
                          "device memory, cuBLASLt, kernels (backend "
                          "\"cuda\")"))}]>;

def ZeroVerifyPass : Pass<"zero-verify", "::mlir::ModuleOp"> {
  let summary = "Check that a module follows the training-step contract";
  let description = [{
    Checks the training-step contract of docs/training-step-ir.md and reports
    every violation as a located error that says what is wrong and how to fix
    it. The IR is not changed; the pass fails if any error was reported.

    The contract: one `func.func` with `zero.role = "forward_backward"`,
    `(params..., batch...) -> (loss, grads...)`, and one with
    `zero.role = "optimizer"`,
    `(params..., grads..., states..., hypers...) -> (params'..., states'...)`,
    linked by `zero.param`, `zero.grad`, `zero.batch`, `zero.loss`,
    `zero.state` and `zero.hyper` attributes; static shapes; parameters of
    f32, bf16 or f64; an optimizer made of elementwise per-parameter tensor
    math, full reductions to scalars and scalar arithmetic.

    Accepted (unchanged on output):

    ```mlir
    func.func @fb(%w: tensor<4xf32> {zero.param = "w"},
                  %x: tensor<4xf32> {zero.batch = "x"})
        -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
        attributes {zero.role = "forward_backward"} { ... }
    func.func @opt(%w: tensor<4xf32> {zero.param = "w"},
                   %g: tensor<4xf32> {zero.grad = "w"},
                   %lr: f32 {zero.hyper = "lr"})
        -> (tensor<4xf32> {zero.param = "w"})
        attributes {zero.role = "optimizer"} { ... }
    ```

    Rejected, with the error shown:

    ```mlir
    func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss})
        attributes {zero.role = "forward_backward"} { ... }
    // error: 'func.func' op returns no gradient for parameter 'w'; add a
    //        result marked {zero.grad = "w"}
    ```
  }];
  let dependentDialects = ["::mlir::zero::ZeroDialect"];
}

//===----------------------------------------------------------------------===//
// Lowering (lib/Conversion)
//===----------------------------------------------------------------------===//

def ZeroPrepareBufferizationPass
    : Pass<"zero-prepare-bufferization", "::mlir::ModuleOp"> {
  let summary = "Fix the buffer ABI of the training-step functions";
  let description = [{
    Prepares a verified training step for upstream bufferization so that the
    lowered functions have the ABI the runtime expects:

    - every `forward_backward` argument and the optimizer's gradients and
      hyper-parameters are read-only (`bufferization.writable = false`);
    - the optimizer's parameters and states are writable, so one-shot
      bufferization updates them in place;
    - a hyper-parameter passed as a rank-0 tensor (`tensor<f32>`, as
      torch-mlir passes scalars) becomes a scalar argument wrapped into its
      tensor by `tensor.from_elements` at the entry, so that every
      hyper-parameter reaches the lowered function by value;
    - both functions become private, because upstream
      `drop-equivalent-buffer-results` and `buffer-results-to-out-params`
      only rewrite private functions. `zero-finalize-bufferization` makes
      them public again.

    Before:
    ```mlir
    func.func @opt(%p: tensor<4xf32> {zero.param = "w"},
                   %g: tensor<4xf32> {zero.grad = "w"}) -> ...
        attributes {zero.role = "optimizer"}
    ```
    After:
    ```mlir
    func.func private @opt(
        %p: tensor<4xf32> {bufferization.writable = true, zero.param = "w"},
        %g: tensor<4xf32> {bufferization.writable = false, zero.grad = "w"})
        -> ... attributes {zero.role = "optimizer"}
    ```
  }];
  // The shard collectives' bufferization models (BufferizeCollectives.cpp)
  // make memrefs during the upstream bufferization that follows.
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ZeroFinalizeBufferizationPass
    : Pass<"zero-finalize-bufferization", "::mlir::ModuleOp"> {
  let summary = "Make the bufferized training-step functions public again";
  let description = [{
    Makes every function with a `zero.role` public (the runtime calls them)
    once the
    upstream passes have dropped in-place results and turned the others into
    out-parameters, and checks the result: every training-step function
    returns nothing, and each out-parameter carries the `zero.*` attribute of
    the result it replaces.

    Before:
    ```mlir
    func.func private @fb(%w: memref<4xf32> {zero.param = "w"},
                          %loss: memref<f32> {zero.loss},
                          %gw: memref<4xf32> {zero.grad = "w"})
        attributes {zero.role = "forward_backward"}
    ```
    After:
    ```mlir
    func.func @fb(%w: memref<4xf32> {zero.param = "w"},
                  %loss: memref<f32> {zero.loss},
                  %gw: memref<4xf32> {zero.grad = "w"})
        attributes {zero.role = "forward_backward"}
    ```
  }];
}

def ZeroLinalgToRuntimePass
    : Pass<"zero-linalg-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower buffer matmuls to runtime GEMM calls";
  let description = [{
    Rewrites `linalg.matmul` and `linalg.batch_matmul` on memrefs of f32 or
    f64 into calls of the runtime's GEMM entry points (`zrt_gemm_f32`,
    `zrt_gemm_f64`, `zrt_gemm_batched_f32`, `zrt_gemm_batched_f64`; see
    runtime/include/zero/runtime.h), passing transpose flags, aligned
    pointers plus offsets and leading dimensions. The indexing maps may be
    the default (row-major) ones or read A (`(m, n, k) -> (k, m)`) or B
    (`(m, n, k) -> (n, k)`) transposed, as zero-fold-transposes writes them;
    the flags then say so and the operand is read in place. Operands whose
    rows are not contiguous (innermost stride other than 1) or ops with
    other indexing maps are left alone; the loop lowering handles them.
    Upstream has no linalg-to-BLAS lowering.

    linalg's matmuls accumulate into their init, so beta is 1, except where
    a `linalg.fill` with zero of the very same buffer comes just before the
    matmul (nothing but ops without memory effects in between): then the
    GEMM overwrites C (beta = 0) and the fill is erased, saving a pass over
    C (on a GPU, the largest elementwise kernel of attention's scores).

    Before:
    ```mlir
    linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>)
                  outs(%c : memref<8x16xf32>)
    ```
    After (schematically):
    ```mlir
    %pa = ... aligned pointer of %a plus its offset ...
    func.call @zrt_gemm_f32(%no, %no, %c8, %c16, %c4, %pa, %c4, %pb, %c16,
                            %one, %pc, %c16)
        : (i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, f32,
           !llvm.ptr, i64) -> ()
    ```

    With `bf16-results`, a mixed-precision matmul whose f32 result only
    exists to be rounded is one GEMM with a bf16 result
    (`zrt_gemm_bf16_bf16`: f32 accumulation, one rounding to nearest
    even): the f32 buffer is a fresh allocation (or zero-pad-gemm-rows's
    subview of one), zero-filled just before the matmul (beta 0) or set
    there by an elementwise `arith.extf` of bf16 values (a bias broadcast,
    which then writes the bf16 buffer: the GEMM accumulates into it with
    beta 1, the widening being exact), and used by
    nothing but the matmul, one `linalg.generic` that only `arith.truncf`s
    it elementwise into a bf16 buffer with contiguous rows (with nothing
    between the two but allocations, deallocations of other buffers and
    ops without memory effects), and its deallocation. The call takes the
    matmul's place (the bf16 buffer's allocation moves up to it) and
    writes the bf16 buffer; the f32 buffer, its fill and the rounding go. The values
    are the same bits; the step holds half the bytes and makes one pass
    fewer over them. Not a GEMM whose reduction is long (K at least 16,384
    and 4 times M and N, a GPT's logits' input gradient over a vocabulary
    of 50,257): the CUDA backend runs that one in chunks of K accumulated
    into its f32 result, at its usual rates, where a bf16 result would be
    rounded by every chunk, so it keeps the f32 buffer and the rounding.
    `bf16-results-only` lowers nothing else:
    `zero-bufferize-step{target=cuda}` runs it so that the memory
    prediction sees the f32 buffers gone.
  }];
  let options = [
    Option<"bf16Results", "bf16-results", "bool", "false",
           "Lower a bf16 matmul into f32 that is only rounded to bf16 as one "
           "GEMM with a bf16 result (zrt_gemm_bf16_bf16)">,
    Option<"bf16ResultsOnly", "bf16-results-only", "bool", "false",
           "With bf16-results: lower those GEMMs and leave every other matmul "
           "as it is">
  ];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect"
  ];
}

def ZeroStripContractAttributesPass
    : Pass<"zero-strip-contract-attributes", "::mlir::ModuleOp"> {
  let summary = "Drop zero.* argument and result attributes after lowering";
  let description = [{
    Removes the training-step roles (`zero.param`, `zero.grad`, ...) from the
    arguments and results of every function-like op once the step is lowered:
    nothing reads them any more, and LLVM IR translation warns about argument
    attributes it does not know. The function-level `zero.role` stays, so a
    lowered module still says which function is which.

    Before:
    ```mlir
    llvm.func @opt(%arg0: !llvm.ptr, ..., %lr: f32 {zero.hyper = "lr"})
        attributes {zero.role = "optimizer"}
    ```
    After:
    ```mlir
    llvm.func @opt(%arg0: !llvm.ptr, ..., %lr: f32)
        attributes {zero.role = "optimizer"}
    ```
  }];
}

def ZeroStepAbiPass : Pass<"zero-step-abi", "::mlir::ModuleOp"> {
  let summary = "Record the step ABI descriptor of the bufferized step functions";
  let description = [{
    Reads every bufferized function with a `zero.role` and records, as the
    module attribute `zero.step_abi`, what a driver needs to call it without
    MLIR: the ABI version; whether the step is partitioned, its stage and
    world size; the runtime backend the lowering targets (`backend`, from
    the `target` option: the driver selects it); the parameters in order
    with shape, element type, flat layout (`numel`, `padded`, `shard`,
    from `zero.manifest`'s `#zero.layout`s) and initialization
    (`zero.init`); the optimizer states, batch inputs (with
    `zero.token_range`), hyper-parameters and loss; and for each entry
    function its arguments in order, each with role, name, index into the
    lists above, element type, shape (or `scalar`), memory category,
    whether it holds this rank's shard (`sharded`) and whether it is an
    out-parameter the caller copies back (`out_copy`). The layout is read,
    never re-derived. docs/runtime-abi.md describes every field;
    zero-export-step-abi writes the descriptor into the object as JSON.

    Before (bufferized):
    ```mlir
    func.func @fb(%w: memref<4xf32> {zero.param = "w",
                                     zero.init = {kind = "constant", value = 0.0 : f64}},
                  %x: memref<4xf32> {zero.batch = "x"},
                  %loss: memref<f32> {zero.loss},
                  %gw: memref<4xf32> {zero.grad = "w"})
        attributes {zero.role = "forward_backward"}
    ```
    After, on the module:
    ```mlir
    module attributes {zero.step_abi = {abi_version = 1, partitioned = false,
        stage = 0, world_size = 1, backend = "cpu",
        params = [
          {name = "w", dtype = "f32", shape = array<i64: 4>, numel = 4,
           padded = 4, shard = 4, init = {...}}
        ],
        entries = [
          {name = "fb", role = "forward_backward", args = [
            {role = "param", name = "w", index = 0, dtype = "f32",
             category = "params", shape = array<i64: 4>}, ...
          ]}
        ], ...}}
    ```
  }];
  let options = [
    ZeroTargetOption<"What the step is lowered for: recorded as the "
                     "descriptor's `backend`, which drivers select">
  ];
}

def ZeroExportStepAbiPass
    : Pass<"zero-export-step-abi", "::mlir::ModuleOp"> {
  let summary = "Write the step ABI into the lowered module: JSON descriptor "
                "and packed entry points";
  let description = [{
    The last step of the lowering, on LLVM dialect code whose step functions
    were lowered with the bare-pointer calling convention (one `!llvm.ptr`
    per buffer, scalars by value). Adds, as runtime/include/zero/step.h
    declares:
    - `@zero_step_abi`, the `zero.step_abi` descriptor as NUL-terminated
      JSON;
    - for each entry function `@f`, `@zero_entry_f(%args: !llvm.ptr)`,
      which loads argument i from `args[i]` (a buffer's pointer, or a
      pointer to a scalar's value) and calls `@f`;
    - `@zero_step_entries`, the table of `{name, packed function}` pairs
      ending with two null pointers.

    Before:
    ```mlir
    llvm.func @fb(%w: !llvm.ptr, %x: !llvm.ptr, %loss: !llvm.ptr, %gw: !llvm.ptr)
    ```
    After (schematically):
    ```mlir
    llvm.func @zero_entry_fb(%args: !llvm.ptr) {
      %0 = llvm.getelementptr %args[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
      %w = llvm.load %0 : !llvm.ptr -> !llvm.ptr
      ...
      llvm.call @fb(%w, %x, %loss, %gw) : (...) -> ()
    }
    llvm.mlir.global external constant @zero_step_abi("{\"abi_version\":1,...}\00")
    llvm.mlir.global external constant @zero_step_entries() : !llvm.array<2 x struct<(ptr, ptr)>>
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ZeroReleaseEarlyPass : Pass<"zero-release-early", "::mlir::ModuleOp"> {
  let summary = "Free each buffer right after its last use";
  let description = [{
    Upstream ownership-based buffer deallocation frees buffers at the end of
    their block, so every temporary of a training step stays live until the
    step returns. This pass moves each unconditional `memref.dealloc` up to
    just after the last operation of its block that uses the buffer or any
    view of it (found with upstream BufferViewFlowAnalysis; uses nested in an
    operation's regions count for that operation, and values derived from a
    buffer's address, such as `memref.extract_aligned_pointer_as_index`,
    count as uses through their users). Conditional deallocations are left
    alone.

    This is also how ZeRO release points take effect: the partitioner ends a
    gathered parameter's or a full gradient's lifetime by its last use, and
    this pass frees the buffer there.

    Before:
    ```mlir
    %a = memref.alloc() : memref<1024xf32>
    linalg.add ins(%x, %x : ...) outs(%a : memref<1024xf32>)
    linalg.add ins(%a, %x : ...) outs(%y : ...)
    %b = memref.alloc() : memref<1024xf32>
    ...
    memref.dealloc %a : memref<1024xf32>
    memref.dealloc %b : memref<1024xf32>
    ```
    After:
    ```mlir
    %a = memref.alloc() : memref<1024xf32>
    linalg.add ins(%x, %x : ...) outs(%a : memref<1024xf32>)
    linalg.add ins(%a, %x : ...) outs(%y : ...)
    memref.dealloc %a : memref<1024xf32>
    %b = memref.alloc() : memref<1024xf32>
    ...
    ```
  }];
}

def ZeroGatherIntoDestinationPass
    : Pass<"zero-gather-into-destination", "::mlir::func::FuncOp"> {
  let summary = "Started all-gathers write the buffer their result is "
                "copied to";
  let description = [{
    Runs on buffers, after deallocations are placed. A parameter that
    zero-schedule updates in the backward pass (or gathers at the end of
    the step) is returned in its argument: bufferization gives the
    `zero.all_gather_start` a fresh buffer, and the parameter's
    `materialize_in_destination` copies it into the argument at the end,
    so the step holds a second full-size copy of the parameter from the
    start to the copy and moves all its bytes once more. This pass makes
    such a start gather straight into the copy's destination and erases
    the buffer, its copy and its deallocation, when:

    - the started gather's buffer is used by nothing but the start, its
      wait, the copy (directly or through a reshape) and its deallocation,
      all in one block, in that order;
    - the destination is contiguous and row-major, has the gather's
      elements, and is defined before the start;
    - nothing reads or writes the destination's buffer (through any view,
      or any pointer taken from one) between the start and the copy: its
      old value is dead from the start, and its new one arrives at the
      wait;
    - the gather's input is either another buffer or this rank's block of
      the destination (a unit-stride subview at offset
      `process_linear_index * count`), which the runtime gathers in place
      (`in == out + rank * count`, MPI_IN_PLACE).

    Anything else is left as it is. The step computes the same values,
    bit for bit.

    Before:
    ```mlir
    %own = memref.subview %flat[%offset] [64] [1] ...  // of %arg0
    %buf = memref.alloc() : memref<128xf32>
    %t = zero.all_gather_start %own into %buf
        : memref<64xf32, strided<[1], offset: ?>> into memref<128xf32>
    ...
    zero.wait %t keep(%own, %buf : ...)
    %e = memref.expand_shape %buf [[0, 1]] output_shape [8, 16] ...
    memref.copy %e, %arg0 : memref<8x16xf32> to memref<8x16xf32>
    memref.dealloc %buf : memref<128xf32>
    ```
    After:
    ```mlir
    %into = memref.collapse_shape %arg0 [[0, 1]]
        : memref<8x16xf32> into memref<128xf32>
    %t = zero.all_gather_start %own into %into ...
    ...
    zero.wait %t keep(%own, %into : ...)
    ```
  }];
}

def ZeroPadGemmRowsPass
    : Pass<"zero-pad-gemm-rows", "::mlir::func::FuncOp"> {
  let summary = "Pad the rows of buffers a GEMM reads or writes to an "
                "aligned stride";
  let description = [{
    Runs on buffers (the end of `zero-bufferize-step{target=cuda}`). A
    GEMM's leading dimension is the row stride of its operands' buffers:
    GPT-2's vocabulary of 50,257 makes the logits and their gradient
    `memref<Mx50257xf32>`, a stride of 201,028 bytes, and cuBLASLt's
    tensor-core kernels need operands and leading dimensions aligned to 16
    bytes (the H100 ran the logits' input gradient at 39 TFLOP/s, against
    70-300 for aligned GEMMs of its size).

    A `memref.alloc` of static shape and identity layout, of rank 2 or more,
    whose innermost dimension is not a multiple of `row-alignment` bytes,
    gets rows padded to that multiple: a larger allocation, and a
    `memref.subview` of the original shape that every use reads instead
    (strided, so a GEMM's leading dimension is the padded stride). Only
    buffers that a `linalg.matmul` or `linalg.batch_matmul` uses (or that
    the elementwise bf16 rounding of such a GEMM's result writes, which
    zero-linalg-to-runtime's bf16-results makes the GEMM's own output) are
    padded, only when the padding adds at most `max-overhead-percent` of
    the buffer, and only when every use takes a strided buffer: linalg
    ops, `memref.load` and `memref.store`, `memref.copy`, and the
    deallocation (which frees the padded allocation). Anything else (a
    view, a call, a return) leaves the buffer as it is. The padding bytes
    are allocated and counted (zero-memory-report sees the padded
    allocation); nothing reads or writes them, so the step computes the
    same values.

    Before (`row-alignment=128`):
    ```mlir
    %l = memref.alloc() {alignment = 64 : i64} : memref<1024x50257xf32>
    linalg.matmul ins(%x, %w : memref<1024x768xf32>, memref<768x50257xf32>)
        outs(%l : memref<1024x50257xf32>)
    memref.dealloc %l : memref<1024x50257xf32>
    ```
    After:
    ```mlir
    %p = memref.alloc() {alignment = 64 : i64} : memref<1024x50272xf32>
    %l = memref.subview %p[0, 0] [1024, 50257] [1, 1]
        : memref<1024x50272xf32> to memref<1024x50257xf32, strided<[50272, 1]>>
    linalg.matmul ins(%x, %w : memref<1024x768xf32>, memref<768x50257xf32>)
        outs(%l : memref<1024x50257xf32, strided<[50272, 1]>>)
    memref.dealloc %p : memref<1024x50272xf32>
    ```
  }];
  let options = [
    Option<"rowAlignment", "row-alignment", "int64_t", "128",
           "Bytes each padded row's stride is a multiple of (a power of two; "
           "cuBLASLt's tensor-core kernels need 16, 128 is a cache line "
           "and a full set of 32-byte sectors)">,
    Option<"maxOverheadPercent", "max-overhead-percent", "int64_t", "6",
           "Leave a buffer unpadded if padding would add more than this "
           "percentage of its bytes">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ZeroSplitDeallocsPass
    : Pass<"zero-split-deallocs", "::mlir::ModuleOp"> {
  let summary = "Split deallocations of distinct allocations into one each";
  let description = [{
    Ownership-based buffer deallocation ends a straight-line function with
    one `bufferization.dealloc` of every buffer it allocated: thousands of
    operands in a deep model's step. Upstream
    `buffer-deallocation-simplification` splits such an op by asking alias
    analysis about every pair of operands, quadratic in their number (2.8 s
    of a 48-layer step's 7.8 s compile). Results of distinct `memref.alloc`
    ops that are all still owned at one deallocation cannot alias, so this
    pass splits a `bufferization.dealloc` without retained values whose
    operands are all distinct `memref.alloc` results into one
    `bufferization.dealloc` per operand, each with its own condition, in
    linear time; anything else (retained values, function arguments, views,
    repeated operands) is left to the upstream pass.

    Before:
    ```mlir
    bufferization.dealloc (%a, %b : memref<4xf32>, memref<8xf32>)
        if (%true, %c)
    ```
    After:
    ```mlir
    bufferization.dealloc (%a : memref<4xf32>) if (%true)
    bufferization.dealloc (%b : memref<8xf32>) if (%c)
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def ZeroSeparateEntryBlockPass
    : Pass<"zero-separate-entry-block", "::mlir::ModuleOp"> {
  let summary = "Give functions with memref arguments an entry block of their "
                "own";
  let description = [{
    Moves the operations of the entry block of every function that takes a
    memref into a new block, entered by a `cf.br` from the now empty entry
    block. Run right before `convert-func-to-llvm`: with
    `use-bare-ptr-memref-call-conv`, that pass builds a descriptor for each
    memref argument at the start of the entry block and then orders every
    use of the argument in that block against it, renumbering the block
    whenever it grew: a cost of (memref arguments) x (entry block length),
    quadratic in model depth for a step function (0.55 of 4.4 s at 48
    layers, growing 14x for 4x the layers). With the body in a second
    block, the entry block holds only the descriptors. LLVM merges the two
    blocks again wherever it optimizes.

    Before:
    ```mlir
    func.func @step(%a: memref<4xf32>) {
      "some.op"(%a) : (memref<4xf32>) -> ()
      return
    }
    ```
    After:
    ```mlir
    func.func @step(%a: memref<4xf32>) {
      cf.br ^bb1
    ^bb1:
      "some.op"(%a) : (memref<4xf32>) -> ()
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::cf::ControlFlowDialect"];
}

def ZeroParallelLoopFunctionsPass
    : Pass<"zero-parallel-loop-functions", "::mlir::ModuleOp"> {
  let summary = "Let functions that are one parallel loop nest run a range "
                "of its outer iterations";
  let description = [{
    For each private function whose body is one `scf.parallel` nest (plus
    side-effect-free ops such as constants and views), called only by
    `func.call`, with no results, and with enough work to be worth a
    thread (the nest's estimated operation count, trip counts times ops per
    iteration, at least `min-work`): the function gains two leading `index`
    arguments `begin` and `end`, and the outermost dimension with more than
    one iteration (every dimension before it having exactly one) runs only
    iterations [begin, end) of its trip count N. The function is marked
    `zero.parallel_iterations = N`, and every call passes 0 and N, so the
    program means what it meant. `zero-parallel-calls-to-runtime` (after
    the lowering to LLVM) then sends those calls to the runtime's
    `zrt_parallel_for`, which runs the ranges on its threads.

    The iterations of a `scf.parallel` dimension are independent, which is
    what linalg's parallel iterators promise and
    `convert-linalg-to-parallel-loops` carries over; `zero-outline-loop-nests`
    makes the functions. Inner loops keep their constant bounds (and
    vectorize as before).

    Before:
    ```mlir
    func.func private @f_loop0(%x: memref<64x512xf32>) {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      ...
      scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c512) step (%c1, %c1) {
        ...
      }
      return
    }
    ```
    After:
    ```mlir
    func.func private @f_loop0(%begin: index, %end: index,
                               %x: memref<64x512xf32>)
        attributes {zero.parallel_iterations = 64 : i64} {
      ...
      %lo = arith.addi %c0, (%begin * %c1)
      %hi = arith.addi %c0, (%end * %c1)
      scf.parallel (%i, %j) = (%lo, %c0) to (%hi, %c512) step (%c1, %c1) {
        ...
      }
      return
    }
    ```
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", "262144",
           "the least estimated operation count (iterations times operations "
           "per iteration) of a nest that is run on several threads">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ZeroParallelCallsToRuntimePass
    : Pass<"zero-parallel-calls-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Run calls of parallel loop functions on the runtime's "
                "threads";
  let description = [{
    After the lowering to the LLVM dialect: every `llvm.call` of a function
    marked `zero.parallel_iterations = N` (by `zero-parallel-loop-functions`)
    that passes 0 and N as its first two arguments becomes
    `zrt_parallel_for(N, @<function>_task, context)`: the other arguments
    are stored in a context buffer on the caller's stack (8 bytes a value,
    one buffer per caller, reused by each call, since `zrt_parallel_for`
    returns when every range is done), and `@<function>_task(context,
    begin, end)`, an internal function made once per callee, loads them and
    calls the function on its range. The mark is removed. A callee with an
    argument wider than 8 bytes, or a call with other bounds, is left as it
    is (the call still runs the whole range, on one thread).

    Before:
    ```mlir
    llvm.call @f_loop0(%c0, %c64, %x) : (i64, i64, !llvm.ptr) -> ()
    ```
    After:
    ```mlir
    %ctx = llvm.alloca %c1 x !llvm.array<1 x i64> : (i64) -> !llvm.ptr
    ...
    %slot = llvm.getelementptr %ctx[0] : (!llvm.ptr) -> !llvm.ptr, i64
    llvm.store %x, %slot : !llvm.ptr, !llvm.ptr
    %task = llvm.mlir.addressof @f_loop0_task : !llvm.ptr
    llvm.call @zrt_parallel_for(%c64, %task, %ctx)
        : (i64, !llvm.ptr, !llvm.ptr) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ZeroPartitionPass : Pass<"zero-partition", "::mlir::ModuleOp"> {
  let summary = "Rewrite a training step into ZeRO form (stages 0-3)";
  let description = [{
    Synthesizes `func.func @train_step` from the contract's
    `forward_backward` and `optimizer` (both inlined, then removed) for
    data-parallel training on `world-size` ranks, placed on the upstream
    device grid `shard.grid @zero_grid(shape = N)`, with upstream `shard`
    collectives (docs/zero-form.md):

    - stage 0: gradients are averaged with `shard.all_reduce`; parameters
      and optimizer states are replicated. The parity baseline.
    - stage 1: optimizer states are sharded: each rank updates its slice of
      every parameter (the gradient is reduce-scattered after the backward
      pass) and the updated slices are `shard.all_gather`ed.
    - stage 2: also gradients: each gradient is reduce-scattered right after
      it is produced, so the full gradient's buffer dies there.
    - stage 3: also parameters: parameters enter as shards and are
      all-gathered right before their first use, and again wherever another
      parameter has been read since their previous use (`regather`; so a
      layer's weights are gathered again for the backward pass, and a
      gathered parameter is never live across another one's gather); the
      updated shards stay sharded.

    Sharding is flat: every parameter, gradient and state is viewed 1-D,
    zero-padded to a multiple of N, and rank r owns elements
    [r*S, (r+1)*S) with S = padded / N. `zero.manifest` on @train_step
    holds one `#zero.layout` per parameter: its shape, element count,
    padding and S, and which of parameter, gradient and states the stage
    shards (`sharded`; readers take it from there, never from the stage).
    The loss is averaged over ranks (all-reduce of the local mean, divided
    by N).
    Full reductions in the optimizer (global gradient norm) become local
    reductions over the valid elements of the shard plus an all-reduce of
    the partial result.

    With `accumulate=K` (K > 1) every batch input takes K micro-batches
    along its leading dimension, and forward and backward run once per
    micro-batch in an `scf.for` whose iteration arguments accumulate the
    loss and the gradients; the optimizer then steps once on the mean over
    the K micro-batches (the gradient of the mean loss of the K*b samples):
    - stages 0-1 accumulate full gradients and reduce once, after the loop;
    - stage 2 reduce-scatters each micro-batch's gradient as it is produced
      and adds it to a sharded accumulator (memory 1/N, communication K
      times, as DeepSpeed does);
    - stage 3 does too, and gathers the parameters for each micro-batch.
    The collectives inside the loop stay blocking (zero-schedule starts
    only those of the function's entry block). Gradients narrower than f32
    (bf16) accumulate in f32 unless `accumulate-f32=false`: each
    micro-batch's gradient (at stages 2-3 its bf16 reduce-scatter) is
    widened and added to an f32 accumulator, and the mean is rounded to the
    gradient's type once, after the loop (stages 0-1: before the one
    reduction, so bf16 stays on the wire), as DeepSpeed's bf16 optimizer
    accumulates in f32.

    Layer-wise partitioning: at stage 3, a parameter under
    `param-persistence-threshold` elements, or named in `persistent-params`,
    is persistent: train_step takes and returns it whole, nothing gathers
    it, and its gradient and optimizer states are sharded as at stage 2
    (its updated slices are all-gathered into it after the optimizer). Its
    `#zero.layout` says `sharded = grads|states`. Small parameters (biases,
    norms) then cost N times their bytes instead of a gather each time they
    are read; the parameters come out bit-identical to stage 0 either way.

    There are no release ops: each gathered parameter and full gradient is
    last used where its lifetime should end, and zero-release-early frees
    the buffer right there after bufferization.

    Before (abridged):
    ```mlir
    func.func @fb(%w: tensor<3x5xf32> {zero.param = "w"}, %x: ...) -> (tensor<f32> {zero.loss}, tensor<3x5xf32> {zero.grad = "w"})
    func.func @opt(%w: ..., %g: ..., %m: ... {zero.state = ...}, %lr: f32 {zero.hyper = "lr"}) -> ...
    ```
    After, stage 2, world-size 2 (abridged):
    ```mlir
    shard.grid @zero_grid(shape = 2)
    func.func @train_step(%w: tensor<3x5xf32> {zero.param = "w"},
                          %m: tensor<8xf32> {zero.state = ...}, %x: ..., %lr: f32 ...)
        -> (tensor<f32> {zero.loss}, tensor<3x5xf32> {zero.param = "w"}, tensor<8xf32> {zero.state = ...})
        attributes {zero.role = "train_step", zero.stage = 2, zero.world_size = 2,
                    zero.manifest = [#zero.layout<name = "w", shape = [3, 5], numel = 15, padded = 16, shard = 8, sharded = grads|states>]} {
      ... forward and backward ...
      %g16 = tensor.pad %g_flat low[0] high[1] ...
      %gs = shard.reduce_scatter %g16 on @zero_grid grid_axes = [0] scatter_axis = 0 : tensor<16xf32> -> tensor<8xf32>
      ... optimizer on the 8-element slices ...
      %w16 = shard.all_gather %ws on @zero_grid grid_axes = [0] gather_axis = 0 : tensor<8xf32> -> tensor<16xf32>
    ```
  }];
  let options = [
    Option<"stage", "stage", "int64_t", "0",
           "ZeRO stage: 0 (data parallel), 1 (optimizer states sharded), "
           "2 (and gradients), 3 (and parameters)">,
    Option<"worldSize", "world-size", "int64_t", "1",
           "Number of data-parallel ranks">,
    Option<"regather", "regather", "bool", "true",
           "Stage 3: gather a parameter again where another parameter was "
           "read since its previous use, instead of keeping one gathered copy "
           "alive from its first use to its last">,
    Option<"accumulate", "accumulate", "int64_t", "1",
           "Gradient accumulation: each batch input holds K micro-batches "
           "(K times its leading dimension); forward and backward run once "
           "per micro-batch in an scf.for, then one optimizer step on the "
           "mean gradient">,
    Option<"accumulateF32", "accumulate-f32", "bool", "true",
           "With accumulate > 1: gradients narrower than f32 (bf16) "
           "accumulate in f32 and are rounded once after the loop; false "
           "accumulates in the gradient's own type (half the accumulator's "
           "bytes, a rounding per micro-batch)">,
    Option<"paramPersistenceThreshold", "param-persistence-threshold",
           "int64_t", "0",
           "Stage 3: parameters of fewer elements than this stay whole on "
           "every rank (persistent: no gathers; their gradients and states "
           "stay sharded, as at stage 2), as DeepSpeed's "
           "stage3_param_persistence_threshold (0: every parameter is "
           "sharded)">,
    ListOption<"persistentParams", "persistent-params", "std::string",
               "Stage 3: parameters, by name (zero.param), that stay whole "
               "on every rank, besides those under "
               "param-persistence-threshold">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::shard::ShardDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::zero::ZeroDialect"
  ];
}

def ZeroCommBuffersPass : Pass<"zero-comm-buffers", "::mlir::ModuleOp"> {
  let summary = "Place the buffers of a bufferized step's collectives";
  let description = [{
    Runs on the bufferized step, whose collectives are typed ops on buffers
    (`zero.all_gather`, `zero.reduce_scatter`, `zero.all_reduce`, the
    memref forms of `zero.*_start` and `zero.wait`), before anything
    predicts its memory:
    - the `zero.category` a reduction carries (the category of the full
      gradient it reads, which one-shot bufferization had not materialized
      when it made the op) moves to the allocation of that buffer, and the
      `zero.category` of a linalg op on buffers (zero-partition's gradient
      accumulators and their rounding to bf16) to the allocations it
      writes;
    - a buffer that only host operations, copies to the device and
      deallocations use is marked `zero.space = "host"`;
    - with `target=cpu`, in a function with `zero.world_size`, the started
      reductions' scratch comes from the runtime's communication arena,
      held between fixed points: in each run of overlapping start-to-wait
      intervals, `zero.comm_reserve` before every start that needs more
      than the run has reserved, and `zero.comm_release` after the wait
      that ends the run (docs/runtime-abi.md, "The communication arena"),
      which zero-memory-report counts the same. With `target=cuda` there
      is no arena: the CUDA backend's collectives take none of the
      runtime's memory (a world of one copies; more ranks are NCCL's,
      whose buffers are its own).

    Before:
    ```mlir
    %t = zero.reduce_scatter_start %g into %s : memref<8xf32> into memref<4xf32>
    zero.wait %t keep(%g, %s : memref<8xf32>, memref<4xf32>)
    ```
    After (2 ranks):
    ```mlir
    zero.comm_reserve 64
    %t = zero.reduce_scatter_start %g into %s : memref<8xf32> into memref<4xf32>
    zero.wait %t keep(%g, %s : memref<8xf32>, memref<4xf32>)
    zero.comm_release
    ```
  }];
  let options = [
    ZeroTargetOption<"The runtime backend the step runs on (target=cpu: the "
                     "started reductions' scratch comes from the "
                     "communication arena; target=cuda: no scratch, no "
                     "arena)">
  ];
}

def ZeroCollectivesToRuntimePass
    : Pass<"zero-collectives-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower the typed collectives and transfers to runtime calls";
  let description = [{
    The one conversion from the step's collectives to the runtime's C ABI
    (runtime.h), modelled on upstream convert-shard-to-mpi: a type
    converter (`!zero.token` and `!zero.extent` become the runtime's `i64`
    handles), the ops illegal, `applyPartialConversion`. Every collective
    becomes a call of one entry point with its descriptor
    (`zrt_make_collective_op`: kind, reduction, element type) as an `i32`
    constant:
    - `zero.all_gather`, `zero.reduce_scatter`, `zero.all_reduce`:
      `zrt_collective_run(op, in, out, count)`; an all-reduce of a rank-0
      f32 or f64 buffer goes by value to `zrt_collective_scalar`;
    - `zero.*_start`: `zrt_collective_start(op, in, out, count)`, which
      returns the request, and `zero.wait` becomes `zrt_wait(request)`;
    - `zero.copy_start`: `zrt_copy_start`; `zero.read_start` and
      `zero.write_start`: `zrt_nvme_read_start`, `zrt_nvme_write_start`;
    - `zero.comm_reserve`, `zero.comm_release`: `zrt_comm_reserve`,
      `zrt_comm_release`;
    - `shard.process_linear_index`: `zrt_world_rank`; the grid is erased.
    Any other shard op left is a located error, as is an element type the
    runtime's collectives do not take. An `!zero.extent` argument keeps its
    tensor type as `zero.extent` for the step ABI.

    Before:
    ```mlir
    zero.all_gather %s into %f : memref<4xf32> into memref<8xf32>
    ```
    After:
    ```mlir
    %op = arith.constant 2 : i32
    %n = arith.constant 4 : i64
    call @zrt_collective_run(%op, %in, %out, %n)
        : (i32, !llvm.ptr, !llvm.ptr, i64) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
}

def ZeroAllocCategoriesPass
    : Pass<"zero-alloc-categories", "::mlir::ModuleOp"> {
  let summary = "Count tagged allocations to their memory category";
  let description = [{
    Generated code allocates through the runtime's hooks, which count every
    byte to one category, `activations` unless told otherwise. zero-partition
    marks the collectives that make gradients and gathered parameters with
    `zero.category`; their bufferization puts the mark on the buffers
    (the collective's result and, for a reduction, the full gradient it
    reads). This pass brackets each `memref.alloc` that carries a category
    other than `activations` with calls of the runtime's
    `zrt_set_generated_category`, so that the runtime measures gradients and
    parameters where zero-memory-report predicts them (run it after the
    report: the pass consumes the attribute, so running it twice brackets
    once). An allocation marked `zero.space = "host"` (the host copy of a
    `zero.copy_start`, zero-offload's `optimizer=host`) is bracketed the
    same way with `zrt_set_generated_space`, so that the runtime allocates
    it in host memory next to the device and counts it apart.

    Before:
    ```mlir
    %g = memref.alloc() {alignment = 64 : i64, zero.category = "grads"} : memref<8xf32>
    ```
    After:
    ```mlir
    %c1_i32 = arith.constant 1 : i32
    call @zrt_set_generated_category(%c1_i32) : (i32) -> ()
    %g = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
    %c3_i32 = arith.constant 3 : i32
    call @zrt_set_generated_category(%c3_i32) : (i32) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def ZeroLowerStridedCopyPass
    : Pass<"zero-lower-strided-copy", "::mlir::ModuleOp"> {
  let summary = "Turn memref.copy between strided buffers into linalg loops";
  let description = [{
    Upstream's memref-to-LLVM conversion lowers a `memref.copy` whose
    operands are both contiguous to an `llvm.memcpy`, and any other one to a
    call of `memrefCopy`, a function of MLIR's c_runner_utils library that
    the zero runtime does not provide (and a training binary must not need).
    Such copies come from bufferizing `tensor.concat` along an inner
    dimension, `tensor.insert_slice` into a column block and the like. This
    pass rewrites each `memref.copy` that upstream would send to `memrefCopy`
    into a `linalg.generic` copy (upstream's `linalg::makeMemRefCopyOp`),
    which `convert-linalg-to-loops` then lowers to plain loops. Run it before
    that pass; contiguous copies stay `memref.copy` (and become memcpy).

    Before:
    ```mlir
    %sv = memref.subview %buf[0, 2] [2, 2] [1, 1]
        : memref<2x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 2>>
    memref.copy %src, %sv : memref<2x2xf32> to memref<2x2xf32, strided<[4, 1], offset: 2>>
    ```
    After:
    ```mlir
    %sv = memref.subview %buf[0, 2] [2, 2] [1, 1]
        : memref<2x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 2>>
    linalg.generic {indexing_maps = [#id, #id],
                    iterator_types = ["parallel", "parallel"]}
        ins(%src : memref<2x2xf32>)
        outs(%sv : memref<2x2xf32, strided<[4, 1], offset: 2>>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    }
    ```
  }];
  let options = [
    Option<"contiguous", "contiguous", "bool", "false",
           "lower contiguous copies to loops too: on the cuda target the "
           "host's memcpy cannot reach device buffers, and the loops become "
           "a kernel">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numLowered", "num-lowered",
              "memref.copy ops rewritten to linalg.generic">
  ];
}

def ZeroFoldTransposesPass
    : Pass<"zero-fold-transposes", "::mlir::ModuleOp"> {
  let summary = "Fold linalg.transpose producers of matmuls into their "
                "indexing maps, so that GEMM reads the operand in place";
  let description = [{
    A backward pass multiplies by transposed activations and weights
    (`dW = x^T dy`, `dx = dy W^T`), and a tied LM head by the transposed
    embedding. Written as `linalg.transpose` into a fresh tensor followed
    by `linalg.matmul`, each one copies the whole operand every step. This
    pass rewrites a `linalg.matmul` (or `linalg.batch_matmul`) operand that
    a `linalg.transpose` of its last two dimensions produces into a read of
    the transpose's input through the transposed indexing map; a transpose
    left without users disappears. zero-linalg-to-runtime turns the
    transposed maps into the GEMM's transpose flags; the loop lowering reads
    through them as well. Upstream's elementwise fusion would also fold the
    transposes, but into `linalg.generic` contractions that are no longer
    matmuls; upstream's transpose-matmul patterns go the other way.

    Before:
    ```mlir
    %wt = linalg.transpose ins(%w : tensor<16x8xf32>)
                           outs(%e : tensor<8x16xf32>) permutation = [1, 0]
    %y = linalg.matmul ins(%x, %wt : tensor<4x8xf32>, tensor<8x16xf32>)
                       outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
    ```
    After:
    ```mlir
    %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                        affine_map<(m, n, k) -> (n, k)>,
                                        affine_map<(m, n, k) -> (m, n)>]
                       ins(%x, %w : tensor<4x8xf32>, tensor<16x8xf32>)
                       outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numFolded", "num-folded",
              "matmul operands now read through a transposed map">
  ];
}

def ZeroFuseRowNestsPass : Pass<"zero-fuse-row-nests", "::mlir::func::FuncOp"> {
  let summary = "Run a row reduction and the loop nests around it that "
                "meet it row by row as one nest over the rows (target=cuda)";
  let description = [{
    After `convert-linalg-to-parallel-loops` a softmax over the last
    dimension is four or five loop nests: fill the maxima, reduce each row
    to its maximum, fill the sums, reduce each row to its sum of
    exponentials, divide each element; a LayerNorm is five or six. On a
    GPU each is a kernel that reads the whole tensor from memory again
    (the attention's scores are 400 MB a layer for GPT-2 at batch 8).
    This pass fuses such a run into one `scf.parallel` over the rows whose
    body runs the nests' bodies for that row one after another, which
    `zero-gpu-kernels` launches as one block per row: the row is read from
    memory once and its later passes hit the cache.

    What it fuses, in each block: consecutive `scf.parallel` nests without
    reductions, with constant bounds, that compute on buffers only (what
    `zero-gpu-kernels` makes kernels), separated by nothing but
    allocations without operands and operations without side effects
    (which move above the fused nest; no deallocation is crossed, so no
    peak of memory changes). Around a row reduction (`zero-gpu-kernels`'
    form: a parallel nest over rows whose body is a reduction over a
    buffer's last dimension, 32 iterations or more) it takes the nests
    before and after it whose leading dimensions are its rows (another
    reduction: exactly its rows): a nest with more dimensions becomes an
    inner `scf.parallel` over the rest, one with the rows' alone an inner
    one of one iteration. Elementwise nests join only where the step keeps
    the GPU busy: 512 rows or more, or at most 1024 iterations a row.

    The fusion must not change what is computed: every buffer that one of
    the nests writes and another accesses is accessed by all of them
    through one value, at indices whose leading ones are the nest's row
    induction variables. Then a row's work reads and writes only that
    row's places of such buffers, and the rows stay independent. Each
    row's reductions keep their order, so on the CPU the results are
    bit-identical.

    Before (after `convert-linalg-to-parallel-loops`):
    ```mlir
    scf.parallel (%r) = (%c0) to (%c64) step (%c1) {
      memref.store %ninf, %max[%r] : memref<64xf32>
      scf.reduce
    }
    scf.parallel (%r) = (%c0) to (%c64) step (%c1) {
      scf.for %k = %c0 to %c128 step %c1 {
        ... %max[%r] = maximumf(%max[%r], %x[%r, %k])
      }
      scf.reduce
    }
    %p = memref.alloc() : memref<64x128xf32>
    scf.parallel (%r, %k) = (%c0, %c0) to (%c64, %c128) step (%c1, %c1) {
      ... %p[%r, %k] = %x[%r, %k] - %max[%r]
      scf.reduce
    }
    ```
    After:
    ```mlir
    %p = memref.alloc() : memref<64x128xf32>
    scf.parallel (%r) = (%c0) to (%c64) step (%c1) {
      scf.parallel (%u) = (%c0) to (%c1) step (%c1) {
        memref.store %ninf, %max[%r] : memref<64xf32>
        scf.reduce
      }
      scf.for %k = %c0 to %c128 step %c1 { ... }
      scf.parallel (%k) = (%c0) to (%c128) step (%c1) { ... }
      scf.reduce
    }
    ```
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "loop nests fused into row nests">,
    Statistic<"numRowNests", "num-row-nests", "row nests made">
  ];
}

def ZeroGpuKernelsPass : Pass<"zero-gpu-kernels", "::mlir::ModuleOp"> {
  let summary = "Turn a lowered step's loop nests into GPU launches and keep "
                "host code off device memory (target=cuda)";
  let description = [{
    On the CUDA target every buffer of a step lives in device memory, so the
    host code may pass buffers around (to the runtime's GEMMs and
    collectives, to kernels) but never read or write them. This pass, run
    on loops (after `convert-linalg-to-parallel-loops` and
    `zero-outline-loop-nests`), rewrites every host function so:

    - A loop nest whose body only computes on buffers (loads, stores,
      arithmetic, math, nested loops; no calls, allocations or copies)
      becomes a `gpu.launch`. An `scf.parallel` without reductions has its
      dimensions collapsed into one (upstream `collapseParallelLoops`),
      tiled by `block-size` (upstream `tileParallelLoop`), and its tiles
      mapped to blocks and its elements to threads (upstream
      `convert-parallel-loops-to-gpu` patterns): one thread per iteration.
    - A reduction (a loop body whose every store updates a place its loops
      do not index, `place = place <op> value` with `op` one of addf, addi,
      mulf, maximumf, minimumf, maxnumf, minnumf, on f32, f64, i32 or i64,
      or a maximum or minimum on bf16 or f16, folded and shuffled in f32,
      which is exact for them; and nothing else in the body reading those
      buffers) is mapped by its shape:
      - an `scf.parallel` whose body is such a reduction over a buffer's
        last dimension (a LayerNorm's mean, a softmax's maximum, a
        cross-entropy's sum over the vocabulary), 32 iterations or more:
        one block per row of `min(block-size, iterations rounded up to
        32)` threads. Each thread combines every so manyth iteration into a
        partial value that starts at the operation's identity, upstream
        `gpu.all_reduce` combines the partial values (lowered by
        `convert-gpu-to-nvvm` to warp shuffles and shared memory), and
        thread 0 updates the place;
      - an `scf.for` nest that reduces to places it does not index (a
        gradient's sum of squares, a loss's mean), 32 iterations or more:
        the same in one block of up to 1024 threads;
      - `scf.for` loops around an `scf.parallel` each of whose iterations
        owns its places (a bias gradient's sum over rows, indexed by the
        column only; an embedding gradient's scatter `table[ids[n], c] +=
        rows[n, c]`, whose row moves with `n` but whose column is `c`'s):
        interchanged, one thread per column adding in the CPU's order. The
        loops' body may load and compute before the parallel nest (the
        token id). Places that do not move are loaded once, carried
        through the loops in a register and stored once. Where they do
        not move and there are 64 rows or more (a bias gradient over a
        batch's tokens) and `block-size` is 64 or more, a block takes 32
        columns with 32 threads on each (fewer where each would fold fewer
        than 8 rows, 8 at least; a block per 32 columns is few blocks, so
        each has as many threads as it may, whatever `block-size`): each
        folds every so manyth row into a partial value, the partial values
        meet in workgroup memory, and after a barrier one thread per column
        adds them to its place in a fixed order.
      - an `scf.parallel` over rows whose body runs such reductions (each
        of at least one iteration) and `scf.parallel` nests of loads,
        stores and arithmetic one after another, with arithmetic around
        them (what `zero-fuse-row-nests` makes of a softmax): one block
        per row, of `min(block-size, the longest step's iterations rounded
        up to 32)` threads, that runs the steps in order with a
        `gpu.barrier` between each two; a reduction as above, a parallel
        step with each thread taking every so manyth iteration.
      Block reductions add in a tree, not in the CPU's order; the order
      depends only on the block size, so runs repeat bit for bit.
    - Any other nest (an `scf.for` at the top that is not one of those: a
      scatter whose order matters, a small reduction) runs as it is in one
      thread, so results are bit-identical to the CPU target's loops.
    - A `memref.store` left in host code runs in a one-thread launch.
    - In kernels, `arith.select %c, %a, %b` where one side is computed
      from loads for the select alone (the loads and the pure operations
      on them, with nothing between them and the select writing memory),
      the other loads nothing, and `%c` depends on no load becomes an
      `scf.if` that computes each side in its branch: a causal attention's
      masked scores (`select %above_diagonal, -inf, %scaled`) are no longer
      read, half of each score row.
    - In kernels, f32 and f64 `math.sqrt` becomes NVVM's `sqrt.rn`
      intrinsic and `math.rsqrt` one divided by it (correctly rounded, as
      the CPU's `math-to-llvm` computes them): `convert-gpu-to-nvvm`
      would call libdevice's `__nv_sqrtf`, which is `sqrt.approx` unless
      the module sets `__CUDA_PREC_SQRT`, which MLIR's NVVM target cannot.
    - A `memref.load` left in host code (a scalar the host needs: the loss
      for the scalar all-reduce, a clipping coefficient) becomes a copy into
      a host stack slot with `zrt_copy_to_host`, which waits for the work
      queued before it.
    - Anything else that reads or writes a buffer in host code is a located
      error (a `memref.copy` must have been lowered to loops first:
      `zero-lower-strided-copy{contiguous=true}`).

    Upstream `gpu-kernel-outlining` then outlines the launches and
    `zero-gpu-launch-streams` puts them on the runtime's stream.

    A row reduction, before:
    ```mlir
    scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
      scf.for %k = %c0 to %c64 step %c1 {
        %v = memref.load %x[%i, %k] : memref<4x64xf32>
        %a = memref.load %sum[%i] : memref<4xf32>
        %s = arith.addf %a, %v : f32
        memref.store %s, %sum[%i] : memref<4xf32>
      }
      scf.reduce
    }
    ```
    After (block-size=256: 64 threads, the row's length rounded up to 32):
    ```mlir
    gpu.launch blocks(%row, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
               threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
      %part = scf.for %k = %t to %c64 step %c64 iter_args(%p = %zero) -> (f32) {
        %v = memref.load %x[%row, %k] : memref<4x64xf32>
        %n = arith.addf %p, %v : f32
        scf.yield %n : f32
      }
      %total = gpu.all_reduce add %part uniform {} : (f32) -> f32
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %a = memref.load %sum[%row] : memref<4xf32>
        %s = arith.addf %a, %total : f32
        memref.store %s, %sum[%row] : memref<4xf32>
      }
      gpu.terminator
    }
    ```

    Before:
    ```mlir
    func.func private @step_loop0(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
      scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
        %v = memref.load %x[%i, %j] : memref<4x8xf32>
        %t = math.tanh %v : f32
        memref.store %t, %y[%i, %j] : memref<4x8xf32>
        scf.reduce
      }
      return
    }
    ```
    After (block-size=256):
    ```mlir
    func.func private @step_loop0(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
      gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
                 threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
        // %k = %bx * 256 + %tx; if %k < 32: (%i, %j) = (%k / 8, %k mod 8)
        ...
        gpu.terminator
      }
      return
    }
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "threads per block of a parallel loop nest's launch (1 to 1024)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numParallel", "num-parallel",
              "parallel loop nests launched one thread per iteration">,
    Statistic<"numSerial", "num-serial",
              "loop nests and stores launched in one thread">,
    Statistic<"numBlockReductions", "num-block-reductions",
              "reductions launched a block per place, combined by "
              "gpu.all_reduce">,
    Statistic<"numMaskedLoads", "num-masked-loads",
              "selects whose loaded side moved into a branch">,
    Statistic<"numRowKernels", "num-row-kernels",
              "nests over rows whose reductions and parallel steps run a "
              "block per row">,
    Statistic<"numInterchanged", "num-interchanged",
              "reductions over outer loops run one thread per place">,
    Statistic<"numColumnBlocks", "num-column-blocks",
              "reductions over rows run a block per 32 columns">,
    Statistic<"numHostReads", "num-host-reads",
              "scalar loads of device memory by host code">
  ];
}

def ZeroGpuLaunchStreamsPass
    : Pass<"zero-gpu-launch-streams", "::mlir::ModuleOp"> {
  let summary = "One kernel module, and every launch on the runtime's "
                "compute stream";
  let description = [{
    Run after upstream `gpu-kernel-outlining`, which makes a `gpu.module` per
    launch. This pass moves every kernel into one `gpu.module @zero_kernels`
    (so `gpu-module-to-binary` runs `ptxas` once per step, not once per
    kernel; names stay unique), and makes every `gpu.launch_func`
    asynchronous on the stream `zrt_gpu_stream()` returns, the runtime's
    compute stream, where its GEMMs and memory operations also run. A
    synchronous `gpu.launch_func` would make upstream `gpu-to-llvm` create,
    synchronize and destroy a stream around every kernel. The stream enters
    as the launch's async dependency (`gpu-to-llvm` turns
    `!gpu.async.token` into the stream pointer).

    Before:
    ```mlir
    gpu.launch_func @step_loop0_kernel::@step_loop0_kernel
        blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(...)
    ```
    After:
    ```mlir
    %s = func.call @zrt_gpu_stream() : () -> !llvm.ptr
    %t = builtin.unrealized_conversion_cast %s : !llvm.ptr to !gpu.async.token
    %0 = gpu.launch_func async [%t] @zero_kernels::@step_loop0_kernel
        blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(...)
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def ZeroOutlineLoopNestsPass
    : Pass<"zero-outline-loop-nests", "::mlir::ModuleOp"> {
  let summary = "Move each top-level loop nest of a step function into a "
                "function of its own";
  let description = [{
    A training step lowers to one function with a loop nest per linalg op:
    tens of thousands of loops for a deep model. Several LLVM loop passes
    (IndVarSimplify above all: 85% of a 12-layer GPT-2's LLVM time) and
    upstream's scf-to-cf cost more per loop the larger the function is, so
    compile time grew with the square of the depth. This pass moves every
    `scf.for`/`scf.parallel` that is a direct child of a function body into
    a private function `@<function>_loop<N>` marked `noinline` (so that
    LLVM's inliner does not rebuild the one large function) with internal
    linkage, called in its place. Constants and side-effect-free views the nest uses (subviews,
    reshapes, casts) are cloned into the new function, so its arguments are
    whole buffers and scalars, and loop bounds stay constants that LLVM can
    vectorize with. A nest equal to one outlined before (the same op in
    every layer) calls the function made for that one: LLVM compiles each
    distinct nest once, however deep the model. Upstream's `outlineSingleBlockRegion` outlines a region
    but passes every value from above as an argument, constants included.

    A loop whose body calls a function or allocates is glue, not a nest:
    gradient accumulation's loop over the micro-batches holds a whole
    forward and backward pass. The nests of its body are outlined first
    (then run on the runtime's threads, or as kernels, like any other), and
    the loop, now a loop of calls, is outlined as glue. Outlined whole, it
    was one LLVM function of about 13,000 lines for gpt-tiny with 8
    micro-batches: 4.0 s to compile instead of 1.2 s.

    Before:
    ```mlir
    func.func @forward_backward(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
      %c0 = arith.constant 0 : index
      ...
      scf.for %i = %c0 to %c4 step %c1 {
        scf.for %j = %c0 to %c8 step %c1 { ... memref.store ... %y[%i, %j] }
      }
      return
    }
    ```
    After:
    ```mlir
    func.func @forward_backward(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
      call @forward_backward_loop0(%x, %y)
          : (memref<4x8xf32>, memref<4x8xf32>) -> ()
      return
    }
    func.func private @forward_backward_loop0(%x: memref<4x8xf32>,
                                              %y: memref<4x8xf32>)
        attributes {llvm.linkage = #llvm.linkage<internal>,
                    passthrough = ["noinline"]} {
      %c0 = arith.constant 0 : index
      ...
      scf.for %i = %c0 to %c4 step %c1 { ... }
      return
    }
    ```
  }];
  let options = [
    Option<"unoptimizedGlue", "unoptimized-glue", "bool", "true",
           "mark the functions the nests came from, and the glue loops "
           "outlined, `optnone`: what is left of them is glue "
           "(allocations, calls), and LLVM's instruction scheduler takes "
           "more than linear time on a block that long">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numOutlined", "num-outlined", "loop nests outlined">,
    Statistic<"numShared", "num-shared",
              "loop nests that call a function outlined before for an equal "
              "nest">
  ];
}

def ZeroOutlineHostOpsPass
    : Pass<"zero-outline-host-ops", "::mlir::ModuleOp"> {
  let summary = "Move the operations that run on the host into functions "
                "of their own";
  let description = [{
    zero-offload's `optimizer=host` marks the optimizer's updates
    `zero.space = "host"`: they read and write host memory next to the
    device and run on the host. On a device target every other loop nest
    becomes a kernel, so before the loop lowering (which drops the marks
    of the operations it replaces) this pass moves each marked operation
    of a function's entry block, bufferized (no results), into a private
    function `@<parent>_host<N>` marked `zero.space = "host"` and calls
    it; equal ones share a function. zero-outline-loop-nests keeps the
    mark on the nests it outlines from such a function, zero-gpu-kernels
    leaves marked functions on the host, and on the CPU they are split
    over the runtime's threads like any nest. A marked operation inside a
    loop or region, or one that still returns values, is a located error.

    Before:
    ```mlir
    linalg.generic {..., zero.space = "host"} ins(%g : memref<8xf32>)
        outs(%w, %m, %v : memref<8xf32>, memref<8xf32>, memref<8xf32>) {...}
    ```
    After:
    ```mlir
    call @train_step_host0(%g, %w, %m, %v) : (...) -> ()
    ...
    func.func private @train_step_host0(...) attributes {zero.space = "host", ...} {
      linalg.generic ... ins(%arg0 : memref<8xf32>) outs(%arg1, %arg2, %arg3 : ...) {...}
      return
    }
    ```
  }];
  let statistics = [
    Statistic<"numOutlined", "num-outlined", "host operations outlined">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def ZeroFuseElementwisePass
    : Pass<"zero-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuse chains of elementwise linalg ops on tensors into one "
                "loop nest (upstream fusion, matmuls kept)";
  let description = [{
    A training step is full of short elementwise chains (bias add, residual,
    GELU and its derivative, masks, the pieces of LayerNorm and softmax),
    each a linalg op of its own and so a full pass over memory and a buffer.
    This pass generalizes the named elementwise, broadcast, map and reduce
    ops and runs upstream's elementwise fusion
    (`populateElementwiseOpsFusionPatterns`) with a control function:
    a producer is fused into a consumer that is not a contraction when the
    consumer is its one user, or when the producer is cheap to compute again
    in every one of its users and fuses into all of them, so that its
    result is never written: one result, all loops parallel, at most four
    ops besides indices and constants, and exactly one input the size of
    the result, no wider in its element type (the others broadcast). Then
    the input its users read instead lives on in place of a result as
    large, so no step holds more memory, and each user saves a pass over
    the result (a softmax's scaled scores, read by the row maximum and the
    exponentials, and its exponentials, read by the row sum and the
    division: three passes over an attention score matrix fewer);
    `linalg.matmul`, `linalg.batch_matmul`, `linalg.fill` and
    `linalg.transpose` stay named ops, so the GEMM lowering still finds every
    matmul and zero-fold-transposes every transposed operand. (Upstream's
    `linalg-fuse-elementwise-ops` pass has no control function: it folds
    transposes into contractions.)

    With `bf16-gemm-results` (what `zero-bufferize-step{target=cuda}`
    runs, whose GEMMs write bf16 results themselves) a rounding of a
    contraction's f32 result to bf16 fuses into nothing, so that
    `zero-linalg-to-runtime`'s bf16-results finds it alone and the GEMM
    writes the bf16 result; and `arith.extf` and `arith.truncf` do not count
    among the four ops of a recomputable producer, since every op of a bf16
    step is widened and rounded around its f32 arithmetic. A bf16
    attention's scaled and masked scores are then computed again from the
    GEMM's bf16 output in the row maximum and the exponentials, where the
    fused rounding left an f32 score matrix and a pass that read it (400 MB
    and 3.7 ms a step for GPT-2 at batch 8 on an H100).

    Before:
    ```mlir
    %s = linalg.add ins(%x, %r : tensor<8xf32>, tensor<8xf32>)
                    outs(%e : tensor<8xf32>) -> tensor<8xf32>
    %y = linalg.generic {... ["parallel"]} ins(%s : tensor<8xf32>)
                        outs(%e : tensor<8xf32>) {
      ^bb0(%a: f32, %o: f32):
        %t = math.tanh %a : f32
        linalg.yield %t : f32
    } -> tensor<8xf32>
    ```
    After:
    ```mlir
    %y = linalg.generic {... ["parallel"]} ins(%x, %r : tensor<8xf32>,
                        tensor<8xf32>) outs(%e : tensor<8xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %s = arith.addf %a, %b : f32
        %t = math.tanh %s : f32
        linalg.yield %t : f32
    } -> tensor<8xf32>
    ```
  }];
  let options = [
    Option<"bf16GemmResults", "bf16-gemm-results", "bool", "false",
           "The GEMMs will write bf16 results (target=cuda): roundings of "
           "contraction results stay unfused, and float conversions cost "
           "nothing in the recomputation rule">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numGeneralized", "num-generalized",
              "named ops turned into linalg.generic">
  ];
}

def ZeroExpandBf16Pass : Pass<"zero-expand-bf16", "::mlir::ModuleOp"> {
  let summary = "Expand bf16 <-> f32 conversions into integer arithmetic "
                "(upstream's patterns)";
  let description = [{
    Applies upstream MLIR's `populateExpandBFloat16Patterns` (the bf16 part
    of `arith-expand{include-bf16}`) alone: `arith.extf` from bf16 becomes a
    shift of the bits, `arith.truncf` to bf16 a round to nearest even on the
    f32 bits (NaN to a quiet NaN), the rounding the runtime's bf16
    collectives use. Without it LLVM lowers a truncation on a CPU without
    a bf16 conversion instruction (AMD's Zen, Intel before Cooper Lake) to a
    call of `__truncsfbf2`, a compiler-rt builtin that GCC 12's libgcc does
    not have, so the step would not link. The other expansions of
    `arith-expand` (min, max, divisions) are left to LLVM, as before.

    Before:
    ```mlir
    %h = arith.truncf %x : f32 to bf16
    ```
    After (schematically):
    ```mlir
    %b = arith.bitcast %x : f32 to i32
    %r = arith.addi %b, %bias : i32      // 0x7fff + the lowest kept bit
    %s = arith.shrui %r, %c16 : i32
    %t = arith.trunci %s : i32 to i16
    %n = arith.select %isnan, %qnan, %t : i16
    %h = arith.bitcast %n : i16 to bf16
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ZeroApproximateMathPass
    : Pass<"zero-approximate-math", "::mlir::ModuleOp"> {
  let summary = "Replace f32 transcendental functions by upstream's "
                "vectorizable polynomial approximations";
  let description = [{
    Applies upstream MLIR's polynomial approximations
    (`populateMathPolynomialApproximationPatterns`, the patterns behind
    upstream's test-only `test-math-polynomial-approximation`) to the f32
    math ops named by `functions`. The rewritten ops are plain arith code
    (FMAs, selects, bit casts), so the loops around them vectorize, where a
    call of libm's `tanhf` or `expm1f` keeps every loop scalar. f64 ops are
    never touched: the f64 steps that check gradients by finite differences
    keep libm's results. Error bounds, measured against libm, are in
    docs/decisions/0016-f32-transcendentals-are-polynomials.md and
    test/unit/ApproximateMathTest.cpp.

    Before:
    ```mlir
    %t = math.tanh %x : f32
    ```
    After (schematically):
    ```mlir
    %c = arith.constant -7.99881172 : f32  // clamp, then a rational
    %x2 = arith.mulf %xc, %xc : f32        // polynomial p(x)/q(x)
    %p = math.fma %x2, %a13, %a11 : f32
    ...
    %t = arith.divf %p, %q : f32
    ```
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "math ops (by mnemonic) to approximate; the default is every "
               "one a training step uses: tanh, exp, expm1, log, log1p, erf">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def ZeroSchedulePass : Pass<"zero-schedule", "::mlir::ModuleOp"> {
  let summary = "Overlap communication with compute: start collectives early, "
                "wait late";
  let description = [{
    Turns the blocking collectives of zero-partition's step (`shard.all_gather`,
    `shard.reduce_scatter`, `shard.all_reduce` with `sum` on f32 and f64
    tensors, in a function's entry block; a scalar is started as a vector of
    one element) into started collectives and waits (`zero.*_start`,
    `zero.wait`, `!zero.token`), placed by a cost model of the step.

    First, with `defer-gathers`, a step that takes whole parameters and
    returns each as the all-gather of its updated shard (stages 1 and 2)
    takes and returns the shards instead (`zero.sharded`, so the step ABI
    and the driver follow) and gathers each parameter before its first use:
    the gathers move from the end of the step, where nothing hides them, to
    the next step's forward pass. The step holds a parameter's shard next
    to its gathered copy, so its peak grows by the shards' bytes (and falls
    between steps, where only the shards stay); under a `memory-budget`
    that deferring every gather would break even with every collective
    blocking, a prefix of them (in order of first use) is kept, found by
    bisection on the blocking step's predicted peak, and the others stay
    at the end.

    With `optimizer-in-backward`, a parameter whose gather stays in the
    step is updated in the backward pass: the wait of its reduction, the
    pure ops that compute its update from it, and the start of the gather
    of the updated shard move together to where the cost model has the
    reduction done (its other inputs, such as bias corrections and this
    rank's slice, move up with them). Which parameters defer their gathers
    and which update in the backward pass is then chosen per parameter:
    the choice whose schedule the cost model predicts fastest, tried on
    copies of the module (the best prefix in order of first use, coarse to
    fine, then the larger parameters toggled one at a time while that
    helps; at most 64 schedules per function), kept only if it is
    predicted at least 1% faster than deferring every parameter (the
    backward-pass update holds the gathered copy beside the parameter for
    the rest of the step, so it costs memory). `remarks` says how many
    defer.

    With `bucket-bytes`, collectives of one kind smaller than it that
    follow each other (no larger one of the kind between them) merge into
    one of at most that many bytes: gathers of the concatenated shards
    (each member's result a column block of the [ranks x total] gather), a
    reduce-scatter of the inputs laid out rank block by rank block, an
    all-reduce of the concatenation. Every element is reduced in the same
    rank order as alone, so the step's results are bit-identical.

    The cost model:

    - the compute time of an op is its FLOPs over `gemm-gflops` for
      contractions (matmuls), and its tensor bytes over `memory-gbps` plus
      its FLOPs over `vector-gflops` for other linalg ops; other ops cost
      nothing;
    - a collective takes `link-latency-us` plus the bytes this rank sends
      (runtime.h's formulas) over `link-gbps`, one at a time, in program
      order (the runtime's communication thread); one left blocking (a
      scalar or max all-reduce) stalls the compute until it is done;
    - with `coalesce-scalars`, runs of scalar sum all-reduces (global-norm
      clipping's per-parameter squared norms) first become one all-reduce
      of a vector: one latency instead of one per parameter, and each
      element reduced in the same rank order, so bit-identical;
    - all-gathers (parameters, stage 3) wait right before their first use
      and, with `prefetch`, start early enough that the predicted timeline
      has them complete by then: each start moves back over the compute
      before it, as far as the stall it sees, round after round, never
      before its input exists; then a gather needed earlier starts no
      later than one needed after it (the link's order is the order of
      need);
    - reduce-scatters and all-reduces (gradients) start right after their
      input is computed and wait where the predicted timeline has them
      complete (with a margin of half their time), at their first use if
      that comes first; a wait that still stalls moves down over as much
      compute as it stalled. At the latest a wait comes before the start
      that would put more than `max-inflight-reductions` times the largest
      reduction's input bytes in flight: the full gradients a reduction
      reads stay allocated until its wait, so this bounds what they hold
      (4 largest gradients; DeepSpeed's overlap_comm double-buffers
      buckets).

    With `memory-budget` (bytes per rank), the scheduled step's predicted peak
    (zero-memory-report's total, computed on a copy of the module bufferized by
    `bufferize-pipeline`, the pipeline that follows this pass) stays within the
    budget: while it does not, the collectives in flight at the peak are
    relieved, latest wait first, until their full-size buffers cover the
    excess: an all-gather starts after the peak, past the next start or wait
    that is not another gather's start (at its wait, if nothing is left
    between: the prefetch is dropped), a reduction completes before it. When
    that stops lowering the peak, every prefetch is dropped and the reductions
    go on; then, if the step has buckets (whose gathered buffers live until
    their last member's last use, where nothing is in flight to move), it is
    scheduled again without them and relieved from the start; a function that
    still cannot fit keeps its blocking collectives (a warning says so). A step
    whose peak exceeds the budget even with every collective blocking is a
    located error, at the op where the peak is, saying by how many bytes.

    Collectives keep their relative order on every rank (it is program
    order), and each reduces exactly as its blocking form does, so the step
    gives bit-identical results. The predicted timeline can be written as
    Chrome trace-event JSON (`timeline`); the step time it predicts is a
    remark when `remarks` is set.

    Before (stage 3):
    ```mlir
    %w = shard.all_gather %w_shard on @zero_grid grid_axes = [0] gather_axis = 0
        {zero.category = "params"} : tensor<64xf32> -> tensor<128xf32>
    %e = tensor.expand_shape %w [[0, 1]] output_shape [8, 16] ...
    %y = linalg.matmul ins(%x, %e ...) ...
    ```
    After (the start hoisted over earlier compute):
    ```mlir
    %pending, %token = zero.all_gather_start %w_shard {zero.category = "params"}
        : tensor<64xf32> -> tensor<128xf32>
    ... compute that hides the gather ...
    %w = zero.wait %token, %pending : tensor<128xf32>
        keep(%w_shard : tensor<64xf32>) -> tensor<128xf32>
    %e = tensor.expand_shape %w [[0, 1]] output_shape [8, 16] ...
    ```
  }];
  let options = [
    Option<"deferGathers", "defer-gathers", "bool", "true",
           "Stage 2: the step takes and returns parameter shards and gathers "
           "each parameter before its first use, instead of gathering the "
           "updated parameters at its end (where nothing hides them)">,
    Option<"optimizerInBackward", "optimizer-in-backward", "bool", "true",
           "Stages 1-2: each parameter's update runs as soon as its reduced "
           "gradient arrives, and the gather of the updated parameter starts "
           "right after it, in the backward pass; with defer-gathers, the "
           "cost model picks which parameters defer their gathers instead">,
    Option<"prefetch", "prefetch", "bool", "true",
           "Start all-gathers early enough to hide behind compute (false: "
           "each starts where its blocking form was)">,
    Option<"maxInflightReductions", "max-inflight-reductions", "unsigned",
           "4",
           "At most this many times the largest reduction's full-size input "
           "held by reduce-scatters and all-reduces in flight at once (each "
           "holds its input until its wait); >= 1">,
    Option<"gemmGflops", "gemm-gflops", "double", "100.0",
           "Cost model: GEMM rate in GFLOP/s (one rank; the defaults of the "
           "compute rates predicted gpt d256 L4's step on one thread of the "
           "machine they were fitted on within 2%; docs/results.md, \"The "
           "cost model's default rates\")">,
    Option<"vectorGflops", "vector-gflops", "double", "16.0",
           "Cost model: rate of the FLOPs of other linalg ops, in GFLOP/s">,
    Option<"memoryGbps", "memory-gbps", "double", "20.0",
           "Cost model: memory bandwidth of one rank in GB/s (1e9 bytes/s)">,
    Option<"linkGbps", "link-gbps", "double", "10.0",
           "Cost model: link bandwidth in GB/s (what zero-run's --sim-link "
           "bw= sets)">,
    Option<"linkLatencyUs", "link-latency-us", "double", "20.0",
           "Cost model: latency of one collective in microseconds">,
    Option<"bucketBytes", "bucket-bytes", "int64_t", "65536",
           "Merge consecutive all-gathers, reduce-scatters and all-reduces "
           "smaller than this (full-size bytes) into buckets of at most this "
           "many bytes (0: no buckets)">,
    Option<"coalesceScalars", "coalesce-scalars", "bool", "true",
           "Merge runs of scalar sum all-reduces (global-norm clipping's "
           "per-parameter norms) into one all-reduce of a vector">,
    Option<"memoryBudget", "memory-budget", "int64_t", "0",
           "Bytes one rank may hold at the step's peak, as zero-memory-report "
           "predicts it (0: no budget)">,
    Option<"bufferizePipeline", "bufferize-pipeline", "std::string",
           "\"\"",
           "With memory-budget: the pass pipeline that bufferizes a copy of "
           "the module for the memory prediction (empty, the default: the "
           "target's, zero-bufferize-step or "
           "zero-bufferize-step{target=cuda})">,
    Option<"timeline", "timeline", "std::string", "\"\"",
           "Write the predicted timeline of each scheduled function to this "
           "file, as Chrome trace-event JSON">,
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark with the predicted step time, unscheduled and "
           "scheduled">,
    ZeroTargetOption<"The runtime backend the step runs on, for the bytes a "
                     "call allocates itself when memory-budget is checked "
                     "(target=cpu: a bf16 GEMM's f32 copies of its "
                     "operands; target=cuda: none)">
  ];
  let dependentDialects = ["::mlir::zero::ZeroDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ZeroOffloadPass : Pass<"zero-offload", "::mlir::ModuleOp"> {
  let summary = "Keep optimizer states in host memory or on the NVMe tier "
                "(and stage-3 parameter shards on NVMe)";
  let description = [{
    ZeRO-Offload's placement with `optimizer=host`: every optimizer state
    of `@train_step` stays in host memory next to the device
    (`zero.space = "host"` on its argument and result), and every
    operation that reads one (the optimizer's updates, which must be linalg
    operations on tensors) runs on the host (`zero.space = "host"` on the
    operation). The update's other tensor operands (the gradient shard, the
    parameter shard it starts from) come to the host with
    `zero.copy_start {zero.space = "host"}`, started right after each
    value exists (a gradient as soon as its reduction completes, so the
    copies overlap the rest of the backward pass) and waited for right
    before the update; each result the device reads (the new parameter)
    goes back with `zero.copy_start {zero.space = "device"}`, waited for
    before its first device use. With bf16 parameters and f32 master
    weights (`kind = "master"`) the update reads no parameter: only the
    bf16 gradient leaves the device and the rounded bf16 parameter comes
    back, as in DeepSpeed. (With any placement but the default, an update
    that overwrites its parameter without reading it computes it into a
    `tensor.empty` marked `zero.category = "params"`, so the old value is
    neither copied to the host nor read from the NVMe tier.) Where zero-schedule waits for a gradient's
    reduction only where the update needs it, that wait (with the pure ops
    only the copy reads, such as the 1/N scaling) moves up to where the
    next copied gradient's reduction starts, and each gradient's copy
    completes once the next one has started: gradients leave the device
    during the backward pass and their device buffers are freed there. At
    stage 0, where the step returns each new parameter, it is stored into
    its argument two updates later, so the device holds two new
    parameters at a time. The update computes what it computed on the
    device, in the same order: parameters are bit-identical. On the CPU
    target both spaces are host memory, counted apart by the runtime and
    by zero-memory-report; on CUDA the host's buffers are page-locked, the
    copies run on a stream of their own, and zero-gpu-kernels leaves the
    host's loop nests on the host.

    ```mlir
    %pg, %tg = zero.copy_start %g {zero.category = "grads", zero.space = "host"}
        : tensor<8xf32> -> tensor<8xf32>
    ...
    %gh = zero.wait %tg, %pg : tensor<8xf32> keep(%g : tensor<8xf32>) -> tensor<8xf32>
    %new:3 = linalg.generic {..., zero.space = "host"}
        ins(%gh : tensor<8xf32>) outs(%wh, %m, %v : ...)
    %pw, %tw = zero.copy_start %new#0 {zero.category = "params", zero.space = "device"} ...
    %w1 = zero.wait %tw, %pw : ... -> tensor<8xf32>
    ```

    ZeRO-Infinity's NVMe tier: with `optimizer=nvme` every
    optimizer state of `@train_step`, and with `params=nvme` (stage 3) every
    parameter shard, leaves memory. Its argument becomes a
    `!zero.extent<tensor<...>>` (a handle to the rank's NVMe file) and its
    result goes: the step reads the value into a staging buffer with
    `zero.read_start` / `zero.wait` right before each operation that uses
    it, and writes the new value back with `zero.write_start` as soon as it
    exists. The staging buffers are all that stays in memory, counted in the
    category of what they hold.

    Transfers are placed around the *uses* of offloaded values in program
    order, so the pass runs after zero-schedule and keeps the order it
    chose for everything else (zero-schedule refuses an offloaded step).
    First, each update of an offloaded value moves up to right after its
    inputs exist (with the pure ops that only it reads, such as its
    gradient's scaling; never a collective; a tensor.empty one of them
    computes into lands right before it, so no buffer lives longer), so at
    stage 3, where the
    optimizer came in after the backward pass, it now runs as soon as its
    gradient is reduced and its transfers overlap the rest of the backward
    pass. Then the read for a use starts `read-ahead` uses earlier (right
    after that use and its writes; the first ones right before the first
    use) and waits right before its own use; the write after a use starts
    once the new value exists and completes right before the use after
    next. Each use more of read-ahead keeps one more use's staging buffers
    live. Every read of a value's old contents completes before its new
    contents are written.

    Before (stage 3, abridged):
    ```mlir
    func.func @train_step(%w: tensor<8xf32> {zero.param = "w", zero.sharded},
                          %m: tensor<8xf32> {zero.state = {kind = "exp_avg", param = "w"}, zero.sharded}, ...)
        -> (..., tensor<8xf32> {zero.param = "w", zero.sharded}, tensor<8xf32> {zero.state = ...}) {
      ...
      %new:2 = linalg.generic ... ins(%w, %g, %m ...) outs(%w, %m ...)
      return ..., %new#0, %new#1
    ```
    After `zero-offload{optimizer=nvme params=nvme}`:
    ```mlir
    func.func @train_step(%w: !zero.extent<tensor<8xf32>> {zero.param = "w", zero.sharded},
                          %m: !zero.extent<tensor<8xf32>> {zero.state = ...}, ...) -> (...) {
      %pw, %tw = zero.read_start %w {zero.category = "params"} : ... -> tensor<8xf32>
      ...
      %w0 = zero.wait %tw, %pw : tensor<8xf32> -> tensor<8xf32>
      %m0 = zero.wait %tm, %pm : tensor<8xf32> -> tensor<8xf32>
      %new:2 = linalg.generic ... ins(%w0, %g, %m0 ...) outs(%w0, %m0 ...)
      %t1 = zero.write_start %new#0 to %w : tensor<8xf32> to !zero.extent<tensor<8xf32>>
      %t2 = zero.write_start %new#1 to %m : ...
      ...
      zero.wait %t1 keep(%new#0 : tensor<8xf32>)
      zero.wait %t2 keep(%new#1 : tensor<8xf32>)
      return ...
    ```
    The runtime (runtime.h, "NVMe offload") keeps the extents in
    `nvme-dir`/zero-rank<R>.nvme, read and written with io_uring and
    O_DIRECT; the driver takes the directory (`--offload nvme-dir=DIR`).

    Both, `optimizer=host params=nvme` (ZeRO-Infinity with the optimizer
    on the CPU): the shards' transfers are placed first, as above; then
    the states go to host memory and their updates run there, as with
    `optimizer=host` alone. A shard read for an update alone is read
    into host memory (`zero.read_start {zero.space = "host"}`) and its
    new value written to the NVMe tier from there
    (`zero.write_start {zero.space = "host"}`): the parameter never
    passes through the device on its way to and from the update. The
    reads for the all-gathers stay in device memory.
  }];
  let options = [
    Option<"optimizer", "optimizer", "::mlir::zero::Placement",
           "::mlir::zero::Placement::Device",
           "Where the optimizer states live",
           [{::llvm::cl::values(
             clEnumValN(::mlir::zero::Placement::Device, "device",
                        "in the step's memory (no offload)"),
             clEnumValN(::mlir::zero::Placement::Host, "host",
                        "in host memory next to the device, updated there "
                        "(ZeRO-Offload)"),
             clEnumValN(::mlir::zero::Placement::Nvme, "nvme",
                        "on the NVMe tier (ZeRO-Infinity)"))}]>,
    Option<"params", "params", "::mlir::zero::Placement",
           "::mlir::zero::Placement::Device",
           "Where the parameter shards live (stage 3)",
           [{::llvm::cl::values(
             clEnumValN(::mlir::zero::Placement::Device, "device",
                        "in the step's memory (no offload)"),
             clEnumValN(::mlir::zero::Placement::Nvme, "nvme",
                        "on the NVMe tier (stage 3 only)"))}]>,
    Option<"readAhead", "read-ahead", "unsigned", "3",
           "How many uses ahead a read starts: it loads while those uses "
           "and the compute between them run (at least 1; each one more "
           "keeps one more use's staging buffers live)">
  ];
  let statistics = [
    Statistic<"numOffloaded", "offloaded-values",
              "Arguments moved to host memory or the NVMe tier">,
    Statistic<"numHostOps", "host-ops",
              "Operations that run on the host (optimizer=host)">,
    Statistic<"numCopies", "copies",
              "Copies between device and host placed (optimizer=host)">,
    Statistic<"numReads", "reads", "Reads of the NVMe tier placed">,
    Statistic<"numWrites", "writes", "Writes of the NVMe tier placed">
  ];
  let dependentDialects = ["::mlir::zero::ZeroDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def ZeroRematPass : Pass<"zero-remat", "::mlir::ModuleOp"> {
  let summary = "Recompute forward values in the backward pass to hold a "
                "memory budget";
  let description = [{
    Activation recomputation on the training-step contract, before
    zero-partition: a forward value the backward pass reads is computed a
    second time right before that read instead of being kept from the
    forward pass, so that the step's predicted peak per rank fits
    `memory-budget`.

    The peak is zero-memory-report's: the pass runs `predict-pipeline`
    (zero-partition with the run's stage and ranks, then
    zero-bufferize-step) on a copy of the module and asks where the
    bufferized step first reaches its peak. At that point it looks at the
    forward values that are live across it: defined before it, not read by
    it, read after it. For each, the recomputation is the value's producer
    and, recursively, the producers of whatever it reads that is not live
    at the point anyway (parameters and batch inputs always are); a value
    it reads that cannot be recomputed (a collective, an op with effects)
    is kept instead, and its bytes count against the saving. Candidates go
    cheapest first, in FLOPs added (zero-gen's count, FlopCount.h) per byte
    freed, until the bytes freed cover the excess; then the pass predicts
    again, at the new peak, until the step fits. So a softmax's output, a
    GELU's or a layer norm's goes before a matmul's, and a matmul is
    recomputed only where nothing cheaper is left. Recomputing values one
    by one can repeat a producer several of them share; where the model
    has blocks (see `policy=blocks`) the pass also runs the same search
    from per-block checkpointing and keeps whichever adds fewer FLOPs.

    The recomputed ops are clones of the forward ones on the same inputs:
    parameters and losses are bit-identical with and without the pass.
    Where an op stays over the budget with every forward value live across
    it recomputed, the pass fails with an error located at that op that
    gives its bytes over the budget; it stops there, without lowering the
    peaks elsewhere first. Before it predicts a round, it checks that the
    peak's op could get under the budget at all: when its bytes less those
    of every value that could be recomputed there (each counted whole)
    stay over it, that is the floor, found without a prediction. Every
    round lowers the peak or the time spent over the budget, or rules
    values out at the peak, and a search makes at most `max-rounds` of
    them; after 8, a search whose rate of lowering the peak so far would
    not reach the budget in the rounds left stops and says so. Where
    every value live across the peak has been
    tried and none lowers it, one round recomputes them all together
    before the search gives up: the error then says either that (the op
    stays over the budget) or that the search found no recomputation
    lowering the peak there. `memory-budget=0` (the default) changes
    nothing.

    `policy=blocks` is the baseline the budget's choice is measured
    against: per-block checkpointing as torch.utils.checkpoint around each
    transformer block does it. A block is the parameters whose names share
    a prefix up to a number (`h0.`, `h.3.`, `layers.12.`); a forward op
    (one the loss depends on) belongs to the last group of parameters, in
    forward order, that it depends on. Each block's forward ops are
    cloned once, in order, right before the backward pass first reads one
    of their values, and every read there reads the clones: only the
    block's inputs stay live. It takes no budget.

    Before (abridged; %h is kept from the forward pass for the backward):
    ```mlir
    %h = linalg.matmul ins(%x, %w1 ...)
    %a = linalg.generic {tanh} ins(%h ...)     // live to the backward pass
    %y = linalg.matmul ins(%a, %w2 ...)
    ... loss, then the backward pass ...
    %dw2 = linalg.matmul ins(%aT, %dy ...)     // reads %a
    ```
    After `zero-remat{memory-budget=...}`:
    ```mlir
    %h = linalg.matmul ins(%x, %w1 ...)
    %a = linalg.generic {tanh} ins(%h ...)
    %y = linalg.matmul ins(%a, %w2 ...)        // last read of %a
    ...
    %a2 = linalg.generic {tanh} ins(%h ...)    // recomputed
    %dw2 = linalg.matmul ins(%a2T, %dy ...)
    ```
  }];
  let options = [
    Option<"memoryBudget", "memory-budget", "int64_t", "0",
           "Bytes one rank may hold at the step's peak, as zero-memory-report "
           "predicts it after predict-pipeline (0: recompute nothing)">,
    Option<"policy", "policy", "::mlir::zero::RematPolicy",
           "::mlir::zero::RematPolicy::Budget",
           "What to recompute",
           [{::llvm::cl::values(
             clEnumValN(::mlir::zero::RematPolicy::Budget, "budget",
                        "forward values at the predicted peak, fewest FLOPs "
                        "per byte first, until the step fits memory-budget"),
             clEnumValN(::mlir::zero::RematPolicy::Blocks, "blocks",
                        "per-block checkpointing, the baseline: every "
                        "forward value of each block (the parameters whose "
                        "names share a prefix up to a number: h0., "
                        "layers.3.) recomputed from the block's inputs at "
                        "its first read in the backward pass, as "
                        "torch.utils.checkpoint around each block does"))}]>,
    Option<"predictPipeline", "predict-pipeline", "std::string",
           "\"\"",
           "The pass pipeline that turns a copy of the module into the "
           "bufferized step whose peak is predicted (empty, the default: "
           "zero-partition, then the target's zero-bufferize-step; "
           "zero-train-pipeline passes its stage and ranks)">,
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark with the peak before and after, the values "
           "recomputed, the FLOPs they add and the predictions made (a "
           "note with the predictions where the budget cannot be met)">,
    Option<"maxRounds", "max-rounds", "unsigned", "64",
           "The most rounds one search makes (a round predicts the "
           "bufferized step once); a search that has neither fitted nor "
           "got stuck by then fails with the peak it reached">,
    ZeroTargetOption<"The runtime backend the step runs on, for the bytes a call allocates "
                     "itself (target=cpu: a bf16 GEMM's f32 copies of its "
                     "operands; target=cuda: none)">
  ];
  let statistics = [
    Statistic<"numRecomputed", "recomputed-values",
              "Forward values recomputed in the backward pass">,
    Statistic<"numCloned", "cloned-ops", "Operations cloned to recompute them">,
    Statistic<"numPredictions", "predictions",
              "Bufferized copies whose peak was predicted">
  ];
  let dependentDialects = ["::mlir::zero::ZeroDialect"];
}

def ZeroMemoryReportPass : Pass<"zero-memory-report", "::mlir::ModuleOp"> {
  let summary = "Predict per-rank memory of a bufferized training step";
  let description = [{
    Reads a training step after `zero-bufferize-step` (memrefs, frees placed
    by zero-release-early) and predicts what one rank holds:

    - model states by the ZeRO accounting, from the `zero.manifest` of a
      partitioned `@train_step` (parameters and gradients full or sharded
      as each `#zero.layout` says, optimizer states as the arguments are,
      padding included) or from the argument types of `forward_backward`
      and `optimizer`;
    - the bytes of the buffers a driver passes in (arguments, by category,
      and out-parameters);
    - the peak of the bytes the function allocates itself, simulated over
      its allocations and frees in program order (a loop body counts once;
      sizes rounded up to their alignment, as the runtime is asked for
      them);
    - the predicted peak total: driver buffers plus that peak, and the
      peak of each runtime category (params, grads, optimizer_states,
      activations, comm) by the same simulation: an allocation counts to
      its `zero.category` (activations without one), the runtime's
      collective scratch to comm;
    - the run's peak (`run_peak_bytes`): what a device needs to run the
      step as the driver does. A partitioned step is one function, whose
      peak it is. An unpartitioned one is the contract's forward_backward
      and optimizer, and the driver holds every model state across both
      calls (forward_backward's own peak leaves out the optimizer states
      it never takes): each category's largest peak or model-state bytes,
      summed. The stats JSON's measured total equals it.

    The report is a remark on each function, or JSON written to `output`.

    Example remark (abridged):
    ```
    remark: zero-memory-report: stage 2 on 2 ranks: model states params 232
    grads 116 optimizer_states 232 bytes; generated peak 576 bytes;
    predicted peak total 1168 bytes (params 356, grads 320,
    optimizer_states 232, activations 580, comm 120)
    ```
  }];
  let options = [
    Option<"output", "output", "std::string", "\"\"",
           "Write the report as JSON to this file instead of remarks">,
    ZeroTargetOption<"The runtime backend the step runs on, for the bytes a call allocates "
                     "itself (target=cpu: a bf16 GEMM's f32 copies of its "
                     "operands; target=cuda: none)">
  ];
}

#endif // ZERO_TRANSFORMS_PASSES_TD
