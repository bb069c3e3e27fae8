// RUN: zero-opt %s --zero-verify | FileCheck %s

// A hand-written two-layer linear model, loss = sum((x W1 W2 - y)^2)/N, and
// SGD with momentum plus global gradient-norm clipping. zero-verify accepts it
// and leaves it unchanged.

#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>

// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: {zero.param = "w1"}
// CHECK-SAME: {zero.batch = "x"}
// CHECK-SAME: attributes {zero.role = "forward_backward"}
func.func @forward_backward(%w1: tensor<2x4xf32> {zero.param = "w1"},
                            %w2: tensor<4x3xf32> {zero.param = "w2"},
                            %x: tensor<5x2xf32> {zero.batch = "x"},
                            %y: tensor<5x3xf32> {zero.batch = "y"})
    -> (tensor<f32> {zero.loss}, tensor<2x4xf32> {zero.grad = "w1"},
        tensor<4x3xf32> {zero.grad = "w2"})
    attributes {zero.role = "forward_backward"} {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<5x4xf32>
  %h0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<5x4xf32>) -> tensor<5x4xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<5x2xf32>, tensor<2x4xf32>) outs(%h0 : tensor<5x4xf32>) -> tensor<5x4xf32>
  %e1 = tensor.empty() : tensor<5x3xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %o = linalg.matmul ins(%h, %w2 : tensor<5x4xf32>, tensor<4x3xf32>) outs(%o0 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %d = linalg.sub ins(%o, %y : tensor<5x3xf32>, tensor<5x3xf32>) outs(%e1 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %sq = linalg.mul ins(%d, %d : tensor<5x3xf32>, tensor<5x3xf32>) outs(%e1 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %l0 = tensor.empty() : tensor<f32>
  %l1 = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%sq : tensor<5x3xf32>) outs(%l1 : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) { %s = arith.addf %a, %b : f32
                         linalg.yield %s : f32 }
  // dL/do = 2 d (the 1/N factor is left out to keep the case short).
  %do = linalg.add ins(%d, %d : tensor<5x3xf32>, tensor<5x3xf32>) outs(%e1 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %ht0 = tensor.empty() : tensor<4x5xf32>
  %ht = linalg.transpose ins(%h : tensor<5x4xf32>) outs(%ht0 : tensor<4x5xf32>) permutation = [1, 0]
  %g20 = tensor.empty() : tensor<4x3xf32>
  %g2i = linalg.fill ins(%zero : f32) outs(%g20 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %g2 = linalg.matmul ins(%ht, %do : tensor<4x5xf32>, tensor<5x3xf32>) outs(%g2i : tensor<4x3xf32>) -> tensor<4x3xf32>
  %w2t0 = tensor.empty() : tensor<3x4xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<4x3xf32>) outs(%w2t0 : tensor<3x4xf32>) permutation = [1, 0]
  %dh = linalg.matmul ins(%do, %w2t : tensor<5x3xf32>, tensor<3x4xf32>) outs(%h0 : tensor<5x4xf32>) -> tensor<5x4xf32>
  %xt0 = tensor.empty() : tensor<2x5xf32>
  %xt = linalg.transpose ins(%x : tensor<5x2xf32>) outs(%xt0 : tensor<2x5xf32>) permutation = [1, 0]
  %g10 = tensor.empty() : tensor<2x4xf32>
  %g1i = linalg.fill ins(%zero : f32) outs(%g10 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %g1 = linalg.matmul ins(%xt, %dh : tensor<2x5xf32>, tensor<5x4xf32>) outs(%g1i : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %loss, %g1, %g2 : tensor<f32>, tensor<2x4xf32>, tensor<4x3xf32>
}

// CHECK-LABEL: func.func @optimizer
// CHECK-SAME: {zero.state = {kind = "momentum", param = "w1"}}
// CHECK-SAME: {zero.hyper = "max_grad_norm"}
// CHECK: linalg.reduce
// CHECK: math.sqrt
// CHECK: linalg.generic
func.func @optimizer(%w1: tensor<2x4xf32> {zero.param = "w1"},
                     %w2: tensor<4x3xf32> {zero.param = "w2"},
                     %g1: tensor<2x4xf32> {zero.grad = "w1"},
                     %g2: tensor<4x3xf32> {zero.grad = "w2"},
                     %m1: tensor<2x4xf32> {zero.state = {param = "w1", kind = "momentum"}},
                     %m2: tensor<4x3xf32> {zero.state = {param = "w2", kind = "momentum"}},
                     %lr: f32 {zero.hyper = "lr"},
                     %mu: f32 {zero.hyper = "momentum"},
                     %maxnorm: f32 {zero.hyper = "max_grad_norm"})
    -> (tensor<2x4xf32> {zero.param = "w1"}, tensor<4x3xf32> {zero.param = "w2"},
        tensor<2x4xf32> {zero.state = {param = "w1", kind = "momentum"}},
        tensor<4x3xf32> {zero.state = {param = "w2", kind = "momentum"}})
    attributes {zero.role = "optimizer"} {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %r0 = tensor.empty() : tensor<f32>
  %r = linalg.fill ins(%zero : f32) outs(%r0 : tensor<f32>) -> tensor<f32>
  // Global gradient norm: one full reduction per gradient, summed as scalars.
  %sq1 = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> ()>],
                         iterator_types = ["reduction", "reduction"]}
      ins(%g1 : tensor<2x4xf32>) outs(%r : tensor<f32>) {
    ^bb0(%g: f32, %acc: f32):
      %gg = arith.mulf %g, %g : f32
      %s = arith.addf %acc, %gg : f32
      linalg.yield %s : f32
  } -> tensor<f32>
  %e2 = tensor.empty() : tensor<4x3xf32>
  %gsq2 = linalg.mul ins(%g2, %g2 : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e2 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %sq2 = linalg.reduce ins(%gsq2 : tensor<4x3xf32>) outs(%r : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) { %s = arith.addf %a, %b : f32
                         linalg.yield %s : f32 }
  %s1 = tensor.extract %sq1[] : tensor<f32>
  %s2 = tensor.extract %sq2[] : tensor<f32>
  %sum = arith.addf %s1, %s2 : f32
  %norm = math.sqrt %sum : f32
  %ratio = arith.divf %maxnorm, %norm : f32
  %coef = arith.minimumf %ratio, %one : f32
  %nw1, %nm1 = linalg.generic {indexing_maps = [#id, #id, #id, #scalar, #id, #id],
                               iterator_types = ["parallel", "parallel"]}
      ins(%w1, %g1, %m1, %coef : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, f32)
      outs(%w1, %m1 : tensor<2x4xf32>, tensor<2x4xf32>) {
    ^bb0(%w: f32, %g: f32, %m: f32, %c: f32, %ow: f32, %om: f32):
      %gc = arith.mulf %g, %c : f32
      %mm = arith.mulf %mu, %m : f32
      %m_new = arith.addf %mm, %gc : f32
      %step = arith.mulf %lr, %m_new : f32
      %w_new = arith.subf %w, %step : f32
      linalg.yield %w_new, %m_new : f32, f32
  } -> (tensor<2x4xf32>, tensor<2x4xf32>)
  // Elementwise arith on whole tensors is accepted too.
  %coefs = tensor.from_elements %coef : tensor<f32>
  %cb = linalg.broadcast ins(%coefs : tensor<f32>) outs(%e2 : tensor<4x3xf32>) dimensions = [0, 1]
  %gc2 = arith.mulf %g2, %cb : tensor<4x3xf32>
  %mus = linalg.fill ins(%mu : f32) outs(%e2 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %mm2 = arith.mulf %m2, %mus : tensor<4x3xf32>
  %nm2 = arith.addf %mm2, %gc2 : tensor<4x3xf32>
  %lrs = linalg.fill ins(%lr : f32) outs(%e2 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %st2 = arith.mulf %lrs, %nm2 : tensor<4x3xf32>
  %nw2 = arith.subf %w2, %st2 : tensor<4x3xf32>
  return %nw1, %nw2, %nm1, %nm2 : tensor<2x4xf32>, tensor<4x3xf32>, tensor<2x4xf32>, tensor<4x3xf32>
}
