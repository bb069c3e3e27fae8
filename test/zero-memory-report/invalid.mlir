// RUN: zero-opt %s -split-input-file -verify-diagnostics --zero-memory-report

// A hand-written manifest without zero.stage: a located error, not a crash.
// expected-error@+1 {{has a zero.manifest but no integer zero.stage}}
func.func @no_stage(%w: memref<2xf32> {zero.param = "w"})
    attributes {zero.role = "train_step", zero.world_size = 2 : i64,
                zero.manifest = [#zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 2, sharded = params|grads|states>]} {
  return
}

// -----

// A stage out of range. (The dialect checks the manifest itself, and its
// world size: zero-dialect/manifest-invalid.mlir.)
// expected-error@+1 {{has zero.stage = 4 and zero.world_size = 2; the stage must be 0 to 3 and the world size at least 1}}
func.func @stage_four(%w: memref<2xf32> {zero.param = "w"})
    attributes {zero.role = "train_step", zero.stage = 4 : i64, zero.world_size = 2 : i64,
                zero.manifest = [#zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 2, sharded = params|grads|states>]} {
  return
}

// -----

// Complex elements: the report knows no size for them.
// expected-error@+1 {{zero-memory-report: buffer of type 'memref<4xcomplex<f32>>' has element type 'complex<f32>', whose size the report does not know}}
func.func @complex_arg(%w: memref<4xcomplex<f32>> {zero.param = "w"}) attributes {zero.role = "optimizer"} {
  return
}

// -----

// Vector elements, in an allocation.
func.func @vector_alloc(%w: memref<4xf32> {zero.param = "w"}) attributes {zero.role = "optimizer"} {
  // expected-error@+1 {{buffer of type 'memref<4xvector<4xf32>>' has element type 'vector<4xf32>'}}
  %a = memref.alloc() : memref<4xvector<4xf32>>
  memref.dealloc %a : memref<4xvector<4xf32>>
  return
}

// -----

// Index elements, in an allocation inside a loop.
func.func @index_alloc(%w: memref<4xf32> {zero.param = "w"}) attributes {zero.role = "optimizer"} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c2 step %c1 {
    // expected-error@+1 {{buffer of type 'memref<8xindex>' has element type 'index'}}
    %a = memref.alloc() : memref<8xindex>
    memref.dealloc %a : memref<8xindex>
  }
  return
}

// -----

// A buffer whose byte size overflows int64: an error, never a wrapped size.
// expected-error@+1 {{zero-memory-report: the byte size of 'memref<4611686018427387904x4xf32>' overflows 64 bits}}
func.func @huge_arg(%w: memref<4611686018427387904x4xf32> {zero.param = "w"}) attributes {zero.role = "optimizer"} {
  return
}

// -----

// Two buffers that each fit but together do not.
// expected-error@+1 {{zero-memory-report: the total of the argument bytes overflows 64 bits}}
func.func @huge_sum(%w: memref<1152921504606846975xf32> {zero.param = "w"},
                    %m: memref<1152921504606846975xf32> {zero.state = {param = "w", kind = "momentum"}},
                    %v: memref<1152921504606846975xf32> {zero.state = {param = "w", kind = "variance"}}) attributes {zero.role = "optimizer"} {
  return
}

// -----

// A manifest whose element counts overflow once multiplied by the bytes.
// expected-error@+1 {{zero-memory-report: the model-state bytes of the manifest overflows 64 bits}}
func.func @huge_manifest(%w: memref<2xf32> {zero.param = "w"})
    attributes {zero.role = "train_step", zero.stage = 0 : i64, zero.world_size = 1 : i64,
                zero.manifest = [#zero.layout<name = "w", shape = [4611686018427387904], numel = 4611686018427387904, padded = 4611686018427387904, shard = 4611686018427387904, sharded = none>]} {
  return
}

// -----

// The communication arena's size is a count of bytes (the op carries it as
// a constant, which its verifier checks).
func.func @arena_negative() attributes {zero.role = "forward_backward"} {
  // expected-error@+1 {{'zero.comm_reserve' op reserves -8 bytes; the arena's size is >= 0}}
  zero.comm_reserve -8
  return
}
