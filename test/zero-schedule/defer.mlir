// RUN: zero-opt %s -split-input-file --zero-schedule=bucket-bytes=0 | FileCheck %s
// RUN: zero-opt %s -split-input-file --zero-schedule="defer-gathers=false bucket-bytes=0" | FileCheck %s --check-prefix=OFF
// RUN: zero-gen gpt --preset gpt-tiny --layers 2 | zero-opt --zero-partition="stage=2 world-size=2" --zero-schedule | FileCheck %s --check-prefix=GEN
// RUN: zero-gen gpt --preset gpt-tiny --layers 2 | zero-opt --zero-partition="stage=2 world-size=2" --zero-schedule --zero-bufferize-step --zero-step-abi | FileCheck %s --check-prefix=ABI

// defer-gathers: stage 2's all-gathers of the updated parameters move from
// the end of the step to the start of the next one. The step takes and
// returns each parameter's shard (zero.sharded) and gathers the parameter
// before its first use, where the prefetch hides it behind the forward
// pass.

shard.grid @zero_grid(shape = 2)

// w (2x3, shard 3): gathered into its argument at the end. b (3, padded to
// 4, shard 2): gathered, then its padding sliced off. The optimizer's read
// of this rank's slice of w becomes the shard itself; b's goes through the
// padding, so it stays a slice of the gathered parameter.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %arg0: tensor<3xf32> {zero.param = "w", zero.sharded}
// CHECK-SAME: %arg1: tensor<2xf32> {zero.param = "b", zero.sharded}
// CHECK-SAME: -> (tensor<4x3xf32> {zero.loss}, tensor<3xf32> {zero.param = "w", zero.sharded}, tensor<2xf32> {zero.param = "b", zero.sharded})
// CHECK-DAG: %[[WP:.*]], %[[WT:.*]] = zero.all_gather_start %arg0 {zero.category = "params"} : tensor<3xf32> -> tensor<6xf32>
// CHECK-DAG: %[[BP:.*]], %[[BT:.*]] = zero.all_gather_start %arg1 {zero.category = "params"} : tensor<2xf32> -> tensor<4xf32>
// CHECK: %[[W:.*]] = zero.wait %[[WT]], %[[WP]] : tensor<6xf32> keep(%arg0 : tensor<3xf32>) -> tensor<6xf32>
// CHECK: %[[WE:.*]] = tensor.expand_shape %[[W]] {{\[}}[0, 1]] output_shape [2, 3]
// CHECK: linalg.matmul ins(%{{.*}}, %[[WE]] :
// CHECK: %[[B:.*]] = zero.wait %[[BT]], %[[BP]]
// CHECK: %[[BS:.*]] = tensor.extract_slice %[[B]][0] [3] [1]
// CHECK: linalg.broadcast ins(%[[BS]] :
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[NEWW:.*]] = arith.addf %arg0, %arg0 : tensor<3xf32>
// CHECK: tensor.pad %[[BS]]
// CHECK: %[[NEWB:.*]] = arith.addf
// CHECK-NOT: all_gather
// CHECK: return %{{.*}}, %[[NEWW]], %[[NEWB]] : tensor<4x3xf32>, tensor<3xf32>, tensor<2xf32>
// OFF-LABEL: func.func @train_step
// OFF-SAME: %arg0: tensor<2x3xf32> {zero.param = "w"}
// OFF: zero.all_gather_start %{{.*}} : tensor<3xf32> -> tensor<6xf32>
// OFF: bufferization.materialize_in_destination
func.func @train_step(%w: tensor<2x3xf32> {zero.param = "w"},
                      %b: tensor<3xf32> {zero.param = "b"},
                      %x: tensor<4x2xf32> {zero.batch = "x"})
    -> (tensor<4x3xf32> {zero.loss}, tensor<2x3xf32> {zero.param = "w"},
        tensor<3xf32> {zero.param = "b"})
    attributes {zero.role = "train_step"} {
  %idx = shard.process_linear_index on @zero_grid : index
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x2xf32>, tensor<2x3xf32>)
      outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %e2 = tensor.empty() : tensor<4x3xf32>
  %bc = linalg.broadcast ins(%b : tensor<3xf32>) outs(%e2 : tensor<4x3xf32>)
      dimensions = [0]
  %z = linalg.add ins(%y, %bc : tensor<4x3xf32>, tensor<4x3xf32>)
      outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  // The optimizer: this rank's slices, updated, gathered.
  %flat = tensor.collapse_shape %w [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %c3 = arith.constant 3 : index
  %off = arith.muli %idx, %c3 : index
  %mine = tensor.extract_slice %flat[%off] [3] [1] : tensor<6xf32> to tensor<3xf32>
  %neww = arith.addf %mine, %mine : tensor<3xf32>
  %g = shard.all_gather %neww on @zero_grid grid_axes = [0] gather_axis = 0
      {zero.category = "params"} : tensor<3xf32> -> tensor<6xf32>
  %w2 = tensor.expand_shape %g [[0, 1]] output_shape [2, 3]
      : tensor<6xf32> into tensor<2x3xf32>
  %wout = bufferization.materialize_in_destination %w2 in %w
      : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %bp = tensor.pad %b low[0] high[1] {
  ^bb0(%i: index):
    tensor.yield %cst : f32
  } : tensor<3xf32> to tensor<4xf32>
  %c2 = arith.constant 2 : index
  %offb = arith.muli %idx, %c2 : index
  %bm = tensor.extract_slice %bp[%offb] [2] [1] : tensor<4xf32> to tensor<2xf32>
  %newb = arith.addf %bm, %bm : tensor<2xf32>
  %gb = shard.all_gather %newb on @zero_grid grid_axes = [0] gather_axis = 0
      {zero.category = "params"} : tensor<2xf32> -> tensor<4xf32>
  %bs = tensor.extract_slice %gb[0] [3] [1] : tensor<4xf32> to tensor<3xf32>
  return %z, %wout, %bs : tensor<4x3xf32>, tensor<2x3xf32>, tensor<3xf32>
}

// -----

shard.grid @zero_grid(shape = 2)

// Left alone: a result that is not a gather of a shard (stage 0 returns
// the updated parameter itself), and a gathered result without an
// argument of the same parameter.
// CHECK-LABEL: func.func @left
// CHECK-SAME: %arg0: tensor<4xf32> {zero.param = "p"}
// CHECK-SAME: -> (tensor<4xf32> {zero.param = "p"}, tensor<4xf32> {zero.param = "q"})
// CHECK-NOT: zero.sharded
func.func @left(%p: tensor<4xf32> {zero.param = "p"}, %s: tensor<2xf32>)
    -> (tensor<4xf32> {zero.param = "p"}, tensor<4xf32> {zero.param = "q"}) {
  %n = arith.addf %p, %p : tensor<4xf32>
  %g = shard.all_gather %s on @zero_grid grid_axes = [0] gather_axis = 0
      : tensor<2xf32> -> tensor<4xf32>
  return %n, %g : tensor<4xf32>, tensor<4xf32>
}

// zero-gen's GPT at stage 2: every parameter is taken and returned as its
// shard; the step gathers each one (and none at its end).
// GEN-LABEL: func.func @train_step
// GEN-SAME: zero.param = "wte", zero.sharded
// GEN-NOT: zero.param = "{{[^"]*}}"}
// GEN: zero.all_gather_start %{{.*}} {zero.category = "params"}
// GEN: return

// The step ABI marks the parameters sharded, so the driver gives each rank
// its shard.
// ABI: zero.step_abi
// ABI-SAME: {category = "params", dtype = "f32", index = 0 : i64, name = "wte", role = "param", shape = array<i64: {{[0-9]+}}>, sharded = true}
