// RUN: zero-opt %s --zero-lower-strided-copy | FileCheck %s
// RUN: zero-opt %s --zero-lower-strided-copy=contiguous=true | FileCheck %s --check-prefix=ALL

// A copy into a column block (strided, not contiguous): a linalg copy.
// CHECK-LABEL: func.func @column_block
// CHECK-SAME:    (%[[SRC:.*]]: memref<2x2xf32>, %[[DST:.*]]: memref<2x4xf32>)
// CHECK:         %[[SV:.*]] = memref.subview %[[DST]][0, 2] [2, 2] [1, 1]
// CHECK-NOT:     memref.copy
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[SRC]] : memref<2x2xf32>) outs(%[[SV]] : memref<2x2xf32, strided<[4, 1], offset: 2>>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]] : f32
func.func @column_block(%src: memref<2x2xf32>, %dst: memref<2x4xf32>) {
  %sv = memref.subview %dst[0, 2] [2, 2] [1, 1] : memref<2x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 2>>
  memref.copy %src, %sv : memref<2x2xf32> to memref<2x2xf32, strided<[4, 1], offset: 2>>
  return
}

// A copy from a strided source (a column block) into a contiguous buffer.
// CHECK-LABEL: func.func @from_column_block
// CHECK-NOT:     memref.copy
// CHECK:         linalg.generic
func.func @from_column_block(%src: memref<4x4xf32>, %dst: memref<4x1xf32>) {
  %sv = memref.subview %src[0, 3] [4, 1] [1, 1] : memref<4x4xf32> to memref<4x1xf32, strided<[4, 1], offset: 3>>
  memref.copy %sv, %dst : memref<4x1xf32, strided<[4, 1], offset: 3>> to memref<4x1xf32>
  return
}

// Contiguous copies (identity layouts, a row block with an offset) stay
// memref.copy: the LLVM lowering makes them a memcpy.
// CHECK-LABEL: func.func @contiguous
// CHECK:         memref.copy %{{.*}}, %{{.*}} : memref<4xf32> to memref<4xf32>
// CHECK:         memref.copy %{{.*}}, %{{.*}} : memref<1x4xf32> to memref<1x4xf32, strided<[4, 1], offset: 4>>
// CHECK-NOT:     linalg.generic
// With contiguous=true (target=cuda) they are loops too.
// ALL-LABEL: func.func @contiguous
// ALL-NOT:     memref.copy
// ALL:         linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
// ALL:         linalg.generic {{.*}} ins(%{{.*}} : memref<1x4xf32>) outs(%{{.*}} : memref<1x4xf32, strided<[4, 1], offset: 4>>)
// ALL-NOT:     memref.copy
func.func @contiguous(%a: memref<4xf32>, %b: memref<4xf32>, %r: memref<1x4xf32>, %m: memref<2x4xf32>) {
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  %row = memref.subview %m[1, 0] [1, 4] [1, 1] : memref<2x4xf32> to memref<1x4xf32, strided<[4, 1], offset: 4>>
  memref.copy %r, %row : memref<1x4xf32> to memref<1x4xf32, strided<[4, 1], offset: 4>>
  return
}
