// RUN: zero-opt %s -split-input-file -verify-diagnostics --zero-export-step-abi | FileCheck %s

// The packed form loads one pointer per argument: buffers are passed as
// they are, scalars are loaded from behind their pointer. The descriptor is
// NUL-terminated JSON; the table ends with two null pointers.
// CHECK-LABEL: llvm.func @zero_entry_opt(
// CHECK-SAME: %[[ARGS:.*]]: !llvm.ptr) {
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[W:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[LR:.*]] = llvm.load %[[P]] : !llvm.ptr -> f32
// CHECK: llvm.call @opt(%[[W]], %[[LR]]) : (!llvm.ptr, f32) -> ()
// CHECK: llvm.mlir.global private constant @zero_entry_name_0("opt\00")
// CHECK: llvm.mlir.global external constant @zero_step_abi("{\22abi_version\22:1,{{.*}}}\00")
// CHECK: llvm.mlir.global external constant @zero_step_entries() {{.*}} : !llvm.array<2 x struct<(ptr, ptr)>>
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.mlir.addressof @zero_entry_name_0
// CHECK: llvm.mlir.addressof @zero_entry_opt
// CHECK: llvm.insertvalue %[[NULL]], %{{.*}}[1, 0]
// CHECK: llvm.insertvalue %[[NULL]], %{{.*}}[1, 1]
module attributes {zero.step_abi = {abi_version = 1 : i64, entries = [{name = "opt", role = "optimizer", args = [{role = "param"}, {role = "hyper", scalar = true}]}]}} {
  llvm.func @opt(%w: !llvm.ptr, %lr: f32) {
    llvm.return
  }
}

// -----

// Without the bare-pointer convention a buffer is five LLVM arguments.
module attributes {zero.step_abi = {abi_version = 1 : i64, entries = [{name = "opt", role = "optimizer", args = [{role = "param"}]}]}} {
  // expected-error@+1 {{takes 5 LLVM arguments for the descriptor's 1 (and must return nothing); lower function boundaries with the bare-pointer calling convention}}
  llvm.func @opt(%a: !llvm.ptr, %b: !llvm.ptr, %c: i64, %d: i64, %e: i64) {
    llvm.return
  }
}

// -----

// No descriptor.
// expected-error@+1 {{zero-export-step-abi: the module has no zero.step_abi descriptor; run zero-step-abi after bufferization}}
module {
  llvm.func @opt(%w: !llvm.ptr) {
    llvm.return
  }
}
