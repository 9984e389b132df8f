// RUN: thunder-opt %s --thunder-convert-to-stablehlo -split-input-file | FileCheck %s

// argsort: a stable stablehlo.sort of (keys, iota along dim); the comparator
// puts the smaller key first, NaN above every number; the permuted iota is the
// result.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK:      %[[IOTA:.+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4x8xi64>
// CHECK:      %[[SORT:.+]]:2 = "stablehlo.sort"(%[[X]], %[[IOTA]]) ({
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<f32>, %[[B:.+]]: tensor<f32>, %{{.+}}: tensor<i64>, %{{.+}}: tensor<i64>):
// CHECK-NEXT:   %[[LT:.+]] = "stablehlo.compare"(%[[A]], %[[B]]) {compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}
// CHECK-NEXT:   %[[ANAN:.+]] = "stablehlo.compare"(%[[A]], %[[A]]) {{.*}}comparison_direction NE
// CHECK-NEXT:   %[[BNAN:.+]] = "stablehlo.compare"(%[[B]], %[[B]]) {{.*}}comparison_direction NE
// CHECK-NEXT:   %[[NOTA:.+]] = "stablehlo.not"(%[[ANAN]])
// CHECK-NEXT:   %[[NANB:.+]] = "stablehlo.and"(%[[BNAN]], %[[NOTA]])
// CHECK-NEXT:   %[[FIRST:.+]] = "stablehlo.or"(%[[LT]], %[[NANB]])
// CHECK-NEXT:   "stablehlo.return"(%[[FIRST]]) : (tensor<i1>) -> ()
// CHECK-NEXT: }) {dimension = 0 : i64, is_stable = true} : (tensor<4x8xf32>, tensor<4x8xi64>) -> (tensor<4x8xf32>, tensor<4x8xi64>)
// CHECK:      return %[[SORT]]#1
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xi64> {
  %0 = thunder.argsort %x dim = 0 : tensor<4x8xf32> -> tensor<4x8xi64>
  return %0 : tensor<4x8xi64>
}

// -----

// Descending: the larger key first, NaN before every number; integers need no
// NaN test.
// CHECK-LABEL: func.func @main
// CHECK:      "stablehlo.sort"
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<i32>, %[[B:.+]]: tensor<i32>, %{{.+}}: tensor<i64>, %{{.+}}: tensor<i64>):
// CHECK-NEXT:   %[[GT:.+]] = "stablehlo.compare"(%[[A]], %[[B]]) {compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GT>}
// CHECK-NEXT:   "stablehlo.return"(%[[GT]])
// CHECK-NEXT: }) {dimension = 1 : i64, is_stable = true}
// CHECK:      "stablehlo.sort"
// CHECK:        %[[GTF:.+]] = "stablehlo.compare"(%[[C:.+]], %[[D:.+]]) {{.*}}comparison_direction GT
// CHECK-NEXT:   %[[CNAN:.+]] = "stablehlo.compare"(%[[C]], %[[C]]) {{.*}}comparison_direction NE
// CHECK-NEXT:   %[[DNAN:.+]] = "stablehlo.compare"(%[[D]], %[[D]]) {{.*}}comparison_direction NE
// CHECK-NEXT:   %[[NOTD:.+]] = "stablehlo.not"(%[[DNAN]])
// CHECK-NEXT:   %[[NANC:.+]] = "stablehlo.and"(%[[CNAN]], %[[NOTD]])
// CHECK-NEXT:   "stablehlo.or"(%[[GTF]], %[[NANC]])
func.func @main(%i: tensor<3x5xi32>, %x: tensor<3x5xbf16>) -> (tensor<3x5xi64>, tensor<3x5xi64>) {
  %0 = thunder.argsort %i dim = 1 descending = true : tensor<3x5xi32> -> tensor<3x5xi64>
  %1 = thunder.argsort %x dim = 1 descending = true : tensor<3x5xbf16> -> tensor<3x5xi64>
  return %0, %1 : tensor<3x5xi64>, tensor<3x5xi64>
}

// -----

// scatter (overwrite): negative indices count from the end of dim; the full
// coordinates are the index along dim and iotas along the others; the src
// is sliced to the index's shape; the update returns the new value.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[I:.+]]: tensor<2x8xi32>, %[[S:.+]]: tensor<3x8xf32>)
// CHECK:      %[[I64:.+]] = "stablehlo.convert"(%[[I]]) : (tensor<2x8xi32>) -> tensor<2x8xi64>
// CHECK:      %[[WRAP:.+]] = "stablehlo.add"(%[[I64]], %{{.+}}) : (tensor<2x8xi64>, tensor<2x8xi64>) -> tensor<2x8xi64>
// CHECK:      %[[NEG:.+]] = "stablehlo.compare"(%[[I64]], %{{.+}}) {{.*}}comparison_direction LT
// CHECK:      %[[IDX:.+]] = "stablehlo.select"(%[[NEG]], %[[WRAP]], %[[I64]])
// CHECK:      %[[C0:.+]] = "stablehlo.reshape"(%[[IDX]]) : (tensor<2x8xi64>) -> tensor<2x8x1xi64>
// CHECK:      %[[IOTA:.+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x8xi64>
// CHECK:      %[[C1:.+]] = "stablehlo.reshape"(%[[IOTA]]) : (tensor<2x8xi64>) -> tensor<2x8x1xi64>
// CHECK:      %[[COORDS:.+]] = "stablehlo.concatenate"(%[[C0]], %[[C1]]) {dimension = 2 : i64} : (tensor<2x8x1xi64>, tensor<2x8x1xi64>) -> tensor<2x8x2xi64>
// CHECK:      %[[UPD:.+]] = "stablehlo.slice"(%[[S]]) {limit_indices = array<i64: 2, 8>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<3x8xf32>) -> tensor<2x8xf32>
// CHECK:      %[[R:.+]] = "stablehlo.scatter"(%[[X]], %[[COORDS]], %[[UPD]]) ({
// CHECK-NEXT: ^bb0(%{{.+}}: tensor<f32>, %[[NEW:.+]]: tensor<f32>):
// CHECK-NEXT:   "stablehlo.return"(%[[NEW]]) : (tensor<f32>) -> ()
// CHECK-NEXT: }) {indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 2>, unique_indices = false} : (tensor<4x8xf32>, tensor<2x8x2xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
// CHECK:      return %[[R]]
func.func @main(%x: tensor<4x8xf32>, %idx: tensor<2x8xi32>, %src: tensor<3x8xf32>) -> tensor<4x8xf32> {
  %0 = thunder.scatter %x, %idx, %src dim = 0 : (tensor<4x8xf32>, tensor<2x8xi32>, tensor<3x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The reduce modes combine in the update computation: sum adds, prod
// multiplies, amax/amin take the maximum/minimum.
// CHECK-LABEL: func.func @main
// CHECK:      "stablehlo.scatter"
// CHECK:        "stablehlo.add"
// CHECK:      "stablehlo.scatter"
// CHECK:        "stablehlo.multiply"
// CHECK:      "stablehlo.scatter"
// CHECK:        "stablehlo.maximum"
// CHECK:      "stablehlo.scatter"
// CHECK:        "stablehlo.minimum"
func.func @main(%x: tensor<4x8xf32>, %idx: tensor<2x8xi64>, %src: tensor<2x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = thunder.scatter %x, %idx, %src dim = 1 reduce = "sum" : (tensor<4x8xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %1 = thunder.scatter %x, %idx, %src dim = 1 reduce = "prod" : (tensor<4x8xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %2 = thunder.scatter %x, %idx, %src dim = 1 reduce = "amax" : (tensor<4x8xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %3 = thunder.scatter %x, %idx, %src dim = 1 reduce = "amin" : (tensor<4x8xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Without include_self, the positions that receive a value (a scatter-add of
// ones counts them) start from the identity (amax: -inf); mean divides the sum
// by the count, rounding down for integers, and keeps the untouched input.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %{{.+}}: tensor<2x8xi64>, %{{.+}}: tensor<2x8xf32>, %[[N:.+]]: tensor<4x8xi64>)
// CHECK:      %[[COUNT:.+]] = "stablehlo.scatter"(%{{.+}}, %[[COORDS:.+]], %{{.+}}) ({
// CHECK:        "stablehlo.add"
// CHECK:      }) {{.*}} : (tensor<4x8xi64>, tensor<2x8x2xi64>, tensor<2x8xi64>) -> tensor<4x8xi64>
// CHECK:      "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK:      %[[TOUCHED:.+]] = "stablehlo.compare"(%[[COUNT]], %{{.+}}) {{.*}}comparison_direction GT
// CHECK:      %[[BASE:.+]] = "stablehlo.select"(%[[TOUCHED]], %{{.+}}, %[[X]])
// CHECK:      "stablehlo.scatter"(%[[BASE]], %[[COORDS]], %{{.+}})
// CHECK:        "stablehlo.maximum"
// CHECK:      %[[SUM:.+]] = "stablehlo.scatter"(%[[N]], %{{.+}}, %{{.+}}) ({
// CHECK:        "stablehlo.add"
// CHECK:      %[[Q:.+]] = "stablehlo.divide"(%[[SUM]], %{{.+}}) : (tensor<4x8xi64>, tensor<4x8xi64>)
// CHECK:      "stablehlo.remainder"(%[[SUM]], %{{.+}})
// CHECK:      %[[FLOOR:.+]] = "stablehlo.select"(%{{.+}}, %{{.+}}, %[[Q]])
// CHECK:      %[[MEAN:.+]] = "stablehlo.select"(%{{.+}}, %[[FLOOR]], %[[N]])
// CHECK:      return %{{.+}}, %[[MEAN]]
func.func @main(%x: tensor<4x8xf32>, %idx: tensor<2x8xi64>, %src: tensor<2x8xf32>, %n: tensor<4x8xi64>) -> (tensor<4x8xf32>, tensor<4x8xi64>) {
  %0 = thunder.scatter %x, %idx, %src dim = 0 reduce = "amax" include_self = false : (tensor<4x8xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %s = thunder.convert %src : tensor<2x8xf32> -> tensor<2x8xi64>
  %1 = thunder.scatter %n, %idx, %s dim = 0 reduce = "mean" : (tensor<4x8xi64>, tensor<2x8xi64>, tensor<2x8xi64>) -> tensor<4x8xi64>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xi64>
}
