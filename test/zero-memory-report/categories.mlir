// RUN: zero-opt %s --zero-memory-report 2>&1 -o /dev/null | FileCheck %s
// RUN: zero-opt %s --zero-memory-report="output=%t.json" -o /dev/null && FileCheck %s --check-prefix=JSON < %t.json

// Each category's peak is simulated on its own, from the argument bytes
// (w: 16 bytes of params) plus the allocations marked with zero.category
// (unmarked ones are activations), sizes rounded up to their alignment:
//   grads 128; params 16 + 64 (32 bytes rounded to 64);
//   activations max(40, 80); total 16 + 128 + 80 = 224.
// CHECK: remark: zero-memory-report: model states params 16 grads 0 optimizer_states 0 bytes; generated peak 208 bytes; predicted peak total 224 bytes (params 80, grads 128, optimizer_states 0, activations 80, comm 0)
func.func @step(%w: memref<4xf32> {zero.param = "w"}) attributes {zero.role = "forward_backward"} {
  %g = memref.alloc() {alignment = 64 : i64, zero.category = "grads"} : memref<32xf32>
  %a = memref.alloc() : memref<10xf32>
  memref.dealloc %a : memref<10xf32>
  %p = memref.alloc() {alignment = 64 : i64, zero.category = "params"} : memref<8xf32>
  memref.dealloc %p : memref<8xf32>
  %b = memref.alloc() : memref<20xf32>
  memref.dealloc %g : memref<32xf32>
  memref.dealloc %b : memref<20xf32>
  return
}

// JSON:      "predicted_peak_bytes": 224,
// JSON-NEXT: "predicted_peak_bytes_by_category": {
// JSON-NEXT:   "activations": 80,
// JSON-NEXT:   "comm": 0,
// JSON-NEXT:   "grads": 128,
// JSON-NEXT:   "optimizer_states": 0,
// JSON-NEXT:   "params": 80
// JSON-NEXT: },
