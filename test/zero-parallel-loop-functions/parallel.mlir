// RUN: zero-opt %s --zero-parallel-loop-functions=min-work=32768 -split-input-file | FileCheck %s
// RUN: zero-opt %s --zero-parallel-loop-functions=min-work=32768 --zero-parallel-loop-functions=min-work=32768 -split-input-file | FileCheck %s
// RUN: zero-opt %s --zero-parallel-loop-functions=min-work=100000000 -split-input-file | FileCheck %s --check-prefix=BIG
// RUN: zero-opt %s --zero-parallel-loop-functions -split-input-file | FileCheck %s --check-prefix=DEFAULT
// RUN: zero-gen gpt --preset gpt-tiny --layers 2 | zero-opt --zero-verify --zero-bufferize-step --convert-linalg-to-parallel-loops --zero-outline-loop-nests --zero-parallel-loop-functions=min-work=1024 | FileCheck %s --check-prefix=GEN
// RUN: zero-opt %S/../../integration_tests/zero-run/Inputs/torch-linear.mlir --zero-verify --zero-bufferize-step --convert-linalg-to-parallel-loops --zero-outline-loop-nests --zero-parallel-loop-functions=min-work=1 | FileCheck %s --check-prefix=TORCH

// zero-gen's GPT: the token embedding runs over the batch (2 rows) in
// ranges; the nest shared by both layers is made parallel once.
// GEN:       call @forward_backward_loop0(%c0, %c2, %arg0, %arg1, %arg{{[0-9]+}}, %alloc)
// GEN:       func.func private @forward_backward_loop0(%arg0: index, %arg1: index,
// GEN-SAME:    zero.parallel_iterations = 2 : i64

// torch-mlir's shape of nn.Linear (f64, 4 samples of 5 features into 3):
// the bias add and the difference to the target (one fused nest) run over
// the 4 rows.
// TORCH:     call @fb_loop2(%{{.*}}, %c4{{.*}}, %arg1, %arg3, %alloc)
// TORCH:     func.func private @fb_loop2(%arg0: index, %arg1: index, %arg2: memref<3xf64>, %arg3: memref<4x3xf64>, %arg4: memref<4x3xf64>)
// TORCH-SAME:  zero.parallel_iterations = 4 : i64

// A function that is one parallel nest runs iterations [begin, end) of its
// outer dimension; calls run all 64.
// CHECK-LABEL: func.func private @nest
// CHECK-SAME:    (%[[B:.*]]: index, %[[E:.*]]: index, %[[X:.*]]: memref<64x512xf32>)
// CHECK-SAME:    zero.parallel_iterations = 64 : i64
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[LO_OFF:.*]] = arith.muli %[[B]], %[[C1]]
// CHECK:         %[[LO:.*]] = arith.addi %[[C0]], %[[LO_OFF]]
// CHECK:         %[[HI_OFF:.*]] = arith.muli %[[E]], %[[C1]]
// CHECK:         %[[HI:.*]] = arith.addi %[[C0]], %[[HI_OFF]]
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) = (%[[LO]], %[[C0]]) to (%[[HI]], %{{.*}}) step (%[[C1]], %[[C1]])
// CHECK-LABEL: func.func @caller
// CHECK-DAG:     %[[Z:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[N:.*]] = arith.constant 64 : index
// CHECK:         call @nest(%[[Z]], %[[N]], %arg0)
// CHECK:         call @nest(%[[Z2:.*]], %[[N2:.*]], %arg1)
// BIG-LABEL: func.func private @nest
// BIG-SAME:    (%{{.*}}: memref<64x512xf32>)
// BIG-NOT:     zero.parallel_iterations
// BIG-LABEL: func.func @caller
// The default threshold (262144 operations) leaves this 98304-operation
// nest on one thread, and takes the 256x1024 row sums below.
// DEFAULT-LABEL: func.func private @nest(%{{[^:]*}}: memref<64x512xf32>)
// DEFAULT-NOT:     zero.parallel_iterations
// DEFAULT-LABEL: func.func @caller
// DEFAULT-LABEL: func.func private @row_sums
// DEFAULT-SAME:    zero.parallel_iterations = 256 : i64
func.func private @nest(%x: memref<64x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %cst = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c512) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<64x512xf32>
    %w = arith.mulf %v, %cst : f32
    memref.store %w, %x[%i, %j] : memref<64x512xf32>
    scf.reduce
  }
  return
}
func.func @caller(%a: memref<64x512xf32>, %b: memref<64x512xf32>) {
  call @nest(%a) : (memref<64x512xf32>) -> ()
  call @nest(%b) : (memref<64x512xf32>) -> ()
  return
}

// -----

// Leading dimensions with one iteration are skipped: the range is over the
// first dimension with more (here the second, with a step of 2).
// CHECK-LABEL: func.func private @unit_batch
// CHECK-SAME:    zero.parallel_iterations = 512 : i64
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (%c0, %{{.*}}, %c0) to (%c1, %{{.*}}, %{{.*}}) step (%c1, %c2, %c1)
func.func private @unit_batch(%x: memref<1x1024x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %cst = arith.constant 2.0 : f32
  scf.parallel (%b, %i, %j) = (%c0, %c0, %c0) to (%c1, %c1024, %c64) step (%c1, %c2, %c1) {
    memref.store %cst, %x[%b, %i, %j] : memref<1x1024x64xf32>
    scf.reduce
  }
  return
}
func.func @use_unit_batch(%x: memref<1x1024x64xf32>) {
  call @unit_batch(%x) : (memref<1x1024x64xf32>) -> ()
  return
}

// -----

// Reductions inside the nest count as work: 256 rows of a 1024-long sum.
// CHECK-LABEL: func.func private @row_sums
// CHECK-SAME:    zero.parallel_iterations = 256 : i64
// CHECK:         scf.parallel
// CHECK:           scf.for
func.func private @row_sums(%x: memref<256x1024xf32>, %y: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    scf.for %k = %c0 to %c1024 step %c1 {
      %v = memref.load %x[%i, %k] : memref<256x1024xf32>
      %s = memref.load %y[%i] : memref<256xf32>
      %t = arith.addf %s, %v : f32
      memref.store %t, %y[%i] : memref<256xf32>
    }
    scf.reduce
  }
  return
}
func.func @use_row_sums(%x: memref<256x1024xf32>, %y: memref<256xf32>) {
  call @row_sums(%x, %y) : (memref<256x1024xf32>, memref<256xf32>) -> ()
  return
}

// -----

// Left alone: too little work; a public function; an outer scf.for
// (a reduction first); two nests; a side effect outside the nest; a
// dynamic bound; every dimension with one iteration.
// CHECK-LABEL: func.func private @small(%{{[^:]*}}: memref<8x8xf32>)
// CHECK-NOT:     zero.parallel_iterations
// CHECK-LABEL: func.func @public(%{{[^:]*}}: memref<64x512xf32>)
// CHECK-LABEL: func.func private @reduction_first(%{{[^:]*}}: memref<512x64xf32>
// CHECK-LABEL: func.func private @two_nests(%{{[^:]*}}: memref<64x512xf32>)
// CHECK-LABEL: func.func private @side_effect(%{{[^:]*}}: memref<64x512xf32>)
// CHECK-LABEL: func.func private @dynamic(%{{[^:]*}}: memref<?x512xf32>, %{{[^:]*}}: index)
// CHECK-LABEL: func.func private @single(%{{[^:]*}}: memref<1x1xf32>)
func.func private @small(%x: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %cst = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    memref.store %cst, %x[%i, %j] : memref<8x8xf32>
    scf.reduce
  }
  return
}
func.func @public(%x: memref<64x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %cst = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c512) step (%c1, %c1) {
    memref.store %cst, %x[%i, %j] : memref<64x512xf32>
    scf.reduce
  }
  return
}
func.func private @reduction_first(%x: memref<512x64xf32>, %y: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  scf.for %k = %c0 to %c512 step %c1 {
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      %v = memref.load %x[%k, %j] : memref<512x64xf32>
      %s = memref.load %y[%j] : memref<64xf32>
      %t = arith.addf %s, %v : f32
      memref.store %t, %y[%j] : memref<64xf32>
      scf.reduce
    }
  }
  return
}
func.func private @two_nests(%x: memref<64x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %cst = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c512) step (%c1, %c1) {
    memref.store %cst, %x[%i, %j] : memref<64x512xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c512) step (%c1, %c1) {
    memref.store %cst, %x[%i, %j] : memref<64x512xf32>
    scf.reduce
  }
  return
}
func.func private @side_effect(%x: memref<64x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %cst = arith.constant 2.0 : f32
  memref.store %cst, %x[%c0, %c0] : memref<64x512xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c512) step (%c1, %c1) {
    memref.store %cst, %x[%i, %j] : memref<64x512xf32>
    scf.reduce
  }
  return
}
func.func private @dynamic(%x: memref<?x512xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %cst = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c512) step (%c1, %c1) {
    memref.store %cst, %x[%i, %j] : memref<?x512xf32>
    scf.reduce
  }
  return
}
func.func private @single(%x: memref<1x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1, %c1) step (%c1, %c1) {
    memref.store %cst, %x[%i, %j] : memref<1x1xf32>
    scf.reduce
  }
  return
}
func.func @callers(%s: memref<8x8xf32>, %x: memref<64x512xf32>, %t: memref<512x64xf32>, %y: memref<64xf32>, %d: memref<?x512xf32>, %n: index, %one: memref<1x1xf32>) {
  call @small(%s) : (memref<8x8xf32>) -> ()
  call @reduction_first(%t, %y) : (memref<512x64xf32>, memref<64xf32>) -> ()
  call @two_nests(%x) : (memref<64x512xf32>) -> ()
  call @side_effect(%x) : (memref<64x512xf32>) -> ()
  call @dynamic(%d, %n) : (memref<?x512xf32>, index) -> ()
  call @single(%one) : (memref<1x1xf32>) -> ()
  return
}

// -----

// Extreme bounds: a span that overflows int64 is not split; a huge trip
// count is (the work estimate saturates).
// CHECK-LABEL: func.func private @overflow(%{{[^:]*}}: memref<4xf32>)
// CHECK-NOT:     zero.parallel_iterations
// CHECK-LABEL: func.func private @huge(%{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: memref<4xf32>)
// CHECK-SAME:    zero.parallel_iterations = 4611686018427387904 : i64
func.func private @overflow(%x: memref<4xf32>) {
  %lo = arith.constant -6917529027641081856 : index
  %hi = arith.constant 6917529027641081856 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%lo) to (%hi) step (%c1) {
    scf.reduce
  }
  return
}
func.func private @huge(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %hi = arith.constant 4611686018427387904 : index
  %big = arith.constant 1099511627776 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%hi) step (%c1) {
    scf.for %k = %c0 to %big step %c1 {
      memref.store %cst, %x[%c0] : memref<4xf32>
    }
    scf.reduce
  }
  return
}
func.func @extremes(%x: memref<4xf32>) {
  call @overflow(%x) : (memref<4xf32>) -> ()
  call @huge(%x) : (memref<4xf32>) -> ()
  return
}
