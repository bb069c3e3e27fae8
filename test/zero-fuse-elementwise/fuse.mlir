// RUN: zero-opt %s --zero-fuse-elementwise -split-input-file --mlir-print-local-scope | FileCheck %s
// RUN: zero-gen gpt --preset gpt-tiny | zero-opt --zero-fuse-elementwise | FileCheck %s --check-prefix=GEN

// A chain as frontends write it (torch-mlir: one op per aten op): bias
// broadcast, add, tanh. Each producer has one user, so the chain becomes one
// linalg.generic over the inputs; the matmul before it stays a matmul.
// CHECK-LABEL: func.func @chain
// CHECK:         %[[MM:.*]] = linalg.matmul
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[MM]], %{{.*}} : tensor<4x8xf32>, tensor<8xf32>)
// CHECK:           arith.addf
// CHECK:           math.tanh
// CHECK:           linalg.yield
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     linalg.broadcast
// CHECK-NOT:     linalg.add
// CHECK:         return %[[R]]
func.func @chain(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %bb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e : tensor<4x8xf32>) dimensions = [0]
  %s = linalg.add ins(%mm, %bb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.tanh %in : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// An elementwise producer fuses into a reduction that is its one user
// (the square of a mean-squared error into its sum).
// CHECK-LABEL: func.func @into_reduction
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["reduction"]
// CHECK:           arith.subf
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:           linalg.yield
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @into_reduction(%y: tensor<16xf32>, %t: tensor<16xf32>, %acc: tensor<f32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<16xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%y, %t : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    %q = arith.mulf %s, %s : f32
    linalg.yield %q : f32
  } -> tensor<16xf32>
  %r = linalg.reduce ins(%d : tensor<16xf32>) outs(%acc : tensor<f32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %n = arith.addf %in, %init : f32
      linalg.yield %n : f32
    }
  return %r : tensor<f32>
}

// -----

// Not fused: a producer with a second user (an activation the backward
// pass reads again) is not recomputed, and a transpose feeding a matmul
// stays for zero-fold-transposes and the GEMM.
// CHECK-LABEL: func.func @kept
// CHECK:         %[[G:.*]] = linalg.generic
// CHECK:           math.exp
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[G]]
// CHECK:         linalg.transpose
// CHECK:         linalg.matmul
// CHECK:         return %{{.*}}, %[[G]]
func.func @kept(%x: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.exp %in : f32
    linalg.yield %y : f32
  } -> tensor<4x4xf32>
  %h = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.mulf %in, %in : f32
    linalg.yield %y : f32
  } -> tensor<4x4xf32>
  %xt = linalg.transpose ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  %m = linalg.matmul ins(%xt, %h : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %h, %m, %g : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// zero-gen's GPT keeps every matmul and batch_matmul.
// GEN-LABEL: func.func @forward_backward
// GEN-COUNT-2: linalg.batch_matmul
// GEN:         linalg.matmul
// GEN-LABEL: func.func @optimizer

// -----

// A softmax: the scaled scores %s feed the row maximum and the
// exponentials, the exponentials %x the row sum and the division. Each is
// cheap (a few ops) and has one input the size of its result, so it is
// computed again in every user and never written: the maximum, the sum and
// the division each read the scores %in, and nothing else is the size of
// them.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME:    (%[[IN:.*]]: tensor<4x8xf32>)
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[IN]] : tensor<4x8xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.maximumf
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[IN]], %[[MAX]] : tensor<4x8xf32>, tensor<4xf32>)
// CHECK:           arith.mulf
// CHECK:           math.exp
// CHECK:           arith.addf
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[IN]], %[[MAX]], %[[SUM]] : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK:           arith.mulf
// CHECK:           math.exp
// CHECK:           arith.divf
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[P]]
func.func @softmax(%in: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %scale = arith.constant 0.125 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%in : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = arith.mulf %v, %scale : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %er = tensor.empty() : tensor<4xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4x8xf32>) outs(%mi : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.maximumf %v, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%s, %max : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %si = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%si : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %v, %acc : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %t: f32, %o: f32):
    %y = arith.divf %v, %t : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

// Producers with several users that are computed once: %r rounds to bf16
// (its users would keep the f32 input, twice the bytes, alive instead),
// %t reads two inputs the size of its result (both would live on in
// place of one), %u has a body too long to repeat.
// CHECK-LABEL: func.func @not_recomputed
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK:           arith.truncf
// CHECK:         %[[T:.*]] = linalg.generic
// CHECK:           arith.addf
// CHECK:         %[[U:.*]] = linalg.generic
// CHECK-COUNT-5:   math.exp
// CHECK:         linalg.generic {{.*}} ins(%[[R]], %[[T]], %[[U]] :
// CHECK:         linalg.generic {{.*}} ins(%[[R]], %[[T]], %[[U]] :
func.func @not_recomputed(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %eh = tensor.empty() : tensor<8xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%eh : tensor<8xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %y = arith.truncf %v : f32 to bf16
    linalg.yield %y : bf16
  } -> tensor<8xbf16>
  %t = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %y = arith.addf %v, %w : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%b : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y1 = math.exp %v : f32
    %y2 = math.exp %y1 : f32
    %y3 = math.exp %y2 : f32
    %y4 = math.exp %y3 : f32
    %y5 = math.exp %y4 : f32
    linalg.yield %y5 : f32
  } -> tensor<8xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%r, %t, %u : tensor<8xbf16>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: bf16, %w: f32, %z: f32, %o: f32):
    %f = arith.extf %v : bf16 to f32
    %y = arith.mulf %f, %w : f32
    %y2 = arith.mulf %y, %z : f32
    linalg.yield %y2 : f32
  } -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%r, %t, %u : tensor<8xbf16>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: bf16, %w: f32, %z: f32, %o: f32):
    %f = arith.extf %v : bf16 to f32
    %y = arith.addf %f, %w : f32
    %y2 = arith.addf %y, %z : f32
    linalg.yield %y2 : f32
  } -> tensor<8xf32>
  return %x, %y : tensor<8xf32>, tensor<8xf32>
}
