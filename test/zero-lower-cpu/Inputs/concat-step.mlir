// A training step whose backward pass joins the two column halves of the
// gradient with tensor.concat along dim 1: y = x .* w, loss = mean((y - t)^2).
// Used by ../concat.mlir and integration_tests/zero-run/concat.test.
#map = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> ()>
func.func @forward_backward(%w: tensor<2x4xf32> {zero.param = "w"},
                            %x: tensor<2x4xf32> {zero.batch = "input"},
                            %t: tensor<2x4xf32> {zero.batch = "target"})
    -> (tensor<f32> {zero.loss}, tensor<2x4xf32> {zero.grad = "w"})
    attributes {zero.role = "forward_backward"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  // r = x * w - t
  %r = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x, %w, %t : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %d = arith.subf %m, %c : f32
    linalg.yield %d : f32
  } -> tensor<2x4xf32>
  %l0 = tensor.empty() : tensor<f32>
  %l1 = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#map, #red], iterator_types = ["reduction", "reduction"]}
      ins(%r : tensor<2x4xf32>) outs(%l1 : tensor<f32>) {
  ^bb0(%d: f32, %acc: f32):
    %sq = arith.mulf %d, %d : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%sum : tensor<f32>) outs(%l0 : tensor<f32>) {
  ^bb0(%s: f32, %o: f32):
    %inv = arith.constant 0.125 : f32
    %m = arith.mulf %s, %inv : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  // dw = 2 r x / 8, per column half, then joined along dim 1.
  %rl = tensor.extract_slice %r[0, 0] [2, 2] [1, 1] : tensor<2x4xf32> to tensor<2x2xf32>
  %rh = tensor.extract_slice %r[0, 2] [2, 2] [1, 1] : tensor<2x4xf32> to tensor<2x2xf32>
  %xl = tensor.extract_slice %x[0, 0] [2, 2] [1, 1] : tensor<2x4xf32> to tensor<2x2xf32>
  %xh = tensor.extract_slice %x[0, 2] [2, 2] [1, 1] : tensor<2x4xf32> to tensor<2x2xf32>
  %e2 = tensor.empty() : tensor<2x2xf32>
  %gl = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%rl, %xl : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e2 : tensor<2x2xf32>) {
  ^bb0(%d: f32, %a: f32, %o: f32):
    %q = arith.constant 0.25 : f32
    %m = arith.mulf %d, %a : f32
    %g = arith.mulf %m, %q : f32
    linalg.yield %g : f32
  } -> tensor<2x2xf32>
  %gh = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%rh, %xh : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e2 : tensor<2x2xf32>) {
  ^bb0(%d: f32, %a: f32, %o: f32):
    %q = arith.constant 0.25 : f32
    %m = arith.mulf %d, %a : f32
    %g = arith.mulf %m, %q : f32
    linalg.yield %g : f32
  } -> tensor<2x2xf32>
  %gw = tensor.concat dim(1) %gl, %gh : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  return %loss, %gw : tensor<f32>, tensor<2x4xf32>
}
func.func @optimizer(%w: tensor<2x4xf32> {zero.param = "w"}, %g: tensor<2x4xf32> {zero.grad = "w"},
                     %lr: f32 {zero.hyper = "lr"})
    -> (tensor<2x4xf32> {zero.param = "w"})
    attributes {zero.role = "optimizer"} {
  %n = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%w, %g : tensor<2x4xf32>, tensor<2x4xf32>) outs(%w : tensor<2x4xf32>) {
  ^bb0(%p: f32, %d: f32, %o: f32):
    %st = arith.mulf %lr, %d : f32
    %r = arith.subf %p, %st : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  return %n : tensor<2x4xf32>
}
