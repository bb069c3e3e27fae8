// RUN: zero-opt %s | zero-opt | FileCheck %s
// Started collectives and waits print and parse back, in both forms.

// CHECK-LABEL: func.func @tensors
func.func @tensors(%a: tensor<64xf32>, %g: tensor<128xf64>, %m: tensor<4x8xf32>)
    -> (tensor<128xf32>, tensor<64xf64>, tensor<4x8xf32>) {
  // CHECK: %[[P:.*]], %[[T:.*]] = zero.all_gather_start %{{.*}} {zero.category = "params"} : tensor<64xf32> -> tensor<128xf32>
  %p, %t = zero.all_gather_start %a {zero.category = "params"} : tensor<64xf32> -> tensor<128xf32>
  // CHECK: zero.reduce_scatter_start %{{.*}} : tensor<128xf64> -> tensor<64xf64>
  %p2, %t2 = zero.reduce_scatter_start %g : tensor<128xf64> -> tensor<64xf64>
  // CHECK: zero.all_reduce_start %{{.*}} : tensor<4x8xf32> -> tensor<4x8xf32>
  %p3, %t3 = zero.all_reduce_start %m : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: zero.wait %[[T]], %[[P]] : tensor<128xf32> keep(%{{.*}} : tensor<64xf32>) -> tensor<128xf32>
  %r = zero.wait %t, %p : tensor<128xf32> keep(%a : tensor<64xf32>) -> tensor<128xf32>
  %r2 = zero.wait %t2, %p2 : tensor<64xf64> keep(%g : tensor<128xf64>) -> tensor<64xf64>
  // CHECK: zero.wait %{{.*}}, %{{.*}} : tensor<4x8xf32> -> tensor<4x8xf32>
  %r3 = zero.wait %t3, %p3 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %r, %r2, %r3 : tensor<128xf32>, tensor<64xf64>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @memrefs
func.func @memrefs(%in: memref<64xf32>, %out: memref<128xf32>,
                   %sub: memref<64xf32, strided<[1], offset: 64>>) {
  // CHECK: %[[T:.*]] = zero.all_gather_start %{{.*}} into %{{.*}} : memref<64xf32> into memref<128xf32>
  %t = zero.all_gather_start %in into %out : memref<64xf32> into memref<128xf32>
  // CHECK: zero.wait %[[T]] keep(%{{.*}}, %{{.*}} : memref<64xf32>, memref<128xf32>)
  zero.wait %t keep(%in, %out : memref<64xf32>, memref<128xf32>)
  // A contiguous view with an offset is a valid buffer; in place is allowed.
  // CHECK: zero.all_reduce_start %{{.*}} into %{{.*}} : memref<64xf32, strided<[1], offset: 64>> into memref<64xf32, strided<[1], offset: 64>>
  %t2 = zero.all_reduce_start %sub into %sub : memref<64xf32, strided<[1], offset: 64>> into memref<64xf32, strided<[1], offset: 64>>
  zero.wait %t2
  return
}

// The NVMe tier's transfers, on tensors and on memrefs.
// CHECK-LABEL: func.func @transfers
// CHECK-SAME: %[[E:.*]]: !zero.extent<tensor<2x3xf32>>
// CHECK: %[[P:.*]], %[[T:.*]] = zero.read_start %[[E]] {zero.category = "optimizer_states"} : <tensor<2x3xf32>> -> tensor<2x3xf32>
// CHECK: %[[V:.*]] = zero.wait %[[T]], %[[P]] : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK: %[[W:.*]] = zero.write_start %[[V]] to %[[E]] : tensor<2x3xf32> to <tensor<2x3xf32>>
// CHECK: zero.wait %[[W]] keep(%[[V]] : tensor<2x3xf32>)
// CHECK: %[[R:.*]] = zero.read_start %[[E]] into %{{.*}} : <tensor<2x3xf32>> into memref<2x3xf32>
// CHECK: zero.wait %[[R]] keep(%{{.*}} : memref<2x3xf32>)
// CHECK: zero.write_start %{{.*}} to %[[E]] : memref<2x3xf32> to <tensor<2x3xf32>>
func.func @transfers(%e: !zero.extent<tensor<2x3xf32>>, %buf: memref<2x3xf32>) -> tensor<2x3xf32> {
  %p, %t = zero.read_start %e {zero.category = "optimizer_states"} : !zero.extent<tensor<2x3xf32>> -> tensor<2x3xf32>
  %v = zero.wait %t, %p : tensor<2x3xf32> -> tensor<2x3xf32>
  %w = zero.write_start %v to %e : tensor<2x3xf32> to !zero.extent<tensor<2x3xf32>>
  zero.wait %w keep(%v : tensor<2x3xf32>)
  %r = zero.read_start %e into %buf : !zero.extent<tensor<2x3xf32>> into memref<2x3xf32>
  zero.wait %r keep(%buf : memref<2x3xf32>)
  %u = zero.write_start %buf to %e : memref<2x3xf32> to !zero.extent<tensor<2x3xf32>>
  zero.wait %u keep(%buf : memref<2x3xf32>)
  return %v : tensor<2x3xf32>
}

// The collectives on buffers (what bufferization makes of shard's) and the
// communication arena.
// CHECK-LABEL: func.func @blocking
func.func @blocking(%s: memref<4xf32>, %f: memref<8xf32>, %l: memref<f64>) {
  // CHECK: zero.all_gather %{{.*}} into %{{.*}} : memref<4xf32> into memref<8xf32>
  zero.all_gather %s into %f : memref<4xf32> into memref<8xf32>
  // CHECK: zero.reduce_scatter %{{.*}} into %{{.*}} {zero.category = "grads"} : memref<8xf32> into memref<4xf32>
  zero.reduce_scatter %f into %s {zero.category = "grads"} : memref<8xf32> into memref<4xf32>
  // CHECK: zero.comm_reserve 64
  zero.comm_reserve 64
  // CHECK: zero.all_reduce %{{.*}} into %{{.*}} reduction = {{ *}}max : memref<f64> into memref<f64>
  zero.all_reduce %l into %l reduction = max : memref<f64> into memref<f64>
  // CHECK: zero.all_reduce %{{.*}} into %{{.*}} : memref<4xf32> into memref<4xf32>
  zero.all_reduce %s into %s : memref<4xf32> into memref<4xf32>
  // CHECK: zero.comm_release
  zero.comm_release
  return
}
