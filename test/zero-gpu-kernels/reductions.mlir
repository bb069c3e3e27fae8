// RUN: zero-opt %s --zero-gpu-kernels --canonicalize --split-input-file | FileCheck %s
// RUN: zero-opt %s --zero-gpu-kernels=block-size=32 --split-input-file | FileCheck %s --check-prefix=B32
// RUN: zero-opt %s --zero-gpu-kernels --gpu-kernel-outlining --zero-gpu-launch-streams --convert-scf-to-cf --convert-gpu-to-nvvm --split-input-file | FileCheck %s --check-prefix=NVVM

// A sum over each row's last dimension (a LayerNorm's mean): a block per row
// (4 blocks), 64 threads each striding over the row's 64 elements from 0.0,
// gpu.all_reduce over the block, and thread 0 adds the total to the row's
// place.
// CHECK-LABEL: func.func private @row_sum
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         gpu.launch blocks(%[[ROW:[^,]*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[C4]], {{.*}}) threads(%[[TID:[^,]*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[C64]],
// CHECK:           %[[PARTIAL:.*]] = scf.for %[[K:.*]] = %[[TID]] to %[[C64]] step %[[C64]] iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK:             %[[X:.*]] = memref.load %{{.*}}[%[[ROW]], %[[K]]]
// CHECK:             %[[NEXT:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK:             scf.yield %[[NEXT]] : f32
// CHECK:           %[[TOTAL:.*]] = gpu.all_reduce add %[[PARTIAL]] uniform {
// CHECK:           scf.if
// CHECK:             %[[OLD:.*]] = memref.load %{{.*}}[%[[ROW]]]
// CHECK:             %[[NEW:.*]] = arith.addf %[[OLD]], %[[TOTAL]] : f32
// CHECK:             memref.store %[[NEW]], %{{.*}}[%[[ROW]]]
// CHECK:           gpu.terminator
// CHECK-NOT:     scf.parallel
// With block-size=32, 32 threads share a row.
// B32-LABEL: func.func private @row_sum
// B32:         %[[C32:.*]] = arith.constant 32 : index
// B32:         gpu.launch blocks({{.*}}) threads({{.*}}) in ({{.*}} = %[[C32]],
// B32:           gpu.all_reduce add
// After outlining and convert-gpu-to-nvvm: warp shuffles and a barrier.
// NVVM-LABEL: llvm.func @row_sum_kernel
// NVVM:         nvvm.shfl.sync bfly
// NVVM:         nvvm.barrier
func.func private @row_sum(%x: memref<4x64xf32>, %sum: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %k] : memref<4x64xf32>
      %a = memref.load %sum[%i] : memref<4xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %sum[%i] : memref<4xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Two places per row (a sum and a maximum, as a fused softmax statistic
// would have) over 2x3 rows of 100: 6 blocks of 128 threads (100 rounded up
// to 32), each place from its own identity (-inf for maximumf), one
// all-reduce each.
// CHECK-LABEL: func.func private @two_places
// CHECK-DAG:     %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG:     %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %[[C6]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[C128]],
// CHECK:           scf.for {{.*}} iter_args({{.*}} = %{{.*}}, {{.*}} = %[[NEGINF]]) -> (f32, f32)
// CHECK:             arith.addf
// CHECK:             arith.maximumf
// CHECK:           gpu.all_reduce add
// CHECK:           gpu.all_reduce maximumf
// CHECK:           scf.if
// CHECK:             arith.addf
// CHECK:             arith.maximumf
func.func private @two_places(%x: memref<2x3x100xf32>, %sum: memref<2x3xf32>, %max: memref<2x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c100 = arith.constant 100 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c3) step (%c1, %c1) {
    scf.for %k = %c0 to %c100 step %c1 {
      %v = memref.load %x[%i, %j, %k] : memref<2x3x100xf32>
      %e = math.exp %v : f32
      %a = memref.load %sum[%i, %j] : memref<2x3xf32>
      %s = arith.addf %a, %e : f32
      memref.store %s, %sum[%i, %j] : memref<2x3xf32>
      %b = memref.load %max[%i, %j] : memref<2x3xf32>
      %m = arith.maximumf %b, %v : f32
      memref.store %m, %max[%i, %j] : memref<2x3xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A bf16 row maximum (a bf16 step's softmax): warp shuffles move 32 bits, so
// the partial values are f32 (maximumf is exact in f32), and the place is
// updated in f32 and rounded back, which gives the bf16 maximum exactly.
// CHECK-LABEL: func.func private @bf16_row_max
// CHECK-DAG:     %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         gpu.launch
// CHECK:           scf.for {{.*}} iter_args(%[[P:.*]] = %[[NEGINF]]) -> (f32)
// CHECK:             %[[V:.*]] = memref.load {{.*}} : memref<4x64xbf16>
// CHECK:             %[[W:.*]] = arith.extf %[[V]] : bf16 to f32
// CHECK:             arith.maximumf %[[P]], %[[W]] : f32
// CHECK:           %[[T:.*]] = gpu.all_reduce maximumf %{{.*}} uniform {
// CHECK-NEXT:      } : (f32) -> f32
// CHECK:           scf.if
// CHECK:             %[[OLD:.*]] = memref.load {{.*}} : memref<4xbf16>
// CHECK:             %[[OW:.*]] = arith.extf %[[OLD]] : bf16 to f32
// CHECK:             %[[M:.*]] = arith.maximumf %[[OW]], %[[T]] : f32
// CHECK:             %[[R:.*]] = arith.truncf %[[M]] : f32 to bf16
// CHECK:             memref.store %[[R]]
func.func private @bf16_row_max(%x: memref<4x64xbf16>, %max: memref<4xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %k] : memref<4x64xbf16>
      %a = memref.load %max[%i] : memref<4xbf16>
      %m = arith.maximumf %a, %v : bf16
      memref.store %m, %max[%i] : memref<4xbf16>
    }
    scf.reduce
  }
  return
}
// NVVM-LABEL: llvm.func @bf16_row_max_kernel
// NVVM:         nvvm.shfl.sync bfly {{.*}} : f32

// -----

// A reduction to a scalar over a 64x32 nest (a gradient's sum of squares):
// one block of 1024 threads over the 2048 iterations, the nest's indices
// recovered from the linear iteration.
// CHECK-LABEL: func.func private @sum_of_squares
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C1024:.*]] = arith.constant 1024 : index
// CHECK-DAG:     %[[C2048:.*]] = arith.constant 2048 : index
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %[[C1]], {{.*}} = %[[C1]], {{.*}} = %[[C1]]) threads(%[[TID:[^,]*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[C1024]],
// CHECK:           scf.for %[[K:.*]] = %[[TID]] to %[[C2048]] step %[[C1024]]
// CHECK-DAG:         arith.remui %[[K]]
// CHECK-DAG:         arith.divui %[[K]]
// CHECK:             arith.mulf
// CHECK:           gpu.all_reduce add
// CHECK:           scf.if
// CHECK:             memref.load %{{.*}}[] : memref<f32>
// CHECK:             memref.store %{{.*}}, %{{.*}}[] : memref<f32>
func.func private @sum_of_squares(%x: memref<64x32xf32>, %s: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c32 step %c1 {
      %v = memref.load %x[%i, %j] : memref<64x32xf32>
      %a = memref.load %s[] : memref<f32>
      %q = arith.mulf %v, %v : f32
      %b = arith.addf %a, %q : f32
      memref.store %b, %s[] : memref<f32>
    }
  }
  return
}

// -----

// A sum over 64 rows for each of 32 columns (a bias gradient): a block per
// 32 columns, 8 threads on each (64 rows / 8 rows a thread) folding rows y, y + 8,
// ... from 0.0; the partial values meet in workgroup memory and, after a
// barrier, the first row of threads adds them to the column's place in
// order of y.
// CHECK-LABEL: func.func private @column_sum
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}}) threads(%[[X:[^,]*]], %[[Y:[^,]*]], %{{[^)]*}}) in ({{.*}} = %[[C32]], {{.*}} = %[[C8]], {{.*}}) workgroup(%[[PARTS:.*]] : memref<8x32xf32, #gpu.address_space<workgroup>>)
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[X]], %[[C32]] : index
// CHECK:           %[[PART:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK:             scf.for %[[R:.*]] = %[[Y]] to %[[C64]] step %[[C8]] iter_args
// CHECK:               memref.load %{{.*}}[%[[R]], %[[X]]] : memref<64x32xf32>
// CHECK:               arith.addf
// CHECK:           memref.store %[[PART]], %[[PARTS]][%[[Y]], %[[X]]]
// CHECK-NEXT:      gpu.barrier
// CHECK:           scf.if
// CHECK:             %[[OLD:.*]] = memref.load %{{.*}}[%[[X]]] : memref<32xf32>
// CHECK:             %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %[[C8]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[OLD]]) -> (f32) {
// CHECK:               %[[P:.*]] = memref.load %[[PARTS]][%[[K]], %[[X]]]
// CHECK:               arith.addf %[[ACC]], %[[P]] : f32
// CHECK:             memref.store %[[SUM]], %{{.*}}[%[[X]]] : memref<32xf32>
// CHECK-NOT:     gpu.all_reduce
// The partial values in shared memory after convert-gpu-to-nvvm.
// NVVM-LABEL: llvm.func @column_sum_kernel
// NVVM:         llvm.mlir.addressof @__wg_column_sum_kernel_0 : !llvm.ptr<3>
// NVVM:         nvvm.barrier
func.func private @column_sum(%x: memref<64x32xf32>, %sum: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    scf.parallel (%j) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<64x32xf32>
      %a = memref.load %sum[%j] : memref<32xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %sum[%j] : memref<32xf32>
      scf.reduce
    }
  }
  return
}

// -----

// Over 8192 rows (a batch's tokens), 32 threads on each column: 1024 a
// block, whatever block-size, for the few blocks of a bias gradient.
// CHECK-LABEL: func.func private @column_sum_tall
// CHECK-DAG:     %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[ROWS:.*]] = arith.constant 8192 : index
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c24, {{.*}}) threads(%[[X:[^,]*]], %[[Y:[^,]*]], %{{[^)]*}}) in ({{.*}} = %[[C32]], {{.*}} = %[[C32]], {{.*}}) workgroup(%{{.*}} : memref<32x32xf32, #gpu.address_space<workgroup>>)
// CHECK:             scf.for %{{.*}} = %[[Y]] to %[[ROWS]] step %[[C32]] iter_args
func.func private @column_sum_tall(%x: memref<8192x768xf32>, %sum: memref<768xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c768 = arith.constant 768 : index
  %c8192 = arith.constant 8192 : index
  scf.for %i = %c0 to %c8192 step %c1 {
    scf.parallel (%j) = (%c0) to (%c768) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<8192x768xf32>
      %a = memref.load %sum[%j] : memref<768xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %sum[%j] : memref<768xf32>
      scf.reduce
    }
  }
  return
}

// -----

// The same over 16 rows, too few to share: interchanged, one thread per
// column adding its rows in order, as on the CPU, the sum carried in a
// register from the place's old value to its store.
// CHECK-LABEL: func.func private @column_sum_short
// CHECK:         gpu.launch
// CHECK:           scf.if
// CHECK:             %[[OLD:.*]] = memref.load %{{.*}}[%[[COL:.*]]] : memref<32xf32>
// CHECK:             %[[SUM:.*]] = scf.for %[[I:[^ ]*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[OLD]]) -> (f32)
// CHECK:               %[[X:.*]] = memref.load %{{.*}}[%[[I]], %[[COL]]] : memref<16x32xf32>
// CHECK:               %[[NEXT:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK:               scf.yield %[[NEXT]]
// CHECK:             memref.store %[[SUM]], %{{.*}}[%[[COL]]] : memref<32xf32>
// CHECK-NOT:     gpu.all_reduce
// CHECK-NOT:     gpu.barrier
func.func private @column_sum_short(%x: memref<16x32xf32>, %sum: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %c0 to %c16 step %c1 {
    scf.parallel (%j) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<16x32xf32>
      %a = memref.load %sum[%j] : memref<32xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %sum[%j] : memref<32xf32>
      scf.reduce
    }
  }
  return
}

// -----

// An embedding gradient's scatter, table[ids[n], :] += rows[n, :]: the row
// moves with n but each column is its thread's alone, so the nest is
// interchanged; each thread loads the token ids and adds its column of the
// rows in n's order (repeated ids accumulate as on the CPU).
// CHECK-LABEL: func.func private @scatter_rows
// CHECK:         gpu.launch
// CHECK:           scf.if
// CHECK:             scf.for %[[N:.*]] =
// CHECK:               %[[ID:.*]] = memref.load %{{.*}}[%[[N]]] : memref<32xi32>
// CHECK:               %[[ROW:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK:               %[[VIEW:.*]] = memref.subview %{{.*}}[%[[ROW]], 0] [1, 16] [1, 1]
// CHECK:               memref.load %[[VIEW]]
// CHECK:               arith.addf
// CHECK:               memref.store %{{.*}}, %[[VIEW]]
// CHECK-NOT:     gpu.all_reduce
func.func private @scatter_rows(%ids: memref<32xi32>, %table: memref<64x16xf32>, %rows: memref<32x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  scf.for %n = %c0 to %c32 step %c1 {
    %id = memref.load %ids[%n] : memref<32xi32>
    %row = arith.index_cast %id : i32 to index
    %g = memref.subview %rows[%n, 0] [1, 16] [1, 1] : memref<32x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    %t = memref.subview %table[%row, 0] [1, 16] [1, 1] : memref<64x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    scf.parallel (%c) = (%c0) to (%c16) step (%c1) {
      %v = memref.load %g[%c] : memref<16xf32, strided<[1], offset: ?>>
      %a = memref.load %t[%c] : memref<16xf32, strided<[1], offset: ?>>
      %s = arith.addf %a, %v : f32
      memref.store %s, %t[%c] : memref<16xf32, strided<[1], offset: ?>>
      scf.reduce
    }
  }
  return
}

// -----

// A row reduction whose place's index is computed inside the reduction's
// body: thread 0 computes it again outside the strided loop.
// CHECK-LABEL: func.func private @place_in_body
// CHECK:         gpu.launch blocks(%[[ROW:[^,]*]], %{{.*}}, %{{.*}}) in
// CHECK:           gpu.all_reduce add
// CHECK:           scf.if
// CHECK:             %[[PLACE:.*]] = arith.addi %[[ROW]], %{{.*}} : index
// CHECK:             memref.load %{{.*}}[%[[PLACE]]]
// CHECK:             memref.store %{{.*}}, %{{.*}}[%[[PLACE]]]
func.func private @place_in_body(%x: memref<4x64xf32>, %sum: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      %p = arith.addi %i, %c4 : index
      %v = memref.load %x[%i, %k] : memref<4x64xf32>
      %a = memref.load %sum[%p] : memref<8xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %sum[%p] : memref<8xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Two places, the second indexed by what the first adds: thread 0 computes
// every place from the row before it maps what the first adds to its
// total, so the second place is index_cast(index_cast(%i)), which
// canonicalizes to the row, and not index_cast of the first total.
// CHECK-LABEL: func.func private @place_from_a_value
// CHECK:         gpu.launch blocks(%[[ROW:[^,]*]], %{{.*}}, %{{.*}}) in
// CHECK:           %[[T1:.*]] = gpu.all_reduce add %{{.*}} uniform {
// CHECK:           scf.if
// CHECK:             %[[OLD1:.*]] = memref.load %{{.*}}[%[[ROW]]] : memref<4xi64>
// CHECK:             arith.addi %[[OLD1]], %[[T1]] : i64
// CHECK:             memref.load %{{.*}}[%[[ROW]]] : memref<4xf32>
// CHECK:             memref.store %{{.*}}, %{{.*}}[%[[ROW]]] : memref<4xf32>
func.func private @place_from_a_value(%x: memref<4x64xf32>, %cnt: memref<4xi64>, %sum: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %n = arith.index_cast %i : index to i64
    scf.for %k = %c0 to %c64 step %c1 {
      %a = memref.load %cnt[%i] : memref<4xi64>
      %b = arith.addi %a, %n : i64
      memref.store %b, %cnt[%i] : memref<4xi64>
      %p = arith.index_cast %n : i64 to index
      %v = memref.load %x[%i, %k] : memref<4x64xf32>
      %o = memref.load %sum[%p] : memref<4xf32>
      %s = arith.addf %o, %v : f32
      memref.store %s, %sum[%p] : memref<4xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Left to one thread: a reduction whose loop counts in i32 (the mapping
// builds index loops), and a reduction over rows without rows (which,
// interchanged, would load and store its places).
// CHECK-LABEL: func.func private @kept_loops
// CHECK-NOT:     gpu.all_reduce
// CHECK:         threads({{.*}}) in ({{.*}} = %c1,
// CHECK-NEXT:      scf.for {{.*}} : i32
// CHECK-NOT:     memref<4xf32>
// CHECK:         return
func.func private @kept_loops(%x: memref<64xf32>, %s: memref<f32>, %y: memref<0x4xf32>, %sum: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c64_i32 = arith.constant 64 : i32
  scf.for %k = %c0_i32 to %c64_i32 step %c1_i32 : i32 {
    %j = arith.index_cast %k : i32 to index
    %v = memref.load %x[%j] : memref<64xf32>
    %a = memref.load %s[] : memref<f32>
    %r = arith.addf %a, %v : f32
    memref.store %r, %s[] : memref<f32>
  }
  scf.for %i = %c0 to %c0 step %c1 {
    scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
      %v = memref.load %y[%i, %j] : memref<0x4xf32>
      %a = memref.load %sum[%j] : memref<4xf32>
      %r = arith.addf %a, %v : f32
      memref.store %r, %sum[%j] : memref<4xf32>
      scf.reduce
    }
  }
  return
}

// -----

// Nests that stay as they were mapped before: a reduction over a row's
// strided dimension (a thread per row reads neighbours), a row shorter than
// 32, a bf16 sum (no 16-bit shuffles, and f32 partial sums would round
// otherwise than the bf16 loop), a running value that reads its own
// place, a scatter whose place depends on the loop, and a scatter of rows
// whose column offset moves with the loop, so columns' places overlap (one
// thread each).
// CHECK-LABEL: func.func private @kept
// CHECK-NOT:     gpu.all_reduce
// CHECK-COUNT-3: threads({{.*}}) in ({{.*}} = %c256,
// CHECK-NOT:     gpu.all_reduce
// CHECK-COUNT-3: threads({{.*}}) in ({{.*}} = %c1,
// CHECK-NOT:     gpu.all_reduce
// CHECK:         return
func.func private @kept(%x: memref<64x4xf32>, %sum: memref<4xf32>, %y: memref<4x16xf32>,
                        %z: memref<4x64xbf16>, %h: memref<4xbf16>, %w: memref<64xf32>, %s: memref<f32>,
                        %idx: memref<64xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      %v = memref.load %x[%k, %i] : memref<64x4xf32>
      %a = memref.load %sum[%i] : memref<4xf32>
      %r = arith.addf %a, %v : f32
      memref.store %r, %sum[%i] : memref<4xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c16 step %c1 {
      %v = memref.load %y[%i, %k] : memref<4x16xf32>
      %a = memref.load %sum[%i] : memref<4xf32>
      %r = arith.addf %a, %v : f32
      memref.store %r, %sum[%i] : memref<4xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      %v = memref.load %z[%i, %k] : memref<4x64xbf16>
      %a = memref.load %h[%i] : memref<4xbf16>
      %r = arith.addf %a, %v : bf16
      memref.store %r, %h[%i] : memref<4xbf16>
    }
    scf.reduce
  }
  scf.for %k = %c0 to %c64 step %c1 {
    %v = memref.load %w[%k] : memref<64xf32>
    %a = memref.load %s[] : memref<f32>
    %m = arith.mulf %a, %v : f32
    %r = arith.addf %a, %m : f32
    memref.store %r, %s[] : memref<f32>
  }
  scf.for %k = %c0 to %c64 step %c1 {
    %v = memref.load %w[%k] : memref<64xf32>
    %p = memref.load %idx[%k] : memref<64xindex>
    %a = memref.load %sum[%p] : memref<4xf32>
    %r = arith.addf %a, %v : f32
    memref.store %r, %sum[%p] : memref<4xf32>
  }
  scf.for %n = %c0 to %c4 step %c1 {
    %t = memref.subview %y[0, %n] [1, 4] [1, 1] : memref<4x16xf32> to memref<4xf32, strided<[1], offset: ?>>
    scf.parallel (%c) = (%c0) to (%c4) step (%c1) {
      %a = memref.load %t[%c] : memref<4xf32, strided<[1], offset: ?>>
      %v = memref.load %w[%c] : memref<64xf32>
      %r = arith.addf %a, %v : f32
      memref.store %r, %t[%c] : memref<4xf32, strided<[1], offset: ?>>
      scf.reduce
    }
  }
  return
}
