// The torch-mlir-shaped steps of ../zero-partition/frontend-shapes.mlir,
// partitioned at stage 3 on 4 ranks, lower to LLVM.
// RUN: zero-opt %S/../zero-partition/frontend-shapes.mlir -split-input-file --zero-partition="stage=3 world-size=4" --zero-lower-cpu | FileCheck %s
// RUN: zero-opt %S/../zero-partition/frontend-shapes.mlir -split-input-file --zero-partition="stage=3 world-size=4" --zero-bufferize-step | FileCheck %s --check-prefix=BUF

// Bufferized: a hyper-parameter passed as a 0-d tensor becomes a scalar
// argument (drivers pass every hyper-parameter by value), wrapped back into
// its tensor at the entry (a store into a 0-d buffer once bufferized).
// BUF-LABEL: func.func @train_step(%{{[^:]*}}: memref<2xf32> {zero.param = "w", zero.sharded}
// BUF-SAME:    %[[LR:[^:]*]]: f32 {zero.hyper = "lr"}, %[[B1:[^:]*]]: f32 {zero.hyper = "beta1"}, %[[STEP:[^:]*]]: f32 {zero.hyper = "step"}
// BUF-DAG:     memref.store %[[B1]], %{{.*}}[] : memref<f32>
// BUF-DAG:     memref.store %[[STEP]], %{{.*}}[] : memref<f32>

// A rank-0 parameter: its one-element slice is a memref<1xf32> argument.
// CHECK-LABEL: llvm.func @train_step(
// CHECK-SAME:    zero.manifest = [#zero.layout<name = "scale"

// Hyper-parameters as 0-d tensors: memref<f32> descriptors (ptr, ptr, offset).
// CHECK-LABEL: llvm.func @train_step(
// CHECK-SAME:    zero.manifest = [#zero.layout<name = "w"
// CHECK:         llvm.intr.pow

// cf.assert survives: a branch to puts(message) and abort().
// CHECK:         llvm.func @abort()
// CHECK:         llvm.func @puts(!llvm.ptr)
// CHECK:         llvm.mlir.global private constant @assert_msg
// CHECK-LABEL: llvm.func @train_step(
// CHECK-SAME:    zero.manifest = [#zero.layout<name = "emb"
// CHECK:         llvm.cond_br %{{.*}}, ^[[OK:.*]], ^[[FAIL:.*]]
// CHECK:       ^[[FAIL]]:
// CHECK:         llvm.call @puts
// CHECK-NEXT:    llvm.call @abort()
