// RUN: thunder-opt %s -thunder-decompose-composites -thunder-fuse-reductions -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @softmax
// CHECK:       %[[K:.+]] = thunder.fusion reduction "reduction_max_sub_exp_etc_0"
// CHECK:         thunder.max
// CHECK:         thunder.exp
// CHECK:         thunder.sum
// CHECK:         %[[D:.+]] = thunder.div
// CHECK-NEXT:    thunder.yield %[[D]]
// CHECK:       return %[[K]]

// softmax, decomposed: one row kernel through the generic rule.
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %p = thunder.softmax %x dim = 1 : tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm
// CHECK:       %[[K:.+]] = thunder.fusion reduction {{.*}}(%arg0, %arg1, %arg2)
// CHECK-COUNT-2: thunder.mean
// CHECK:         thunder.rsqrt
// CHECK:         %[[Y:.+]] = thunder.add
// CHECK-NEXT:    thunder.yield %[[Y]]
// CHECK:       return %[[K]]

// layer_norm, decomposed (mean, variance, normalize, scale, shift): one
// row kernel.
func.func @layer_norm(%x: tensor<2x4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %y = thunder.layer_norm %x weight %w bias %b normalized_rank = 1 epsilon = 1.0e-05 : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @different_rows
// CHECK:       thunder.fusion reduction "reduction_sum_0"
// CHECK:         thunder.sum {{.*}} dims = [1]
// The sum over dim 0 is left for thunder-outline-kernels.
// CHECK:       thunder.sum {{.*}} dims = [0]
// CHECK-NEXT:  return

// Reductions over different rows stay in different kernels.
func.func @different_rows(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %a = thunder.sum %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %b = thunder.sum %x dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
  return %a, %b : tensor<4xf32>, tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @shared_producer
// CHECK:       %[[E:.+]] = thunder.exp
// CHECK:       thunder.fusion reduction "reduction_sum_0"(%[[E]])
// CHECK-NOT:     thunder.exp
// CHECK:       return

// A producer read elsewhere too is not pulled into the row kernel.
func.func @shared_producer(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %e = thunder.exp %x : tensor<4x8xf32>
  %s = thunder.sum %e dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %s, %e : tensor<4xf32>, tensor<4x8xf32>
}
