// RUN: zero-opt %s --zero-schedule="link-gbps=0" -verify-diagnostics
// RUN: not zero-opt %s --zero-schedule="link-latency-us=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LATENCY
// RUN: not zero-opt %s --zero-schedule="timeline=/nonexistent/dir/t.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FILE
// Rates of the cost model are positive; a timeline that cannot be written
// is one located error.

// LATENCY: error: zero-schedule: link-latency-us must be >= 0, got -1
// FILE: error: zero-schedule: {{.*}}/nonexistent/dir/t.json

// expected-error@+1 {{zero-schedule: link-gbps must be a positive finite rate, got 0}}
module {
  shard.grid @g(shape = 2)
  func.func @f(%w: tensor<64xf32>) -> tensor<128xf32> {
    %g = shard.all_gather %w on @g grid_axes = [0] gather_axis = 0
        : tensor<64xf32> -> tensor<128xf32>
    return %g : tensor<128xf32>
  }
}
