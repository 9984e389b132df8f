// RUN: thunder-opt %s -thunder-fuse-pointwise -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @chain
// CHECK:       %[[K:.+]] = thunder.fusion pointwise "pointwise_add_gelu_convert_0"
// CHECK:         thunder.broadcast
// CHECK-NEXT:    thunder.add
// CHECK-NEXT:    thunder.gelu
// CHECK-NEXT:    thunder.convert
// CHECK-NEXT:    thunder.yield
// CHECK:       return %[[K]]

// A chain of elementwise ops with a broadcast and a convert: one kernel.
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xbf16> {
  %bb = thunder.broadcast %b, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %s = thunder.add %x, %bb : tensor<4x8xf32>
  %g = thunder.gelu %s : tensor<4x8xf32>
  %c = thunder.convert %g : tensor<4x8xf32> -> tensor<4x8xbf16>
  return %c : tensor<4x8xbf16>
}

// -----

// CHECK-LABEL: func.func @shared_expensive
// CHECK:       %[[E:.+]] = thunder.fusion pointwise "pointwise_exp_{{[0-9]+}}"
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    thunder.exp
// CHECK-NEXT:    thunder.yield
// CHECK:       thunder.fusion pointwise {{.*}}(%[[E]])
// CHECK-NOT:     thunder.exp
// CHECK:       thunder.fusion pointwise {{.*}}(%[[E]])
// CHECK-NOT:     thunder.exp
// CHECK:       return

// An expensive producer read by two kernels is not recomputed: it stays in a
// kernel of its own. (Both consumers read it through a transpose, so neither
// can take it as an extra result of its loop.)
func.func @shared_expensive(%x: tensor<4x8xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %e = thunder.exp %x : tensor<4x8xf32>
  %t = thunder.transpose %e, permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %a = thunder.neg %t : tensor<8x4xf32>
  %t2 = thunder.transpose %e, permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %b = thunder.abs %t2 : tensor<8x4xf32>
  return %a, %b : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// CHECK-LABEL: func.func @shared_cheap
// CHECK:       thunder.fusion pointwise "pointwise_neg_transpose_exp_{{[0-9]+}}"
// CHECK:         thunder.neg
// CHECK:       thunder.fusion pointwise "pointwise_neg_tanh_{{[0-9]+}}"
// CHECK:         thunder.neg
// CHECK-NOT:   thunder.fusion
// CHECK:       return

// A cheap producer of one tensor read by two kernels is copied into the
// second one.
func.func @shared_cheap(%x: tensor<4x8xf32>) -> (tensor<8x4xf32>, tensor<4x8xf32>) {
  %s = thunder.neg %x : tensor<4x8xf32>
  %t = thunder.transpose %s, permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %a = thunder.exp %t : tensor<8x4xf32>
  %b = thunder.tanh %s : tensor<4x8xf32>
  return %a, %b : tensor<8x4xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @shared_cheap_dynamic_scalar
// CHECK-NOT:   thunder.broadcast
// CHECK:       thunder.fusion pointwise "pointwise_mul_transpose_exp_{{[0-9]+}}"
// CHECK:         thunder.constant
// CHECK-NEXT:    thunder.broadcast
// CHECK-NEXT:    thunder.mul
// CHECK:       thunder.fusion pointwise "pointwise_mul_tanh_{{[0-9]+}}"
// CHECK:         thunder.broadcast
// CHECK-NEXT:    thunder.mul
// CHECK-NOT:   thunder.fusion
// CHECK:       return

// The same at a dynamic batch, the producer a product with a scalar: the
// scalar is a broadcast of a 0-d constant there, which counts as a splat
// (isSplatValue), so the product reads one tensor and is copied too; each
// kernel carries its own scalar.
func.func @shared_cheap_dynamic_scalar(%x: tensor<?x8xf32>) -> (tensor<8x?xf32>, tensor<?x8xf32>) {
  %c = thunder.constant dense<5.000000e-01> : tensor<f32>
  %h = thunder.broadcast %c, dims = [] : tensor<f32> -> tensor<?x8xf32>
  %s = thunder.mul %x, %h : tensor<?x8xf32>
  %t = thunder.transpose %s, permutation = [1, 0] : tensor<?x8xf32> -> tensor<8x?xf32>
  %a = thunder.exp %t : tensor<8x?xf32>
  %b = thunder.tanh %s : tensor<?x8xf32>
  return %a, %b : tensor<8x?xf32>, tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @no_recompute_across_broadcast
// CHECK:       %[[E:.+]] = thunder.fusion pointwise "pointwise_exp_{{[0-9]+}}"
// CHECK:       thunder.fusion pointwise "pointwise_neg_{{[0-9]+}}"(%[[E]])
// CHECK-NOT:     thunder.exp
// CHECK:       return

// An expensive producer of a small tensor is not recomputed per element of a
// broadcast.
func.func @no_recompute_across_broadcast(%x: tensor<4xf32>) -> tensor<4x1024xf32> {
  %e = thunder.exp %x : tensor<4xf32>
  %b = thunder.broadcast %e, dims = [0] : tensor<4xf32> -> tensor<4x1024xf32>
  %n = thunder.neg %b : tensor<4x1024xf32>
  return %n : tensor<4x1024xf32>
}

// -----

// CHECK-LABEL: func.func @view
// CHECK-NOT:   thunder.fusion
// CHECK:       thunder.reshape

// A lone reshape stays a view.
func.func @view(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %r = thunder.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

// A residual stream: each add reads two tensors, so it is not copied into
// the kernels that read it (that would recompute the stream from its start
// in each and keep every block's output alive to the end); the first add
// is the kernel's extra result instead.
// CHECK-LABEL: func.func @residual_stream
// CHECK:       %[[K:.+]]:2 = thunder.fusion pointwise
// CHECK:         %[[R1:.+]] = thunder.add
// CHECK:         %[[R2:.+]] = thunder.add %[[R1]]
// CHECK:         thunder.yield
// CHECK:       thunder.fusion pointwise {{.*}}(%[[K]]#{{[01]}})
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    thunder.relu
func.func @residual_stream(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> (tensor<8x4xf32>, tensor<4x8xf32>) {
  %r1 = thunder.add %x, %a : tensor<4x8xf32>
  %t = thunder.relu %r1 : tensor<4x8xf32>
  %tt = thunder.transpose %t, permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %r2 = thunder.add %r1, %b : tensor<4x8xf32>
  return %tt, %r2 : tensor<8x4xf32>, tensor<4x8xf32>
}
