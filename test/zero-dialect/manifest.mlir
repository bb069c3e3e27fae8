// RUN: zero-opt %s -split-input-file | zero-opt -split-input-file | FileCheck %s
// zero.manifest's layouts (#zero.layout) print and parse back.

// One layout per parameter: a padded one with an f32 accumulator of a bf16
// gradient (grad_bytes), and a 0-d one (shape []). `sharded` prints its parts
// in one order (params, grads, states) however they were written.
// CHECK-LABEL: func.func @stage2
// CHECK-SAME:    zero.manifest = [#zero.layout<name = "w", shape = [3, 5], numel = 15, padded = 16, shard = 8, sharded = grads|states, grad_bytes = 4>,
// CHECK-SAME:                     #zero.layout<name = "scale", shape = [], numel = 1, padded = 2, shard = 1, sharded = grads|states>]
// CHECK-SAME:    zero.role = "train_step", zero.stage = 2 : i64, zero.world_size = 2 : i64
func.func @stage2() attributes {
    zero.role = "train_step", zero.stage = 2 : i64, zero.world_size = 2 : i64,
    zero.manifest = [
      #zero.layout<name = "w", shape = [3, 5], numel = 15, padded = 16, shard = 8, sharded = states|grads, grad_bytes = 4>,
      #zero.layout<name = "scale", shape = [], numel = 1, padded = 2, shard = 1, sharded = grads|states>]} {
  return
}

// -----

// Nothing sharded (stage 0) prints as `none`; everything (stage 3) as all
// three parts.
// CHECK-LABEL: func.func @stage0
// CHECK-SAME:    zero.manifest = [#zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 1, sharded = none>]
func.func @stage0() attributes {
    zero.role = "train_step", zero.stage = 0 : i64, zero.world_size = 4 : i64,
    zero.manifest = [#zero.layout<name = "w", shape = [4], numel = 4, padded = 4, shard = 1, sharded = none>]} {
  return
}

// CHECK-LABEL: func.func @stage3
// CHECK-SAME:    zero.manifest = [#zero.layout<name = "w", shape = [7], numel = 7, padded = 8, shard = 2, sharded = params|grads|states>]
func.func @stage3() attributes {
    zero.role = "train_step", zero.stage = 3 : i64, zero.world_size = 4 : i64,
    zero.manifest = [#zero.layout<name = "w", shape = [7], numel = 7, padded = 8, shard = 2, sharded = params|grads|states>]} {
  return
}
