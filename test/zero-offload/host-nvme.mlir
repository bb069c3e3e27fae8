// RUN: zero-opt %s --zero-offload="optimizer=host params=nvme" | FileCheck %s
// RUN: zero-opt %s --zero-offload="optimizer=host params=nvme" --zero-bufferize-step | FileCheck %s --check-prefix=BUF
// RUN: zero-opt %s --zero-offload="optimizer=host params=nvme" --zero-bufferize-step --zero-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: zero-opt %s --zero-offload="optimizer=host params=nvme" --zero-lower="target=cpu" -o /dev/null
// optimizer=host with params=nvme on a hand-written stage-3 step: one
// parameter shard, gathered and updated with momentum SGD.

#id = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
module {
  shard.grid @zero_grid(shape = 2)
  func.func @train_step(%w: tensor<4xf32> {zero.param = "w", zero.sharded},
                        %m: tensor<4xf32> {zero.state = {kind = "momentum", param = "w"}, zero.sharded},
                        %lr: f32 {zero.hyper = "lr"})
      -> (tensor<f32> {zero.loss},
          tensor<4xf32> {zero.param = "w", zero.sharded},
          tensor<4xf32> {zero.state = {kind = "momentum", param = "w"}, zero.sharded})
      attributes {zero.role = "train_step", zero.stage = 3 : i64, zero.world_size = 2 : i64,
                  zero.manifest = [#zero.layout<name = "w", shape = [8], numel = 8, padded = 8, shard = 4, sharded = params|grads|states>]} {
    %gw = shard.all_gather %w on @zero_grid grid_axes = [0] gather_axis = 0 {zero.category = "params"} : tensor<4xf32> -> tensor<8xf32>
    %e = tensor.empty() : tensor<f32>
    %z = arith.constant 0.0 : f32
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction"]}
        ins(%gw : tensor<8xf32>) outs(%f : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %r = arith.addf %acc, %sq : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    %gradw = shard.reduce_scatter %gw on @zero_grid grid_axes = [0] scatter_axis = 0 {zero.category = "grads"} : tensor<8xf32> -> tensor<4xf32>
    %nw:2 = linalg.generic {indexing_maps = [#id, #s, #id, #id], iterator_types = ["parallel"]}
        ins(%gradw, %lr : tensor<4xf32>, f32) outs(%w, %m : tensor<4xf32>, tensor<4xf32>) {
    ^bb0(%g: f32, %l: f32, %p: f32, %o: f32):
      %m1 = arith.addf %o, %g : f32
      %d = arith.mulf %l, %m1 : f32
      %p1 = arith.subf %p, %d : f32
      linalg.yield %p1, %m1 : f32, f32
    } -> (tensor<4xf32>, tensor<4xf32>)
    return %loss, %nw#0, %nw#1 : tensor<f32>, tensor<4xf32>, tensor<4xf32>
  }
}

// The shard is an extent, the state in host memory. The gather's read
// stages on the device; the update's read stages in host memory, and the
// new shard is written to NVMe from there: no copy of the parameter either
// way. Only the gradient is copied to the host.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W:[^:]*]]: !zero.extent<tensor<4xf32>> {zero.param = "w", zero.sharded}
// CHECK-SAME: %[[M:[^:]*]]: tensor<4xf32> {zero.sharded, zero.space = "host", zero.state = {kind = "momentum", param = "w"}}
// CHECK-SAME: -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.sharded, zero.space = "host", zero.state = {kind = "momentum", param = "w"}})
// CHECK-NEXT: %[[P0:.*]], %[[T0:.*]] = zero.read_start %[[W]] {zero.category = "params"} :
// CHECK-NEXT: %[[P1:.*]], %[[T1:.*]] = zero.read_start %[[W]] {zero.category = "params", zero.space = "host"} :
// CHECK-NEXT: %[[S0:.*]] = zero.wait %[[T0]], %[[P0]]
// CHECK-NEXT: shard.all_gather %[[S0]]
// CHECK-NOT: zero.copy_start {{.*}}"params"
// CHECK: %[[GW:.*]] = shard.reduce_scatter
// CHECK-NEXT: %[[PG:.*]], %[[TG:.*]] = zero.copy_start %[[GW]] {zero.category = "grads", zero.space = "host"}
// CHECK-NEXT: %[[S1:.*]] = zero.wait %[[T1]], %[[P1]]
// CHECK-NEXT: %[[GH:.*]] = zero.wait %[[TG]], %[[PG]] : tensor<4xf32> keep(%[[GW]] : tensor<4xf32>)
// CHECK-NEXT: %[[NW:.*]]:2 = linalg.generic {{.*}} ins(%[[GH]], %{{.*}} : tensor<4xf32>, f32) outs(%[[S1]], %[[M]] : tensor<4xf32>, tensor<4xf32>) attrs = {zero.space = "host"}
// CHECK: %[[WR:.*]] = zero.write_start %[[NW]]#0 to %[[W]] {zero.category = "params", zero.space = "host"}
// CHECK-NEXT: zero.wait %[[WR]] keep(%[[NW]]#0 : tensor<4xf32>)
// CHECK-NEXT: return %{{.*}}, %[[NW]]#1 : tensor<f32>, tensor<4xf32>

// Bufferized: the host read's staging buffer is host memory.
// BUF-LABEL: func.func @train_step
// BUF: memref.alloc() {alignment = 4096 : i64, zero.category = "params"} : memref<1024xf32>
// BUF: memref.alloc() {alignment = 4096 : i64, zero.category = "params", zero.space = "host"} : memref<1024xf32>

// REPORT: in host memory: optimizer_states 16 params 4096 grads 64 bytes, peak 4176; on NVMe: params 4096 optimizer_states 0 bytes
