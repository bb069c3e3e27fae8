// A gradient that is the parameter argument itself (the module of
// invalid-options.mlir): stage 3 reduce-scatters the gathered parameter.
// zero-partition used to erase the gather before the gradient's
// reduce-scatter read it (a use of freed memory, at any world size).
// RUN: zero-opt %S/invalid-options.mlir --zero-partition="stage=3 world-size=1" | FileCheck %s --check-prefix=N1
// RUN: zero-opt %S/invalid-options.mlir --zero-partition="stage=3 world-size=2" | FileCheck %s --check-prefix=N2
// RUN: zero-opt %S/invalid-options.mlir --zero-partition="stage=3 world-size=4" | FileCheck %s --check-prefix=N4
// RUN: zero-opt %S/invalid-options.mlir --zero-partition="stage=3 world-size=2 regather=true" | FileCheck %s --check-prefix=N2
// RUN: zero-opt %S/invalid-options.mlir --zero-partition="stage=2 world-size=2" | FileCheck %s --check-prefix=S2

// Two ranks: the gradient's reduce-scatter reads the gather of w, which
// stays; the optimizer subtracts the averaged slice from this rank's slice.
// N2-LABEL: func.func @train_step(
// N2-SAME:    %[[W:.*]]: tensor<2xf32> {zero.param = "w", zero.sharded})
// N2:         %[[FULL:.*]] = shard.all_gather %[[W]] on @zero_grid grid_axes = [0] gather_axis = 0 {zero.category = "params"} : tensor<2xf32> -> tensor<4xf32>
// N2-NEXT:    %[[RS:.*]] = shard.reduce_scatter %[[FULL]] on @zero_grid grid_axes = [0] scatter_axis = 0 {zero.category = "grads"} : tensor<4xf32> -> tensor<2xf32>
// N2-NEXT:    %[[G:.*]] = linalg.generic {{.*}} outs(%[[RS]] : tensor<2xf32>)
// N2:         %[[NEW:.*]] = arith.subf %[[W]], %[[G]] : tensor<2xf32>
// N2:         return %{{.*}}, %[[NEW]] : tensor<f32>, tensor<2xf32>

// One rank: the same, on the whole tensor.
// N1-LABEL: func.func @train_step(
// N1-SAME:    %[[W:.*]]: tensor<4xf32> {zero.param = "w", zero.sharded})
// N1:         %[[FULL:.*]] = shard.all_gather %[[W]] {{.*}} : tensor<4xf32> -> tensor<4xf32>
// N1-NEXT:    shard.reduce_scatter %[[FULL]] {{.*}} : tensor<4xf32> -> tensor<4xf32>
// N1:         arith.subf %[[W]], %{{.*}} : tensor<4xf32>

// Four ranks: one element each.
// N4-LABEL: func.func @train_step(
// N4-SAME:    %[[W:.*]]: tensor<1xf32> {zero.param = "w", zero.sharded})
// N4:         %[[FULL:.*]] = shard.all_gather %[[W]] {{.*}} : tensor<1xf32> -> tensor<4xf32>
// N4-NEXT:    shard.reduce_scatter %[[FULL]] {{.*}} : tensor<4xf32> -> tensor<1xf32>
// N4:         arith.subf %[[W]], %{{.*}} : tensor<1xf32>

// Stage 2 (no gather): the parameter argument itself is reduce-scattered.
// S2-LABEL: func.func @train_step(
// S2-SAME:    %[[W:.*]]: tensor<4xf32> {zero.param = "w"})
// S2:         shard.reduce_scatter %[[W]] {{.*}} : tensor<4xf32> -> tensor<2xf32>
