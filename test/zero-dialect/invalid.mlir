// RUN: zero-opt %s -split-input-file -verify-diagnostics
// Each structural rule of the started collectives and zero.wait.

func.func @token_unused(%a: tensor<64xf32>) -> tensor<128xf32> {
  // expected-error@+1 {{token must have exactly one use, a zero.wait}}
  %p, %t = zero.all_gather_start %a : tensor<64xf32> -> tensor<128xf32>
  return %p : tensor<128xf32>
}

// -----

func.func @pending_read_early(%a: tensor<64xf32>) -> (tensor<128xf32>, tensor<128xf32>) {
  // expected-error@+1 {{pending result must have exactly one use: the zero.wait of its token}}
  %p, %t = zero.all_gather_start %a : tensor<64xf32> -> tensor<128xf32>
  %r = zero.wait %t, %p : tensor<128xf32> -> tensor<128xf32>
  return %r, %p : tensor<128xf32>, tensor<128xf32>
}

// -----

func.func @gather_shape(%a: tensor<64xf32>) -> tensor<100xf32> {
  // expected-error@+1 {{has result of 100 elements, not a multiple of the 64 elements of its input}}
  %p, %t = zero.all_gather_start %a : tensor<64xf32> -> tensor<100xf32>
  %r = zero.wait %t, %p : tensor<100xf32> -> tensor<100xf32>
  return %r : tensor<100xf32>
}

// -----

func.func @scatter_rank(%a: tensor<8x8xf32>) -> tensor<32xf32> {
  // expected-error@+1 {{works on 1-D values (zero-partition's flat form)}}
  %p, %t = zero.reduce_scatter_start %a : tensor<8x8xf32> -> tensor<32xf32>
  %r = zero.wait %t, %p : tensor<32xf32> -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

func.func @reduce_shape(%a: tensor<8xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{an all-reduce keeps the shape}}
  %p, %t = zero.all_reduce_start %a : tensor<8xf32> -> tensor<4x2xf32>
  %r = zero.wait %t, %p : tensor<4x2xf32> -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

func.func @element_type(%a: tensor<8xf32>) -> tensor<8xf64> {
  // expected-error@+1 {{has input element type 'f32' but result element type 'f64'}}
  %p, %t = zero.all_reduce_start %a : tensor<8xf32> -> tensor<8xf64>
  %r = zero.wait %t, %p : tensor<8xf64> -> tensor<8xf64>
  return %r : tensor<8xf64>
}

// -----

func.func @memref_without_output(%a: memref<8xf32>) {
  // expected-error@+1 {{on memrefs takes an output operand (`into`) and returns only the token}}
  %p, %t = "zero.all_reduce_start"(%a) : (memref<8xf32>) -> (tensor<8xf32>, !zero.token)
  return
}

// -----

func.func @strided(%a: memref<8xf32, strided<[2]>>, %b: memref<16xf32>) {
  // expected-error@+1 {{needs contiguous row-major buffers}}
  %t = zero.all_gather_start %a into %b : memref<8xf32, strided<[2]>> into memref<16xf32>
  zero.wait %t
  return
}

// -----

func.func @dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error@+1 {{needs static shapes}}
  %p, %t = zero.all_reduce_start %a : tensor<?xf32> -> tensor<?xf32>
  %r = zero.wait %t, %p : tensor<?xf32> -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

func.func @wait_with_pending(%a: memref<8xf32>, %c: tensor<8xf32>) -> tensor<8xf32> {
  %t = zero.all_reduce_start %a into %a : memref<8xf32> into memref<8xf32>
  // expected-error@+1 {{takes no pending tensor: its start works on memrefs}}
  %r = zero.wait %t, %c : tensor<8xf32> -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

func.func @token_from_argument(%t: !zero.token) {
  // expected-error@+1 {{token must come from a zero.*_start op in the same region}}
  zero.wait %t
  return
}

// -----

func.func @keep_kind(%a: memref<8xf32>, %b: memref<8xf32>, %c: tensor<8xf32>) {
  %t = zero.all_reduce_start %a into %b : memref<8xf32> into memref<8xf32>
  // expected-error@+1 {{keeps memrefs, as its start works on memrefs}}
  zero.wait %t keep(%c : tensor<8xf32>)
  return
}

// -----

// An extent holds a statically shaped tensor.
// expected-error@+1 {{!zero.extent needs a static shape, got 'tensor<?xf32>'}}
func.func @extent_dynamic(%e: !zero.extent<tensor<?xf32>>) {
  return
}

// -----

func.func @read_wrong_type(%e: !zero.extent<tensor<8xf32>>) -> tensor<4xf32> {
  // expected-error@+1 {{has pending result of type 'tensor<4xf32>', but its extent holds 'tensor<8xf32>'}}
  %p, %t = zero.read_start %e : !zero.extent<tensor<8xf32>> -> tensor<4xf32>
  %v = zero.wait %t, %p : tensor<4xf32> -> tensor<4xf32>
  return %v : tensor<4xf32>
}

// -----

func.func @read_both_forms(%e: !zero.extent<tensor<8xf32>>, %b: memref<8xf32>) {
  // expected-error@+1 {{returns the pending tensor (tensor form) or reads into an output operand (memref form), not both}}
  %t = zero.read_start %e : !zero.extent<tensor<8xf32>>
  zero.wait %t
  return
}

// -----

func.func @write_wrong_type(%e: !zero.extent<tensor<8xf32>>, %v: tensor<8xf64>) {
  // expected-error@+1 {{has input of type 'tensor<8xf64>', but its extent holds 'tensor<8xf32>'}}
  %t = zero.write_start %v to %e : tensor<8xf64> to !zero.extent<tensor<8xf32>>
  zero.wait %t keep(%v : tensor<8xf64>)
  return
}

// -----

func.func @write_not_waited(%e: !zero.extent<tensor<8xf32>>, %v: tensor<8xf32>) {
  // expected-error@+1 {{token must have exactly one use, a zero.wait}}
  %t = zero.write_start %v to %e : tensor<8xf32> to !zero.extent<tensor<8xf32>>
  return
}

// -----

func.func @write_wait_pending(%e: !zero.extent<tensor<8xf32>>, %v: tensor<8xf32>) -> tensor<8xf32> {
  %t = zero.write_start %v to %e : tensor<8xf32> to !zero.extent<tensor<8xf32>>
  // expected-error@+1 {{takes no pending tensor: a write returns none}}
  %r = zero.wait %t, %v : tensor<8xf32> -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

func.func @write_keeps_memref(%e: !zero.extent<tensor<8xf32>>, %v: tensor<8xf32>, %b: memref<8xf32>) {
  %t = zero.write_start %v to %e : tensor<8xf32> to !zero.extent<tensor<8xf32>>
  // expected-error@+1 {{keeps tensors, as its start works on tensors}}
  zero.wait %t keep(%b : memref<8xf32>)
  return
}

// -----

func.func @staging_strided(%e: !zero.extent<tensor<8xf32>>, %b: memref<8xf32, strided<[2]>>) {
  // expected-error@+1 {{needs a contiguous row-major buffer, got 'memref<8xf32, strided<[2]>>'}}
  %t = zero.read_start %e into %b : !zero.extent<tensor<8xf32>> into memref<8xf32, strided<[2]>>
  zero.wait %t keep(%b : memref<8xf32, strided<[2]>>)
  return
}

// -----

// The collectives on buffers: a gather's output holds N blocks of its input.
func.func @gather_blocks(%a: memref<4xf32>, %b: memref<10xf32>) {
  // expected-error@+1 {{'zero.all_gather' op has output of 10 elements, not a multiple of the 4 elements of its input}}
  zero.all_gather %a into %b : memref<4xf32> into memref<10xf32>
  return
}

// -----

func.func @scatter_rank(%a: memref<2x4xf32>, %b: memref<4xf32>) {
  // expected-error@+1 {{'zero.reduce_scatter' op works on 1-D values (zero-partition's flat form)}}
  zero.reduce_scatter %a into %b : memref<2x4xf32> into memref<4xf32>
  return
}

// -----

func.func @reduce_shape(%a: memref<4xf32>, %b: memref<8xf32>) {
  // expected-error@+1 {{'zero.all_reduce' op has input shape of 'memref<4xf32>' but output of 'memref<8xf32>'; an all-reduce keeps the shape}}
  zero.all_reduce %a into %b : memref<4xf32> into memref<8xf32>
  return
}

// -----

func.func @reduce_kind(%a: memref<4xf32>) {
  // expected-error@+1 {{'zero.all_reduce' op reduces with min; the runtime's all-reduce takes sum and max}}
  zero.all_reduce %a into %a reduction = min : memref<4xf32> into memref<4xf32>
  return
}

// -----

func.func @reduce_types(%a: memref<4xf32>, %b: memref<4xf64>) {
  // expected-error@+1 {{'zero.all_reduce' op has input element type 'f32' but result element type 'f64'}}
  zero.all_reduce %a into %b : memref<4xf32> into memref<4xf64>
  return
}

// -----

func.func @gather_strided(%a: memref<4xf32, strided<[2]>>, %b: memref<8xf32>) {
  // expected-error@+1 {{'zero.all_gather' op needs contiguous row-major buffers, got 'memref<4xf32, strided<[2]>>'}}
  zero.all_gather %a into %b : memref<4xf32, strided<[2]>> into memref<8xf32>
  return
}

// -----

func.func @arena_negative() {
  // expected-error@+1 {{'zero.comm_reserve' op reserves -1 bytes; the arena's size is >= 0}}
  zero.comm_reserve -1
  return
}
