func.func @fb(%w: tensor<4611686018427387904xf32> {zero.param = "w"}, %x: tensor<2x2xf32> {zero.batch = "input"}, %y: tensor<2x2xf32> {zero.batch = "target"})
    -> (tensor<f32> {zero.loss}, tensor<4611686018427387904xf32> {zero.grad = "w"}) attributes {zero.role = "forward_backward"} {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c, %w : tensor<f32>, tensor<4611686018427387904xf32>
}
func.func @opt(%w: tensor<4611686018427387904xf32> {zero.param = "w"}, %g: tensor<4611686018427387904xf32> {zero.grad = "w"})
    -> (tensor<4611686018427387904xf32> {zero.param = "w"}) attributes {zero.role = "optimizer"} {
  return %w : tensor<4611686018427387904xf32>
}
