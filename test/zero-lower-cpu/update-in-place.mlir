// RUN: zero-opt %s --zero-bufferize-step | FileCheck %s

// A mixed-precision optimizer: the bf16 parameter is the rounding of the
// updated f32 master, so the op's init for it is never read and may be a
// tensor.empty (as here, or after upstream elementwise fusion replaced an
// unread init). zero-prepare-bufferization writes it into the parameter's
// argument: the parameter is updated in place, with no out-parameter and no
// second parameter buffer.
// CHECK-LABEL: func.func @opt(
// CHECK-SAME:    %[[P:.*]]: memref<8xbf16> {zero.param = "w"},
// CHECK-SAME:    %[[G:.*]]: memref<8xbf16> {zero.grad = "w"},
// CHECK-SAME:    %[[M:.*]]: memref<8xf32> {zero.state = {kind = "master", param = "w"}},
// CHECK-SAME:    %[[LR:.*]]: f32 {zero.hyper = "lr"})
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.generic {{.*}} ins(%[[G]] : memref<8xbf16>) outs(%[[P]], %[[M]] : memref<8xbf16>, memref<8xf32>)
// CHECK-NOT:     memref.copy
// CHECK:         return
// CHECK-NEXT:  }
#id = affine_map<(d0) -> (d0)>
func.func @opt(%p: tensor<8xbf16> {zero.param = "w"},
               %g: tensor<8xbf16> {zero.grad = "w"},
               %m: tensor<8xf32> {zero.state = {kind = "master", param = "w"}},
               %lr: f32 {zero.hyper = "lr"})
    -> (tensor<8xbf16> {zero.param = "w"},
        tensor<8xf32> {zero.state = {kind = "master", param = "w"}})
    attributes {zero.role = "optimizer"} {
  %e = tensor.empty() : tensor<8xbf16>
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%g : tensor<8xbf16>) outs(%e, %m : tensor<8xbf16>, tensor<8xf32>) {
    ^bb0(%gi: bf16, %pi: bf16, %mi: f32):
      %gf = arith.extf %gi : bf16 to f32
      %step = arith.mulf %gf, %lr : f32
      %new = arith.subf %mi, %step : f32
      %round = arith.truncf %new : f32 to bf16
      linalg.yield %round, %new : bf16, f32
  } -> (tensor<8xbf16>, tensor<8xf32>)
  return %r#0, %r#1 : tensor<8xbf16>, tensor<8xf32>
}

func.func @fb(%p: tensor<8xbf16> {zero.param = "w"})
    -> (tensor<f32> {zero.loss}, tensor<8xbf16> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %zero = arith.constant 0.0 : f32
  %l = tensor.from_elements %zero : tensor<f32>
  return %l, %p : tensor<f32>, tensor<8xbf16>
}
