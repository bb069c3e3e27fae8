// Layer-wise partitioning at stage 3: a parameter under
// param-persistence-threshold elements, or named in persistent-params, stays
// whole on every rank (no gathers) while its gradient and states are sharded
// as at stage 2; the others are sharded as usual. On the two-layer model
// (w1: 15 elements, w2: 10) on 2 ranks.
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=3 world-size=2 param-persistence-threshold=12" | FileCheck %s
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=3 world-size=2 persistent-params=w2" | FileCheck %s
// Every parameter persistent: stage 2's step, with zero.stage = 3.
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=3 world-size=2 param-persistence-threshold=100" | FileCheck %s --check-prefix=ALL
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=2 world-size=2" | FileCheck %s --check-prefix=ALL
// Threshold 0 (the default) and an empty list shard everything.
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" | FileCheck %s --check-prefix=NONE

// w1 comes in as this rank's shard, w2 whole; w2's momentum is sharded.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:    %[[W1:[a-z0-9]+]]: tensor<8xf32> {zero.param = "w1", zero.sharded}
// CHECK-SAME:    %[[W2:[a-z0-9]+]]: tensor<5x2xf32> {zero.param = "w2"}
// CHECK-SAME:    tensor<8xf32> {zero.sharded, zero.state = {kind = "momentum", param = "w1"}}
// CHECK-SAME:    tensor<5xf32> {zero.sharded, zero.state = {kind = "momentum", param = "w2"}}
// CHECK-SAME:    -> (tensor<f32> {zero.loss}, tensor<8xf32> {zero.param = "w1", zero.sharded}, tensor<5x2xf32> {zero.param = "w2"},
// CHECK-SAME:    zero.manifest = [#zero.layout<name = "w1", shape = [3, 5], numel = 15, padded = 16, shard = 8, sharded = params|grads|states>,
// CHECK-SAME:                     #zero.layout<name = "w2", shape = [5, 2], numel = 10, padded = 10, shard = 5, sharded = grads|states>]
// CHECK-SAME:    zero.stage = 3 : i64
// Only w1 is gathered for the forward pass; w2 is read as it came in.
// CHECK:         %[[G1:.*]] = shard.all_gather %[[W1]] {{.*}} : tensor<8xf32> -> tensor<16xf32>
// CHECK-NOT:     shard.all_gather %[[W2]]
// CHECK:         linalg.matmul ins(%{{.*}}, %[[W2]] : tensor<4x5xf32>, tensor<5x2xf32>)
// Both gradients are reduce-scattered.
// CHECK-DAG:     shard.reduce_scatter {{.*}} : tensor<16xf32> -> tensor<8xf32>
// CHECK-DAG:     shard.reduce_scatter {{.*}} : tensor<10xf32> -> tensor<5xf32>
// The optimizer updates w2's slice, and the updated slices are gathered
// straight into w2's buffer, as at stage 2; w1's new shard is returned.
// CHECK:         %[[NEW2:.*]] = shard.all_gather %{{.*}} : tensor<5xf32> -> tensor<10xf32>
// CHECK:         bufferization.materialize_in_destination %{{.*}} in %[[W2]] : (tensor<5x2xf32>, tensor<5x2xf32>) -> tensor<5x2xf32>
// CHECK:         return

// ALL-LABEL: func.func @train_step(
// ALL-SAME:    tensor<3x5xf32> {zero.param = "w1"}
// ALL-SAME:    tensor<5x2xf32> {zero.param = "w2"}
// ALL-SAME:    sharded = grads|states>, #zero.layout<{{.*}}sharded = grads|states>]
// ALL-NOT:     zero.param = "w{{[12]}}", zero.sharded

// NONE-LABEL: func.func @train_step(
// NONE-SAME:    tensor<8xf32> {zero.param = "w1", zero.sharded}
// NONE-SAME:    tensor<5xf32> {zero.param = "w2", zero.sharded}
