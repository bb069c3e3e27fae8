// RUN: zero-opt %s -split-input-file --zero-step-abi | FileCheck %s
// RUN: zero-opt %s -split-input-file --zero-step-abi=target=cuda | FileCheck %s --check-prefix=CUDA

// An unpartitioned step after bufferization: the descriptor lists the
// parameter with its init and full layout, the batch input with its token
// range, the hyper-parameter, and each entry's arguments in order with
// role, index, dtype, category and shape (scalars marked).
// CHECK-LABEL: module attributes {zero.step_abi = {
// CHECK-SAME: abi_version = 1
// CHECK-SAME: backend = "cpu"
// CHECK-SAME: batch = [{dtype = "i32", name = "tokens", shape = array<i64: 2, 3>, token_range = 5 : i64}]
// CHECK-SAME: entries = [{args = [
// CHECK-SAME: {category = "params", dtype = "f32", index = 0 : i64, name = "w", role = "param", shape = array<i64: 5, 2>}
// CHECK-SAME: {category = "activations", dtype = "i32", index = 0 : i64, name = "tokens", role = "batch", shape = array<i64: 2, 3>}
// CHECK-SAME: {category = "activations", dtype = "f32", index = 0 : i64, name = "loss", role = "loss", shape = array<i64>}
// CHECK-SAME: {category = "grads", dtype = "f32", index = 0 : i64, name = "w", role = "grad", shape = array<i64: 5, 2>}
// CHECK-SAME: ], name = "fb", role = "forward_backward"}
// CHECK-SAME: {category = "optimizer_states", dtype = "f32", index = 0 : i64, name = "m", role = "state", shape = array<i64: 5, 2>}
// CHECK-SAME: {category = "activations", dtype = "f32", index = 0 : i64, name = "lr", role = "hyper", scalar = true}
// CHECK-SAME: name = "opt", role = "optimizer"}]
// CHECK-SAME: hypers = [{default = 3.000000e-04 : f64, dtype = "f32", name = "lr"}]
// CHECK-SAME: loss = {dtype = "f32"}
// CHECK-SAME: params = [{dtype = "f32", init = {kind = "normal", std = 2.000000e-02 : f64}, name = "w", numel = 10 : i64, padded = 10 : i64, shape = array<i64: 5, 2>, shard = 10 : i64}]
// CHECK-SAME: partitioned = false
// CHECK-SAME: stage = 0 : i64
// CHECK-SAME: states = [{dtype = "f32", kind = "m", param = 0 : i64, shape = array<i64: 5, 2>}]
// CHECK-SAME: world_size = 1 : i64
// The backend drivers select is the lowering's target.
// CUDA: module attributes {zero.step_abi = {abi_version = 1 : i64, backend = "cuda", batch
module {
  func.func @fb(%w: memref<5x2xf32> {zero.param = "w", zero.init = {kind = "normal", std = 0.02 : f64}},
                %t: memref<2x3xi32> {zero.batch = "tokens", zero.token_range = 5 : i64},
                %loss: memref<f32> {zero.loss},
                %gw: memref<5x2xf32> {zero.grad = "w"})
      attributes {zero.role = "forward_backward"} {
    return
  }
  func.func @opt(%w: memref<5x2xf32> {zero.param = "w"},
                 %g: memref<5x2xf32> {zero.grad = "w"},
                 %m: memref<5x2xf32> {zero.state = {param = "w", kind = "m"}},
                 %lr: f32 {zero.hyper = "lr", zero.hyper_default = 3.0e-4 : f64})
      attributes {zero.role = "optimizer"} {
    return
  }
}

// -----

// A stage-3 step for 4 ranks: the layout comes from the manifest (10
// elements padded to 12, shards of 3); parameters and states hold shards,
// (zero-partition marks them zero.sharded), and a 0-d hyper-parameter is a
// buffer. A parameter that appears twice is
// an out-parameter the caller copies back.
// CHECK-LABEL: module attributes {zero.step_abi = {
// CHECK-SAME: {category = "params", dtype = "f32", index = 0 : i64, name = "w", role = "param", shape = array<i64: 3>, sharded = true}
// CHECK-SAME: {category = "optimizer_states", dtype = "f32", index = 0 : i64, name = "m", role = "state", shape = array<i64: 3>, sharded = true}
// CHECK-SAME: {category = "activations", dtype = "f32", index = 0 : i64, name = "lr", role = "hyper", shape = array<i64>}
// CHECK-SAME: {category = "params", dtype = "f32", index = 0 : i64, name = "w", out_copy = true, role = "param", shape = array<i64: 3>, sharded = true}
// CHECK-SAME: params = [{dtype = "f32", name = "w", numel = 10 : i64, padded = 12 : i64, shape = array<i64: 5, 2>, shard = 3 : i64}]
// CHECK-SAME: partitioned = true
// CHECK-SAME: stage = 3 : i64
// CHECK-SAME: world_size = 4 : i64
module {
  func.func @train_step(%w: memref<3xf32> {zero.param = "w", zero.sharded},
                        %m: memref<3xf32> {zero.state = {param = "w", kind = "m"}, zero.sharded},
                        %lr: memref<f32> {zero.hyper = "lr"},
                        %loss: memref<f32> {zero.loss},
                        %w2: memref<3xf32> {zero.param = "w", zero.sharded})
      attributes {zero.role = "train_step", zero.stage = 3 : i64, zero.world_size = 4 : i64,
                  zero.manifest = [#zero.layout<name = "w", shape = [5, 2], numel = 10, padded = 12, shard = 3, sharded = params|grads|states>]} {
    return
  }
}

// -----

// An NVMe extent as bufferization leaves it (!zero.extent, which
// zero-collectives-to-runtime lowers to the runtime's handle later) in an
// unpartitioned step: the parameter's layout is the extent's tensor. (The
// mutation fuzzer's crash: the layout was read as a memref's.)
// CHECK: zero.step_abi = {{{.*}}name = "w", placement = "nvme", role = "param", shape = array<i64: 4>
// CHECK-SAME: params = [{dtype = "f32", name = "w", numel = 4 : i64, padded = 4 : i64, shape = array<i64: 4>, shard = 4 : i64}], partitioned = false
module {
  func.func @train_step(%w: !zero.extent<tensor<4xf32>> {zero.param = "w", zero.sharded},
                        %loss: memref<f32> {zero.loss})
      attributes {zero.role = "train_step", zero.stage = 3 : i64, zero.world_size = 1 : i64} {
    return
  }
}
