//===- Passes.td - zero-mlir pass definitions --------------*- tablegen -*-===//
//
// Every pass of zero-mlir is declared here; `zero-opt --help` and
// docs generated from this file (build/docs/ZeroPasses.md) describe them.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TRANSFORMS_PASSES_TD
#define ZERO_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

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
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
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
    f64 with the default (row-major, untransposed) indexing maps into calls
    of the runtime's GEMM entry points (`zrt_gemm_f32`, `zrt_gemm_f64`,
    `zrt_gemm_batched_f32`, `zrt_gemm_batched_f64`; see
    runtime/include/zero/runtime.h), passing aligned pointers plus offsets
    and leading dimensions. Operands whose rows are not contiguous (innermost
    stride other than 1) or ops with other indexing maps are left alone; the
    loop lowering handles them. Upstream has no linalg-to-BLAS lowering.

    Before:
    ```mlir
    linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>)
                  outs(%c : memref<8x16xf32>)
    ```
    After (schematically):
    ```mlir
    %pa = ... aligned pointer of %a plus its offset ...
    func.call @zrt_gemm_f32(%c8, %c16, %c4, %pa, %c4, %pb, %c16, %one,
                            %pc, %c16)
        : (i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr,
           i64) -> ()
    ```
  }];
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

#endif // ZERO_TRANSFORMS_PASSES_TD
