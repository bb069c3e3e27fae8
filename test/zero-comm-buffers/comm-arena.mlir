// RUN: zero-opt %s --zero-comm-buffers -split-input-file | FileCheck %s
// RUN: zero-opt %s --zero-comm-buffers -split-input-file --zero-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: zero-opt %s --zero-comm-buffers=target=cuda -split-input-file | FileCheck %s --check-prefix=CUDA
// RUN: zero-opt %s --zero-comm-buffers=target=cuda -split-input-file --zero-memory-report=target=cuda -o /dev/null 2>&1 | FileCheck %s --check-prefix=CUDA-REPORT

// target=cuda: the CUDA backend's collectives take no scratch of the
// runtime's (a world of one copies; more ranks are NCCL's, whose buffers
// are its own), so no arena is reserved and nothing is counted to comm,
// for the started collectives and for the blocking scalar ones alike.
// CUDA-LABEL: func.func @runs(
// CUDA:         zero.reduce_scatter_start
// CUDA-NOT:     zero.comm_
// CUDA-LABEL: func.func @largest_first(
// CUDA-NOT:     zero.comm_
// CUDA-LABEL: func.func @scalar_inside(
// CUDA-NOT:     zero.comm_
// CUDA-LABEL: func.func @gathers_only(
// CUDA-NOT:     zero.comm_
// CUDA-LABEL: func.func @in_loop(
// CUDA-NOT:     zero.comm_
// CUDA-REPORT-COUNT-3: stage 2 on 2 ranks: {{.*}}, comm 0)
// CUDA-REPORT-NOT: comm {{[1-9]}}

// Started reductions take their scratch (N blocks of the segment) from the
// communication arena, reserved and released at fixed points: in each run
// of overlapping start-to-wait intervals, a reservation before every start
// that needs more than the run has reserved, and a release after the wait
// that ends the run. On 2 ranks: the f64 reduce-scatter of 4 elements needs
// 2 * 4 * 8 = 64 bytes, the f32 one of 100 elements 800 (a second buffer
// beside the first), the all-reduce of 7 elements two pieces of 2 * 4 * 4 =
// 32 bytes, the second at the next 64-byte boundary: 96 (a run of its own).
// zero-memory-report counts the buffers (comm peak 64 + 800) and nothing
// more for the collectives that run in them.
// CHECK-LABEL: func.func @runs(
// CHECK:         zero.comm_reserve 64
// CHECK-NEXT:    %[[T1:.*]] = zero.reduce_scatter_start {{.*}} : memref<8xf64>
// CHECK:         zero.comm_reserve 800
// CHECK-NEXT:    %[[T2:.*]] = zero.reduce_scatter_start {{.*}} : memref<200xf32>
// CHECK:         zero.wait %[[T1]]
// CHECK-NEXT:    zero.wait %[[T2]]
// CHECK-NEXT:    zero.comm_release
// CHECK-NEXT:    zero.comm_reserve 96
// CHECK-NEXT:    %[[T3:.*]] = zero.all_reduce_start
// CHECK-NEXT:    zero.wait %[[T3]]
// CHECK-NEXT:    zero.comm_release
// CHECK-NOT:     zero.comm_
// CHECK:         return
// REPORT: remark: zero-memory-report: stage 2 on 2 ranks: {{.*}}, comm 864)
func.func @runs(%w: memref<2xf32> {zero.param = "w", zero.sharded}, %a: memref<200xf32>, %b: memref<8xf64>, %c: memref<7xf32>)
    attributes {zero.role = "train_step", zero.stage = 2 : i64, zero.world_size = 2 : i64,
                zero.manifest = [#zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 2, sharded = grads|states>]} {
  %s1 = memref.alloc() : memref<4xf64>
  %t1 = zero.reduce_scatter_start %b into %s1 : memref<8xf64> into memref<4xf64>
  %s2 = memref.alloc() : memref<100xf32>
  %t2 = zero.reduce_scatter_start %a into %s2 : memref<200xf32> into memref<100xf32>
  zero.wait %t1 keep(%b, %s1 : memref<8xf64>, memref<4xf64>)
  zero.wait %t2 keep(%a, %s2 : memref<200xf32>, memref<100xf32>)
  %t3 = zero.all_reduce_start %c into %c : memref<7xf32> into memref<7xf32>
  zero.wait %t3 keep(%c, %c : memref<7xf32>, memref<7xf32>)
  memref.dealloc %s1 : memref<4xf64>
  memref.dealloc %s2 : memref<100xf32>
  return
}

// -----

// The larger reduction first: one buffer serves the run. A blocking
// scalar all-reduce while the arena is held (it runs after every started
// one) takes its 2 * 8 bytes from the arena too: the comm peak is the
// buffer, 800.
// CHECK-LABEL: func.func @largest_first(
// CHECK:         zero.comm_reserve 800
// CHECK-NOT:     zero.comm_reserve
// CHECK:         zero.all_reduce
// CHECK:         zero.comm_release
// CHECK-NOT:     zero.comm_
// CHECK:         return
// REPORT: remark: zero-memory-report: stage 2 on 2 ranks: {{.*}}, comm 800)
func.func @largest_first(%w: memref<2xf32> {zero.param = "w", zero.sharded}, %a: memref<200xf32>, %b: memref<8xf64>, %x: memref<f64>)
    attributes {zero.role = "train_step", zero.stage = 2 : i64, zero.world_size = 2 : i64,
                zero.manifest = [#zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 2, sharded = grads|states>]} {
  %s2 = memref.alloc() : memref<100xf32>
  %t2 = zero.reduce_scatter_start %a into %s2 : memref<200xf32> into memref<100xf32>
  %s1 = memref.alloc() : memref<4xf64>
  %t1 = zero.reduce_scatter_start %b into %s1 : memref<8xf64> into memref<4xf64>
  zero.all_reduce %x into %x : memref<f64> into memref<f64>
  zero.wait %t2 keep(%a, %s2 : memref<200xf32>, memref<100xf32>)
  zero.wait %t1 keep(%b, %s1 : memref<8xf64>, memref<4xf64>)
  memref.dealloc %s1 : memref<4xf64>
  memref.dealloc %s2 : memref<100xf32>
  return
}

// -----

// A blocking scalar all-reduce's 2 * 8 bytes fit in the 64-byte arena
// held around it (the arena stays allocated while it runs: 80 if they did
// not); after the release they are allocated and freed by the call. The
// comm peak is the arena's 64.
// REPORT: remark: zero-memory-report: stage 2 on 2 ranks: {{.*}}, comm 64)
func.func @scalar_inside(%w: memref<2xf32> {zero.param = "w", zero.sharded}, %b: memref<8xf64>, %x: memref<f64>)
    attributes {zero.role = "train_step", zero.stage = 2 : i64, zero.world_size = 2 : i64,
                zero.manifest = [#zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 2, sharded = grads|states>]} {
  %s1 = memref.alloc() : memref<4xf64>
  %t1 = zero.reduce_scatter_start %b into %s1 : memref<8xf64> into memref<4xf64>
  zero.all_reduce %x into %x : memref<f64> into memref<f64>
  zero.wait %t1 keep(%b, %s1 : memref<8xf64>, memref<4xf64>)
  zero.all_reduce %x into %x : memref<f64> into memref<f64>
  memref.dealloc %s1 : memref<4xf64>
  return
}

// -----

// All-gathers take no scratch: no arena. Neither does a function without
// zero.world_size (the scratch depends on it): its reductions allocate as
// before.
// CHECK-LABEL: func.func @gathers_only(
// CHECK-NOT:     zero.comm_
// CHECK:         return
// CHECK-LABEL: func.func @no_world_size(
// CHECK-NOT:     zero.comm_
// CHECK:         return
func.func @gathers_only(%a: memref<4xf32>) attributes {zero.world_size = 2 : i64} {
  %g = memref.alloc() : memref<8xf32>
  %t = zero.all_gather_start %a into %g : memref<4xf32> into memref<8xf32>
  zero.wait %t keep(%a, %g : memref<4xf32>, memref<8xf32>)
  memref.dealloc %g : memref<8xf32>
  return
}
func.func @no_world_size(%b: memref<8xf64>) {
  %s = memref.alloc() : memref<4xf64>
  %t = zero.reduce_scatter_start %b into %s : memref<8xf64> into memref<4xf64>
  zero.wait %t keep(%b, %s : memref<8xf64>, memref<4xf64>)
  memref.dealloc %s : memref<4xf64>
  return
}

// -----

// A start and its wait inside a loop (gradient accumulation's shape): the
// arena holds one buffer for the largest from the function's entry to
// every return.
// CHECK-LABEL: func.func @in_loop(
// CHECK-NEXT:    zero.comm_reserve 64
// CHECK:         scf.for
// CHECK-NOT:       zero.comm_
// CHECK:         zero.comm_release
// CHECK-NEXT:    return
func.func @in_loop(%b: memref<8xf64>, %n: index) attributes {zero.world_size = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = memref.alloc() : memref<4xf64>
  scf.for %i = %c0 to %n step %c1 {
    %t = zero.reduce_scatter_start %b into %s : memref<8xf64> into memref<4xf64>
    zero.wait %t keep(%b, %s : memref<8xf64>, memref<4xf64>)
  }
  memref.dealloc %s : memref<4xf64>
  return
}
