// RUN: zero-opt %s --zero-parallel-calls-to-runtime -split-input-file -verify-diagnostics | FileCheck %s

// A call over [0, N) becomes zrt_parallel_for with a context buffer (one
// per caller, in its entry block, sized for its widest call) and a task
// that loads the arguments back and calls the function on its range.
// CHECK-LABEL: llvm.func internal @nest(
// CHECK-NOT:     zero.parallel_iterations
// CHECK-LABEL: llvm.func internal @nest_task(
// CHECK-SAME:    %[[CTX:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[E:.*]]: i64)
// CHECK:         %[[S0:.*]] = llvm.getelementptr %[[CTX]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK:         %[[X:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[S1:.*]] = llvm.getelementptr %[[CTX]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK:         %[[F:.*]] = llvm.load %[[S1]] : !llvm.ptr -> f32
// CHECK:         llvm.call @nest(%[[B]], %[[E]], %[[X]], %[[F]])
// CHECK:         llvm.return
// CHECK-LABEL: llvm.func @caller(
// CHECK-SAME:    %[[P:.*]]: !llvm.ptr, %[[Q:.*]]: !llvm.ptr, %[[G:.*]]: f32)
// CHECK:         %[[BUF:.*]] = llvm.alloca %{{.*}} x !llvm.array<2 x i64> {alignment = 8 : i64}
// CHECK:         llvm.br ^bb1
// CHECK:       ^bb1:
// CHECK:         %[[T0:.*]] = llvm.getelementptr %[[BUF]][0]
// CHECK:         llvm.store %[[P]], %[[T0]] : !llvm.ptr, !llvm.ptr
// CHECK:         %[[T1:.*]] = llvm.getelementptr %[[BUF]][1]
// CHECK:         llvm.store %[[G]], %[[T1]] : f32, !llvm.ptr
// CHECK:         %[[N:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK:         %[[TASK:.*]] = llvm.mlir.addressof @nest_task : !llvm.ptr
// CHECK:         llvm.call @zrt_parallel_for(%[[N]], %[[TASK]], %[[BUF]]) : (i64, !llvm.ptr, !llvm.ptr) -> ()
// CHECK:         llvm.store %[[Q]]
// CHECK:         llvm.call @zrt_parallel_for
// A call that does not cover [0, N) stays as it is.
// CHECK:         llvm.call @nest(%{{.*}}, %{{.*}}, %[[P]], %[[G]])
// CHECK:         llvm.return
// CHECK:       llvm.func @zrt_parallel_for(i64, !llvm.ptr, !llvm.ptr)
llvm.func internal @nest(%b: i64, %e: i64, %x: !llvm.ptr, %f: f32) attributes {zero.parallel_iterations = 64 : i64} {
  llvm.return
}
llvm.func @caller(%p: !llvm.ptr, %q: !llvm.ptr, %g: f32) {
  llvm.br ^bb1
^bb1:
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c32 = llvm.mlir.constant(32 : i64) : i64
  %c64 = llvm.mlir.constant(64 : i64) : i64
  llvm.call @nest(%c0, %c64, %p, %g) : (i64, i64, !llvm.ptr, f32) -> ()
  llvm.call @nest(%c0, %c64, %q, %g) : (i64, i64, !llvm.ptr, f32) -> ()
  llvm.call @nest(%c0, %c32, %p, %g) : (i64, i64, !llvm.ptr, f32) -> ()
  llvm.return
}

// -----

// An argument that does not fit an 8-byte slot: the call stays, the mark
// goes.
// CHECK-LABEL: llvm.func internal @wide(
// CHECK-NOT:     zero.parallel_iterations
// CHECK-LABEL: llvm.func @calls_wide
// CHECK:         llvm.call @wide(
// CHECK-NOT:     zrt_parallel_for
llvm.func internal @wide(%b: i64, %e: i64, %v: vector<4xf32>) attributes {zero.parallel_iterations = 8 : i64} {
  llvm.return
}
llvm.func @calls_wide(%v: vector<4xf32>) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c8 = llvm.mlir.constant(8 : i64) : i64
  llvm.call @wide(%c0, %c8, %v) : (i64, i64, vector<4xf32>) -> ()
  llvm.return
}

// -----

// A declaration of zrt_parallel_for that is not the runtime's.
// expected-error @+1 {{zrt_parallel_for is declared with type '!llvm.func<void (i32)>', not the runtime's '!llvm.func<void (i64, ptr, ptr)>'}}
llvm.func @zrt_parallel_for(i32)
llvm.func internal @nest(%b: i64, %e: i64) attributes {zero.parallel_iterations = 4 : i64} {
  llvm.return
}
llvm.func @caller() {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c4 = llvm.mlir.constant(4 : i64) : i64
  llvm.call @nest(%c0, %c4) : (i64, i64) -> ()
  llvm.return
}
