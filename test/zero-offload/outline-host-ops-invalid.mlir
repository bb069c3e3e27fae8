// RUN: zero-opt %s -split-input-file -verify-diagnostics --zero-outline-host-ops
// zero-outline-host-ops moves bufferized operations of an entry block only.

#id = affine_map<(d0) -> (d0)>
func.func @tensors(%w: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'linalg.generic' op runs on the host (zero.space = "host") and returns values; bufferize first (the host updates work on buffers)}}
  %r = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%w : tensor<8xf32>) attrs = {zero.space = "host"} {
  ^bb0(%b: f32):
    linalg.yield %b : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
func.func @nested(%w: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c2 step %c1 {
    // expected-error@+1 {{'linalg.generic' op runs on the host (zero.space = "host") inside a loop or region; zero-outline-host-ops moves only operations of a function's entry block}}
    linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%w : memref<8xf32>) attrs = {zero.space = "host"} {
    ^bb0(%b: f32):
      linalg.yield %b : f32
    }
  }
  return
}
