// RUN: zero-opt %s --zero-schedule="memory-budget=49920 remarks" 2>&1 | FileCheck %s
// RUN: zero-opt %s --zero-schedule="memory-budget=1000000" | FileCheck %s --check-prefix=LOOSE
// zero-schedule's memory budget on a hand-written step. Without a budget
// (or with a loose one) the gather is prefetched above the 64x64 matmul,
// so its 512-byte buffer is live next to the matmul's 16 KiB temporary.
// The blocking step peaks at 49920 bytes (budget-invalid.mlir has the
// error one byte lower): with that budget the prefetch is dropped (the
// gather starts after the peak, which leaves it right before its wait),
// and the predicted peak is exactly the budget.

// CHECK: remark: zero-schedule: {{.*}}; predicted peak 49920 bytes within memory-budget=49920 (1 collectives moved for it)
// CHECK-LABEL: func.func @budget
// CHECK: linalg.matmul ins(%arg1, %arg2
// CHECK: linalg.generic
// CHECK: %[[P:.*]], %[[T:.*]] = zero.all_gather_start %arg0
// CHECK-NEXT: zero.wait %[[T]], %[[P]]
// LOOSE-LABEL: func.func @budget
// LOOSE-NEXT: zero.all_gather_start %arg0
// LOOSE: linalg.matmul ins(%arg1, %arg2
// LOOSE: zero.wait
shard.grid @g(shape = 2)

func.func @budget(%w: tensor<64xf32>, %x: tensor<64x64xf32>,
                  %y: tensor<64x64xf32>) -> tensor<16x16xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %m = linalg.matmul ins(%x, %y : tensor<64x64xf32>, tensor<64x64xf32>)
      outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %s = tensor.extract_slice %m[0, 0] [16, 8] [1, 1]
      : tensor<64x64xf32> to tensor<16x8xf32>
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
