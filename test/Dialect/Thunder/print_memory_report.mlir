// RUN: thunder-opt %s -thunder-schedule -thunder-plan-memory -thunder-print-memory-report -o /dev/null | FileCheck %s
// RUN: thunder-opt %s -thunder-print-memory-report -o /dev/null | FileCheck %s --check-prefix=UNPLANNED
// RUN: thunder-opt %s -thunder-schedule -thunder-plan-memory=borrow-outputs=true -thunder-print-memory-report -o /dev/null | FileCheck %s --check-prefix=BORROW

// UNPLANNED: memory report: no memory plan (thunder-plan-memory has not run

// The totals, then one row per kernel result in schedule order: "neg_1"
// works in place over "exp_0", "gemm_2" reads "neg_1" through a view, and
// "tanh_3" is written into the caller's first output buffer.
// CHECK-LABEL: memory plan of @main: 4 kernels, 4 tensors (3 in the arena)
// CHECK-NEXT:  arena           5.00 KiB  (5120 bytes)  aligned to 64 bytes
// CHECK-NEXT:  lower bound     5.00 KiB  (5120 bytes)  arena / lower bound = 1.000
// CHECK-NEXT:  naive sum       6.00 KiB  (6144 bytes)  every tensor its own buffer
// CHECK-NEXT:  outputs         4.00 KiB  (4096 bytes)  written to the caller's buffers
// CHECK-EMPTY:
// CHECK-NEXT:  tensor       bytes    offset  live    in-place from  type
// CHECK-NEXT:  exp_0#0   1.00 KiB      [[OFF:[0-9]+]]  [0, 1]  -              tensor<256xf32>
// CHECK-NEXT:  neg_1#0   1.00 KiB      [[OFF]]  [1, 2]  exp_0#0        tensor<256xf32>
// CHECK-NEXT:  gemm_2#0  4.00 KiB  {{ *}}[[GEMM:[0-9]+]]  [2, 3]  -              tensor<1024x1xf32>
// CHECK-NEXT:  tanh_3#0  4.00 KiB  output 0  [3, 3]  -              tensor<1024xf32>
// With borrowing, "exp_0" and "neg_1" die before "tanh_3" writes output 0:
// they live in its buffer.
// BORROW-LABEL: memory plan of @main:
// BORROW:       borrowed        1.00 KiB  (1024 bytes)  in output buffers before the outputs are written
// BORROW:       exp_0#0   1.00 KiB  output 0 + 0  [0, 1]
// BORROW-NEXT:  neg_1#0   1.00 KiB  output 0 + 0  [1, 2]  exp_0#0
func.func @main(%x: tensor<256xf32>, %w: tensor<1024x256xf32>) -> (tensor<1024xf32>, tensor<256xf32>) {
  %a = thunder.fusion pointwise "exp_0" (%x) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%i: tensor<256xf32>):
    %r = thunder.exp %i : tensor<256xf32>
    thunder.yield %r : tensor<256xf32>
  }
  %b = thunder.fusion pointwise "neg_1" (%a) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%i: tensor<256xf32>):
    %r = thunder.neg %i : tensor<256xf32>
    thunder.yield %r : tensor<256xf32>
  }
  %bm = thunder.reshape %b : tensor<256xf32> -> tensor<256x1xf32>
  %g = thunder.fusion gemm "gemm_2" (%w, %bm) : (tensor<1024x256xf32>, tensor<256x1xf32>) -> tensor<1024x1xf32> {
  ^bb0(%i: tensor<1024x256xf32>, %j: tensor<256x1xf32>):
    %r = thunder.matmul %i, %j : (tensor<1024x256xf32>, tensor<256x1xf32>) -> tensor<1024x1xf32>
    thunder.yield %r : tensor<1024x1xf32>
  }
  %gv = thunder.reshape %g : tensor<1024x1xf32> -> tensor<1024xf32>
  %c = thunder.fusion pointwise "tanh_3" (%gv) : (tensor<1024xf32>) -> tensor<1024xf32> {
  ^bb0(%i: tensor<1024xf32>):
    %r = thunder.tanh %i : tensor<1024xf32>
    thunder.yield %r : tensor<1024xf32>
  }
  return %c, %x : tensor<1024xf32>, tensor<256xf32>
}

// Dynamic shapes: no sizes before run time.
// CHECK-LABEL: memory plan of @dyn: 2 kernels, 2 tensors (1 in the arena)
// CHECK-NEXT:  arena        packed at run time (dynamic shapes)
// CHECK-NEXT:  outputs      dynamic size, written to the caller's buffers
// CHECK:       exp_0#0  dynamic   runtime  [0, 1]  -              tensor<?x8xf32>
// CHECK-NEXT:  neg_1#0  dynamic  output 0  [1, 1]  -              tensor<?x8xf32>
func.func @dyn(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %a = thunder.fusion pointwise "exp_0" (%x) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
  ^bb0(%i: tensor<?x8xf32>):
    %r = thunder.exp %i : tensor<?x8xf32>
    thunder.yield %r : tensor<?x8xf32>
  }
  %b = thunder.fusion pointwise "neg_1" (%a) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
  ^bb0(%i: tensor<?x8xf32>):
    %r = thunder.neg %i : tensor<?x8xf32>
    thunder.yield %r : tensor<?x8xf32>
  }
  return %b : tensor<?x8xf32>
}
