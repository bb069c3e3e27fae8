// zero-memory-report on the hand-written two-layer model of
// ../zero-partition/Inputs (w1 3x5, w2 5x2: 25 f32 elements, padded 26 on 2
// ranks, 13 per rank), bufferized.
// RUN: zero-opt %S/../zero-partition/Inputs/two-layer.mlir --zero-partition="stage=0 world-size=2" --zero-bufferize-step --zero-memory-report="output=%t.0.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=S0 < %t.0.json
// RUN: zero-opt %S/../zero-partition/Inputs/two-layer.mlir --zero-partition="stage=3 world-size=2" --zero-bufferize-step --zero-memory-report="output=%t.3.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=S3 < %t.3.json
// As a remark:
// RUN: zero-opt %S/../zero-partition/Inputs/two-layer.mlir --zero-partition="stage=2 world-size=2" --zero-bufferize-step --zero-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// The contract functions before partitioning, too:
// RUN: zero-opt %S/../zero-partition/Inputs/two-layer.mlir --zero-bufferize-step --zero-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAIN
// And tensors are refused with a located error:
// RUN: not zero-opt %S/../zero-partition/Inputs/two-layer.mlir --zero-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=TENSORS

// Stage 0: everything full: params 25*4, grads 25*4, momentum 25*4.
// S0:      "function": "train_step"
// S0:      "model_state_bytes": {
// S0-NEXT:   "grads": 100,
// S0-NEXT:   "optimizer_states": 100,
// S0-NEXT:   "params": 100
// S0:      "stage": 0,
// S0-NEXT: "world_size": 2

// Stage 3: every model state sharded: 13 elements per rank (padding
// included), 52 bytes each.
// S3:      "argument_bytes": {
// S3-NEXT:   "activations": 84,
// S3-NEXT:   "optimizer_states": 52,
// S3-NEXT:   "params": 52
// S3:      "model_state_bytes": {
// S3-NEXT:   "grads": 52,
// S3-NEXT:   "optimizer_states": 52,
// S3-NEXT:   "params": 52
// S3:      "predicted_peak_bytes": [[PEAK:[0-9]+]]

// REMARK: remark: zero-memory-report: stage 2 on 2 ranks: model states params 100 grads 52 optimizer_states 52 bytes; generated peak {{[0-9]+}} bytes; predicted peak total {{[0-9]+}} bytes (params {{[0-9]+}}, grads {{[0-9]+}}, optimizer_states 52, activations {{[0-9]+}}, comm {{[0-9]+}})

// PLAIN-DAG: remark: zero-memory-report: model states params 100 grads 100 optimizer_states 0 bytes{{.*}}predicted peak total 604 bytes{{.*}}; run peak 704 bytes with the model states the driver holds across the contract's functions
// PLAIN-DAG: remark: zero-memory-report: model states params 100 grads 100 optimizer_states 100 bytes{{.*}}predicted peak total 428 bytes{{.*}}; run peak 704 bytes

// TENSORS: error: 'func.func' op zero-memory-report needs the bufferized step: run zero-bufferize-step first
