// RUN: not zero-opt %s --zero-offload="optimizer=disk" 2>&1 | FileCheck %s --check-prefix=ENUM
// RUN: not zero-opt %s --zero-offload="optimizer=nvme read-ahead=0" 2>&1 | FileCheck %s --check-prefix=AHEAD
// RUN: zero-opt %s --zero-partition --zero-offload="optimizer=nvme" --zero-schedule -split-input-file -verify-diagnostics -o /dev/null
// An unknown placement is refused while the options are parsed, and so is a
// read that would start after its use; zero-schedule refuses an offloaded
// step. (optimizer=host with params=nvme: host-nvme.mlir.)
// ENUM: for the --optimizer option: Cannot find option named 'disk'!
// AHEAD: error: zero-offload read-ahead=0: a use's read must start before it (read-ahead is at least 1)

// The read of the state is located at the argument it reads.
// expected-error@+1 {{'zero.read_start' op is zero-offload's, and zero-schedule runs before zero-offload: schedule the step first, then offload it}}
func.func @forward_backward(%w: tensor<4xf32> {zero.param = "w"}, %x: tensor<4xf32> {zero.batch = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"}) attributes {zero.role = "forward_backward"} {
  %e = tensor.empty() : tensor<f32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %l = linalg.dot ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%f : tensor<f32>) -> tensor<f32>
  return %l, %x : tensor<f32>, tensor<4xf32>
}
func.func @optimizer(%w: tensor<4xf32> {zero.param = "w"}, %g: tensor<4xf32> {zero.grad = "w"},
                     %m: tensor<4xf32> {zero.state = {kind = "momentum", param = "w"}})
    -> (tensor<4xf32> {zero.param = "w"}, tensor<4xf32> {zero.state = {kind = "momentum", param = "w"}})
    attributes {zero.role = "optimizer"} {
  %e = tensor.empty() : tensor<4xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%w, %g, %m : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e, %e : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32, %p: f32):
    %n = arith.addf %c, %b : f32
    %s = arith.subf %a, %n : f32
    linalg.yield %s, %n : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
