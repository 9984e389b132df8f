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

// -----

// CHECK-LABEL: func.func @channels_norm_square
// CHECK:       %[[K:.+]] = thunder.fusion reduction {{.*}}(%arg0, %arg1, %arg2)
// CHECK:         thunder.transpose %{{.+}}, permutation = [0, 2, 3, 1]
// CHECK:         thunder.mean
// CHECK:         thunder.rsqrt
// CHECK:         %[[Y:.+]] = thunder.add
// CHECK-NEXT:    thunder.yield %[[Y]]
// CHECK:       %[[T:.+]] = thunder.transpose %[[K]], permutation = [0, 3, 1, 2]
// CHECK-NEXT:  return %[[T]]

// A layer norm over channels of NCHW (ConvNeXt's): the transpose into the
// rows joins as the kernel's prologue (it reads the input); the transpose back
// stays out, although with C = H = W its result has the rows' shape: it moves
// elements across rows, whose means and variances the kernel holds one row at
// a time.
func.func @channels_norm_square(%x: tensor<2x8x8x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8x8x8xf32> {
  %t = thunder.transpose %x, permutation = [0, 2, 3, 1] : tensor<2x8x8x8xf32> -> tensor<2x8x8x8xf32>
  %y = thunder.layer_norm %t weight %w bias %b normalized_rank = 1 epsilon = 1.0e-06 : (tensor<2x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x8x8xf32>
  %u = thunder.transpose %y, permutation = [0, 3, 1, 2] : tensor<2x8x8x8xf32> -> tensor<2x8x8x8xf32>
  return %u : tensor<2x8x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @row_preserving_view
// CHECK:       %[[K:.+]] = thunder.fusion reduction
// CHECK:         thunder.sum
// CHECK:         %[[T:.+]] = thunder.transpose %{{.+}}, permutation = [0, 2, 1]
// CHECK-NEXT:    thunder.yield %[[T]]
// CHECK:       return %[[K]]

// A view that keeps each element in its row (only the reduced dims permuted)
// joins the kernel.
func.func @row_preserving_view(%x: tensor<4x8x8xf32>) -> tensor<4x8x8xf32> {
  %s = thunder.sum %x dims = [1, 2] keepdim : tensor<4x8x8xf32> -> tensor<4x1x1xf32>
  %b = thunder.broadcast %s, dims = [0, 1, 2] : tensor<4x1x1xf32> -> tensor<4x8x8xf32>
  %d = thunder.div %x, %b : tensor<4x8x8xf32>
  %t = thunder.transpose %d, permutation = [0, 2, 1] : tensor<4x8x8xf32> -> tensor<4x8x8xf32>
  return %t : tensor<4x8x8xf32>
}
