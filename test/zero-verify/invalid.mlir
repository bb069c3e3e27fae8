// RUN: zero-opt %s -split-input-file -verify-diagnostics --zero-verify

// Each case breaks one rule of docs/training-step-ir.md; zero-verify must
// report it at the offending argument, result, function or operation.

// Missing function: no optimizer.
// expected-error@+1 {{training-step module has no function with zero.role = "optimizer"}}
module {
  func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
      attributes {zero.role = "forward_backward"} {
    %l = arith.constant dense<0.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// Duplicate role: two forward_backward functions.
// expected-note@+1 {{the first one is here}}
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
// expected-error@+1 {{is a second function with zero.role = "forward_backward"}}
func.func @fb2(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// A role on a declaration.
// expected-error@+1 {{has zero.role = "forward_backward" but no body}}
func.func private @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// An argument with no role.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"},
              // expected-error@+1 {{forward_backward argument #1 has no zero.* role attribute}}
              %x: tensor<4xf32>)
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// Duplicate roles on one argument.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"},
              // expected-error@+1 {{has 2 roles ('zero.batch' and 'zero.param')}}
              %x: tensor<4xf32> {zero.param = "x", zero.batch = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// A non-tensor parameter.
// expected-error@+1 {{parameter 'w' must be a ranked tensor, got 'f32'}}
func.func @fb(%w: f32 {zero.param = "w"}) -> (tensor<f32> {zero.loss}, f32 {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, f32
}
func.func @opt(%w: f32 {zero.param = "w"}, %g: f32 {zero.grad = "w"}) -> (f32 {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : f32
}

// -----

// A dynamically shaped parameter.
// expected-error@+1 {{parameter 'w' must have a static shape, got 'tensor<?xf32>'}}
func.func @fb(%w: tensor<?xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<?xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<?xf32>
}
func.func @opt(%w: tensor<?xf32> {zero.param = "w"}, %g: tensor<?xf32> {zero.grad = "w"}) -> (tensor<?xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<?xf32>
}

// -----

// An integer parameter.
// expected-error@+1 {{parameter 'w' has element type 'i32'; supported element types are f32, bf16 and f64}}
func.func @fb(%w: tensor<4xi32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xi32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xi32>
}
func.func @opt(%w: tensor<4xi32> {zero.param = "w"}, %g: tensor<4xi32> {zero.grad = "w"}) -> (tensor<4xi32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xi32>
}

// -----

// Two parameters with one name.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"},
              // expected-error@+1 {{duplicate parameter name 'w'}}
              %v: tensor<4xf32> {zero.param = "w"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// A parameter after a batch input.
func.func @fb(%x: tensor<4xf32> {zero.batch = "x"},
              // expected-error@+1 {{parameter 'w' follows a batch argument}}
              %w: tensor<4xf32> {zero.param = "w"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// A role that forward_backward arguments cannot have.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"},
              // expected-error@+1 {{'zero.hyper' is not a forward_backward argument role}}
              %lr: f32 {zero.hyper = "lr"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// The loss marker on an argument.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"},
              // expected-error@+1 {{'zero.loss' is not a forward_backward argument role; use zero.param or zero.batch}}
              %l: tensor<f32> {zero.loss})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// No loss result.
// expected-error@+1 {{must return the loss first, marked {zero.loss}}}
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  return %w : tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// A loss that is not a scalar.
// expected-error@+1 {{loss must be a rank-0 tensor of f32, bf16 or f64, got 'tensor<4xf32>'}}
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<4xf32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  return %w, %w : tensor<4xf32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// A gradient of a parameter that does not exist.
// expected-error@+2 {{result #1 is the gradient of unknown parameter 'v'; parameters are 'w'}}
// expected-error@+1 {{returns no gradient for parameter 'w'; add a result marked {zero.grad = "w"}}}
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "v"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// A parameter without gradient.
// expected-error@+1 {{returns no gradient for parameter 'b'; add a result marked {zero.grad = "b"}}}
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}, %b: tensor<2xf32> {zero.param = "b"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// A gradient whose type does not match its parameter.
// expected-error@+1 {{gradient of 'w' has type 'tensor<4xf64>' but the parameter has type 'tensor<4xf32>'}}
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}, %gw: tensor<4xf64> {zero.batch = "gw"})
    -> (tensor<f32> {zero.loss}, tensor<4xf64> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %gw : tensor<f32>, tensor<4xf64>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// Gradients out of parameter order.
// expected-error@+2 {{result #1 is the gradient of 'b' but must be the gradient of parameter #0}}
// expected-error@+1 {{result #2 is the gradient of 'w' but must be the gradient of parameter #1}}
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}, %b: tensor<4xf32> {zero.param = "b"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "b"}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %b, %w : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %b: tensor<4xf32> {zero.param = "b"},
               %gw: tensor<4xf32> {zero.grad = "w"}, %gb: tensor<4xf32> {zero.grad = "b"})
    -> (tensor<4xf32> {zero.param = "w"}, tensor<4xf32> {zero.param = "b"})
    attributes {zero.role = "optimizer"} {
  return %w, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// A dynamic shape inside forward_backward.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}, %x: tensor<4xf32> {zero.batch = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  // expected-error@+1 {{produces dynamic type 'tensor<?xf32>'; the training step must use static shapes}}
  %c = tensor.cast %x : tensor<4xf32> to tensor<?xf32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// Optimizer parameters in another order than forward_backward's.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}, %b: tensor<4xf32> {zero.param = "b"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"}, tensor<4xf32> {zero.grad = "b"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w, %b : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}
// expected-error@+2 {{optimizer parameter #0 is 'b' but forward_backward parameter #0 is 'w'; list them in the same order}}
// expected-error@+1 {{optimizer parameter #1 is 'w' but forward_backward parameter #1 is 'b'}}
func.func @opt(%b: tensor<4xf32> {zero.param = "b"}, %w: tensor<4xf32> {zero.param = "w"},
               %gw: tensor<4xf32> {zero.grad = "w"}, %gb: tensor<4xf32> {zero.grad = "b"})
    -> (tensor<4xf32> {zero.param = "w"}, tensor<4xf32> {zero.param = "b"})
    attributes {zero.role = "optimizer"} {
  return %w, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// An optimizer without the gradient of a parameter.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
// expected-error@+1 {{has no argument for the gradient of 'w'; add one marked {zero.grad = "w"}}}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %lr: f32 {zero.hyper = "lr"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// A state naming an unknown parameter.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"},
               // expected-error@+1 {{optimizer state 'exp_avg' names unknown parameter 'q'; parameters are 'w'}}
               %m: tensor<4xf32> {zero.state = {param = "q", kind = "exp_avg"}})
    -> (tensor<4xf32> {zero.param = "w"}, tensor<4xf32> {zero.state = {param = "q", kind = "exp_avg"}})
    attributes {zero.role = "optimizer"} {
  return %w, %m : tensor<4xf32>, tensor<4xf32>
}

// -----

// A state of another shape than its parameter.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"},
               // expected-error@+1 {{optimizer state 'exp_avg' of 'w' has type 'tensor<2x2xf32>'; it must be a float tensor of the parameter's shape}}
               %m: tensor<2x2xf32> {zero.state = {param = "w", kind = "exp_avg"}})
    -> (tensor<4xf32> {zero.param = "w"}, tensor<2x2xf32> {zero.state = {param = "w", kind = "exp_avg"}})
    attributes {zero.role = "optimizer"} {
  return %w, %m : tensor<4xf32>, tensor<2x2xf32>
}

// -----

// Optimizer arguments out of group order: a hyper-parameter before a state.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"},
               %lr: f32 {zero.hyper = "lr"},
               // expected-error@+1 {{optimizer argument #3 is one of the optimizer states but follows the hyper-parameters}}
               %m: tensor<4xf32> {zero.state = {param = "w", kind = "exp_avg"}})
    -> (tensor<4xf32> {zero.param = "w"}, tensor<4xf32> {zero.state = {param = "w", kind = "exp_avg"}})
    attributes {zero.role = "optimizer"} {
  return %w, %m : tensor<4xf32>, tensor<4xf32>
}

// -----

// A hyper-parameter that is a tensor.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"},
               // expected-error@+1 {{hyper-parameter 'lr' must be a scalar integer or float, got 'tensor<4xf32>'}}
               %lr: tensor<4xf32> {zero.hyper = "lr"})
    -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// An optimizer that forgets to return its state.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
// expected-error@+1 {{must return 2 results (1 new parameters, then 1 new optimizer states), got 1}}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"},
               %m: tensor<4xf32> {zero.state = {param = "w", kind = "exp_avg"}})
    -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// Optimizer results in the wrong order.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
// expected-error@+2 {{result #0 must be marked {zero.param = "w"}}}
// expected-error@+1 {{result #1 must be marked {zero.state = {kind = "exp_avg", param = "w"}}}}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"},
               %m: tensor<4xf32> {zero.state = {param = "w", kind = "exp_avg"}})
    -> (tensor<4xf32> {zero.state = {param = "w", kind = "exp_avg"}}, tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %m, %w : tensor<4xf32>, tensor<4xf32>
}

// -----

// A matrix product over a parameter inside the optimizer.
func.func @fb(%w: tensor<4x4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4x4xf32>
}
func.func @opt(%w: tensor<4x4xf32> {zero.param = "w"}, %g: tensor<4x4xf32> {zero.grad = "w"}) -> (tensor<4x4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  %e = tensor.empty() : tensor<4x4xf32>
  // expected-error@+1 {{is a contraction; the optimizer may only contain elementwise tensor ops}}
  %m = linalg.matmul ins(%w, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m : tensor<4x4xf32>
}

// -----

// A partial (row-wise) reduction in the optimizer.
func.func @fb(%w: tensor<4x4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4x4xf32>
}
func.func @opt(%w: tensor<4x4xf32> {zero.param = "w"}, %g: tensor<4x4xf32> {zero.grad = "w"}) -> (tensor<4x4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error@+1 {{is a partial reduction; the optimizer may only reduce whole tensors}}
  %r = linalg.reduce ins(%g : tensor<4x4xf32>) outs(%e : tensor<4xf32>) dimensions = [1]
    (%a: f32, %b: f32) { %s = arith.addf %a, %b : f32
                         linalg.yield %s : f32 }
  return %w : tensor<4x4xf32>
}

// -----

// Two parameters combined elementwise.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}, %b: tensor<4xf32> {zero.param = "b"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"}, tensor<4xf32> {zero.grad = "b"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w, %b : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %b: tensor<4xf32> {zero.param = "b"},
               %gw: tensor<4xf32> {zero.grad = "w"}, %gb: tensor<4xf32> {zero.grad = "b"})
    -> (tensor<4xf32> {zero.param = "w"}, tensor<4xf32> {zero.param = "b"})
    attributes {zero.role = "optimizer"} {
  // expected-error@+1 {{combines tensors of parameters 'w' and 'b'}}
  %nw = arith.subf %w, %gb : tensor<4xf32>
  return %nw, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// A new parameter computed from another parameter's data.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}, %b: tensor<4xf32> {zero.param = "b"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"}, tensor<4xf32> {zero.grad = "b"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w, %b : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}
// expected-error@+1 {{result #0 for parameter 'w' is computed from parameter 'b'}}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %b: tensor<4xf32> {zero.param = "b"},
               %gw: tensor<4xf32> {zero.grad = "w"}, %gb: tensor<4xf32> {zero.grad = "b"})
    -> (tensor<4xf32> {zero.param = "w"}, tensor<4xf32> {zero.param = "b"})
    attributes {zero.role = "optimizer"} {
  %nb = arith.subf %b, %gb : tensor<4xf32>
  return %nb, %nb : tensor<4xf32>, tensor<4xf32>
}

// -----

// Slicing a parameter in the optimizer.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  // expected-error@+1 {{'tensor.extract_slice' op is not allowed in the optimizer}}
  %s = tensor.extract_slice %g[0] [2] [1] : tensor<4xf32> to tensor<2xf32>
  return %w : tensor<4xf32>
}

// -----

// A transposed access in the optimizer.
func.func @fb(%w: tensor<4x4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4x4xf32>
}
func.func @opt(%w: tensor<4x4xf32> {zero.param = "w"}, %g: tensor<4x4xf32> {zero.grad = "w"}) -> (tensor<4x4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  %e = tensor.empty() : tensor<4x4xf32>
  // expected-error@+1 {{accesses operand #0 with indexing map affine_map<(d0, d1) -> (d1, d0)>}}
  %t = linalg.transpose ins(%g : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  %n = arith.subf %w, %t : tensor<4x4xf32>
  return %n : tensor<4x4xf32>
}

// -----

// Position-dependent optimizer math.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  // expected-error@+1 {{has 'linalg.index' in its body; optimizer math must be elementwise}}
  %n = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%g : tensor<4xf32>) outs(%w : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %i = linalg.index 0 : index
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      %s = arith.mulf %a, %f : f32
      linalg.yield %s : f32
  } -> tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// The loss result with a second role.
// expected-error@+1 {{result #0 is the loss and must carry no other zero.* role}}
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss, zero.grad = "w"}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// A hyper-parameter's default on an argument that is no hyper-parameter.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"},
               // expected-error@+1 {{optimizer argument #1 has 'zero.hyper_default' but is no hyper-parameter; put the default on the optimizer's zero.hyper argument}}
               %g: tensor<4xf32> {zero.grad = "w", zero.hyper_default = 0.1 : f64},
               %lr: f32 {zero.hyper = "lr", zero.hyper_default = 3.0e-4 : f64})
    -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}
