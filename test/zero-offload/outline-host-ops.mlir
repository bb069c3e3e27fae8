// RUN: zero-opt %s -split-input-file --zero-outline-host-ops | FileCheck %s
// RUN: zero-opt %s -split-input-file --zero-outline-host-ops --convert-linalg-to-parallel-loops --zero-outline-loop-nests | FileCheck %s --check-prefix=NESTS
// RUN: zero-opt %s -split-input-file --zero-outline-host-ops --convert-linalg-to-parallel-loops --zero-outline-loop-nests --zero-gpu-kernels | FileCheck %s --check-prefix=GPU
// Host updates (zero.space = "host") move into functions of their own,
// equal ones shared; the nests outlined from them stay on the host, and
// zero-gpu-kernels makes kernels of the others only.

#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @step(
// CHECK: call @step_host0(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<8xf32>, memref<8xf32>, f32) -> ()
// CHECK: call @step_host0(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<8xf32>, memref<8xf32>, f32) -> ()
// CHECK-NOT: call @step_host1
// CHECK: func.func private @step_host0(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>, %{{.*}}: f32) attributes {{{.*}}zero.space = "host"}
// CHECK: linalg.generic
// CHECK-NOT: zero.space
// CHECK: return

// NESTS-LABEL: func.func @step(
// NESTS: call @step_loop0(
// NESTS: call @step_host0(
// NESTS: func.func private @step_loop0({{.*}}) attributes {{{.*}}passthrough = ["noinline"]}
// NESTS-NOT: zero.space
// NESTS: func.func private @step_host0({{.*}}) attributes {{{.*}}zero.space = "host"}
// NESTS: call @step_host0_loop0(
// NESTS: func.func private @step_host0_loop0({{.*}}) attributes {{{.*}}zero.space = "host"}

// GPU-LABEL: func.func private @step_loop0(
// GPU: gpu.launch
// GPU-LABEL: func.func private @step_host0_loop0(
// GPU-NOT: gpu.launch
// GPU: scf.parallel
func.func @step(%g: memref<8xf32>, %w: memref<8xf32>, %v: memref<8xf32>, %lr: f32) {
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%g : memref<8xf32>) {
  ^bb0(%x: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%g : memref<8xf32>) outs(%w : memref<8xf32>) attrs = {zero.space = "host"} {
  ^bb0(%a: f32, %b: f32):
    %d = arith.mulf %lr, %a : f32
    %n = arith.subf %b, %d : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%g : memref<8xf32>) outs(%v : memref<8xf32>) attrs = {zero.space = "host"} {
  ^bb0(%a: f32, %b: f32):
    %d = arith.mulf %lr, %a : f32
    %n = arith.subf %b, %d : f32
    linalg.yield %n : f32
  }
  return
}

