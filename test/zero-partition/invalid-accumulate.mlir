// Gradient accumulation needs at least one micro-batch per step, and a
// batch dimension to stack micro-batches along: located errors, not crashes.
// RUN: not zero-opt %s --zero-partition="stage=2 world-size=2 accumulate=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not zero-opt %s --zero-partition="stage=2 world-size=2 accumulate=-3" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: zero-opt %s --zero-partition="stage=2 world-size=2 accumulate=2" -verify-diagnostics -o /dev/null
// ZERO: invalid-accumulate.mlir:[[@LINE+3]]:1: error: zero-partition: accumulate must be at least 1 micro-batch per step, got 0
// NEG: error: zero-partition: accumulate must be at least 1 micro-batch per step, got -3
// A 0-d batch input has no rows to stack.
module {
  // expected-error @below {{zero-partition: accumulate=2 stacks micro-batches along each batch input's leading dimension, but batch input 'x' is 'tensor<f32>'; give it a static shape with a batch dimension first}}
  func.func @fb(%w: tensor<4xf32> {zero.param = "w"}, %x: tensor<f32> {zero.batch = "x"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
      attributes {zero.role = "forward_backward"} {
    return %x, %w : tensor<f32>, tensor<4xf32>
  }
  func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
      attributes {zero.role = "optimizer"} {
    %n = arith.subf %w, %g : tensor<4xf32>
    return %n : tensor<4xf32>
  }
}
