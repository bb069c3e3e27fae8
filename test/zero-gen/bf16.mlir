// RUN: zero-gen gpt --vocab 8 --seq 4 --layers 1 --heads 2 --d-model 4 --batch 2 --dtype bf16 \
// RUN:   | zero-opt --zero-verify | FileCheck %s
// RUN: zero-gen mlp --dtype bf16 --clip-grad-norm | zero-opt --zero-verify \
// RUN:   | FileCheck %s --check-prefix=MLP

// Mixed precision (--dtype bf16): parameters, gradients and activations in
// bf16, the loss in f32; every op computes in f32 and rounds its result to
// bf16 once.
// CHECK-LABEL: func.func @forward_backward(
// CHECK-SAME:    %arg0: tensor<8x4xbf16> {{.*}}zero.param = "wte"}
// CHECK-SAME:    -> (tensor<f32> {zero.loss}, tensor<8x4xbf16> {zero.grad = "wte"}

// LayerNorm's row statistics accumulate in f32 and stay f32.
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<8x4xbf16>) outs(%{{.*}} : tensor<8xf32>)
// CHECK:         ^bb0(%[[IN:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[X:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT:      arith.addf %[[ACC]], %[[X]] : f32

// Matmuls take bf16 operands, accumulate into f32 and round the product.
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x4xbf16>, tensor<4x12xbf16>) outs(%{{.*}} : tensor<8x12xf32>) -> tensor<8x12xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[MM]] : tensor<8x12xf32>) outs(%{{.*}} : tensor<8x12xbf16>)
// CHECK-NEXT:    ^bb0(%[[P:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[R]] : bf16

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
