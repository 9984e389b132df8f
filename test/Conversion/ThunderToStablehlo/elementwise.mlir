// RUN: thunder-opt %s --thunder-convert-to-stablehlo -split-input-file | FileCheck %s

// One-to-one ops keep their operands; the result is StableHLO in generic form.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<4x8xf32>)
// CHECK:      %[[ADD:.+]] = "stablehlo.add"(%[[A]], %[[B]]) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK:      %[[SUB:.+]] = "stablehlo.subtract"(%[[ADD]], %[[B]])
// CHECK:      %[[MUL:.+]] = "stablehlo.multiply"(%[[SUB]], %[[A]])
// CHECK:      %[[MAX:.+]] = "stablehlo.maximum"(%[[MUL]], %[[A]])
// CHECK:      %[[MIN:.+]] = "stablehlo.minimum"(%[[MAX]], %[[B]])
// CHECK:      %[[NEG:.+]] = "stablehlo.negate"(%[[MIN]])
// CHECK:      %[[ABS:.+]] = "stablehlo.abs"(%[[NEG]])
// CHECK:      %[[EXP:.+]] = "stablehlo.exponential"(%[[ABS]])
// CHECK:      %[[LOG:.+]] = "stablehlo.log"(%[[EXP]])
// CHECK:      %[[L1P:.+]] = "stablehlo.log_plus_one"(%[[LOG]])
// CHECK:      %[[SQRT:.+]] = "stablehlo.sqrt"(%[[L1P]])
// CHECK:      %[[RSQRT:.+]] = "stablehlo.rsqrt"(%[[SQRT]])
// CHECK:      %[[TANH:.+]] = "stablehlo.tanh"(%[[RSQRT]])
// CHECK:      %[[SIG:.+]] = "stablehlo.logistic"(%[[TANH]])
// CHECK:      %[[SIN:.+]] = "stablehlo.sine"(%[[SIG]])
// CHECK:      %[[COS:.+]] = "stablehlo.cosine"(%[[SIN]])
// CHECK:      %[[FLOOR:.+]] = "stablehlo.floor"(%[[COS]])
// CHECK:      %[[CEIL:.+]] = "stablehlo.ceil"(%[[FLOOR]])
// CHECK:      %[[POW:.+]] = "stablehlo.power"(%[[CEIL]], %[[B]])
// CHECK:      %[[DIV:.+]] = "stablehlo.divide"(%[[POW]], %[[B]])
// CHECK:      %[[ERF:.+]] = "chlo.erf"(%[[DIV]])
// CHECK:      return %[[ERF]]
func.func @main(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = thunder.add %a, %b : tensor<4x8xf32>
  %1 = thunder.sub %0, %b : tensor<4x8xf32>
  %2 = thunder.mul %1, %a : tensor<4x8xf32>
  %3 = thunder.maximum %2, %a : tensor<4x8xf32>
  %4 = thunder.minimum %3, %b : tensor<4x8xf32>
  %5 = thunder.neg %4 : tensor<4x8xf32>
  %6 = thunder.abs %5 : tensor<4x8xf32>
  %7 = thunder.exp %6 : tensor<4x8xf32>
  %8 = thunder.log %7 : tensor<4x8xf32>
  %9 = thunder.log1p %8 : tensor<4x8xf32>
  %10 = thunder.sqrt %9 : tensor<4x8xf32>
  %11 = thunder.rsqrt %10 : tensor<4x8xf32>
  %12 = thunder.tanh %11 : tensor<4x8xf32>
  %13 = thunder.sigmoid %12 : tensor<4x8xf32>
  %14 = thunder.sin %13 : tensor<4x8xf32>
  %15 = thunder.cos %14 : tensor<4x8xf32>
  %16 = thunder.floor %15 : tensor<4x8xf32>
  %17 = thunder.ceil %16 : tensor<4x8xf32>
  %18 = thunder.pow %17, %b : tensor<4x8xf32>
  %19 = thunder.div %18, %b : tensor<4x8xf32>
  %20 = thunder.erf %19 : tensor<4x8xf32>
  return %20 : tensor<4x8xf32>
}

// -----

// Transcendental ops on f16/bf16 run in f32 (PyTorch's opmath) and round once.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<3xbf16>)
// CHECK:      %[[UP:.+]] = "stablehlo.convert"(%[[X]]) : (tensor<3xbf16>) -> tensor<3xf32>
// CHECK:      %[[EXP:.+]] = "stablehlo.exponential"(%[[UP]]) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:      %[[DOWN:.+]] = "stablehlo.convert"(%[[EXP]]) : (tensor<3xf32>) -> tensor<3xbf16>
// CHECK:      return %[[DOWN]]
func.func @main(%x: tensor<3xbf16>) -> tensor<3xbf16> {
  %0 = thunder.exp %x : tensor<3xbf16>
  return %0 : tensor<3xbf16>
}

// -----

// Comparisons carry the direction and the comparison type of the element type.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.+]]: tensor<5xf32>, %[[B:.+]]: tensor<5xf32>, %[[I:.+]]: tensor<5xi64>, %[[P:.+]]: tensor<5xi1>)
// CHECK:      %[[GT:.+]] = "stablehlo.compare"(%[[A]], %[[B]]) {compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
// CHECK:      "stablehlo.compare"(%[[I]], %[[I]]) {compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}
// CHECK:      "stablehlo.compare"(%[[P]], %[[P]]) {compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}
// CHECK:      %[[SEL:.+]] = "stablehlo.select"(%[[GT]], %[[A]], %[[B]]) : (tensor<5xi1>, tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
// CHECK:      "stablehlo.and"
// CHECK:      "stablehlo.or"
// CHECK:      "stablehlo.xor"
// CHECK:      "stablehlo.not"
func.func @main(%a: tensor<5xf32>, %b: tensor<5xf32>, %i: tensor<5xi64>, %p: tensor<5xi1>) -> (tensor<5xf32>, tensor<5xi1>) {
  %0 = thunder.compare gt, %a, %b : tensor<5xf32>
  %1 = thunder.compare le, %i, %i : tensor<5xi64>
  %2 = thunder.compare ne, %p, %p : tensor<5xi1>
  %3 = thunder.where %0, %a, %b : tensor<5xf32>
  %4 = thunder.logical_and %1, %2 : tensor<5xi1>
  %5 = thunder.logical_or %4, %p : tensor<5xi1>
  %6 = thunder.logical_xor %5, %0 : tensor<5xi1>
  %7 = thunder.logical_not %6 : tensor<5xi1>
  return %3, %7 : tensor<5xf32>, tensor<5xi1>
}

// -----

// Python's remainder: the C remainder, plus the divisor where the signs differ.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.+]]: tensor<6xi64>, %[[B:.+]]: tensor<6xi64>)
// CHECK:      %[[R:.+]] = "stablehlo.remainder"(%[[A]], %[[B]])
// CHECK:      %[[ZERO_S:.+]] = "stablehlo.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
// CHECK:      %[[ZERO:.+]] = "stablehlo.broadcast_in_dim"(%[[ZERO_S]]) {broadcast_dimensions = array<i64>} : (tensor<i64>) -> tensor<6xi64>
// CHECK:      %[[NZ:.+]] = "stablehlo.compare"(%[[R]], %[[ZERO]]) {{.*}}comparison_direction NE
// CHECK:      %[[RNEG:.+]] = "stablehlo.compare"(%[[R]], %[[ZERO]]) {{.*}}comparison_direction LT
// CHECK:      %[[BNEG:.+]] = "stablehlo.compare"(%[[B]], %[[ZERO]]) {{.*}}comparison_direction LT
// CHECK:      %[[DIFF:.+]] = "stablehlo.compare"(%[[RNEG]], %[[BNEG]]) {{.*}}comparison_direction NE
// CHECK:      %[[FIX:.+]] = "stablehlo.and"(%[[NZ]], %[[DIFF]])
// CHECK:      %[[SUM:.+]] = "stablehlo.add"(%[[R]], %[[B]])
// CHECK:      %[[RES:.+]] = "stablehlo.select"(%[[FIX]], %[[SUM]], %[[R]])
// CHECK:      return %[[RES]]
func.func @main(%a: tensor<6xi64>, %b: tensor<6xi64>) -> tensor<6xi64> {
  %0 = thunder.remainder %a, %b : tensor<6xi64>
  return %0 : tensor<6xi64>
}

// -----

// Integer division: trunc is StableHLO's division; floor corrects it by one
// where the remainder is non-zero and the signs differ.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.+]]: tensor<6xi32>, %[[B:.+]]: tensor<6xi32>)
// CHECK:      %[[T:.+]] = "stablehlo.divide"(%[[A]], %[[B]]) : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
// CHECK:      "stablehlo.remainder"(%[[A]], %[[B]])
// CHECK:      %[[Q:.+]] = "stablehlo.divide"(%[[A]], %[[B]])
// CHECK:      %[[QM1:.+]] = "stablehlo.subtract"(%[[Q]],
// CHECK:      %[[F:.+]] = "stablehlo.select"(%{{.+}}, %[[QM1]], %[[Q]])
// CHECK:      return %[[T]], %[[F]]
func.func @main(%a: tensor<6xi32>, %b: tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>) {
  %0 = thunder.div %a, %b rounding_mode = trunc : tensor<6xi32>
  %1 = thunder.div %a, %b rounding_mode = floor : tensor<6xi32>
  return %0, %1 : tensor<6xi32>, tensor<6xi32>
}

// -----

// Float trunc division rounds the quotient toward zero.
// CHECK-LABEL: func.func @main
// CHECK:      %[[Q:.+]] = "stablehlo.divide"
// CHECK:      %[[NEG:.+]] = "stablehlo.compare"(%[[Q]], %{{.+}}) {{.*}}comparison_direction LT
// CHECK:      %[[C:.+]] = "stablehlo.ceil"(%[[Q]])
// CHECK:      %[[F:.+]] = "stablehlo.floor"(%[[Q]])
// CHECK:      "stablehlo.select"(%[[NEG]], %[[C]], %[[F]])
func.func @main(%a: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<6xf32> {
  %0 = thunder.div %a, %b rounding_mode = trunc : tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// relu, clamp, silu, reciprocal and gelu are built from primitives; clamp is
// max then min so that NaN propagates as in torch.clamp.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK:      %[[Z_S:.+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK:      %[[Z:.+]] = "stablehlo.broadcast_in_dim"(%[[Z_S]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK:      %[[RELU:.+]] = "stablehlo.maximum"(%[[X]], %[[Z]])
// CHECK:      %[[LO_S:.+]] = "stablehlo.constant"() {value = dense<-5.000000e-01> : tensor<f32>} : () -> tensor<f32>
// CHECK:      %[[LO:.+]] = "stablehlo.broadcast_in_dim"(%[[LO_S]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK:      %[[CL:.+]] = "stablehlo.maximum"(%[[RELU]], %[[LO]])
// CHECK:      %[[HI_S:.+]] = "stablehlo.constant"() {value = dense<6.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK:      %[[HI:.+]] = "stablehlo.broadcast_in_dim"(%[[HI_S]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK:      %[[CH:.+]] = "stablehlo.minimum"(%[[CL]], %[[HI]])
// CHECK:      %[[SIG:.+]] = "stablehlo.logistic"(%[[CH]])
// CHECK:      %[[SILU:.+]] = "stablehlo.multiply"(%[[CH]], %[[SIG]])
// CHECK:      %[[ONE_S:.+]] = "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK:      %[[ONE:.+]] = "stablehlo.broadcast_in_dim"(%[[ONE_S]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK:      %[[REC:.+]] = "stablehlo.divide"(%[[ONE]], %[[SILU]])
// CHECK:      "chlo.erf"
// CHECK:      "stablehlo.tanh"
func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = thunder.relu %x : tensor<2x3xf32>
  %1 = thunder.clamp %0 min = -0.5 max = 6.0 : tensor<2x3xf32>
  %2 = thunder.silu %1 : tensor<2x3xf32>
  %3 = thunder.reciprocal %2 : tensor<2x3xf32>
  %4 = thunder.gelu %3 : tensor<2x3xf32>
  %5 = thunder.gelu %3 approximate = tanh : tensor<2x3xf32>
  return %4, %5 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// convert: to i1 is `x != 0` (NaN is true); other conversions are
// stablehlo.convert (float to integer truncates).
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK:      %[[I:.+]] = "stablehlo.convert"(%[[X]]) : (tensor<4xf32>) -> tensor<4xi64>
// CHECK:      %[[Z_S:.+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK:      %[[Z:.+]] = "stablehlo.broadcast_in_dim"(%[[Z_S]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
// CHECK:      %[[B:.+]] = "stablehlo.compare"(%[[X]], %[[Z]]) {{.*}}comparison_direction NE
// CHECK:      %[[F:.+]] = "stablehlo.convert"(%[[B]]) : (tensor<4xi1>) -> tensor<4xf16>
// CHECK:      return %[[I]], %[[F]]
func.func @main(%x: tensor<4xf32>) -> (tensor<4xi64>, tensor<4xf16>) {
  %0 = thunder.convert %x : tensor<4xf32> -> tensor<4xi64>
  %1 = thunder.convert %x : tensor<4xf32> -> tensor<4xi1>
  %2 = thunder.convert %1 : tensor<4xi1> -> tensor<4xf16>
  return %0, %2 : tensor<4xi64>, tensor<4xf16>
}
