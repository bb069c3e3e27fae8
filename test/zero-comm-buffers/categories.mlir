// RUN: zero-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --zero-comm-buffers | FileCheck %s

// zero.category on a collective: its result buffer counts to that category,
// and a reduction's input (the full gradient, here computed by a matmul into
// a fresh buffer and viewed 1-D) too. The mark leaves the reduction.
// CHECK-LABEL: func.func @grad(
// CHECK:         %[[FULL:.*]] = memref.alloc() {alignment = 64 : i64, zero.category = "grads"} : memref<4x2xf32>
// CHECK:         linalg.matmul {{.*}} outs(%[[FULL]] : memref<4x2xf32>)
// CHECK:         %[[FLAT:.*]] = memref.collapse_shape %[[FULL]]
// CHECK:         memref.alloc() {alignment = 64 : i64, zero.category = "grads"} : memref<4xf32>
// CHECK:         zero.reduce_scatter %[[FLAT]] into %{{.*}} : memref<8xf32> into memref<4xf32>
// CHECK-NOT:     zero.category
// CHECK:         return
shard.grid @g(shape = 2)
func.func @grad(%x: tensor<4x3xf32>, %dy: tensor<3x2xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul ins(%x, %dy : tensor<4x3xf32>, tensor<3x2xf32>) outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
  %flat = tensor.collapse_shape %g [[0, 1]] : tensor<4x2xf32> into tensor<8xf32>
  %s = shard.reduce_scatter %flat on @g grid_axes = [0] scatter_axis = 0 {zero.category = "grads"} : tensor<8xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// An all-gather marks only its result: its input is a shard the caller owns.
// CHECK-LABEL: func.func @gather(
// CHECK-SAME:    %[[W:.*]]: memref<4xf32>)
// CHECK:         memref.alloc() {alignment = 64 : i64, zero.category = "params"} : memref<8xf32>
// CHECK:         zero.all_gather %[[W]]
func.func @gather(%w: tensor<4xf32>) -> tensor<8xf32> {
  %a = shard.all_gather %w on @g grid_axes = [0] gather_axis = 0 {zero.category = "params"} : tensor<4xf32> -> tensor<8xf32>
  return %a : tensor<8xf32>
}

// Without the mark, buffers count as activations (no attribute).
// CHECK-LABEL: func.func @plain(
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<8xf32>
func.func @plain(%w: tensor<4xf32>) -> tensor<8xf32> {
  %a = shard.all_gather %w on @g grid_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<8xf32>
  return %a : tensor<8xf32>
}

// zero.category on a linalg op that writes a buffer (zero-partition's
// rounding of an f32 gradient accumulator to bf16): its output buffer's
// allocation counts to that category, and the mark leaves the op.
// CHECK-LABEL: func.func @rounded(
// CHECK:         %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64, zero.category = "grads"} : memref<8xbf16>
// CHECK:         linalg.generic {{.*}} outs(%[[OUT]] : memref<8xbf16>)
// CHECK-NOT:     zero.category
// CHECK:         return
func.func @rounded(%acc: tensor<8xf32>) -> tensor<8xbf16> {
  %e = tensor.empty() : tensor<8xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%acc : tensor<8xf32>) outs(%e : tensor<8xbf16>) attrs = {zero.category = "grads"} {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8xbf16>
  return %r : tensor<8xbf16>
}
