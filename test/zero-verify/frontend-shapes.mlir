// zero-verify accepts the torch-mlir-shaped steps of
// ../zero-partition/frontend-shapes.mlir and prints them back unchanged.
// RUN: zero-opt %S/../zero-partition/frontend-shapes.mlir -split-input-file --zero-verify | FileCheck %s

// A rank-0 parameter with a rank-0 optimizer state.
// CHECK-LABEL: func.func @fb(%{{.*}}: tensor<f32> {zero.param = "scale"}
// CHECK-LABEL: func.func @opt(
// CHECK-SAME:    tensor<f32> {zero.state = {kind = "momentum", param = "scale"}}

// Hyper-parameters passed as 0-d tensors.
// CHECK-LABEL: func.func @opt(
// CHECK-SAME:    %{{.*}}: tensor<f32> {zero.hyper = "lr"}, %{{.*}}: tensor<f32> {zero.hyper = "beta1"}, %{{.*}}: tensor<f32> {zero.hyper = "step"}
// CHECK:         math.powf

// cf.assert in forward_backward.
// CHECK-LABEL: func.func @fb(%{{.*}}: tensor<8xf32> {zero.param = "emb"}
// CHECK:         cf.assert %{{.*}}, "index must be smaller than dim size"
