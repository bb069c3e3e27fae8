// zero-partition accumulate=3 on the hand-written two-layer model
// (Inputs/two-layer.mlir: batch 4; w1 3x5 padded to 16 on 2 ranks, w2 5x2):
// each batch input holds 3 micro-batches, forward and backward run in an
// scf.for over them, and the optimizer steps once on the mean gradient.
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=0 world-size=2 accumulate=3" | FileCheck %s --check-prefixes=CHECK,S0
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=1 world-size=2 accumulate=3" | FileCheck %s --check-prefixes=CHECK,S1
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=2 world-size=2 accumulate=3" | FileCheck %s --check-prefixes=CHECK,S2
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=3 world-size=2 accumulate=3" | FileCheck %s --check-prefixes=CHECK,S3
// accumulate=1 is the step without a loop, byte for byte.
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=2 world-size=2 accumulate=1" -o %t.acc1.mlir
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=2 world-size=2" -o %t.plain.mlir
// RUN: diff %t.acc1.mlir %t.plain.mlir
// The accumulating step schedules and lowers (its collectives in the loop
// stay blocking).
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=3 world-size=2 accumulate=3" --zero-schedule --zero-lower-cpu -o /dev/null

// Batch inputs: 3 micro-batches of 4 rows.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<12x3xf32> {zero.batch = "input"}, %[[T:[^:]*]]: tensor<12x2xf32> {zero.batch = "target"}
// The accumulators, zero-filled: the loss, then the gradients (full at
// stages 0-1, this rank's slices at stages 2-3), counted as gradients.
// CHECK:       %[[L0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>)
// S0:          %[[A1:.*]] = linalg.fill {zero.category = "grads"} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x5xf32>)
// S0:          %[[A2:.*]] = linalg.fill {zero.category = "grads"} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<5x2xf32>)
// S1:          linalg.fill {zero.category = "grads"} {{.*}} -> tensor<3x5xf32>
// S2:          %[[A1:.*]] = linalg.fill {zero.category = "grads"} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8xf32>)
// S2:          %[[A2:.*]] = linalg.fill {zero.category = "grads"} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<5xf32>)
// S3:          linalg.fill {zero.category = "grads"} {{.*}} -> tensor<8xf32>
// CHECK:       %[[C3:.*]] = arith.constant 3 : index
// S0:          %[[R:.*]]:3 = scf.for %[[K:.*]] = %{{.*}} to %[[C3]] step %{{.*}} iter_args(%[[LA:.*]] = %[[L0]], %[[GA1:.*]] = %[[A1]], %[[GA2:.*]] = %[[A2]]) -> (tensor<f32>, tensor<3x5xf32>, tensor<5x2xf32>)
// S1:          scf.for {{.*}} -> (tensor<f32>, tensor<3x5xf32>, tensor<5x2xf32>)
// S2:          %[[R:.*]]:3 = scf.for %[[K:.*]] = %{{.*}} to %[[C3]] step %{{.*}} iter_args(%[[LA:.*]] = %[[L0]], %[[GA1:.*]] = %[[A1]], %[[GA2:.*]] = %[[A2]]) -> (tensor<f32>, tensor<8xf32>, tensor<5xf32>)
// S3:          scf.for {{.*}} -> (tensor<f32>, tensor<8xf32>, tensor<5xf32>)
// Micro-batch k: rows [4k, 4k+4) of each input.
// CHECK:         %[[OFF:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    tensor.extract_slice %[[X]][%[[OFF]], 0] [4, 3] [1, 1] : tensor<12x3xf32> to tensor<4x3xf32>
// CHECK:         tensor.extract_slice %[[T]][%{{.*}}, 0] [4, 2] [1, 1] : tensor<12x2xf32> to tensor<4x2xf32>
// Stage 3 gathers the parameters in the loop, for each micro-batch.
// S3:            shard.all_gather {{.*}} : tensor<8xf32> -> tensor<16xf32>
// CHECK:         linalg.matmul
// Stages 0-1 add each micro-batch's full gradient; no collective in the
// loop.
// S0-NOT:        shard.
// S0:            %[[N2:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<5x2xf32>) outs(%[[GA2]] : tensor<5x2xf32>)
// S0:            arith.addf
// S1-NOT:        shard.
// Stages 2-3 reduce-scatter each micro-batch's gradient as soon as it
// exists (the sum over ranks, unscaled) into the sharded accumulator.
// S2:            %[[RS2:.*]] = shard.reduce_scatter %{{.*}} {zero.category = "grads"} : tensor<10xf32> -> tensor<5xf32>
// S2-NEXT:       %[[N2:.*]] = linalg.generic {{.*}} ins(%[[RS2]] : tensor<5xf32>) outs(%[[GA2]] : tensor<5xf32>)
// S2:            shard.reduce_scatter %{{.*}} : tensor<16xf32> -> tensor<8xf32>
// S3:            shard.reduce_scatter %{{.*}} : tensor<10xf32> -> tensor<5xf32>
// S3:            shard.reduce_scatter %{{.*}} : tensor<16xf32> -> tensor<8xf32>
// CHECK:         scf.yield
// After the loop: the mean loss over micro-batches, then over ranks.
// CHECK:       linalg.generic {{.*}} outs(%{{.*}}#0 : tensor<f32>)
// CHECK:         arith.constant 0.333333343 : f32
// The gradients' mean over 3 micro-batches and 2 ranks: stages 0-1 reduce
// the accumulated gradient once; stages 2-3 scale the reduced slices.
// S0:          shard.all_reduce {{.*}} {zero.category = "grads"} : tensor<16xf32> -> tensor<16xf32>
// S0-NEXT:     linalg.generic
// S0-NEXT:     ^bb0
// S0-NEXT:       arith.constant 0.166666672 : f32
// S1:          shard.reduce_scatter {{.*}} {zero.category = "grads"} : tensor<16xf32> -> tensor<8xf32>
// S1-NEXT:     linalg.generic
// S1-NEXT:     ^bb0
// S1-NEXT:       arith.constant 0.166666672 : f32
// S2:          linalg.generic {{.*}} outs(%[[R]]#1 : tensor<8xf32>)
// S2-NEXT:     ^bb0
// S2-NEXT:       arith.constant 0.166666672 : f32
// S2-NOT:      shard.reduce_scatter
// S3-NOT:      shard.reduce_scatter
// CHECK:       shard.all_reduce %{{.*}} on @zero_grid grid_axes = [0] : tensor<f32> -> tensor<f32>
