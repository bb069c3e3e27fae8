// RUN: zero-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --zero-shard-to-runtime | FileCheck %s

// Each collective bufferizes into a fresh 64-byte aligned buffer and a call
// of the runtime's collective on pointers and an element count; the rank
// comes from the runtime; the grid is gone.
// CHECK-NOT:   shard.
// CHECK-LABEL: func.func @collectives(
// CHECK-SAME:    %[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<8xf64>, %[[L:.*]]: memref<f32>)
// CHECK:         %[[RANK:.*]] = call @zrt_world_rank() : () -> i32
// CHECK:         arith.index_cast %[[RANK]] : i32 to index
// CHECK:         %[[G:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// CHECK:         %[[C8:.*]] = arith.constant 4 : i64
// CHECK:         call @zrt_all_gather_f32(%{{.*}}, %{{.*}}, %[[C8]]) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<4xf64>
// CHECK:         %[[C4:.*]] = arith.constant 4 : i64
// CHECK:         call @zrt_reduce_scatter_sum_f64(%{{.*}}, %{{.*}}, %[[C4]])
// CHECK:         call @zrt_all_reduce_max_f32(
// CHECK:         %[[V:.*]] = memref.load %[[L]][] : memref<f32>
// CHECK:         %[[S:.*]] = call @zrt_all_reduce_scalar_sum_f32(%[[V]]) : (f32) -> f32
// CHECK:         memref.store %[[S]], %{{.*}}[] : memref<f32>
// CHECK-DAG:   func.func private @zrt_all_gather_f32(!llvm.ptr, !llvm.ptr, i64)
// CHECK-DAG:   func.func private @zrt_world_rank() -> i32
shard.grid @g(shape = 2)
func.func @collectives(%a: tensor<4xf32>, %b: tensor<8xf64>, %l: tensor<f32>)
    -> (index, tensor<8xf32>, tensor<4xf64>, tensor<4xf32>, tensor<f32>) {
  %r = shard.process_linear_index on @g : index
  %g = shard.all_gather %a on @g grid_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<8xf32>
  %s = shard.reduce_scatter %b on @g grid_axes = [0] scatter_axis = 0 : tensor<8xf64> -> tensor<4xf64>
  %m = shard.all_reduce %a on @g grid_axes = [0] reduction = max : tensor<4xf32> -> tensor<4xf32>
  %t = shard.all_reduce %l on @g grid_axes = [0] : tensor<f32> -> tensor<f32>
  return %r, %g, %s, %m, %t : index, tensor<8xf32>, tensor<4xf64>, tensor<4xf32>, tensor<f32>
}
