// RUN: zero-opt %s --zero-gpu-kernels --canonicalize | FileCheck %s
// RUN: zero-opt %s --zero-gpu-kernels=block-size=128 --canonicalize | FileCheck %s --check-prefix=B128
// RUN: zero-opt %s --zero-gpu-kernels --gpu-kernel-outlining --zero-gpu-launch-streams | FileCheck %s --check-prefix=OUTLINED
// RUN: zero-opt %s --zero-gpu-kernels | FileCheck %s --check-prefix=MASK

// A parallel nest: its two dimensions collapse into 32 iterations, tiled by
// the block size; one thread per iteration, guarded by the trip count.
// CHECK-LABEL: func.func private @step_loop0
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]]) threads({{.*}}) in ({{.*}} = %[[BLOCK]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]])
// CHECK:           arith.cmpi ult, %{{.*}}, %c32
// CHECK:           scf.if
// CHECK:             arith.remsi
// CHECK:             arith.divsi
// CHECK:             math.tanh
// CHECK:             memref.store
// CHECK:           gpu.terminator
// CHECK-NOT:     scf.parallel
// B128-LABEL: func.func private @step_loop0
// B128:         arith.constant 128 : index
// B128:         gpu.launch
func.func private @step_loop0(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<4x8xf32>
    %t = math.tanh %v : f32
    memref.store %t, %y[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  return
}

// 40000 iterations: 157 blocks of 256 threads.
// CHECK-LABEL: func.func private @step_loop1
// CHECK:         %[[GRID:.*]] = arith.constant 157 : index
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %[[GRID]],
func.func private @step_loop1(%x: memref<40000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 40000 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %x[%i] : memref<40000xf32>
    scf.reduce
  }
  return
}

// A reduction to a scalar is one block (reductions.mlir has the cases);
// its square root is NVVM's correctly rounded one.
// CHECK-LABEL: func.func private @step_loop2
// CHECK-DAG:     %[[ONE2:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[T32:.*]] = arith.constant 32 : index
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE2]], {{.*}} = %[[ONE2]], {{.*}} = %[[ONE2]]) threads({{.*}}) in ({{.*}} = %[[T32]], {{.*}} = %[[ONE2]], {{.*}} = %[[ONE2]])
// CHECK-NEXT:      scf.for
// CHECK:             llvm.call_intrinsic "llvm.nvvm.sqrt.rn.f"
// CHECK-NOT:         math.sqrt
// CHECK:           gpu.all_reduce add
// CHECK:           gpu.terminator
func.func private @step_loop2(%x: memref<32xf32>, %s: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %c0 to %c32 step %c1 {
    %v = memref.load %x[%i] : memref<32xf32>
    %r = math.sqrt %v : f32
    %a = memref.load %s[] : memref<f32>
    %b = arith.addf %a, %r : f32
    memref.store %b, %s[] : memref<f32>
  }
  return
}

// Host code: a store runs in a one-thread launch, a load becomes a copy into
// a stack slot, a loop with runtime calls stays on the host and its inner
// nest becomes a launch.
// CHECK-LABEL: func.func @train_step
// CHECK:         %[[SLOT:.*]] = memref.alloca() : memref<f32>
// CHECK:         gpu.launch
// CHECK-NEXT:      memref.store %{{.*}}, %[[ACC:.*]][] : memref<f32>
// CHECK-NEXT:      gpu.terminator
// CHECK:         call @step_loop2
// CHECK:         memref.extract_aligned_pointer_as_index %[[SLOT]]
// CHECK:         call @zrt_copy_to_host({{.*}}) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK:         %[[LOSS:.*]] = memref.load %[[SLOT]][] : memref<f32>
// CHECK:         %[[WIDE:.*]] = arith.extf %[[LOSS]]
// CHECK:         call @zrt_collective_scalar(%{{.*}}, %[[WIDE]])
// CHECK:         scf.for
// CHECK:           call @zrt_gemm_f32
// CHECK:           gpu.launch
// CHECK:             memref.store
// CHECK:         return
// CHECK:       func.func private @zrt_copy_to_host(!llvm.ptr, !llvm.ptr, i64)
func.func private @zrt_collective_scalar(i32, f64) -> f64
func.func private @zrt_gemm_f32(i64)
func.func @train_step(%x: memref<32xf32>, %loss: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %k = arith.constant 7 : i64
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<f32>
  memref.store %zero, %acc[] : memref<f32>
  call @step_loop2(%x, %acc) : (memref<32xf32>, memref<f32>) -> ()
  %v = memref.load %acc[] : memref<f32>
  %sum = arith.constant 259 : i32
  %w = arith.extf %v : f32 to f64
  %rw = call @zrt_collective_scalar(%sum, %w) : (i32, f64) -> f64
  %r = arith.truncf %rw : f64 to f32
  memref.dealloc %acc : memref<f32>
  scf.for %m = %c0 to %c3 step %c1 {
    func.call @zrt_gemm_f32(%k) : (i64) -> ()
    scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
      memref.store %r, %x[%i] : memref<32xf32>
      scf.reduce
    }
  }
  return
}

// After outlining: one kernel module, every launch on the runtime's stream.
// OUTLINED-NOT:  gpu.module @step_loop
// OUTLINED:      func.func private @step_loop0
// OUTLINED:        %[[S:.*]] = call @zrt_gpu_stream() : () -> !llvm.ptr
// OUTLINED-NEXT:   %[[T:.*]] = builtin.unrealized_conversion_cast %[[S]] : !llvm.ptr to !gpu.async.token
// OUTLINED-NEXT:   gpu.launch_func async [%[[T]]] @zero_kernels::@step_loop0_kernel
// OUTLINED:      gpu.module @zero_kernels
// OUTLINED-DAG:    gpu.func @step_loop0_kernel
// OUTLINED-DAG:    gpu.func @step_loop1_kernel
// OUTLINED-DAG:    gpu.func @step_loop2_kernel
// OUTLINED-DAG:    gpu.func @train_step_kernel
// OUTLINED-NOT:  gpu.module

// A masked accumulation (a partial norm over this rank's elements of a
// padded shard: `select %valid, %old + x*x, %old`): the load of the old
// value feeds both sides, so it stays before the branch, which loads x only
// where it counts. (The fuzzer's crash: the old value moved into one branch
// while the other still yielded it.)
// MASK-LABEL: func.func @masked_accumulate
// MASK:         scf.for
// MASK-NEXT:      %[[OLD:.*]] = memref.load %{{.*}}[] : memref<f32>
// MASK:           %[[VALID:.*]] = arith.cmpi ult
// MASK-NEXT:      %[[KEPT:.*]] = scf.if %[[VALID]] -> (f32) {
// MASK-NEXT:        memref.load %{{.*}} : memref<5xf32>
// MASK-NEXT:        arith.mulf
// MASK-NEXT:        %[[NEW:.*]] = arith.addf %[[OLD]]
// MASK-NEXT:        scf.yield %[[NEW]] : f32
// MASK-NEXT:      } else {
// MASK-NEXT:        scf.yield %[[OLD]] : f32
// MASK-NEXT:      }
// MASK-NEXT:      memref.store %[[KEPT]]
func.func @masked_accumulate(%rank: i32, %g: memref<5xf32>, %acc: memref<f32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c10 = arith.constant 10 : index
  %c5 = arith.constant 5 : index
  %r = arith.index_cast %rank : i32 to index
  %base = arith.muli %r, %c5 : index
  scf.for %i = %c0 to %c5 step %c1 {
    %x = memref.load %g[%i] : memref<5xf32>
    %old = memref.load %acc[] : memref<f32>
    %sq = arith.mulf %x, %x : f32
    %new = arith.addf %old, %sq : f32
    %at = arith.addi %base, %i : index
    %valid = arith.cmpi ult, %at, %c10 : index
    %kept = arith.select %valid, %new, %old : f32
    memref.store %kept, %acc[] : memref<f32>
  }
  return
}

// A select whose one side loads for it alone and whose condition loads
// nothing (a causal mask): the loaded side in a branch. One whose
// condition depends on a load (a ReLU), or whose loads a store precedes,
// stays a select.
// MASK-LABEL: func.func @masked
// MASK:         %[[ABOVE:.*]] = arith.cmpi ugt
// MASK-NEXT:    scf.if %[[ABOVE]] -> (f32) {
// MASK-NEXT:      scf.yield %{{.*}} : f32
// MASK-NEXT:    } else {
// MASK-NEXT:      memref.load %{{.*}} : memref<8x8xf32>
// MASK-NEXT:      arith.mulf
// MASK-NEXT:      scf.yield
// MASK-NEXT:    }
// MASK:         arith.select
// MASK-NOT:     scf.if %{{.*}} -> (f32)
// MASK:         return
func.func @masked(%x: memref<8x8xf32>, %y: memref<8x8xf32>, %z: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %above = arith.cmpi ugt, %j, %i : index
    %v = memref.load %x[%i, %j] : memref<8x8xf32>
    %s = arith.mulf %v, %scale : f32
    %m = arith.select %above, %ninf, %s : f32
    memref.store %m, %y[%i, %j] : memref<8x8xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<8x8xf32>
    %pos = arith.cmpf ogt, %v, %zero : f32
    %r = arith.select %pos, %v, %zero : f32
    memref.store %r, %y[%i, %j] : memref<8x8xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %above = arith.cmpi ugt, %j, %i : index
    %v = memref.load %x[%i, %j] : memref<8x8xf32>
    memref.store %zero, %x[%i, %j] : memref<8x8xf32>
    %m = arith.select %above, %ninf, %v : f32
    memref.store %m, %z[%i, %j] : memref<8x8xf32>
    scf.reduce
  }
  return
}
