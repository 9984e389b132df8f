// RUN: thunder-opt %s --thunder-convert-to-stablehlo -split-input-file | FileCheck %s

// Composites left in the module (the tpu pipeline decomposes them first) are
// decomposed by the pass, then converted like any primitive.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NOT:  = thunder.
// CHECK:      %[[MAX:.+]] = "stablehlo.reduce"(%[[X]], %{{.+}})
// CHECK:        "stablehlo.maximum"
// CHECK:      "stablehlo.exponential"
// CHECK:      "stablehlo.reduce"
// CHECK:        "stablehlo.add"
// CHECK:      "stablehlo.divide"
// CHECK-NOT:  = thunder.
// CHECK:      return
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = thunder.softmax %x dim = 1 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK-NOT:  = thunder.
// CHECK:      "stablehlo.dot_general"
// CHECK:      "stablehlo.dot_general"
// CHECK-NOT:  = thunder.
// CHECK:      return
func.func @main(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = thunder.sdpa %q, %k, %v causal scale = 0.25 : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK-NOT:  = thunder.
// CHECK:      "stablehlo.rsqrt"
// CHECK-NOT:  = thunder.
// CHECK:      return
func.func @main(%x: tensor<2x5x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x5x16xf32> {
  %0 = thunder.layer_norm %x weight %g bias %b normalized_rank = 1 epsilon = 1.0e-05 : (tensor<2x5x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x5x16xf32>
  return %0 : tensor<2x5x16xf32>
}
