// RUN: zero-opt %s --pass-pipeline='builtin.module(func.func(zero-pad-gemm-rows{row-alignment=24}))' -verify-diagnostics
// RUN: not zero-opt %s --pass-pipeline='builtin.module(func.func(zero-pad-gemm-rows{max-overhead-percent=-1}))' 2>&1 | FileCheck %s --check-prefix=OVERHEAD

// Options out of range are refused on the function, with the value.
// expected-error@+2 {{zero-pad-gemm-rows: row-alignment must be a power of two, not 24}}
// OVERHEAD: error: zero-pad-gemm-rows: max-overhead-percent must be at least 0, not -1
func.func @f() {
  return
}
