// Folders and canonicalization patterns of the thunder dialect.
// RUN: thunder-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @fold_add_constants
func.func @fold_add_constants() -> tensor<4xf32> {
  // CHECK-NEXT: %[[C:.+]] = thunder.constant dense<3.000000e+00> : tensor<4xf32>
  // CHECK-NEXT: return %[[C]]
  %a = thunder.constant dense<1.0> : tensor<4xf32>
  %b = thunder.constant dense<2.0> : tensor<4xf32>
  %r = thunder.add %a, %b : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @fold_arith_non_splat
func.func @fold_arith_non_splat() -> (tensor<3xi64>, tensor<3xi64>, tensor<3xf32>, tensor<3xi64>) {
  // CHECK-DAG: thunder.constant dense<[5, 3, 1]> : tensor<3xi64>
  // CHECK-DAG: thunder.constant dense<[-3, 1, 5]> : tensor<3xi64>
  // CHECK-DAG: thunder.constant dense<[4.000000e+00, 4.000000e+00, 4.500000e+00]> : tensor<3xf32>
  // CHECK-DAG: thunder.constant dense<[1, 1, 5]> : tensor<3xi64>
  // CHECK-NOT: thunder.sub
  // CHECK-NOT: thunder.mul
  %a = thunder.constant dense<[1, 2, 3]> : tensor<3xi64>
  %b = thunder.constant dense<[4, 1, -2]> : tensor<3xi64>
  %sum = thunder.add %a, %b : tensor<3xi64>
  %diff = thunder.sub %a, %b : tensor<3xi64>
  %f = thunder.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %g = thunder.constant dense<[4.0, 2.0, 1.5]> : tensor<3xf32>
  %prod = thunder.mul %f, %g : tensor<3xf32>
  %neg = thunder.neg %diff : tensor<3xi64>
  %m = thunder.minimum %neg, %sum : tensor<3xi64>
  %half = thunder.constant dense<2> : tensor<3xi64>
  %q = thunder.div %m, %half rounding_mode = floor : tensor<3xi64>
  %d = thunder.maximum %q, %diff : tensor<3xi64>
  return %sum, %diff, %prod, %d : tensor<3xi64>, tensor<3xi64>, tensor<3xf32>, tensor<3xi64>
}

// -----

// Floor division rounds toward -inf, trunc toward zero, like PyTorch.
// CHECK-LABEL: func.func @fold_div_rounding
func.func @fold_div_rounding() -> (tensor<2xi64>, tensor<2xi64>, tensor<2xf32>) {
  // CHECK-DAG: thunder.constant dense<[-4, 3]> : tensor<2xi64>
  // CHECK-DAG: thunder.constant dense<[-3, 3]> : tensor<2xi64>
  // CHECK-DAG: thunder.constant dense<[-3.500000e+00, 3.500000e+00]> : tensor<2xf32>
  %a = thunder.constant dense<[-7, 7]> : tensor<2xi64>
  %b = thunder.constant dense<2> : tensor<2xi64>
  %floor = thunder.div %a, %b rounding_mode = floor : tensor<2xi64>
  %trunc = thunder.div %a, %b rounding_mode = trunc : tensor<2xi64>
  %fa = thunder.constant dense<[-7.0, 7.0]> : tensor<2xf32>
  %fb = thunder.constant dense<2.0> : tensor<2xf32>
  %true = thunder.div %fa, %fb : tensor<2xf32>
  return %floor, %trunc, %true : tensor<2xi64>, tensor<2xi64>, tensor<2xf32>
}

// -----

// The folders compute with the reference interpreter's scalar semantics:
// float floor division is Python's (from fmod), so 1 // 0.1 is 9 as in
// torch.div(1., 0.1, rounding_mode='floor'), where floor(1 / 0.1) would be
// 10, and -1 // inf is -1; a splat f64 -> f16 conversion rounds through f32
// as PyTorch does (1 + 2^-11 + 2^-40 ties there and goes to the even 1.0).
// CHECK-LABEL: func.func @fold_with_reference_semantics
func.func @fold_with_reference_semantics() -> (tensor<2xf32>, tensor<2xf16>) {
  // CHECK-DAG: %[[Q:.+]] = thunder.constant dense<[9.000000e+00, -1.000000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[H:.+]] = thunder.constant dense<1.000000e+00> : tensor<2xf16>
  // CHECK: return %[[Q]], %[[H]]
  %a = thunder.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %b = thunder.constant dense<[0.1, 0x7F800000]> : tensor<2xf32>
  %q = thunder.div %a, %b rounding_mode = floor : tensor<2xf32>
  %d = thunder.constant dense<1.0004882812509095> : tensor<2xf64>
  %h = thunder.convert %d : tensor<2xf64> -> tensor<2xf16>
  return %q, %h : tensor<2xf32>, tensor<2xf16>
}

// -----

// Integer division by zero is a run-time error in PyTorch: never folded.
// CHECK-LABEL: func.func @no_fold_div_by_zero
func.func @no_fold_div_by_zero() -> tensor<2xi64> {
  // CHECK: thunder.div
  %a = thunder.constant dense<[1, 2]> : tensor<2xi64>
  %z = thunder.constant dense<0> : tensor<2xi64>
  %r = thunder.div %a, %z rounding_mode = trunc : tensor<2xi64>
  return %r : tensor<2xi64>
}

// -----

// Resource blobs (weights) are never folded into IR text.
// CHECK-LABEL: func.func @no_fold_resource
func.func @no_fold_resource() -> tensor<2xf32> {
  // CHECK: %[[W:.+]] = thunder.constant dense_resource<w> : tensor<2xf32>
  // CHECK: thunder.add %[[W]], %[[W]]
  %w = thunder.constant dense_resource<w> : tensor<2xf32>
  %r = thunder.add %w, %w : tensor<2xf32>
  return %r : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// Large non-splat constants are not expanded by folding.
// CHECK-LABEL: func.func @no_fold_large
func.func @no_fold_large(%x: tensor<8192xf32>) -> tensor<8192xf32> {
  // CHECK: thunder.iota
  // CHECK: thunder.convert
  // CHECK: thunder.add
  %i = thunder.iota dim = 0 : tensor<8192xi64>
  %f = thunder.convert %i : tensor<8192xi64> -> tensor<8192xf32>
  %r = thunder.add %f, %x : tensor<8192xf32>
  return %r : tensor<8192xf32>
}

// -----

// CHECK-LABEL: func.func @fold_compare_where
func.func @fold_compare_where(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi1>) {
  // CHECK-DAG: %[[T:.+]] = thunder.constant dense<true> : tensor<4xi1>
  // CHECK-NOT: thunder.where
  // CHECK: return %arg1, %arg0, %[[T]]
  %one = thunder.constant dense<1.0> : tensor<4xf32>
  %two = thunder.constant dense<2.0> : tensor<4xf32>
  %lt = thunder.compare lt, %one, %two : tensor<4xf32>
  %ge = thunder.compare ge, %one, %two : tensor<4xf32>
  %0 = thunder.where %ge, %a, %b : tensor<4xf32>
  %1 = thunder.where %lt, %a, %a : tensor<4xf32>
  return %0, %1, %lt : tensor<4xf32>, tensor<4xf32>, tensor<4xi1>
}

// -----

// NaN compares unequal, even to itself; only ne holds.
// CHECK-LABEL: func.func @fold_compare_nan
func.func @fold_compare_nan() -> (tensor<2xi1>, tensor<2xi1>) {
  // CHECK-DAG: %[[F:.+]] = thunder.constant dense<false> : tensor<2xi1>
  // CHECK-DAG: %[[T:.+]] = thunder.constant dense<true> : tensor<2xi1>
  // CHECK: return %[[F]], %[[T]]
  %nan = thunder.constant dense<0x7FC00000> : tensor<2xf32>
  %eq = thunder.compare eq, %nan, %nan : tensor<2xf32>
  %ne = thunder.compare ne, %nan, %nan : tensor<2xf32>
  return %eq, %ne : tensor<2xi1>, tensor<2xi1>
}

// -----

// CHECK-LABEL: func.func @convert
func.func @convert(%x: tensor<4xf16>, %y: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xbf16>) {
  // Converting to the same type is the identity.
  %same = thunder.convert %y : tensor<4xf32> -> tensor<4xf32>
  // f16 -> f32 -> f16 loses nothing: the round trip folds away.
  %up = thunder.convert %x : tensor<4xf16> -> tensor<4xf32>
  %down = thunder.convert %up : tensor<4xf32> -> tensor<4xf16>
  // f32 -> f16 -> f32 rounds: it must stay.
  // CHECK-DAG: %[[N:.+]] = thunder.convert %arg1 : tensor<4xf32> -> tensor<4xf16>
  // CHECK-DAG: %[[W:.+]] = thunder.convert %[[N]] : tensor<4xf16> -> tensor<4xf32>
  %narrow = thunder.convert %y : tensor<4xf32> -> tensor<4xf16>
  %widen = thunder.convert %narrow : tensor<4xf16> -> tensor<4xf32>
  // i32 -> i64 -> i32 folds.
  %i64 = thunder.convert %i : tensor<4xi32> -> tensor<4xi64>
  %i32 = thunder.convert %i64 : tensor<4xi64> -> tensor<4xi32>
  // A converted splat constant is a constant, rounded to nearest even
  // (1 + 3/256 lies halfway between two bf16 values; the even one is 1 + 4/256).
  // CHECK-DAG: %[[C:.+]] = thunder.constant dense<1.015630e+00> : tensor<4xbf16>
  %c = thunder.constant dense<1.01171875> : tensor<4xf32>
  %cb = thunder.convert %c : tensor<4xf32> -> tensor<4xbf16>
  // CHECK: return %arg0, %arg1, %[[W]], %arg2, %[[C]]
  return %down, %same, %widen, %i32, %cb : tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xbf16>
}

// -----

// CHECK-LABEL: func.func @reshape_of_reshape
func.func @reshape_of_reshape(%x: tensor<2x3x4xf32>) -> (tensor<24xf32>, tensor<2x3x4xf32>) {
  // CHECK: %[[R:.+]] = thunder.reshape %arg0 : tensor<2x3x4xf32> -> tensor<24xf32>
  // CHECK-NOT: thunder.reshape
  // CHECK: return %[[R]], %arg0
  %a = thunder.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %b = thunder.reshape %a : tensor<6x4xf32> -> tensor<24xf32>
  %c = thunder.reshape %x : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %b, %c : tensor<24xf32>, tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_constant
func.func @reshape_constant() -> tensor<2x2xi32> {
  // CHECK: thunder.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi32>
  %c = thunder.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %r = thunder.reshape %c : tensor<4xi32> -> tensor<2x2xi32>
  return %r : tensor<2x2xi32>
}

// -----

// CHECK-LABEL: func.func @transpose_of_transpose
func.func @transpose_of_transpose(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<3x2x4xf32>) {
  // Two transposes compose into one; inverse permutations cancel.
  // CHECK: %[[T:.+]] = thunder.transpose %arg0, permutation = [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  // CHECK: return %arg0, %[[T]]
  %a = thunder.transpose %x, permutation = [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %b = thunder.transpose %a, permutation = [2, 0, 1] : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
  %c = thunder.transpose %a, permutation = [0, 2, 1] : tensor<3x4x2xf32> -> tensor<3x2x4xf32>
  return %b, %c : tensor<2x3x4xf32>, tensor<3x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_splat
func.func @broadcast_splat(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: %[[C:.+]] = thunder.constant dense<5.000000e-01> : tensor<4x8xf32>
  // CHECK-NOT: thunder.broadcast
  // CHECK: return %[[C]], %arg0
  %c = thunder.constant dense<0.5> : tensor<8xf32>
  %b = thunder.broadcast %c, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %id = thunder.broadcast %x, dims = [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %b, %id : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @expand_to_broadcast
func.func @expand_to_broadcast(%x: tensor<1x4xf32>) -> tensor<2x3x4xf32> {
  // CHECK: thunder.broadcast %arg0, dims = [1, 2] : tensor<1x4xf32> -> tensor<2x3x4xf32>
  // CHECK-NOT: thunder.expand
  %e = thunder.expand %x : tensor<1x4xf32> -> tensor<2x3x4xf32>
  return %e : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_into_matmul
func.func @transpose_into_matmul(%x: tensor<2x8x16xf32>, %w: tensor<32x16xf32>) -> tensor<2x8x32xf32> {
  // CHECK: thunder.matmul %arg0, %arg1 transpose_rhs : (tensor<2x8x16xf32>, tensor<32x16xf32>) -> tensor<2x8x32xf32>
  // CHECK-NOT: thunder.transpose
  %wt = thunder.transpose %w, permutation = [1, 0] : tensor<32x16xf32> -> tensor<16x32xf32>
  %y = thunder.matmul %x, %wt : (tensor<2x8x16xf32>, tensor<16x32xf32>) -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// A transpose of batch dims is not a GEMM operand transpose.
// CHECK-LABEL: func.func @batch_transpose_stays
func.func @batch_transpose_stays(%x: tensor<3x2x8x16xf32>, %w: tensor<2x3x16x4xf32>) -> tensor<2x3x8x4xf32> {
  // CHECK: thunder.transpose
  // CHECK: thunder.matmul %{{.*}}, %arg1 :
  %xt = thunder.transpose %x, permutation = [1, 0, 2, 3] : tensor<3x2x8x16xf32> -> tensor<2x3x8x16xf32>
  %y = thunder.matmul %xt, %w : (tensor<2x3x8x16xf32>, tensor<2x3x16x4xf32>) -> tensor<2x3x8x4xf32>
  return %y : tensor<2x3x8x4xf32>
}

// -----

// CHECK-LABEL: func.func @identity_slice_concat
func.func @identity_slice_concat(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32>) {
  // CHECK: %[[S:.+]] = thunder.slice %arg0, start = [0, 0], end = [4, 8], step = [1, 2]
  // CHECK: return %arg0, %arg0, %[[S]]
  %s = thunder.slice %x, start = [0, 0], end = [4, 8], step = [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %c = thunder.concat %x dim = 0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = thunder.slice %x, start = [0, 0], end = [4, 8], step = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %s, %c, %t : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32>
}

// -----

// Maximum/minimum of a value with itself is the value.
// CHECK-LABEL: func.func @max_min_self
func.func @max_min_self(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: return %arg0, %arg0
  %a = thunder.maximum %x, %x : tensor<4xf32>
  %b = thunder.minimum %x, %x : tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// neg(neg(x)) and abs(abs(x)) through the Involution/Idempotent traits.
// CHECK-LABEL: func.func @involution
func.func @involution(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: %[[A:.+]] = thunder.abs %arg0
  // CHECK-NOT: thunder.neg
  // CHECK: return %arg0, %[[A]]
  %n = thunder.neg %x : tensor<4xf32>
  %nn = thunder.neg %n : tensor<4xf32>
  %a = thunder.abs %x : tensor<4xf32>
  %aa = thunder.abs %a : tensor<4xf32>
  return %nn, %aa : tensor<4xf32>, tensor<4xf32>
}

// -----

// i1 is PyTorch's bool: false < true (not a signed 1-bit -1).
// CHECK-LABEL: func.func @fold_compare_bool
func.func @fold_compare_bool() -> (tensor<2xi1>, tensor<2xi1>) {
  // CHECK-DAG: %[[F:.+]] = thunder.constant dense<false> : tensor<2xi1>
  // CHECK-DAG: %[[T:.+]] = thunder.constant dense<true> : tensor<2xi1>
  // CHECK: return %[[F]], %[[T]]
  %t = thunder.constant dense<true> : tensor<2xi1>
  %f = thunder.constant dense<false> : tensor<2xi1>
  %lt = thunder.compare lt, %t, %f : tensor<2xi1>
  %gt = thunder.compare gt, %t, %f : tensor<2xi1>
  return %lt, %gt : tensor<2xi1>, tensor<2xi1>
}

// -----

// A convert to a dynamic shape is not folded into a constant, which must be
// static (constant_c2).
// CHECK-LABEL: func.func @no_fold_convert_dynamic
func.func @no_fold_convert_dynamic() -> tensor<?xf16> {
  // CHECK: thunder.convert %{{.+}} : tensor<4xf32> -> tensor<?xf16>
  %c = thunder.constant dense<1.0> : tensor<4xf32>
  %d = thunder.convert %c : tensor<4xf32> -> tensor<?xf16>
  return %d : tensor<?xf16>
}

// -----

// Powers by small constants become what ATen computes for them; other
// exponents, integer powers and non-constant exponents stay.
// CHECK-LABEL: func.func @pow_small_constants
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[E:.+]]: tensor<4xf32>, %[[I:.+]]: tensor<4xi32>, %[[D:.+]]: tensor<?xf32>)
func.func @pow_small_constants(%x: tensor<4xf32>, %e: tensor<4xf32>, %i: tensor<4xi32>,
                               %d: tensor<?xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>,
        tensor<?xf32>) {
  %c1 = thunder.constant dense<1.0> : tensor<4xf32>
  %c2 = thunder.constant dense<2.0> : tensor<4xf32>
  %c3 = thunder.constant dense<3.0> : tensor<4xf32>
  %ch = thunder.constant dense<0.5> : tensor<4xf32>
  %cmh = thunder.constant dense<-0.5> : tensor<4xf32>
  %cm1 = thunder.constant dense<-1.0> : tensor<4xf32>
  %cm2 = thunder.constant dense<-2.0> : tensor<4xf32>
  %c4 = thunder.constant dense<4.0> : tensor<4xf32>
  %i2 = thunder.constant dense<2> : tensor<4xi32>
  %s3 = thunder.constant dense<3.0> : tensor<f32>
  // CHECK-DAG: %[[SQ2:.+]] = thunder.mul %[[X]], %[[X]] : tensor<4xf32>
  // CHECK-DAG: %[[SQ3:.+]] = thunder.mul %[[X]], %[[X]] : tensor<4xf32>
  // CHECK-DAG: %[[CUBE:.+]] = thunder.mul %[[SQ3]], %[[X]] : tensor<4xf32>
  // CHECK-DAG: %[[SQRT:.+]] = thunder.sqrt %[[X]] : tensor<4xf32>
  // CHECK-DAG: %[[RSQRT:.+]] = thunder.rsqrt %[[X]] : tensor<4xf32>
  // CHECK-DAG: %[[RECIP:.+]] = thunder.reciprocal %[[X]] : tensor<4xf32>
  // CHECK-DAG: %[[SQM2:.+]] = thunder.mul %[[X]], %[[X]] : tensor<4xf32>
  // CHECK-DAG: %[[RECIP2:.+]] = thunder.reciprocal %[[SQM2]] : tensor<4xf32>
  // CHECK-DAG: %[[P4:.+]] = thunder.pow %[[X]], %{{.+}} : tensor<4xf32>
  // CHECK-DAG: %[[PE:.+]] = thunder.pow %[[X]], %[[E]] : tensor<4xf32>
  // CHECK-DAG: %[[PI:.+]] = thunder.pow %[[I]], %{{.+}} : tensor<4xi32>
  // CHECK-DAG: %[[DSQ:.+]] = thunder.mul %[[D]], %[[D]] : tensor<?xf32>
  // CHECK-DAG: %[[DCUBE:.+]] = thunder.mul %[[DSQ]], %[[D]] : tensor<?xf32>
  // CHECK: return %[[X]], %[[SQ2]], %[[CUBE]], %[[SQRT]], %[[RSQRT]], %[[RECIP]], %[[RECIP2]], %[[P4]], %[[PE]], %[[PI]], %[[DCUBE]]
  %p1 = thunder.pow %x, %c1 : tensor<4xf32>
  %p2 = thunder.pow %x, %c2 : tensor<4xf32>
  %p3 = thunder.pow %x, %c3 : tensor<4xf32>
  %ph = thunder.pow %x, %ch : tensor<4xf32>
  %pmh = thunder.pow %x, %cmh : tensor<4xf32>
  %pm1 = thunder.pow %x, %cm1 : tensor<4xf32>
  %pm2 = thunder.pow %x, %cm2 : tensor<4xf32>
  %p4 = thunder.pow %x, %c4 : tensor<4xf32>
  %pe = thunder.pow %x, %e : tensor<4xf32>
  %pi = thunder.pow %i, %i2 : tensor<4xi32>
  // A dynamic shape's splat: a broadcast scalar.
  %b3 = thunder.broadcast %s3, dims = [] : tensor<f32> -> tensor<?xf32>
  %pd = thunder.pow %d, %b3 : tensor<?xf32>
  return %p1, %p2, %p3, %ph, %pmh, %pm1, %pm2, %p4, %pe, %pi, %pd
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>,
        tensor<?xf32>
}
