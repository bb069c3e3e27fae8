// RUN: zero-opt %s --zero-approximate-math | FileCheck %s
// RUN: zero-opt %s --zero-approximate-math=functions=exp | FileCheck %s --check-prefix=ONLY-EXP
// RUN: zero-gen gpt --preset gpt-tiny | zero-opt --zero-approximate-math | FileCheck %s --check-prefix=GEN

// f32 tanh, exp, log become arith code (a rational for tanh, a range
// reduction by ldexp-style bit casts for exp and log); no math op is left.
// CHECK-LABEL: func.func @f32_scalars
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.log
// CHECK:         arith.divf
// CHECK:         arith.bitcast
// CHECK:         return
// ONLY-EXP-LABEL: func.func @f32_scalars
// ONLY-EXP:         math.tanh
// ONLY-EXP-NOT:     math.exp
// ONLY-EXP:         math.log
func.func @f32_scalars(%x: f32) -> (f32, f32, f32) {
  %t = math.tanh %x : f32
  %e = math.exp %x : f32
  %l = math.log %x : f32
  return %t, %e, %l : f32, f32, f32
}

// f64 keeps libm (the finite-difference gradient checks run in f64).
// CHECK-LABEL: func.func @f64_untouched
// CHECK:         math.tanh %{{.*}} : f64
// CHECK:         math.exp %{{.*}} : f64
func.func @f64_untouched(%x: f64) -> (f64, f64) {
  %t = math.tanh %x : f64
  %e = math.exp %x : f64
  return %t, %e : f64, f64
}

// Vectors of f32 (what a vectorizer leaves) are approximated lane-wise.
// CHECK-LABEL: func.func @f32_vector
// CHECK-NOT:     math.tanh
// CHECK:         arith.divf %{{.*}}, %{{.*}} : vector<8xf32>
func.func @f32_vector(%x: vector<8xf32>) -> vector<8xf32> {
  %t = math.tanh %x : vector<8xf32>
  return %t : vector<8xf32>
}

// Inside linalg bodies on tensors, as zero-gen writes GELU and softmax.
// CHECK-LABEL: func.func @in_linalg
// CHECK:         linalg.generic
// CHECK-NOT:       math.tanh
// CHECK:           linalg.yield
func.func @in_linalg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// zero-gen's GPT: GELU's tanh, softmax's exp and the loss's log all go.
// GEN-LABEL: func.func @forward_backward
// GEN-NOT:     math.tanh
// GEN-NOT:     math.exp
// GEN-NOT:     math.log
// GEN-LABEL: func.func @optimizer
