// IR in the shape torch-mlir emits, partitioned at every stage on 4 ranks:
// scalars as 0-d tensors (parameters, hyper-parameters, optimizer math) and
// cf.assert in forward_backward.
// RUN: zero-opt %s -split-input-file --zero-partition="stage=0 world-size=4" | FileCheck %s --check-prefixes=CHECK,S0
// RUN: zero-opt %s -split-input-file --zero-partition="stage=1 world-size=4" | FileCheck %s --check-prefixes=CHECK,S1
// RUN: zero-opt %s -split-input-file --zero-partition="stage=2 world-size=4" | FileCheck %s --check-prefixes=CHECK,S2
// RUN: zero-opt %s -split-input-file --zero-partition="stage=3 world-size=4" | FileCheck %s --check-prefixes=CHECK,S3
// Stage 3 with the 1-element scale persistent (whole, as at stages 1-2)
// and the 6-element w sharded.
// RUN: zero-opt %s -split-input-file --zero-partition="stage=3 world-size=4 param-persistence-threshold=2" | FileCheck %s --check-prefixes=CHECK,S1,P3

// A rank-0 parameter (a learned scale): flattened to 1 element, padded to 4,
// one element per rank; the optimizer's 0-d generic runs on this rank's
// element, seen as a 0-d tensor again.
// CHECK-LABEL: func.func @train_step(
// S0-SAME:       %[[S:.*]]: tensor<f32> {zero.param = "scale"}
// S1-SAME:       %[[S:.*]]: tensor<f32> {zero.param = "scale"}
// S3-SAME:       %[[S:.*]]: tensor<1xf32> {zero.param = "scale", zero.sharded}
// S1-SAME:       tensor<1xf32> {zero.sharded, zero.state = {kind = "momentum", param = "scale"}}
// S3-SAME:       -> (tensor<f32> {zero.loss}, tensor<1xf32> {zero.param = "scale", zero.sharded}, tensor<1xf32> {zero.sharded, zero.state
// CHECK-SAME:    zero.manifest = [#zero.layout<name = "scale", shape = [], numel = 1, padded = 4, shard = 1, sharded = {{[a-z|]+}}>]
// P3-SAME:       zero.stage = 3
// S3:            %[[FULL:.*]] = shard.all_gather %[[S]] {{.*}} : tensor<1xf32> -> tensor<4xf32>
// S3-NEXT:       %[[ONE:.*]] = tensor.extract_slice %[[FULL]][0] [1] [1] : tensor<4xf32> to tensor<1xf32>
// S3-NEXT:       tensor.collapse_shape %[[ONE]] [] : tensor<1xf32> into tensor<f32>
// S1:            %[[G:.*]] = tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
// S1:            tensor.pad %[[G]] low[0] high[3]
// S1:            shard.reduce_scatter {{.*}} : tensor<4xf32> -> tensor<1xf32>
// S0:            shard.all_reduce {{.*}} : tensor<4xf32> -> tensor<4xf32>
// S1:            tensor.extract_slice %{{.*}}[%{{.*}}] [1] [1] : tensor<4xf32> to tensor<1xf32>
// S1:            tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>
// CHECK:         %[[NEW:.*]]:2 = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}], iterator_types = []} ins({{.*}} : tensor<f32>, tensor<f32>, tensor<f32>)
// S1:            %[[NEWP:.*]] = tensor.expand_shape %[[NEW]]#0 [] output_shape [1] : tensor<f32> into tensor<1xf32>
// S1:            shard.all_gather %[[NEWP]] {{.*}} : tensor<1xf32> -> tensor<4xf32>
// S1:            bufferization.materialize_in_destination {{.*}} in %[[S]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// S3:            tensor.expand_shape %[[NEW]]#0 [] output_shape [1] : tensor<f32> into tensor<1xf32>
// S3:            tensor.expand_shape %[[NEW]]#1 [] output_shape [1] : tensor<f32> into tensor<1xf32>
#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>
#z = affine_map<() -> ()>
func.func @fb(%s: tensor<f32> {zero.param = "scale"}, %x: tensor<4xf32> {zero.batch = "input"})
    -> (tensor<f32> {zero.loss}, tensor<f32> {zero.grad = "scale"})
    attributes {zero.role = "forward_backward"} {
  %e = tensor.empty() : tensor<f32>
  %g = linalg.generic {indexing_maps = [#z, #z], iterator_types = []}
      ins(%s : tensor<f32>) outs(%e : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %two = arith.constant 2.0 : f32
    %r = arith.mulf %a, %two : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %g : tensor<f32>, tensor<f32>
}
func.func @opt(%s: tensor<f32> {zero.param = "scale"}, %g: tensor<f32> {zero.grad = "scale"},
               %m: tensor<f32> {zero.state = {param = "scale", kind = "momentum"}},
               %lr: f32 {zero.hyper = "lr"})
    -> (tensor<f32> {zero.param = "scale"}, tensor<f32> {zero.state = {param = "scale", kind = "momentum"}})
    attributes {zero.role = "optimizer"} {
  %e = tensor.empty() : tensor<f32>
  %n:2 = linalg.generic {indexing_maps = [#z, #z, #z, #z, #z], iterator_types = []}
      ins(%s, %g, %m : tensor<f32>, tensor<f32>, tensor<f32>) outs(%e, %e : tensor<f32>, tensor<f32>) {
  ^bb0(%p: f32, %d: f32, %mm: f32, %o0: f32, %o1: f32):
    %nine = arith.constant 0.9 : f32
    %t = arith.mulf %nine, %mm : f32
    %m2 = arith.addf %t, %d : f32
    %st = arith.mulf %lr, %m2 : f32
    %r = arith.subf %p, %st : f32
    linalg.yield %r, %m2 : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  return %n#0, %n#1 : tensor<f32>, tensor<f32>
}

// -----

// Hyper-parameters as 0-d tensors, and AdamW's bias correction
// 1 - beta1 ** step as generics over 0-d tensors (indexing maps () -> ()):
// these stay as they are (they compute scalars no rank shards) while the
// update generic around them is flattened; the 0-d tensors reach it through
// (d0) -> () maps.
// CHECK-LABEL: func.func @train_step(
// S0-SAME:       tensor<6xf32> {zero.param = "w"}
// S3-SAME:       tensor<2xf32> {zero.param = "w", zero.sharded}
// P3-SAME:       tensor<2xf32> {zero.param = "w", zero.sharded}
// S1-SAME:       tensor<2xf32> {zero.sharded, zero.state = {kind = "exp_avg", param = "w"}}
// CHECK-SAME:    %[[LR:[^:]*]]: tensor<f32> {zero.hyper = "lr"}, %[[B1:[^:]*]]: tensor<f32> {zero.hyper = "beta1"}, %[[STEP:[^:]*]]: tensor<f32> {zero.hyper = "step"}
// CHECK:         %[[POW:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = []} ins(%[[B1]], %[[STEP]] : tensor<f32>, tensor<f32>) outs(%{{.*}} : tensor<f32>)
// CHECK:           math.powf
// CHECK:         %[[BC:.*]] = linalg.generic {{.*}} iterator_types = []} ins(%[[POW]] : tensor<f32>)
// S0:            linalg.generic {{.*}} iterator_types = ["parallel"]} ins({{.*}}, %[[LR]], %[[B1]], %[[BC]] : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<f32>, tensor<f32>, tensor<f32>)
// S1:            linalg.generic {{.*}} iterator_types = ["parallel"]} ins({{.*}}, %[[LR]], %[[B1]], %[[BC]] : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<f32>, tensor<f32>, tensor<f32>)
// S2:            linalg.generic {{.*}} iterator_types = ["parallel"]} ins({{.*}}, %[[LR]], %[[B1]], %[[BC]] : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<f32>, tensor<f32>, tensor<f32>)
// S3:            linalg.generic {{.*}} iterator_types = ["parallel"]} ins({{.*}}, %[[LR]], %[[B1]], %[[BC]] : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<f32>, tensor<f32>, tensor<f32>)
#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>
#z = affine_map<() -> ()>
func.func @fb(%w: tensor<6xf32> {zero.param = "w"}, %x: tensor<6xf32> {zero.batch = "input"})
    -> (tensor<f32> {zero.loss}, tensor<6xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %x : tensor<f32>, tensor<6xf32>
}
func.func @opt(%w: tensor<6xf32> {zero.param = "w"}, %g: tensor<6xf32> {zero.grad = "w"},
               %m: tensor<6xf32> {zero.state = {param = "w", kind = "exp_avg"}},
               %lr: tensor<f32> {zero.hyper = "lr"}, %beta1: tensor<f32> {zero.hyper = "beta1"},
               %step: tensor<f32> {zero.hyper = "step"})
    -> (tensor<6xf32> {zero.param = "w"}, tensor<6xf32> {zero.state = {param = "w", kind = "exp_avg"}})
    attributes {zero.role = "optimizer"} {
  %e0 = tensor.empty() : tensor<f32>
  %pow = linalg.generic {indexing_maps = [#z, #z, #z], iterator_types = []}
      ins(%beta1, %step : tensor<f32>, tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%b: f32, %s: f32, %o: f32):
    %p = math.powf %b, %s : f32
    linalg.yield %p : f32
  } -> tensor<f32>
  %bc = linalg.generic {indexing_maps = [#z, #z], iterator_types = []}
      ins(%pow : tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%p: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %r = arith.subf %one, %p : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e = tensor.empty() : tensor<6xf32>
  %nw, %nm = linalg.generic {indexing_maps = [#id, #id, #id, #sc, #sc, #sc, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %g, %m, %lr, %beta1, %bc : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<f32>, tensor<f32>, tensor<f32>)
      outs(%e, %e : tensor<6xf32>, tensor<6xf32>) {
  ^bb0(%p: f32, %gr: f32, %mm: f32, %rate: f32, %b1: f32, %corr: f32, %o0: f32, %o1: f32):
    %one = arith.constant 1.0 : f32
    %omb = arith.subf %one, %b1 : f32
    %t0 = arith.mulf %b1, %mm : f32
    %t1 = arith.mulf %omb, %gr : f32
    %m2 = arith.addf %t0, %t1 : f32
    %mh = arith.divf %m2, %corr : f32
    %st = arith.mulf %rate, %mh : f32
    %p2 = arith.subf %p, %st : f32
    linalg.yield %p2, %m2 : f32, f32
  } -> (tensor<6xf32>, tensor<6xf32>)
  return %nw, %nm : tensor<6xf32>, tensor<6xf32>
}

// -----

// cf.assert in forward_backward (torch-mlir's bounds check on an embedding
// index) survives partitioning, with its message.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:    {zero.param = "emb"
// CHECK:         %[[OK:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:    cf.assert %[[OK]], "index must be smaller than dim size"
#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>
#z = affine_map<() -> ()>
func.func @fb(%w: tensor<8xf32> {zero.param = "emb"}, %tok: tensor<4xi32> {zero.batch = "tokens"})
    -> (tensor<f32> {zero.loss}, tensor<8xf32> {zero.grad = "emb"})
    attributes {zero.role = "forward_backward"} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : i32
  %t = tensor.extract %tok[%c0] : tensor<4xi32>
  %ok = arith.cmpi slt, %t, %c8 : i32
  cf.assert %ok, "index must be smaller than dim size"
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<8xf32>
}
func.func @opt(%w: tensor<8xf32> {zero.param = "emb"}, %g: tensor<8xf32> {zero.grad = "emb"}, %lr: f32 {zero.hyper = "lr"})
    -> (tensor<8xf32> {zero.param = "emb"})
    attributes {zero.role = "optimizer"} {
  %e = tensor.empty() : tensor<8xf32>
  %n = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %g : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%p: f32, %d: f32, %o: f32):
    %st = arith.mulf %lr, %d : f32
    %r = arith.subf %p, %st : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %n : tensor<8xf32>
}
