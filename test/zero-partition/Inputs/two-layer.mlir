// A hand-written two-layer linear model, loss = mean((x w1 w2 - t)^2), and
// SGD with momentum after global gradient-norm clipping. w1 has 15 elements
// (padding on 2 and 4 ranks), w2 has 10 (padding on 4 ranks only).
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#sc2 = affine_map<(d0, d1) -> ()>
func.func @forward_backward(%w1: tensor<3x5xf32> {zero.param = "w1"},
                            %w2: tensor<5x2xf32> {zero.param = "w2"},
                            %x: tensor<4x3xf32> {zero.batch = "input"},
                            %t: tensor<4x2xf32> {zero.batch = "target"})
    -> (tensor<f32> {zero.loss}, tensor<3x5xf32> {zero.grad = "w1"},
        tensor<5x2xf32> {zero.grad = "w2"})
    attributes {zero.role = "forward_backward"} {
  %zero = arith.constant 0.0 : f32
  %quarter = arith.constant 0.25 : f32
  %eighth = arith.constant 0.125 : f32
  %e45 = tensor.empty() : tensor<4x5xf32>
  %h0 = linalg.fill ins(%zero : f32) outs(%e45 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<4x3xf32>, tensor<3x5xf32>) outs(%h0 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %e42 = tensor.empty() : tensor<4x2xf32>
  %y0 = linalg.fill ins(%zero : f32) outs(%e42 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<4x5xf32>, tensor<5x2xf32>) outs(%y0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %d = linalg.sub ins(%y, %t : tensor<4x2xf32>, tensor<4x2xf32>) outs(%e42 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %l0 = tensor.empty() : tensor<f32>
  %l1 = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %sq = linalg.mul ins(%d, %d : tensor<4x2xf32>, tensor<4x2xf32>) outs(%e42 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %sum = linalg.reduce ins(%sq : tensor<4x2xf32>) outs(%l1 : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) { %s = arith.addf %a, %b : f32
                         linalg.yield %s : f32 }
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%sum : tensor<f32>) outs(%l0 : tensor<f32>) {
    ^bb0(%s: f32, %o: f32):
      %m = arith.mulf %s, %eighth : f32
      linalg.yield %m : f32
  } -> tensor<f32>
  // dL/dy = (y - t) / 4; dw2 = h^T dy; dh = dy w2^T; dw1 = x^T dh.
  %dy = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<4x2xf32>) outs(%e42 : tensor<4x2xf32>) {
    ^bb0(%v: f32, %o: f32):
      %g = arith.mulf %v, %quarter : f32
      linalg.yield %g : f32
  } -> tensor<4x2xf32>
  %e54 = tensor.empty() : tensor<5x4xf32>
  %ht = linalg.transpose ins(%h : tensor<4x5xf32>) outs(%e54 : tensor<5x4xf32>) permutation = [1, 0]
  %e52 = tensor.empty() : tensor<5x2xf32>
  %g20 = linalg.fill ins(%zero : f32) outs(%e52 : tensor<5x2xf32>) -> tensor<5x2xf32>
  %g2 = linalg.matmul ins(%ht, %dy : tensor<5x4xf32>, tensor<4x2xf32>) outs(%g20 : tensor<5x2xf32>) -> tensor<5x2xf32>
  %e25 = tensor.empty() : tensor<2x5xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<5x2xf32>) outs(%e25 : tensor<2x5xf32>) permutation = [1, 0]
  %dh = linalg.matmul ins(%dy, %w2t : tensor<4x2xf32>, tensor<2x5xf32>) outs(%h0 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %e34 = tensor.empty() : tensor<3x4xf32>
  %xt = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e34 : tensor<3x4xf32>) permutation = [1, 0]
  %e35 = tensor.empty() : tensor<3x5xf32>
  %g10 = linalg.fill ins(%zero : f32) outs(%e35 : tensor<3x5xf32>) -> tensor<3x5xf32>
  %g1 = linalg.matmul ins(%xt, %dh : tensor<3x4xf32>, tensor<4x5xf32>) outs(%g10 : tensor<3x5xf32>) -> tensor<3x5xf32>
  return %loss, %g1, %g2 : tensor<f32>, tensor<3x5xf32>, tensor<5x2xf32>
}

func.func @optimizer(%w1: tensor<3x5xf32> {zero.param = "w1"},
                     %w2: tensor<5x2xf32> {zero.param = "w2"},
                     %g1: tensor<3x5xf32> {zero.grad = "w1"},
                     %g2: tensor<5x2xf32> {zero.grad = "w2"},
                     %m1: tensor<3x5xf32> {zero.state = {param = "w1", kind = "momentum"}},
                     %m2: tensor<5x2xf32> {zero.state = {param = "w2", kind = "momentum"}},
                     %lr: f32 {zero.hyper = "lr"},
                     %mu: f32 {zero.hyper = "momentum"},
                     %maxnorm: f32 {zero.hyper = "max_grad_norm"})
    -> (tensor<3x5xf32> {zero.param = "w1"}, tensor<5x2xf32> {zero.param = "w2"},
        tensor<3x5xf32> {zero.state = {param = "w1", kind = "momentum"}},
        tensor<5x2xf32> {zero.state = {param = "w2", kind = "momentum"}})
    attributes {zero.role = "optimizer"} {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %r0 = tensor.empty() : tensor<f32>
  %r = linalg.fill ins(%zero : f32) outs(%r0 : tensor<f32>) -> tensor<f32>
  %s1 = linalg.generic {indexing_maps = [#id2, #sc2], iterator_types = ["reduction", "reduction"]}
      ins(%g1 : tensor<3x5xf32>) outs(%r : tensor<f32>) {
    ^bb0(%g: f32, %acc: f32):
      %gg = arith.mulf %g, %g : f32
      %s = arith.addf %acc, %gg : f32
      linalg.yield %s : f32
  } -> tensor<f32>
  %s2 = linalg.generic {indexing_maps = [#id2, #sc2], iterator_types = ["reduction", "reduction"]}
      ins(%g2 : tensor<5x2xf32>) outs(%r : tensor<f32>) {
    ^bb0(%g: f32, %acc: f32):
      %gg = arith.mulf %g, %g : f32
      %s = arith.addf %acc, %gg : f32
      linalg.yield %s : f32
  } -> tensor<f32>
  %a = tensor.extract %s1[] : tensor<f32>
  %b = tensor.extract %s2[] : tensor<f32>
  %sum = arith.addf %a, %b : f32
  %norm = math.sqrt %sum : f32
  %ratio = arith.divf %maxnorm, %norm : f32
  %coef = arith.minimumf %ratio, %one : f32
  %nw1, %nm1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g1 : tensor<3x5xf32>) outs(%w1, %m1 : tensor<3x5xf32>, tensor<3x5xf32>) {
    ^bb0(%g: f32, %p: f32, %m: f32):
      %gc = arith.mulf %g, %coef : f32
      %mm = arith.mulf %mu, %m : f32
      %mn = arith.addf %mm, %gc : f32
      %st = arith.mulf %lr, %mn : f32
      %pn = arith.subf %p, %st : f32
      linalg.yield %pn, %mn : f32, f32
  } -> (tensor<3x5xf32>, tensor<3x5xf32>)
  %nw2, %nm2 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g2 : tensor<5x2xf32>) outs(%w2, %m2 : tensor<5x2xf32>, tensor<5x2xf32>) {
    ^bb0(%g: f32, %p: f32, %m: f32):
      %gc = arith.mulf %g, %coef : f32
      %mm = arith.mulf %mu, %m : f32
      %mn = arith.addf %mm, %gc : f32
      %st = arith.mulf %lr, %mn : f32
      %pn = arith.subf %p, %st : f32
      linalg.yield %pn, %mn : f32, f32
  } -> (tensor<5x2xf32>, tensor<5x2xf32>)
  return %nw1, %nw2, %nm1, %nm2 : tensor<3x5xf32>, tensor<5x2xf32>, tensor<3x5xf32>, tensor<5x2xf32>
}
