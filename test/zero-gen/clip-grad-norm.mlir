// RUN: zero-gen mlp --batch 2 --input 3 --hidden 4 --output 2 --clip-grad-norm \
// RUN:   | zero-opt --zero-verify | FileCheck %s

// --clip-grad-norm adds the max_grad_norm hyper-parameter and clips by the
// global norm in the forms the partitioner can shard: one full reduction of
// g*g to rank 0 per gradient, the sum over parameters as scalar arith, and
// the coefficient applied inside each parameter's elementwise update.

// CHECK-LABEL: func.func @optimizer(
// CHECK-SAME:    %[[G0:arg4]]: tensor<3x4xf32> {zero.grad = "fc0.weight"}
// CHECK-SAME:    %[[G1:arg5]]: tensor<4xf32> {zero.grad = "fc0.bias"}
// CHECK-SAME:    %[[G2:arg6]]: tensor<4x2xf32> {zero.grad = "fc1.weight"}
// CHECK-SAME:    %[[G3:arg7]]: tensor<2xf32> {zero.grad = "fc1.bias"}
// CHECK-SAME:    %arg21: f32 {zero.hyper = "step"}, %[[MAX:arg22]]: f32 {zero.hyper = "max_grad_norm"})
// CHECK-SAME:    attributes {zero.role = "optimizer"}
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[G0]] : tensor<3x4xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK-NEXT:    ^bb0(%[[X:[a-z0-9_]+]]: f32, %[[ACC:[a-z0-9_]+]]: f32):
// CHECK-NEXT:      %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT:      arith.addf %[[ACC]], %[[SQ]] : f32
// CHECK:         %[[S0:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[G1]] : tensor<4xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:         %[[S1:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK:         %[[T1:.*]] = arith.addf %[[S0]], %[[S1]] : f32
// CHECK:         ins(%[[G2]] : tensor<4x2xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:         %[[S2:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK:         %[[T2:.*]] = arith.addf %[[T1]], %[[S2]] : f32
// CHECK:         ins(%[[G3]] : tensor<2xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:         %[[S3:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK:         %[[TOTAL:.*]] = arith.addf %[[T2]], %[[S3]] : f32
// CHECK:         %[[NORM:.*]] = math.sqrt %[[TOTAL]] : f32
// CHECK:         %[[DEN:.*]] = arith.addf %[[NORM]], %{{.*}} : f32
// CHECK:         %[[RATIO:.*]] = arith.divf %[[MAX]], %[[DEN]] : f32
// CHECK:         %[[COEF:.*]] = arith.minimumf %{{.*}}, %[[RATIO]] : f32
// CHECK:         linalg.generic {{.*}} ins(%[[G0]] : tensor<3x4xf32>)
// CHECK-NEXT:    ^bb0(%[[G:[a-z0-9_]+]]: f32,
// CHECK-NEXT:      arith.mulf %[[G]], %[[COEF]] : f32
// CHECK-COUNT-3: arith.mulf %{{[a-z0-9_]+}}, %[[COEF]] : f32
// CHECK:         return
