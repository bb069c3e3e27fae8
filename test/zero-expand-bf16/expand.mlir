// RUN: zero-opt %s -split-input-file --zero-expand-bf16 | FileCheck %s

// A truncation to bf16 becomes integer arithmetic on the f32 bits (round to
// nearest even, NaN to a quiet NaN): no arith.truncf to bf16 is left for
// LLVM to lower to a __truncsfbf2 call.
// CHECK-LABEL: func.func @trunc
// CHECK-NOT: arith.truncf
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.shrui
// CHECK: %[[H:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK: %[[R:.*]] = arith.bitcast %{{.*}} : i16 to bf16
// CHECK: return %[[R]] : bf16
func.func @trunc(%x: f32) -> bf16 {
  %h = arith.truncf %x : f32 to bf16
  return %h : bf16
}

// -----

// Vectors too, and widening is a shift.
// CHECK-LABEL: func.func @vector
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK: arith.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
func.func @vector(%x: vector<8xf32>, %y: vector<8xbf16>) -> (vector<8xbf16>, vector<8xf32>) {
  %h = arith.truncf %x : vector<8xf32> to vector<8xbf16>
  %w = arith.extf %y : vector<8xbf16> to vector<8xf32>
  return %h, %w : vector<8xbf16>, vector<8xf32>
}

// -----

// Other conversions stay as they are.
// CHECK-LABEL: func.func @others
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.extf %{{.*}} : f16 to f32
func.func @others(%x: f64, %y: f16) -> (f32, f32) {
  %a = arith.truncf %x : f64 to f32
  %b = arith.extf %y : f16 to f32
  return %a, %b : f32, f32
}
