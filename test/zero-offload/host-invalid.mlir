// RUN: zero-opt %s -split-input-file -verify-diagnostics --zero-offload="optimizer=host"
// Each refusal of zero-offload's optimizer=host, located where the problem is.

// A state read by something other than a linalg operation on tensors.
func.func @train_step(%m: tensor<4xf32> {zero.state = {kind = "m", param = "w"}})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.state = {kind = "m", param = "w"}})
    attributes {zero.role = "train_step", zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'tensor.extract' op reads optimizer state argument #0, and optimizer=host runs what reads a state on the host: only linalg operations on tensors (the optimizer's updates) can run there}}
  %x = tensor.extract %m[%c0] : tensor<4xf32>
  %l = tensor.from_elements %x : tensor<f32>
  return %l, %m : tensor<f32>, tensor<4xf32>
}

// -----

// A state of dynamic shape.
// expected-error@+1 {{argument #0 has type 'tensor<?xf32>'; optimizer=host keeps statically shaped tensors of whole-byte integers or floats in host memory}}
func.func @train_step(%m: tensor<?xf32> {zero.state = {kind = "m", param = "w"}})
    -> (tensor<f32> {zero.loss}) attributes {zero.role = "train_step", zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// Offloading twice.
// expected-error@+1 {{argument #0 is in host memory already: run zero-offload once}}
func.func @train_step(%m: tensor<4xf32> {zero.space = "host", zero.state = {kind = "m", param = "w"}})
    -> (tensor<f32> {zero.loss}) attributes {zero.role = "train_step", zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// A state already on the NVMe tier.
// expected-error@+1 {{argument #0 is on the NVMe tier already: run zero-offload once}}
func.func @train_step(%m: !zero.extent<tensor<4xf32>> {zero.state = {kind = "m", param = "w"}})
    -> (tensor<f32> {zero.loss}) attributes {zero.role = "train_step", zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// The attribute's values.
// expected-error@+1 {{'zero.space' must be "host" or "device"}}
func.func @f(%m: tensor<4xf32> {zero.space = "disk"}) {
  return
}

// -----

// A copy names the space it copies to.
func.func @f(%m: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'zero.copy_start' op needs 'zero.space', the memory space it copies to ("host" or "device")}}
  %p, %t = zero.copy_start %m : tensor<4xf32> -> tensor<4xf32>
  %r = zero.wait %t, %p : tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @f(%m: tensor<4xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{'zero.copy_start' op has input shape of 'tensor<4xf32>' but result of 'tensor<2x2xf32>'; a copy keeps the shape}}
  %p, %t = zero.copy_start %m {zero.space = "host"} : tensor<4xf32> -> tensor<2x2xf32>
  %r = zero.wait %t, %p : tensor<2x2xf32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// A state's new value computed by an operation that reads no state runs on
// the device, and the driver keeps state results in host memory.
#id = affine_map<(d0) -> (d0)>
func.func @train_step(%m: tensor<4xf32> {zero.state = {kind = "m", param = "w"}}, %x: tensor<4xf32> {zero.batch = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.state = {kind = "m", param = "w"}})
    attributes {zero.role = "train_step", zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %c = arith.constant dense<0.0> : tensor<f32>
  %e = tensor.empty() : tensor<4xf32>
  // expected-error@+1 {{'linalg.generic' op computes the new value of optimizer state result #1 on the device; optimizer=host needs every state's new value computed on the host, by an operation that reads a state}}
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %c, %n : tensor<f32>, tensor<4xf32>
}
