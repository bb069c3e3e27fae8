// RUN: zero-opt %s --zero-linalg-to-runtime -split-input-file -verify-diagnostics

// A user function that takes the runtime entry point's name with another type.
// expected-error@+1 {{conflicts with the runtime entry point 'zrt_gemm_f32', which must have type '(i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> ()'}}
func.func private @zrt_gemm_f32(memref<4x4xf32>)

func.func @f(%a: memref<4x4xf32>) {
  linalg.matmul ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>) outs(%a : memref<4x4xf32>)
  return
}
