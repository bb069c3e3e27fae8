// Stage 3 gathers a parameter again where another parameter is read since
// its previous use, so gathered parameters are never live across another
// parameter's gather; uses with no other parameter read between them share
// one gather. With regather=false each parameter is gathered once.
// RUN: zero-opt %s --zero-partition="stage=3 world-size=2" | FileCheck %s
// RUN: zero-opt %s --zero-partition="stage=3 world-size=2 regather=false" | FileCheck %s --check-prefix=ONCE

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:    %[[W:.*]]: tensor<1xf32> {zero.param = "w", zero.sharded}, %[[V:.*]]: tensor<1xf32> {zero.param = "v", zero.sharded}
// CHECK:         %[[W1:.*]] = shard.all_gather %[[W]]
// CHECK-NEXT:    %[[W1F:.*]] = tensor.expand_shape %[[W1]]
// CHECK-NEXT:    %[[A:.*]] = linalg.matmul ins(%{{.*}}, %[[W1F]] :
// CHECK-NEXT:    %[[V1:.*]] = shard.all_gather %[[V]]
// CHECK-NEXT:    %[[V1F:.*]] = tensor.expand_shape %[[V1]]
// CHECK-NEXT:    %[[B:.*]] = linalg.matmul ins(%[[A]], %[[V1F]] :
// w again: v was read since w's first use.
// CHECK-NEXT:    %[[W2:.*]] = shard.all_gather %[[W]]
// CHECK-NEXT:    %[[W2F:.*]] = tensor.expand_shape %[[W2]]
// CHECK-NEXT:    %[[C:.*]] = linalg.matmul ins(%[[B]], %[[W2F]] :
// v again (w was read since), once for its two adjacent uses.
// CHECK-NEXT:    linalg.transpose ins(%[[C]] :
// CHECK-NEXT:    %[[V2:.*]] = shard.all_gather %[[V]]
// CHECK-NEXT:    %[[V2F:.*]] = tensor.expand_shape %[[V2]]
// CHECK-NEXT:    %[[D:.*]] = linalg.add ins(%[[B]], %[[V2F]] :
// CHECK-NEXT:    linalg.mul ins(%[[D]], %[[V2F]] :
// CHECK-NOT:     shard.all_gather %[[W]]
// CHECK-NOT:     shard.all_gather %[[V]]

// ONCE-COUNT-2:  shard.all_gather %arg
// ONCE-NOT:      shard.all_gather %arg

func.func @forward_backward(%w: tensor<1x2xf32> {zero.param = "w"},
                            %v: tensor<2x1xf32> {zero.param = "v"},
                            %x: tensor<2x1xf32> {zero.batch = "input"})
    -> (tensor<f32> {zero.loss}, tensor<1x2xf32> {zero.grad = "w"},
        tensor<2x1xf32> {zero.grad = "v"})
    attributes {zero.role = "forward_backward"} {
  %zero = arith.constant 0.0 : f32
  %e22 = tensor.empty() : tensor<2x2xf32>
  %f22 = linalg.fill ins(%zero : f32) outs(%e22 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %e21 = tensor.empty() : tensor<2x1xf32>
  %f21 = linalg.fill ins(%zero : f32) outs(%e21 : tensor<2x1xf32>) -> tensor<2x1xf32>
  %a = linalg.matmul ins(%x, %w : tensor<2x1xf32>, tensor<1x2xf32>) outs(%f22 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %b = linalg.matmul ins(%a, %v : tensor<2x2xf32>, tensor<2x1xf32>) outs(%f21 : tensor<2x1xf32>) -> tensor<2x1xf32>
  %c = linalg.matmul ins(%b, %w : tensor<2x1xf32>, tensor<1x2xf32>) outs(%f22 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %ct = linalg.transpose ins(%c : tensor<2x2xf32>) outs(%e22 : tensor<2x2xf32>) permutation = [1, 0]
  %d = linalg.add ins(%b, %v : tensor<2x1xf32>, tensor<2x1xf32>) outs(%e21 : tensor<2x1xf32>) -> tensor<2x1xf32>
  %g = linalg.mul ins(%d, %v : tensor<2x1xf32>, tensor<2x1xf32>) outs(%e21 : tensor<2x1xf32>) -> tensor<2x1xf32>
  %l0 = tensor.empty() : tensor<f32>
  %l1 = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%g : tensor<2x1xf32>) outs(%l1 : tensor<f32>) dimensions = [0, 1]
    (%p: f32, %q: f32) { %s = arith.addf %p, %q : f32
                         linalg.yield %s : f32 }
  %gw = tensor.extract_slice %ct[0, 0] [1, 2] [1, 1] : tensor<2x2xf32> to tensor<1x2xf32>
  return %loss, %gw, %g : tensor<f32>, tensor<1x2xf32>, tensor<2x1xf32>
}

func.func @optimizer(%w: tensor<1x2xf32> {zero.param = "w"},
                     %v: tensor<2x1xf32> {zero.param = "v"},
                     %gw: tensor<1x2xf32> {zero.grad = "w"},
                     %gv: tensor<2x1xf32> {zero.grad = "v"})
    -> (tensor<1x2xf32> {zero.param = "w"}, tensor<2x1xf32> {zero.param = "v"})
    attributes {zero.role = "optimizer"} {
  %nw = linalg.sub ins(%w, %gw : tensor<1x2xf32>, tensor<1x2xf32>) outs(%w : tensor<1x2xf32>) -> tensor<1x2xf32>
  %nv = linalg.sub ins(%v, %gv : tensor<2x1xf32>, tensor<2x1xf32>) outs(%v : tensor<2x1xf32>) -> tensor<2x1xf32>
  return %nw, %nv : tensor<1x2xf32>, tensor<2x1xf32>
}
