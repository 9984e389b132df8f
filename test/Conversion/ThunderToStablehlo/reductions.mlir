// RUN: thunder-opt %s --thunder-convert-to-stablehlo -split-input-file | FileCheck %s

// sum: stablehlo.reduce from zero with an add body; keepdim reshapes after.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK:      %[[ZERO:.+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK:      %[[SUM:.+]] = "stablehlo.reduce"(%[[X]], %[[ZERO]]) ({
// CHECK-NEXT: ^bb0(%[[L:.+]]: tensor<f32>, %[[R:.+]]: tensor<f32>):
// CHECK-NEXT:   %[[ADD:.+]] = "stablehlo.add"(%[[L]], %[[R]]) : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT:   "stablehlo.return"(%[[ADD]]) : (tensor<f32>) -> ()
// CHECK-NEXT: }) {dimensions = array<i64: 0, 1>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
// CHECK:      %[[KEPT:.+]] = "stablehlo.reshape"(%[[SUM]]) : (tensor<f32>) -> tensor<1x1xf32>
// CHECK:      return %[[KEPT]]
func.func @main(%x: tensor<4x8xf32>) -> tensor<1x1xf32> {
  %0 = thunder.sum %x dims = [0, 1] keepdim : tensor<4x8xf32> -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}

// -----

// mean divides the sum by the count; bf16 accumulates in f32.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xbf16>)
// CHECK:      %[[UP:.+]] = "stablehlo.convert"(%[[X]]) : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK:      %[[SUM:.+]] = "stablehlo.reduce"(%[[UP]], %{{.+}})
// CHECK:      "stablehlo.add"
// CHECK:      }) {dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
// CHECK:      %[[N_S:.+]] = "stablehlo.constant"() {value = dense<4.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK:      %[[N:.+]] = "stablehlo.broadcast_in_dim"(%[[N_S]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<8xf32>
// CHECK:      %[[MEAN:.+]] = "stablehlo.divide"(%[[SUM]], %[[N]])
// CHECK:      %[[DOWN:.+]] = "stablehlo.convert"(%[[MEAN]]) : (tensor<8xf32>) -> tensor<8xbf16>
// CHECK:      return %[[DOWN]]
func.func @main(%x: tensor<4x8xbf16>) -> tensor<8xbf16> {
  %0 = thunder.mean %x dims = [0] : tensor<4x8xbf16> -> tensor<8xbf16>
  return %0 : tensor<8xbf16>
}

// -----

// max/min start from the lowest/highest value of the type; prod from one.
// CHECK-LABEL: func.func @main
// CHECK:      "stablehlo.constant"() {value = dense<-2147483648> : tensor<i32>}
// CHECK:      "stablehlo.maximum"
// CHECK:      "stablehlo.constant"() {value = dense<0x7F800000> : tensor<f32>}
// CHECK:      "stablehlo.minimum"
// CHECK:      "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK:      "stablehlo.multiply"
func.func @main(%i: tensor<4x8xi32>, %x: tensor<4x8xf32>) -> (tensor<4xi32>, tensor<8xf32>, tensor<4xf32>) {
  %0 = thunder.max %i dims = [1] : tensor<4x8xi32> -> tensor<4xi32>
  %1 = thunder.min %x dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
  %2 = thunder.prod %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xi32>, tensor<8xf32>, tensor<4xf32>
}

// -----

// argmax: a reduce over (value, iota) pairs that keeps the first largest
// value, NaN counting as the largest.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK:      %[[IOTA:.+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<4x8xi64>
// CHECK:      %[[NEGINF:.+]] = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK:      %[[ZERO:.+]] = "stablehlo.constant"() {value = dense<0> : tensor<i64>}
// CHECK:      %[[R:.+]]:2 = "stablehlo.reduce"(%[[X]], %[[IOTA]], %[[NEGINF]], %[[ZERO]]) ({
// CHECK-NEXT: ^bb0(%[[AV:.+]]: tensor<f32>, %[[AI:.+]]: tensor<i64>, %[[BV:.+]]: tensor<f32>, %[[BI:.+]]: tensor<i64>):
// CHECK:        %[[GT:.+]] = "stablehlo.compare"(%[[BV]], %[[AV]]) {{.*}}comparison_direction GT
// CHECK:        "stablehlo.compare"(%[[BI]], %[[AI]]) {{.*}}comparison_direction LT
// CHECK:        %[[PICK:.+]] = "stablehlo.or"
// CHECK:        %[[V:.+]] = "stablehlo.select"(%[[PICK]], %[[BV]], %[[AV]])
// CHECK:        %[[I:.+]] = "stablehlo.select"(%[[PICK]], %[[BI]], %[[AI]])
// CHECK:        "stablehlo.return"(%[[V]], %[[I]]) : (tensor<f32>, tensor<i64>) -> ()
// CHECK:      }) {dimensions = array<i64: 1>} : (tensor<4x8xf32>, tensor<4x8xi64>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xi64>)
// CHECK:      return %[[R]]#1
func.func @main(%x: tensor<4x8xf32>) -> tensor<4xi64> {
  %0 = thunder.argmax %x dim = 1 : tensor<4x8xf32> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// argmin of integers: no NaN handling, keepdim reshapes.
// CHECK-LABEL: func.func @main
// CHECK:      "stablehlo.constant"() {value = dense<2147483647> : tensor<i32>}
// CHECK:      "stablehlo.reduce"
// CHECK-NOT:  comparison_direction NE
// CHECK:      comparison_direction LT
// CHECK:      }) {dimensions = array<i64: 0>}
// CHECK:      "stablehlo.reshape"(%{{.+}}#1) : (tensor<8xi64>) -> tensor<1x8xi64>
func.func @main(%i: tensor<4x8xi32>) -> tensor<1x8xi64> {
  %0 = thunder.argmin %i dim = 0 keepdim : tensor<4x8xi32> -> tensor<1x8xi64>
  return %0 : tensor<1x8xi64>
}

// -----

// cumsum: a window as long as the dim, ending at each element.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK:      "stablehlo.reduce_window"(%[[X]], %{{.+}}) ({
// CHECK:        "stablehlo.add"
// CHECK:      }) {padding = dense<{{\[\[}}0, 0], [7, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 8>, window_strides = array<i64: 1, 1>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = thunder.cumsum %x dim = 1 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
