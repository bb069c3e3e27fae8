// RUN: rm -f %t.json
// RUN: zero-opt %s --zero-schedule="timeline=%t.json remarks=true link-gbps=1 link-latency-us=5" -mlir-print-op-on-diagnostic=0 -o /dev/null 2>&1 | FileCheck %s
// RUN: %python %S/Inputs/check_trace.py %t.json 2
// The predicted step time (as a remark) and the predicted timeline (Chrome
// trace-event JSON: one compute and one communication track, a complete
// event per collective with its bytes).

// CHECK: remark: zero-schedule: predicted step {{[0-9.]+}} ms with blocking collectives, {{[0-9.]+}} ms scheduled

shard.grid @g(shape = 2)

func.func @step(%w: tensor<64xf32>, %x: tensor<256x256xf32>, %b: tensor<16x8xf32>)
    -> (tensor<256x256xf32>, tensor<16x16xf32>, tensor<4096xf32>) {
  %e = tensor.empty() : tensor<256x256xf32>
  %m = linalg.matmul ins(%x, %x : tensor<256x256xf32>, tensor<256x256xf32>)
      outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %g = shard.all_gather %w on @g grid_axes = [0] gather_axis = 0
      : tensor<64xf32> -> tensor<128xf32>
  %r = tensor.expand_shape %g [[0, 1]] output_shape [8, 16]
      : tensor<128xf32> into tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<16x16xf32>
  %o = linalg.matmul ins(%b, %r : tensor<16x8xf32>, tensor<8x16xf32>)
      outs(%e2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %sl = tensor.extract_slice %m[0, 0] [32, 256] [1, 1] : tensor<256x256xf32> to tensor<32x256xf32>
  %c = tensor.collapse_shape %sl [[0, 1]] : tensor<32x256xf32> into tensor<8192xf32>
  %rs = shard.reduce_scatter %c on @g grid_axes = [0] scatter_axis = 0
      : tensor<8192xf32> -> tensor<4096xf32>
  return %m, %o, %rs : tensor<256x256xf32>, tensor<16x16xf32>, tensor<4096xf32>
}
