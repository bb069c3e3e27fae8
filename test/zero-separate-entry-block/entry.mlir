// RUN: zero-opt %s --zero-separate-entry-block -split-input-file | FileCheck %s
// RUN: zero-opt %s --zero-separate-entry-block --zero-separate-entry-block -split-input-file | FileCheck %s
// RUN: zero-gen gpt --preset gpt-tiny --layers 2 | zero-opt --zero-lower-cpu -mlir-print-ir-after=zero-separate-entry-block -o /dev/null 2>&1 | FileCheck %s --check-prefix=GEN

// The body moves to a block of its own; arguments are used there directly.
// CHECK-LABEL: func.func @step
// CHECK-SAME:    (%[[A:.*]]: memref<4xf32>, %[[S:.*]]: f32)
// CHECK-NEXT:    cf.br ^[[BODY:.*]]
// CHECK-NEXT:  ^[[BODY]]:
// CHECK-NEXT:    %[[C:.*]] = arith.constant 0 : index
// CHECK-NEXT:    memref.store %[[S]], %[[A]][%[[C]]]
// CHECK-NEXT:    return
func.func @step(%a: memref<4xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  memref.store %s, %a[%c0] : memref<4xf32>
  return
}

// -----

// Blocks after the entry block stay as they are.
// CHECK-LABEL: func.func @branches
// CHECK-NEXT:    cf.br ^[[BODY:.*]]
// CHECK-NEXT:  ^[[BODY]]:
// CHECK-NEXT:    cf.cond_br %{{.*}}, ^[[T:.*]], ^[[E:.*]]
// CHECK:       ^[[T]]:
// CHECK:       ^[[E]]:
func.func @branches(%a: memref<4xf32>, %c: i1) {
  cf.cond_br %c, ^then, ^exit
^then:
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  memref.store %z, %a[%c0] : memref<4xf32>
  cf.br ^exit
^exit:
  return
}

// -----

// No memref argument, or no body: nothing to do.
// CHECK-LABEL: func.func @scalars
// CHECK-NEXT:    arith.addf
// CHECK-LABEL: func.func private @external(memref<4xf32>)
func.func @scalars(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  return %y : f32
}
func.func private @external(memref<4xf32>)

// zero-gen's GPT: the entry points and the loop functions enter their body
// by a branch just before convert-func-to-llvm.
// GEN-LABEL: IR Dump After ZeroSeparateEntryBlockPass
// GEN:         func.func @forward_backward(
// GEN-NEXT:      cf.br ^bb1
// GEN-NEXT:    ^bb1:
