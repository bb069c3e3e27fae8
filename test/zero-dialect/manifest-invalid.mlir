// RUN: zero-opt %s -split-input-file -verify-diagnostics
// Each rule of a layout (#zero.layout) and of zero.manifest. A layout checks
// what it holds alone when it is parsed; zero.manifest checks each layout
// against the zero.world_size beside it (runtime.h's zrt_flat_layout).

// numel is not the product of the shape.
func.func @numel() attributes {zero.role = "train_step", zero.stage = 2 : i64, zero.world_size = 2 : i64,
    // expected-error@+1 {{#zero.layout of 'w' has numel = 14, but shape [3, 5] has 15 elements}}
    zero.manifest = [#zero.layout<name = "w", shape = [3, 5], numel = 14, padded = 16, shard = 8, sharded = grads|states>]} {
  return
}

// -----

// A dynamic (negative) size.
func.func @negative_dim() attributes {zero.role = "train_step", zero.stage = 2 : i64, zero.world_size = 2 : i64,
    // expected-error@+1 {{#zero.layout of 'w' has shape [3, -1]; a layout is of a static shape (sizes >= 0)}}
    zero.manifest = [#zero.layout<name = "w", shape = [3, -1], numel = 3, padded = 4, shard = 2, sharded = grads|states>]} {
  return
}

// -----

// A shape whose number of elements does not fit int64.
func.func @shape_overflow() attributes {zero.role = "train_step", zero.stage = 0 : i64, zero.world_size = 1 : i64,
    // expected-error@+1 {{#zero.layout of 'w' has shape [4294967296, 4294967296], whose number of elements overflows int64}}
    zero.manifest = [#zero.layout<name = "w", shape = [4294967296, 4294967296], numel = 0, padded = 0, shard = 0, sharded = none>]} {
  return
}

// -----

// A layout without a parameter name.
func.func @empty_name() attributes {zero.role = "train_step", zero.stage = 2 : i64, zero.world_size = 2 : i64,
    // expected-error@+1 {{#zero.layout needs the parameter's name, e.g. name = "fc0.weight"}}
    zero.manifest = [#zero.layout<name = "", shape = [4], numel = 4, padded = 4, shard = 2, sharded = grads|states>]} {
  return
}

// -----

// grad_bytes is the positive width of a wider gradient; 0 is no width.
func.func @grad_bytes_zero() attributes {zero.role = "train_step", zero.stage = 2 : i64, zero.world_size = 2 : i64,
    // expected-error@+1 {{#zero.layout of 'w' has grad_bytes = 0; it is the bytes per element of a gradient wider than the parameter, a positive number (without it, the parameter's)}}
    zero.manifest = [#zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 2, sharded = grads|states, grad_bytes = 0>]} {
  return
}

// -----

// The fields are integers, not strings.
func.func @numel_string() attributes {zero.role = "train_step", zero.stage = 2 : i64, zero.world_size = 2 : i64,
    // expected-error@+2 {{expected integer value}}
    // expected-error@+1 {{failed to parse Zero_LayoutAttr parameter 'numel' which is to be a `int64_t`}}
    zero.manifest = [#zero.layout<name = "w", shape = [4], numel = "4", padded = 4, shard = 2, sharded = grads|states>]} {
  return
}

// -----

// `sharded` names parts of a parameter: params, grads, states (or none).
func.func @sharded_unknown() attributes {zero.role = "train_step", zero.stage = 2 : i64, zero.world_size = 2 : i64,
    // expected-error@+2 {{expected ::mlir::zero::ShardedParts to be one of: none, params, grads, states}}
    // expected-error@+1 {{failed to parse Zero_LayoutAttr parameter 'sharded'}}
    zero.manifest = [#zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 2, sharded = grads|activations>]} {
  return
}

// -----

// padded is numel rounded up to a multiple of the world size: 15 elements
// on 2 ranks pad to 16, not 14.
// expected-error@+1 {{'zero.manifest': layout of 'w' has padded = 14; its 15 elements on 2 ranks (zero.world_size) pad to 16, the least multiple of 2 at or above 15}}
func.func @padded() attributes {zero.role = "train_step", zero.stage = 2 : i64, zero.world_size = 2 : i64,
    zero.manifest = [#zero.layout<name = "w", shape = [3, 5], numel = 15, padded = 14, shard = 7, sharded = grads|states>]} {
  return
}

// -----

// A layout for another world size: 16 elements are padded alike on 2 and 4
// ranks, but the shard is padded / world size.
// expected-error@+1 {{'zero.manifest': layout of 'w' has shard = 4; padded / zero.world_size is 16 / 2 = 8}}
func.func @shard() attributes {zero.role = "train_step", zero.stage = 2 : i64, zero.world_size = 2 : i64,
    zero.manifest = [#zero.layout<name = "w", shape = [16], numel = 16, padded = 16, shard = 4, sharded = grads|states>]} {
  return
}

// -----

// Padding that does not fit int64.
// expected-error@+1 {{'zero.manifest': layout of 'w': 9223372036854775807 elements padded to a multiple of 2 overflow int64}}
func.func @padded_overflow() attributes {zero.role = "train_step", zero.stage = 0 : i64, zero.world_size = 2 : i64,
    zero.manifest = [#zero.layout<name = "w", shape = [9223372036854775807], numel = 9223372036854775807, padded = 0, shard = 0, sharded = none>]} {
  return
}

// -----

// An element that is no layout (the dictionaries manifests once held).
// expected-error@+1 {{'zero.manifest' element #1 is {name = "v", numel = 4 : i64}, not a #zero.layout (one per parameter, #zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 2, sharded = states>)}}
func.func @not_layout() attributes {zero.role = "train_step", zero.stage = 1 : i64, zero.world_size = 2 : i64,
    zero.manifest = [#zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 2, sharded = states>,
                     {name = "v", numel = 4 : i64}]} {
  return
}

// -----

// A manifest that is no array.
// expected-error@+1 {{'zero.manifest' must be an array of #zero.layout}}
func.func @not_array() attributes {zero.role = "train_step", zero.stage = 1 : i64, zero.world_size = 2 : i64,
    zero.manifest = #zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 2, sharded = states>} {
  return
}

// -----

// One layout per parameter.
// expected-error@+1 {{'zero.manifest' lays out 'w' twice}}
func.func @twice() attributes {zero.role = "train_step", zero.stage = 1 : i64, zero.world_size = 2 : i64,
    zero.manifest = [#zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 2, sharded = states>,
                     #zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 2, sharded = states>]} {
  return
}

// -----

// The layouts are for the world size beside them, which must be there.
// expected-error@+1 {{'zero.manifest' needs an integer 'zero.world_size' beside it, the number of ranks its layouts are for}}
func.func @no_world_size() attributes {zero.role = "train_step", zero.stage = 3 : i64,
    zero.manifest = [#zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 2, sharded = params|grads|states>]} {
  return
}

// -----

// A world has at least one rank.
// expected-error@+1 {{'zero.manifest' is laid out for zero.world_size = 0; a world has at least one rank}}
func.func @world_size_zero() attributes {zero.role = "train_step", zero.stage = 1 : i64, zero.world_size = 0 : i64,
    zero.manifest = [#zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 4, sharded = states>]} {
  return
}
