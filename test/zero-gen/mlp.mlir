// RUN: zero-gen mlp --batch 2 --input 3 --hidden 4 --output 2 \
// RUN:   | zero-opt --zero-verify | FileCheck %s
// RUN: zero-gen mlp --batch 2 --input 3 --hidden 4 --output 2 --dtype f64 \
// RUN:   | FileCheck %s --check-prefix=F64
// RUN: zero-gen mlp --hidden 5,6,7 | FileCheck %s --check-prefix=DEEP

// The MLP's forward_backward: params then batch in, loss then one grad per
// param out, linked by name; x @ W + b as a matmul accumulating onto the
// broadcast bias, tanh between layers, MSE loss, explicit backward.

// CHECK-LABEL: func.func @forward_backward(
// CHECK-SAME:    %[[W0:arg[0-9]+]]: tensor<3x4xf32> {zero.init = {kind = "normal", std = 0.57735026918962584 : f64}, zero.param = "fc0.weight"},
// CHECK-SAME:    %[[B0:arg[0-9]+]]: tensor<4xf32> {zero.init = {kind = "constant", value = 0.000000e+00 : f64}, zero.param = "fc0.bias"},
// CHECK-SAME:    %[[W1:arg[0-9]+]]: tensor<4x2xf32> {zero.init = {kind = "normal", std = 5.000000e-01 : f64}, zero.param = "fc1.weight"},
// CHECK-SAME:    %[[B1:arg[0-9]+]]: tensor<2xf32> {zero.init = {kind = "constant", value = 0.000000e+00 : f64}, zero.param = "fc1.bias"},
// CHECK-SAME:    %[[X:arg[0-9]+]]: tensor<2x3xf32> {zero.batch = "input"},
// CHECK-SAME:    %[[Y:arg[0-9]+]]: tensor<2x2xf32> {zero.batch = "target"})
// CHECK-SAME:    -> (tensor<f32> {zero.loss},
// CHECK-SAME:        tensor<3x4xf32> {zero.grad = "fc0.weight"},
// CHECK-SAME:        tensor<4xf32> {zero.grad = "fc0.bias"},
// CHECK-SAME:        tensor<4x2xf32> {zero.grad = "fc1.weight"},
// CHECK-SAME:        tensor<2xf32> {zero.grad = "fc1.bias"})
// CHECK-SAME:    attributes {zero.role = "forward_backward"}
// Layer 0: addmm, then tanh.
// CHECK:         %[[BC0:.*]] = linalg.broadcast ins(%[[B0]] : tensor<4xf32>) outs(%{{.*}} : tensor<2x4xf32>) dimensions = [0]
// CHECK:         %[[Z0:.*]] = linalg.matmul ins(%[[X]], %[[W0]] : tensor<2x3xf32>, tensor<3x4xf32>) outs(%[[BC0]] : tensor<2x4xf32>)
// CHECK:         %[[H0:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[Z0]] : tensor<2x4xf32>)
// CHECK:           math.tanh
// Layer 1: no activation.
// CHECK:         %[[BC1:.*]] = linalg.broadcast ins(%[[B1]] : tensor<2xf32>)
// CHECK:         %[[OUT:.*]] = linalg.matmul ins(%[[H0]], %[[W1]] : tensor<2x4xf32>, tensor<4x2xf32>) outs(%[[BC1]] : tensor<2x2xf32>)
// CHECK-NOT:     math.tanh
// Loss: a full reduction of (out - y)^2 to rank 0, scaled by 1/(2*2).
// CHECK:         %[[DIFF:.*]] = linalg.generic {{.*}} ins(%[[OUT]], %[[Y]] : tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK:           arith.subf
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[DIFF]] : tensor<2x2xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:         %[[SUM:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK:         %[[LOSS:.*]] = arith.mulf %[[SUM]], %{{.*}} : f32
// Backward of layer 1: dW1 = h0^T @ dy, db1 = sum over the batch, dh0 = dy @ W1^T.
// CHECK:         %[[H0T:.*]] = linalg.transpose ins(%[[H0]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<4x2xf32>) permutation = [1, 0]
// CHECK:         %[[DW1:.*]] = linalg.matmul ins(%[[H0T]], %{{.*}} : tensor<4x2xf32>, tensor<2x2xf32>)
// CHECK:         %[[DB1:.*]] = linalg.reduce ins(%{{.*}} : tensor<2x2xf32>) outs(%{{.*}} : tensor<2xf32>) dimensions = [0]
// CHECK:         %[[W1T:.*]] = linalg.transpose ins(%[[W1]] : tensor<4x2xf32>) outs(%{{.*}} : tensor<2x4xf32>) permutation = [1, 0]
// CHECK:         linalg.matmul ins(%{{.*}}, %[[W1T]] : tensor<2x2xf32>, tensor<2x4xf32>)
// tanh' = 1 - tanh^2, from the saved activation.
// CHECK:         %[[DZ0:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[H0]] : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK:         %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3xf32>)
// CHECK:         %[[DW0:.*]] = linalg.matmul ins(%[[XT]], %[[DZ0]] : tensor<3x2xf32>, tensor<2x4xf32>)
// CHECK:         %[[DB0:.*]] = linalg.reduce ins(%[[DZ0]] : tensor<2x4xf32>)
// The input needs no gradient: no third matmul after dW0.
// CHECK-NOT:     linalg.matmul
// CHECK:         %[[L:.*]] = tensor.from_elements %[[LOSS]] : tensor<f32>
// CHECK:         return %[[L]], %[[DW0]], %[[DB0]], %[[DW1]], %[[DB1]]

// The optimizer: params, grads, (exp_avg, exp_avg_sq) per param, the six
// AdamW hyper-parameters; new params and states out. No clipping unless asked.

// CHECK-LABEL: func.func @optimizer(
// CHECK-SAME:    %[[P0:arg0]]: tensor<3x4xf32> {zero.param = "fc0.weight"}
// CHECK-SAME:    %[[P1:arg1]]: tensor<4xf32> {zero.param = "fc0.bias"}
// CHECK-SAME:    %arg2: tensor<4x2xf32> {zero.param = "fc1.weight"}
// CHECK-SAME:    %arg3: tensor<2xf32> {zero.param = "fc1.bias"}
// CHECK-SAME:    %[[G0:arg4]]: tensor<3x4xf32> {zero.grad = "fc0.weight"}
// CHECK-SAME:    %[[G1:arg5]]: tensor<4xf32> {zero.grad = "fc0.bias"}
// CHECK-SAME:    %arg6: tensor<4x2xf32> {zero.grad = "fc1.weight"}
// CHECK-SAME:    %arg7: tensor<2xf32> {zero.grad = "fc1.bias"}
// CHECK-SAME:    %[[M0:arg8]]: tensor<3x4xf32> {zero.state = {kind = "exp_avg", param = "fc0.weight"}}
// CHECK-SAME:    %[[V0:arg9]]: tensor<3x4xf32> {zero.state = {kind = "exp_avg_sq", param = "fc0.weight"}}
// CHECK-SAME:    %[[M1:arg10]]: tensor<4xf32> {zero.state = {kind = "exp_avg", param = "fc0.bias"}}
// CHECK-SAME:    %[[V1:arg11]]: tensor<4xf32> {zero.state = {kind = "exp_avg_sq", param = "fc0.bias"}}
// CHECK-SAME:    %arg12: tensor<4x2xf32> {zero.state = {kind = "exp_avg", param = "fc1.weight"}}
// CHECK-SAME:    %arg13: tensor<4x2xf32> {zero.state = {kind = "exp_avg_sq", param = "fc1.weight"}}
// CHECK-SAME:    %arg14: tensor<2xf32> {zero.state = {kind = "exp_avg", param = "fc1.bias"}}
// CHECK-SAME:    %arg15: tensor<2xf32> {zero.state = {kind = "exp_avg_sq", param = "fc1.bias"}}
// CHECK-SAME:    %[[LR:arg16]]: f32 {zero.hyper = "lr"}, %[[BETA1:arg17]]: f32 {zero.hyper = "beta1"},
// CHECK-SAME:    %[[BETA2:arg18]]: f32 {zero.hyper = "beta2"}, %[[EPS:arg19]]: f32 {zero.hyper = "eps"},
// CHECK-SAME:    %[[WD:arg20]]: f32 {zero.hyper = "weight_decay"}, %[[STEP:arg21]]: f32 {zero.hyper = "step"})
// CHECK-SAME:    -> (tensor<3x4xf32> {zero.param = "fc0.weight"}, tensor<4xf32> {zero.param = "fc0.bias"},
// CHECK-SAME:        tensor<4x2xf32> {zero.param = "fc1.weight"}, tensor<2xf32> {zero.param = "fc1.bias"},
// CHECK-SAME:        tensor<3x4xf32> {zero.state = {kind = "exp_avg", param = "fc0.weight"}},
// CHECK-SAME:        tensor<3x4xf32> {zero.state = {kind = "exp_avg_sq", param = "fc0.weight"}},
// CHECK-SAME:        tensor<2xf32> {zero.state = {kind = "exp_avg_sq", param = "fc1.bias"}})
// CHECK-SAME:    attributes {zero.role = "optimizer"}
// Bias corrections and the decay factor are scalar arith/math, computed once.
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         math.powf %[[BETA1]], %[[STEP]] : f32
// CHECK:         math.powf %[[BETA2]], %[[STEP]] : f32
// CHECK:         %[[LRWD:.*]] = arith.mulf %[[LR]], %[[WD]] : f32
// CHECK:         %[[DECAY:.*]] = arith.subf %[[ONE]], %[[LRWD]] : f32
// One elementwise generic per param, updating (p, m, v) in its outputs.
// The matrix is decayed (p * (1 - lr*wd)) ...
// CHECK:         %{{.*}}:3 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:      ins(%[[G0]] : tensor<3x4xf32>) outs(%[[P0]], %[[M0]], %[[V0]] :
// CHECK-NEXT:    ^bb0(%{{[a-z0-9_]+}}: f32, %[[OUT:[a-z0-9_]+]]: f32, %{{[a-z0-9_]+}}: f32, %{{[a-z0-9_]+}}: f32):
// CHECK-NEXT:      arith.mulf %[[OUT]], %[[DECAY]] : f32
// CHECK:           math.sqrt
// CHECK:           linalg.yield
// ... the bias is not (nanoGPT's convention).
// CHECK:         %{{.*}}:3 = linalg.generic {{.*}} iterator_types = ["parallel"]}
// CHECK-SAME:      ins(%[[G1]] : tensor<4xf32>) outs(%[[P1]], %[[M1]], %[[V1]] :
// CHECK-NOT:       %[[DECAY]]
// CHECK:           linalg.yield
// CHECK-NOT:     max_grad_norm
// CHECK:         return

// With --dtype f64 everything is f64, hyper-parameters and loss included.
// F64-LABEL: func.func @forward_backward(
// F64-SAME:    %arg0: tensor<3x4xf64> {zero.init = {kind = "normal", std = 0.57735026918962584 : f64}, zero.param = "fc0.weight"}
// F64-SAME:    -> (tensor<f64> {zero.loss}
// F64-NOT:     f32
// F64-LABEL: func.func @optimizer(
// F64-SAME:    %arg16: f64 {zero.hyper = "lr"}
// F64-NOT:     f32

// Three hidden layers make four fc layers, with tanh after all but the last.
// DEEP-LABEL: func.func @forward_backward(
// DEEP-SAME:    tensor<4x8xf32> {zero.batch = "input"}, %arg9: tensor<4x4xf32> {zero.batch = "target"}
// DEEP-COUNT-3: math.tanh
// DEEP-NOT:     math.tanh
// DEEP:         linalg.matmul {{.*}} tensor<4x7xf32>, tensor<7x4xf32>
// DEEP-LABEL: func.func @optimizer(
// DEEP-SAME:    %arg6: tensor<7x4xf32> {zero.param = "fc3.weight"}
