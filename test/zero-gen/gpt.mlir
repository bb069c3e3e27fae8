// RUN: zero-gen gpt --vocab 8 --seq 4 --layers 1 --heads 2 --d-model 4 --batch 2 \
// RUN:   | zero-opt --zero-verify | FileCheck %s
// RUN: zero-gen gpt --preset gpt-tiny --clip-grad-norm \
// RUN:   | zero-opt --zero-verify | FileCheck %s --check-prefix=TINY

// GPT-2 with B=2, T=4, C=4, H=2 (D=2), V=8, one block: N = B*T = 8 rows,
// B*H = 4 attention batches. Checks the nanoGPT parameter names, shapes and
// order, and one op of each kind the forward and backward are built from.

// CHECK-LABEL: func.func @forward_backward(
// CHECK-SAME:    %[[WTE:arg0]]: tensor<8x4xf32> {zero.init = {kind = "normal", std = 2.000000e-02 : f64}, zero.param = "wte"},
// CHECK-SAME:    %[[WPE:arg1]]: tensor<4x4xf32> {zero.init = {kind = "normal", std = 2.000000e-02 : f64}, zero.param = "wpe"},
// CHECK-SAME:    %arg2: tensor<4xf32> {zero.init = {kind = "constant", value = 1.000000e+00 : f64}, zero.param = "h0.ln_1.weight"},
// CHECK-SAME:    %arg3: tensor<4xf32> {zero.init = {kind = "constant", value = 0.000000e+00 : f64}, zero.param = "h0.ln_1.bias"},
// CHECK-SAME:    %arg4: tensor<4x12xf32> {zero.init = {kind = "normal", std = 2.000000e-02 : f64}, zero.param = "h0.attn.c_attn.weight"},
// CHECK-SAME:    %arg5: tensor<12xf32> {zero.init = {kind = "constant", value = 0.000000e+00 : f64}, zero.param = "h0.attn.c_attn.bias"},
// CHECK-SAME:    %arg6: tensor<4x4xf32> {zero.init = {kind = "normal", std = 0.014142135623730949 : f64}, zero.param = "h0.attn.c_proj.weight"},
// CHECK-SAME:    %arg7: tensor<4xf32> {zero.init = {kind = "constant", value = 0.000000e+00 : f64}, zero.param = "h0.attn.c_proj.bias"},
// CHECK-SAME:    %arg8: tensor<4xf32> {zero.init = {kind = "constant", value = 1.000000e+00 : f64}, zero.param = "h0.ln_2.weight"},
// CHECK-SAME:    %arg9: tensor<4xf32> {zero.init = {kind = "constant", value = 0.000000e+00 : f64}, zero.param = "h0.ln_2.bias"},
// CHECK-SAME:    %arg10: tensor<4x16xf32> {zero.init = {kind = "normal", std = 2.000000e-02 : f64}, zero.param = "h0.mlp.c_fc.weight"},
// CHECK-SAME:    %arg11: tensor<16xf32> {zero.init = {kind = "constant", value = 0.000000e+00 : f64}, zero.param = "h0.mlp.c_fc.bias"},
// CHECK-SAME:    %arg12: tensor<16x4xf32> {zero.init = {kind = "normal", std = 0.014142135623730949 : f64}, zero.param = "h0.mlp.c_proj.weight"},
// CHECK-SAME:    %arg13: tensor<4xf32> {zero.init = {kind = "constant", value = 0.000000e+00 : f64}, zero.param = "h0.mlp.c_proj.bias"},
// CHECK-SAME:    %arg14: tensor<4xf32> {zero.init = {kind = "constant", value = 1.000000e+00 : f64}, zero.param = "ln_f.weight"},
// CHECK-SAME:    %arg15: tensor<4xf32> {zero.init = {kind = "constant", value = 0.000000e+00 : f64}, zero.param = "ln_f.bias"},
// CHECK-SAME:    %[[TOK:arg16]]: tensor<2x4xi32> {zero.batch = "tokens", zero.token_range = 8 : i64},
// CHECK-SAME:    %[[TGT:arg17]]: tensor<2x4xi32> {zero.batch = "targets", zero.token_range = 8 : i64})
// CHECK-SAME:    -> (tensor<f32> {zero.loss}, tensor<8x4xf32> {zero.grad = "wte"},
// CHECK-SAME:        tensor<4x4xf32> {zero.grad = "wpe"},
// CHECK-SAME:        tensor<4x12xf32> {zero.grad = "h0.attn.c_attn.weight"},
// CHECK-SAME:        tensor<4xf32> {zero.grad = "ln_f.bias"})
// CHECK-SAME:    attributes {zero.role = "forward_backward"}

// Embedding: wte gathered with tensor.extract inside a generic over (b,t,c).
// CHECK:         linalg.generic {{.*}} ins(%[[TOK]], %[[WPE]] : tensor<2x4xi32>, tensor<4x4xf32>) outs(%{{.*}} : tensor<2x4x4xf32>)
// CHECK-NEXT:    ^bb0(%[[ID:[a-z0-9_]+]]: i32, %[[POS:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ROW:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-NEXT:      %[[COL:.*]] = linalg.index 2 : index
// CHECK-NEXT:      %[[E:.*]] = tensor.extract %[[WTE]][%[[ROW]], %[[COL]]] : tensor<8x4xf32>
// CHECK-NEXT:      arith.addf %[[E]], %[[POS]] : f32
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x4x4xf32> into tensor<8x4xf32>
// ln_1: eps 1e-5 inside 1/sqrt(var + eps).
// CHECK:           arith.constant 9.99999974E-6 : f32
// CHECK:           math.sqrt
// c_attn, then q, k, v as (B*H) x T x D.
// CHECK:         %[[QKV:.*]] = linalg.matmul ins(%{{.*}}, %arg4 : tensor<8x4xf32>, tensor<4x12xf32>)
// CHECK:         tensor.expand_shape %[[QKV]] {{\[}}[0, 1], [2, 3, 4]] output_shape [2, 4, 3, 2, 2]
// CHECK:         %[[HEADS:.*]] = linalg.transpose {{.*}} permutation = [2, 0, 3, 1, 4]
// CHECK:         tensor.extract_slice %[[HEADS]][0, 0, 0, 0, 0] [1, 2, 2, 4, 2]
// CHECK:         %[[Q:.*]] = tensor.collapse_shape {{.*}} into tensor<4x4x2xf32>
// CHECK:         tensor.extract_slice %[[HEADS]][1, 0, 0, 0, 0]
// CHECK:         tensor.extract_slice %[[HEADS]][2, 0, 0, 0, 0]
// Scores q @ k^T, causal mask and 1/sqrt(D), max-subtracted softmax, P @ v.
// CHECK:         %[[S:.*]] = linalg.batch_matmul ins(%[[Q]], %{{.*}} : tensor<4x4x2xf32>, tensor<4x2x4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[S]] : tensor<4x4x4xf32>)
// CHECK:           %[[I:.*]] = linalg.index 1 : index
// CHECK:           %[[J:.*]] = linalg.index 2 : index
// CHECK:           %[[FUTURE:.*]] = arith.cmpi ugt, %[[J]], %[[I]] : index
// CHECK:           %[[SCALED:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:           %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:           arith.select %[[FUTURE]], %[[NEGINF]], %[[SCALED]] : f32
// CHECK:         linalg.reduce {{.*}} dimensions = [2]
// CHECK-NEXT:      (%{{.*}}: f32, %{{.*}}: f32) {
// CHECK-NEXT:        arith.maximumf
// CHECK:           math.exp
// CHECK:           arith.divf
// CHECK:         linalg.batch_matmul {{.*}} : tensor<4x4x4xf32>, tensor<4x4x2xf32>)
// Heads merged back to N x C, c_proj, residual.
// CHECK:         linalg.transpose {{.*}} : tensor<2x2x4x2xf32>) outs(%{{.*}} : tensor<2x4x2x2xf32>) permutation = [0, 2, 1, 3]
// CHECK:         linalg.matmul ins(%{{.*}}, %arg6 : tensor<8x4xf32>, tensor<4x4xf32>)
// CHECK:         linalg.add
// MLP with the tanh GELU.
// CHECK:         linalg.matmul ins(%{{.*}}, %arg10 : tensor<8x4xf32>, tensor<4x16xf32>)
// CHECK:           math.tanh
// CHECK:         linalg.matmul ins(%{{.*}}, %arg12 : tensor<8x16xf32>, tensor<16x4xf32>)
// Tied LM head: logits = x @ wte^T.
// CHECK:         %[[WTET:.*]] = linalg.transpose ins(%[[WTE]] : tensor<8x4xf32>) outs(%{{.*}} : tensor<4x8xf32>) permutation = [1, 0]
// CHECK:         %[[LOGITS:.*]] = linalg.matmul ins(%{{.*}}, %[[WTET]] : tensor<8x4xf32>, tensor<4x8xf32>)
// Cross-entropy: the target logit gathered, logits[n, target_n], by a
// tensor.extract in a generic over the rows.
// CHECK:         %[[TGTS:.*]] = tensor.collapse_shape %[[TGT]] {{\[}}[0, 1]] : tensor<2x4xi32> into tensor<8xi32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[TGTS]] : tensor<8xi32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK-NEXT:    ^bb0(%[[T:[a-z0-9_]+]]: i32, %{{.*}}: f32):
// CHECK-NEXT:      %[[N:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[TI:.*]] = arith.index_cast %[[T]] : i32 to index
// CHECK-NEXT:      %[[PICK:.*]] = tensor.extract %[[LOGITS]][%[[N]], %[[TI]]] : tensor<8x8xf32>
// CHECK-NEXT:      linalg.yield %[[PICK]] : f32
// CHECK:         %[[LOSS:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// Backward of the LM head: dx = dlogits @ wte and the head's part of dwte.
// CHECK:         %[[DLOGITS:.*]] = linalg.generic {{.*}} ins(%[[LOGITS]], %{{.*}}, %[[TGTS]] : tensor<8x8xf32>, tensor<8xf32>, tensor<8xi32>)
// CHECK:         linalg.matmul ins(%[[DLOGITS]], %[[WTE]] : tensor<8x8xf32>, tensor<8x4xf32>)
// CHECK:         %[[DLT:.*]] = linalg.transpose ins(%[[DLOGITS]] : tensor<8x8xf32>)
// CHECK:         %[[DWTEHEAD:.*]] = linalg.matmul ins(%[[DLT]], %{{.*}} : tensor<8x8xf32>, tensor<8x4xf32>)
// Attention backward: dq, dk, dv re-interleaved into dqkv.
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0, 0] [1, 2, 2, 4, 2]
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[1, 0, 0, 0, 0] [1, 2, 2, 4, 2]
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[2, 0, 0, 0, 0] [1, 2, 2, 4, 2]
// CHECK:         linalg.transpose {{.*}} permutation = [1, 3, 0, 2, 4]
// Embedding backward: dwpe sums over the batch; the token rows are
// scatter-added into the LM-head gradient, one row per iteration.
// CHECK:         %[[DX3:.*]] = tensor.expand_shape %[[DX:.*]] {{\[}}[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf32> into tensor<2x4x4xf32>
// CHECK:         %[[DWPE:.*]] = linalg.reduce ins(%[[DX3]] : tensor<2x4x4xf32>) outs(%{{.*}} : tensor<4x4xf32>) dimensions = [0]
// CHECK:         %[[TOKS:.*]] = tensor.collapse_shape %[[TOK]] {{\[}}[0, 1]] : tensor<2x4xi32> into tensor<8xi32>
// CHECK:         %[[DWTE:.*]] = scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[TABLE:.*]] = %[[DWTEHEAD]]) -> (tensor<8x4xf32>) {
// CHECK-NEXT:      %[[ID2:.*]] = tensor.extract %[[TOKS]][%[[N]]] : tensor<8xi32>
// CHECK-NEXT:      %[[R:.*]] = arith.index_cast %[[ID2]] : i32 to index
// CHECK-NEXT:      %[[G:.*]] = tensor.extract_slice %[[DX]][%[[N]], 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<4xf32>
// CHECK-NEXT:      %[[CUR:.*]] = tensor.extract_slice %[[TABLE]][%[[R]], 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<4xf32>
// The add reads the table's row as its output (out + in), so it stays in
// place through elementwise fusion and bufferization.
// CHECK-NEXT:      %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[G]] : tensor<4xf32>) outs(%[[CUR]] : tensor<4xf32>)
// CHECK-NEXT:      ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[OUT]], %[[IN]] : f32
// CHECK-NEXT:        linalg.yield %[[S]] : f32
// CHECK-NEXT:      } -> tensor<4xf32>
// CHECK-NEXT:      %[[UPD:.*]] = tensor.insert_slice %[[SUM]] into %[[TABLE]][%[[R]], 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<8x4xf32>
// CHECK-NEXT:      scf.yield %[[UPD]] : tensor<8x4xf32>
// CHECK:         %[[LT:.*]] = tensor.from_elements %[[LOSS]] : tensor<f32>
// CHECK-NEXT:    return %[[LT]], %[[DWTE]], %[[DWPE]], {{.*}} : tensor<f32>, tensor<8x4xf32>, tensor<4x4xf32>, tensor<4xf32>,

// The optimizer: one fused AdamW generic per parameter (16 here).
// CHECK-LABEL: func.func @optimizer(
// CHECK-SAME:    %arg0: tensor<8x4xf32> {zero.param = "wte"}
// CHECK-SAME:    %arg16: tensor<8x4xf32> {zero.grad = "wte"}
// CHECK-SAME:    %arg32: tensor<8x4xf32> {zero.state = {kind = "exp_avg", param = "wte"}}
// CHECK-SAME:    %arg33: tensor<8x4xf32> {zero.state = {kind = "exp_avg_sq", param = "wte"}}
// CHECK-SAME:    %arg63: tensor<4xf32> {zero.state = {kind = "exp_avg_sq", param = "ln_f.bias"}}
// CHECK-SAME:    %arg64: f32 {zero.hyper = "lr"}
// CHECK-SAME:    %arg69: f32 {zero.hyper = "step"})
// CHECK-COUNT-16: :3 = linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK:         return

// gpt-tiny: 2 blocks of 12 params plus 4; clipping appends max_grad_norm.
// TINY-LABEL: func.func @forward_backward(
// TINY-SAME:    %arg0: tensor<64x32xf32> {zero.init = {kind = "normal", std = 2.000000e-02 : f64}, zero.param = "wte"}, %arg1: tensor<16x32xf32> {zero.init = {kind = "normal", std = 2.000000e-02 : f64}, zero.param = "wpe"}
// TINY-SAME:    %arg24: tensor<128x32xf32> {zero.init = {kind = "normal", std = 1.000000e-02 : f64}, zero.param = "h1.mlp.c_proj.weight"}
// TINY-SAME:    %arg28: tensor<2x16xi32> {zero.batch = "tokens", zero.token_range = 64 : i64}, %arg29: tensor<2x16xi32> {zero.batch = "targets", zero.token_range = 64 : i64}
// TINY:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<64x32xf32>)
// TINY-LABEL: func.func @optimizer(
// TINY-SAME:    %arg117: f32 {zero.hyper = "step"}, %arg118: f32 {zero.hyper = "max_grad_norm"})
// TINY-COUNT-28: -> tensor<f32>
// TINY:         math.sqrt
// TINY:         arith.minimumf
// TINY-COUNT-28: :3 = linalg.generic
