// tensor.concat in the backward pass bufferizes to copies into strided
// column blocks; zero-lower-cpu turns them into loops, so the lowered step
// calls no `memrefCopy` (a c_runner_utils symbol the runtime lacks).
// RUN: zero-opt %S/Inputs/concat-step.mlir --zero-bufferize-step | FileCheck %s --check-prefix=BUF
// RUN: zero-opt %S/Inputs/concat-step.mlir --zero-lower-cpu | FileCheck %s
// RUN: zero-opt %S/Inputs/concat-step.mlir --zero-partition="stage=3 world-size=2" --zero-lower-cpu | FileCheck %s

// Bufferized: the concat is a copy into a strided subview.
// BUF-LABEL: func.func @forward_backward
// BUF:         memref.copy %{{.*}}, %{{.*}} : memref<2x2xf32{{.*}}> to memref<2x2xf32, strided<[4, 1], offset: 2>>

// Lowered: no memrefCopy, declared or called.
// CHECK-NOT:   memrefCopy
// CHECK-LABEL: llvm.func @{{forward_backward|train_step}}
// CHECK-NOT:   memrefCopy
