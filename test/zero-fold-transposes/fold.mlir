// RUN: zero-opt %s --zero-fold-transposes -split-input-file --mlir-print-local-scope | FileCheck %s
// RUN: zero-gen gpt --preset gpt-tiny | zero-opt --zero-fold-transposes --mlir-print-local-scope | FileCheck %s --check-prefix=GEN
// RUN: zero-gen mlp | zero-opt --zero-fold-transposes | FileCheck %s --check-prefix=MLP

// dx = dy W^T and dW = x^T dy, as a backward pass writes them: both read the
// untransposed tensors through transposed maps; the transposes are gone.
// CHECK-LABEL: func.func @linear_backward
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x16xf32>, %[[DY:.*]]: tensor<4x16xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%[[DY]], %[[W]] : tensor<4x16xf32>, tensor<8x16xf32>)
// CHECK:         linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%[[X]], %[[DY]] : tensor<4x8xf32>, tensor<4x16xf32>)
func.func @linear_backward(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %dy: tensor<4x16xf32>,
                           %dx0: tensor<4x8xf32>, %dw0: tensor<8x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>) {
  %e1 = tensor.empty() : tensor<16x8xf32>
  %wt = linalg.transpose ins(%w : tensor<8x16xf32>) outs(%e1 : tensor<16x8xf32>) permutation = [1, 0]
  %dx = linalg.matmul ins(%dy, %wt : tensor<4x16xf32>, tensor<16x8xf32>) outs(%dx0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %xt = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%e2 : tensor<8x4xf32>) permutation = [1, 0]
  %dw = linalg.matmul ins(%xt, %dy : tensor<8x4xf32>, tensor<4x16xf32>) outs(%dw0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %dx, %dw : tensor<4x8xf32>, tensor<8x16xf32>
}

// -----

// Both operands of a batch_matmul (attention's q k^T and its backward), and
// a transpose with another user stays for that user.
// CHECK-LABEL: func.func @batched
// CHECK:         %[[KT:.*]] = linalg.transpose
// CHECK:         linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
// CHECK:         return %{{.*}}, %[[KT]]
func.func @batched(%q: tensor<2x4x8xf32>, %k: tensor<2x8x4xf32>, %s0: tensor<2x8x8xf32>)
    -> (tensor<2x8x8xf32>, tensor<2x4x8xf32>) {
  %e1 = tensor.empty() : tensor<2x8x4xf32>
  %qt = linalg.transpose ins(%q : tensor<2x4x8xf32>) outs(%e1 : tensor<2x8x4xf32>) permutation = [0, 2, 1]
  %e2 = tensor.empty() : tensor<2x4x8xf32>
  %kt = linalg.transpose ins(%k : tensor<2x8x4xf32>) outs(%e2 : tensor<2x4x8xf32>) permutation = [0, 2, 1]
  %s = linalg.batch_matmul ins(%qt, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%s0 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %s, %kt : tensor<2x8x8xf32>, tensor<2x4x8xf32>
}

// -----

// Transposed twice: the maps flip back to the default ones (printed as none).
// CHECK-LABEL: func.func @twice
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.matmul ins(%arg0, %arg1
func.func @twice(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %e1 = tensor.empty() : tensor<8x4xf32>
  %at = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%e1 : tensor<8x4xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<4x8xf32>
  %att = linalg.transpose ins(%at : tensor<8x4xf32>) outs(%e2 : tensor<4x8xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%att, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// Left alone: a batch transpose that moves the batch dimension, buffers
// (the fold is a tensor rewrite), and a transpose that feeds no matmul.
// CHECK-LABEL: func.func @left_alone
// CHECK:         %[[XT:.*]] = linalg.transpose
// CHECK:         linalg.batch_matmul ins(%[[XT]],
// CHECK:         linalg.transpose
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : memref<8x4xf32>, memref<4x2xf32>)
func.func @left_alone(%x: tensor<4x2x8xf32>, %b: tensor<2x8x8xf32>, %c: tensor<2x4x8xf32>,
                      %w: tensor<2x8xf32>,
                      %m: memref<8x4xf32>, %mb: memref<4x2xf32>, %mc: memref<8x2xf32>)
    -> (tensor<2x4x8xf32>, tensor<8x2xf32>) {
  %e = tensor.empty() : tensor<2x4x8xf32>
  %xt = linalg.transpose ins(%x : tensor<4x2x8xf32>) outs(%e : tensor<2x4x8xf32>) permutation = [1, 0, 2]
  %r = linalg.batch_matmul ins(%xt, %b : tensor<2x4x8xf32>, tensor<2x8x8xf32>) outs(%c : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %e2 = tensor.empty() : tensor<8x2xf32>
  %wt = linalg.transpose ins(%w : tensor<2x8xf32>) outs(%e2 : tensor<8x2xf32>) permutation = [1, 0]
  linalg.matmul ins(%m, %mb : memref<8x4xf32>, memref<4x2xf32>) outs(%mc : memref<8x2xf32>)
  return %r, %wt : tensor<2x4x8xf32>, tensor<8x2xf32>
}

// zero-gen's GPT: every transpose that only fed a matmul is gone (the tied
// LM head reads wte transposed); those left reorder attention heads.
// GEN-LABEL: func.func @forward_backward
// GEN:         linalg.matmul indexing_maps = [{{.*}}, affine_map<(d0, d1, d2) -> (d1, d2)>, {{.*}}]
// GEN-NOT:     linalg.transpose {{.*}} permutation = [1, 0]
// GEN-LABEL: func.func @optimizer

// The MLP keeps no transpose at all.
// MLP-NOT: linalg.transpose
