// RUN: thunder-opt %s -thunder-outline-kernels | FileCheck %s

// Every op but constants and views gets a kernel of its own, with the kind
// its template needs. Splat constants are copied into pointwise and
// reduction kernels; a library kernel reads every operand from memory.

// CHECK-LABEL: func.func @kinds
// CHECK-SAME:  (%[[X:.+]]: tensor<4x8xf32>, %[[I:.+]]: tensor<3xi64>)
// CHECK:       %[[C:.+]] = thunder.constant dense<2.000000e+00> : tensor<4x8xf32>
// CHECK:       thunder.fusion pointwise "pointwise_mul_{{[0-9]+}}"(%[[X]])
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    thunder.constant dense<2.000000e+00>
// CHECK-NEXT:    thunder.mul
// CHECK:       thunder.fusion reduction "reduction_sum_{{[0-9]+}}"
// CHECK:       thunder.fusion library "library_sum_{{[0-9]+}}"
// CHECK:       thunder.fusion gemm "gemm_matmul_{{[0-9]+}}"
// CHECK:       thunder.fusion data_movement "data_movement_index_select_{{[0-9]+}}"
// CHECK:       thunder.reshape %[[X]]
// CHECK:       thunder.fusion library "library_softmax_{{[0-9]+}}"
// CHECK:       thunder.fusion data_movement "data_movement_concat_{{[0-9]+}}"(%[[X]], %[[C]])
func.func @kinds(%x: tensor<4x8xf32>, %i: tensor<3xi64>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4x4xf32>, tensor<3x8xf32>, tensor<32xf32>, tensor<4x8xf32>, tensor<8x8xf32>) {
  %c = thunder.constant dense<2.0> : tensor<4x8xf32>
  %m = thunder.mul %x, %c : tensor<4x8xf32>
  %s = thunder.sum %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %s0 = thunder.sum %x dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
  %g = thunder.matmul %x, %x transpose_rhs : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  %e = thunder.index_select %x, %i dim = 0 : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<3x8xf32>
  %r = thunder.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %p = thunder.softmax %x dim = 1 : tensor<4x8xf32>
  %cat = thunder.concat %x, %c dim = 0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %m, %s, %s0, %g, %e, %r, %p, %cat : tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4x4xf32>, tensor<3x8xf32>, tensor<32xf32>, tensor<4x8xf32>, tensor<8x8xf32>
}
