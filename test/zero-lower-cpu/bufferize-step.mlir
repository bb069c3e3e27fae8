// RUN: zero-opt %s --zero-bufferize-step | FileCheck %s

// The buffer ABI of a hand-written step (a linear model, MSE loss, SGD with
// momentum). forward_backward: inputs stay read-only and the loss and the
// gradient become out-parameters that keep their zero.* attributes.
// CHECK-LABEL: func.func @fb(
// CHECK-SAME:    %[[W:.*]]: memref<3x2xf32> {zero.param = "w"},
// CHECK-SAME:    %[[X:.*]]: memref<4x3xf32> {zero.batch = "x"},
// CHECK-SAME:    %[[T:.*]]: memref<4x2xf32> {zero.batch = "t"},
// CHECK-SAME:    %[[LOSS:.*]]: memref<f32> {zero.loss},
// CHECK-SAME:    %[[GW:.*]]: memref<3x2xf32> {zero.grad = "w"})
// CHECK-NOT:     ->
// The gradient's allocation was hoisted to the caller: the matmul writes the
// out-parameter directly, and reads x through a transposed map
// (zero-fold-transposes) instead of a transposed copy.
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[X]], %{{.*}} : memref<4x3xf32>, memref<4x2xf32>) outs(%[[GW]] : memref<3x2xf32>)
// Every temporary is freed.
// CHECK:         memref.dealloc
// CHECK:         return
// CHECK-NEXT:  }
func.func @fb(%w: tensor<3x2xf32> {zero.param = "w"},
              %x: tensor<4x3xf32> {zero.batch = "x"},
              %t: tensor<4x2xf32> {zero.batch = "t"})
    -> (tensor<f32> {zero.loss}, tensor<3x2xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.25 : f32
  %e42 = tensor.empty() : tensor<4x2xf32>
  %y0 = linalg.fill ins(%zero : f32) outs(%e42 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x2xf32>) outs(%y0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %d = linalg.sub ins(%y, %t : tensor<4x2xf32>, tensor<4x2xf32>) outs(%e42 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %l0 = tensor.empty() : tensor<f32>
  %l1 = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %sq = linalg.mul ins(%d, %d : tensor<4x2xf32>, tensor<4x2xf32>) outs(%e42 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %loss = linalg.reduce ins(%sq : tensor<4x2xf32>) outs(%l1 : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) { %s = arith.addf %a, %b : f32
                         linalg.yield %s : f32 }
  %e34 = tensor.empty() : tensor<3x4xf32>
  %xt = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e34 : tensor<3x4xf32>) permutation = [1, 0]
  %e32 = tensor.empty() : tensor<3x2xf32>
  %g0 = linalg.fill ins(%zero : f32) outs(%e32 : tensor<3x2xf32>) -> tensor<3x2xf32>
  %gw = linalg.matmul ins(%xt, %d : tensor<3x4xf32>, tensor<4x2xf32>) outs(%g0 : tensor<3x2xf32>) -> tensor<3x2xf32>
  return %loss, %gw : tensor<f32>, tensor<3x2xf32>
}

// optimizer: parameters and states are updated in place, so nothing is
// returned and no out-parameter is added.
// CHECK-LABEL: func.func @opt(
// CHECK-SAME:    %[[P:.*]]: memref<3x2xf32> {zero.param = "w"},
// CHECK-SAME:    %[[G:.*]]: memref<3x2xf32> {zero.grad = "w"},
// CHECK-SAME:    %[[M:.*]]: memref<3x2xf32> {zero.state = {kind = "momentum", param = "w"}},
// CHECK-SAME:    %{{.*}}: f32 {zero.hyper = "lr"})
// CHECK-SAME:    attributes {zero.role = "optimizer"}
// CHECK:         linalg.generic {{.*}} ins(%[[G]] : memref<3x2xf32>) outs(%[[P]], %[[M]] : memref<3x2xf32>, memref<3x2xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         return
// CHECK-NEXT:  }
func.func @opt(%p: tensor<3x2xf32> {zero.param = "w"},
               %g: tensor<3x2xf32> {zero.grad = "w"},
               %m: tensor<3x2xf32> {zero.state = {param = "w", kind = "momentum"}},
               %lr: f32 {zero.hyper = "lr"})
    -> (tensor<3x2xf32> {zero.param = "w"},
        tensor<3x2xf32> {zero.state = {param = "w", kind = "momentum"}})
    attributes {zero.role = "optimizer"} {
  %np, %nm = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                             iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<3x2xf32>) outs(%p, %m : tensor<3x2xf32>, tensor<3x2xf32>) {
    ^bb0(%gi: f32, %pi: f32, %mi: f32):
      %mn = arith.addf %mi, %gi : f32
      %st = arith.mulf %lr, %mn : f32
      %pn = arith.subf %pi, %st : f32
      linalg.yield %pn, %mn : f32, f32
  } -> (tensor<3x2xf32>, tensor<3x2xf32>)
  return %np, %nm : tensor<3x2xf32>, tensor<3x2xf32>
}
