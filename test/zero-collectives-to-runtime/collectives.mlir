// RUN: zero-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUF
// RUN: zero-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --zero-collectives-to-runtime | FileCheck %s

// Each collective bufferizes into a fresh 64-byte aligned buffer and its
// typed form on buffers, which the analyses read.
// BUF-LABEL: func.func @collectives(
// BUF:         shard.process_linear_index
// BUF:         %[[G:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// BUF:         zero.all_gather %{{.*}} into %[[G]] : memref<4xf32> into memref<8xf32>
// BUF:         %[[S:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf64>
// BUF:         zero.reduce_scatter %{{.*}} into %[[S]] : memref<8xf64> into memref<4xf64>
// BUF:         zero.all_reduce %{{.*}} into %{{.*}} reduction = {{ *}}max : memref<4xf32> into memref<4xf32>
// BUF:         zero.all_reduce %{{.*}} into %{{.*}} : memref<f32> into memref<f32>

// zero-collectives-to-runtime: one entry point on pointers and an element
// count, its descriptor (runtime.h, zrt_make_collective_op: kind | reduction
// << 8 | element type << 16) a constant; a scalar by value; the rank from
// the runtime; the grid is gone.
// CHECK-NOT:   shard.
// CHECK-LABEL: func.func @collectives(
// CHECK-SAME:    %[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<8xf64>, %[[L:.*]]: memref<f32>)
// CHECK:         %[[RANK:.*]] = call @zrt_world_rank() : () -> i32
// CHECK:         arith.index_cast %[[RANK]] : i32 to index
// CHECK:         %[[G:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// all_gather (2), none (0), f32 (0)
// CHECK:         %[[GATHER:.*]] = arith.constant 2 : i32
// CHECK:         %[[C8:.*]] = arith.constant 4 : i64
// CHECK:         call @zrt_collective_run(%[[GATHER]], %{{.*}}, %{{.*}}, %[[C8]]) : (i32, !llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<4xf64>
// reduce_scatter (1), sum (1), f64 (1)
// CHECK:         %[[SCATTER:.*]] = arith.constant 65793 : i32
// CHECK:         %[[C4:.*]] = arith.constant 4 : i64
// CHECK:         call @zrt_collective_run(%[[SCATTER]], %{{.*}}, %{{.*}}, %[[C4]])
// all_reduce (0), max (2), f32 (0)
// CHECK:         %[[MAX:.*]] = arith.constant 512 : i32
// CHECK:         call @zrt_collective_run(%[[MAX]],
// scalar_all_reduce (3), sum (1), f32 (0)
// CHECK:         %[[SCALAR:.*]] = arith.constant 259 : i32
// CHECK:         %[[V:.*]] = memref.load %[[L]][] : memref<f32>
// CHECK:         %[[W:.*]] = arith.extf %[[V]] : f32 to f64
// CHECK:         %[[R:.*]] = call @zrt_collective_scalar(%[[SCALAR]], %[[W]]) : (i32, f64) -> f64
// CHECK:         %[[S:.*]] = arith.truncf %[[R]] : f64 to f32
// CHECK:         memref.store %[[S]], %{{.*}}[] : memref<f32>
// CHECK-DAG:   func.func private @zrt_collective_run(i32, !llvm.ptr, !llvm.ptr, i64)
// CHECK-DAG:   func.func private @zrt_collective_scalar(i32, f64) -> f64
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
