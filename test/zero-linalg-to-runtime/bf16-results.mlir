// RUN: zero-opt %s --zero-linalg-to-runtime=bf16-results=true -split-input-file | FileCheck %s
// RUN: zero-opt %s --zero-linalg-to-runtime=bf16-results=true\ bf16-results-only=true -split-input-file | FileCheck %s --check-prefix=ONLY
// RUN: zero-opt %s --zero-linalg-to-runtime -split-input-file | FileCheck %s --check-prefix=OFF

#id = affine_map<(d0, d1) -> (d0, d1)>

// A bf16 matmul into a fresh, zero-filled f32 buffer that is only rounded
// to bf16: one zrt_gemm_bf16_bf16 writing the bf16 buffer (beta 0), placed
// where the rounding was; the f32 buffer, its fill, the rounding and the
// deallocation are gone.
// CHECK-LABEL: func.func @rounded
// CHECK-SAME:    (%[[A:.*]]: memref<8x4xbf16>, %[[B:.*]]: memref<4x16xbf16>)
// CHECK-NOT:     memref.alloc() : memref<8x16xf32>
// CHECK:         %[[D:.*]] = memref.alloc() : memref<8x16xbf16>
// CHECK-DAG:     memref.extract_aligned_pointer_as_index %[[D]]
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         call @zrt_gemm_bf16_bf16(%c0_i32, %c0_i32, {{.*}}, %[[ZERO]], {{.*}}) : (i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> ()
// CHECK-NOT:     linalg
// CHECK-NOT:     memref.dealloc
// CHECK:         return %[[D]]
// ONLY-LABEL: func.func @rounded
// ONLY:         call @zrt_gemm_bf16_bf16
// OFF-LABEL: func.func @rounded
// OFF:          call @zrt_gemm_bf16_f32
// OFF:          linalg.generic
func.func @rounded(%a: memref<8x4xbf16>, %b: memref<4x16xbf16>) -> memref<8x16xbf16> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x16xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xbf16>, memref<4x16xbf16>) outs(%c : memref<8x16xf32>)
  %d = memref.alloc() : memref<8x16xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x16xf32>) outs(%d : memref<8x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %c : memref<8x16xf32>
  return %d : memref<8x16xbf16>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The backward pass's shape: the matmul's operand freed before the
// rounding, which writes a gradient argument. The GEMM takes the matmul's
// place, before the deallocation, and writes the argument.
// CHECK-LABEL: func.func @into_argument
// CHECK-SAME:    (%[[A:.*]]: memref<4x8xbf16>, %[[B:.*]]: memref<4x16xbf16>, %[[G:.*]]: memref<8x16xbf16>)
// CHECK:         %[[AA:.*]] = memref.alloc() : memref<4x8xbf16>
// CHECK:         memref.copy %[[A]], %[[AA]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[G]]
// CHECK:         call @zrt_gemm_bf16_bf16(%c1_i32, %c0_i32,
// CHECK-NEXT:    memref.dealloc %[[AA]]
// CHECK-NEXT:    return
func.func @into_argument(%a: memref<4x8xbf16>, %b: memref<4x16xbf16>, %g: memref<8x16xbf16>) {
  %zero = arith.constant 0.0 : f32
  %aa = memref.alloc() : memref<4x8xbf16>
  memref.copy %a, %aa : memref<4x8xbf16> to memref<4x8xbf16>
  %c = memref.alloc() : memref<8x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x16xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%aa, %b : memref<4x8xbf16>, memref<4x16xbf16>) outs(%c : memref<8x16xf32>)
  memref.dealloc %aa : memref<4x8xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x16xf32>) outs(%g : memref<8x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %c : memref<8x16xf32>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// The f32 buffer starts as a bias broadcast (bf16 widened exactly): the
// broadcast writes the bf16 buffer instead (bf16 in, bf16 out; its
// allocation moved up), and the GEMM accumulates into it (beta 1).
// CHECK-LABEL: func.func @bias
// CHECK-SAME:    (%[[A:.*]]: memref<8x4xbf16>, %[[B:.*]]: memref<4x16xbf16>, %[[BIAS:.*]]: memref<16xbf16>)
// CHECK:         %[[D:.*]] = memref.alloc() : memref<8x16xbf16>
// CHECK:         linalg.generic {{.*}} ins(%[[BIAS]] : memref<16xbf16>) outs(%[[D]] : memref<8x16xbf16>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT:      linalg.yield %[[IN]] : bf16
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         call @zrt_gemm_bf16_bf16({{.*}}, %[[ONE]], {{.*}})
// CHECK-NOT:     f32>
// CHECK:         return %[[D]]
func.func @bias(%a: memref<8x4xbf16>, %b: memref<4x16xbf16>, %bias: memref<16xbf16>) -> memref<8x16xbf16> {
  %c = memref.alloc() : memref<8x16xf32>
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<16xbf16>) outs(%c : memref<8x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    linalg.yield %e : f32
  }
  linalg.matmul ins(%a, %b : memref<8x4xbf16>, memref<4x16xbf16>) outs(%c : memref<8x16xf32>)
  %d = memref.alloc() : memref<8x16xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x16xf32>) outs(%d : memref<8x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %c : memref<8x16xf32>
  return %d : memref<8x16xbf16>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ma = affine_map<(b, m, n, k) -> (b, m, k)>
#mbt = affine_map<(b, m, n, k) -> (b, n, k)>
#mc = affine_map<(b, m, n, k) -> (b, m, n)>

// Batched, B read transposed, the f32 buffer zero-pad-gemm-rows's subview
// of a padded allocation, and the bf16 buffer a padded one too: the GEMM
// writes it with its padded stride; both allocations of the f32 buffer go.
// CHECK-LABEL: func.func @batched_padded
// CHECK-NOT:     xf32>
// CHECK:         %[[P:.*]] = memref.alloc() : memref<2x8x32xbf16>
// CHECK:         %[[D:.*]] = memref.subview %[[P]]
// CHECK:         call @zrt_gemm_batched_bf16_bf16(%c0_i32, %c1_i32,
// CHECK-NOT:     linalg
// CHECK:         return
func.func @batched_padded(%a: memref<2x8x4xbf16>, %b: memref<2x30x4xbf16>) -> memref<2x8x32xbf16> {
  %zero = arith.constant 0.0 : f32
  %cp = memref.alloc() : memref<2x8x32xf32>
  %c = memref.subview %cp[0, 0, 0] [2, 8, 30] [1, 1, 1] : memref<2x8x32xf32> to memref<2x8x30xf32, strided<[256, 32, 1]>>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x8x30xf32, strided<[256, 32, 1]>>)
  linalg.batch_matmul indexing_maps = [#ma, #mbt, #mc]
      ins(%a, %b : memref<2x8x4xbf16>, memref<2x30x4xbf16>)
      outs(%c : memref<2x8x30xf32, strided<[256, 32, 1]>>)
  %dp = memref.alloc() : memref<2x8x32xbf16>
  %d = memref.subview %dp[0, 0, 0] [2, 8, 30] [1, 1, 1] : memref<2x8x32xbf16> to memref<2x8x30xbf16, strided<[256, 32, 1]>>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c : memref<2x8x30xf32, strided<[256, 32, 1]>>) outs(%d : memref<2x8x30xbf16, strided<[256, 32, 1]>>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %cp : memref<2x8x32xf32>
  return %dp : memref<2x8x32xbf16>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Left as they are (a bf16 GEMM into f32, the rounding kept): the f32 result
// read by something else too; neither a zero fill nor a widening before the
// matmul (it accumulates into what was there); a rounding that computes
// more than truncf; a store between the matmul and the rounding. With bf16-results-only none of them
// is lowered at all.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: call @zrt_gemm_bf16_f32
// CHECK-NOT:     call @zrt_gemm_bf16_bf16
// ONLY-LABEL: func.func @kept
// ONLY-NOT:     call @zrt_gemm
// ONLY-COUNT-4: linalg.matmul
func.func @kept(%a: memref<8x4xbf16>, %b: memref<4x16xbf16>, %x: memref<8x16xf32>,
                %s: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %d = memref.alloc() : memref<8x16xbf16>
  // Read again.
  %c1 = memref.alloc() : memref<8x16xf32>
  linalg.fill ins(%zero : f32) outs(%c1 : memref<8x16xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xbf16>, memref<4x16xbf16>) outs(%c1 : memref<8x16xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c1 : memref<8x16xf32>) outs(%d : memref<8x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.copy %c1, %x : memref<8x16xf32> to memref<8x16xf32>
  memref.dealloc %c1 : memref<8x16xf32>
  // Not zero-filled.
  %c2 = memref.alloc() : memref<8x16xf32>
  linalg.matmul ins(%a, %b : memref<8x4xbf16>, memref<4x16xbf16>) outs(%c2 : memref<8x16xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c2 : memref<8x16xf32>) outs(%d : memref<8x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %c2 : memref<8x16xf32>
  // Scaled before rounding.
  %c3 = memref.alloc() : memref<8x16xf32>
  linalg.fill ins(%zero : f32) outs(%c3 : memref<8x16xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xbf16>, memref<4x16xbf16>) outs(%c3 : memref<8x16xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c3 : memref<8x16xf32>) outs(%d : memref<8x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %m = arith.mulf %in, %two : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %c3 : memref<8x16xf32>
  // A store in between.
  %c4 = memref.alloc() : memref<8x16xf32>
  linalg.fill ins(%zero : f32) outs(%c4 : memref<8x16xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xbf16>, memref<4x16xbf16>) outs(%c4 : memref<8x16xf32>)
  memref.store %two, %s[] : memref<f32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c4 : memref<8x16xf32>) outs(%d : memref<8x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %c4 : memref<8x16xf32>
  memref.dealloc %d : memref<8x16xbf16>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A long reduction (K = 16,384, four times the larger side of the 16 x 64
// result): the CUDA backend runs it in chunks of K accumulated into an f32
// C, which a bf16 result would round at every chunk. The f32 buffer and
// the rounding stay.
// CHECK-LABEL: func.func @long_reduction
// CHECK:         memref.alloc() : memref<16x64xf32>
// CHECK:         call @zrt_gemm_bf16_f32(
// CHECK:         linalg.generic
// CHECK:         arith.truncf
// ONLY-LABEL: func.func @long_reduction
// ONLY:         linalg.matmul
// ONLY-NOT:     call @zrt_gemm
func.func @long_reduction(%a: memref<16x16384xbf16>, %b: memref<16384x64xbf16>) -> memref<16x64xbf16> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<16x64xf32>)
  linalg.matmul ins(%a, %b : memref<16x16384xbf16>, memref<16384x64xbf16>) outs(%c : memref<16x64xf32>)
  %d = memref.alloc() : memref<16x64xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<16x64xf32>) outs(%d : memref<16x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %c : memref<16x64xf32>
  return %d : memref<16x64xbf16>
}
