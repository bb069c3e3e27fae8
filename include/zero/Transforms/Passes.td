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

#endif // ZERO_TRANSFORMS_PASSES_TD
