// RUN: zero-opt %s -split-input-file --zero-schedule="memory-budget=49919" -verify-diagnostics
// RUN: not zero-opt %s --zero-schedule="memory-budget=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not zero-opt %s --zero-schedule="memory-budget=1 bufferize-pipeline=no-such-pass" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE
// A step over the budget even with every collective blocking is one
// located error at the op where its peak is, saying by how much.

// NEGATIVE: error: zero-schedule: memory-budget must be >= 0 bytes (0: none), got -1
// PIPELINE: error: zero-schedule: bufferize-pipeline 'no-such-pass' does not parse: {{.*}}no-such-pass

shard.grid @g(shape = 2)

func.func @budget(%w: tensor<64xf32>, %x: tensor<64x64xf32>,
                  %y: tensor<64x64xf32>) -> tensor<16x16xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %m = linalg.matmul ins(%x, %y : tensor<64x64xf32>, tensor<64x64xf32>)
      outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %s = tensor.extract_slice %m[0, 0] [16, 8] [1, 1]
      : tensor<64x64xf32> to tensor<16x8xf32>
  // expected-error@+1 {{zero-schedule: @budget needs 49920 bytes per rank at its peak here even with every collective blocking, 1 bytes over memory-budget=49919}}
  %e1 = tensor.empty() : tensor<16x8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x8xf32>) outs(%e1 : tensor<16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %one = arith.constant 1.000000e+00 : f32
    %v = arith.addf %in, %one : f32
    linalg.yield %v : f32
  } -> tensor<16x8xf32>
  %g = shard.all_gather %w on @g grid_axes = [0] gather_axis = 0
      {zero.category = "params"} : tensor<64xf32> -> tensor<128xf32>
  %r = tensor.expand_shape %g [[0, 1]] output_shape [8, 16]
      : tensor<128xf32> into tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<16x16xf32>
  %o = linalg.matmul ins(%a, %r : tensor<16x8xf32>, tensor<8x16xf32>)
      outs(%e2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %o : tensor<16x16xf32>
}

// -----

// A buffer the prediction cannot size is a located error.
module {
  shard.grid @g(shape = 2)
  func.func @dynamic(%w: tensor<64xf32>, %n: index) -> tensor<?xf32> {
    %g = shard.all_gather %w on @g grid_axes = [0] gather_axis = 0
        : tensor<64xf32> -> tensor<128xf32>
    // expected-error@+1 {{buffer of type 'memref<?xf32>' has a dynamic shape; the report needs static sizes}}
    %e = tensor.empty(%n) : tensor<?xf32>
    return %e : tensor<?xf32>
  }
}
