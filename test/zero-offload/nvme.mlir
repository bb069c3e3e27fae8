// RUN: zero-opt %s -split-input-file --zero-offload="optimizer=nvme" | FileCheck %s --check-prefix=OPT
// RUN: zero-opt %s -split-input-file --zero-offload="optimizer=nvme read-ahead=1" | FileCheck %s --check-prefix=RA1
// RUN: zero-opt %s -split-input-file --zero-offload="optimizer=nvme params=nvme" | FileCheck %s --check-prefix=ALL
// RUN: zero-opt %s -split-input-file --zero-offload="optimizer=nvme params=nvme read-ahead=1" | FileCheck %s --check-prefix=ALL1
// RUN: zero-opt %s -split-input-file --zero-offload | FileCheck %s --check-prefix=NONE
// RUN: zero-opt %s -split-input-file --zero-offload="optimizer=nvme params=nvme" --zero-bufferize-step --zero-collectives-to-runtime | FileCheck %s --check-prefix=LOWER
// Placement of the NVMe tier's transfers on a hand-written stage-3 step:
// two parameter shards (gathered, used, updated with momentum SGD) and one
// momentum state each.

#id = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
module {
  shard.grid @zero_grid(shape = 2)
  func.func @train_step(%w: tensor<4xf32> {zero.param = "w", zero.sharded},
                        %v: tensor<2xf32> {zero.param = "v", zero.sharded},
                        %mw: tensor<4xf32> {zero.state = {kind = "momentum", param = "w"}, zero.sharded},
                        %mv: tensor<2xf32> {zero.state = {kind = "momentum", param = "v"}, zero.sharded},
                        %lr: f32 {zero.hyper = "lr"})
      -> (tensor<f32> {zero.loss},
          tensor<4xf32> {zero.param = "w", zero.sharded},
          tensor<2xf32> {zero.param = "v", zero.sharded},
          tensor<4xf32> {zero.state = {kind = "momentum", param = "w"}, zero.sharded},
          tensor<2xf32> {zero.state = {kind = "momentum", param = "v"}, zero.sharded})
      attributes {zero.role = "train_step", zero.stage = 3 : i64, zero.world_size = 2 : i64,
                  zero.manifest = [#zero.layout<name = "w", shape = [8], numel = 8, padded = 8, shard = 4, sharded = params|grads|states>,
                                   #zero.layout<name = "v", shape = [4], numel = 4, padded = 4, shard = 2, sharded = params|grads|states>]} {
    %gw = shard.all_gather %w on @zero_grid grid_axes = [0] gather_axis = 0 {zero.category = "params"} : tensor<4xf32> -> tensor<8xf32>
    %gv = shard.all_gather %v on @zero_grid grid_axes = [0] gather_axis = 0 {zero.category = "params"} : tensor<2xf32> -> tensor<4xf32>
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
    %gradv = shard.reduce_scatter %gv on @zero_grid grid_axes = [0] scatter_axis = 0 {zero.category = "grads"} : tensor<4xf32> -> tensor<2xf32>
    %nw:2 = linalg.generic {indexing_maps = [#id, #id, #s, #id, #id], iterator_types = ["parallel"]}
        ins(%gradw, %mw, %lr : tensor<4xf32>, tensor<4xf32>, f32) outs(%w, %mw : tensor<4xf32>, tensor<4xf32>) {
    ^bb0(%g: f32, %m: f32, %l: f32, %p: f32, %o: f32):
      %m1 = arith.addf %m, %g : f32
      %d = arith.mulf %l, %m1 : f32
      %p1 = arith.subf %p, %d : f32
      linalg.yield %p1, %m1 : f32, f32
    } -> (tensor<4xf32>, tensor<4xf32>)
    %nv:2 = linalg.generic {indexing_maps = [#id, #id, #s, #id, #id], iterator_types = ["parallel"]}
        ins(%gradv, %mv, %lr : tensor<2xf32>, tensor<2xf32>, f32) outs(%v, %mv : tensor<2xf32>, tensor<2xf32>) {
    ^bb0(%g: f32, %m: f32, %l: f32, %p: f32, %o: f32):
      %m1 = arith.addf %m, %g : f32
      %d = arith.mulf %l, %m1 : f32
      %p1 = arith.subf %p, %d : f32
      linalg.yield %p1, %m1 : f32, f32
    } -> (tensor<2xf32>, tensor<2xf32>)
    return %loss, %nw#0, %nv#0, %nw#1, %nv#1 : tensor<f32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>, tensor<2xf32>
  }
}

// optimizer=nvme (read-ahead 3): the states become extents and leave the
// results; each update moves up to right after its gradient's
// reduce_scatter (w's above v's reduce_scatter), both reads start one op
// before the first update, each write right after its update; w's write
// completes before the update after next (here: the return).
// OPT-LABEL: func.func @train_step
// OPT-SAME: %[[W:[^:]*]]: tensor<4xf32> {zero.param = "w", zero.sharded}
// OPT-SAME: %[[MW:[^:]*]]: !zero.extent<tensor<4xf32>> {zero.sharded, zero.state = {kind = "momentum", param = "w"}}
// OPT-SAME: %[[MV:[^:]*]]: !zero.extent<tensor<2xf32>> {zero.sharded, zero.state = {kind = "momentum", param = "v"}}
// OPT-SAME: -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.param = "w", zero.sharded}, tensor<2xf32> {zero.param = "v", zero.sharded})
// OPT: %[[P1:.*]], %[[T1:.*]] = zero.read_start %[[MW]] {zero.category = "optimizer_states"}
// OPT-NEXT: %[[P2:.*]], %[[T2:.*]] = zero.read_start %[[MV]] {zero.category = "optimizer_states"}
// OPT-NEXT: %[[GW:.*]] = shard.reduce_scatter %{{.*}} : tensor<8xf32> -> tensor<4xf32>
// OPT-NEXT: %[[S1:.*]] = zero.wait %[[T1]], %[[P1]]
// OPT-NEXT: %[[NW:.*]]:2 = linalg.generic {{.*}} ins(%[[GW]], %[[S1]], %{{.*}} : {{.*}}) outs(%[[W]], %[[S1]] :
// OPT: %[[WW:.*]] = zero.write_start %[[NW]]#1 to %[[MW]]
// OPT-NEXT: %[[GV:.*]] = shard.reduce_scatter %{{.*}} : tensor<4xf32> -> tensor<2xf32>
// OPT-NEXT: %[[S2:.*]] = zero.wait %[[T2]], %[[P2]]
// OPT-NEXT: %[[NV:.*]]:2 = linalg.generic {{.*}} ins(%[[GV]], %[[S2]], %{{.*}} : {{.*}}) outs(%{{.*}}, %[[S2]] :
// OPT: %[[WV:.*]] = zero.write_start %[[NV]]#1 to %[[MV]]
// OPT-NEXT: zero.wait %[[WW]] keep(%[[NW]]#1 : tensor<4xf32>)
// OPT-NEXT: zero.wait %[[WV]] keep(%[[NV]]#1 : tensor<2xf32>)
// OPT-NEXT: return %{{.*}}, %[[NW]]#0, %[[NV]]#0 : tensor<f32>, tensor<4xf32>, tensor<2xf32>

// read-ahead=1 (double buffering): v's read starts right after w's update
// and its write, so it loads while v's reduce_scatter runs.
// RA1-LABEL: func.func @train_step
// RA1-SAME: %[[MW:[^:]*]]: !zero.extent<tensor<4xf32>> {zero.sharded, zero.state = {kind = "momentum", param = "w"}}
// RA1-SAME: %[[MV:[^:]*]]: !zero.extent<tensor<2xf32>> {zero.sharded, zero.state = {kind = "momentum", param = "v"}}
// RA1: %[[P1:.*]], %[[T1:.*]] = zero.read_start %[[MW]]
// RA1-NEXT: shard.reduce_scatter %{{.*}} : tensor<8xf32> -> tensor<4xf32>
// RA1-NEXT: zero.wait %[[T1]], %[[P1]]
// RA1-NEXT: linalg.generic
// RA1: zero.write_start %{{.*}}#1 to %[[MW]]
// RA1-NEXT: %[[P2:.*]], %[[T2:.*]] = zero.read_start %[[MV]]
// RA1-NEXT: shard.reduce_scatter %{{.*}} : tensor<4xf32> -> tensor<2xf32>
// RA1-NEXT: zero.wait %[[T2]], %[[P2]]
// RA1-NEXT: linalg.generic

// params=nvme too: each use of a shard (its gather, its update) reads it
// again; the first three uses' reads start at the top, the fourth's after
// the first use.
// ALL-LABEL: func.func @train_step
// ALL-SAME: %[[W:[^:]*]]: !zero.extent<tensor<4xf32>> {zero.param = "w", zero.sharded}
// ALL-SAME: %[[V:[^:]*]]: !zero.extent<tensor<2xf32>> {zero.param = "v", zero.sharded}
// ALL-SAME: %[[MW:[^:]*]]: !zero.extent<tensor<4xf32>> {zero.sharded, zero.state
// ALL-SAME: -> (tensor<f32> {zero.loss})
// ALL-NEXT: %[[P0:.*]], %[[T0:.*]] = zero.read_start %[[W]] {zero.category = "params"}
// ALL-NEXT: zero.read_start %[[V]] {zero.category = "params"}
// ALL-NEXT: zero.read_start %[[W]] {zero.category = "params"}
// ALL-NEXT: zero.read_start %[[MW]] {zero.category = "optimizer_states"}
// ALL-NEXT: %[[S0:.*]] = zero.wait %[[T0]], %[[P0]]
// ALL-NEXT: shard.all_gather %[[S0]]
// ALL-NEXT: zero.read_start %[[V]] {zero.category = "params"}
// ALL: zero.write_start %{{.*}}#0 to %[[W]]
// ALL: return %{{.*}} : tensor<f32>

// read-ahead=1 with two writes after an update: they start in order right
// after it, and the next update's reads start after both (before its
// reduce_scatter), not further down.
// ALL1-LABEL: func.func @train_step
// ALL1-SAME: %[[W:[^:]*]]: !zero.extent<tensor<4xf32>> {zero.param = "w", zero.sharded}
// ALL1-SAME: %[[V:[^:]*]]: !zero.extent<tensor<2xf32>> {zero.param = "v", zero.sharded}
// ALL1-SAME: %[[MW:[^:]*]]: !zero.extent<tensor<4xf32>> {zero.sharded, zero.state
// ALL1-SAME: %[[MV:[^:]*]]: !zero.extent<tensor<2xf32>> {zero.sharded, zero.state
// ALL1: %[[NW:.*]]:2 = linalg.generic
// ALL1: zero.write_start %[[NW]]#0 to %[[W]] {zero.category = "params"}
// ALL1-NEXT: zero.write_start %[[NW]]#1 to %[[MW]] {zero.category = "optimizer_states"}
// ALL1-NEXT: %[[P:.*]], %[[T:.*]] = zero.read_start %[[V]] {zero.category = "params"}
// ALL1-NEXT: %[[Q:.*]], %[[U:.*]] = zero.read_start %[[MV]] {zero.category = "optimizer_states"}
// ALL1-NEXT: shard.reduce_scatter
// ALL1-NEXT: zero.wait %[[T]], %[[P]]
// ALL1-NEXT: zero.wait %[[U]], %[[Q]]
// ALL1-NEXT: linalg.generic

// The defaults move nothing.
// NONE-LABEL: func.func @train_step
// NONE-SAME: %{{[^:]*}}: tensor<4xf32> {zero.sharded, zero.state
// NONE-NOT: zero.read_start

// Bufferized and lowered: extents become i64 handles that remember their tensor; each
// read goes into a 4096-aligned staging buffer of 4096 bytes, updated in
// place and written back from it (no copy).
// LOWER-LABEL: func.func @train_step
// LOWER-SAME: %[[W:[^:]*]]: i64 {zero.extent = tensor<4xf32>, zero.param = "w", zero.sharded}
// LOWER: %[[A:.*]] = memref.alloc() {alignment = 4096 : i64, zero.category = "params"} : memref<1024xf32>
// LOWER-NEXT: %[[B:.*]] = memref.reinterpret_cast %[[A]] to offset: [0], sizes: [4], strides: [1] : memref<1024xf32> to memref<4xf32>
// LOWER: call @zrt_nvme_read_start(%[[W]], %{{.*}}, %c4096_i64) : (i64, !llvm.ptr, i64) -> i64
// LOWER: call @zrt_nvme_write_start(%[[W]], %{{.*}}, %c4096_i64{{.*}}) : (i64, !llvm.ptr, i64) -> i64
// LOWER-NOT: memref.copy
// LOWER: return

// -----

// A state whose new value does not read the old one (here: reset to zero
// by a fill that is no use of it): nothing reads it, and it is written
// right after the fill, completing before the return.
module {
  func.func @train_step(%m: tensor<4xf32> {zero.state = {kind = "count", param = "w"}}, %x: tensor<4xf32> {zero.batch = "x"})
      -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.state = {kind = "count", param = "w"}})
      attributes {zero.role = "train_step", zero.stage = 3 : i64, zero.world_size = 1 : i64} {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %n = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %n : tensor<f32>, tensor<4xf32>
  }
}
// OPT-LABEL: func.func @train_step
// OPT-SAME: %[[M:[^:]*]]: !zero.extent<tensor<4xf32>>
// OPT-SAME: -> (tensor<f32> {zero.loss})
// OPT-NOT: zero.read_start
// OPT: %[[N:.*]] = linalg.fill
// OPT-NEXT: %[[T:.*]] = zero.write_start %[[N]] to %[[M]] {zero.category = "optimizer_states"}
// OPT: zero.wait %[[T]] keep(%[[N]] : tensor<4xf32>)
// OPT-NEXT: return

// -----

// An update's private producer (the gradient's scaling, which nothing else
// reads) moves up with it to right after the gradient; the gradient, which
// the loss reads too, stays; the scaling's tensor.empty comes along right
// before it, not to the top. The write then drains while the loss computes.
#id = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
module {
  func.func @train_step(%w: tensor<4xf32> {zero.param = "w", zero.sharded},
                        %m: tensor<4xf32> {zero.state = {kind = "momentum", param = "w"}, zero.sharded},
                        %x: tensor<4xf32> {zero.batch = "x"}, %lr: f32 {zero.hyper = "lr"})
      -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.param = "w", zero.sharded},
          tensor<4xf32> {zero.state = {kind = "momentum", param = "w"}, zero.sharded})
      attributes {zero.role = "train_step", zero.stage = 3 : i64, zero.world_size = 1 : i64} {
    %e = tensor.empty() : tensor<4xf32>
    %grad = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.mulf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    %z = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<f32>
    %f = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction"]}
        ins(%grad : tensor<4xf32>) outs(%f : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    %half = arith.constant 0.5 : f32
    %e2 = tensor.empty() : tensor<4xf32>
    %mean = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%grad : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.mulf %a, %half : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    %nw:2 = linalg.generic {indexing_maps = [#id, #id, #s, #id, #id], iterator_types = ["parallel"]}
        ins(%mean, %m, %lr : tensor<4xf32>, tensor<4xf32>, f32) outs(%w, %m : tensor<4xf32>, tensor<4xf32>) {
    ^bb0(%g: f32, %mm: f32, %l: f32, %p: f32, %o: f32):
      %m1 = arith.addf %mm, %g : f32
      %d = arith.mulf %l, %m1 : f32
      %p1 = arith.subf %p, %d : f32
      linalg.yield %p1, %m1 : f32, f32
    } -> (tensor<4xf32>, tensor<4xf32>)
    return %loss, %nw#0, %nw#1 : tensor<f32>, tensor<4xf32>, tensor<4xf32>
  }
}
// OPT-LABEL: func.func @train_step
// OPT-SAME: %[[M:[^:]*]]: !zero.extent<tensor<4xf32>>
// OPT-NOT: tensor.empty() : tensor<4xf32>
// OPT: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// OPT-NOT: tensor.empty() : tensor<4xf32>
// OPT: %[[G:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>) outs(%[[E]] :
// OPT: %[[E2:.*]] = tensor.empty() : tensor<4xf32>
// OPT-NEXT: %[[P:.*]], %[[T:.*]] = zero.read_start %[[M]]
// OPT-NEXT: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[G]] : tensor<4xf32>) outs(%[[E2]] :
// OPT: %[[S:.*]] = zero.wait %[[T]], %[[P]]
// OPT-NEXT: %[[N:.*]]:2 = linalg.generic {{.*}} ins(%[[MEAN]], %[[S]], %{{.*}} : {{.*}})
// OPT: %[[WT:.*]] = zero.write_start %[[N]]#1 to %[[M]]
// OPT: linalg.fill
// OPT-NEXT: %[[L:.*]] = linalg.generic {{.*}} ins(%[[G]] : tensor<4xf32>)
// OPT: zero.wait %[[WT]] keep(%[[N]]#1 : tensor<4xf32>)
// OPT-NEXT: return %[[L]], %[[N]]#0 : tensor<f32>, tensor<4xf32>
