// RUN: zero-opt %s -split-input-file -verify-diagnostics --zero-offload="optimizer=nvme params=nvme"
// Each refusal of zero-offload, at the function it is about.

// params=nvme offloads stage-3 shards.
// expected-error@+1 {{params=nvme keeps parameter shards on NVMe, which needs stage 3; this step is stage 2 and holds full parameters (run zero-partition with stage=3)}}
func.func @train_step(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "train_step", zero.stage = 2 : i64, zero.world_size = 1 : i64} {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c, %w : tensor<f32>, tensor<4xf32>
}

// -----

// Offloading twice.
// expected-error@+1 {{argument #0 is on the NVMe tier already: run zero-offload once}}
func.func @train_step(%w: !zero.extent<tensor<4xf32>> {zero.param = "w", zero.sharded}) -> (tensor<f32> {zero.loss})
    attributes {zero.role = "train_step", zero.stage = 3 : i64, zero.world_size = 1 : i64} {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// A state whose new value is another argument.
// expected-error@+1 {{returns argument #1 as the new value of argument #0; zero-offload needs each offloaded value's update computed in the step}}
func.func @train_step(%m: tensor<4xf32> {zero.state = {kind = "m", param = "w"}}, %n: tensor<4xf32> {zero.batch = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.state = {kind = "m", param = "w"}})
    attributes {zero.role = "train_step", zero.stage = 3 : i64, zero.world_size = 1 : i64} {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c, %n : tensor<f32>, tensor<4xf32>
}

// -----

// A stage-3 step whose every parameter is whole (persistent): no shard to
// offload.
// expected-error@+1 {{params=nvme offloads the parameter shards of stage 3, and no parameter of this step is a shard (zero.sharded): each is persistent (zero-partition's param-persistence-threshold)}}
func.func @train_step(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss})
    attributes {zero.role = "train_step", zero.stage = 3 : i64, zero.world_size = 1 : i64} {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// Elements the staging buffers cannot hold.
// expected-error@+1 {{argument #0 has type 'tensor<4xi1>'; the NVMe tier keeps statically shaped tensors of whole-byte integers or floats}}
func.func @train_step(%m: tensor<4xi1> {zero.state = {kind = "m", param = "w"}}) -> (tensor<f32> {zero.loss})
    attributes {zero.role = "train_step", zero.stage = 3 : i64, zero.world_size = 1 : i64} {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// Not the ZeRO form.
// expected-error@+1 {{zero-offload works on the ZeRO form's @train_step (zero.role = "train_step"): run zero-partition first}}
module {
  func.func @optimizer(%w: tensor<4xf32> {zero.param = "w"}) -> tensor<4xf32> attributes {zero.role = "optimizer"} {
    return %w : tensor<4xf32>
  }
}
