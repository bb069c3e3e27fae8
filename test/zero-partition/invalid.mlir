// RUN: zero-opt %s -split-input-file -verify-diagnostics --zero-partition="stage=1 world-size=2"

// A module that breaks the contract: zero-verify's error, then the pass's.
// expected-error@+1 {{zero-partition: the module does not satisfy the training-step contract}}
module {
  // expected-error@+1 {{returns no gradient for parameter 'w'}}
  func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss})
      attributes {zero.role = "forward_backward"} {
    %l = arith.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
  func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
      attributes {zero.role = "optimizer"} {
    return %w : tensor<4xf32>
  }
}

// -----

// A full reduction that starts from 1: every rank's partial would add it.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%one : f32) outs(%e : tensor<f32>) -> tensor<f32>
  // expected-error@+1 {{sums into an initial value that is not a constant 0}}
  %s = linalg.reduce ins(%g : tensor<4xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%a: f32, %b: f32) { %r = arith.addf %a, %b : f32
                         linalg.yield %r : f32 }
  %x = tensor.extract %s[] : tensor<f32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%g : tensor<4xf32>) outs(%w : tensor<4xf32>) {
    ^bb0(%gi: f32, %wi: f32):
      %d = arith.mulf %gi, %x : f32
      %u = arith.subf %wi, %d : f32
      linalg.yield %u : f32
  } -> tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// A product over all elements has no all-reduce to complete it.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%one : f32) outs(%e : tensor<f32>) -> tensor<f32>
  // expected-error@+1 {{is a full reduction whose combiner is neither addf nor maximumf}}
  %s = linalg.reduce ins(%g : tensor<4xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%a: f32, %b: f32) { %r = arith.mulf %a, %b : f32
                         linalg.yield %r : f32 }
  %x = tensor.extract %s[] : tensor<f32>
  %xs = tensor.from_elements %x : tensor<f32>
  %xb = linalg.broadcast ins(%xs : tensor<f32>) outs(%w : tensor<4xf32>) dimensions = [0]
  %n = arith.subf %w, %xb : tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// A tensor constant with distinct values cannot be cut into slices.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  // expected-error@+1 {{is a non-splat tensor constant; zero-partition cannot shard it}}
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %s = arith.mulf %g, %c : tensor<4xf32>
  %n = arith.subf %w, %s : tensor<4xf32>
  return %n : tensor<4xf32>
}
