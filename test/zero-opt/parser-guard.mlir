// Text that crashes the MLIR 22 parser is a located error instead (found by
// the mutation tester; zero/Support/ParserGuard.h).
// RUN: not zero-opt %s -split-input-file 2>&1 | FileCheck %s

#map = affine_map<(d0) -> (d0)>
func.func @iterator_types_not_strings(%a: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK: parser-guard.mlir:[[@LINE+1]]:54: error: malformed 'iterator_types' list: expected '[' strings separated by ',' ']'
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = [f32]} ins(%a : tensor<2xf32>) outs(%a : tensor<2xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CHECK: parser-guard.mlir:[[@LINE+1]]:29: error: dense array of 'index' is not supported
module attributes {test.a = array<index: 1, 2>} {}

// -----

// A negative concatenation dim passed upstream's rank check and indexed the
// shape with it (the mutation tester on test/zero-lower-cpu/Inputs/concat-step.mlir).
func.func @concat_negative_dim(%a: tensor<2x2xf32>) -> tensor<2x4xf32> {
  // CHECK: parser-guard.mlir:[[@LINE+1]]:26: error: tensor.concat's dim must be a dimension of the operands, 0 or more
  %0 = tensor.concat dim(-1) %a, %a : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
