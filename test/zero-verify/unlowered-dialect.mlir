// RUN: zero-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect --zero-verify
// zero-partition reads the contract through the same check and refuses it too:
// RUN: not zero-opt %s -split-input-file --allow-unregistered-dialect --zero-partition="stage=2 world-size=2" 2>&1 | FileCheck %s --check-prefix=PART
// PART: unlowered-dialect.mlir:[[@LINE+14]]:8: error: op 'tm_tensor.scatter' is from a dialect zero-mlir does not lower
// PART: error: zero-partition: the module does not satisfy the training-step contract
// PART: error: op 'torch.aten.sub' is from a dialect zero-mlir does not lower
// PART: error: zero-partition: the module does not satisfy the training-step contract

// An op of a dialect zero-mlir does not lower (torch-mlir's TMTensor, as
// emitted for scatter-add in an embedding's backward) is refused by name at
// zero-verify, instead of passing and failing later in bufferization.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}, %idx: tensor<2x1xi32> {zero.batch = "tokens"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  %upd = arith.constant dense<1.0> : tensor<2xf32>
  // expected-error@+1 {{op 'tm_tensor.scatter' is from a dialect zero-mlir does not lower; the training step may only use the func, arith, math, tensor, linalg, scf, cf, affine and bufferization dialects (lower 'tm_tensor' ops to linalg in the frontend first)}}
  %g = "tm_tensor.scatter"(%upd, %idx, %w) ({
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    "tm_tensor.yield"(%s) : (f32) -> ()
  }) {unique_indices = false} : (tensor<2xf32>, tensor<2x1xi32>, tensor<4xf32>) -> tensor<4xf32>
  return %l, %g : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// The same in the optimizer.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  // expected-error@+1 {{op 'torch.aten.sub' is from a dialect zero-mlir does not lower}}
  %n = "torch.aten.sub"(%w, %g) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %n : tensor<4xf32>
}
