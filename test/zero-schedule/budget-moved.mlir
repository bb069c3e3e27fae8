// RUN: zero-opt %s --zero-schedule="memory-budget=50500 bucket-bytes=0 remarks" -mlir-print-op-on-diagnostic=0 2>&1 | FileCheck %s
// RUN: zero-opt %s --zero-schedule="memory-budget=1000000 bucket-bytes=0" | FileCheck %s --check-prefix=LOOSE
// A prefetch moved later under a budget, but still a prefetch. Two gathers
// (no buckets): %c's is used by the middle matmul, %w's by the last.
// Without a budget both start at the top, live next to the 64x64 matmul's
// 16 KiB result at the peak (50816 bytes). At 50500 bytes the gather in
// flight there whose wait is latest, %w's, starts after the peak's next
// event (the wait of %c's gather) instead: it still hides behind the
// middle matmul, and the predicted peak falls to 50304 bytes. (budget.mlir
// has the case where nothing is left between: the prefetch is dropped.)

// CHECK: remark: zero-schedule: {{.*}}; predicted peak 50304 bytes within memory-budget=50500 (1 collectives moved for it)
// CHECK-LABEL: func.func @moved
// CHECK:       %[[PC:.*]], %[[TC:.*]] = zero.all_gather_start %arg3
// CHECK:       linalg.matmul ins(%arg1, %arg2
// CHECK:       linalg.generic
// CHECK:       zero.wait %[[TC]], %[[PC]]
// CHECK-NEXT:  %[[PW:.*]], %[[TW:.*]] = zero.all_gather_start %arg0
// CHECK-NOT:   zero.wait
// CHECK:       linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x8xf32>, tensor<8x8xf32>)
// CHECK-NEXT:  zero.wait %[[TW]], %[[PW]]
// LOOSE-LABEL: func.func @moved
// LOOSE-NEXT:  zero.all_gather_start %arg3
// LOOSE-NEXT:  zero.all_gather_start %arg0
// LOOSE:       linalg.matmul ins(%arg1, %arg2
shard.grid @g(shape = 2)

func.func @moved(%w: tensor<64xf32>, %x: tensor<64x64xf32>,
                  %y: tensor<64x64xf32>, %c: tensor<32xf32>) -> tensor<16x16xf32> {
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
  %g2 = shard.all_gather %c on @g grid_axes = [0] gather_axis = 0
      {zero.category = "params"} : tensor<32xf32> -> tensor<64xf32>
  %c2 = tensor.expand_shape %g2 [[0, 1]] output_shape [8, 8]
      : tensor<64xf32> into tensor<8x8xf32>
  %e3 = tensor.empty() : tensor<16x8xf32>
  %a2 = linalg.matmul ins(%a, %c2 : tensor<16x8xf32>, tensor<8x8xf32>)
      outs(%e3 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %g = shard.all_gather %w on @g grid_axes = [0] gather_axis = 0
      {zero.category = "params"} : tensor<64xf32> -> tensor<128xf32>
  %r = tensor.expand_shape %g [[0, 1]] output_shape [8, 16]
      : tensor<128xf32> into tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<16x16xf32>
  %o = linalg.matmul ins(%a2, %r : tensor<16x8xf32>, tensor<8x16xf32>)
      outs(%e2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %o : tensor<16x16xf32>
}
