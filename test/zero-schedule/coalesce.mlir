// RUN: zero-opt %s -split-input-file --zero-schedule | FileCheck %s
// RUN: zero-opt %s -split-input-file --zero-schedule=coalesce-scalars=false | FileCheck %s --check-prefix=OFF
// Runs of scalar sum all-reduces (global-norm clipping's per-parameter
// squared norms) become one all-reduce of a vector, which zero-schedule
// then starts and waits for like any other.

shard.grid @g(shape = 2)

// Three norms, summed as they arrive: the sums move below the merged
// all-reduce, which reads the three inputs from one tensor.from_elements.
// CHECK-LABEL: func.func @norms
// CHECK-DAG: %[[A:.*]] = tensor.extract %arg0[]
// CHECK-DAG: %[[B:.*]] = tensor.extract %arg1[]
// CHECK-DAG: %[[C:.*]] = tensor.extract %arg2[]
// CHECK: %[[V:.*]] = tensor.from_elements %[[A]], %[[B]], %[[C]] : tensor<3xf32>
// CHECK: %[[P:.*]], %[[T:.*]] = zero.all_reduce_start %[[V]] : tensor<3xf32> -> tensor<3xf32>
// CHECK: %[[R:.*]] = zero.wait %[[T]], %[[P]] : tensor<3xf32> -> tensor<3xf32>
// CHECK: tensor.extract %[[R]][%c0
// CHECK: arith.addf
// CHECK: arith.addf
// CHECK-NOT: shard.all_reduce
// OFF-LABEL: func.func @norms
// OFF-NOT: from_elements
// OFF-COUNT-3: zero.all_reduce_start {{.*}} : tensor<1xf32> -> tensor<1xf32>
func.func @norms(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>) -> f32 {
  %ra = shard.all_reduce %a on @g grid_axes = [0] : tensor<f32> -> tensor<f32>
  %xa = tensor.extract %ra[] : tensor<f32>
  %rb = shard.all_reduce %b on @g grid_axes = [0] : tensor<f32> -> tensor<f32>
  %xb = tensor.extract %rb[] : tensor<f32>
  %s1 = arith.addf %xa, %xb : f32
  %rc = shard.all_reduce %c on @g grid_axes = [0] : tensor<f32> -> tensor<f32>
  %xc = tensor.extract %rc[] : tensor<f32>
  %s2 = arith.addf %s1, %xc : f32
  return %s2 : f32
}

// -----

shard.grid @g(shape = 2)

// The second input depends on the first result: no run forms, each is
// started on its own (a vector of one element) and the second waits for
// the first.
// CHECK-LABEL: func.func @dependent
// CHECK-NOT: from_elements
// CHECK: zero.all_reduce_start {{.*}} : tensor<1xf32> -> tensor<1xf32>
// CHECK: zero.wait
// CHECK: zero.all_reduce_start {{.*}} : tensor<1xf32> -> tensor<1xf32>
// CHECK: zero.wait
// CHECK-NOT: from_elements
func.func @dependent(%a: tensor<f32>) -> tensor<f32> {
  %ra = shard.all_reduce %a on @g grid_axes = [0] : tensor<f32> -> tensor<f32>
  %rb = shard.all_reduce %ra on @g grid_axes = [0] : tensor<f32> -> tensor<f32>
  return %rb : tensor<f32>
}

// -----

shard.grid @g(shape = 2)

// A max (the clipping of another norm kind) does not join sums: the sum
// is started on its own (at the top: its input is an argument) and the max
// stays blocking.
// CHECK-LABEL: func.func @kinds
// CHECK: tensor.expand_shape %arg1
// CHECK: zero.all_reduce_start
// CHECK: shard.all_reduce %arg0 {{.*}}reduction = max
// CHECK-NOT: from_elements
func.func @kinds(%a: tensor<f32>, %b: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %ra = shard.all_reduce %a on @g grid_axes = [0] reduction = max : tensor<f32> -> tensor<f32>
  %rb = shard.all_reduce %b on @g grid_axes = [0] : tensor<f32> -> tensor<f32>
  return %ra, %rb : tensor<f32>, tensor<f32>
}
