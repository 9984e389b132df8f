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
