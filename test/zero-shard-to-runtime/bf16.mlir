// RUN: zero-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --zero-shard-to-runtime | FileCheck %s

// bf16 collectives (a mixed-precision step's gradients and parameters) call
// the runtime's _bf16 entry points: bf16 on the wire, sums accumulated in
// f32 (runtime.h). A bf16 scalar has no by-value entry point: it goes as a
// tensor all-reduce of one element.
// CHECK-LABEL: func.func @bf16(
// CHECK:         %[[C4:.*]] = arith.constant 4 : i64
// CHECK:         call @zrt_all_gather_bf16(%{{.*}}, %{{.*}}, %[[C4]]) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK:         call @zrt_reduce_scatter_sum_bf16(
// CHECK:         call @zrt_all_reduce_sum_bf16(
// CHECK:         call @zrt_all_reduce_max_bf16(
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i64
// CHECK:         call @zrt_all_reduce_sum_bf16(%{{.*}}, %{{.*}}, %[[ONE]])
// CHECK-NOT:     zrt_all_reduce_scalar
shard.grid @g(shape = 2)
func.func @bf16(%a: tensor<4xbf16>, %b: tensor<8xbf16>, %l: tensor<bf16>)
    -> (tensor<8xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<bf16>) {
  %g = shard.all_gather %a on @g grid_axes = [0] gather_axis = 0 : tensor<4xbf16> -> tensor<8xbf16>
  %s = shard.reduce_scatter %b on @g grid_axes = [0] scatter_axis = 0 : tensor<8xbf16> -> tensor<4xbf16>
  %r = shard.all_reduce %a on @g grid_axes = [0] : tensor<4xbf16> -> tensor<4xbf16>
  %m = shard.all_reduce %a on @g grid_axes = [0] reduction = max : tensor<4xbf16> -> tensor<4xbf16>
  %t = shard.all_reduce %l on @g grid_axes = [0] : tensor<bf16> -> tensor<bf16>
  return %g, %s, %r, %m, %t : tensor<8xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<bf16>
}
