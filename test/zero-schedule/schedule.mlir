// RUN: zero-opt %s -split-input-file --zero-schedule | FileCheck %s
// RUN: zero-opt %s -split-input-file --zero-schedule=prefetch=false | FileCheck %s --check-prefix=NOPREFETCH
// The rules of zero-schedule, one case each, on hand-written steps.

shard.grid @g(shape = 2)

// An all-gather becomes a start and a wait; the wait sits right before the
// first use; the start moves above the matmul before it, whose predicted
// time (33.5 MFLOP at 100 GFLOP/s) hides the gather (20 us + 256 bytes at
// 10 GB/s). Without prefetch it stays where the blocking gather was.
// CHECK-LABEL: func.func @prefetch
// CHECK: %[[P:.*]], %[[T:.*]] = zero.all_gather_start %arg0 {zero.category = "params"} : tensor<64xf32> -> tensor<128xf32>
// CHECK: linalg.matmul ins(%arg1, %arg2
// CHECK: %[[W:.*]] = zero.wait %[[T]], %[[P]] : tensor<128xf32> keep(%arg0 : tensor<64xf32>) -> tensor<128xf32>
// CHECK-NEXT: tensor.expand_shape %[[W]]
// NOPREFETCH-LABEL: func.func @prefetch
// NOPREFETCH: linalg.matmul ins(%arg1, %arg2
// NOPREFETCH: zero.all_gather_start
// NOPREFETCH-NEXT: zero.wait
func.func @prefetch(%w: tensor<64xf32>, %x: tensor<256x256xf32>,
                    %y: tensor<256x256xf32>, %b: tensor<16x8xf32>)
    -> (tensor<256x256xf32>, tensor<16x16xf32>) {
  %e = tensor.empty() : tensor<256x256xf32>
  %m = linalg.matmul ins(%x, %y : tensor<256x256xf32>, tensor<256x256xf32>)
      outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %g = shard.all_gather %w on @g grid_axes = [0] gather_axis = 0
      {zero.category = "params"} : tensor<64xf32> -> tensor<128xf32>
  %r = tensor.expand_shape %g [[0, 1]] output_shape [8, 16]
      : tensor<128xf32> into tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<16x16xf32>
  %o = linalg.matmul ins(%b, %r : tensor<16x8xf32>, tensor<8x16xf32>)
      outs(%e2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %m, %o : tensor<256x256xf32>, tensor<16x16xf32>
}

// -----

shard.grid @g(shape = 2)

// A reduce-scatter starts right after its input exists; its pure consumer
// (the averaging) moves down to just before what needs it, so the wait can
// sit behind the matmul that hides the collective.
// CHECK-LABEL: func.func @reduce_scatter
// CHECK: %[[C:.*]] = tensor.collapse_shape
// CHECK-NEXT: %[[P:.*]], %[[T:.*]] = zero.reduce_scatter_start %[[C]] {zero.category = "grads"}
// CHECK: linalg.matmul ins(%arg2, %arg3
// CHECK: %[[W:.*]] = zero.wait %[[T]], %[[P]] : tensor<32768xf32> keep(%[[C]] : tensor<65536xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[W]]
func.func @reduce_scatter(%x: tensor<256x256xf32>, %y: tensor<256x256xf32>,
                          %u: tensor<256x256xf32>, %v: tensor<256x256xf32>)
    -> (tensor<32768xf32>, tensor<256x256xf32>) {
  %e = tensor.empty() : tensor<256x256xf32>
  %grad = linalg.matmul ins(%x, %y : tensor<256x256xf32>, tensor<256x256xf32>)
      outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %c = tensor.collapse_shape %grad [[0, 1]]
      : tensor<256x256xf32> into tensor<65536xf32>
  %rs = shard.reduce_scatter %c on @g grid_axes = [0] scatter_axis = 0
      {zero.category = "grads"} : tensor<65536xf32> -> tensor<32768xf32>
  %avg = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>],
                         iterator_types = ["parallel"]}
      outs(%rs : tensor<32768xf32>) {
  ^bb0(%out: f32):
    %half = arith.constant 5.000000e-01 : f32
    %s = arith.mulf %out, %half : f32
    linalg.yield %s : f32
  } -> tensor<32768xf32>
  %e2 = tensor.empty() : tensor<256x256xf32>
  %m = linalg.matmul ins(%u, %v : tensor<256x256xf32>, tensor<256x256xf32>)
      outs(%e2 : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %avg, %m : tensor<32768xf32>, tensor<256x256xf32>
}

// -----

shard.grid @g(shape = 2)

// A second gather of the same shard (stage 3's regather in the backward
// pass) never starts before the wait of the first: the first buffer is
// released so that the second can be gathered, and both would be held.
// CHECK-LABEL: func.func @regather
// CHECK: zero.all_gather_start %arg0
// CHECK-NEXT: zero.wait
// CHECK: linalg.matmul ins(%arg2
// CHECK: zero.all_gather_start %arg0
// CHECK-NEXT: linalg.matmul ins(%arg1
// CHECK-NEXT: zero.wait
func.func @regather(%w: tensor<64xf32>, %x: tensor<256x256xf32>,
                    %b: tensor<16x8xf32>)
    -> (tensor<16x16xf32>, tensor<256x256xf32>, tensor<16x16xf32>) {
  %g = shard.all_gather %w on @g grid_axes = [0] gather_axis = 0
      : tensor<64xf32> -> tensor<128xf32>
  %r = tensor.expand_shape %g [[0, 1]] output_shape [8, 16]
      : tensor<128xf32> into tensor<8x16xf32>
  %e = tensor.empty() : tensor<16x16xf32>
  %o = linalg.matmul ins(%b, %r : tensor<16x8xf32>, tensor<8x16xf32>)
      outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %e1 = tensor.empty() : tensor<256x256xf32>
  %m = linalg.matmul ins(%x, %x : tensor<256x256xf32>, tensor<256x256xf32>)
      outs(%e1 : tensor<256x256xf32>) -> tensor<256x256xf32>
  %g2 = shard.all_gather %w on @g grid_axes = [0] gather_axis = 0
      : tensor<64xf32> -> tensor<128xf32>
  %r2 = tensor.expand_shape %g2 [[0, 1]] output_shape [8, 16]
      : tensor<128xf32> into tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<16x16xf32>
  %o2 = linalg.matmul ins(%b, %r2 : tensor<16x8xf32>, tensor<8x16xf32>)
      outs(%e2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %o, %m, %o2 : tensor<16x16xf32>, tensor<256x256xf32>, tensor<16x16xf32>
}

// -----

shard.grid @g(shape = 2)

// A gather never starts before its input exists.
// CHECK-LABEL: func.func @input_first
// CHECK: %[[IN:.*]] = linalg.matmul ins(%arg1
// CHECK: tensor.collapse_shape %[[IN]]
// CHECK-NEXT: zero.all_gather_start
func.func @input_first(%w: tensor<64xf32>, %x: tensor<256x256xf32>)
    -> tensor<131072xf32> {
  %e = tensor.empty() : tensor<256x256xf32>
  %m = linalg.matmul ins(%x, %x : tensor<256x256xf32>, tensor<256x256xf32>)
      outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %c = tensor.collapse_shape %m [[0, 1]]
      : tensor<256x256xf32> into tensor<65536xf32>
  %g = shard.all_gather %c on @g grid_axes = [0] gather_axis = 0
      : tensor<65536xf32> -> tensor<131072xf32>
  return %g : tensor<131072xf32>
}

// -----

shard.grid @g(shape = 4)

// Vector sum all-reduces (stage 0's gradients) are started too, and so is a
// scalar one (the loss), as a vector of one element, right after its input;
// max reductions stay blocking. A blocking collective runs after the
// started ones on the one link, so the model has the started all-reduce
// done by the time the max all-reduce returns: the wait goes there. The
// loss waits at its first use, the return.
// CHECK-LABEL: func.func @all_reduce
// CHECK: %[[E:.*]] = tensor.expand_shape %arg1 [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: %[[LP:.*]], %[[LT:.*]] = zero.all_reduce_start %[[E]] : tensor<1xf32> -> tensor<1xf32>
// CHECK: zero.all_reduce_start %arg0 : tensor<1000xf32> -> tensor<1000xf32>
// CHECK-NOT: shard.all_reduce {{.*}} : tensor<f32>
// CHECK: shard.all_reduce %arg0 {{.*}} reduction = max
// CHECK: zero.wait %{{.*}}, %{{.*}} : tensor<1000xf32> -> tensor<1000xf32>
// CHECK: %[[L:.*]] = zero.wait %[[LT]], %[[LP]] : tensor<1xf32> -> tensor<1xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[L]] [] : tensor<1xf32> into tensor<f32>
// CHECK: return %{{.*}}, %[[C]], %
func.func @all_reduce(%g: tensor<1000xf32>, %loss: tensor<f32>)
    -> (tensor<1000xf32>, tensor<f32>, tensor<1000xf32>) {
  %a = shard.all_reduce %g on @g grid_axes = [0] : tensor<1000xf32> -> tensor<1000xf32>
  %l = shard.all_reduce %loss on @g grid_axes = [0] : tensor<f32> -> tensor<f32>
  %m = shard.all_reduce %g on @g grid_axes = [0] reduction = max : tensor<1000xf32> -> tensor<1000xf32>
  return %a, %l, %m : tensor<1000xf32>, tensor<f32>, tensor<1000xf32>
}

// -----

shard.grid @g(shape = 2)

// A reduction's cheap producers move up with its start: zero-partition
// builds the loss tensor with tensor.from_elements where it reduces it, at
// the end; the start goes right after the scalar is computed, ahead of the
// matmul, so the loss is on the link while the step computes.
// CHECK-LABEL: func.func @loss_early
// CHECK: %[[S:.*]] = arith.addf %arg1, %arg1 : f32
// CHECK-NEXT: %[[T:.*]] = tensor.from_elements %[[S]] : tensor<f32>
// CHECK-NEXT: %[[E:.*]] = tensor.expand_shape %[[T]]
// CHECK-NEXT: zero.all_reduce_start %[[E]]
// CHECK: linalg.matmul
// CHECK: zero.wait
func.func @loss_early(%x: tensor<256x256xf32>, %s: f32)
    -> (tensor<256x256xf32>, tensor<f32>) {
  %sum = arith.addf %s, %s : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %m = linalg.matmul ins(%x, %x : tensor<256x256xf32>, tensor<256x256xf32>)
      outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %t = tensor.from_elements %sum : tensor<f32>
  %l = shard.all_reduce %t on @g grid_axes = [0] : tensor<f32> -> tensor<f32>
  return %m, %l : tensor<256x256xf32>, tensor<f32>
}

// -----

shard.grid @g(shape = 2)

// Gathers that start together go on the link in the order they are
// needed, also when an op that takes no time (a constant) sits between
// their starts: the gather of the concatenation (a bucket), needed first,
// starts first, although its concatenation came after the other gather.
// CHECK-LABEL: func.func @need_order
// CHECK: %[[CAT:.*]] = tensor.concat
// CHECK: zero.all_gather_start %[[CAT]]
// CHECK: zero.all_gather_start %arg0
func.func @need_order(%a: tensor<65536xf32>, %b: tensor<32xf32>,
                      %b2: tensor<32xf32>, %x: tensor<256x256xf32>)
    -> (tensor<131072xf32>, tensor<128xf32>, tensor<256x256xf32>) {
  %ga = shard.all_gather %a on @g grid_axes = [0] gather_axis = 0
      : tensor<65536xf32> -> tensor<131072xf32>
  %c = arith.constant 1.0 : f32
  %cat = tensor.concat dim(0) %b, %b2 : (tensor<32xf32>, tensor<32xf32>) -> tensor<64xf32>
  %gb = shard.all_gather %cat on @g grid_axes = [0] gather_axis = 0
      : tensor<64xf32> -> tensor<128xf32>
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %m = linalg.matmul ins(%x, %x : tensor<256x256xf32>, tensor<256x256xf32>)
      outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  %g1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%gb : tensor<128xf32>) {
  ^bb0(%o: f32):
    linalg.yield %o : f32
  } -> tensor<128xf32>
  %m2 = linalg.matmul ins(%m, %x : tensor<256x256xf32>, tensor<256x256xf32>)
      outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %ga, %g1, %m2 : tensor<131072xf32>, tensor<128xf32>, tensor<256x256xf32>
}
