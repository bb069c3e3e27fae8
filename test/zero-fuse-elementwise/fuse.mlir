// RUN: zero-opt %s --zero-fuse-elementwise -split-input-file --mlir-print-local-scope | FileCheck %s
// RUN: zero-gen gpt --preset gpt-tiny | zero-opt --zero-fuse-elementwise | FileCheck %s --check-prefix=GEN

// A chain as frontends write it (torch-mlir: one op per aten op): bias
// broadcast, add, tanh. Each producer has one user, so the chain becomes one
// linalg.generic over the inputs; the matmul before it stays a matmul.
// CHECK-LABEL: func.func @chain
// CHECK:         %[[MM:.*]] = linalg.matmul
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[MM]], %{{.*}} : tensor<4x8xf32>, tensor<8xf32>)
// CHECK:           arith.addf
// CHECK:           math.tanh
// CHECK:           linalg.yield
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     linalg.broadcast
// CHECK-NOT:     linalg.add
// CHECK:         return %[[R]]
func.func @chain(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %bb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e : tensor<4x8xf32>) dimensions = [0]
  %s = linalg.add ins(%mm, %bb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.tanh %in : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// An elementwise producer fuses into a reduction that is its one user
// (the square of a mean-squared error into its sum).
// CHECK-LABEL: func.func @into_reduction
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["reduction"]
// CHECK:           arith.subf
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:           linalg.yield
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @into_reduction(%y: tensor<16xf32>, %t: tensor<16xf32>, %acc: tensor<f32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<16xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%y, %t : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    %q = arith.mulf %s, %s : f32
    linalg.yield %q : f32
  } -> tensor<16xf32>
  %r = linalg.reduce ins(%d : tensor<16xf32>) outs(%acc : tensor<f32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %n = arith.addf %in, %init : f32
      linalg.yield %n : f32
    }
  return %r : tensor<f32>
}

// -----

// Not fused: a producer with a second user (an activation the backward
// pass reads again) is not recomputed, and a transpose feeding a matmul
// stays for zero-fold-transposes and the GEMM.
// CHECK-LABEL: func.func @kept
// CHECK:         %[[G:.*]] = linalg.generic
// CHECK:           math.exp
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[G]]
// CHECK:         linalg.transpose
// CHECK:         linalg.matmul
// CHECK:         return %{{.*}}, %[[G]]
func.func @kept(%x: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.exp %in : f32
    linalg.yield %y : f32
  } -> tensor<4x4xf32>
  %h = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.mulf %in, %in : f32
    linalg.yield %y : f32
  } -> tensor<4x4xf32>
  %xt = linalg.transpose ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  %m = linalg.matmul ins(%xt, %h : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %h, %m, %g : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// zero-gen's GPT keeps every matmul and batch_matmul.
// GEN-LABEL: func.func @forward_backward
// GEN-COUNT-2: linalg.batch_matmul
// GEN:         linalg.matmul
// GEN-LABEL: func.func @optimizer
