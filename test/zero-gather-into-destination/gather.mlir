// RUN: zero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(zero-gather-into-destination))' | FileCheck %s

// zero-gen's GPT at stage 2 on a slow link: the 7 parameters zero-schedule
// updates in the backward pass gather in place into their arguments; no
// gathered parameter is copied.
// RUN: zero-gen gpt --d-model 128 --layers 4 --heads 4 --seq 64 --batch 2 --vocab 128 \
// RUN:   | zero-opt --zero-partition="stage=2 world-size=2" --zero-schedule="link-gbps=0.2" \
// RUN:     --zero-bufferize-step -mlir-print-ir-after=zero-gather-into-destination \
// RUN:     -mlir-print-op-on-diagnostic=0 -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=GEN --implicit-check-not="memref.copy %expand_shape{{[_0-9]*}}, %arg"
// GEN-COUNT-7: zero.all_gather_start %subview{{[_0-9]*}} into %collapse_shape
// GEN-NOT:     zero.all_gather_start %subview

// torch-mlir's shape (f64) at stage 1, every gather left at the end:
// matrices into views of their arguments, vectors into the arguments.
// RUN: zero-opt %S/../../integration_tests/zero-run/Inputs/torch-gpt.mlir \
// RUN:     --zero-partition="stage=1 world-size=2" \
// RUN:     --zero-schedule="link-gbps=100 link-latency-us=0 defer-gathers=false bucket-bytes=0" \
// RUN:     --zero-bufferize-step -mlir-print-ir-after=zero-gather-into-destination \
// RUN:     -mlir-print-op-on-diagnostic=0 -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TORCH --implicit-check-not="memref.copy %expand_shape{{[_0-9]*}}, %arg"
// TORCH: zero.all_gather_start %subview{{[_0-9]*}} into %arg{{[0-9]+}} {{.*}} into memref<8xf64>
// TORCH: zero.all_gather_start %subview{{[_0-9]*}} into %collapse_shape{{.*}} into memref<256xf64>

// The stage-2 update in the backward pass: the new shard is written into
// this rank's block of the parameter, gathered into a fresh buffer and
// copied back over the whole parameter. It gathers in place instead
// (in == out + rank * count), and the buffer, its copy and its free go.
// CHECK-LABEL: func.func @own_block
// CHECK-SAME:    (%[[P:.*]]: memref<8x16xf32>, %[[G:.*]]: memref<64xf32>)
// CHECK:         %[[OWN:.*]] = memref.subview
// CHECK:         linalg.generic {{.*}} outs(%[[OWN]]
// CHECK:         %[[INTO:.*]] = memref.collapse_shape %[[P]] {{\[\[}}0, 1]] : memref<8x16xf32> into memref<128xf32>
// CHECK-NEXT:    %[[T:.*]] = zero.all_gather_start %[[OWN]] into %[[INTO]]
// CHECK:         zero.wait %[[T]] keep(%[[OWN]], %[[INTO]] :
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.copy
// CHECK-NOT:     memref.dealloc
// CHECK:         return
shard.grid @g(shape = 2)
func.func @own_block(%p: memref<8x16xf32>, %g: memref<64xf32>) {
  %c64 = arith.constant 64 : index
  %r = shard.process_linear_index on @g : index
  %off = arith.muli %r, %c64 : index
  %flat = memref.collapse_shape %p [[0, 1]] : memref<8x16xf32> into memref<128xf32>
  %own = memref.subview %flat[%off] [64] [1] : memref<128xf32> to memref<64xf32, strided<[1], offset: ?>>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%g : memref<64xf32>) outs(%own : memref<64xf32, strided<[1], offset: ?>>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.subf %out, %in : f32
    linalg.yield %s : f32
  }
  %buf = memref.alloc() : memref<128xf32>
  %t = zero.all_gather_start %own into %buf : memref<64xf32, strided<[1], offset: ?>> into memref<128xf32>
  zero.wait %t keep(%own, %buf : memref<64xf32, strided<[1], offset: ?>>, memref<128xf32>)
  %e = memref.expand_shape %buf [[0, 1]] output_shape [8, 16] : memref<128xf32> into memref<8x16xf32>
  memref.copy %e, %p : memref<8x16xf32> to memref<8x16xf32>
  memref.dealloc %buf : memref<128xf32>
  return
}

// -----

// The shard lives in a buffer of its own (a 1-D parameter, copied without
// a reshape): gathered into the parameter; reading it after the copy is
// reading the gathered value, as before.
// CHECK-LABEL: func.func @other_buffer
// CHECK-SAME:    (%[[P:.*]]: memref<128xf32>, %[[S:.*]]: memref<64xf32>, %[[O:.*]]: memref<128xf32>)
// CHECK-NEXT:    %[[T:.*]] = zero.all_gather_start %[[S]] into %[[P]]
// CHECK-NEXT:    zero.wait %[[T]] keep(%[[S]], %[[P]] :
// CHECK-NEXT:    memref.copy %[[P]], %[[O]]
// CHECK-NEXT:    return
func.func @other_buffer(%p: memref<128xf32>, %s: memref<64xf32>, %o: memref<128xf32>) {
  %buf = memref.alloc() : memref<128xf32>
  %t = zero.all_gather_start %s into %buf : memref<64xf32> into memref<128xf32>
  zero.wait %t keep(%s, %buf : memref<64xf32>, memref<128xf32>)
  memref.copy %buf, %p : memref<128xf32> to memref<128xf32>
  memref.dealloc %buf : memref<128xf32>
  memref.copy %p, %o : memref<128xf32> to memref<128xf32>
  return
}

// -----

// The old parameter is still read while the gather is in flight: kept.
// CHECK-LABEL: func.func @read_in_flight
// CHECK:         %[[BUF:.*]] = memref.alloc() : memref<128xf32>
// CHECK:         zero.all_gather_start %{{.*}} into %[[BUF]]
// CHECK:         memref.copy %[[BUF]], %{{.*}}
func.func @read_in_flight(%p: memref<128xf32>, %s: memref<64xf32>, %o: memref<128xf32>) {
  %buf = memref.alloc() : memref<128xf32>
  %t = zero.all_gather_start %s into %buf : memref<64xf32> into memref<128xf32>
  memref.copy %p, %o : memref<128xf32> to memref<128xf32>
  zero.wait %t keep(%s, %buf : memref<64xf32>, memref<128xf32>)
  memref.copy %buf, %p : memref<128xf32> to memref<128xf32>
  memref.dealloc %buf : memref<128xf32>
  return
}

// -----

// Read through a pointer taken from a view of it, by a call placed after
// the start: kept (the call is the access, not the extraction).
// CHECK-LABEL: func.func @pointer_in_flight
// CHECK:         %[[BUF:.*]] = memref.alloc() : memref<128xf32>
// CHECK:         zero.all_gather_start %{{.*}} into %[[BUF]]
// CHECK:         memref.copy %[[BUF]], %{{.*}}
func.func private @reads(index)
func.func @pointer_in_flight(%p: memref<128xf32>, %s: memref<64xf32>) {
  %v = memref.subview %p[0] [32] [1] : memref<128xf32> to memref<32xf32, strided<[1]>>
  %ptr = memref.extract_aligned_pointer_as_index %v : memref<32xf32, strided<[1]>> -> index
  %buf = memref.alloc() : memref<128xf32>
  %t = zero.all_gather_start %s into %buf : memref<64xf32> into memref<128xf32>
  func.call @reads(%ptr) : (index) -> ()
  zero.wait %t keep(%s, %buf : memref<64xf32>, memref<128xf32>)
  memref.copy %buf, %p : memref<128xf32> to memref<128xf32>
  memref.dealloc %buf : memref<128xf32>
  return
}

// -----

// The input is a block of the parameter, but not at rank * count: the
// runtime could not gather it in place. Kept.
// CHECK-LABEL: func.func @not_own_block
// CHECK:         %[[BUF:.*]] = memref.alloc() : memref<128xf32>
// CHECK:         zero.all_gather_start %{{.*}} into %[[BUF]]
// CHECK:         memref.copy %[[BUF]], %{{.*}}
func.func @not_own_block(%p: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %own = memref.subview %p[%c0] [64] [1] : memref<128xf32> to memref<64xf32, strided<[1], offset: ?>>
  %buf = memref.alloc() : memref<128xf32>
  %t = zero.all_gather_start %own into %buf : memref<64xf32, strided<[1], offset: ?>> into memref<128xf32>
  zero.wait %t keep(%own, %buf : memref<64xf32, strided<[1], offset: ?>>, memref<128xf32>)
  memref.copy %buf, %p : memref<128xf32> to memref<128xf32>
  memref.dealloc %buf : memref<128xf32>
  return
}

// -----

// The gathered buffer is also read for itself: kept.
// CHECK-LABEL: func.func @buffer_used
// CHECK:         %[[BUF:.*]] = memref.alloc() : memref<128xf32>
// CHECK:         zero.all_gather_start %{{.*}} into %[[BUF]]
// CHECK:         memref.copy %[[BUF]], %{{.*}}
func.func @buffer_used(%p: memref<128xf32>, %s: memref<64xf32>, %o: memref<128xf32>) {
  %buf = memref.alloc() : memref<128xf32>
  %t = zero.all_gather_start %s into %buf : memref<64xf32> into memref<128xf32>
  zero.wait %t keep(%s, %buf : memref<64xf32>, memref<128xf32>)
  memref.copy %buf, %o : memref<128xf32> to memref<128xf32>
  memref.copy %buf, %p : memref<128xf32> to memref<128xf32>
  memref.dealloc %buf : memref<128xf32>
  return
}

// -----

// The destination is a strided block of a larger buffer: kept.
// CHECK-LABEL: func.func @strided_destination
// CHECK:         %[[BUF:.*]] = memref.alloc() : memref<128xf32>
// CHECK:         zero.all_gather_start %{{.*}} into %[[BUF]]
func.func @strided_destination(%p: memref<256xf32>, %s: memref<64xf32>) {
  %d = memref.subview %p[128] [128] [1] : memref<256xf32> to memref<128xf32, strided<[1], offset: 128>>
  %buf = memref.alloc() : memref<128xf32>
  %t = zero.all_gather_start %s into %buf : memref<64xf32> into memref<128xf32>
  zero.wait %t keep(%s, %buf : memref<64xf32>, memref<128xf32>)
  memref.copy %buf, %d : memref<128xf32> to memref<128xf32, strided<[1], offset: 128>>
  memref.dealloc %buf : memref<128xf32>
  return
}
