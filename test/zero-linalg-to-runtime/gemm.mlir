// RUN: zero-opt %s --zero-linalg-to-runtime -split-input-file | FileCheck %s
// RUN: zero-opt %s --zero-linalg-to-runtime -split-input-file --canonicalize --cse | FileCheck %s --check-prefix=FOLDED

// A row-major f32 matmul becomes one zrt_gemm_f32 call: no transposition
// (0, 0), m, n, k, then
// pointer and leading dimension of A and B, beta = 1 (linalg.matmul
// accumulates), pointer and leading dimension of C.
// CHECK-LABEL: func.func @matmul_f32
// CHECK-SAME:    (%[[A:.*]]: memref<8x4xf32>, %[[B:.*]]: memref<4x16xf32>, %[[C:.*]]: memref<8x16xf32>)
// CHECK-DAG:     memref.extract_aligned_pointer_as_index %[[A]]
// CHECK-DAG:     memref.extract_aligned_pointer_as_index %[[B]]
// CHECK-DAG:     memref.extract_aligned_pointer_as_index %[[C]]
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         call @zrt_gemm_f32(%c0_i32, %c0_i32, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}) : (i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> ()
// CHECK-NOT:     linalg.matmul
// CHECK:         func.func private @zrt_gemm_f32(i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
func.func @matmul_f32(%a: memref<8x4xf32>, %b: memref<4x16xf32>, %c: memref<8x16xf32>) {
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  return
}

// -----

// Sizes and leading dimensions come from the buffers' metadata, so a view
// with a row stride larger than its width (a column block) works too; the
// pointer includes the view's offset.
// CHECK-LABEL: func.func @strided_view_f64
// CHECK:         %[[BASE:.*]], %[[OFF:.*]], %[[SIZES:.*]]:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %{{.*}} : memref<4x2xf64, strided<[8, 1], offset: 2>>
// CHECK:         %[[P:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<4x2xf64, strided<[8, 1], offset: 2>>
// CHECK:         %[[OFF64:.*]] = arith.index_cast %[[OFF]] : index to i64
// CHECK:         llvm.getelementptr %{{.*}}[%[[OFF64]]] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// CHECK:         call @zrt_gemm_f64
func.func @strided_view_f64(%a: memref<3x4xf64>, %whole: memref<4x8xf64>, %c: memref<3x2xf64>) {
  %b = memref.subview %whole[0, 2] [4, 2] [1, 1] : memref<4x8xf64> to memref<4x2xf64, strided<[8, 1], offset: 2>>
  linalg.matmul ins(%a, %b : memref<3x4xf64>, memref<4x2xf64, strided<[8, 1], offset: 2>>) outs(%c : memref<3x2xf64>)
  return
}

// -----

// batch_matmul passes the batch count and each operand's batch stride.
// CHECK-LABEL: func.func @batch_matmul
// CHECK:         call @zrt_gemm_batched_f32({{.*}}) : (i32, i32, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64) -> ()
// CHECK-NOT:     linalg.batch_matmul
func.func @batch_matmul(%a: memref<4x8x2xf32>, %b: memref<4x2x8xf32>, %c: memref<4x8x8xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x8x2xf32>, memref<4x2x8xf32>) outs(%c : memref<4x8x8xf32>)
  return
}

// -----

// Transposed operands (what zero-fold-transposes writes) become transpose
// flags; m, n come from C and k from A as stored (k x m when transposed):
// after canonicalization the sizes are the constants 8, 16, 4 and the
// leading dimensions those of the stored matrices.
// FOLDED-LABEL: func.func @transposed
// FOLDED:         call @zrt_gemm_f32(%c1_i32, %c0_i32, %c8_i64, %c16_i64, %c4_i64, %{{.*}}, %c8_i64, %{{.*}}, %c16_i64,
// FOLDED:         call @zrt_gemm_f32(%c0_i32, %c1_i32, %c8_i64, %c16_i64, %c4_i64, %{{.*}}, %c4_i64, %{{.*}}, %c4_i64,
// CHECK-LABEL: func.func @transposed
// CHECK:         call @zrt_gemm_f32(%c1_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}},
// CHECK:         call @zrt_gemm_f32(%c0_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}},
// CHECK:         call @zrt_gemm_batched_f32(%c1_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}},
// CHECK-NOT:     linalg.matmul
// CHECK-NOT:     linalg.batch_matmul
func.func @transposed(%at: memref<4x8xf32>, %b: memref<4x16xf32>, %a: memref<8x4xf32>,
                      %bt: memref<16x4xf32>, %c: memref<8x16xf32>,
                      %bat: memref<2x4x8xf32>, %bbt: memref<2x16x4xf32>, %bc: memref<2x8x16xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                 affine_map<(m, n, k) -> (k, n)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%at, %b : memref<4x8xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                 affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %bt : memref<8x4xf32>, memref<16x4xf32>) outs(%c : memref<8x16xf32>)
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, k, m)>,
                                       affine_map<(b, m, n, k) -> (b, n, k)>,
                                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%bat, %bbt : memref<2x4x8xf32>, memref<2x16x4xf32>) outs(%bc : memref<2x8x16xf32>)
  return
}

// -----

// Left for the loop lowering: indexing maps that are no GEMM (a broadcast
// operand, a transposed result), non-contiguous rows, tensors, and element
// types the runtime has no GEMM for.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-5: linalg.matmul
// CHECK-NOT:     call @zrt_gemm
func.func @left_alone(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>,
                      %s: memref<4x4xf32, strided<[1, 4]>>, %t: tensor<4x4xf32>,
                      %ai: memref<4x4xi32>, %ci: memref<4x4xi32>, %v: memref<4xf32>) -> tensor<4x4xf32> {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k)>,
                                 affine_map<(m, n, k) -> (k, n)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%v, %b : memref<4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                 affine_map<(m, n, k) -> (k, n)>,
                                 affine_map<(m, n, k) -> (n, m)>]
      ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  linalg.matmul ins(%s, %b : memref<4x4xf32, strided<[1, 4]>>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  %r = linalg.matmul ins(%t, %t : tensor<4x4xf32>, tensor<4x4xf32>) outs(%t : tensor<4x4xf32>) -> tensor<4x4xf32>
  linalg.matmul ins(%ai, %ai : memref<4x4xi32>, memref<4x4xi32>) outs(%ci : memref<4x4xi32>)
  return %r : tensor<4x4xf32>
}

// -----

// Mixed precision: bf16 A and B accumulating into an f32 C (zero-gen
// --dtype bf16's matmuls) become zrt_gemm_bf16_f32, A and B passed as bf16
// pointers, beta and C in f32; the batched form likewise.
// CHECK-LABEL: func.func @matmul_bf16_f32
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         call @zrt_gemm_bf16_f32(%c0_i32, %c0_i32, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}) : (i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> ()
// CHECK:         call @zrt_gemm_batched_bf16_f32(
// CHECK-NOT:     linalg.matmul
// CHECK-NOT:     linalg.batch_matmul
func.func @matmul_bf16_f32(%a: memref<8x4xbf16>, %b: memref<4x16xbf16>, %c: memref<8x16xf32>,
                           %x: memref<2x8x4xbf16>, %y: memref<2x4x16xbf16>, %z: memref<2x8x16xf32>) {
  linalg.matmul ins(%a, %b : memref<8x4xbf16>, memref<4x16xbf16>) outs(%c : memref<8x16xf32>)
  linalg.batch_matmul ins(%x, %y : memref<2x8x4xbf16>, memref<2x4x16xbf16>) outs(%z : memref<2x8x16xf32>)
  return
}

// -----

// A bf16 matmul into bf16 (accumulating in bf16) and one mixing bf16 with
// f32 inputs have no runtime GEMM: they stay for the loop lowering.
// CHECK-LABEL: func.func @matmul_bf16_kept
// CHECK-COUNT-2: linalg.matmul
// CHECK-NOT:     call @zrt_gemm
func.func @matmul_bf16_kept(%a: memref<8x4xbf16>, %b: memref<4x16xbf16>, %c: memref<8x16xbf16>,
                            %f: memref<4x16xf32>, %d: memref<8x16xf32>) {
  linalg.matmul ins(%a, %b : memref<8x4xbf16>, memref<4x16xbf16>) outs(%c : memref<8x16xbf16>)
  linalg.matmul ins(%a, %f : memref<8x4xbf16>, memref<4x16xf32>) outs(%d : memref<8x16xf32>)
  return
}

// -----

// A zero fill of C just before the matmul (views and constants may sit in
// between) is dead: the GEMM overwrites C with beta = 0 (its 13th
// argument) and the fill goes.
// CHECK-LABEL: func.func @zero_filled
// CHECK-NOT:     linalg.fill
// CHECK:         arith.constant 1 : i32
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    call @zrt_gemm_batched_f32({{(%[^,]+, ){12} *}}%[[ZERO]],
// CHECK-NOT:     linalg.fill
// CHECK:         return
func.func @zero_filled(%a: memref<4x8x2xf32>, %b: memref<4x2x8xf32>, %c: memref<4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x8x8xf32>)
  %one = arith.constant 1.0 : f32
  linalg.batch_matmul ins(%a, %b : memref<4x8x2xf32>, memref<4x2x8xf32>) outs(%c : memref<4x8x8xf32>)
  return
}

// -----

// Other fills stay, and beta (the 10th argument) stays 1: a nonzero value,
// a fill of another buffer than C, a fill an op that touches memory
// separates from the matmul.
// CHECK-LABEL: func.func @fills_kept
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<8x16xf32>)
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    call @zrt_gemm_f32({{(%[^,]+, ){9} *}}%[[ONE]],
// CHECK:         linalg.fill
// CHECK:         %[[ONE2:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    call @zrt_gemm_f32({{(%[^,]+, ){9} *}}%[[ONE2]],
// CHECK:         linalg.fill
// CHECK:         memref.store
// CHECK:         %[[ONE3:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    call @zrt_gemm_f32({{(%[^,]+, ){9} *}}%[[ONE3]],
// CHECK:         return
func.func @fills_kept(%a: memref<8x4xf32>, %b: memref<4x16xf32>, %c: memref<8x16xf32>, %d: memref<8x16xf32>) {
  %two = arith.constant 2.0 : f32
  linalg.fill ins(%two : f32) outs(%c : memref<8x16xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%d : memref<8x16xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<8x16xf32>)
  %i = arith.constant 0 : index
  memref.store %two, %c[%i, %i] : memref<8x16xf32>
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  return
}

// -----

// A fill of C that A reads (a view of the same buffer) stays: the GEMM
// must see its zeros.
// CHECK-LABEL: func.func @fill_read_by_a
// CHECK:         linalg.fill
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    call @zrt_gemm_f32({{(%[^,]+, ){9} *}}%[[ONE]],
func.func @fill_read_by_a(%b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %v = memref.subview %c[0, 0] [8, 8] [1, 1] : memref<8x8xf32> to memref<8x8xf32, strided<[8, 1]>>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x8xf32>)
  linalg.matmul ins(%v, %b : memref<8x8xf32, strided<[8, 1]>>, memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  return
}
