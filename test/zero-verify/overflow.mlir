// RUN: zero-opt %s -split-input-file -verify-diagnostics --zero-verify

// Tensors whose element count or byte size does not fit int64 are refused
// where they appear, naming the type; later passes and the memory report
// would otherwise compute wrapped sizes.

// A parameter whose element count overflows (2^62 * 4 = 2^64 elements).
func.func @fb(
    // expected-error@+1 {{argument #0 of type 'tensor<4611686018427387904x4xf32>' is too large: its element count overflows 64 bits}}
    %w: tensor<4611686018427387904x4xf32> {zero.param = "w"})
    -> (tensor<f32> {zero.loss}, tensor<4611686018427387904x4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4611686018427387904x4xf32>
}
func.func @opt(%w: tensor<4611686018427387904x4xf32> {zero.param = "w"}, %g: tensor<4611686018427387904x4xf32> {zero.grad = "w"}) -> (tensor<4611686018427387904x4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4611686018427387904x4xf32>
}

// -----

// A parameter whose element count fits but whose byte size (2^62 f32 =
// 2^64 bytes) does not.
func.func @fb(
    // expected-error@+1 {{argument #0 of type 'tensor<4611686018427387904xf32>' is too large: its byte size overflows 64 bits}}
    %w: tensor<4611686018427387904xf32> {zero.param = "w"})
    -> (tensor<f32> {zero.loss}, tensor<4611686018427387904xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4611686018427387904xf32>
}
func.func @opt(%w: tensor<4611686018427387904xf32> {zero.param = "w"}, %g: tensor<4611686018427387904xf32> {zero.grad = "w"}) -> (tensor<4611686018427387904xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4611686018427387904xf32>
}

// -----

// An intermediate tensor of forward_backward that is too large.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  // expected-error@+1 {{'tensor.empty' op result #0 of type 'tensor<3000000000x3000000000xf64>' is too large: its byte size overflows 64 bits}}
  %big = tensor.empty() : tensor<3000000000x3000000000xf64>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  return %w : tensor<4xf32>
}

// -----

// A batch input that is too large.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"},
              // expected-error@+1 {{argument #1 of type 'tensor<9223372036854775807x2xi32>' is too large: its element count overflows 64 bits}}
              %x: tensor<9223372036854775807x2xi32> {zero.batch = "tokens"})
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

// A too-large tensor in the optimizer.
func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  // expected-error@+1 {{'tensor.empty' op result #0 of type 'tensor<4611686018427387904xbf16>' is too large: its byte size overflows 64 bits}}
  %big = tensor.empty() : tensor<4611686018427387904xbf16>
  return %w : tensor<4xf32>
}
