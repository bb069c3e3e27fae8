// Exported by zero_mlir.torch.export_training_step from GPT (16 parameters).
// AdamW settings (zero.hyper_default; zero-run flags override them): --lr 0.001 --beta1 0.9 --beta2 0.999 --eps 1e-08 --weight-decay 0.01
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0) -> (d0)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map6 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map7 = affine_map<(d0, d1, d2) -> (d2)>
#map8 = affine_map<(d0, d1) -> (d1)>
#map9 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map10 = affine_map<(d0, d1) -> (0, d1)>
#map11 = affine_map<(d0, d1) -> (d0, 0)>
#map12 = affine_map<(d0, d1) -> ()>
#map13 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map14 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map15 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#map16 = affine_map<(d0) -> ()>
#map17 = affine_map<() -> ()>
#map18 = affine_map<(d0, d1, d2) -> ()>
#map19 = affine_map<(d0, d1, d2) -> (0, d1, d2)>
module {
  func.func @forward_backward(%arg0: tensor<64x8xf64> {zero.param = "transformer.wte.weight"}, %arg1: tensor<8x8xf64> {zero.param = "transformer.wpe.weight"}, %arg2: tensor<8xf64> {zero.param = "transformer.h.0.ln_1.weight"}, %arg3: tensor<8xf64> {zero.param = "transformer.h.0.ln_1.bias"}, %arg4: tensor<24x8xf64> {zero.param = "transformer.h.0.attn.c_attn.weight"}, %arg5: tensor<24xf64> {zero.param = "transformer.h.0.attn.c_attn.bias"}, %arg6: tensor<8x8xf64> {zero.param = "transformer.h.0.attn.c_proj.weight"}, %arg7: tensor<8xf64> {zero.param = "transformer.h.0.attn.c_proj.bias"}, %arg8: tensor<8xf64> {zero.param = "transformer.h.0.ln_2.weight"}, %arg9: tensor<8xf64> {zero.param = "transformer.h.0.ln_2.bias"}, %arg10: tensor<32x8xf64> {zero.param = "transformer.h.0.mlp.c_fc.weight"}, %arg11: tensor<32xf64> {zero.param = "transformer.h.0.mlp.c_fc.bias"}, %arg12: tensor<8x32xf64> {zero.param = "transformer.h.0.mlp.c_proj.weight"}, %arg13: tensor<8xf64> {zero.param = "transformer.h.0.mlp.c_proj.bias"}, %arg14: tensor<8xf64> {zero.param = "transformer.ln_f.weight"}, %arg15: tensor<8xf64> {zero.param = "transformer.ln_f.bias"}, %arg16: tensor<2x8xi32> {zero.batch = "tokens", zero.token_range = 64 : i64}, %arg17: tensor<2x8xi32> {zero.batch = "targets", zero.token_range = 64 : i64}) -> (tensor<f64> {zero.loss}, tensor<64x8xf64> {zero.grad = "transformer.wte.weight"}, tensor<8x8xf64> {zero.grad = "transformer.wpe.weight"}, tensor<8xf64> {zero.grad = "transformer.h.0.ln_1.weight"}, tensor<8xf64> {zero.grad = "transformer.h.0.ln_1.bias"}, tensor<24x8xf64> {zero.grad = "transformer.h.0.attn.c_attn.weight"}, tensor<24xf64> {zero.grad = "transformer.h.0.attn.c_attn.bias"}, tensor<8x8xf64> {zero.grad = "transformer.h.0.attn.c_proj.weight"}, tensor<8xf64> {zero.grad = "transformer.h.0.attn.c_proj.bias"}, tensor<8xf64> {zero.grad = "transformer.h.0.ln_2.weight"}, tensor<8xf64> {zero.grad = "transformer.h.0.ln_2.bias"}, tensor<32x8xf64> {zero.grad = "transformer.h.0.mlp.c_fc.weight"}, tensor<32xf64> {zero.grad = "transformer.h.0.mlp.c_fc.bias"}, tensor<8x32xf64> {zero.grad = "transformer.h.0.mlp.c_proj.weight"}, tensor<8xf64> {zero.grad = "transformer.h.0.mlp.c_proj.bias"}, tensor<8xf64> {zero.grad = "transformer.ln_f.weight"}, tensor<8xf64> {zero.grad = "transformer.ln_f.bias"}) attributes {zero.role = "forward_backward"} {
    %c-1_i64 = arith.constant -1 : i64
    %c0_i64 = arith.constant 0 : i64
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %cst = arith.constant 0.000000e+00 : f64
    %cst_0 = arith.constant 0xFFF0000000000000 : f64
    %false = arith.constant false
    %cst_1 = arith.constant dense<1.000000e+00> : tensor<f64>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<2x2x8x8xf64>
    %cst_3 = arith.constant dense<0.000000e+00> : tensor<f64>
    %cst_4 = arith.constant dense<0xFFF0000000000000> : tensor<f64>
    %cst_5 = arith.constant dense<true> : tensor<8x8xi1>
    %cst_6 = arith.constant 1.341450e-01 : f64
    %cst_7 = arith.constant 5.000000e-01 : f64
    %cst_8 = arith.constant 0.79788456080286541 : f64
    %cst_9 = arith.constant 4.471500e-02 : f64
    %cst_10 = arith.constant 0.70710678118654757 : f64
    %cst_11 = arith.constant 1.000000e-05 : f64
    %cst_12 = arith.constant 8.000000e+00 : f64
    %cst_13 = arith.constant 1.000000e+00 : f64
    %cst_14 = arith.constant dense<1> : tensor<i64>
    %0 = tensor.empty() : tensor<2x8xi64>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg16 : tensor<2x8xi32>) outs(%0 : tensor<2x8xi64>) {
    ^bb0(%in: i32, %out: i64):
      %279 = arith.extsi %in : i32 to i64
      linalg.yield %279 : i64
    } -> tensor<2x8xi64>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg17 : tensor<2x8xi32>) outs(%0 : tensor<2x8xi64>) {
    ^bb0(%in: i32, %out: i64):
      %279 = arith.extsi %in : i32 to i64
      linalg.yield %279 : i64
    } -> tensor<2x8xi64>
    %3 = tensor.empty() : tensor<8xi64>
    %4 = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel"]} outs(%3 : tensor<8xi64>) {
    ^bb0(%out: i64):
      %279 = linalg.index 0 : index
      %280 = arith.index_cast %279 : index to i64
      linalg.yield %280 : i64
    } -> tensor<8xi64>
    %5 = tensor.empty() : tensor<2x8x8xf64>
    %6 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1 : tensor<2x8xi64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: i64, %out: f64):
      %279 = arith.index_cast %in : i64 to index
      %280 = linalg.index 2 : index
      %281 = arith.cmpi slt, %279, %c64 : index
      cf.assert %281, "index must be smaller than dim size"
      %282 = arith.cmpi sge, %in, %c0_i64 : i64
      cf.assert %282, "index must be larger or equal to 0"
      %extracted = tensor.extract %arg0[%279, %280] : tensor<64x8xf64>
      linalg.yield %extracted : f64
    } -> tensor<2x8x8xf64>
    %7 = tensor.empty() : tensor<8x8xf64>
    %8 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<8xi64>) outs(%7 : tensor<8x8xf64>) {
    ^bb0(%in: i64, %out: f64):
      %279 = arith.index_cast %in : i64 to index
      %280 = linalg.index 1 : index
      %281 = arith.cmpi slt, %279, %c8 : index
      cf.assert %281, "index must be smaller than dim size"
      %282 = arith.cmpi sge, %in, %c0_i64 : i64
      cf.assert %282, "index must be larger or equal to 0"
      %extracted = tensor.extract %arg1[%279, %280] : tensor<8x8xf64>
      linalg.yield %extracted : f64
    } -> tensor<8x8xf64>
    %9 = linalg.generic {indexing_maps = [#map3, #map5, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %8 : tensor<2x8x8xf64>, tensor<8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %10 = tensor.empty() : tensor<2x8x1xf64>
    %11 = linalg.fill ins(%cst : f64) outs(%10 : tensor<2x8x1xf64>) -> tensor<2x8x1xf64>
    %12 = linalg.generic {indexing_maps = [#map3, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%9 : tensor<2x8x8xf64>) outs(%11 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %13 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%12 : tensor<2x8x1xf64>) outs(%10 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.divf %in, %cst_12 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %collapsed = tensor.collapse_shape %13 [[0], [1, 2]] : tensor<2x8x1xf64> into tensor<2x8xf64>
    %14 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%collapsed : tensor<2x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %out: f64):
      linalg.yield %in : f64
    } -> tensor<2x8x8xf64>
    %15 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%9, %14 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %16 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%15, %15 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %17 = linalg.generic {indexing_maps = [#map3, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%16 : tensor<2x8x8xf64>) outs(%11 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %18 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17 : tensor<2x8x1xf64>) outs(%10 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.divf %in, %cst_12 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %19 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%18 : tensor<2x8x1xf64>) outs(%10 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %cst_11 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %20 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%19 : tensor<2x8x1xf64>) outs(%10 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = math.rsqrt %in : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %collapsed_15 = tensor.collapse_shape %20 [[0], [1, 2]] : tensor<2x8x1xf64> into tensor<2x8xf64>
    %21 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%collapsed_15 : tensor<2x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %out: f64):
      linalg.yield %in : f64
    } -> tensor<2x8x8xf64>
    %22 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%15, %21 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %23 = linalg.generic {indexing_maps = [#map3, #map7, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%22, %arg2 : tensor<2x8x8xf64>, tensor<8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %24 = linalg.generic {indexing_maps = [#map3, #map7, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%23, %arg3 : tensor<2x8x8xf64>, tensor<8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %collapsed_16 = tensor.collapse_shape %24 [[0, 1], [2]] : tensor<2x8x8xf64> into tensor<16x8xf64>
    %25 = tensor.empty() : tensor<8x24xf64>
    %transposed = linalg.transpose ins(%arg4 : tensor<24x8xf64>) outs(%25 : tensor<8x24xf64>) permutation = [1, 0] 
    %26 = tensor.empty() : tensor<16x24xf64>
    %27 = linalg.fill ins(%cst : f64) outs(%26 : tensor<16x24xf64>) -> tensor<16x24xf64>
    %28 = linalg.matmul ins(%collapsed_16, %transposed : tensor<16x8xf64>, tensor<8x24xf64>) outs(%27 : tensor<16x24xf64>) -> tensor<16x24xf64>
    %29 = linalg.generic {indexing_maps = [#map8, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg5, %28 : tensor<24xf64>, tensor<16x24xf64>) outs(%26 : tensor<16x24xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<16x24xf64>
    %expanded = tensor.expand_shape %29 [[0, 1], [2]] output_shape [2, 8, 24] : tensor<16x24xf64> into tensor<2x8x24xf64>
    %extracted_slice = tensor.extract_slice %expanded[0, 0, 0] [2, 8, 8] [1, 1, 1] : tensor<2x8x24xf64> to tensor<2x8x8xf64>
    %extracted_slice_17 = tensor.extract_slice %expanded[0, 0, 8] [2, 8, 8] [1, 1, 1] : tensor<2x8x24xf64> to tensor<2x8x8xf64>
    %extracted_slice_18 = tensor.extract_slice %expanded[0, 0, 16] [2, 8, 8] [1, 1, 1] : tensor<2x8x24xf64> to tensor<2x8x8xf64>
    %expanded_19 = tensor.expand_shape %extracted_slice_17 [[0], [1], [2, 3]] output_shape [2, 8, 2, 4] : tensor<2x8x8xf64> into tensor<2x8x2x4xf64>
    %expanded_20 = tensor.expand_shape %extracted_slice [[0], [1], [2, 3]] output_shape [2, 8, 2, 4] : tensor<2x8x8xf64> into tensor<2x8x2x4xf64>
    %30 = tensor.empty() : tensor<2x2x8x4xf64>
    %transposed_21 = linalg.transpose ins(%expanded_20 : tensor<2x8x2x4xf64>) outs(%30 : tensor<2x2x8x4xf64>) permutation = [0, 2, 1, 3] 
    %expanded_22 = tensor.expand_shape %extracted_slice_18 [[0], [1], [2, 3]] output_shape [2, 8, 2, 4] : tensor<2x8x8xf64> into tensor<2x8x2x4xf64>
    %transposed_23 = linalg.transpose ins(%expanded_22 : tensor<2x8x2x4xf64>) outs(%30 : tensor<2x2x8x4xf64>) permutation = [0, 2, 1, 3] 
    %31 = linalg.generic {indexing_maps = [#map9, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_21 : tensor<2x2x8x4xf64>) outs(%30 : tensor<2x2x8x4xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.mulf %in, %cst_10 : f64
      linalg.yield %279 : f64
    } -> tensor<2x2x8x4xf64>
    %expanded_24 = tensor.expand_shape %4 [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
    %expanded_25 = tensor.expand_shape %4 [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
    %32 = tensor.empty() : tensor<8x8xi64>
    %33 = linalg.generic {indexing_maps = [#map10, #map11, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded_24, %expanded_25 : tensor<1x8xi64>, tensor<8x1xi64>) outs(%32 : tensor<8x8xi64>) {
    ^bb0(%in: i64, %in_95: i64, %out: i64):
      %279 = arith.subi %in, %in_95 : i64
      linalg.yield %279 : i64
    } -> tensor<8x8xi64>
    %34 = tensor.empty() : tensor<8x8xi1>
    %35 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%33 : tensor<8x8xi64>) outs(%34 : tensor<8x8xi1>) {
    ^bb0(%in: i64, %out: i1):
      %279 = arith.cmpi sle, %in, %c0_i64 : i64
      linalg.yield %279 : i1
    } -> tensor<8x8xi1>
    %36 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%35, %cst_5 : tensor<8x8xi1>, tensor<8x8xi1>) outs(%34 : tensor<8x8xi1>) {
    ^bb0(%in: i1, %in_95: i1, %out: i1):
      %279 = arith.andi %in, %in_95 : i1
      linalg.yield %279 : i1
    } -> tensor<8x8xi1>
    %37 = linalg.generic {indexing_maps = [#map, #map12, #map12, #map], iterator_types = ["parallel", "parallel"]} ins(%36, %cst_3, %cst_4 : tensor<8x8xi1>, tensor<f64>, tensor<f64>) outs(%7 : tensor<8x8xf64>) {
    ^bb0(%in: i1, %in_95: f64, %in_96: f64, %out: f64):
      %279 = arith.select %in, %in_95, %in_96 : f64
      linalg.yield %279 : f64
    } -> tensor<8x8xf64>
    %38 = tensor.empty() : tensor<2x2x4x8xf64>
    %transposed_26 = linalg.transpose ins(%expanded_19 : tensor<2x8x2x4xf64>) outs(%38 : tensor<2x2x4x8xf64>) permutation = [0, 2, 3, 1] 
    %39 = linalg.generic {indexing_maps = [#map9, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_26 : tensor<2x2x4x8xf64>) outs(%38 : tensor<2x2x4x8xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.mulf %in, %cst_10 : f64
      linalg.yield %279 : f64
    } -> tensor<2x2x4x8xf64>
    %collapsed_27 = tensor.collapse_shape %31 [[0, 1], [2], [3]] : tensor<2x2x8x4xf64> into tensor<4x8x4xf64>
    %collapsed_28 = tensor.collapse_shape %39 [[0, 1], [2], [3]] : tensor<2x2x4x8xf64> into tensor<4x4x8xf64>
    %40 = tensor.empty() : tensor<4x8x8xf64>
    %41 = linalg.fill ins(%cst : f64) outs(%40 : tensor<4x8x8xf64>) -> tensor<4x8x8xf64>
    %42 = linalg.batch_matmul ins(%collapsed_27, %collapsed_28 : tensor<4x8x4xf64>, tensor<4x4x8xf64>) outs(%41 : tensor<4x8x8xf64>) -> tensor<4x8x8xf64>
    %expanded_29 = tensor.expand_shape %42 [[0, 1], [2], [3]] output_shape [2, 2, 8, 8] : tensor<4x8x8xf64> into tensor<2x2x8x8xf64>
    %43 = tensor.empty() : tensor<2x2x8x8xf64>
    %44 = linalg.generic {indexing_maps = [#map9, #map13, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_29, %37 : tensor<2x2x8x8xf64>, tensor<8x8xf64>) outs(%43 : tensor<2x2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x2x8x8xf64>
    %45 = tensor.empty() : tensor<2x2x8xi64>
    %46 = linalg.fill ins(%c0_i64 : i64) outs(%45 : tensor<2x2x8xi64>) -> tensor<2x2x8xi64>
    %47 = tensor.empty() : tensor<2x2x8xf64>
    %48 = linalg.fill ins(%cst_0 : f64) outs(%47 : tensor<2x2x8xf64>) -> tensor<2x2x8xf64>
    %49:2 = linalg.generic {indexing_maps = [#map9, #map14, #map14], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%44 : tensor<2x2x8x8xf64>) outs(%48, %46 : tensor<2x2x8xf64>, tensor<2x2x8xi64>) {
    ^bb0(%in: f64, %out: f64, %out_95: i64):
      %279 = linalg.index 3 : index
      %280 = arith.index_cast %279 : index to i64
      %281 = arith.maximumf %in, %out : f64
      %282 = arith.cmpf ogt, %in, %out : f64
      %283 = arith.select %282, %280, %out_95 : i64
      linalg.yield %281, %283 : f64, i64
    } -> (tensor<2x2x8xf64>, tensor<2x2x8xi64>)
    %expanded_30 = tensor.expand_shape %49#0 [[0], [1], [2, 3]] output_shape [2, 2, 8, 1] : tensor<2x2x8xf64> into tensor<2x2x8x1xf64>
    %50 = linalg.generic {indexing_maps = [#map9, #map15, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%44, %expanded_30 : tensor<2x2x8x8xf64>, tensor<2x2x8x1xf64>) outs(%43 : tensor<2x2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x2x8x8xf64>
    %51 = linalg.generic {indexing_maps = [#map9, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%50 : tensor<2x2x8x8xf64>) outs(%43 : tensor<2x2x8x8xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = math.exp %in : f64
      linalg.yield %279 : f64
    } -> tensor<2x2x8x8xf64>
    %52 = tensor.empty() : tensor<2x2x8x1xf64>
    %53 = linalg.fill ins(%cst : f64) outs(%52 : tensor<2x2x8x1xf64>) -> tensor<2x2x8x1xf64>
    %54 = linalg.generic {indexing_maps = [#map9, #map15], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%51 : tensor<2x2x8x8xf64>) outs(%53 : tensor<2x2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<2x2x8x1xf64>
    %55 = linalg.generic {indexing_maps = [#map9, #map15, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%51, %54 : tensor<2x2x8x8xf64>, tensor<2x2x8x1xf64>) outs(%43 : tensor<2x2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.divf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x2x8x8xf64>
    %56 = tensor.empty() : tensor<2x2x8x8xi1>
    %57 = linalg.generic {indexing_maps = [#map9, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%44 : tensor<2x2x8x8xf64>) outs(%56 : tensor<2x2x8x8xi1>) {
    ^bb0(%in: f64, %out: i1):
      %279 = arith.cmpf oeq, %in, %cst_0 : f64
      linalg.yield %279 : i1
    } -> tensor<2x2x8x8xi1>
    %58 = linalg.generic {indexing_maps = [#map9, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%57 : tensor<2x2x8x8xi1>) outs(%56 : tensor<2x2x8x8xi1>) {
    ^bb0(%in: i1, %out: i1):
      %279 = arith.cmpi eq, %in, %false : i1
      linalg.yield %279 : i1
    } -> tensor<2x2x8x8xi1>
    %59 = tensor.empty() : tensor<2x2x8x1xi1>
    %60 = linalg.fill ins(%false : i1) outs(%59 : tensor<2x2x8x1xi1>) -> tensor<2x2x8x1xi1>
    %61 = linalg.generic {indexing_maps = [#map9, #map15], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%58 : tensor<2x2x8x8xi1>) outs(%60 : tensor<2x2x8x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %279 = arith.ori %in, %out : i1
      linalg.yield %279 : i1
    } -> tensor<2x2x8x1xi1>
    %62 = linalg.generic {indexing_maps = [#map9, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%61 : tensor<2x2x8x1xi1>) outs(%59 : tensor<2x2x8x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %279 = arith.cmpi eq, %in, %false : i1
      linalg.yield %279 : i1
    } -> tensor<2x2x8x1xi1>
    %63 = linalg.generic {indexing_maps = [#map15, #map9, #map9, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%62, %cst_2, %55 : tensor<2x2x8x1xi1>, tensor<2x2x8x8xf64>, tensor<2x2x8x8xf64>) outs(%43 : tensor<2x2x8x8xf64>) {
    ^bb0(%in: i1, %in_95: f64, %in_96: f64, %out: f64):
      %279 = arith.select %in, %in_95, %in_96 : f64
      linalg.yield %279 : f64
    } -> tensor<2x2x8x8xf64>
    %collapsed_31 = tensor.collapse_shape %63 [[0, 1], [2], [3]] : tensor<2x2x8x8xf64> into tensor<4x8x8xf64>
    %collapsed_32 = tensor.collapse_shape %transposed_23 [[0, 1], [2], [3]] : tensor<2x2x8x4xf64> into tensor<4x8x4xf64>
    %64 = tensor.empty() : tensor<4x8x4xf64>
    %65 = linalg.fill ins(%cst : f64) outs(%64 : tensor<4x8x4xf64>) -> tensor<4x8x4xf64>
    %66 = linalg.batch_matmul ins(%collapsed_31, %collapsed_32 : tensor<4x8x8xf64>, tensor<4x8x4xf64>) outs(%65 : tensor<4x8x4xf64>) -> tensor<4x8x4xf64>
    %expanded_33 = tensor.expand_shape %66 [[0, 1], [2], [3]] output_shape [2, 2, 8, 4] : tensor<4x8x4xf64> into tensor<2x2x8x4xf64>
    %67 = tensor.empty() : tensor<2x8x2x4xf64>
    %transposed_34 = linalg.transpose ins(%expanded_33 : tensor<2x2x8x4xf64>) outs(%67 : tensor<2x8x2x4xf64>) permutation = [0, 2, 1, 3] 
    %collapsed_35 = tensor.collapse_shape %transposed_34 [[0, 1], [2, 3]] : tensor<2x8x2x4xf64> into tensor<16x8xf64>
    %transposed_36 = linalg.transpose ins(%arg6 : tensor<8x8xf64>) outs(%7 : tensor<8x8xf64>) permutation = [1, 0] 
    %68 = tensor.empty() : tensor<16x8xf64>
    %69 = linalg.fill ins(%cst : f64) outs(%68 : tensor<16x8xf64>) -> tensor<16x8xf64>
    %70 = linalg.matmul ins(%collapsed_35, %transposed_36 : tensor<16x8xf64>, tensor<8x8xf64>) outs(%69 : tensor<16x8xf64>) -> tensor<16x8xf64>
    %71 = linalg.generic {indexing_maps = [#map8, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg7, %70 : tensor<8xf64>, tensor<16x8xf64>) outs(%68 : tensor<16x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<16x8xf64>
    %expanded_37 = tensor.expand_shape %71 [[0, 1], [2]] output_shape [2, 8, 8] : tensor<16x8xf64> into tensor<2x8x8xf64>
    %72 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%9, %expanded_37 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %73 = linalg.generic {indexing_maps = [#map3, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%72 : tensor<2x8x8xf64>) outs(%11 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %74 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%73 : tensor<2x8x1xf64>) outs(%10 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.divf %in, %cst_12 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %collapsed_38 = tensor.collapse_shape %74 [[0], [1, 2]] : tensor<2x8x1xf64> into tensor<2x8xf64>
    %75 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%collapsed_38 : tensor<2x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %out: f64):
      linalg.yield %in : f64
    } -> tensor<2x8x8xf64>
    %76 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%72, %75 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %77 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%76, %76 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %78 = linalg.generic {indexing_maps = [#map3, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%77 : tensor<2x8x8xf64>) outs(%11 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %79 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%78 : tensor<2x8x1xf64>) outs(%10 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.divf %in, %cst_12 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %80 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%79 : tensor<2x8x1xf64>) outs(%10 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %cst_11 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %81 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%80 : tensor<2x8x1xf64>) outs(%10 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = math.rsqrt %in : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %collapsed_39 = tensor.collapse_shape %81 [[0], [1, 2]] : tensor<2x8x1xf64> into tensor<2x8xf64>
    %82 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%collapsed_39 : tensor<2x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %out: f64):
      linalg.yield %in : f64
    } -> tensor<2x8x8xf64>
    %83 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%76, %82 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %84 = linalg.generic {indexing_maps = [#map3, #map7, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%83, %arg8 : tensor<2x8x8xf64>, tensor<8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %85 = linalg.generic {indexing_maps = [#map3, #map7, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%84, %arg9 : tensor<2x8x8xf64>, tensor<8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %collapsed_40 = tensor.collapse_shape %85 [[0, 1], [2]] : tensor<2x8x8xf64> into tensor<16x8xf64>
    %86 = tensor.empty() : tensor<8x32xf64>
    %transposed_41 = linalg.transpose ins(%arg10 : tensor<32x8xf64>) outs(%86 : tensor<8x32xf64>) permutation = [1, 0] 
    %87 = tensor.empty() : tensor<16x32xf64>
    %88 = linalg.fill ins(%cst : f64) outs(%87 : tensor<16x32xf64>) -> tensor<16x32xf64>
    %89 = linalg.matmul ins(%collapsed_40, %transposed_41 : tensor<16x8xf64>, tensor<8x32xf64>) outs(%88 : tensor<16x32xf64>) -> tensor<16x32xf64>
    %90 = linalg.generic {indexing_maps = [#map8, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg11, %89 : tensor<32xf64>, tensor<16x32xf64>) outs(%87 : tensor<16x32xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<16x32xf64>
    %expanded_42 = tensor.expand_shape %90 [[0, 1], [2]] output_shape [2, 8, 32] : tensor<16x32xf64> into tensor<2x8x32xf64>
    %91 = tensor.empty() : tensor<2x8x32xf64>
    %92 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_42 : tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.mulf %in, %cst_9 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %93 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%92, %expanded_42 : tensor<2x8x32xf64>, tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %94 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%93, %expanded_42 : tensor<2x8x32xf64>, tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %95 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_42, %94 : tensor<2x8x32xf64>, tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %96 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%95 : tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.mulf %in, %cst_8 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %97 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_42 : tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.mulf %in, %cst_7 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %98 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%96 : tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = math.tanh %in : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %99 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%98 : tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %cst_13 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %100 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%97, %99 : tensor<2x8x32xf64>, tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %collapsed_43 = tensor.collapse_shape %100 [[0, 1], [2]] : tensor<2x8x32xf64> into tensor<16x32xf64>
    %101 = tensor.empty() : tensor<32x8xf64>
    %transposed_44 = linalg.transpose ins(%arg12 : tensor<8x32xf64>) outs(%101 : tensor<32x8xf64>) permutation = [1, 0] 
    %102 = linalg.matmul ins(%collapsed_43, %transposed_44 : tensor<16x32xf64>, tensor<32x8xf64>) outs(%69 : tensor<16x8xf64>) -> tensor<16x8xf64>
    %103 = linalg.generic {indexing_maps = [#map8, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg13, %102 : tensor<8xf64>, tensor<16x8xf64>) outs(%68 : tensor<16x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<16x8xf64>
    %expanded_45 = tensor.expand_shape %103 [[0, 1], [2]] output_shape [2, 8, 8] : tensor<16x8xf64> into tensor<2x8x8xf64>
    %104 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%72, %expanded_45 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %105 = linalg.generic {indexing_maps = [#map3, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%104 : tensor<2x8x8xf64>) outs(%11 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %106 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%105 : tensor<2x8x1xf64>) outs(%10 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.divf %in, %cst_12 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %collapsed_46 = tensor.collapse_shape %106 [[0], [1, 2]] : tensor<2x8x1xf64> into tensor<2x8xf64>
    %107 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%collapsed_46 : tensor<2x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %out: f64):
      linalg.yield %in : f64
    } -> tensor<2x8x8xf64>
    %108 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%104, %107 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %109 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%108, %108 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %110 = linalg.generic {indexing_maps = [#map3, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%109 : tensor<2x8x8xf64>) outs(%11 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %111 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%110 : tensor<2x8x1xf64>) outs(%10 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.divf %in, %cst_12 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %112 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%111 : tensor<2x8x1xf64>) outs(%10 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %cst_11 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %113 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%112 : tensor<2x8x1xf64>) outs(%10 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = math.rsqrt %in : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %collapsed_47 = tensor.collapse_shape %113 [[0], [1, 2]] : tensor<2x8x1xf64> into tensor<2x8xf64>
    %114 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%collapsed_47 : tensor<2x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %out: f64):
      linalg.yield %in : f64
    } -> tensor<2x8x8xf64>
    %115 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%108, %114 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %116 = linalg.generic {indexing_maps = [#map3, #map7, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%115, %arg14 : tensor<2x8x8xf64>, tensor<8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %117 = linalg.generic {indexing_maps = [#map3, #map7, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%116, %arg15 : tensor<2x8x8xf64>, tensor<8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %118 = tensor.empty() : tensor<8x64xf64>
    %transposed_48 = linalg.transpose ins(%arg0 : tensor<64x8xf64>) outs(%118 : tensor<8x64xf64>) permutation = [1, 0] 
    %collapsed_49 = tensor.collapse_shape %117 [[0, 1], [2]] : tensor<2x8x8xf64> into tensor<16x8xf64>
    %119 = tensor.empty() : tensor<16x64xf64>
    %120 = linalg.fill ins(%cst : f64) outs(%119 : tensor<16x64xf64>) -> tensor<16x64xf64>
    %121 = linalg.matmul ins(%collapsed_49, %transposed_48 : tensor<16x8xf64>, tensor<8x64xf64>) outs(%120 : tensor<16x64xf64>) -> tensor<16x64xf64>
    %collapsed_50 = tensor.collapse_shape %2 [[0, 1]] : tensor<2x8xi64> into tensor<16xi64>
    %122 = tensor.empty() : tensor<16xi64>
    %123 = linalg.fill ins(%c0_i64 : i64) outs(%122 : tensor<16xi64>) -> tensor<16xi64>
    %124 = tensor.empty() : tensor<16xf64>
    %125 = linalg.fill ins(%cst_0 : f64) outs(%124 : tensor<16xf64>) -> tensor<16xf64>
    %126:2 = linalg.generic {indexing_maps = [#map, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%121 : tensor<16x64xf64>) outs(%125, %123 : tensor<16xf64>, tensor<16xi64>) {
    ^bb0(%in: f64, %out: f64, %out_95: i64):
      %279 = linalg.index 1 : index
      %280 = arith.index_cast %279 : index to i64
      %281 = arith.maximumf %in, %out : f64
      %282 = arith.cmpf ogt, %in, %out : f64
      %283 = arith.select %282, %280, %out_95 : i64
      linalg.yield %281, %283 : f64, i64
    } -> (tensor<16xf64>, tensor<16xi64>)
    %expanded_51 = tensor.expand_shape %126#0 [[0, 1]] output_shape [16, 1] : tensor<16xf64> into tensor<16x1xf64>
    %127 = linalg.generic {indexing_maps = [#map, #map11, #map], iterator_types = ["parallel", "parallel"]} ins(%121, %expanded_51 : tensor<16x64xf64>, tensor<16x1xf64>) outs(%119 : tensor<16x64xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<16x64xf64>
    %128 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%127 : tensor<16x64xf64>) outs(%119 : tensor<16x64xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = math.exp %in : f64
      linalg.yield %279 : f64
    } -> tensor<16x64xf64>
    %129 = tensor.empty() : tensor<16x1xf64>
    %130 = linalg.fill ins(%cst : f64) outs(%129 : tensor<16x1xf64>) -> tensor<16x1xf64>
    %131 = linalg.generic {indexing_maps = [#map, #map11], iterator_types = ["parallel", "reduction"]} ins(%128 : tensor<16x64xf64>) outs(%130 : tensor<16x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<16x1xf64>
    %132 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%131 : tensor<16x1xf64>) outs(%129 : tensor<16x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = math.log %in : f64
      linalg.yield %279 : f64
    } -> tensor<16x1xf64>
    %133 = linalg.generic {indexing_maps = [#map, #map11, #map], iterator_types = ["parallel", "parallel"]} ins(%127, %132 : tensor<16x64xf64>, tensor<16x1xf64>) outs(%119 : tensor<16x64xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<16x64xf64>
    %134 = tensor.empty() : tensor<16xi1>
    %135 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]} ins(%collapsed_50 : tensor<16xi64>) outs(%134 : tensor<16xi1>) {
    ^bb0(%in: i64, %out: i1):
      %279 = arith.cmpi ne, %in, %c-1_i64 : i64
      linalg.yield %279 : i1
    } -> tensor<16xi1>
    %136 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]} ins(%135 : tensor<16xi1>) outs(%124 : tensor<16xf64>) {
    ^bb0(%in: i1, %out: f64):
      %279 = arith.uitofp %in : i1 to f64
      linalg.yield %279 : f64
    } -> tensor<16xf64>
    %expanded_52 = tensor.expand_shape %collapsed_50 [[0, 1]] output_shape [16, 1] : tensor<16xi64> into tensor<16x1xi64>
    %137 = tensor.empty() : tensor<64xi64>
    %138 = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel"]} outs(%137 : tensor<64xi64>) {
    ^bb0(%out: i64):
      %279 = linalg.index 0 : index
      %280 = arith.index_cast %279 : index to i64
      linalg.yield %280 : i64
    } -> tensor<64xi64>
    %139 = tensor.empty() : tensor<16x64xi1>
    %140 = linalg.generic {indexing_maps = [#map11, #map8, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded_52, %138 : tensor<16x1xi64>, tensor<64xi64>) outs(%139 : tensor<16x64xi1>) {
    ^bb0(%in: i64, %in_95: i64, %out: i1):
      %279 = arith.cmpi eq, %in, %in_95 : i64
      linalg.yield %279 : i1
    } -> tensor<16x64xi1>
    %141 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%140 : tensor<16x64xi1>) outs(%119 : tensor<16x64xf64>) {
    ^bb0(%in: i1, %out: f64):
      %279 = arith.uitofp %in : i1 to f64
      linalg.yield %279 : f64
    } -> tensor<16x64xf64>
    %142 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%133, %141 : tensor<16x64xf64>, tensor<16x64xf64>) outs(%119 : tensor<16x64xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<16x64xf64>
    %143 = linalg.fill ins(%cst : f64) outs(%124 : tensor<16xf64>) -> tensor<16xf64>
    %144 = linalg.generic {indexing_maps = [#map, #map4], iterator_types = ["parallel", "reduction"]} ins(%142 : tensor<16x64xf64>) outs(%143 : tensor<16xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<16xf64>
    %145 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel"]} ins(%144, %136 : tensor<16xf64>, tensor<16xf64>) outs(%124 : tensor<16xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<16xf64>
    %146 = tensor.empty() : tensor<f64>
    %147 = linalg.fill ins(%cst : f64) outs(%146 : tensor<f64>) -> tensor<f64>
    %148 = linalg.generic {indexing_maps = [#map1, #map16], iterator_types = ["reduction"]} ins(%136 : tensor<16xf64>) outs(%147 : tensor<f64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<f64>
    %149 = linalg.generic {indexing_maps = [#map1, #map16], iterator_types = ["reduction"]} ins(%145 : tensor<16xf64>) outs(%147 : tensor<f64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<f64>
    %150 = linalg.generic {indexing_maps = [#map17, #map17], iterator_types = []} ins(%149 : tensor<f64>) outs(%146 : tensor<f64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.negf %in : f64
      linalg.yield %279 : f64
    } -> tensor<f64>
    %151 = linalg.generic {indexing_maps = [#map17, #map17, #map17], iterator_types = []} ins(%150, %148 : tensor<f64>, tensor<f64>) outs(%146 : tensor<f64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.divf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<f64>
    %expanded_53 = tensor.expand_shape %136 [[0, 1]] output_shape [16, 1] : tensor<16xf64> into tensor<16x1xf64>
    %152 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%141 : tensor<16x64xf64>) outs(%119 : tensor<16x64xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.negf %in : f64
      linalg.yield %279 : f64
    } -> tensor<16x64xf64>
    %153 = linalg.generic {indexing_maps = [#map, #map11, #map], iterator_types = ["parallel", "parallel"]} ins(%152, %expanded_53 : tensor<16x64xf64>, tensor<16x1xf64>) outs(%119 : tensor<16x64xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<16x64xf64>
    %154 = linalg.generic {indexing_maps = [#map17, #map17, #map17], iterator_types = []} ins(%cst_1, %148 : tensor<f64>, tensor<f64>) outs(%146 : tensor<f64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.divf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<f64>
    %155 = linalg.generic {indexing_maps = [#map, #map12, #map], iterator_types = ["parallel", "parallel"]} ins(%153, %154 : tensor<16x64xf64>, tensor<f64>) outs(%119 : tensor<16x64xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<16x64xf64>
    %156 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%133 : tensor<16x64xf64>) outs(%119 : tensor<16x64xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = math.exp %in : f64
      linalg.yield %279 : f64
    } -> tensor<16x64xf64>
    %157 = linalg.generic {indexing_maps = [#map, #map11], iterator_types = ["parallel", "reduction"]} ins(%155 : tensor<16x64xf64>) outs(%130 : tensor<16x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<16x1xf64>
    %158 = linalg.generic {indexing_maps = [#map, #map11, #map], iterator_types = ["parallel", "parallel"]} ins(%156, %157 : tensor<16x64xf64>, tensor<16x1xf64>) outs(%119 : tensor<16x64xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<16x64xf64>
    %159 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%155, %158 : tensor<16x64xf64>, tensor<16x64xf64>) outs(%119 : tensor<16x64xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<16x64xf64>
    %160 = tensor.empty() : tensor<64x16xf64>
    %transposed_54 = linalg.transpose ins(%159 : tensor<16x64xf64>) outs(%160 : tensor<64x16xf64>) permutation = [1, 0] 
    %161 = tensor.empty() : tensor<64x8xf64>
    %162 = linalg.fill ins(%cst : f64) outs(%161 : tensor<64x8xf64>) -> tensor<64x8xf64>
    %163 = linalg.matmul ins(%transposed_54, %collapsed_49 : tensor<64x16xf64>, tensor<16x8xf64>) outs(%162 : tensor<64x8xf64>) -> tensor<64x8xf64>
    %164 = linalg.matmul ins(%159, %arg0 : tensor<16x64xf64>, tensor<64x8xf64>) outs(%69 : tensor<16x8xf64>) -> tensor<16x8xf64>
    %expanded_55 = tensor.expand_shape %164 [[0, 1], [2]] output_shape [2, 8, 8] : tensor<16x8xf64> into tensor<2x8x8xf64>
    %165 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%104, %106 : tensor<2x8x8xf64>, tensor<2x8x1xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %166 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%165, %113 : tensor<2x8x8xf64>, tensor<2x8x1xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %167 = linalg.generic {indexing_maps = [#map3, #map7, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_55, %arg14 : tensor<2x8x8xf64>, tensor<8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %168 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%167 : tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.mulf %in, %cst_12 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %169 = linalg.generic {indexing_maps = [#map3, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%167 : tensor<2x8x8xf64>) outs(%11 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %170 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%167, %166 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %171 = linalg.generic {indexing_maps = [#map3, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%170 : tensor<2x8x8xf64>) outs(%11 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %172 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%166, %171 : tensor<2x8x8xf64>, tensor<2x8x1xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %173 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%168, %169 : tensor<2x8x8xf64>, tensor<2x8x1xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %174 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%173, %172 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %175 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%113 : tensor<2x8x1xf64>) outs(%10 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.divf %in, %cst_12 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %176 = linalg.generic {indexing_maps = [#map6, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%175, %174 : tensor<2x8x1xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %177 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_55, %166 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %178 = tensor.empty() : tensor<8xf64>
    %179 = linalg.fill ins(%cst : f64) outs(%178 : tensor<8xf64>) -> tensor<8xf64>
    %180 = linalg.generic {indexing_maps = [#map3, #map7], iterator_types = ["reduction", "reduction", "parallel"]} ins(%177 : tensor<2x8x8xf64>) outs(%179 : tensor<8xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<8xf64>
    %181 = linalg.generic {indexing_maps = [#map3, #map7], iterator_types = ["reduction", "reduction", "parallel"]} ins(%expanded_55 : tensor<2x8x8xf64>) outs(%179 : tensor<8xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<8xf64>
    %collapsed_56 = tensor.collapse_shape %176 [[0, 1], [2]] : tensor<2x8x8xf64> into tensor<16x8xf64>
    %182 = linalg.matmul ins(%collapsed_56, %arg12 : tensor<16x8xf64>, tensor<8x32xf64>) outs(%88 : tensor<16x32xf64>) -> tensor<16x32xf64>
    %183 = tensor.empty() : tensor<8x16xf64>
    %transposed_57 = linalg.transpose ins(%collapsed_56 : tensor<16x8xf64>) outs(%183 : tensor<8x16xf64>) permutation = [1, 0] 
    %184 = linalg.fill ins(%cst : f64) outs(%86 : tensor<8x32xf64>) -> tensor<8x32xf64>
    %185 = linalg.matmul ins(%transposed_57, %collapsed_43 : tensor<8x16xf64>, tensor<16x32xf64>) outs(%184 : tensor<8x32xf64>) -> tensor<8x32xf64>
    %186 = tensor.empty() : tensor<1x8xf64>
    %187 = linalg.fill ins(%cst : f64) outs(%186 : tensor<1x8xf64>) -> tensor<1x8xf64>
    %188 = linalg.generic {indexing_maps = [#map, #map10], iterator_types = ["reduction", "parallel"]} ins(%collapsed_56 : tensor<16x8xf64>) outs(%187 : tensor<1x8xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<1x8xf64>
    %collapsed_58 = tensor.collapse_shape %188 [[0, 1]] : tensor<1x8xf64> into tensor<8xf64>
    %expanded_59 = tensor.expand_shape %182 [[0, 1], [2]] output_shape [2, 8, 32] : tensor<16x32xf64> into tensor<2x8x32xf64>
    %189 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_42, %expanded_42 : tensor<2x8x32xf64>, tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %190 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%189, %expanded_42 : tensor<2x8x32xf64>, tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %191 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%190 : tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.mulf %in, %cst_9 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %192 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_42, %191 : tensor<2x8x32xf64>, tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %193 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%192 : tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.mulf %in, %cst_8 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %194 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%193 : tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = math.tanh %in : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %195 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%194 : tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %cst_13 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %196 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%195 : tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.mulf %in, %cst_7 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %197 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%194, %194 : tensor<2x8x32xf64>, tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %198 = linalg.generic {indexing_maps = [#map18, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_14, %197 : tensor<i64>, tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: i64, %in_95: f64, %out: f64):
      %279 = arith.sitofp %in : i64 to f64
      %280 = arith.subf %279, %in_95 : f64
      linalg.yield %280 : f64
    } -> tensor<2x8x32xf64>
    %199 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%189 : tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.mulf %in, %cst_6 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %200 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%199 : tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %cst_13 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %201 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%200 : tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.mulf %in, %cst_8 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %202 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%97, %198 : tensor<2x8x32xf64>, tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %203 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%202, %201 : tensor<2x8x32xf64>, tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %204 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%196, %203 : tensor<2x8x32xf64>, tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %205 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_59, %204 : tensor<2x8x32xf64>, tensor<2x8x32xf64>) outs(%91 : tensor<2x8x32xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x32xf64>
    %collapsed_60 = tensor.collapse_shape %205 [[0, 1], [2]] : tensor<2x8x32xf64> into tensor<16x32xf64>
    %206 = linalg.matmul ins(%collapsed_60, %arg10 : tensor<16x32xf64>, tensor<32x8xf64>) outs(%69 : tensor<16x8xf64>) -> tensor<16x8xf64>
    %207 = tensor.empty() : tensor<32x16xf64>
    %transposed_61 = linalg.transpose ins(%collapsed_60 : tensor<16x32xf64>) outs(%207 : tensor<32x16xf64>) permutation = [1, 0] 
    %208 = linalg.fill ins(%cst : f64) outs(%101 : tensor<32x8xf64>) -> tensor<32x8xf64>
    %209 = linalg.matmul ins(%transposed_61, %collapsed_40 : tensor<32x16xf64>, tensor<16x8xf64>) outs(%208 : tensor<32x8xf64>) -> tensor<32x8xf64>
    %210 = tensor.empty() : tensor<1x32xf64>
    %211 = linalg.fill ins(%cst : f64) outs(%210 : tensor<1x32xf64>) -> tensor<1x32xf64>
    %212 = linalg.generic {indexing_maps = [#map, #map10], iterator_types = ["reduction", "parallel"]} ins(%collapsed_60 : tensor<16x32xf64>) outs(%211 : tensor<1x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<1x32xf64>
    %collapsed_62 = tensor.collapse_shape %212 [[0, 1]] : tensor<1x32xf64> into tensor<32xf64>
    %expanded_63 = tensor.expand_shape %206 [[0, 1], [2]] output_shape [2, 8, 8] : tensor<16x8xf64> into tensor<2x8x8xf64>
    %213 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%72, %74 : tensor<2x8x8xf64>, tensor<2x8x1xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %214 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%213, %81 : tensor<2x8x8xf64>, tensor<2x8x1xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %215 = linalg.generic {indexing_maps = [#map3, #map7, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_63, %arg8 : tensor<2x8x8xf64>, tensor<8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %216 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%215 : tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.mulf %in, %cst_12 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %217 = linalg.generic {indexing_maps = [#map3, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%215 : tensor<2x8x8xf64>) outs(%11 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %218 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%215, %214 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %219 = linalg.generic {indexing_maps = [#map3, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%218 : tensor<2x8x8xf64>) outs(%11 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %220 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%214, %219 : tensor<2x8x8xf64>, tensor<2x8x1xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %221 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%216, %217 : tensor<2x8x8xf64>, tensor<2x8x1xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %222 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%221, %220 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %223 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%81 : tensor<2x8x1xf64>) outs(%10 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.divf %in, %cst_12 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %224 = linalg.generic {indexing_maps = [#map6, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%223, %222 : tensor<2x8x1xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %225 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_63, %214 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %226 = linalg.generic {indexing_maps = [#map3, #map7], iterator_types = ["reduction", "reduction", "parallel"]} ins(%225 : tensor<2x8x8xf64>) outs(%179 : tensor<8xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<8xf64>
    %227 = linalg.generic {indexing_maps = [#map3, #map7], iterator_types = ["reduction", "reduction", "parallel"]} ins(%expanded_63 : tensor<2x8x8xf64>) outs(%179 : tensor<8xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<8xf64>
    %228 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%176, %224 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %collapsed_64 = tensor.collapse_shape %228 [[0, 1], [2]] : tensor<2x8x8xf64> into tensor<16x8xf64>
    %229 = linalg.matmul ins(%collapsed_64, %arg6 : tensor<16x8xf64>, tensor<8x8xf64>) outs(%69 : tensor<16x8xf64>) -> tensor<16x8xf64>
    %transposed_65 = linalg.transpose ins(%collapsed_64 : tensor<16x8xf64>) outs(%183 : tensor<8x16xf64>) permutation = [1, 0] 
    %230 = linalg.fill ins(%cst : f64) outs(%7 : tensor<8x8xf64>) -> tensor<8x8xf64>
    %231 = linalg.matmul ins(%transposed_65, %collapsed_35 : tensor<8x16xf64>, tensor<16x8xf64>) outs(%230 : tensor<8x8xf64>) -> tensor<8x8xf64>
    %232 = linalg.generic {indexing_maps = [#map, #map10], iterator_types = ["reduction", "parallel"]} ins(%collapsed_64 : tensor<16x8xf64>) outs(%187 : tensor<1x8xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<1x8xf64>
    %collapsed_66 = tensor.collapse_shape %232 [[0, 1]] : tensor<1x8xf64> into tensor<8xf64>
    %expanded_67 = tensor.expand_shape %229 [[0, 1], [2, 3]] output_shape [2, 8, 2, 4] : tensor<16x8xf64> into tensor<2x8x2x4xf64>
    %transposed_68 = linalg.transpose ins(%expanded_67 : tensor<2x8x2x4xf64>) outs(%30 : tensor<2x2x8x4xf64>) permutation = [0, 2, 1, 3] 
    %collapsed_69 = tensor.collapse_shape %transposed_68 [[0, 1], [2], [3]] : tensor<2x2x8x4xf64> into tensor<4x8x4xf64>
    %transposed_70 = linalg.transpose ins(%collapsed_31 : tensor<4x8x8xf64>) outs(%40 : tensor<4x8x8xf64>) permutation = [0, 2, 1] 
    %233 = linalg.batch_matmul ins(%transposed_70, %collapsed_69 : tensor<4x8x8xf64>, tensor<4x8x4xf64>) outs(%65 : tensor<4x8x4xf64>) -> tensor<4x8x4xf64>
    %234 = tensor.empty() : tensor<4x4x8xf64>
    %transposed_71 = linalg.transpose ins(%collapsed_32 : tensor<4x8x4xf64>) outs(%234 : tensor<4x4x8xf64>) permutation = [0, 2, 1] 
    %235 = linalg.batch_matmul ins(%collapsed_69, %transposed_71 : tensor<4x8x4xf64>, tensor<4x4x8xf64>) outs(%41 : tensor<4x8x8xf64>) -> tensor<4x8x8xf64>
    %expanded_72 = tensor.expand_shape %233 [[0, 1], [2], [3]] output_shape [2, 2, 8, 4] : tensor<4x8x4xf64> into tensor<2x2x8x4xf64>
    %expanded_73 = tensor.expand_shape %235 [[0, 1], [2], [3]] output_shape [2, 2, 8, 8] : tensor<4x8x8xf64> into tensor<2x2x8x8xf64>
    %236 = linalg.generic {indexing_maps = [#map9, #map9, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_73, %63 : tensor<2x2x8x8xf64>, tensor<2x2x8x8xf64>) outs(%43 : tensor<2x2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x2x8x8xf64>
    %237 = linalg.generic {indexing_maps = [#map9, #map15], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%236 : tensor<2x2x8x8xf64>) outs(%53 : tensor<2x2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<2x2x8x1xf64>
    %238 = linalg.generic {indexing_maps = [#map9, #map15, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%63, %237 : tensor<2x2x8x8xf64>, tensor<2x2x8x1xf64>) outs(%43 : tensor<2x2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x2x8x8xf64>
    %239 = linalg.generic {indexing_maps = [#map9, #map9, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%236, %238 : tensor<2x2x8x8xf64>, tensor<2x2x8x8xf64>) outs(%43 : tensor<2x2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x2x8x8xf64>
    %collapsed_74 = tensor.collapse_shape %239 [[0, 1], [2], [3]] : tensor<2x2x8x8xf64> into tensor<4x8x8xf64>
    %transposed_75 = linalg.transpose ins(%collapsed_27 : tensor<4x8x4xf64>) outs(%234 : tensor<4x4x8xf64>) permutation = [0, 2, 1] 
    %240 = linalg.fill ins(%cst : f64) outs(%234 : tensor<4x4x8xf64>) -> tensor<4x4x8xf64>
    %241 = linalg.batch_matmul ins(%transposed_75, %collapsed_74 : tensor<4x4x8xf64>, tensor<4x8x8xf64>) outs(%240 : tensor<4x4x8xf64>) -> tensor<4x4x8xf64>
    %transposed_76 = linalg.transpose ins(%collapsed_28 : tensor<4x4x8xf64>) outs(%64 : tensor<4x8x4xf64>) permutation = [0, 2, 1] 
    %242 = linalg.batch_matmul ins(%collapsed_74, %transposed_76 : tensor<4x8x8xf64>, tensor<4x8x4xf64>) outs(%65 : tensor<4x8x4xf64>) -> tensor<4x8x4xf64>
    %expanded_77 = tensor.expand_shape %241 [[0, 1], [2], [3]] output_shape [2, 2, 4, 8] : tensor<4x4x8xf64> into tensor<2x2x4x8xf64>
    %expanded_78 = tensor.expand_shape %242 [[0, 1], [2], [3]] output_shape [2, 2, 8, 4] : tensor<4x8x4xf64> into tensor<2x2x8x4xf64>
    %243 = linalg.generic {indexing_maps = [#map9, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_77 : tensor<2x2x4x8xf64>) outs(%38 : tensor<2x2x4x8xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.mulf %in, %cst_10 : f64
      linalg.yield %279 : f64
    } -> tensor<2x2x4x8xf64>
    %244 = linalg.generic {indexing_maps = [#map9, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_78 : tensor<2x2x8x4xf64>) outs(%30 : tensor<2x2x8x4xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.mulf %in, %cst_10 : f64
      linalg.yield %279 : f64
    } -> tensor<2x2x8x4xf64>
    %transposed_79 = linalg.transpose ins(%expanded_72 : tensor<2x2x8x4xf64>) outs(%67 : tensor<2x8x2x4xf64>) permutation = [0, 2, 1, 3] 
    %collapsed_80 = tensor.collapse_shape %transposed_79 [[0], [1], [2, 3]] : tensor<2x8x2x4xf64> into tensor<2x8x8xf64>
    %transposed_81 = linalg.transpose ins(%244 : tensor<2x2x8x4xf64>) outs(%67 : tensor<2x8x2x4xf64>) permutation = [0, 2, 1, 3] 
    %collapsed_82 = tensor.collapse_shape %transposed_81 [[0], [1], [2, 3]] : tensor<2x8x2x4xf64> into tensor<2x8x8xf64>
    %transposed_83 = linalg.transpose ins(%243 : tensor<2x2x4x8xf64>) outs(%67 : tensor<2x8x2x4xf64>) permutation = [0, 3, 1, 2] 
    %collapsed_84 = tensor.collapse_shape %transposed_83 [[0], [1], [2, 3]] : tensor<2x8x2x4xf64> into tensor<2x8x8xf64>
    %concat = tensor.concat dim(2) %collapsed_82, %collapsed_84, %collapsed_80 : (tensor<2x8x8xf64>, tensor<2x8x8xf64>, tensor<2x8x8xf64>) -> tensor<2x8x24xf64>
    %collapsed_85 = tensor.collapse_shape %concat [[0, 1], [2]] : tensor<2x8x24xf64> into tensor<16x24xf64>
    %245 = linalg.matmul ins(%collapsed_85, %arg4 : tensor<16x24xf64>, tensor<24x8xf64>) outs(%69 : tensor<16x8xf64>) -> tensor<16x8xf64>
    %246 = tensor.empty() : tensor<24x16xf64>
    %transposed_86 = linalg.transpose ins(%collapsed_85 : tensor<16x24xf64>) outs(%246 : tensor<24x16xf64>) permutation = [1, 0] 
    %247 = tensor.empty() : tensor<24x8xf64>
    %248 = linalg.fill ins(%cst : f64) outs(%247 : tensor<24x8xf64>) -> tensor<24x8xf64>
    %249 = linalg.matmul ins(%transposed_86, %collapsed_16 : tensor<24x16xf64>, tensor<16x8xf64>) outs(%248 : tensor<24x8xf64>) -> tensor<24x8xf64>
    %250 = tensor.empty() : tensor<1x24xf64>
    %251 = linalg.fill ins(%cst : f64) outs(%250 : tensor<1x24xf64>) -> tensor<1x24xf64>
    %252 = linalg.generic {indexing_maps = [#map, #map10], iterator_types = ["reduction", "parallel"]} ins(%collapsed_85 : tensor<16x24xf64>) outs(%251 : tensor<1x24xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<1x24xf64>
    %collapsed_87 = tensor.collapse_shape %252 [[0, 1]] : tensor<1x24xf64> into tensor<24xf64>
    %expanded_88 = tensor.expand_shape %245 [[0, 1], [2]] output_shape [2, 8, 8] : tensor<16x8xf64> into tensor<2x8x8xf64>
    %253 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%9, %13 : tensor<2x8x8xf64>, tensor<2x8x1xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %254 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%253, %20 : tensor<2x8x8xf64>, tensor<2x8x1xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %255 = linalg.generic {indexing_maps = [#map3, #map7, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_88, %arg2 : tensor<2x8x8xf64>, tensor<8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %256 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%255 : tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.mulf %in, %cst_12 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %257 = linalg.generic {indexing_maps = [#map3, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%255 : tensor<2x8x8xf64>) outs(%11 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %258 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%255, %254 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %259 = linalg.generic {indexing_maps = [#map3, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%258 : tensor<2x8x8xf64>) outs(%11 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %260 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%254, %259 : tensor<2x8x8xf64>, tensor<2x8x1xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %261 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%256, %257 : tensor<2x8x8xf64>, tensor<2x8x1xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %262 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%261, %260 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.subf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %263 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%20 : tensor<2x8x1xf64>) outs(%10 : tensor<2x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.divf %in, %cst_12 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x1xf64>
    %264 = linalg.generic {indexing_maps = [#map6, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%263, %262 : tensor<2x8x1xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %265 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_88, %254 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.mulf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %266 = linalg.generic {indexing_maps = [#map3, #map7], iterator_types = ["reduction", "reduction", "parallel"]} ins(%265 : tensor<2x8x8xf64>) outs(%179 : tensor<8xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<8xf64>
    %267 = linalg.generic {indexing_maps = [#map3, #map7], iterator_types = ["reduction", "reduction", "parallel"]} ins(%expanded_88 : tensor<2x8x8xf64>) outs(%179 : tensor<8xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<8xf64>
    %268 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%228, %264 : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%5 : tensor<2x8x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<2x8x8xf64>
    %269 = tensor.empty() : tensor<1x8x8xf64>
    %270 = linalg.fill ins(%cst : f64) outs(%269 : tensor<1x8x8xf64>) -> tensor<1x8x8xf64>
    %271 = linalg.generic {indexing_maps = [#map3, #map19], iterator_types = ["reduction", "parallel", "parallel"]} ins(%268 : tensor<2x8x8xf64>) outs(%270 : tensor<1x8x8xf64>) {
    ^bb0(%in: f64, %out: f64):
      %279 = arith.addf %in, %out : f64
      linalg.yield %279 : f64
    } -> tensor<1x8x8xf64>
    %collapsed_89 = tensor.collapse_shape %271 [[0, 1], [2]] : tensor<1x8x8xf64> into tensor<8x8xf64>
    %272 = linalg.generic {indexing_maps = [#map11, #map8, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded_25, %4 : tensor<8x1xi64>, tensor<8xi64>) outs(%34 : tensor<8x8xi1>) {
    ^bb0(%in: i64, %in_95: i64, %out: i1):
      %279 = arith.cmpi eq, %in, %in_95 : i64
      linalg.yield %279 : i1
    } -> tensor<8x8xi1>
    %273 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%272 : tensor<8x8xi1>) outs(%7 : tensor<8x8xf64>) {
    ^bb0(%in: i1, %out: f64):
      %279 = arith.uitofp %in : i1 to f64
      linalg.yield %279 : f64
    } -> tensor<8x8xf64>
    %transposed_90 = linalg.transpose ins(%273 : tensor<8x8xf64>) outs(%7 : tensor<8x8xf64>) permutation = [1, 0] 
    %274 = linalg.matmul ins(%transposed_90, %collapsed_89 : tensor<8x8xf64>, tensor<8x8xf64>) outs(%230 : tensor<8x8xf64>) -> tensor<8x8xf64>
    %collapsed_91 = tensor.collapse_shape %1 [[0, 1]] : tensor<2x8xi64> into tensor<16xi64>
    %expanded_92 = tensor.expand_shape %collapsed_91 [[0, 1]] output_shape [16, 1] : tensor<16xi64> into tensor<16x1xi64>
    %275 = linalg.generic {indexing_maps = [#map11, #map8, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded_92, %138 : tensor<16x1xi64>, tensor<64xi64>) outs(%139 : tensor<16x64xi1>) {
    ^bb0(%in: i64, %in_95: i64, %out: i1):
      %279 = arith.cmpi eq, %in, %in_95 : i64
      linalg.yield %279 : i1
    } -> tensor<16x64xi1>
    %276 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%275 : tensor<16x64xi1>) outs(%119 : tensor<16x64xf64>) {
    ^bb0(%in: i1, %out: f64):
      %279 = arith.uitofp %in : i1 to f64
      linalg.yield %279 : f64
    } -> tensor<16x64xf64>
    %transposed_93 = linalg.transpose ins(%276 : tensor<16x64xf64>) outs(%160 : tensor<64x16xf64>) permutation = [1, 0] 
    %collapsed_94 = tensor.collapse_shape %268 [[0, 1], [2]] : tensor<2x8x8xf64> into tensor<16x8xf64>
    %277 = linalg.matmul ins(%transposed_93, %collapsed_94 : tensor<64x16xf64>, tensor<16x8xf64>) outs(%162 : tensor<64x8xf64>) -> tensor<64x8xf64>
    %278 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%163, %277 : tensor<64x8xf64>, tensor<64x8xf64>) outs(%161 : tensor<64x8xf64>) {
    ^bb0(%in: f64, %in_95: f64, %out: f64):
      %279 = arith.addf %in, %in_95 : f64
      linalg.yield %279 : f64
    } -> tensor<64x8xf64>
    return %151, %278, %274, %266, %267, %249, %collapsed_87, %231, %collapsed_66, %226, %227, %209, %collapsed_62, %185, %collapsed_58, %180, %181 : tensor<f64>, tensor<64x8xf64>, tensor<8x8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<24x8xf64>, tensor<24xf64>, tensor<8x8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<32x8xf64>, tensor<32xf64>, tensor<8x32xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>
  }
  func.func @optimizer(%arg0: tensor<64x8xf64> {zero.param = "transformer.wte.weight"}, %arg1: tensor<8x8xf64> {zero.param = "transformer.wpe.weight"}, %arg2: tensor<8xf64> {zero.param = "transformer.h.0.ln_1.weight"}, %arg3: tensor<8xf64> {zero.param = "transformer.h.0.ln_1.bias"}, %arg4: tensor<24x8xf64> {zero.param = "transformer.h.0.attn.c_attn.weight"}, %arg5: tensor<24xf64> {zero.param = "transformer.h.0.attn.c_attn.bias"}, %arg6: tensor<8x8xf64> {zero.param = "transformer.h.0.attn.c_proj.weight"}, %arg7: tensor<8xf64> {zero.param = "transformer.h.0.attn.c_proj.bias"}, %arg8: tensor<8xf64> {zero.param = "transformer.h.0.ln_2.weight"}, %arg9: tensor<8xf64> {zero.param = "transformer.h.0.ln_2.bias"}, %arg10: tensor<32x8xf64> {zero.param = "transformer.h.0.mlp.c_fc.weight"}, %arg11: tensor<32xf64> {zero.param = "transformer.h.0.mlp.c_fc.bias"}, %arg12: tensor<8x32xf64> {zero.param = "transformer.h.0.mlp.c_proj.weight"}, %arg13: tensor<8xf64> {zero.param = "transformer.h.0.mlp.c_proj.bias"}, %arg14: tensor<8xf64> {zero.param = "transformer.ln_f.weight"}, %arg15: tensor<8xf64> {zero.param = "transformer.ln_f.bias"}, %arg16: tensor<64x8xf64> {zero.grad = "transformer.wte.weight"}, %arg17: tensor<8x8xf64> {zero.grad = "transformer.wpe.weight"}, %arg18: tensor<8xf64> {zero.grad = "transformer.h.0.ln_1.weight"}, %arg19: tensor<8xf64> {zero.grad = "transformer.h.0.ln_1.bias"}, %arg20: tensor<24x8xf64> {zero.grad = "transformer.h.0.attn.c_attn.weight"}, %arg21: tensor<24xf64> {zero.grad = "transformer.h.0.attn.c_attn.bias"}, %arg22: tensor<8x8xf64> {zero.grad = "transformer.h.0.attn.c_proj.weight"}, %arg23: tensor<8xf64> {zero.grad = "transformer.h.0.attn.c_proj.bias"}, %arg24: tensor<8xf64> {zero.grad = "transformer.h.0.ln_2.weight"}, %arg25: tensor<8xf64> {zero.grad = "transformer.h.0.ln_2.bias"}, %arg26: tensor<32x8xf64> {zero.grad = "transformer.h.0.mlp.c_fc.weight"}, %arg27: tensor<32xf64> {zero.grad = "transformer.h.0.mlp.c_fc.bias"}, %arg28: tensor<8x32xf64> {zero.grad = "transformer.h.0.mlp.c_proj.weight"}, %arg29: tensor<8xf64> {zero.grad = "transformer.h.0.mlp.c_proj.bias"}, %arg30: tensor<8xf64> {zero.grad = "transformer.ln_f.weight"}, %arg31: tensor<8xf64> {zero.grad = "transformer.ln_f.bias"}, %arg32: tensor<64x8xf64> {zero.state = {kind = "exp_avg", param = "transformer.wte.weight"}}, %arg33: tensor<64x8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.wte.weight"}}, %arg34: tensor<8x8xf64> {zero.state = {kind = "exp_avg", param = "transformer.wpe.weight"}}, %arg35: tensor<8x8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.wpe.weight"}}, %arg36: tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.ln_1.weight"}}, %arg37: tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.ln_1.weight"}}, %arg38: tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.ln_1.bias"}}, %arg39: tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.ln_1.bias"}}, %arg40: tensor<24x8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.attn.c_attn.weight"}}, %arg41: tensor<24x8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.attn.c_attn.weight"}}, %arg42: tensor<24xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.attn.c_attn.bias"}}, %arg43: tensor<24xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.attn.c_attn.bias"}}, %arg44: tensor<8x8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.attn.c_proj.weight"}}, %arg45: tensor<8x8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.attn.c_proj.weight"}}, %arg46: tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.attn.c_proj.bias"}}, %arg47: tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.attn.c_proj.bias"}}, %arg48: tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.ln_2.weight"}}, %arg49: tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.ln_2.weight"}}, %arg50: tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.ln_2.bias"}}, %arg51: tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.ln_2.bias"}}, %arg52: tensor<32x8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.mlp.c_fc.weight"}}, %arg53: tensor<32x8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.mlp.c_fc.weight"}}, %arg54: tensor<32xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.mlp.c_fc.bias"}}, %arg55: tensor<32xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.mlp.c_fc.bias"}}, %arg56: tensor<8x32xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.mlp.c_proj.weight"}}, %arg57: tensor<8x32xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.mlp.c_proj.weight"}}, %arg58: tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.mlp.c_proj.bias"}}, %arg59: tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.mlp.c_proj.bias"}}, %arg60: tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.ln_f.weight"}}, %arg61: tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.ln_f.weight"}}, %arg62: tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.ln_f.bias"}}, %arg63: tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.ln_f.bias"}}, %arg64: f64 {zero.hyper = "lr", zero.hyper_default = 1.000000e-03 : f64}, %arg65: f64 {zero.hyper = "beta1", zero.hyper_default = 9.000000e-01 : f64}, %arg66: f64 {zero.hyper = "beta2", zero.hyper_default = 0.99899999999999999 : f64}, %arg67: f64 {zero.hyper = "eps", zero.hyper_default = 1.000000e-08 : f64}, %arg68: f64 {zero.hyper = "weight_decay", zero.hyper_default = 1.000000e-02 : f64}, %arg69: f64 {zero.hyper = "step"}) -> (tensor<64x8xf64> {zero.param = "transformer.wte.weight"}, tensor<8x8xf64> {zero.param = "transformer.wpe.weight"}, tensor<8xf64> {zero.param = "transformer.h.0.ln_1.weight"}, tensor<8xf64> {zero.param = "transformer.h.0.ln_1.bias"}, tensor<24x8xf64> {zero.param = "transformer.h.0.attn.c_attn.weight"}, tensor<24xf64> {zero.param = "transformer.h.0.attn.c_attn.bias"}, tensor<8x8xf64> {zero.param = "transformer.h.0.attn.c_proj.weight"}, tensor<8xf64> {zero.param = "transformer.h.0.attn.c_proj.bias"}, tensor<8xf64> {zero.param = "transformer.h.0.ln_2.weight"}, tensor<8xf64> {zero.param = "transformer.h.0.ln_2.bias"}, tensor<32x8xf64> {zero.param = "transformer.h.0.mlp.c_fc.weight"}, tensor<32xf64> {zero.param = "transformer.h.0.mlp.c_fc.bias"}, tensor<8x32xf64> {zero.param = "transformer.h.0.mlp.c_proj.weight"}, tensor<8xf64> {zero.param = "transformer.h.0.mlp.c_proj.bias"}, tensor<8xf64> {zero.param = "transformer.ln_f.weight"}, tensor<8xf64> {zero.param = "transformer.ln_f.bias"}, tensor<64x8xf64> {zero.state = {kind = "exp_avg", param = "transformer.wte.weight"}}, tensor<64x8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.wte.weight"}}, tensor<8x8xf64> {zero.state = {kind = "exp_avg", param = "transformer.wpe.weight"}}, tensor<8x8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.wpe.weight"}}, tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.ln_1.weight"}}, tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.ln_1.weight"}}, tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.ln_1.bias"}}, tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.ln_1.bias"}}, tensor<24x8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.attn.c_attn.weight"}}, tensor<24x8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.attn.c_attn.weight"}}, tensor<24xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.attn.c_attn.bias"}}, tensor<24xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.attn.c_attn.bias"}}, tensor<8x8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.attn.c_proj.weight"}}, tensor<8x8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.attn.c_proj.weight"}}, tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.attn.c_proj.bias"}}, tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.attn.c_proj.bias"}}, tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.ln_2.weight"}}, tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.ln_2.weight"}}, tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.ln_2.bias"}}, tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.ln_2.bias"}}, tensor<32x8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.mlp.c_fc.weight"}}, tensor<32x8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.mlp.c_fc.weight"}}, tensor<32xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.mlp.c_fc.bias"}}, tensor<32xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.mlp.c_fc.bias"}}, tensor<8x32xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.mlp.c_proj.weight"}}, tensor<8x32xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.mlp.c_proj.weight"}}, tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.h.0.mlp.c_proj.bias"}}, tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.h.0.mlp.c_proj.bias"}}, tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.ln_f.weight"}}, tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.ln_f.weight"}}, tensor<8xf64> {zero.state = {kind = "exp_avg", param = "transformer.ln_f.bias"}}, tensor<8xf64> {zero.state = {kind = "exp_avg_sq", param = "transformer.ln_f.bias"}}) attributes {zero.role = "optimizer"} {
    %cst = arith.constant 1.000000e+00 : f64
    %0 = math.powf %arg65, %arg69 : f64
    %1 = arith.subf %cst, %0 : f64
    %2 = math.powf %arg66, %arg69 : f64
    %3 = arith.subf %cst, %2 : f64
    %4 = math.sqrt %3 : f64
    %5 = arith.divf %arg64, %1 : f64
    %6 = arith.mulf %arg64, %arg68 : f64
    %7 = arith.subf %cst, %6 : f64
    %8 = arith.subf %cst, %arg65 : f64
    %9 = arith.subf %cst, %arg66 : f64
    %10:3 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg16 : tensor<64x8xf64>) outs(%arg0, %arg32, %arg33 : tensor<64x8xf64>, tensor<64x8xf64>, tensor<64x8xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<64x8xf64>, tensor<64x8xf64>, tensor<64x8xf64>)
    %11:3 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg17 : tensor<8x8xf64>) outs(%arg1, %arg34, %arg35 : tensor<8x8xf64>, tensor<8x8xf64>, tensor<8x8xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<8x8xf64>, tensor<8x8xf64>, tensor<8x8xf64>)
    %12:3 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel"]} ins(%arg18 : tensor<8xf64>) outs(%arg2, %arg36, %arg37 : tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<8xf64>, tensor<8xf64>, tensor<8xf64>)
    %13:3 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel"]} ins(%arg19 : tensor<8xf64>) outs(%arg3, %arg38, %arg39 : tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<8xf64>, tensor<8xf64>, tensor<8xf64>)
    %14:3 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg20 : tensor<24x8xf64>) outs(%arg4, %arg40, %arg41 : tensor<24x8xf64>, tensor<24x8xf64>, tensor<24x8xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<24x8xf64>, tensor<24x8xf64>, tensor<24x8xf64>)
    %15:3 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel"]} ins(%arg21 : tensor<24xf64>) outs(%arg5, %arg42, %arg43 : tensor<24xf64>, tensor<24xf64>, tensor<24xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<24xf64>, tensor<24xf64>, tensor<24xf64>)
    %16:3 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg22 : tensor<8x8xf64>) outs(%arg6, %arg44, %arg45 : tensor<8x8xf64>, tensor<8x8xf64>, tensor<8x8xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<8x8xf64>, tensor<8x8xf64>, tensor<8x8xf64>)
    %17:3 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel"]} ins(%arg23 : tensor<8xf64>) outs(%arg7, %arg46, %arg47 : tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<8xf64>, tensor<8xf64>, tensor<8xf64>)
    %18:3 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel"]} ins(%arg24 : tensor<8xf64>) outs(%arg8, %arg48, %arg49 : tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<8xf64>, tensor<8xf64>, tensor<8xf64>)
    %19:3 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel"]} ins(%arg25 : tensor<8xf64>) outs(%arg9, %arg50, %arg51 : tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<8xf64>, tensor<8xf64>, tensor<8xf64>)
    %20:3 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg26 : tensor<32x8xf64>) outs(%arg10, %arg52, %arg53 : tensor<32x8xf64>, tensor<32x8xf64>, tensor<32x8xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<32x8xf64>, tensor<32x8xf64>, tensor<32x8xf64>)
    %21:3 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel"]} ins(%arg27 : tensor<32xf64>) outs(%arg11, %arg54, %arg55 : tensor<32xf64>, tensor<32xf64>, tensor<32xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<32xf64>, tensor<32xf64>, tensor<32xf64>)
    %22:3 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg28 : tensor<8x32xf64>) outs(%arg12, %arg56, %arg57 : tensor<8x32xf64>, tensor<8x32xf64>, tensor<8x32xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<8x32xf64>, tensor<8x32xf64>, tensor<8x32xf64>)
    %23:3 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel"]} ins(%arg29 : tensor<8xf64>) outs(%arg13, %arg58, %arg59 : tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<8xf64>, tensor<8xf64>, tensor<8xf64>)
    %24:3 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel"]} ins(%arg30 : tensor<8xf64>) outs(%arg14, %arg60, %arg61 : tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<8xf64>, tensor<8xf64>, tensor<8xf64>)
    %25:3 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel"]} ins(%arg31 : tensor<8xf64>) outs(%arg15, %arg62, %arg63 : tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) {
    ^bb0(%in: f64, %out: f64, %out_0: f64, %out_1: f64):
      %26 = arith.mulf %out, %7 : f64
      %27 = arith.subf %in, %out_0 : f64
      %28 = arith.mulf %8, %27 : f64
      %29 = arith.addf %out_0, %28 : f64
      %30 = arith.mulf %arg66, %out_1 : f64
      %31 = arith.mulf %in, %in : f64
      %32 = arith.mulf %9, %31 : f64
      %33 = arith.addf %30, %32 : f64
      %34 = math.sqrt %33 : f64
      %35 = arith.divf %34, %4 : f64
      %36 = arith.addf %35, %arg67 : f64
      %37 = arith.divf %29, %36 : f64
      %38 = arith.mulf %5, %37 : f64
      %39 = arith.subf %26, %38 : f64
      linalg.yield %39, %29, %33 : f64, f64, f64
    } -> (tensor<8xf64>, tensor<8xf64>, tensor<8xf64>)
    return %10#0, %11#0, %12#0, %13#0, %14#0, %15#0, %16#0, %17#0, %18#0, %19#0, %20#0, %21#0, %22#0, %23#0, %24#0, %25#0, %10#1, %10#2, %11#1, %11#2, %12#1, %12#2, %13#1, %13#2, %14#1, %14#2, %15#1, %15#2, %16#1, %16#2, %17#1, %17#2, %18#1, %18#2, %19#1, %19#2, %20#1, %20#2, %21#1, %21#2, %22#1, %22#2, %23#1, %23#2, %24#1, %24#2, %25#1, %25#2 : tensor<64x8xf64>, tensor<8x8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<24x8xf64>, tensor<24xf64>, tensor<8x8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<32x8xf64>, tensor<32xf64>, tensor<8x32xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<64x8xf64>, tensor<64x8xf64>, tensor<8x8xf64>, tensor<8x8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<24x8xf64>, tensor<24x8xf64>, tensor<24xf64>, tensor<24xf64>, tensor<8x8xf64>, tensor<8x8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<32x8xf64>, tensor<32x8xf64>, tensor<32xf64>, tensor<32xf64>, tensor<8x32xf64>, tensor<8x32xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>
  }
}
