// RUN: thunder-opt %s --thunder-convert-to-stablehlo | FileCheck %s

// Resource blobs and literals of more than 64 elements become leading
// arguments of @main in order of first appearance (one per distinct value),
// listed in thunder.weights and thunder.weight_names; the user's arguments
// follow with their attributes; splats and small literals become
// stablehlo.constant. The module's attributes stay.

// CHECK:      module attributes {thunder.name = "m", thunder.phase = "graph"}
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[W2:.+]]: tensor<4xf32>, %[[W1:.+]]: tensor<2x2xf32>, %[[W3:.+]]: tensor<72xi32>, %[[X:.+]]: tensor<2x2xf32> {thunder.name = "x"}, %[[I:.+]]: tensor<72xi32> {thunder.name = "i"})
// CHECK-SAME: -> (tensor<2x2xf32>, tensor<4xf32>, tensor<72xi32>)
// CHECK-SAME: thunder.weight_names = ["second", "first", ""]
// CHECK-SAME: thunder.weights = [dense_resource<second> : tensor<4xf32>, dense_resource<first> : tensor<2x2xf32>, dense<[0, 1, 2, {{.*}}, 71]> : tensor<72xi32>]
// CHECK:      %[[SPLAT:.+]] = "stablehlo.constant"() {value = dense<2.000000e+00> : tensor<4xf32>} : () -> tensor<4xf32>
// CHECK:      %[[A:.+]] = "stablehlo.multiply"(%[[W2]], %[[SPLAT]])
// CHECK:      %[[SMALL:.+]] = "stablehlo.constant"() {value = dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>}
// CHECK:      %[[B:.+]] = "stablehlo.add"(%[[X]], %[[W1]])
// CHECK:      %[[C:.+]] = "stablehlo.add"(%[[B]], %[[SMALL]])
// CHECK:      %[[D:.+]] = "stablehlo.add"(%[[W2]], %[[A]])
// CHECK:      %[[E:.+]] = "stablehlo.add"(%[[I]], %[[W3]])
// CHECK:      return %[[C]], %[[D]], %[[E]]
module attributes {thunder.phase = "graph", thunder.name = "m"} {
  func.func @main(%x: tensor<2x2xf32> {thunder.name = "x"}, %i: tensor<72xi32> {thunder.name = "i"}) -> (tensor<2x2xf32>, tensor<4xf32>, tensor<72xi32>) {
    %second = thunder.constant dense_resource<second> : tensor<4xf32>
    %splat = thunder.constant dense<2.0> : tensor<4xf32>
    %0 = thunder.mul %second, %splat : tensor<4xf32>
    %first = thunder.constant dense_resource<first> : tensor<2x2xf32>
    %small = thunder.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    %1 = thunder.add %x, %first : tensor<2x2xf32>
    %2 = thunder.add %1, %small : tensor<2x2xf32>
    %again = thunder.constant dense_resource<second> : tensor<4xf32>
    %3 = thunder.add %again, %0 : tensor<4xf32>
    %big = thunder.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71]> : tensor<72xi32>
    %4 = thunder.add %i, %big : tensor<72xi32>
    return %2, %3, %4 : tensor<2x2xf32>, tensor<4xf32>, tensor<72xi32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      first: "0x040000000000803F000000400000404000008040",
      second: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
