// The whole zero-lower-cpu pipeline on the hand-written step of
// bufferize-step.mlir and on zero-gen output: LLVM dialect only, matmuls as
// runtime GEMM calls, allocations through the runtime's accounting hooks, and
// the result translates to LLVM IR.
// RUN: zero-opt %S/bufferize-step.mlir --zero-lower-cpu | FileCheck %s
// RUN: zero-opt %S/bufferize-step.mlir --zero-lower-cpu | FileCheck %s --check-prefix=DECL
// RUN: zero-opt %S/bufferize-step.mlir --zero-lower-cpu | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR
// RUN: zero-gen gpt --preset gpt-tiny --clip-grad-norm | zero-opt --zero-lower-cpu | FileCheck %s --check-prefix=GPT
// RUN: zero-gen gpt --preset gpt-tiny --clip-grad-norm | zero-opt --zero-lower-cpu | FileCheck %s --check-prefix=APPROX
// RUN: zero-gen gpt --preset gpt-tiny | zero-opt --zero-lower-cpu=approximate-math=false | FileCheck %s --check-prefix=LIBM
// RUN: zero-gen gpt --preset gpt-tiny --dtype f64 | zero-opt --zero-lower-cpu | mlir-translate --mlir-to-llvmir -o /dev/null
// With gemm-to-runtime=false everything, matmuls included, becomes loops.
// RUN: zero-opt %S/bufferize-step.mlir --zero-lower-cpu=gemm-to-runtime=false | FileCheck %s --check-prefix=LOOPS

// CHECK-LABEL: llvm.func @fb(
// CHECK-NOT:     linalg.
// CHECK-NOT:     memref.
// CHECK:         llvm.call @_mlir_memref_to_llvm_aligned_alloc
// CHECK:         llvm.call @zrt_gemm_f32
// CHECK:         llvm.call @_mlir_memref_to_llvm_free
// CHECK-LABEL: llvm.func @opt(
// CHECK-NOT:     llvm.call @_mlir_memref_to_llvm_aligned_alloc
// CHECK:         llvm.return

// DECL-DAG:    llvm.func @zrt_gemm_f32(i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
// DECL-DAG:    llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> !llvm.ptr
// DECL-DAG:    llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)

// No zero.* argument attributes reach LLVM IR translation.
// LLVMIR-NOT: zero.
// LLVMIR: define void @fb(
// LLVMIR: call void @zrt_gemm_f32(i32 0, i32 0, i64 4, i64 2, i64 3,
// LLVMIR: define void @opt(

// GPT: llvm.func @forward_backward(
// GPT-COUNT-4: llvm.call @zrt_gemm_batched_f32
// f32 tanh, exp and log become polynomials (zero-approximate-math): no
// intrinsic or libm call of them is left anywhere in the module; sqrt stays
// an intrinsic. With approximate-math=false, tanh is LLVM's intrinsic.
// APPROX-NOT: llvm.intr.tanh
// APPROX-NOT: llvm.intr.exp
// APPROX-NOT: llvm.intr.log
// APPROX-NOT: tanhf
// LIBM: llvm.intr.tanh
// GPT: llvm.intr.fma
// GPT: llvm.func @optimizer(
// GPT: llvm.intr.sqrt

// LOOPS-NOT: zrt_gemm
// LOOPS: llvm.func @fb(
