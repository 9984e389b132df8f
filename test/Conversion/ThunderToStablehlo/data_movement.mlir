// RUN: thunder-opt %s --thunder-convert-to-stablehlo -split-input-file | FileCheck %s

// Views map to their StableHLO counterparts with DenseI64ArrayAttr operands.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK:      "stablehlo.reshape"(%[[X]]) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK:      "stablehlo.transpose"(%[[X]]) {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK:      "stablehlo.slice"(%[[X]]) {limit_indices = array<i64: 2, 3, 4>, start_indices = array<i64: 0, 1, 0>, strides = array<i64: 1, 1, 2>}
// CHECK:      "stablehlo.concatenate"(%[[X]], %[[X]]) {dimension = 2 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
// CHECK:      "stablehlo.broadcast_in_dim"(%[[X]]) {broadcast_dimensions = array<i64: 1, 2, 3>} : (tensor<2x3x4xf32>) -> tensor<5x2x3x4xf32>
// CHECK:      "stablehlo.broadcast_in_dim"(%[[X]]) {broadcast_dimensions = array<i64: 1, 2, 3>} : (tensor<2x3x4xf32>) -> tensor<6x2x3x4xf32>
// CHECK:      "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x3xi64>
func.func @main(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<4x2x3xf32>, tensor<2x2x2xf32>, tensor<2x3x8xf32>, tensor<5x2x3x4xf32>, tensor<6x2x3x4xf32>, tensor<2x3xi64>) {
  %0 = thunder.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = thunder.transpose %x, permutation = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %2 = thunder.slice %x, start = [0, 1, 0], end = [2, 3, 4], step = [1, 1, 2] : tensor<2x3x4xf32> -> tensor<2x2x2xf32>
  %3 = thunder.concat %x, %x dim = 2 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
  %4 = thunder.broadcast %x, dims = [1, 2, 3] : tensor<2x3x4xf32> -> tensor<5x2x3x4xf32>
  %5 = thunder.expand %x : tensor<2x3x4xf32> -> tensor<6x2x3x4xf32>
  %6 = thunder.iota dim = 1 : tensor<2x3xi64>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<6x4xf32>, tensor<4x2x3xf32>, tensor<2x2x2xf32>, tensor<2x3x8xf32>, tensor<5x2x3x4xf32>, tensor<6x2x3x4xf32>, tensor<2x3xi64>
}

// -----

// pad: a rank-0 padding value of the element type; negative padding crops.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[I:.+]]: tensor<2x5xi64>)
// CHECK:      %[[V:.+]] = "stablehlo.constant"() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
// CHECK:      "stablehlo.pad"(%[[X]], %[[V]]) {edge_padding_high = array<i64: 0, 0, -1>, edge_padding_low = array<i64: 1, 0, 1>, interior_padding = array<i64: 0, 0, 0>} : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<3x3x4xf32>
// CHECK:      %[[W:.+]] = "stablehlo.constant"() {value = dense<-1> : tensor<i64>}
// CHECK:      "stablehlo.pad"(%[[I]], %[[W]])
func.func @main(%x: tensor<2x3x4xf32>, %i: tensor<2x5xi64>) -> (tensor<3x3x4xf32>, tensor<2x7xi64>) {
  %0 = thunder.pad %x, low = [1, 0, 1], high = [0, 0, -1], value = 0.5 : tensor<2x3x4xf32> -> tensor<3x3x4xf32>
  %1 = thunder.pad %i, low = [0, 1], high = [0, 1], value = -1.0 : tensor<2x5xi64> -> tensor<2x7xi64>
  return %0, %1 : tensor<3x3x4xf32>, tensor<2x7xi64>
}

// -----

// index_select and embedding gather whole slices; the index's dims take the
// place of the selected dim (index_select) or lead (embedding).
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[I:.+]]: tensor<5xi64>, %[[T:.+]]: tensor<10x6xf32>, %[[IDS:.+]]: tensor<2x7xi32>)
// CHECK:      "stablehlo.gather"(%[[X]], %[[I]]) {dimension_numbers = #stablehlo.gather<offset_dims = [0, 2], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 2, 1, 4>} : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<2x5x4xf32>
// CHECK:      "stablehlo.gather"(%[[T]], %[[IDS]]) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 6>} : (tensor<10x6xf32>, tensor<2x7xi32>) -> tensor<2x7x6xf32>
func.func @main(%x: tensor<2x3x4xf32>, %i: tensor<5xi64>, %t: tensor<10x6xf32>, %ids: tensor<2x7xi32>) -> (tensor<2x5x4xf32>, tensor<2x7x6xf32>) {
  %0 = thunder.index_select %x, %i dim = 1 : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<2x5x4xf32>
  %1 = thunder.embedding %t, %ids : (tensor<10x6xf32>, tensor<2x7xi32>) -> tensor<2x7x6xf32>
  return %0, %1 : tensor<2x5x4xf32>, tensor<2x7x6xf32>
}

// -----

// torch.gather: full coordinates (iotas, the index on `dim`) stacked on a
// trailing dim, each gathering one element.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[G:.+]]: tensor<2x3x2xi32>)
// CHECK:      %[[G64:.+]] = "stablehlo.convert"(%[[G]]) : (tensor<2x3x2xi32>) -> tensor<2x3x2xi64>
// CHECK:      %[[I0:.+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<2x3x2xi64>
// CHECK:      %[[C0:.+]] = "stablehlo.reshape"(%[[I0]]) : (tensor<2x3x2xi64>) -> tensor<2x3x2x1xi64>
// CHECK:      %[[I1:.+]] = "stablehlo.iota"() {iota_dimension = 1 : i64}
// CHECK:      %[[C1:.+]] = "stablehlo.reshape"(%[[I1]])
// CHECK:      %[[C2:.+]] = "stablehlo.reshape"(%[[G64]])
// CHECK:      %[[ALL:.+]] = "stablehlo.concatenate"(%[[C0]], %[[C1]], %[[C2]]) {dimension = 3 : i64} : ({{.*}}) -> tensor<2x3x2x3xi64>
// CHECK:      "stablehlo.gather"(%[[X]], %[[ALL]]) {dimension_numbers = #stablehlo.gather<offset_dims = [], collapsed_slice_dims = [0, 1, 2], start_index_map = [0, 1, 2], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1>} : (tensor<2x3x4xf32>, tensor<2x3x2x3xi64>) -> tensor<2x3x2xf32>
func.func @main(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xi32>) -> tensor<2x3x2xf32> {
  %0 = thunder.gather %x, %g dim = 2 : (tensor<2x3x4xf32>, tensor<2x3x2xi32>) -> tensor<2x3x2xf32>
  return %0 : tensor<2x3x2xf32>
}
