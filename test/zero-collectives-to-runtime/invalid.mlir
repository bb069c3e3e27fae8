// RUN: zero-opt %s -split-input-file -verify-diagnostics --one-shot-bufferize="bufferize-function-boundaries" --zero-collectives-to-runtime

shard.grid @g(shape = 2)
func.func @int_gather(%a: tensor<4xi32>) -> tensor<8xi32> {
  // expected-error@+2 {{has element type 'i32'; the runtime's collectives take f32, f64 and bf16}}
  // expected-error@+1 {{failed to bufferize op}}
  %g = shard.all_gather %a on @g grid_axes = [0] gather_axis = 0 : tensor<4xi32> -> tensor<8xi32>
  return %g : tensor<8xi32>
}

// -----

shard.grid @g(shape = 2)
func.func @gather_2d(%a: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // expected-error@+2 {{lowers to the runtime only as a 1-D gather along axis 0}}
  // expected-error@+1 {{failed to bufferize op}}
  %g = shard.all_gather %a on @g grid_axes = [0] gather_axis = 1 : tensor<2x4xf32> -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

// Hand-written typed collectives the runtime cannot run.
func.func @int_gather_on_buffers(%a: memref<4xi32>, %b: memref<8xi32>) {
  // expected-error@+2 {{has element type 'i32'; the runtime's collectives take f32, f64 and bf16}}
  // expected-error@+1 {{failed to legalize operation 'zero.all_gather'}}
  zero.all_gather %a into %b : memref<4xi32> into memref<8xi32>
  return
}
