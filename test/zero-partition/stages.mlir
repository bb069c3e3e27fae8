// zero-partition on a hand-written two-layer model (Inputs/two-layer.mlir:
// w1 3x5 = 15 elements, padded to 16 on 2 ranks; w2 5x2 = 10, no padding).
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=0 world-size=2" | FileCheck %s --check-prefixes=CHECK,S0
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=1 world-size=2" | FileCheck %s --check-prefixes=CHECK,S1
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=2 world-size=2" | FileCheck %s --check-prefixes=CHECK,S2
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=3 world-size=2" | FileCheck %s --check-prefixes=CHECK,S3
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=2 world-size=2" | FileCheck %s --check-prefix=LOSS
// RUN: not zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=3 world-size=4" --zero-partition="stage=3 world-size=4" 2>&1 | FileCheck %s --check-prefix=TWICE

// Every stage: the upstream device grid, one @train_step replacing the two
// contract functions, and its manifest: each parameter's layout, with what
// the stage shards (states from stage 1, gradients from 2, parameters at 3).
// CHECK:       shard.grid @zero_grid(shape = 2)
// CHECK-NOT:   @forward_backward
// CHECK-LABEL: func.func @train_step(
// S0-SAME:       %[[W1:.*]]: tensor<3x5xf32> {zero.param = "w1"}, %[[W2:.*]]: tensor<5x2xf32> {zero.param = "w2"},
// S0-SAME:       tensor<3x5xf32> {zero.state = {kind = "momentum", param = "w1"}}, %{{.*}}: tensor<5x2xf32> {zero.state
// S1-SAME:       %[[W1:.*]]: tensor<3x5xf32> {zero.param = "w1"}, %{{.*}}: tensor<5x2xf32> {zero.param = "w2"},
// S1-SAME:       tensor<8xf32> {zero.sharded, zero.state = {kind = "momentum", param = "w1"}}, %{{.*}}: tensor<5xf32> {zero.sharded, zero.state
// S2-SAME:       tensor<8xf32> {zero.sharded, zero.state = {kind = "momentum", param = "w1"}}, %{{.*}}: tensor<5xf32> {zero.sharded, zero.state
// S3-SAME:       %[[W1:.*]]: tensor<8xf32> {zero.param = "w1", zero.sharded}, %[[W2:.*]]: tensor<5xf32> {zero.param = "w2", zero.sharded},
// S3-SAME:       tensor<8xf32> {zero.sharded, zero.state = {kind = "momentum", param = "w1"}}, %{{.*}}: tensor<5xf32> {zero.sharded, zero.state
// CHECK-SAME:    {zero.batch = "input"}, %{{.*}}: tensor<4x2xf32> {zero.batch = "target"}, %{{.*}}: f32 {zero.hyper = "lr"}
// CHECK-SAME:    -> (tensor<f32> {zero.loss},
// S0-SAME:       tensor<3x5xf32> {zero.param = "w1"}, tensor<5x2xf32> {zero.param = "w2"}, tensor<3x5xf32> {zero.state
// S3-SAME:       tensor<8xf32> {zero.param = "w1", zero.sharded}, tensor<5xf32> {zero.param = "w2", zero.sharded}, tensor<8xf32> {zero.sharded, zero.state
// CHECK-SAME:    zero.manifest = [#zero.layout<name = "w1", shape = [3, 5], numel = 15, padded = 16, shard = 8, sharded =
// S0-SAME:         none>,
// S1-SAME:         states>,
// S2-SAME:         grads|states>,
// S3-SAME:         params|grads|states>,
// CHECK-SAME:                     #zero.layout<name = "w2", shape = [5, 2], numel = 10, padded = 10, shard = 5, sharded =
// S0-SAME:         none>]
// S1-SAME:         states>]
// S2-SAME:         grads|states>]
// S3-SAME:         params|grads|states>]
// CHECK-SAME:    zero.role = "train_step"
// S0-SAME:       zero.stage = 0 : i64, zero.world_size = 2 : i64
// S3-SAME:       zero.stage = 3 : i64, zero.world_size = 2 : i64

// Stage 0: replicated; gradients all-reduced over the padded flat view, then
// averaged in place; the optimizer runs on full tensors. Collectives on
// gradients carry zero.category = "grads" (the runtime counts their buffers
// as gradients).
// S0-NOT:      shard.all_gather
// S0-NOT:      shard.reduce_scatter
// S0:          linalg.matmul ins(%{{.*}}, %[[W1]] : tensor<4x3xf32>, tensor<3x5xf32>)
// S0:          %[[G1:.*]] = tensor.pad %{{.*}} low[0] high[1]
// S0:          %[[SUM1:.*]] = shard.all_reduce %[[G1]] on @zero_grid grid_axes = [0] {zero.category = "grads"} : tensor<16xf32> -> tensor<16xf32>
// S0-NEXT:     linalg.generic {{.*}} outs(%[[SUM1]] : tensor<16xf32>)
// S0-NEXT:     ^bb0(%[[OUT:.*]]: f32):
// S0-NEXT:       %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// S0-NEXT:       arith.mulf %[[OUT]], %[[HALF]] : f32
// S0:          shard.all_reduce %{{.*}} on @zero_grid grid_axes = [0] {zero.category = "grads"} : tensor<10xf32> -> tensor<10xf32>
// S0:          linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%{{.*}} : tensor<3x5xf32>)
// S0:          linalg.generic {{.*}} outs(%[[W1]], %{{.*}} : tensor<3x5xf32>, tensor<3x5xf32>)

// Stage 1: gradients reduce-scattered after the whole backward pass; each
// rank updates its slice of the parameter and gathers the new parameter.
// S1:          linalg.matmul {{.*}} -> tensor<3x5xf32>
// S1-NOT:      linalg.matmul
// S1:          shard.reduce_scatter %{{.*}} on @zero_grid grid_axes = [0] scatter_axis = 0 {zero.category = "grads"} : tensor<16xf32> -> tensor<8xf32>
// S1:          shard.reduce_scatter %{{.*}} on @zero_grid grid_axes = [0] scatter_axis = 0 {zero.category = "grads"} : tensor<10xf32> -> tensor<5xf32>
// S1:          tensor.extract_slice %{{.*}}[%{{.*}}] [8] [1] : tensor<16xf32> to tensor<8xf32>

// Stage 2: w2's gradient is reduce-scattered right after the matmul that
// produces it, before the backward pass goes on to w1.
// S2:          %[[G2:.*]] = linalg.matmul {{.*}} -> tensor<5x2xf32>
// S2-NEXT:     %[[G2F:.*]] = tensor.collapse_shape %[[G2]]
// S2-NEXT:     shard.reduce_scatter %[[G2F]] on @zero_grid grid_axes = [0] scatter_axis = 0 {zero.category = "grads"} : tensor<10xf32> -> tensor<5xf32>
// S2:          linalg.matmul {{.*}} -> tensor<4x5xf32>
// S2:          linalg.matmul {{.*}} -> tensor<3x5xf32>
// S2:          shard.reduce_scatter %{{.*}} : tensor<16xf32> -> tensor<8xf32>

// Stage 3: parameters are gathered right before their first use. w2's
// backward use follows its forward use with no other parameter read in
// between, so one gather serves both (regather.mlir has the case where it
// is gathered again). Gathered parameters count as parameters.
// S3:          %[[A1:.*]] = shard.all_gather %[[W1]] on @zero_grid grid_axes = [0] gather_axis = 0 {zero.category = "params"} : tensor<8xf32> -> tensor<16xf32>
// S3-NEXT:     %[[U1:.*]] = tensor.extract_slice %[[A1]][0] [15] [1]
// S3-NEXT:     %[[F1:.*]] = tensor.expand_shape %[[U1]] {{\[}}[0, 1]] output_shape [3, 5]
// S3-NEXT:     linalg.matmul ins(%{{.*}}, %[[F1]] : tensor<4x3xf32>, tensor<3x5xf32>)
// S3:          %[[A2:.*]] = shard.all_gather %[[W2]] on @zero_grid {{.*}} : tensor<5xf32> -> tensor<10xf32>
// S3-NEXT:     %[[F2:.*]] = tensor.expand_shape %[[A2]]
// S3-NEXT:     linalg.matmul ins(%{{.*}}, %[[F2]] : tensor<4x5xf32>, tensor<5x2xf32>)
// S3-NOT:      shard.all_gather
// S3:          linalg.transpose ins(%[[F2]] : tensor<5x2xf32>)
// S3-NOT:      shard.all_gather

// Stages 1-3: the clipping norm is a masked local reduction over the shard
// (padding excluded) plus an all-reduce of the partial sum.
// S1:          linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}}, %{{.*}} : tensor<8xf32>, index)
// S1:            linalg.index 0
// S1:            arith.cmpi ult, %{{.*}}, %{{.*}} : index
// S1:            arith.select
// S1:          shard.all_reduce %{{.*}} on @zero_grid grid_axes = [0] : tensor<f32> -> tensor<f32>
// Stages 1/2 gather the updated slices into the parameters' own buffers: the
// step updates parameters in place, as at stages 0 and 3.
// S1:          %[[N1:.*]] = shard.all_gather %{{.*}} : tensor<8xf32> -> tensor<16xf32>
// S1-NEXT:     %[[N1U:.*]] = tensor.extract_slice %[[N1]][0] [15] [1]
// S1-NEXT:     %[[N1F:.*]] = tensor.expand_shape %[[N1U]]
// S1-NEXT:     bufferization.materialize_in_destination %[[N1F]] in %[[W1]] : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
// S1:          shard.all_gather %{{.*}} : tensor<5xf32> -> tensor<10xf32>

// The loss is averaged over ranks, and returned first.
// LOSS:        %[[LS:.*]] = shard.all_reduce %{{.*}} on @zero_grid grid_axes = [0] : tensor<f32> -> tensor<f32>
// LOSS-NEXT:   %[[L:.*]] = linalg.generic {{.*}} outs(%[[LS]] : tensor<f32>)
// LOSS-NEXT:   ^bb0
// LOSS-NEXT:     arith.constant 5.000000e-01 : f32
// LOSS:        return %[[L]],

// A module already in ZeRO form has no contract functions left.
// TWICE: error: zero-partition: the module does not satisfy the training-step contract
