// RUN: zero-opt %s --zero-fuse-row-nests --split-input-file | FileCheck %s
// RUN: zero-opt %s --zero-fuse-row-nests --zero-gpu-kernels --canonicalize --split-input-file | FileCheck %s --check-prefix=GPU
// RUN: zero-opt %s --zero-fuse-row-nests --zero-gpu-kernels --gpu-kernel-outlining --zero-gpu-launch-streams --convert-scf-to-cf --convert-gpu-to-nvvm --split-input-file | FileCheck %s --check-prefix=NVVM

// A softmax over rows of 128, as convert-linalg-to-parallel-loops leaves
// it: fill the maxima, reduce to them, fill the sums, reduce to them,
// normalize. One nest over the 64 rows: the fills as inner nests of one
// iteration, the reductions as they were, the normalization an inner nest
// over the row; the allocations move above it.
// CHECK-LABEL: func.func @softmax
// CHECK:         %[[MAX:.*]] = memref.alloc() : memref<64xf32>
// CHECK:         %[[SUM:.*]] = memref.alloc() : memref<64xf32>
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<64x128xf32>
// CHECK:         scf.parallel (%[[R:.*]]) =
// CHECK:           scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c1{{.*}})
// CHECK-NEXT:        memref.store %{{.*}}, %[[MAX]][%[[R]]] : memref<64xf32>
// CHECK:           scf.for %[[K:.*]] =
// CHECK:             memref.load %{{.*}}[%[[R]], %[[K]]] : memref<64x128xf32>
// CHECK:             arith.maximumf
// CHECK:           scf.parallel
// CHECK:             memref.store %{{.*}}, %[[SUM]][%[[R]]]
// CHECK:           scf.for
// CHECK:             math.exp
// CHECK:             arith.addf
// CHECK:           scf.parallel (%[[J:.*]]) = (%c0{{.*}}) to (%c128{{.*}})
// CHECK:             arith.divf
// CHECK:             memref.store %{{.*}}, %[[OUT]][%[[R]], %[[J]]]
// CHECK-NOT:     scf.parallel
// CHECK:         return %[[OUT]]

// zero-gpu-kernels: one launch of a block per row (64 blocks of 128
// threads) that runs the five steps apart by barriers: the fills by thread
// 0 alone (one iteration), the reductions as gpu.all_reduce with thread 0
// updating the row's place, the normalization over the row's elements.
// GPU-LABEL: func.func @softmax
// GPU:         gpu.launch blocks(%[[ROW:[^,]*]], %{{.*}}, %{{.*}}) in ({{.*}} = %c64{{.*}}, {{.*}}) threads(%[[T:[^,]*]], %{{.*}}, %{{.*}}) in ({{.*}} = %c128{{.*}},
// GPU-NEXT:      scf.for %{{.*}} = %[[T]] to %c1 step %c128 {
// GPU-NEXT:        memref.store %{{.*}}, %[[MAX:.*]][%[[ROW]]]
// GPU-NEXT:      }
// GPU-NEXT:      gpu.barrier
// GPU-NEXT:      scf.for %{{.*}} = %[[T]] to %c128 step %c128
// GPU:           gpu.all_reduce  maximumf
// GPU:           scf.if
// GPU:             memref.store %{{.*}}, %[[MAX]][%[[ROW]]]
// GPU:           gpu.barrier
// GPU-NEXT:      scf.for %{{.*}} = %[[T]] to %c1 step %c128 {
// GPU-NEXT:        memref.store %{{.*}}, %[[SUM:.*]][%[[ROW]]]
// GPU-NEXT:      }
// GPU-NEXT:      gpu.barrier
// GPU:           math.exp
// GPU:           gpu.all_reduce  add
// GPU:           scf.if
// GPU:             memref.store %{{.*}}, %[[SUM]][%[[ROW]]]
// GPU:           gpu.barrier
// GPU-NEXT:      scf.for %[[J:.*]] = %[[T]] to %c128 step %c128 {
// GPU:             arith.divf
// GPU:             memref.store %{{.*}}, %{{.*}}[%[[ROW]], %[[J]]]
// GPU:           gpu.terminator
// GPU-NEXT:    }
// GPU-NOT:     gpu.launch
// GPU:         return

// NVVM-LABEL: gpu.module
// NVVM:         llvm.func @softmax_kernel
// NVVM:           nvvm.barrier0
// NVVM:           nvvm.shfl.sync bfly
func.func @softmax(%x: memref<64x128xf32>) -> memref<64x128xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %max = memref.alloc() : memref<64xf32>
  scf.parallel (%r) = (%c0) to (%c64) step (%c1) {
    memref.store %ninf, %max[%r] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%r) = (%c0) to (%c64) step (%c1) {
    scf.for %k = %c0 to %c128 step %c1 {
      %v = memref.load %x[%r, %k] : memref<64x128xf32>
      %m = memref.load %max[%r] : memref<64xf32>
      %n = arith.maximumf %v, %m : f32
      memref.store %n, %max[%r] : memref<64xf32>
    }
    scf.reduce
  }
  %sum = memref.alloc() : memref<64xf32>
  scf.parallel (%r) = (%c0) to (%c64) step (%c1) {
    memref.store %zero, %sum[%r] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%r) = (%c0) to (%c64) step (%c1) {
    scf.for %k = %c0 to %c128 step %c1 {
      %v = memref.load %x[%r, %k] : memref<64x128xf32>
      %m = memref.load %max[%r] : memref<64xf32>
      %s = memref.load %sum[%r] : memref<64xf32>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      %n = arith.addf %e, %s : f32
      memref.store %n, %sum[%r] : memref<64xf32>
    }
    scf.reduce
  }
  %out = memref.alloc() : memref<64x128xf32>
  scf.parallel (%r, %j) = (%c0, %c0) to (%c64, %c128) step (%c1, %c1) {
    %v = memref.load %x[%r, %j] : memref<64x128xf32>
    %m = memref.load %max[%r] : memref<64xf32>
    %s = memref.load %sum[%r] : memref<64xf32>
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    %p = arith.divf %e, %s : f32
    memref.store %p, %out[%r, %j] : memref<64x128xf32>
    scf.reduce
  }
  memref.dealloc %sum : memref<64xf32>
  memref.dealloc %max : memref<64xf32>
  return %out : memref<64x128xf32>
}

// -----

// A nest that reads another row's place (the next row's maximum) would
// read it before that row's reduction wrote it: nothing fuses with it. The
// fill and the reduction before it still do.
// CHECK-LABEL: func.func @other_row
// CHECK:         scf.parallel (%[[R:.*]]) = {{.*}} {
// CHECK:           scf.parallel
// CHECK:           scf.for
// CHECK:           scf.reduce
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.parallel (%[[S:.*]], %[[J:.*]]) =
// CHECK:           %[[NEXT:.*]] = arith.addi %[[S]], %c1
// CHECK:           memref.load %{{.*}}[%[[NEXT]]] : memref<65xf32>
func.func @other_row(%x: memref<65x128xf32>, %out: memref<64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c65 = arith.constant 65 : index
  %c128 = arith.constant 128 : index
  %ninf = arith.constant 0xFF800000 : f32
  %max = memref.alloc() : memref<65xf32>
  scf.parallel (%r) = (%c0) to (%c64) step (%c1) {
    memref.store %ninf, %max[%r] : memref<65xf32>
    scf.reduce
  }
  scf.parallel (%r) = (%c0) to (%c64) step (%c1) {
    scf.for %k = %c0 to %c128 step %c1 {
      %v = memref.load %x[%r, %k] : memref<65x128xf32>
      %m = memref.load %max[%r] : memref<65xf32>
      %n = arith.maximumf %v, %m : f32
      memref.store %n, %max[%r] : memref<65xf32>
    }
    scf.reduce
  }
  scf.parallel (%r, %j) = (%c0, %c0) to (%c64, %c128) step (%c1, %c1) {
    %next = arith.addi %r, %c1 : index
    %v = memref.load %x[%r, %j] : memref<65x128xf32>
    %m = memref.load %max[%next] : memref<65xf32>
    %d = arith.subf %v, %m : f32
    memref.store %d, %out[%r, %j] : memref<64x128xf32>
    scf.reduce
  }
  memref.dealloc %max : memref<65xf32>
  return
}

// -----

// A deallocation between two nests keeps them apart (moving it would move
// a peak of memory), and so does a nest over other rows.
// CHECK-LABEL: func.func @kept_apart
// CHECK:         scf.parallel (%{{.*}}) = (%c0) to (%c64) step (%c1) {
// CHECK-NEXT:      scf.for
// CHECK:         memref.dealloc
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c64, %c128)
// CHECK:         scf.parallel (%{{.*}}) = (%c0) to (%c32) step (%c1) {
// CHECK-NEXT:      scf.for
func.func @kept_apart(%x: memref<64x128xf32>, %y: memref<64x128xf32>, %max: memref<64xf32>, %tmp: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%r) = (%c0) to (%c64) step (%c1) {
    scf.for %k = %c0 to %c128 step %c1 {
      %v = memref.load %x[%r, %k] : memref<64x128xf32>
      %m = memref.load %max[%r] : memref<64xf32>
      %n = arith.maximumf %v, %m : f32
      memref.store %n, %max[%r] : memref<64xf32>
    }
    scf.reduce
  }
  memref.dealloc %tmp : memref<8xf32>
  scf.parallel (%r, %j) = (%c0, %c0) to (%c64, %c128) step (%c1, %c1) {
    %m = memref.load %max[%r] : memref<64xf32>
    memref.store %m, %y[%r, %j] : memref<64x128xf32>
    scf.reduce
  }
  scf.parallel (%r) = (%c0) to (%c32) step (%c1) {
    scf.for %k = %c0 to %c128 step %c1 {
      %v = memref.load %y[%r, %k] : memref<64x128xf32>
      %m = memref.load %max[%r] : memref<64xf32>
      %n = arith.maximumf %v, %m : f32
      memref.store %n, %max[%r] : memref<64xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Few rows with long ones: an elementwise nest of 4 rows of 4096 would run
// as 4 blocks where it had 64 of 256 threads; it stays a nest of its own.
// CHECK-LABEL: func.func @few_long_rows
// CHECK:         scf.parallel (%{{.*}}) = (%c0) to (%c4) step (%c1) {
// CHECK-NEXT:      scf.for
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c4, %c4096)
func.func @few_long_rows(%x: memref<4x4096xf32>, %y: memref<4x4096xf32>, %max: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c4096 = arith.constant 4096 : index
  scf.parallel (%r) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c4096 step %c1 {
      %v = memref.load %x[%r, %k] : memref<4x4096xf32>
      %m = memref.load %max[%r] : memref<4xf32>
      %n = arith.maximumf %v, %m : f32
      memref.store %n, %max[%r] : memref<4xf32>
    }
    scf.reduce
  }
  scf.parallel (%r, %j) = (%c0, %c0) to (%c4, %c4096) step (%c1, %c1) {
    %v = memref.load %x[%r, %j] : memref<4x4096xf32>
    %m = memref.load %max[%r] : memref<4xf32>
    %d = arith.subf %v, %m : f32
    memref.store %d, %y[%r, %j] : memref<4x4096xf32>
    scf.reduce
  }
  return
}
