// RUN: zero-opt %s --zero-alloc-categories | FileCheck %s
// RUN: zero-opt %s --zero-alloc-categories --zero-alloc-categories | FileCheck %s
// RUN: zero-opt %s --zero-lower-to-llvm | FileCheck %s --check-prefix=LLVM

// Each allocation marked with a category other than activations is
// bracketed: the runtime's generated-code category is set to it (params 0,
// grads 1, optimizer_states 2) and back to activations (3) right after. The
// mark is consumed, so a second run changes nothing.
// CHECK-LABEL: func.func @step(
// CHECK:         %[[C1:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    call @zrt_set_generated_category(%[[C1]]) : (i32) -> ()
// CHECK-NEXT:    %[[G:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3 : i32
// CHECK-NEXT:    call @zrt_set_generated_category(%[[C3]]) : (i32) -> ()
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    call @zrt_set_generated_category(%[[C0]]) : (i32) -> ()
// CHECK-NEXT:    memref.alloc() {alignment = 64 : i64} : memref<16xf32>
// CHECK-NEXT:    arith.constant 3 : i32
// CHECK-NEXT:    call @zrt_set_generated_category
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : i32
// CHECK-NEXT:    call @zrt_set_generated_category(%[[C2]]) : (i32) -> ()
// CHECK-NEXT:    memref.alloc() : memref<2xf32>
// CHECK-NEXT:    arith.constant 3 : i32
// CHECK-NEXT:    call @zrt_set_generated_category
// Unmarked and activations allocations are left alone.
// CHECK-NEXT:    memref.alloc() : memref<3xf32>
// CHECK-NEXT:    memref.alloc() : memref<5xf32>
// CHECK-NEXT:    call @use
// CHECK-NOT:     zrt_set_generated_category
// CHECK:         return
// CHECK:       func.func private @zrt_set_generated_category(i32)

// zero-lower-to-llvm runs the pass first: the calls surround the runtime's
// allocation hook.
// LLVM-LABEL:    llvm.func @step(
// LLVM:          llvm.call @zrt_set_generated_category
// LLVM:          llvm.call @_mlir_memref_to_llvm_aligned_alloc
// LLVM:          llvm.call @zrt_set_generated_category
func.func private @use(memref<8xf32>, memref<16xf32>, memref<2xf32>, memref<3xf32>, memref<5xf32>)
func.func @step() {
  %g = memref.alloc() {alignment = 64 : i64, zero.category = "grads"} : memref<8xf32>
  %p = memref.alloc() {alignment = 64 : i64, zero.category = "params"} : memref<16xf32>
  %s = memref.alloc() {zero.category = "optimizer_states"} : memref<2xf32>
  %a = memref.alloc() : memref<3xf32>
  %b = memref.alloc() {zero.category = "activations"} : memref<5xf32>
  call @use(%g, %p, %s, %a, %b) : (memref<8xf32>, memref<16xf32>, memref<2xf32>, memref<3xf32>, memref<5xf32>) -> ()
  return
}
