// RUN: zero-opt %s -split-input-file -verify-diagnostics

// The zero dialect checks each contract attribute's value where it is
// attached, at parse time, before any pass runs. Which argument or result may
// carry which role is zero-verify's business (invalid.mlir).

// expected-error@+1 {{'zero.role' must be "forward_backward", "optimizer" or "train_step"}}
func.func @f() attributes {zero.role = "backward"} {
  return
}

// -----

func.func @f() {
  // expected-error@+1 {{'zero.role' belongs on a func.func, not on 'arith.constant'}}
  %c = arith.constant {zero.role = "optimizer"} 0 : i32
  return
}

// -----

// expected-error@+1 {{argument #0: 'zero.param' must be a string naming the parameter}}
func.func @f(%w: tensor<4xf32> {zero.param = 3 : i32}) {
  return
}

// -----

// expected-error@+1 {{argument #0: 'zero.param' must not be an empty string}}
func.func @f(%w: tensor<4xf32> {zero.param = ""}) {
  return
}

// -----

// expected-error@+1 {{'zero.state' must be a dictionary {param = "<param name>", kind = "<state kind>"}}}
func.func @f(%m: tensor<4xf32> {zero.state = {param = "w"}}) {
  return
}

// -----

// expected-error@+1 {{unknown zero dialect attribute 'zero.gradient'}}
func.func @f(%g: tensor<4xf32> {zero.gradient = "w"}) {
  return
}

// -----

// expected-error@+1 {{result #0: 'zero.loss' is a unit attribute}}
func.func private @f() -> (tensor<f32> {zero.loss = 1 : i32})

// -----

// expected-error@+1 {{'zero.param' belongs on a function argument or result, not on an operation}}
func.func @f() attributes {zero.param = "w"} {
  return
}

// -----

// expected-error@+1 {{result #0: 'zero.role' belongs on a func.func, not on a function argument or result}}
func.func private @f() -> (tensor<4xf32> {zero.role = "optimizer"})

// -----

func.func @f() -> memref<4xf32> {
  // expected-error@+1 {{'zero.category' must be "params", "grads", "optimizer_states" or "activations"}}
  %a = memref.alloc() {zero.category = "gradients"} : memref<4xf32>
  return %a : memref<4xf32>
}

// -----

// expected-error@+1 {{argument #0: 'zero.category' belongs on the operation that allocates a buffer}}
func.func @f(%g: tensor<4xf32> {zero.category = "grads"}) {
  return
}
