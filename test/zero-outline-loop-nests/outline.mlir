// RUN: zero-opt %s --zero-outline-loop-nests -split-input-file | FileCheck %s
// RUN: zero-opt %s --zero-outline-loop-nests=unoptimized-glue=false -split-input-file | FileCheck %s --check-prefix=OPT
// RUN: zero-gen gpt --preset gpt-tiny --layers 3 | zero-opt --zero-verify --zero-bufferize-step --convert-linalg-to-loops --zero-outline-loop-nests | FileCheck %s --check-prefix=GEN

// Two nests: each becomes a private noinline function with internal
// linkage, called in its place. Constants and the subview are cloned into
// the function (the bounds stay constants), so the arguments are the whole
// buffers; the function that is left keeps its glue and is marked optnone.
// CHECK-LABEL: func.func @step
// CHECK-SAME:    (%[[X:.*]]: memref<4x8xf32>, %[[Y:.*]]: memref<4x8xf32>, %[[S:.*]]: f32)
// CHECK-SAME:    passthrough = ["noinline", "optnone"]
// CHECK-NEXT:    call @step_loop0(%[[X]], %[[Y]], %[[S]]) : (memref<4x8xf32>, memref<4x8xf32>, f32) -> ()
// CHECK-NEXT:    call @step_loop1(%[[Y]]) : (memref<4x8xf32>) -> ()
// CHECK-NEXT:    return
// CHECK:       func.func private @step_loop0(%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>, %{{.*}}: f32)
// CHECK-SAME:    llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]
// CHECK-DAG:     arith.constant 0 : index
// CHECK-DAG:     arith.constant 4 : index
// CHECK:         scf.for
// CHECK:       func.func private @step_loop1(%[[B:.*]]: memref<4x8xf32>)
// CHECK:         memref.subview %[[B]][0, 2] [4, 2] [1, 1]
// CHECK:         scf.parallel
// OPT-LABEL: func.func @step
// OPT-NOT:     optnone
// OPT:       func.func private @step_loop0
func.func @step(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      %w = arith.mulf %v, %s : f32
      memref.store %w, %y[%i, %j] : memref<4x8xf32>
    }
  }
  %view = memref.subview %y[0, 2] [4, 2] [1, 1] : memref<4x8xf32> to memref<4x2xf32, strided<[8, 1], offset: 2>>
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c2) step (%c1, %c1) {
    memref.store %zero, %view[%i, %j] : memref<4x2xf32, strided<[8, 1], offset: 2>>
  }
  return
}

// -----

// Equal nests (the same op of two layers) share one function; a nest that
// differs only in a constant gets its own. Results of a nest (iter_args)
// are the function's results.
// CHECK-LABEL: func.func @layers
// CHECK:         call @layers_loop0(%arg0)
// CHECK:         call @layers_loop0(%arg1)
// CHECK:         %[[R:.*]] = call @layers_loop2(%arg1) : (memref<16xf32>) -> f32
// CHECK:         return %[[R]]
// CHECK-NOT:   func.func private @layers_loop1
// CHECK:       func.func private @layers_loop0
// CHECK-NOT:   func.func private @layers_loop1
// CHECK:       func.func private @layers_loop2(%{{.*}}: memref<16xf32>) -> f32
// CHECK:         %[[SUM:.*]] = scf.for {{.*}} iter_args
// CHECK:         return %[[SUM]] : f32
func.func @layers(%a: memref<16xf32>, %b: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    memref.store %one, %a[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    memref.store %one, %b[%i] : memref<16xf32>
  }
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %b[%i] : memref<16xf32>
    %n = arith.addf %acc, %v : f32
    scf.yield %n : f32
  }
  return %sum : f32
}

// -----

// Nothing to outline: the function is left as it is (no optnone), and so
// are declarations and nests inside other ops.
// CHECK-LABEL: func.func @no_loops
// CHECK-NOT:     passthrough
// CHECK:         scf.if
// CHECK-NEXT:      scf.for
// CHECK-NOT:   func.func private @no_loops_loop0
func.func private @external(memref<4xf32>)
func.func @no_loops(%a: memref<4xf32>, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.if %p {
    scf.for %i = %c0 to %c4 step %c1 {
      memref.store %one, %a[%i] : memref<4xf32>
    }
  }
  call @external(%a) : (memref<4xf32>) -> ()
  return
}

// -----

// A loop whose body calls or allocates is glue (gradient accumulation's loop
// over micro-batches): the nests of its body are outlined first, with its
// induction variable and the values of both blocks as arguments (block
// arguments first, by number; then values as they are defined); then the loop is outlined like any nest, marked optnone
// as glue. A nest is not glue however deep it is.
// CHECK-LABEL: func.func @micro_batches
// CHECK-SAME:    passthrough = ["noinline", "optnone"]
// CHECK-NEXT:    call @micro_batches_loop2(%arg0) : (memref<4x8xf32>) -> ()
// CHECK-NEXT:    return
// CHECK:       func.func private @micro_batches_loop0(%{{.*}}: index, %{{.*}}: memref<4x8xf32>, %{{.*}}: memref<8xf32>)
// CHECK-SAME:    passthrough = ["noinline"]
// CHECK:         scf.for
// CHECK:       func.func private @micro_batches_loop1(%{{.*}}: memref<8xf32>)
// CHECK-SAME:    passthrough = ["noinline"]
// CHECK:       func.func private @micro_batches_loop2(%[[X:.*]]: memref<4x8xf32>)
// CHECK-SAME:    passthrough = ["noinline", "optnone"]
// CHECK:         scf.for %[[K:.*]] =
// CHECK-NEXT:      %[[T:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT:      call @micro_batches_loop0(%[[K]], %[[X]], %[[T]])
// CHECK-NEXT:      call @external_8(%[[T]])
// CHECK-NEXT:      call @micro_batches_loop1(%[[T]])
// CHECK-NEXT:      memref.dealloc %[[T]]
// CHECK-NOT:     scf.for
// CHECK:         return
func.func private @external_8(memref<8xf32>)
func.func @micro_batches(%x: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %k = %c0 to %c4 step %c1 {
    %t = memref.alloc() : memref<8xf32>
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %x[%k, %j] : memref<4x8xf32>
      memref.store %v, %t[%j] : memref<8xf32>
    }
    func.call @external_8(%t) : (memref<8xf32>) -> ()
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %t[%j] : memref<8xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %t[%j] : memref<8xf32>
    }
    memref.dealloc %t : memref<8xf32>
  }
  return
}

// zero-gen's GPT with 3 layers: loop functions are shared between layers,
// so there are fewer functions than nests; the step functions are glue.
// GEN-LABEL: func.func @forward_backward
// GEN-SAME:    passthrough = ["noinline", "optnone"]
// GEN-NOT:     scf.for
// GEN:         call @forward_backward_loop
// GEN-LABEL: func.func @optimizer

// Gradient accumulation (zero-partition accumulate=2): the loop over the
// micro-batches holds the whole forward and backward pass. It is outlined as
// glue around calls, no nest left inside it.
// RUN: zero-gen gpt --preset gpt-tiny | zero-opt --zero-partition="stage=0 world-size=1 accumulate=2" --zero-bufferize-step --convert-linalg-to-loops --zero-outline-loop-nests | FileCheck %s --check-prefix=ACC
// ACC-LABEL: func.func @train_step
// ACC-SAME:    passthrough = ["noinline", "optnone"]
// ACC-NOT:     scf.for
// ACC:         return
// ACC:       func.func private @train_step_loop{{[0-9]+}}({{.*}}passthrough = ["noinline", "optnone"]
// ACC:         scf.for
// ACC-NOT:       scf.{{for|parallel}}
// ACC:         return
