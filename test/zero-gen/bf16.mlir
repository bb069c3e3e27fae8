// RUN: zero-gen gpt --vocab 8 --seq 4 --layers 1 --heads 2 --d-model 4 --batch 2 --dtype bf16 \
// RUN:   | zero-opt --zero-verify | FileCheck %s
// RUN: zero-gen mlp --dtype bf16 --clip-grad-norm | zero-opt --zero-verify \
// RUN:   | FileCheck %s --check-prefix=MLP

// Mixed precision (--dtype bf16): parameters, gradients and activations in
// bf16, the loss and the residual stream in f32; every op computes in f32
// and rounds its result to bf16 once.
// CHECK-LABEL: func.func @forward_backward(
// CHECK-SAME:    %arg0: tensor<8x4xbf16> {{.*}}zero.param = "wte"}
// CHECK-SAME:    -> (tensor<f32> {zero.loss}, tensor<8x4xbf16> {zero.grad = "wte"}

// The embedding starts the residual stream in f32.
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x4xi32>, tensor<4x4xbf16>) outs(%{{.*}} : tensor<2x4x4xf32>)
// CHECK:         %[[X:.*]] = tensor.collapse_shape {{.*}} into tensor<8x4xf32>

// LayerNorm reads it in f32: row statistics and the centered rows in f32,
// the output (a matmul operand) rounded to bf16.
// CHECK:         linalg.reduce ins(%[[X]] : tensor<8x4xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK:         %[[XC:.*]] = linalg.generic {{.*}} ins(%[[X]], %{{.*}} : tensor<8x4xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[XC]], %{{.*}} : tensor<8x4xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<8x4xbf16>)

// Matmuls take bf16 operands, accumulate into f32 and round the product.
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x4xbf16>, tensor<4x12xbf16>) outs(%{{.*}} : tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[MM]] : tensor<8x12xf32>) outs(%{{.*}} : tensor<8x12xbf16>)
// CHECK-NEXT:    ^bb0(%[[P:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[R]] : bf16

// A branch's output projection is added to the residual stream unrounded.
// CHECK:         %[[PROJ:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x4xbf16>, tensor<4x4xbf16>) outs(%{{.*}} : tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<8x4xf32>
// CHECK-NEXT:    linalg.add ins(%[[X]], %[[PROJ]] : tensor<8x4xf32>, tensor<8x4xf32>) outs(%[[E]] : tensor<8x4xf32>)

// AdamW holds an f32 master copy of each parameter next to f32 moments; f32
// hyper-parameters. The update runs on the master; the parameter is its
// rounding.
// CHECK-LABEL: func.func @optimizer(
// CHECK-SAME:    %arg0: tensor<8x4xbf16> {zero.param = "wte"}
// CHECK-SAME:    tensor<8x4xf32> {zero.state = {kind = "master", param = "wte"}}, %{{.*}}: tensor<8x4xf32> {zero.state = {kind = "exp_avg", param = "wte"}}, %{{.*}}: tensor<8x4xf32> {zero.state = {kind = "exp_avg_sq", param = "wte"}}
// CHECK-SAME:    f32 {zero.hyper = "lr"}
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<8x4xbf16>) outs(%arg0, %{{.*}}, %{{.*}}, %{{.*}} : tensor<8x4xbf16>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK-NEXT:    ^bb0(%[[G:.*]]: bf16, %{{.*}}: bf16, %[[MASTER:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      arith.extf %[[G]] : bf16 to f32
// CHECK-NEXT:      arith.mulf %[[MASTER]], %{{.*}} : f32
// CHECK:           %[[NEW:.*]] = arith.subf
// CHECK-NEXT:      %[[ROUNDED:.*]] = arith.truncf %[[NEW]] : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[ROUNDED]], %[[NEW]], %{{.*}}, %{{.*}} : bf16, f32, f32, f32

// The MLP too; clipping reduces the bf16 gradients into an f32 norm.
// MLP-LABEL: func.func @optimizer(
// MLP-SAME:    {zero.state = {kind = "master", param = "fc0.weight"}}
// MLP-SAME:    f32 {zero.hyper = "max_grad_norm"}
// MLP:         linalg.generic {{.*}} ins(%{{.*}} : tensor<8x16xbf16>) outs(%{{.*}} : tensor<f32>)
