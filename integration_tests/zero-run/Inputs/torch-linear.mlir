// torch-mlir shape (its FX importer writes Linear this way): nn.Linear (weight out x in), y = x W^T + b, MSE loss;
// backward dW = dy^T x, dx unused, db = sum(dy); SGD.
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @fb(%w: tensor<3x5xf64> {zero.param = "fc.weight"}, %b: tensor<3xf64> {zero.param = "fc.bias"},
              %x: tensor<4x5xf64> {zero.batch = "input"}, %t: tensor<4x3xf64> {zero.batch = "target"})
    -> (tensor<f64> {zero.loss}, tensor<3x5xf64> {zero.grad = "fc.weight"}, tensor<3xf64> {zero.grad = "fc.bias"})
    attributes {zero.role = "forward_backward"} {
  %c0 = arith.constant 0.0 : f64
  %e53 = tensor.empty() : tensor<5x3xf64>
  %wt = linalg.transpose ins(%w : tensor<3x5xf64>) outs(%e53 : tensor<5x3xf64>) permutation = [1, 0]
  %e43 = tensor.empty() : tensor<4x3xf64>
  %z43 = linalg.fill ins(%c0 : f64) outs(%e43 : tensor<4x3xf64>) -> tensor<4x3xf64>
  %mm = linalg.matmul ins(%x, %wt : tensor<4x5xf64>, tensor<5x3xf64>) outs(%z43 : tensor<4x3xf64>) -> tensor<4x3xf64>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<4x3xf64>, tensor<3xf64>) outs(%e43 : tensor<4x3xf64>) {
  ^bb0(%a: f64, %bb: f64, %o: f64):
    %s = arith.addf %a, %bb : f64
    linalg.yield %s : f64
  } -> tensor<4x3xf64>
  %d = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y, %t : tensor<4x3xf64>, tensor<4x3xf64>) outs(%e43 : tensor<4x3xf64>) {
  ^bb0(%a: f64, %bb: f64, %o: f64):
    %s = arith.subf %a, %bb : f64
    linalg.yield %s : f64
  } -> tensor<4x3xf64>
  %l0 = tensor.empty() : tensor<f64>
  %l1 = linalg.fill ins(%c0 : f64) outs(%l0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id2, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%d : tensor<4x3xf64>) outs(%l1 : tensor<f64>) {
  ^bb0(%a: f64, %o: f64):
    %q = arith.mulf %a, %a : f64
    %s = arith.addf %o, %q : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  // dy = 2 d
  %dy = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<4x3xf64>) outs(%e43 : tensor<4x3xf64>) {
  ^bb0(%a: f64, %o: f64):
    %s = arith.addf %a, %a : f64
    linalg.yield %s : f64
  } -> tensor<4x3xf64>
  %e34 = tensor.empty() : tensor<3x4xf64>
  %dyt = linalg.transpose ins(%dy : tensor<4x3xf64>) outs(%e34 : tensor<3x4xf64>) permutation = [1, 0]
  %e35 = tensor.empty() : tensor<3x5xf64>
  %z35 = linalg.fill ins(%c0 : f64) outs(%e35 : tensor<3x5xf64>) -> tensor<3x5xf64>
  %dw = linalg.matmul ins(%dyt, %x : tensor<3x4xf64>, tensor<4x5xf64>) outs(%z35 : tensor<3x5xf64>) -> tensor<3x5xf64>
  %e3 = tensor.empty() : tensor<3xf64>
  %z3 = linalg.fill ins(%c0 : f64) outs(%e3 : tensor<3xf64>) -> tensor<3xf64>
  %db = linalg.reduce ins(%dy : tensor<4x3xf64>) outs(%z3 : tensor<3xf64>) dimensions = [0]
    (%a: f64, %o: f64) { %s = arith.addf %a, %o : f64
                         linalg.yield %s : f64 }
  return %loss, %dw, %db : tensor<f64>, tensor<3x5xf64>, tensor<3xf64>
}
func.func @opt(%w: tensor<3x5xf64> {zero.param = "fc.weight"}, %b: tensor<3xf64> {zero.param = "fc.bias"},
               %gw: tensor<3x5xf64> {zero.grad = "fc.weight"}, %gb: tensor<3xf64> {zero.grad = "fc.bias"},
               %lr: f64 {zero.hyper = "lr"})
    -> (tensor<3x5xf64> {zero.param = "fc.weight"}, tensor<3xf64> {zero.param = "fc.bias"})
    attributes {zero.role = "optimizer"} {
  %nw = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w, %gw : tensor<3x5xf64>, tensor<3x5xf64>) outs(%w : tensor<3x5xf64>) {
  ^bb0(%a: f64, %g: f64, %o: f64):
    %s = arith.mulf %lr, %g : f64
    %n = arith.subf %a, %s : f64
    linalg.yield %n : f64
  } -> tensor<3x5xf64>
  %nb = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%b, %gb : tensor<3xf64>, tensor<3xf64>) outs(%b : tensor<3xf64>) {
  ^bb0(%a: f64, %g: f64, %o: f64):
    %s = arith.mulf %lr, %g : f64
    %n = arith.subf %a, %s : f64
    linalg.yield %n : f64
  } -> tensor<3xf64>
  return %nw, %nb : tensor<3x5xf64>, tensor<3xf64>
}
