// RUN: thunder-opt %s --thunder-convert-to-stablehlo -split-input-file | FileCheck %s

// nn.Linear: contract the last dims of x and w; f32 asks for HIGHEST precision
// (a TPU would otherwise multiply in bf16 passes).
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<2x32xf32>, %[[W:.+]]: tensor<64x32xf32>)
// CHECK:      %[[Y:.+]] = "stablehlo.dot_general"(%[[X]], %[[W]]) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<2x32xf32>, tensor<64x32xf32>) -> tensor<2x64xf32>
// CHECK:      return %[[Y]]
func.func @main(%x: tensor<2x32xf32>, %w: tensor<64x32xf32>) -> tensor<2x64xf32> {
  %0 = thunder.matmul %x, %w transpose_rhs : (tensor<2x32xf32>, tensor<64x32xf32>) -> tensor<2x64xf32>
  return %0 : tensor<2x64xf32>
}

// -----

// Batched on both sides: the batch dims are batching dims; transpose_lhs
// contracts the lhs' second-to-last dim.
// CHECK-LABEL: func.func @main
// CHECK:      "stablehlo.dot_general"(%{{.+}}, %{{.+}}) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2]>, {{.*}}} : (tensor<2x4x7x5xf32>, tensor<2x4x7x6xf32>) -> tensor<2x4x5x6xf32>
func.func @main(%p: tensor<2x4x7x5xf32>, %q: tensor<2x4x7x6xf32>) -> tensor<2x4x5x6xf32> {
  %0 = thunder.matmul %p, %q transpose_lhs : (tensor<2x4x7x5xf32>, tensor<2x4x7x6xf32>) -> tensor<2x4x5x6xf32>
  return %0 : tensor<2x4x5x6xf32>
}

// -----

// A 2-D rhs shared by every batch; bf16 produces f32 (PyTorch accumulates in
// f32) and rounds once, with the default precision.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.+]]: tensor<2x5x7xbf16>, %[[M:.+]]: tensor<7x3xbf16>)
// CHECK:      %[[D:.+]] = "stablehlo.dot_general"(%[[A]], %[[M]]) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>} : (tensor<2x5x7xbf16>, tensor<7x3xbf16>) -> tensor<2x5x3xf32>
// CHECK:      %[[R:.+]] = "stablehlo.convert"(%[[D]]) : (tensor<2x5x3xf32>) -> tensor<2x5x3xbf16>
// CHECK:      return %[[R]]
func.func @main(%a: tensor<2x5x7xbf16>, %m: tensor<7x3xbf16>) -> tensor<2x5x3xbf16> {
  %0 = thunder.matmul %a, %m : (tensor<2x5x7xbf16>, tensor<7x3xbf16>) -> tensor<2x5x3xbf16>
  return %0 : tensor<2x5x3xbf16>
}

// -----

// Convolution in NCHW/OIHW layout with groups, then the bias broadcast along
// the channels.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x9x9xf32>, %[[W:.+]]: tensor<6x1x3x3xf32>, %[[B:.+]]: tensor<6xf32>)
// CHECK:      %[[C:.+]] = "stablehlo.convolution"(%[[X]], %[[W]]) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, feature_group_count = 3 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<{{\[\[}}1, 2], [0, 1]]> : tensor<2x2xi64>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>], rhs_dilation = array<i64: 2, 1>, window_strides = array<i64: 2, 1>} : (tensor<1x3x9x9xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x4x8xf32>
// CHECK:      %[[BB:.+]] = "stablehlo.broadcast_in_dim"(%[[B]]) {broadcast_dimensions = array<i64: 1>} : (tensor<6xf32>) -> tensor<1x6x4x8xf32>
// CHECK:      %[[Y:.+]] = "stablehlo.add"(%[[C]], %[[BB]])
// CHECK:      return %[[Y]]
func.func @main(%x: tensor<1x3x9x9xf32>, %w: tensor<6x1x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x4x8xf32> {
  %0 = thunder.convolution %x, %w, %b stride = [2, 1] padding = [1, 2, 0, 1] dilation = [2, 1] groups = 3 : (tensor<1x3x9x9xf32>, tensor<6x1x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x8xf32>
  return %0 : tensor<1x6x4x8xf32>
}

// -----

// conv1d without bias.
// CHECK-LABEL: func.func @main
// CHECK:      "stablehlo.convolution"(%{{.+}}, %{{.+}}) {{{.*}}dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>{{.*}}} : (tensor<2x3x17xf32>, tensor<5x3x3xf32>) -> tensor<2x5x15xf32>
// CHECK-NOT:  stablehlo.add
func.func @main(%x: tensor<2x3x17xf32>, %w: tensor<5x3x3xf32>) -> tensor<2x5x15xf32> {
  %0 = thunder.convolution %x, %w stride = [1] padding = [0, 0] dilation = [1] groups = 1 : (tensor<2x3x17xf32>, tensor<5x3x3xf32>) -> tensor<2x5x15xf32>
  return %0 : tensor<2x5x15xf32>
}

// -----

// max_pool: reduce_window with a -inf init, which also pads.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x9x9xf32>)
// CHECK:      %[[NEGINF:.+]] = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK:      "stablehlo.reduce_window"(%[[X]], %[[NEGINF]]) ({
// CHECK:        "stablehlo.maximum"
// CHECK:      }) {padding = dense<{{\[\[}}0, 0], [0, 0], [1, 1], [1, 1]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>} : (tensor<1x3x9x9xf32>, tensor<f32>) -> tensor<1x3x5x5xf32>
func.func @main(%x: tensor<1x3x9x9xf32>) -> tensor<1x3x5x5xf32> {
  %0 = thunder.max_pool %x kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<1x3x9x9xf32> -> tensor<1x3x5x5xf32>
  return %0 : tensor<1x3x5x5xf32>
}

// -----

// avg_pool with ceil_mode: the last window runs past the input (extra high
// padding 1); the divisor counts only the elements inside.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x9x9xf32>)
// CHECK:      %[[SUM:.+]] = "stablehlo.reduce_window"(%[[X]], %{{.+}}) ({
// CHECK:      }) {padding = dense<{{\[\[}}0, 0], [0, 0], [0, 1], [0, 1]]> : tensor<4x2xi64>, {{.*}}window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}
// CHECK:      %[[ONES_S:.+]] = "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK:      %[[ONES:.+]] = "stablehlo.broadcast_in_dim"(%[[ONES_S]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x3x9x9xf32>
// CHECK:      %[[COUNT:.+]] = "stablehlo.reduce_window"(%[[ONES]], %{{.+}}) ({
// CHECK:      }) {padding = dense<{{\[\[}}0, 0], [0, 0], [0, 1], [0, 1]]> : tensor<4x2xi64>
// CHECK:      %[[AVG:.+]] = "stablehlo.divide"(%[[SUM]], %[[COUNT]])
// CHECK:      return %[[AVG]]
func.func @main(%x: tensor<1x3x9x9xf32>) -> tensor<1x3x5x5xf32> {
  %0 = thunder.avg_pool %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] ceil_mode : tensor<1x3x9x9xf32> -> tensor<1x3x5x5xf32>
  return %0 : tensor<1x3x5x5xf32>
}

// -----

// avg_pool with count_include_pad: the ones are padded with ones.
// CHECK-LABEL: func.func @main
// CHECK:      %[[ONES_S:.+]] = "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK:      %[[ONES:.+]] = "stablehlo.broadcast_in_dim"(%[[ONES_S]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x2x6x6xf32>
// CHECK:      %[[ONE:.+]] = "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK:      "stablehlo.pad"(%[[ONES]], %[[ONE]]) {edge_padding_high = array<i64: 0, 0, 1, 1>, edge_padding_low = array<i64: 0, 0, 1, 1>, {{.*}}} : (tensor<1x2x6x6xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
func.func @main(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %0 = thunder.avg_pool %x kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1] count_include_pad : tensor<1x2x6x6xf32> -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}
