// RUN: zero-opt %s --zero-release-early -split-input-file | FileCheck %s

// A buffer is freed right after its last use, not at the end of the block.
// CHECK-LABEL: func.func @last_use
// CHECK:         %[[A:.*]] = memref.alloc
// CHECK:         linalg.add ins(%[[A]], %{{.*}} : {{.*}}) outs(%arg1
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK-NEXT:    %[[B:.*]] = memref.alloc
// CHECK:         memref.dealloc %[[B]]
// CHECK-NEXT:    return
func.func @last_use(%x: memref<16xf32>, %y: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  linalg.add ins(%x, %x : memref<16xf32>, memref<16xf32>) outs(%a : memref<16xf32>)
  linalg.add ins(%a, %x : memref<16xf32>, memref<16xf32>) outs(%y : memref<16xf32>)
  %b = memref.alloc() : memref<16xf32>
  linalg.add ins(%y, %y : memref<16xf32>, memref<16xf32>) outs(%b : memref<16xf32>)
  linalg.add ins(%b, %y : memref<16xf32>, memref<16xf32>) outs(%y : memref<16xf32>)
  memref.dealloc %a : memref<16xf32>
  memref.dealloc %b : memref<16xf32>
  return
}

// -----

// Uses through views (subview, collapse_shape) and nested regions keep the
// buffer alive until the last of them.
// CHECK-LABEL: func.func @views_and_regions
// CHECK:         %[[A:.*]] = memref.alloc
// CHECK:         scf.for
// CHECK:           memref.load %[[V:.*]][
// CHECK:         }
// CHECK:         linalg.add ins(%{{.*}}, %{{.*}} : memref<4xf32, strided<[1]>>, memref<4xf32>)
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK-NEXT:    linalg.add
// CHECK-NEXT:    return
func.func @views_and_regions(%x: memref<4xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<2x4xf32>
  %flat = memref.collapse_shape %a [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  %row = memref.subview %flat[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %row[%i] : memref<4xf32, strided<[1], offset: 4>>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  %first = memref.subview %a[0, 0] [1, 4] [1, 1] : memref<2x4xf32> to memref<4xf32, strided<[1]>>
  linalg.add ins(%first, %x : memref<4xf32, strided<[1]>>, memref<4xf32>) outs(%y : memref<4xf32>)
  linalg.add ins(%x, %x : memref<4xf32>, memref<4xf32>) outs(%y : memref<4xf32>)
  memref.dealloc %a : memref<2x4xf32>
  return
}

// -----

// An address taken as an integer stays in use until the call that gets it.
// CHECK-LABEL: func.func @address_taken
// CHECK:         %[[A:.*]] = memref.alloc
// CHECK:         %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK:         %[[I:.*]] = arith.index_cast %[[P]]
// CHECK:         linalg.add
// CHECK-NEXT:    call @consume(%[[I]])
// CHECK-NEXT:    memref.dealloc %[[A]]
func.func private @consume(i64)
func.func @address_taken(%x: memref<4xf32>, %y: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
  %i = arith.index_cast %p : index to i64
  linalg.add ins(%x, %x : memref<4xf32>, memref<4xf32>) outs(%y : memref<4xf32>)
  call @consume(%i) : (i64) -> ()
  linalg.add ins(%x, %x : memref<4xf32>, memref<4xf32>) outs(%y : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// Conditional deallocations (unknown ownership) stay where they are.
// CHECK-LABEL: func.func @conditional
// CHECK:         linalg.add
// CHECK-NEXT:    linalg.add
// CHECK-NEXT:    scf.if
// CHECK-NEXT:      memref.dealloc
func.func @conditional(%x: memref<4xf32>, %y: memref<4xf32>, %own: i1) {
  %a = memref.alloc() : memref<4xf32>
  linalg.add ins(%a, %a : memref<4xf32>, memref<4xf32>) outs(%y : memref<4xf32>)
  linalg.add ins(%x, %x : memref<4xf32>, memref<4xf32>) outs(%y : memref<4xf32>)
  scf.if %own {
    memref.dealloc %a : memref<4xf32>
  }
  return
}
