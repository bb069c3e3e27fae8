// RUN: zero-opt %s --zero-split-deallocs -split-input-file | FileCheck %s
// RUN: zero-gen gpt --preset gpt-tiny --layers 3 | zero-opt --zero-verify --zero-bufferize-step -mlir-print-ir-after=zero-split-deallocs -o /dev/null 2>&1 | FileCheck %s --check-prefix=GEN

// Distinct allocations: one deallocation each, conditions kept in order.
// CHECK-LABEL: func.func @distinct
// CHECK-SAME:    (%[[C:.*]]: i1)
// CHECK:         %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK:         %[[D:.*]] = memref.alloc() : memref<2xf64>
// CHECK:         bufferization.dealloc (%[[A]] : memref<4xf32>) if (%true)
// CHECK-NEXT:    bufferization.dealloc (%[[B]] : memref<8xf32>) if (%[[C]])
// CHECK-NEXT:    bufferization.dealloc (%[[D]] : memref<2xf64>) if (%true)
// CHECK-NEXT:    return
func.func @distinct(%c: i1) {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<8xf32>
  %d = memref.alloc() : memref<2xf64>
  bufferization.dealloc (%a, %b, %d : memref<4xf32>, memref<8xf32>, memref<2xf64>) if (%true, %c, %true)
  return
}

// -----

// Retained values need the alias checks upstream makes: unchanged.
// CHECK-LABEL: func.func @retained
// CHECK:         bufferization.dealloc (%{{.*}}, %{{.*}} : memref<4xf32>, memref<4xf32>) if (%{{.*}}, %{{.*}}) retain (%arg0 : memref<4xf32>)
func.func @retained(%r: memref<4xf32>) -> i1 {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %o = bufferization.dealloc (%a, %b : memref<4xf32>, memref<4xf32>) if (%true, %true) retain (%r : memref<4xf32>)
  return %o : i1
}

// -----

// An operand that is not an allocation of its own (an argument, a view)
// may alias another: unchanged.
// CHECK-LABEL: func.func @not_allocations
// CHECK:         bufferization.dealloc (%arg0, %{{.*}} : memref<4xf32>, memref<4xf32>)
// CHECK:         bufferization.dealloc (%{{.*}}, %{{.*}} : memref<8xf32>, memref<f32>)
func.func @not_allocations(%x: memref<4xf32>) {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  bufferization.dealloc (%x, %a : memref<4xf32>, memref<4xf32>) if (%true, %true)
  %b = memref.alloc() : memref<8xf32>
  %base, %off, %size, %stride = memref.extract_strided_metadata %b : memref<8xf32> -> memref<f32>, index, index, index
  bufferization.dealloc (%b, %base : memref<8xf32>, memref<f32>) if (%true, %true)
  return
}

// -----

// A single operand, or none: nothing to split.
// CHECK-LABEL: func.func @single
// CHECK:         bufferization.dealloc (%{{.*}} : memref<4xf32>) if (%true)
// CHECK-NEXT:    return
func.func @single() {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  bufferization.dealloc (%a : memref<4xf32>) if (%true)
  return
}

// zero-gen's GPT: the deallocation that ends the step is split; none with
// several operands is left.
// GEN-LABEL: IR Dump After ZeroSplitDeallocsPass
// GEN:         func.func @forward_backward
// GEN:         bufferization.dealloc (%alloc : memref<2x16x32xf32>) if (%true)
// GEN-NEXT:    bufferization.dealloc (%alloc_{{[0-9]+}} : memref<32xf32>) if (%true)
// GEN-NOT:     bufferization.dealloc ({{[^):]*}},
