// RUN: zero-opt %s --pass-pipeline='builtin.module(func.func(zero-pad-gemm-rows))' -split-input-file | FileCheck %s
// RUN: zero-opt %s --pass-pipeline='builtin.module(func.func(zero-pad-gemm-rows{row-alignment=16}))' -split-input-file | FileCheck %s --check-prefix=A16

// A GEMM's output and input with rows of 1000 f32 (4000 bytes): padded to
// 1024 (a multiple of 128 bytes), used through a subview of the original
// shape, freed as the padded buffer; the category stays on it.
// CHECK-LABEL: func.func @logits
// CHECK:         %[[P:.*]] = memref.alloc() {alignment = 64 : i64, zero.category = "activations"} : memref<8x1024xf32>
// CHECK:         %[[L:.*]] = memref.subview %[[P]][0, 0] [8, 1000] [1, 1] : memref<8x1024xf32> to memref<8x1000xf32, strided<[1024, 1]>>
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[L]] : memref<8x1000xf32, strided<[1024, 1]>>)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : memref<8x32xf32>, memref<32x1000xf32>) outs(%[[L]] : memref<8x1000xf32, strided<[1024, 1]>>)
// CHECK:         memref.load %[[L]][%{{.*}}, %{{.*}}] : memref<8x1000xf32, strided<[1024, 1]>>
// CHECK:         linalg.matmul ins(%[[L]], %{{.*}} : memref<8x1000xf32, strided<[1024, 1]>>, memref<1000x32xf32>)
// CHECK:         memref.dealloc %[[P]] : memref<8x1024xf32>
// With 16-byte rows, 4000 bytes are aligned already.
// A16-LABEL: func.func @logits
// A16:         memref.alloc() {{.*}} : memref<8x1000xf32>
// A16-NOT:     memref.subview
func.func @logits(%x: memref<8x32xf32>, %w: memref<32x1000xf32>,
                  %wt: memref<1000x32xf32>, %dx: memref<8x32xf32>,
                  %i: index) -> f32 {
  %zero = arith.constant 0.0 : f32
  %l = memref.alloc() {alignment = 64 : i64, zero.category = "activations"} : memref<8x1000xf32>
  linalg.fill ins(%zero : f32) outs(%l : memref<8x1000xf32>)
  linalg.matmul ins(%x, %w : memref<8x32xf32>, memref<32x1000xf32>)
                outs(%l : memref<8x1000xf32>)
  %v = memref.load %l[%i, %i] : memref<8x1000xf32>
  linalg.matmul ins(%l, %wt : memref<8x1000xf32>, memref<1000x32xf32>)
                outs(%dx : memref<8x32xf32>)
  memref.dealloc %l : memref<8x1000xf32>
  return %v : f32
}

// -----

// bf16 rows of 1003 elements (2006 bytes) pad to 1024 (128 bytes are 64
// bf16); a batch_matmul's operand of rank 3 pads its innermost dimension.
// CHECK-LABEL: func.func @bf16_batched
// CHECK:         %[[P:.*]] = memref.alloc() : memref<2x4x1024xbf16>
// CHECK:         %[[V:.*]] = memref.subview %[[P]][0, 0, 0] [2, 4, 1003] [1, 1, 1] : memref<2x4x1024xbf16> to memref<2x4x1003xbf16, strided<[4096, 1024, 1]>>
// CHECK:         linalg.batch_matmul ins(%[[V]], %{{.*}} : memref<2x4x1003xbf16, strided<[4096, 1024, 1]>>, memref<2x1003x8xbf16>)
// CHECK:         memref.dealloc %[[P]] : memref<2x4x1024xbf16>
// With 16-byte rows (cuBLASLt's least), 1003 bf16 pad to 1008.
// A16-LABEL: func.func @bf16_batched
// A16:         memref.subview %{{.*}}[0, 0, 0] [2, 4, 1003] [1, 1, 1] : memref<2x4x1008xbf16> to memref<2x4x1003xbf16, strided<[4032, 1008, 1]>>
func.func @bf16_batched(%b: memref<2x1003x8xbf16>, %c: memref<2x4x8xbf16>) {
  %a = memref.alloc() : memref<2x4x1003xbf16>
  linalg.batch_matmul ins(%a, %b : memref<2x4x1003xbf16>, memref<2x1003x8xbf16>)
                      outs(%c : memref<2x4x8xbf16>)
  memref.dealloc %a : memref<2x4x1003xbf16>
  return
}

// -----

// Left as they are: rows already aligned (256 f32); no GEMM among the uses;
// a use that needs the identity layout (a view, a call, a return); padding
// over 6% of the buffer (100 f32 rows would become 128); a rank-1 buffer.
// CHECK-LABEL: func.func @unpadded
// CHECK-NOT:     memref.subview
// CHECK:         return
func.func private @take(memref<4x1000xf32>)
func.func @unpadded(%x: memref<4x8xf32>, %w: memref<8x256xf32>,
                    %w2: memref<8x1000xf32>, %w3: memref<8x100xf32>,
                    %src: memref<4x1000xf32>)
    -> memref<4x1000xf32> {
  %aligned = memref.alloc() : memref<4x256xf32>
  linalg.matmul ins(%x, %w : memref<4x8xf32>, memref<8x256xf32>)
                outs(%aligned : memref<4x256xf32>)
  memref.dealloc %aligned : memref<4x256xf32>
  %nogemm = memref.alloc() : memref<4x1000xf32>
  linalg.copy ins(%src : memref<4x1000xf32>) outs(%nogemm : memref<4x1000xf32>)
  memref.dealloc %nogemm : memref<4x1000xf32>
  %viewed = memref.alloc() : memref<4x1000xf32>
  linalg.matmul ins(%x, %w2 : memref<4x8xf32>, memref<8x1000xf32>)
                outs(%viewed : memref<4x1000xf32>)
  %c = memref.collapse_shape %viewed [[0, 1]] : memref<4x1000xf32> into memref<4000xf32>
  memref.dealloc %viewed : memref<4x1000xf32>
  %called = memref.alloc() : memref<4x1000xf32>
  linalg.matmul ins(%x, %w2 : memref<4x8xf32>, memref<8x1000xf32>)
                outs(%called : memref<4x1000xf32>)
  func.call @take(%called) : (memref<4x1000xf32>) -> ()
  memref.dealloc %called : memref<4x1000xf32>
  %small = memref.alloc() : memref<4x100xf32>
  linalg.matmul ins(%x, %w3 : memref<4x8xf32>, memref<8x100xf32>)
                outs(%small : memref<4x100xf32>)
  memref.dealloc %small : memref<4x100xf32>
  %returned = memref.alloc() : memref<4x1000xf32>
  linalg.matmul ins(%x, %w2 : memref<4x8xf32>, memref<8x1000xf32>)
                outs(%returned : memref<4x1000xf32>)
  return %returned : memref<4x1000xf32>
}
