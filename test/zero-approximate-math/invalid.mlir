// RUN: not zero-opt %s --zero-approximate-math=functions=tanh,gelu 2>&1 | FileCheck %s

// An op upstream cannot approximate is refused while the pass is set up,
// with the list of those it can.
// CHECK: error: zero-approximate-math: no approximation of math.gelu (functions= takes acos, asin, atan, atan2, cbrt, cos, erf, erfc, exp, expm1, log, log1p, log2, rsqrt, sin, tanh)
func.func @f(%x: f32) -> f32 {
  %t = math.tanh %x : f32
  return %t : f32
}
