// zero-partition accumulate=3 on the hand-written two-layer model in bf16
// (Inputs/two-layer.mlir with every f32 made bf16): the accumulators of the
// loss and the gradients are f32, each micro-batch's bf16 value is widened
// and added, and the mean is rounded to bf16 once, after the loop. Stages
// 0-1 round before their one reduction (bf16 on the wire); stages 2-3
// reduce-scatter each micro-batch in bf16 and round the scaled f32 slice.
// RUN: sed 's/f32/bf16/g' %S/Inputs/two-layer.mlir | zero-opt --zero-partition="stage=0 world-size=2 accumulate=3" | FileCheck %s --check-prefixes=CHECK,S0
// RUN: sed 's/f32/bf16/g' %S/Inputs/two-layer.mlir | zero-opt --zero-partition="stage=2 world-size=2 accumulate=3" | FileCheck %s --check-prefixes=CHECK,S2
// accumulate-f32=false keeps bf16 accumulators (and rounds every addition).
// RUN: sed 's/f32/bf16/g' %S/Inputs/two-layer.mlir | zero-opt --zero-partition="stage=2 world-size=2 accumulate=3 accumulate-f32=false" | FileCheck %s --check-prefix=BF16
// f32 steps have f32 accumulators either way: the option changes nothing.
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=2 world-size=2 accumulate=3 accumulate-f32=false" -o %t.off.mlir
// RUN: zero-opt %S/Inputs/two-layer.mlir --zero-partition="stage=2 world-size=2 accumulate=3" -o %t.on.mlir
// RUN: diff %t.off.mlir %t.on.mlir
// The manifest records the accumulator's 4 bytes an element, and
// zero-memory-report's model-state accounting counts the gradients at them
// (stage 0: 25 elements x 4 bytes, next to 25 x 2 of bf16 parameters).
// RUN: sed 's/f32/bf16/g' %S/Inputs/two-layer.mlir | zero-opt --zero-partition="stage=2 world-size=2 accumulate=3" | FileCheck %s --check-prefix=MANIFEST
// MANIFEST: zero.manifest = [#zero.layout<name = "w1", {{.*}}, grad_bytes = 4>, #zero.layout<name = "w2", {{.*}}, grad_bytes = 4>]
// RUN: sed 's/f32/bf16/g' %S/Inputs/two-layer.mlir | zero-opt --zero-partition="stage=0 world-size=2 accumulate=3" --zero-bufferize-step --zero-memory-report=output=- -o /dev/null | FileCheck %s --check-prefix=STATES
// STATES:      "model_state_bytes": {
// STATES-NEXT:   "grads": 100,
// STATES-NEXT:   "optimizer_states": 50,
// STATES-NEXT:   "params": 50
// f64 gradients keep f64 accumulators (the contract's element types are
// f32, bf16 and f64).
// RUN: sed 's/f32/f64/g' %S/Inputs/two-layer.mlir | zero-opt --zero-partition="stage=2 world-size=2 accumulate=3" | FileCheck %s --check-prefix=F64
// F64:     linalg.fill {zero.category = "grads"} ins(%{{.*}} : f64) outs(%{{.*}} : tensor<8xf64>)
// F64-NOT: arith.truncf
// The manifest (on the function, before the fill) has no grad_bytes.
// RUN: sed 's/f32/f64/g' %S/Inputs/two-layer.mlir | zero-opt --zero-partition="stage=2 world-size=2 accumulate=3" | not grep grad_bytes
// IR in torch-mlir's shape (f64): f64 accumulators, no grad_bytes, and it
// lowers.
// RUN: zero-opt %S/../../integration_tests/zero-run/Inputs/torch-gpt.mlir --zero-partition="stage=2 world-size=2 accumulate=2" -o %t.torch.mlir
// RUN: FileCheck %s --check-prefix=TORCH < %t.torch.mlir
// TORCH:     linalg.fill {zero.category = "grads"} ins(%{{.*}} : f64)
// RUN: not grep grad_bytes %t.torch.mlir
// RUN: zero-opt %t.torch.mlir --zero-lower-cpu -o /dev/null
// The bf16 accumulating step bufferizes and lowers.
// RUN: sed 's/f32/bf16/g' %S/Inputs/two-layer.mlir | zero-opt --zero-partition="stage=3 world-size=2 accumulate=3" --zero-lower-cpu -o /dev/null

// CHECK-LABEL: func.func @train_step(
// The accumulators: the loss, then the gradients (full at stage 0, this
// rank's slices at stage 2), all f32.
// CHECK:       %[[L0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>)
// S0:          %[[A1:.*]] = linalg.fill {zero.category = "grads"} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x5xf32>)
// S0:          %[[A2:.*]] = linalg.fill {zero.category = "grads"} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<5x2xf32>)
// S2:          %[[A1:.*]] = linalg.fill {zero.category = "grads"} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8xf32>)
// S2:          %[[A2:.*]] = linalg.fill {zero.category = "grads"} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<5xf32>)
// S0:          %[[R:.*]]:3 = scf.for {{.*}} iter_args(%[[LA:.*]] = %[[L0]], %[[GA1:.*]] = %[[A1]], %[[GA2:.*]] = %[[A2]]) -> (tensor<f32>, tensor<3x5xf32>, tensor<5x2xf32>)
// S2:          %[[R:.*]]:3 = scf.for {{.*}} iter_args(%[[LA:.*]] = %[[L0]], %[[GA1:.*]] = %[[A1]], %[[GA2:.*]] = %[[A2]]) -> (tensor<f32>, tensor<8xf32>, tensor<5xf32>)
// In the loop, stage 0 adds the full bf16 gradient widened to f32; stage 2
// adds its bf16 reduce-scatter, widened.
// S0-NOT:        shard.
// S0:            linalg.generic {{.*}} ins(%{{.*}} : tensor<5x2xbf16>) outs(%[[GA2]] : tensor<5x2xf32>)
// S2:            %[[RS2:.*]] = shard.reduce_scatter %{{.*}} {zero.category = "grads"} : tensor<10xbf16> -> tensor<5xbf16>
// S2-NEXT:       linalg.generic {{.*}} ins(%[[RS2]] : tensor<5xbf16>) outs(%[[GA2]] : tensor<5xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: bf16, %[[OUT:.*]]: f32):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT:      arith.addf %[[OUT]], %[[W]] : f32
// CHECK:         scf.yield {{.*}} : tensor<f32>,
// The mean loss over the micro-batches, rounded once.
// CHECK:       linalg.generic {{.*}} ins(%[[R]]#0 : tensor<f32>) outs(%{{.*}} : tensor<bf16>)
// CHECK:         arith.constant 0.333333343 : f32
// CHECK:         arith.truncf %{{.*}} : f32 to bf16
// Stage 0 rounds each accumulated gradient, then all-reduces it in bf16.
// S0:          linalg.generic {{.*}} ins(%[[R]]#1 : tensor<3x5xf32>) outs(%{{.*}} : tensor<3x5xbf16>) attrs = {zero.category = "grads"}
// S0-NEXT:     ^bb0
// S0-NEXT:       arith.truncf %{{.*}} : f32 to bf16
// S0:          shard.all_reduce {{.*}} {zero.category = "grads"} : tensor<16xbf16> -> tensor<16xbf16>
// Stage 2 scales the f32 slices by 1/(2*3) and rounds them once.
// S2:          linalg.generic {{.*}} ins(%[[R]]#1 : tensor<8xf32>) outs(%{{.*}} : tensor<8xbf16>) attrs = {zero.category = "grads"}
// S2-NEXT:     ^bb0
// S2-NEXT:       arith.constant 0.166666672 : f32
// S2-NEXT:       arith.mulf
// S2-NEXT:       arith.truncf %{{.*}} : f32 to bf16
// S2-NOT:      shard.reduce_scatter
// CHECK:       shard.all_reduce %{{.*}} on @zero_grid grid_axes = [0] : tensor<bf16> -> tensor<bf16>

// BF16-LABEL:  func.func @train_step(
// BF16:        linalg.fill {zero.category = "grads"} ins(%{{.*}} : bf16) outs(%{{.*}} : tensor<8xbf16>)
// BF16:        scf.for {{.*}} -> (tensor<bf16>, tensor<8xbf16>, tensor<5xbf16>)
// BF16-NOT:      arith.extf
// BF16:        scf.yield
// BF16-NOT:    arith.truncf
// BF16:        return
