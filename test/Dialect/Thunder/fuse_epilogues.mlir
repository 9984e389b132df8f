// RUN: thunder-opt %s -thunder-fuse-epilogues -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @linear_gelu_residual
// CHECK:       %[[K:.+]] = thunder.fusion gemm "gemm_matmul_add_gelu_etc_0"(%arg0, %arg1, %arg2, %arg3)
// CHECK:         thunder.matmul
// CHECK-NEXT:    thunder.broadcast
// CHECK-NEXT:    thunder.add
// CHECK-NEXT:    thunder.gelu
// CHECK-NEXT:    %[[Y:.+]] = thunder.add
// CHECK-NEXT:    thunder.yield %[[Y]]
// CHECK:       return %[[K]]

// Linear + bias + gelu + residual add: one GEMM kernel; the bias broadcast
// is read in place.
func.func @linear_gelu_residual(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>, %r: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %m = thunder.matmul %x, %w transpose_rhs : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %bb = thunder.broadcast %b, dims = [1] : tensor<16xf32> -> tensor<4x16xf32>
  %a = thunder.add %m, %bb : tensor<4x16xf32>
  %g = thunder.gelu %a : tensor<4x16xf32>
  %y = thunder.add %g, %r : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @two_readers
// CHECK:       %[[M:.+]] = thunder.fusion gemm "gemm_matmul_0"
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    thunder.matmul
// CHECK-NEXT:    thunder.yield
// CHECK:       thunder.relu %[[M]]
// CHECK:       thunder.neg %[[M]]

// The GEMM result is read twice: no epilogue.
func.func @two_readers(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %m = thunder.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %a = thunder.relu %m : tensor<4x16xf32>
  %b = thunder.neg %m : tensor<4x16xf32>
  return %a, %b : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @convert_and_reduction
// CHECK:       %[[M:.+]] = thunder.fusion gemm "gemm_matmul_0"
// CHECK-NOT:     thunder.convert
// CHECK:       thunder.convert %[[M]]
// CHECK:       %[[M2:.+]] = thunder.fusion gemm "gemm_matmul_1"
// CHECK-NOT:     thunder.sum
// CHECK:       thunder.sum %[[M2]]

// A convert to another dtype ends the epilogue; a reduction is never one.
func.func @convert_and_reduction(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> (tensor<4x16xbf16>, tensor<4xf32>) {
  %m = thunder.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %c = thunder.convert %m : tensor<4x16xf32> -> tensor<4x16xbf16>
  %m2 = thunder.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %s = thunder.sum %m2 dims = [1] : tensor<4x16xf32> -> tensor<4xf32>
  return %c, %s : tensor<4x16xbf16>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_keeping_rows
// CHECK:       %[[K:.+]] = thunder.fusion gemm "gemm_matmul_add_gelu_0"
// CHECK:         thunder.matmul
// CHECK:         thunder.add
// CHECK-NEXT:    thunder.reshape
// CHECK-NEXT:    %[[G:.+]] = thunder.gelu
// CHECK-NEXT:    thunder.yield %[[G]]
// CHECK:       %[[K2:.+]] = thunder.fusion gemm "gemm_matmul_1"
// CHECK:         thunder.yield
// CHECK:       %[[R:.+]] = thunder.reshape %[[K2]]
// CHECK:       %[[K3:.+]] = thunder.fusion gemm "gemm_matmul_2"
// CHECK:         thunder.yield
// CHECK:       thunder.reshape %[[K3]]
// CHECK:       return %[[K]], %[[R]]

// GPT-2's Conv1D: addmm, then a view of [tokens, n] as [batch, seq, n], then
// the GELU: the reshape keeps the rows and joins the epilogue. A reshape
// nothing elementwise follows stays out (it would cost the epilogue a copy);
// one that changes the last dim ends the chain.
func.func @reshape_keeping_rows(%x: tensor<8x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>)
    -> (tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<8x4x4xf32>) {
  %m = thunder.matmul %x, %w : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %bb = thunder.broadcast %b, dims = [1] : tensor<16xf32> -> tensor<8x16xf32>
  %a = thunder.add %m, %bb : tensor<8x16xf32>
  %v = thunder.reshape %a : tensor<8x16xf32> -> tensor<2x4x16xf32>
  %g = thunder.gelu %v : tensor<2x4x16xf32>
  %m2 = thunder.matmul %x, %w : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %v2 = thunder.reshape %m2 : tensor<8x16xf32> -> tensor<2x4x16xf32>
  %m3 = thunder.matmul %x, %w : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %v3 = thunder.reshape %m3 : tensor<8x16xf32> -> tensor<8x4x4xf32>
  %r3 = thunder.relu %v3 : tensor<8x4x4xf32>
  return %g, %v2, %r3 : tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<8x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @activation_reading_its_input_three_times
// CHECK:       %[[K:.+]] = thunder.fusion gemm "gemm_matmul_mul_mul_etc_0"
// CHECK:         thunder.matmul
// CHECK-COUNT-4: thunder.mul
// CHECK:         thunder.tanh
// CHECK:         %[[Y:.+]] = thunder.mul
// CHECK-NEXT:    thunder.yield %[[Y]]
// CHECK:       %[[M:.+]] = thunder.fusion gemm "gemm_matmul_1"
// CHECK:         thunder.matmul
// CHECK-NEXT:    thunder.yield
// CHECK:       thunder.relu %[[M]]
// CHECK:       thunder.sum

// GPT-2's tanh GELU, decomposed: the GEMM's result is read three times and
// the reads converge on one value, which the epilogue computes. When they do
// not converge (a reduction reads the relu), nothing joins.
func.func @activation_reading_its_input_three_times(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4xf32>) {
  %half = thunder.constant dense<0.5> : tensor<4x16xf32>
  %one = thunder.constant dense<1.0> : tensor<4x16xf32>
  %c = thunder.constant dense<0.0447> : tensor<4x16xf32>
  %m = thunder.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %h = thunder.mul %m, %half : tensor<4x16xf32>
  %sq = thunder.mul %m, %m : tensor<4x16xf32>
  %cube = thunder.mul %sq, %m : tensor<4x16xf32>
  %t = thunder.mul %cube, %c : tensor<4x16xf32>
  %i = thunder.add %m, %t : tensor<4x16xf32>
  %th = thunder.tanh %i : tensor<4x16xf32>
  %p = thunder.add %th, %one : tensor<4x16xf32>
  %g = thunder.mul %h, %p : tensor<4x16xf32>
  %m2 = thunder.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %r = thunder.relu %m2 : tensor<4x16xf32>
  %n = thunder.neg %m2 : tensor<4x16xf32>
  %s = thunder.sum %r dims = [1] : tensor<4x16xf32> -> tensor<4xf32>
  return %g, %n, %s : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_to_rank_1_and_dead_reader
// CHECK:       %[[K:.+]] = thunder.fusion gemm "gemm_matmul_0"
// CHECK:         thunder.matmul
// CHECK-NEXT:    thunder.yield
// CHECK:       %[[V:.+]] = thunder.reshape %[[K]] : tensor<1x32xf32> -> tensor<32xf32>
// CHECK:       thunder.relu %[[V]]
// CHECK:       %[[K2:.+]] = thunder.fusion gemm "gemm_matmul_1"
// CHECK:         thunder.matmul
// CHECK-NEXT:    thunder.yield
// CHECK:       thunder.reshape %[[K2]]

// A tiled epilogue iterates rows and columns: a [1, n] output viewed as [n]
// stays out. A reshape whose only other reader is dead is not taken in alone.
func.func @reshape_to_rank_1_and_dead_reader(%x: tensor<1x16xf32>, %w: tensor<16x32xf32>,
                                             %y: tensor<8x16xf32>)
    -> (tensor<32xf32>, tensor<2x4x32xf32>) {
  %m = thunder.matmul %x, %w : (tensor<1x16xf32>, tensor<16x32xf32>) -> tensor<1x32xf32>
  %v = thunder.reshape %m : tensor<1x32xf32> -> tensor<32xf32>
  %r = thunder.relu %v : tensor<32xf32>
  %m2 = thunder.matmul %y, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %v2 = thunder.reshape %m2 : tensor<8x32xf32> -> tensor<2x4x32xf32>
  %dead = thunder.neg %v2 : tensor<2x4x32xf32>
  %s = thunder.sum %v2 dims = [2] : tensor<2x4x32xf32> -> tensor<2x4xf32>
  return %r, %v2 : tensor<32xf32>, tensor<2x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @shared_scalar_dynamic
// CHECK-NOT:   thunder.constant
// CHECK-NOT:   thunder.broadcast
// CHECK-NOT:   thunder.fusion pointwise
// CHECK:       thunder.fusion gemm "gemm_matmul_mul_0"
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    thunder.constant dense<5.000000e-01>
// CHECK-NEXT:    thunder.matmul
// CHECK-NEXT:    thunder.broadcast
// CHECK-NEXT:    thunder.mul
// CHECK:       thunder.fusion gemm "gemm_matmul_mul_1"
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    thunder.constant dense<5.000000e-01>
// CHECK-NEXT:    thunder.matmul
// CHECK-NEXT:    thunder.broadcast
// CHECK-NEXT:    thunder.mul
// CHECK-NOT:   thunder.broadcast
// CHECK:       return

// A scalar broadcast to a dynamic shape (no splat constant can have it),
// read by two epilogues: each kernel carries its own copy of the scalar and
// its view, after the matmul (the anchor stays the first op that is not a
// constant); nothing is left outside to become a tensor of its own.
func.func @shared_scalar_dynamic(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %c = thunder.constant dense<5.000000e-01> : tensor<f32>
  %h = thunder.broadcast %c, dims = [] : tensor<f32> -> tensor<?x8xf32>
  %m1 = thunder.matmul %x, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %a = thunder.mul %m1, %h : tensor<?x8xf32>
  %m2 = thunder.matmul %a, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %b = thunder.mul %m2, %h : tensor<?x8xf32>
  return %b : tensor<?x8xf32>
}
