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

// -----

// zero.init says how a driver initializes a parameter; its kind decides
// which float fields it has.
// expected-error@+1 {{argument #0: 'zero.init' kind must be "normal", "uniform" or "constant", got "xavier"}}
func.func @f(%w: tensor<4xf32> {zero.param = "w", zero.init = {kind = "xavier"}}) {
  return
}

// -----

// expected-error@+1 {{argument #0: 'zero.init' of kind "normal" needs a field 'std'}}
func.func @f(%w: tensor<4xf32> {zero.param = "w", zero.init = {kind = "normal"}}) {
  return
}

// -----

// expected-error@+1 {{argument #0: 'zero.init' field 'std' must not be negative}}
func.func @f(%w: tensor<4xf32> {zero.param = "w", zero.init = {kind = "normal", std = -1.0 : f64}}) {
  return
}

// -----

// expected-error@+1 {{argument #0: 'zero.init' of kind "constant" has no field 'std'}}
func.func @f(%w: tensor<4xf32> {zero.param = "w", zero.init = {kind = "constant", value = 1.0 : f64, std = 1.0 : f64}}) {
  return
}

// -----

// expected-error@+1 {{argument #0: 'zero.init' needs low <= high}}
func.func @f(%w: tensor<4xf32> {zero.param = "w", zero.init = {kind = "uniform", low = 1.0 : f64, high = 0.0 : f64}}) {
  return
}

// -----

// expected-error@+1 {{argument #0: 'zero.init' field 'value' must be a finite float, e.g. 0.02 : f64}}
func.func @f(%w: tensor<4xf32> {zero.param = "w", zero.init = {kind = "constant", value = 1 : i64}}) {
  return
}

// -----

// expected-error@+1 {{'zero.init' belongs on a parameter argument}}
func.func @f() attributes {zero.init = {kind = "constant", value = 1.0 : f64}} {
  return
}

// -----

// zero.token_range bounds the token ids of an integer batch input.
// expected-error@+1 {{argument #0: 'zero.token_range' must be a positive integer (the number of token ids, e.g. 50257 : i64)}}
func.func @f(%t: tensor<2x4xi32> {zero.batch = "tokens", zero.token_range = 0 : i64}) {
  return
}

// -----

// expected-error@+1 {{'zero.step_abi' belongs on the module}}
func.func @f() attributes {zero.step_abi = {abi_version = 1 : i64}} {
  return
}

// -----

// zero.hyper_default is a hyper-parameter's default: a number.
// expected-error@+1 {{argument #0: 'zero.hyper_default' must be a number (e.g. 3.0e-04 : f64), the hyper-parameter's default}}
func.func @f(%lr: f32 {zero.hyper = "lr", zero.hyper_default = "fast"}) {
  return
}

// -----

// expected-error@+1 {{result #0: 'zero.hyper_default' belongs on a hyper-parameter argument}}
func.func @f() -> (f32 {zero.hyper_default = 1.0 : f64}) {
  %c = arith.constant 1.0 : f32
  return %c : f32
}
