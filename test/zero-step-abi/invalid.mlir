// RUN: zero-opt %s -split-input-file -verify-diagnostics --zero-step-abi

// A step function that still returns tensors has not been bufferized.
module {
  // expected-error@+1 {{is not a bufferized step function (it returns values); run zero-bufferize-step before zero-step-abi}}
  func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss})
      attributes {zero.role = "forward_backward"} {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

// A dynamic shape cannot be passed as a plain buffer.
module {
  // expected-error@+1 {{argument #1: is 'memref<?xf32>'; the step ABI passes contiguous buffers of static shape only}}
  func.func @fb(%w: memref<4xf32> {zero.param = "w"}, %x: memref<?xf32> {zero.batch = "x"},
                %loss: memref<f32> {zero.loss}) attributes {zero.role = "forward_backward"} {
    return
  }
}

// -----

// A buffer marked as a shard whose size is not the manifest's shard.
module {
  // expected-error@+1 {{argument #0: holds 4 elements of 'w'; the shard has 2}}
  func.func @train_step(%w: memref<4xf32> {zero.param = "w", zero.sharded}, %loss: memref<f32> {zero.loss})
      attributes {zero.role = "train_step", zero.stage = 3 : i64, zero.world_size = 2 : i64,
                  zero.manifest = [#zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 2, sharded = params|grads|states>]} {
    return
  }
}

// -----

// No step function writes a loss.
// expected-error@+1 {{zero-step-abi: no step function writes a loss}}
module {
  func.func @fb(%w: memref<4xf32> {zero.param = "w"}) attributes {zero.role = "forward_backward"} {
    return
  }
}

// -----

// No step function at all.
// expected-error@+1 {{zero-step-abi: no function with a zero.role}}
module {
  func.func @f() {
    return
  }
}

// -----

// Only parameters, gradients and states have shards.
module {
  // expected-error@+1 {{argument #1: is marked zero.sharded but is a batch}}
  func.func @fb(%w: memref<4xf32> {zero.param = "w"}, %x: memref<4xf32> {zero.batch = "x", zero.sharded},
                %loss: memref<f32> {zero.loss}) attributes {zero.role = "forward_backward"} {
    return
  }
}

// -----

// A scalar argument with a role other than zero.hyper (found by the
// mutation tester: it used to crash).
module {
  // expected-error@+1 {{argument #1: is the scalar 'f32'; only hyper-parameters are passed as scalars}}
  func.func @opt(%w: memref<4xf32> {zero.param = "w"}, %mu: f32 {zero.batch = "momentum"},
                 %loss: memref<f32> {zero.loss}) attributes {zero.role = "optimizer"} {
    return
  }
}

// -----

// A scalar hyper-parameter that also claims a buffer role (zero.state here;
// found by the mutation tester: it used to crash).
module {
  func.func @fb(%w: memref<4xf32> {zero.param = "w"}, %loss: memref<f32> {zero.loss})
      attributes {zero.role = "forward_backward"} {
    return
  }
  // expected-error@+1 {{argument #2: is the scalar 'f32'; only hyper-parameters are passed as scalars, and with no other role}}
  func.func @opt(%w: memref<4xf32> {zero.param = "w"}, %g: memref<4xf32> {zero.grad = "w"},
                 %lr: f32 {zero.hyper = "lr", zero.state = {param = "w", kind = "momentum"}})
      attributes {zero.role = "optimizer"} {
    return
  }
}
