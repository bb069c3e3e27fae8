// The target's GEMM: on the CPU a bf16 x bf16 -> f32 matmul runs as
// zrt_gemm_bf16_f32, which widens A and B into f32 temporaries for the call
// (runtime.h); cuBLASLt on the cuda target multiplies bf16 natively and
// allocates nothing. f32 matmuls allocate nothing on either.
// RUN: zero-opt %s --zero-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: zero-opt %s --zero-memory-report=target=cpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: zero-opt %s --zero-memory-report=target=cuda -o /dev/null 2>&1 | FileCheck %s --check-prefix=CUDA
// RUN: not zero-opt %s --zero-memory-report=target=tpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// C is 4x16 f32 (256 bytes); A 4x8 and B 8x16 widen to (32 + 128) x 4 = 640.
// CPU: remark: zero-memory-report: model states params 0 grads 0 optimizer_states 0 bytes; generated peak 896 bytes
// CUDA: remark: zero-memory-report: model states params 0 grads 0 optimizer_states 0 bytes; generated peak 256 bytes
func.func @matmul(%a: memref<4x8xbf16>, %b: memref<8x16xbf16>) attributes {zero.role = "forward_backward"} {
  %c = memref.alloc() : memref<4x16xf32>
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xf32>)
  memref.dealloc %c : memref<4x16xf32>
  return
}

// Batched: C 2x4x16 f32 (512 bytes); A 2x4x8 and B 2x8x16 widen to
// (64 + 256) x 4 = 1280.
// CPU: remark: zero-memory-report: model states params 0 grads 0 optimizer_states 0 bytes; generated peak 1792 bytes
// CUDA: remark: zero-memory-report: model states params 0 grads 0 optimizer_states 0 bytes; generated peak 512 bytes
func.func @batched(%a: memref<2x4x8xbf16>, %b: memref<2x8x16xbf16>) attributes {zero.role = "forward_backward"} {
  %c = memref.alloc() : memref<2x4x16xf32>
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xbf16>, memref<2x8x16xbf16>) outs(%c : memref<2x4x16xf32>)
  memref.dealloc %c : memref<2x4x16xf32>
  return
}

// f32: the same on both targets.
// CPU: remark: zero-memory-report: model states params 0 grads 0 optimizer_states 0 bytes; generated peak 256 bytes
// CUDA: remark: zero-memory-report: model states params 0 grads 0 optimizer_states 0 bytes; generated peak 256 bytes
func.func @f32(%a: memref<4x8xf32>, %b: memref<8x16xf32>) attributes {zero.role = "forward_backward"} {
  %c = memref.alloc() : memref<4x16xf32>
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  memref.dealloc %c : memref<4x16xf32>
  return
}

// BAD: Cannot find option named 'tpu'
