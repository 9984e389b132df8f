// RUN: thunder-opt %s -thunder-plan-memory=library-workspace=8192 -split-input-file | FileCheck %s
// RUN: thunder-opt %s -thunder-plan-memory -split-input-file | FileCheck %s --check-prefix=NONE
// RUN: thunder-opt %s -thunder-schedule -thunder-plan-memory=library-workspace=8192 -split-input-file | FileCheck %s --check-prefix=STREAMS
// RUN: thunder-opt %s -thunder-plan-memory=library-workspace=8192 -split-input-file | thunder-opt -thunder-print-memory-report -split-input-file | FileCheck %s --check-prefix=REPORT

// A gemm kernel's library workspace (cuBLASLt's, cuDNN's) is packed in the
// arena, live at its kernel: here it takes bytes of "a", dead by then, so
// the arena is no larger than without it (20 KiB either way: "a" and "b"
// live together at kernel 1). Each workspace reserves 192 bytes more than
// its size (8192 + 192 = 8384) to start 256-byte aligned (cuBLASLt).

// CHECK-LABEL: func.func @free_bytes
// CHECK-SAME:    thunder.arena = {alignment = 64 : i64, bytes = 20480 : i64, lower_bound = 20480 : i64, naive = 32960 : i64, workspace = 8192 : i64}
// CHECK:         thunder.fusion pointwise "a"
// CHECK-SAME:      thunder.offsets = array<i64: 0>
// CHECK-NOT:       thunder.workspace
// CHECK:         thunder.fusion data_movement "b"
// CHECK-SAME:      thunder.offsets = array<i64: 16384>
// CHECK-NOT:       thunder.workspace
// CHECK:         thunder.fusion gemm "g"
// CHECK-SAME:      thunder.live = array<i64: 2, 3>, thunder.offsets = array<i64: 8384>, thunder.workspace = 0 : i64
// CHECK:         thunder.fusion pointwise "c"
// CHECK-NOT:       thunder.workspace
// CHECK:         return

// NONE-LABEL: func.func @free_bytes
// NONE-SAME:    thunder.arena = {alignment = 64 : i64, bytes = 20480 : i64, lower_bound = 20480 : i64, naive = 24576 : i64}
// NONE-NOT:     thunder.workspace

// REPORT-LABEL: memory plan of @free_bytes: 4 kernels, 4 tensors (3 in the arena), 1 library workspace
// REPORT:       workspace       8.00 KiB  (8192 bytes)  per gemm/conv kernel, in the arena (counted above)
// REPORT:       g#workspace  8.00 KiB  0  [2, 2]  -  library workspace

func.func @free_bytes(%x: tensor<64x64xf32>) -> tensor<32x32xf32> {
  %a = thunder.fusion pointwise "a" (%x) : (tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%i: tensor<64x64xf32>):
    %r = thunder.neg %i : tensor<64x64xf32>
    thunder.yield %r : tensor<64x64xf32>
  }
  %b = thunder.fusion data_movement "b" (%a) : (tensor<64x64xf32>) -> tensor<32x32xf32> {
  ^bb0(%i: tensor<64x64xf32>):
    %r = thunder.slice %i, start = [0, 0], end = [32, 32], step = [1, 1] : tensor<64x64xf32> -> tensor<32x32xf32>
    thunder.yield %r : tensor<32x32xf32>
  }
  %g = thunder.fusion gemm "g" (%b) : (tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%i: tensor<32x32xf32>):
    %r = thunder.matmul %i, %i : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    thunder.yield %r : tensor<32x32xf32>
  }
  %c = thunder.fusion pointwise "c" (%g) : (tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%i: tensor<32x32xf32>):
    %r = thunder.neg %i : tensor<32x32xf32>
    thunder.yield %r : tensor<32x32xf32>
  }
  return %c : tensor<32x32xf32>
}

// -----

// Two GEMMs on different streams may run at once: their workspaces are live
// until the kernels are ordered, so they get bytes of their own and "g2"
// waits for nothing ("s" joins the branches). On one stream they share.
// "g2"'s reservation starts at 8384, its workspace at 8448: 256-aligned.

// CHECK-LABEL: func.func @branches
// CHECK:         thunder.fusion gemm "g1"
// CHECK-SAME:      thunder.workspace = [[W:[0-9]+]] : i64
// CHECK:         thunder.fusion gemm "g2"
// CHECK-SAME:      thunder.workspace = [[W]] : i64

// STREAMS-LABEL: func.func @branches
// STREAMS-SAME:    bytes = 24960 : i64
// STREAMS:         thunder.fusion gemm "g1"
// STREAMS-SAME:      thunder.stream = 0 : i64, thunder.workspace = 0 : i64
// STREAMS:         thunder.fusion gemm "g2"
// STREAMS-NOT:       thunder.wait
// STREAMS-SAME:      thunder.stream = 1 : i64, thunder.workspace = 8448 : i64
// STREAMS:         thunder.fusion pointwise "s"
// STREAMS-SAME:      thunder.wait = array<i64: 0>

func.func @branches(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %g1 = thunder.fusion gemm "g1" (%x) : (tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%i: tensor<32x32xf32>):
    %r = thunder.matmul %i, %i : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    thunder.yield %r : tensor<32x32xf32>
  }
  %g2 = thunder.fusion gemm "g2" (%x) : (tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%i: tensor<32x32xf32>):
    %t = thunder.transpose %i, permutation = [1, 0] : tensor<32x32xf32> -> tensor<32x32xf32>
    %r = thunder.matmul %i, %t : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    thunder.yield %r : tensor<32x32xf32>
  }
  %s = thunder.fusion pointwise "s" (%g1, %g2) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%i: tensor<32x32xf32>, %j: tensor<32x32xf32>):
    %r = thunder.add %i, %j : tensor<32x32xf32>
    thunder.yield %r : tensor<32x32xf32>
  }
  return %s : tensor<32x32xf32>
}

// -----

// Dynamic shapes: the arena is packed at run time, with tensors only; the
// backend provides the workspace itself.

// CHECK-LABEL: func.func @dynamic
// CHECK-SAME:    dynamic
// CHECK-NOT:     workspace
// CHECK:         return

func.func @dynamic(%x: tensor<?x32xf32>, %w: tensor<32x32xf32>) -> tensor<?x32xf32> {
  %g = thunder.fusion gemm "g" (%x, %w) : (tensor<?x32xf32>, tensor<32x32xf32>) -> tensor<?x32xf32> {
  ^bb0(%i: tensor<?x32xf32>, %j: tensor<32x32xf32>):
    %r = thunder.matmul %i, %j : (tensor<?x32xf32>, tensor<32x32xf32>) -> tensor<?x32xf32>
    thunder.yield %r : tensor<?x32xf32>
  }
  %c = thunder.fusion pointwise "c" (%g) : (tensor<?x32xf32>) -> tensor<?x32xf32> {
  ^bb0(%i: tensor<?x32xf32>):
    %r = thunder.neg %i : tensor<?x32xf32>
    thunder.yield %r : tensor<?x32xf32>
  }
  return %c : tensor<?x32xf32>
}

// -----

// While stream 1 runs "p1" and "p2" unordered with stream 0, "g1"'s workspace
// stays live to the end of "p2"; "g2" follows "g1" on stream 0, so it takes
// the same bytes instead of another workspace.

// CHECK-LABEL: func.func @same_stream
// CHECK-SAME:    bytes = 16576 : i64
// CHECK:         thunder.fusion gemm "g1"
// CHECK-SAME:      thunder.workspace = [[W:[0-9]+]] : i64
// CHECK:         thunder.fusion gemm "g2"
// CHECK-SAME:      thunder.workspace = [[W]] : i64

func.func @same_stream(%x: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
  %g1 = thunder.fusion gemm "g1" (%x) {thunder.stream = 0 : i64} : (tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%i: tensor<32x32xf32>):
    %r = thunder.matmul %i, %i : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    thunder.yield %r : tensor<32x32xf32>
  }
  %p1 = thunder.fusion pointwise "p1" (%x) {thunder.stream = 1 : i64} : (tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%i: tensor<32x32xf32>):
    %r = thunder.neg %i : tensor<32x32xf32>
    thunder.yield %r : tensor<32x32xf32>
  }
  %g2 = thunder.fusion gemm "g2" (%g1) {thunder.stream = 0 : i64} : (tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%i: tensor<32x32xf32>):
    %r = thunder.matmul %i, %i : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    thunder.yield %r : tensor<32x32xf32>
  }
  %p2 = thunder.fusion pointwise "p2" (%p1) {thunder.stream = 1 : i64} : (tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%i: tensor<32x32xf32>):
    %r = thunder.exp %i : tensor<32x32xf32>
    thunder.yield %r : tensor<32x32xf32>
  }
  return %g2, %p2 : tensor<32x32xf32>, tensor<32x32xf32>
}
