// Out-of-range options are located errors, not crashes.
// RUN: not zero-opt %s --zero-partition="stage=4 world-size=2" 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not zero-opt %s --zero-partition="stage=1 world-size=0" 2>&1 | FileCheck %s --check-prefix=WORLD
// RUN: not zero-opt %s --zero-partition="stage=-1" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not zero-opt %s --zero-partition="stage=2 world-size=2 param-persistence-threshold=8" 2>&1 | FileCheck %s --check-prefix=PERSIST2
// RUN: not zero-opt %s --zero-partition="stage=1 world-size=2 persistent-params=w" 2>&1 | FileCheck %s --check-prefix=NAMES1
// RUN: not zero-opt %s --zero-partition="stage=3 world-size=2 persistent-params=w,v" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not zero-opt %s --zero-partition="stage=3 world-size=2 param-persistence-threshold=-1" 2>&1 | FileCheck %s --check-prefix=NEGT
// STAGE: invalid-options.mlir:[[@LINE+8]]:1: error: zero-partition: stage must be 0, 1, 2 or 3, got 4
// WORLD: invalid-options.mlir:[[@LINE+7]]:1: error: zero-partition: world-size must be at least 1, got 0
// NEG: error: zero-partition: stage must be 0, 1, 2 or 3, got -1
// PERSIST2: invalid-options.mlir:[[@LINE+6]]:3: error: 'func.func' op zero-partition: param-persistence-threshold keeps parameters whole at stage 3, but this is stage 2, where every parameter is whole already
// NAMES1: invalid-options.mlir:[[@LINE+5]]:3: error: 'func.func' op zero-partition: persistent-params keeps parameters whole at stage 3, but this is stage 1, where every parameter is whole already
// UNKNOWN: invalid-options.mlir:[[@LINE+4]]:3: error: 'func.func' op zero-partition: persistent-params names 'v', which is no parameter of the step (zero.param)
// NEGT: invalid-options.mlir:[[@LINE+3]]:3: error: 'func.func' op zero-partition: param-persistence-threshold must be a number of elements >= 0, got -1
// The module itself is fine (the two-layer model of Inputs/ would do too).
module {
  func.func @fb(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
      attributes {zero.role = "forward_backward"} {
    %l = arith.constant dense<0.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
  func.func @opt(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"}) -> (tensor<4xf32> {zero.param = "w"})
      attributes {zero.role = "optimizer"} {
    %n = arith.subf %w, %g : tensor<4xf32>
    return %n : tensor<4xf32>
  }
}
