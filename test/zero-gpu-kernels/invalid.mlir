// RUN: zero-opt %s --zero-gpu-kernels --split-input-file -verify-diagnostics
// RUN: not zero-opt %s --zero-gpu-kernels=block-size=2048 --split-input-file 2>&1 | FileCheck %s --check-prefix=BLOCK

// BLOCK: error: zero-gpu-kernels: block-size must be 1 to 1024 threads, not 2048

func.func @contiguous_copy(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error @below {{copies device buffers in host code, which the cuda target cannot run; lower copies to loops first (zero-lower-strided-copy{contiguous=true})}}
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  return
}

// -----

func.func @atomic_on_host(%a: memref<4xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  // expected-error @below {{reads or writes a buffer in host code, which the cuda target cannot run (device memory)}}
  %r = memref.atomic_rmw addf %v, %a[%c0] : (f32, memref<4xf32>) -> f32
  return
}

// -----

func.func @bool_read(%a: memref<4xi1>) -> i1 {
  %c0 = arith.constant 0 : index
  // expected-error @below {{reads a 'i1' from device memory in host code; the cuda target copies only whole-byte scalars to the host}}
  %v = memref.load %a[%c0] : memref<4xi1>
  return %v : i1
}

// -----

// expected-error @below {{conflicts with the runtime entry point 'zrt_copy_to_host', which must have type '(!llvm.ptr, !llvm.ptr, i64) -> ()'}}
func.func private @zrt_copy_to_host(i32)
func.func @clash(%a: memref<f32>) -> f32 {
  %v = memref.load %a[] : memref<f32>
  return %v : f32
}
