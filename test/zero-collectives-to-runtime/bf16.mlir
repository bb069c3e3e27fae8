// RUN: zero-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --zero-collectives-to-runtime | FileCheck %s

// bf16 collectives (a mixed-precision step's gradients and parameters) have
// the runtime's bf16 element type (2 << 16 in the descriptor): bf16 on the
// wire, sums accumulated in f32 (runtime.h). A bf16 scalar has no by-value
// form: it goes as an all-reduce of one element.
// CHECK-LABEL: func.func @bf16(
// all_gather (2), none, bf16 (2 << 16)
// CHECK:         %[[GATHER:.*]] = arith.constant 131074 : i32
// CHECK:         %[[C4:.*]] = arith.constant 4 : i64
// CHECK:         call @zrt_collective_run(%[[GATHER]], %{{.*}}, %{{.*}}, %[[C4]]) : (i32, !llvm.ptr, !llvm.ptr, i64) -> ()
// reduce_scatter (1), sum (1 << 8), bf16
// CHECK:         arith.constant 131329 : i32
// CHECK:         call @zrt_collective_run(
// all_reduce (0), sum (1 << 8), bf16
// CHECK:         arith.constant 131328 : i32
// CHECK:         call @zrt_collective_run(
// all_reduce (0), max (2 << 8), bf16
// CHECK:         arith.constant 131584 : i32
// CHECK:         call @zrt_collective_run(
// CHECK:         %[[SUM:.*]] = arith.constant 131328 : i32
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i64
// CHECK:         call @zrt_collective_run(%[[SUM]], %{{.*}}, %{{.*}}, %[[ONE]])
// CHECK-NOT:     zrt_collective_scalar
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
