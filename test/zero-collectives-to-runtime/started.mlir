// RUN: zero-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -split-input-file | FileCheck %s --check-prefix=BUF
// RUN: zero-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --zero-collectives-to-runtime -split-input-file | FileCheck %s

// Started collectives on tensors bufferize into their memref forms: the
// all-gather and the reduce-scatter write a fresh buffer allocated at the
// start, the wait keeps the input and that buffer (so nothing frees them
// while the collective runs), and the result is that buffer, no copy.
// The lowering calls zrt_collective_start with the descriptor, pointers and
// element counts; a token is the i64 request it returns, completed by zrt_wait.
// BUF-LABEL: func.func @gather_scatter(
// BUF-SAME:    %[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<8xf64>)
// BUF:         %[[G:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// BUF:         %[[TG:.*]] = zero.all_gather_start %[[A]] into %[[G]] {zero.category = "params"} : memref<4xf32> into memref<8xf32>
// BUF:         %[[S:.*]] = memref.alloc() {{.*}} : memref<4xf64>
// BUF:         %[[TS:.*]] = zero.reduce_scatter_start %[[B]] into %[[S]] {zero.category = "grads"} : memref<8xf64> into memref<4xf64>
// BUF:         zero.wait %[[TG]] keep(%[[A]], %[[G]] : memref<4xf32>, memref<8xf32>)
// BUF:         zero.wait %[[TS]] keep(%[[B]], %[[S]] : memref<8xf64>, memref<4xf64>)
// BUF-NOT:     memref.copy
// BUF:         return %[[G]], %[[S]]
// CHECK-LABEL: func.func @gather_scatter(
// CHECK:         %[[GATHER:.*]] = arith.constant 2 : i32
// CHECK:         %[[C4:.*]] = arith.constant 4 : i64
// CHECK:         %[[TG:.*]] = call @zrt_collective_start(%[[GATHER]], %{{.*}}, %{{.*}}, %[[C4]]) : (i32, !llvm.ptr, !llvm.ptr, i64) -> i64
// CHECK:         %[[SCATTER:.*]] = arith.constant 65793 : i32
// CHECK:         %[[TS:.*]] = call @zrt_collective_start(%[[SCATTER]], %{{.*}}, %{{.*}}, %{{.*}}) : (i32, !llvm.ptr, !llvm.ptr, i64) -> i64
// CHECK:         call @zrt_wait(%[[TG]]) : (i64) -> ()
// CHECK:         call @zrt_wait(%[[TS]]) : (i64) -> ()
// CHECK-NOT:     zero.
// CHECK:         return
shard.grid @g(shape = 2)
func.func @gather_scatter(%a: tensor<4xf32>, %b: tensor<8xf64>)
    -> (tensor<8xf32>, tensor<4xf64>) {
  %pg, %tg = zero.all_gather_start %a {zero.category = "params"} : tensor<4xf32> -> tensor<8xf32>
  %ps, %ts = zero.reduce_scatter_start %b {zero.category = "grads"} : tensor<8xf64> -> tensor<4xf64>
  %g = zero.wait %tg, %pg : tensor<8xf32> keep(%a : tensor<4xf32>) -> tensor<8xf32>
  %s = zero.wait %ts, %ps : tensor<4xf64> keep(%b : tensor<8xf64>) -> tensor<4xf64>
  return %g, %s : tensor<8xf32>, tensor<4xf64>
}

// -----

// The all-reduce works in place when its input (here a gradient computed
// in the step) is not read after it: the start writes the input's own
// buffer (output = input), with no buffer or copy of its own; as
// zero-schedule writes it, its wait keeps nothing (the input is the
// pending result).
// BUF-LABEL: func.func @all_reduce_in_place(
// BUF:         %[[Y:.*]] = memref.alloc() {{.*}} : memref<16xf32>
// BUF:         linalg.generic {{.*}} outs(%[[Y]] : memref<16xf32>)
// BUF-NOT:     memref.alloc
// BUF-NOT:     memref.copy
// BUF:         %[[T:.*]] = zero.all_reduce_start %[[Y]] into %[[Y]] {zero.category = "grads"} : memref<16xf32> into memref<16xf32>
// BUF:         zero.wait %[[T]] keep(%[[Y]], %[[Y]] :
// BUF:         return %[[Y]]
// CHECK-LABEL: func.func @all_reduce_in_place(
// CHECK:         %[[SUM:.*]] = arith.constant 256 : i32
// CHECK:         %[[T:.*]] = call @zrt_collective_start(%[[SUM]], %{{.*}}, %{{.*}}, %{{.*}}) : (i32, !llvm.ptr, !llvm.ptr, i64) -> i64
// CHECK:         call @zrt_wait(%[[T]])
func.func @all_reduce_in_place(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %p, %t = zero.all_reduce_start %y {zero.category = "grads"} : tensor<16xf32> -> tensor<16xf32>
  %r = zero.wait %t, %p : tensor<16xf32> -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// The gradient is also read after the start: the all-reduce cannot
// overwrite it, and works on a copy.
// BUF-LABEL: func.func @all_reduce_input_read(
// BUF:         %[[Y:.*]] = memref.alloc() {{.*}} : memref<16xf32>
// BUF:         linalg.generic {{.*}} outs(%[[Y]] : memref<16xf32>)
// BUF:         %[[R:.*]] = memref.alloc() {{.*}} : memref<16xf32>
// BUF:         memref.copy %[[Y]], %[[R]]
// BUF:         %[[T:.*]] = zero.all_reduce_start %[[R]] into %[[R]]
// BUF:         memref.copy %[[Y]], %{{.*}}
// BUF:         zero.wait %[[T]]
func.func @all_reduce_input_read(%x: tensor<16xf32>, %o: tensor<16xf32>)
    -> (tensor<16xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %p, %t = zero.all_reduce_start %y {zero.category = "grads"} : tensor<16xf32> -> tensor<16xf32>
  %c = bufferization.materialize_in_destination %y in %o : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %r = zero.wait %t, %p : tensor<16xf32> -> tensor<16xf32>
  return %r, %c : tensor<16xf32>, tensor<16xf32>
}
