// RUN: zero-opt %s -split-input-file --zero-offload="optimizer=host" | FileCheck %s
// RUN: zero-opt %s -split-input-file --zero-offload="optimizer=host" --zero-bufferize-step | FileCheck %s --check-prefix=BUF
// RUN: zero-opt %s -split-input-file --zero-offload="optimizer=host" --zero-bufferize-step --zero-memory-report 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: zero-opt %s -split-input-file --zero-offload="optimizer=host" --zero-lower="target=cpu" | FileCheck %s --check-prefix=CPU
// optimizer=host (ZeRO-Offload) on a hand-written stage-2 step for 2 ranks:
// the states stay in host memory, the update runs there, the gradient shard
// and the parameter shard it starts from come to the host as soon as they
// exist, and the new parameter shard goes back before the all-gather reads
// it.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^:]*]]: tensor<8xf32> {zero.param = "w"}
// CHECK-SAME: %[[M:[^:]*]]: tensor<4xf32> {zero.sharded, zero.space = "host", zero.state = {kind = "exp_avg", param = "w"}}
// CHECK-SAME: -> (tensor<f32> {zero.loss}, tensor<8xf32> {zero.param = "w"}, tensor<4xf32> {zero.sharded, zero.space = "host", zero.state = {kind = "exp_avg", param = "w"}})
// The gradient leaves right after its reduction.
// CHECK: %[[G:.*]] = shard.reduce_scatter
// CHECK-NEXT: %[[PG:.*]], %[[TG:.*]] = zero.copy_start %[[G]] {zero.category = "grads", zero.space = "host"} : tensor<4xf32> -> tensor<4xf32>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[W]]
// CHECK-NEXT: %[[PS:.*]], %[[TS:.*]] = zero.copy_start %[[S]] {zero.category = "params", zero.space = "host"}
// CHECK: %[[GH:.*]] = zero.wait %[[TG]], %[[PG]] : tensor<4xf32> keep(%[[G]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[SH:.*]] = zero.wait %[[TS]], %[[PS]] : tensor<4xf32> keep(%[[S]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[U:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%[[GH]] : tensor<4xf32>) outs(%[[SH]], %[[M]] : tensor<4xf32>, tensor<4xf32>)
// CHECK-SAME: zero.space = "host"
// CHECK: %[[PD:.*]], %[[TD:.*]] = zero.copy_start %[[U]]#0 {zero.category = "params", zero.space = "device"}
// CHECK-NEXT: %[[D:.*]] = zero.wait %[[TD]], %[[PD]] : tensor<4xf32> keep(%[[U]]#0 : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: shard.all_gather %[[D]]
// CHECK: return %{{.*}}, %{{.*}}, %[[U]]#1

// After bufferization the host copies are host allocations, the state is
// updated in place, and the new parameter shard comes back into a device
// buffer.
// BUF-LABEL: func.func @train_step(
// BUF: %[[HG:.*]] = memref.alloc() {alignment = 64 : i64, zero.category = "grads", zero.space = "host"} : memref<4xf32>
// BUF: zero.copy_start
// BUF: %[[HW:.*]] = memref.alloc() {alignment = 64 : i64, zero.category = "params", zero.space = "host"} : memref<4xf32>
// BUF: zero.copy_start
// BUF: linalg.generic {{.*}} ins(%[[HG]] : memref<4xf32>) outs(%[[HW]], %{{.*}} : memref<4xf32>, memref<4xf32>) attrs = {zero.space = "host"}
// BUF: memref.alloc() {alignment = 64 : i64, zero.category = "params"} : memref<4xf32>
// BUF: zero.copy_start

// The report counts host memory apart: the state (16 bytes), the gradient
// and parameter shards' copies (64 bytes each, the runtime's alignment).
// REPORT: remark: zero-memory-report: stage 2 on 2 ranks: model states params 32 grads 16 optimizer_states 0 bytes
// REPORT-SAME: in host memory: optimizer_states 16 params 64 grads 64 bytes, peak 144

// The CPU lowering allocates the host copies in host space.
// CPU-LABEL: llvm.func @train_step(
// CPU: llvm.call @zrt_set_generated_space(%{{.*}}) : (i32) -> ()
// CPU: llvm.call @_mlir_memref_to_llvm_aligned_alloc
// CPU: llvm.call @zrt_set_generated_space(%{{.*}}) : (i32) -> ()
// CPU: llvm.call @zrt_copy_start(
// CPU: llvm.call @zrt_wait(
#id = affine_map<(d0) -> (d0)>
module {
  shard.grid @zero_grid(shape = 2)
  func.func @train_step(%w: tensor<8xf32> {zero.param = "w"},
                        %m: tensor<4xf32> {zero.sharded, zero.state = {kind = "exp_avg", param = "w"}},
                        %x: tensor<8xf32> {zero.batch = "x"}, %lr: f32 {zero.hyper = "lr"})
      -> (tensor<f32> {zero.loss}, tensor<8xf32> {zero.param = "w"},
          tensor<4xf32> {zero.sharded, zero.state = {kind = "exp_avg", param = "w"}})
      attributes {zero.role = "train_step", zero.stage = 2 : i64, zero.world_size = 2 : i64,
                  zero.manifest = [#zero.layout<name = "w", shape = [8], numel = 8, padded = 8, shard = 4, sharded = grads|states>]} {
    %e = tensor.empty() : tensor<f32>
    %z = arith.constant 0.0 : f32
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %l = linalg.dot ins(%w, %x : tensor<8xf32>, tensor<8xf32>) outs(%f : tensor<f32>) -> tensor<f32>
    %g = shard.reduce_scatter %x on @zero_grid grid_axes = [0] scatter_axis = 0 {zero.category = "grads"} : tensor<8xf32> -> tensor<4xf32>
    %r = shard.process_linear_index on @zero_grid : index
    %c4 = arith.constant 4 : index
    %o = arith.muli %r, %c4 : index
    %s = tensor.extract_slice %w[%o] [4] [1] : tensor<8xf32> to tensor<4xf32>
    %u:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%g : tensor<4xf32>) outs(%s, %m : tensor<4xf32>, tensor<4xf32>) {
    ^bb0(%gi: f32, %wi: f32, %mi: f32):
      %mn = arith.addf %mi, %gi : f32
      %d = arith.mulf %lr, %mn : f32
      %wn = arith.subf %wi, %d : f32
      linalg.yield %wn, %mn : f32, f32
    } -> (tensor<4xf32>, tensor<4xf32>)
    %full = shard.all_gather %u#0 on @zero_grid grid_axes = [0] gather_axis = 0 {zero.category = "params"} : tensor<4xf32> -> tensor<8xf32>
    %nw = bufferization.materialize_in_destination %full in %w : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    return %l, %nw, %u#1 : tensor<f32>, tensor<8xf32>, tensor<4xf32>
  }
}

// -----

// Stage 0 returns each new parameter: it is stored into its argument's
// buffer, two updates later (so the device holds two new parameters at a
// time, not all of them); the last two go at the end.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[A:[^:]*]]: tensor<4xf32> {zero.param = "a"}, %[[B:[^:]*]]: tensor<4xf32> {zero.param = "b"}, %[[C:[^:]*]]: tensor<4xf32> {zero.param = "c"}
// CHECK: %[[UA:.*]]:2 = linalg.generic {{.*}}zero.space = "host"
// CHECK: %[[PA:.*]], %[[TA:.*]] = zero.copy_start %[[UA]]#0 {zero.category = "params", zero.space = "device"}
// CHECK: %[[UB:.*]]:2 = linalg.generic {{.*}}zero.space = "host"
// CHECK: %[[PB:.*]], %[[TB:.*]] = zero.copy_start %[[UB]]#0 {zero.category = "params", zero.space = "device"}
// CHECK: %[[NA:.*]] = zero.wait %[[TA]], %[[PA]]
// CHECK-NEXT: %[[SA:.*]] = bufferization.materialize_in_destination %[[NA]] in %[[A]]
// CHECK: %[[UC:.*]]:2 = linalg.generic {{.*}}zero.space = "host"
// CHECK: %[[NB:.*]] = zero.wait %[[TB]], %[[PB]]
// CHECK-NEXT: %[[SB:.*]] = bufferization.materialize_in_destination %[[NB]] in %[[B]]
// CHECK: %[[SC:.*]] = bufferization.materialize_in_destination %{{.*}} in %[[C]]
// CHECK-NEXT: return %{{.*}}, %[[SA]], %[[SB]], %[[SC]]
// The parameters are updated in place: no out-parameter copies.
// BUF-LABEL: func.func @train_step(
// BUF-SAME: %{{[^:]*}}: memref<4xf32> {zero.param = "a"}
// BUF-NOT: out_copy
// On the device: the three parameters (48 bytes) and at most two new ones
// on their way back (64 bytes each, the runtime's alignment), not three.
// REPORT: remark: zero-memory-report: model states params 48 grads 0 optimizer_states 0 bytes; {{.*}}(params 176, grads 0, optimizer_states 0,
#id0 = affine_map<(d0) -> (d0)>
func.func @train_step(%a: tensor<4xf32> {zero.param = "a"}, %b: tensor<4xf32> {zero.param = "b"},
                      %c: tensor<4xf32> {zero.param = "c"},
                      %ma: tensor<4xf32> {zero.state = {kind = "m", param = "a"}},
                      %mb: tensor<4xf32> {zero.state = {kind = "m", param = "b"}},
                      %mc: tensor<4xf32> {zero.state = {kind = "m", param = "c"}})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.param = "a"}, tensor<4xf32> {zero.param = "b"},
        tensor<4xf32> {zero.param = "c"},
        tensor<4xf32> {zero.state = {kind = "m", param = "a"}}, tensor<4xf32> {zero.state = {kind = "m", param = "b"}},
        tensor<4xf32> {zero.state = {kind = "m", param = "c"}})
    attributes {zero.role = "train_step", zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %e = tensor.empty() : tensor<f32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %l = linalg.dot ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%f : tensor<f32>) -> tensor<f32>
  %ua:2 = linalg.generic {indexing_maps = [#id0, #id0, #id0], iterator_types = ["parallel"]}
      ins(%b : tensor<4xf32>) outs(%a, %ma : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%g: f32, %w: f32, %m: f32):
    %mn = arith.addf %m, %g : f32
    %wn = arith.subf %w, %mn : f32
    linalg.yield %wn, %mn : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  %ub:2 = linalg.generic {indexing_maps = [#id0, #id0, #id0], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%b, %mb : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%g: f32, %w: f32, %m: f32):
    %mn = arith.addf %m, %g : f32
    %wn = arith.subf %w, %mn : f32
    linalg.yield %wn, %mn : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  %uc:2 = linalg.generic {indexing_maps = [#id0, #id0], iterator_types = ["parallel"]}
      outs(%c, %mc : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%w: f32, %m: f32):
    %wn = arith.subf %w, %m : f32
    linalg.yield %wn, %m : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %l, %ua#0, %ub#0, %uc#0, %ua#1, %ub#1, %uc#1
      : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
