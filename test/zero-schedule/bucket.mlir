// RUN: zero-opt %s -split-input-file --zero-schedule="bucket-bytes=64 prefetch=false" | FileCheck %s
// RUN: zero-opt %s -split-input-file --zero-schedule="bucket-bytes=0 prefetch=false" | FileCheck %s --check-prefix=OFF
// bucket-bytes: small collectives of one kind that follow each other merge
// into one of at most bucket-bytes full-size bytes; every element is
// reduced as it would be alone.

shard.grid @g(shape = 2)

// Two gathers of 16 and 8 full-size bytes (a bias and a norm weight) make
// one gather of the concatenated shards; each result is a column block of
// the [2 x 6] gather. The 256-byte gather is larger than the bucket: it ends
// the run, so the last small one is alone.
// CHECK-LABEL: func.func @gathers
// CHECK: %[[C:.*]] = tensor.concat dim(0) %arg0, %arg1 : (tensor<4xf32>, tensor<2xf32>) -> tensor<6xf32>
// CHECK: %[[P:.*]], %[[T:.*]] = zero.all_gather_start %[[C]] : tensor<6xf32> -> tensor<12xf32>
// CHECK: %[[W:.*]] = zero.wait %[[T]], %[[P]] : tensor<12xf32> keep(%[[C]] : tensor<6xf32>) -> tensor<12xf32>
// CHECK: %[[G:.*]] = tensor.expand_shape %[[W]] {{\[}}[0, 1]] output_shape [2, 6] : tensor<12xf32> into tensor<2x6xf32>
// CHECK: %[[A:.*]] = tensor.extract_slice %[[G]][0, 0] [2, 4] [1, 1] : tensor<2x6xf32> to tensor<2x4xf32>
// CHECK: tensor.collapse_shape %[[A]] {{\[}}[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
// CHECK: %[[B:.*]] = tensor.extract_slice %[[G]][0, 4] [2, 2] [1, 1] : tensor<2x6xf32> to tensor<2x2xf32>
// CHECK: tensor.collapse_shape %[[B]] {{\[}}[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
// CHECK: zero.all_gather_start %arg2 : tensor<32xf32> -> tensor<64xf32>
// CHECK: zero.all_gather_start %arg3 : tensor<2xf32> -> tensor<4xf32>
// CHECK-NOT: concat
// OFF-LABEL: func.func @gathers
// OFF-NOT: concat
// OFF-COUNT-4: zero.all_gather_start
func.func @gathers(%a: tensor<4xf32>, %b: tensor<2xf32>, %big: tensor<32xf32>,
                   %c: tensor<2xf32>)
    -> (tensor<8xf32>, tensor<4xf32>, tensor<64xf32>, tensor<4xf32>) {
  %ga = shard.all_gather %a on @g grid_axes = [0] gather_axis = 0
      : tensor<4xf32> -> tensor<8xf32>
  %gb = shard.all_gather %b on @g grid_axes = [0] gather_axis = 0
      : tensor<2xf32> -> tensor<4xf32>
  %gbig = shard.all_gather %big on @g grid_axes = [0] gather_axis = 0
      : tensor<32xf32> -> tensor<64xf32>
  %gc = shard.all_gather %c on @g grid_axes = [0] gather_axis = 0
      : tensor<2xf32> -> tensor<4xf32>
  return %ga, %gb, %gbig, %gc
      : tensor<8xf32>, tensor<4xf32>, tensor<64xf32>, tensor<4xf32>
}

// -----

shard.grid @g(shape = 2)

// A gather of one-element shards stays alone (its column of a merged
// gather would be a strided vector, which a GEMM reads through loops
// instead of the runtime's GEMM); the gathers around it still merge.
// CHECK-LABEL: func.func @one_element_shards
// CHECK: %[[C:.*]] = tensor.concat dim(0) %arg0, %arg2 : (tensor<4xf32>, tensor<2xf32>) -> tensor<6xf32>
// CHECK: zero.all_gather_start %[[C]] : tensor<6xf32> -> tensor<12xf32>
// CHECK: zero.all_gather_start %arg1 : tensor<1xf32> -> tensor<2xf32>
// CHECK-NOT: concat
// OFF-LABEL: func.func @one_element_shards
// OFF-NOT: concat
// OFF-COUNT-3: zero.all_gather_start
func.func @one_element_shards(%a: tensor<4xf32>, %one: tensor<1xf32>,
                              %b: tensor<2xf32>)
    -> (tensor<8xf32>, tensor<2xf32>, tensor<4xf32>) {
  %ga = shard.all_gather %a on @g grid_axes = [0] gather_axis = 0
      : tensor<4xf32> -> tensor<8xf32>
  %gone = shard.all_gather %one on @g grid_axes = [0] gather_axis = 0
      : tensor<1xf32> -> tensor<2xf32>
  %gb = shard.all_gather %b on @g grid_axes = [0] gather_axis = 0
      : tensor<2xf32> -> tensor<4xf32>
  return %ga, %gone, %gb : tensor<8xf32>, tensor<2xf32>, tensor<4xf32>
}

// -----

shard.grid @g(shape = 2)

// Two reduce-scatters (8 and 4 elements): each input becomes [2 x size]
// (rank r's block in row r), the rows are put side by side, and the one
// reduce-scatter gives each rank its block of both; their results are
// slices of it. The merged one goes where the last member was.
// CHECK-LABEL: func.func @scatters
// CHECK: %[[EA:.*]] = tensor.expand_shape %arg0 {{\[}}[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
// CHECK: %[[EB:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
// CHECK: %[[C:.*]] = tensor.concat dim(1) %[[EA]], %[[EB]] : (tensor<2x4xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>
// CHECK: %[[F:.*]] = tensor.collapse_shape %[[C]] {{\[}}[0, 1]] : tensor<2x6xf32> into tensor<12xf32>
// CHECK: zero.reduce_scatter_start %[[F]] {zero.category = "grads"} : tensor<12xf32> -> tensor<6xf32>
// CHECK: %[[R:.*]] = zero.wait
// CHECK-DAG: tensor.extract_slice %[[R]][0] [4] [1] : tensor<6xf32> to tensor<4xf32>
// CHECK-DAG: tensor.extract_slice %[[R]][4] [2] [1] : tensor<6xf32> to tensor<2xf32>
// OFF-LABEL: func.func @scatters
// OFF-COUNT-2: zero.reduce_scatter_start
func.func @scatters(%a: tensor<8xf32>, %b: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<2xf32>) {
  %ra = shard.reduce_scatter %a on @g grid_axes = [0] scatter_axis = 0
      {zero.category = "grads"} : tensor<8xf32> -> tensor<4xf32>
  %b2 = arith.addf %b, %b : tensor<4xf32>
  %rb = shard.reduce_scatter %b2 on @g grid_axes = [0] scatter_axis = 0
      {zero.category = "grads"} : tensor<4xf32> -> tensor<2xf32>
  return %ra, %rb : tensor<4xf32>, tensor<2xf32>
}

// -----

shard.grid @g(shape = 2)

// Not merged: the first reduction's result is read before the second
// (it would have to wait for the merged one), and a second gather of the
// same input (stage 3's regather) stays apart from the first.
// CHECK-LABEL: func.func @apart
// CHECK-NOT: concat
// CHECK-COUNT-2: zero.reduce_scatter_start
// CHECK-NOT: concat
// CHECK-COUNT-2: zero.all_gather_start %arg2
func.func @apart(%a: tensor<8xf32>, %b: tensor<4xf32>, %w: tensor<2xf32>)
    -> (tensor<4xf32>, tensor<2xf32>, tensor<4xf32>, tensor<4xf32>) {
  %ra = shard.reduce_scatter %a on @g grid_axes = [0] scatter_axis = 0
      : tensor<8xf32> -> tensor<4xf32>
  %s = arith.addf %ra, %ra : tensor<4xf32>
  %rb = shard.reduce_scatter %b on @g grid_axes = [0] scatter_axis = 0
      : tensor<4xf32> -> tensor<2xf32>
  %g1 = shard.all_gather %w on @g grid_axes = [0] gather_axis = 0
      : tensor<2xf32> -> tensor<4xf32>
  %g2 = shard.all_gather %w on @g grid_axes = [0] gather_axis = 0
      : tensor<2xf32> -> tensor<4xf32>
  return %s, %rb, %g1, %g2 : tensor<4xf32>, tensor<2xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

shard.grid @g(shape = 2)

// All-reduces (stage 0's gradients) of any shape: flattened, concatenated,
// reduced once, and sliced and reshaped back.
// CHECK-LABEL: func.func @all_reduces
// CHECK: %[[FA:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK: %[[C:.*]] = tensor.concat dim(0) %[[FA]], %arg1 : (tensor<6xf32>, tensor<3xf32>) -> tensor<9xf32>
// CHECK: zero.all_reduce_start %[[C]] : tensor<9xf32> -> tensor<9xf32>
// CHECK: %[[R:.*]] = zero.wait
// CHECK: %[[SA:.*]] = tensor.extract_slice %[[R]][0] [6] [1]
// CHECK: tensor.expand_shape %[[SA]] {{\[}}[0, 1]] output_shape [2, 3]
// CHECK: tensor.extract_slice %[[R]][6] [3] [1]
func.func @all_reduces(%a: tensor<2x3xf32>, %b: tensor<3xf32>)
    -> (tensor<2x3xf32>, tensor<3xf32>) {
  %ra = shard.all_reduce %a on @g grid_axes = [0] : tensor<2x3xf32> -> tensor<2x3xf32>
  %rb = shard.all_reduce %b on @g grid_axes = [0] : tensor<3xf32> -> tensor<3xf32>
  return %ra, %rb : tensor<2x3xf32>, tensor<3xf32>
}
