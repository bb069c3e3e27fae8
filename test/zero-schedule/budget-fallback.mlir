// RUN: zero-opt %s --zero-schedule="memory-budget=90112" -verify-diagnostics | FileCheck %s
// A step no schedule fits: the reduce-scatter's consumer (a sum that
// shrinks the 8 KiB shard to 64 bytes) sinks below the second matmul, so
// the shard is live next to that matmul's 16 KiB temporary whichever way
// the wait moves. The blocking step fits its 90112 bytes exactly: the
// function keeps its blocking collective, with a warning.

// CHECK-LABEL: func.func @fallback
// CHECK: linalg.matmul ins(%arg0, %arg1
// CHECK: shard.reduce_scatter
// CHECK-NOT: zero.{{.*}}_start
// CHECK: linalg.matmul ins(%arg2, %arg3
shard.grid @g(shape = 2)

// expected-warning@+1 {{zero-schedule: no schedule of @fallback found within memory-budget=90112 (the scheduled step peaks at 91200 bytes); its collectives stay blocking}}
func.func @fallback(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>,
                    %u: tensor<64x64xf32>, %v: tensor<64x64xf32>)
    -> (tensor<16xf32>, tensor<16x16xf32>) {
  %e = tensor.empty() : tensor<64x64xf32>
  %grad = linalg.matmul ins(%x, %y : tensor<64x64xf32>, tensor<64x64xf32>)
      outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = tensor.collapse_shape %grad [[0, 1]]
      : tensor<64x64xf32> into tensor<4096xf32>
  %rs = shard.reduce_scatter %c on @g grid_axes = [0] scatter_axis = 0
      {zero.category = "grads"} : tensor<4096xf32> -> tensor<2048xf32>
  %rs2 = tensor.expand_shape %rs [[0, 1]] output_shape [16, 128]
      : tensor<2048xf32> into tensor<16x128xf32>
  %zero = arith.constant 0.000000e+00 : f32
  %e3 = tensor.empty() : tensor<16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e3 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d0)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%rs2 : tensor<16x128xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %e1 = tensor.empty() : tensor<64x64xf32>
  %big = linalg.matmul ins(%u, %v : tensor<64x64xf32>, tensor<64x64xf32>)
      outs(%e1 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %s = tensor.extract_slice %big[0, 0] [16, 16] [1, 1]
      : tensor<64x64xf32> to tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<16x16xf32>
  %small = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                            affine_map<(d0, d1) -> (d0, d1)>],
                           iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x16xf32>) outs(%e2 : tensor<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %one = arith.constant 1.000000e+00 : f32
    %r = arith.addf %in, %one : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  return %sum, %small : tensor<16xf32>, tensor<16x16xf32>
}
