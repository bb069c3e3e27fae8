// RUN: zero-opt %s --zero-offload="optimizer=host" | FileCheck %s --check-prefix=HOST
// RUN: zero-opt %s --zero-offload="optimizer=host params=nvme" | FileCheck %s --check-prefix=BOTH
// RUN: zero-opt %s --zero-offload="optimizer=nvme params=nvme" | FileCheck %s --check-prefix=NVME
// RUN: zero-opt %s --zero-offload="optimizer=host" --zero-bufferize-step --zero-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: zero-opt %s --zero-offload | FileCheck %s --check-prefix=NONE
// An update that overwrites its parameter without reading it (a bf16
// parameter rounded from its f32 master weights, a state) computes it into
// a fresh tensor when anything is offloaded: the old bf16 shard is neither
// copied to the host nor read from NVMe for the update.

#id = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
module {
  shard.grid @zero_grid(shape = 2)
  func.func @train_step(%w: tensor<4xbf16> {zero.param = "w", zero.sharded},
                        %master: tensor<4xf32> {zero.state = {kind = "master", param = "w"}, zero.sharded},
                        %lr: f32 {zero.hyper = "lr"})
      -> (tensor<f32> {zero.loss},
          tensor<4xbf16> {zero.param = "w", zero.sharded},
          tensor<4xf32> {zero.state = {kind = "master", param = "w"}, zero.sharded})
      attributes {zero.role = "train_step", zero.stage = 3 : i64, zero.world_size = 2 : i64,
                  zero.manifest = [#zero.layout<name = "w", shape = [8], numel = 8, padded = 8, shard = 4, sharded = params|grads|states>]} {
    %gw = shard.all_gather %w on @zero_grid grid_axes = [0] gather_axis = 0 {zero.category = "params"} : tensor<4xbf16> -> tensor<8xbf16>
    %e = tensor.empty() : tensor<f32>
    %z = arith.constant 0.0 : f32
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction"]}
        ins(%gw : tensor<8xbf16>) outs(%f : tensor<f32>) {
    ^bb0(%a: bf16, %acc: f32):
      %x = arith.extf %a : bf16 to f32
      %sq = arith.mulf %x, %x : f32
      %r = arith.addf %acc, %sq : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    %grad = shard.reduce_scatter %gw on @zero_grid grid_axes = [0] scatter_axis = 0 {zero.category = "grads"} : tensor<8xbf16> -> tensor<4xbf16>
    %new:2 = linalg.generic {indexing_maps = [#id, #s, #id, #id], iterator_types = ["parallel"]}
        ins(%grad, %lr : tensor<4xbf16>, f32) outs(%w, %master : tensor<4xbf16>, tensor<4xf32>) {
    ^bb0(%g: bf16, %l: f32, %p: bf16, %m: f32):
      %gf = arith.extf %g : bf16 to f32
      %d = arith.mulf %l, %gf : f32
      %m1 = arith.subf %m, %d : f32
      %p1 = arith.truncf %m1 : f32 to bf16
      linalg.yield %p1, %m1 : bf16, f32
    } -> (tensor<4xbf16>, tensor<4xf32>)
    return %loss, %new#0, %new#1 : tensor<f32>, tensor<4xbf16>, tensor<4xf32>
  }
}

// optimizer=host: only the gradient goes to the host; the update computes
// the parameter into a tensor.empty (category "params") and it comes back.
// HOST-LABEL: func.func @train_step
// HOST-NOT: zero.copy_start {{.*}}zero.space = "host"{{.*}}bf16
// HOST: zero.copy_start %{{.*}} {zero.category = "grads", zero.space = "host"}
// HOST-NOT: zero.copy_start {{.*}}zero.space = "host"
// HOST: %[[E:.*]] = tensor.empty() : tensor<4xbf16>
// HOST: %[[N:.*]]:2 = linalg.generic {{.*}} outs(%[[E]], %{{.*}} : tensor<4xbf16>, tensor<4xf32>) attrs = {zero.category = "params", zero.space = "host"}
// HOST-NEXT: ^bb0
// HOST: zero.copy_start %[[N]]#0 {zero.category = "params", zero.space = "device"}

// The fresh buffer is host memory, in the parameters' category (8 bytes,
// rounded up to the allocator's 64).
// REPORT: in host memory: optimizer_states 16 params 64 grads 64 bytes

// params=nvme: the shard is read once, for the gather; the update's new
// value is written from its fresh buffer.
// BOTH-LABEL: func.func @train_step
// BOTH-COUNT-1: zero.read_start
// BOTH-NOT: zero.read_start
// BOTH: tensor.empty() : tensor<4xbf16>
// BOTH: zero.write_start %{{.*}}#0 to %{{.*}} {zero.category = "params", zero.space = "host"}
// NVME-LABEL: func.func @train_step
// NVME: zero.read_start %{{.*}} {zero.category = "params"} : <tensor<4xbf16>>
// NVME-NOT: zero.read_start %{{.*}} {zero.category = "params"} : <tensor<4xbf16>>
// NVME: zero.write_start %{{.*}}#0 to %{{.*}} {zero.category = "params"}

// Without offload the step is left as it is.
// NONE: outs(%arg0, %arg1 : tensor<4xbf16>, tensor<4xf32>)
