// RUN: zero-opt %s --split-input-file --zero-gpu-launch-streams -verify-diagnostics | FileCheck %s

// Two kernel modules become one; a kernel whose name is taken is renamed and
// its launch follows it; every launch waits on the runtime's stream.
// CHECK-LABEL: func.func @step
// CHECK:         %[[S0:.*]] = call @zrt_gpu_stream() : () -> !llvm.ptr
// CHECK:         %[[T0:.*]] = builtin.unrealized_conversion_cast %[[S0]] : !llvm.ptr to !gpu.async.token
// CHECK:         gpu.launch_func async [%[[T0]]] @zero_kernels::@k blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%{{.*}} : memref<4xf32>)
// CHECK:         %[[S1:.*]] = call @zrt_gpu_stream() : () -> !llvm.ptr
// CHECK:         %[[T1:.*]] = builtin.unrealized_conversion_cast %[[S1]] : !llvm.ptr to !gpu.async.token
// CHECK:         gpu.launch_func async [%[[T1]]] @zero_kernels::@[[RENAMED:k_[0-9]+]] blocks
// CHECK:       gpu.module @zero_kernels
// CHECK-DAG:     gpu.func @k(
// CHECK-DAG:     gpu.func @[[RENAMED]](
// CHECK-NOT:   gpu.module
// CHECK:       func.func private @zrt_gpu_stream() -> !llvm.ptr
module attributes {gpu.container_module} {
  func.func @step(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @first::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @second::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @first {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @second {
    gpu.func @k(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %z = arith.constant 0.0 : f32
      memref.store %z, %a[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @already_async(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %t = gpu.wait async
    // expected-error @below {{is already asynchronous; zero-gpu-launch-streams expects the synchronous launches of gpu-kernel-outlining}}
    %d = gpu.launch_func async [%t] @m::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @m {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// No kernels: nothing to do, no declaration.
// CHECK-LABEL: func.func @host_only
// CHECK-NOT:   zrt_gpu_stream
func.func @host_only() {
  return
}
