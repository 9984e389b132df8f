// RUN: thunder-opt %s -split-input-file -verify-diagnostics

// Verifier diagnostics of the `thunder` dialect: one case (or more) per
// constraint label of docs/dialect.md. Ops whose result type is inferred
// (`inferReturnTypes`) report their own message, then "failed to infer
// returned types".

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// elementwise_c1: the operands of a binary op have different element types.
func.func @elementwise_c1_element_type(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{failed to verify that all of {lhs, rhs, result} have same type}}
  %r = "thunder.add"(%a, %b) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// elementwise_c1: the operands of a binary op have different shapes (no
// implicit broadcast).
func.func @elementwise_c1_shape(%a: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{failed to verify that all of {lhs, rhs, result} have same type}}
  %r = "thunder.add"(%a, %b) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// elementwise_c1: a dynamic dim against a static one is not the same type
// (the static size must come from an explicit op, not be assumed).
func.func @elementwise_c1_dynamic(%a: tensor<4xf32>, %b: tensor<?xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{failed to verify that all of {lhs, rhs, result} have same type}}
  %r = "thunder.add"(%a, %b) : (tensor<4xf32>, tensor<?xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// elementwise_c1: a unary op's result type differs from its operand's (no
// implicit conversion).
func.func @elementwise_c1_unary(%a: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{failed to verify that all of {operand, result} have same type}}
  %r = "thunder.neg"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// -----

// elementwise_c1: the two operands of a comparison have different types.
func.func @elementwise_c1_compare(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xi1> {
  // expected-error @+1 {{failed to verify that all of {lhs, rhs} have same type}}
  %r = "thunder.compare"(%a, %b) {direction = 2 : i32} : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xi1>
  return %r : tensor<4xi1>
}

// -----

// elementwise_c1: the two branches of a select have different types.
func.func @elementwise_c1_where(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{failed to verify that all of {on_true, on_false, result} have same type}}
  %r = "thunder.where"(%c, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// unary_float_c1: exp of an integer tensor.
func.func @unary_float_c1(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of floating-point (f64, f32, f16, bf16, f8E4M3FN, f8E5M2) values}}
  %r = thunder.exp %a : tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

// unary_float_c1: gelu of an integer tensor.
func.func @unary_float_c1_gelu(%a: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{operand #0 must be ranked tensor of floating-point}}
  %r = thunder.gelu %a : tensor<4xi64>
  return %r : tensor<4xi64>
}

// -----

// unary_float_c1: mean of an integer tensor.
func.func @unary_float_c1_mean(%a: tensor<4x8xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of floating-point}}
  %r = thunder.mean %a dims = [1] : tensor<4x8xi32> -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

// bool_c1: logical_and of a float tensor.
func.func @bool_c1(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 1-bit signless integer values}}
  %r = thunder.logical_and %a, %a : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// bool_c1: logical_not of an integer tensor.
func.func @bool_c1_not(%a: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 1-bit signless integer values}}
  %r = thunder.logical_not %a : tensor<4xi8>
  return %r : tensor<4xi8>
}

// -----

// div_c1: true division (no rounding_mode) of integers.
func.func @div_c1(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{true division (rounding_mode = none) expects a floating-point element type, got 'i32'}}
  %r = thunder.div %a, %b : tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

// compare_c1: the result of a comparison has another shape than the operands.
func.func @compare_c1(%a: tensor<4xf32>) -> tensor<3xi1> {
  // expected-error @+1 {{failed to verify that result is an i1 tensor of the operands' shape}}
  %r = "thunder.compare"(%a, %a) {direction = 2 : i32} : (tensor<4xf32>, tensor<4xf32>) -> tensor<3xi1>
  return %r : tensor<3xi1>
}

// -----

// compare_c1: the result of a comparison is not i1.
func.func @compare_c1_element_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values}}
  %r = "thunder.compare"(%a, %a) {direction = 2 : i32} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// where_c1: the condition has another shape than the result.
func.func @where_c1(%c: tensor<3xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{failed to verify that condition is an i1 tensor of the result's shape}}
  %r = "thunder.where"(%c, %a, %a) : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// clamp_c1: neither bound is given.
func.func @clamp_c1(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expects at least one of min and max}}
  %r = thunder.clamp %x : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// clamp_c2: min > max.
func.func @clamp_c2(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expects min <= max, got min = 6.000000e+00 and max = 0.000000e+00}}
  %r = thunder.clamp %x min = 6.0 max = 0.0 : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// clamp_c3: a fractional bound for an integer tensor.
func.func @clamp_c3(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{expects integral bounds for an integer tensor, got 5.000000e-01}}
  %r = thunder.clamp %x min = 0.5 : tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

// convert_c1: a conversion that changes the shape.
func.func @convert_c1(%x: tensor<4xf32>) -> tensor<3xf16> {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape}}
  %r = "thunder.convert"(%x) : (tensor<4xf32>) -> tensor<3xf16>
  return %r : tensor<3xf16>
}

// -----

//===----------------------------------------------------------------------===//
// Constants and data movement
//===----------------------------------------------------------------------===//

// constant_c1: the value's type is not the result type.
func.func @constant_c1() -> tensor<3xf32> {
  // expected-error @+1 {{failed to verify that all of {value, result} have same type}}
  %r = "thunder.constant"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// constant_c2: a constant of dynamic shape (a resource blob can be typed so).
func.func @constant_c2() -> tensor<?xf32> {
  // expected-error @+1 {{expects a static shape, got 'tensor<?xf32>'}}
  %r = thunder.constant dense_resource<blob> : tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// weight_c1: an empty weight name.
func.func @weight_c1() -> tensor<4xf32> {
  // expected-error @+1 {{expects a non-empty weight name}}
  %w = thunder.weight "" : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

// weight_c2: a weight of dynamic shape.
func.func @weight_c2() -> tensor<?x4xf32> {
  // expected-error @+1 {{expects a static shape, got 'tensor<?x4xf32>'}}
  %w = thunder.weight "fc.weight" : tensor<?x4xf32>
  return %w : tensor<?x4xf32>
}

// -----

// iota_c1: dim is out of range.
func.func @iota_c1() -> tensor<4x8xi64> {
  // expected-error @+1 {{expects dim in [0, 2), got 2}}
  %i = thunder.iota dim = 2 : tensor<4x8xi64>
  return %i : tensor<4x8xi64>
}

// -----

// iota_c1: dim is negative (no PyTorch-style wrap-around in the IR).
func.func @iota_c1_negative() -> tensor<4x8xi64> {
  // expected-error @+1 {{expects dim in [0, 2), got -1}}
  %i = thunder.iota dim = -1 : tensor<4x8xi64>
  return %i : tensor<4x8xi64>
}

// -----

// iota_c2: a boolean iota.
func.func @iota_c2() -> tensor<4xi1> {
  // expected-error @+1 {{expects a numeric element type, got i1}}
  %i = thunder.iota dim = 0 : tensor<4xi1>
  return %i : tensor<4xi1>
}

// -----

// random_c1: a uniform draw into integers.
func.func @random_c1() -> tensor<4xi32> {
  // expected-error @+1 {{expects a floating-point element type for uniform, got 'i32'}}
  %r = thunder.random uniform stream = 0 : tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

// random_c1: a normal draw into booleans.
func.func @random_c1_normal() -> tensor<4xi1> {
  // expected-error @+1 {{expects a floating-point element type for normal, got 'i1'}}
  %r = thunder.random normal stream = 0 : tensor<4xi1>
  return %r : tensor<4xi1>
}

// -----

// random_c2: random bits are 64-bit integers.
func.func @random_c2() -> tensor<4xf32> {
  // expected-error @+1 {{expects i64 elements for bits, got 'f32'}}
  %r = thunder.random bits stream = 0 : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// random_c3: the stream id is a 32-bit counter word.
func.func @random_c3() -> tensor<4xf32> {
  // expected-error @+1 {{expects stream in [0, 2^32), got -1}}
  %r = thunder.random uniform stream = -1 : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// broadcast_c1: the broadcast changes the element type.
func.func @broadcast_c1(%x: tensor<16xf32>) -> tensor<8x16xf16> {
  // expected-error @+1 {{expects the operand and result element types to match, got 'f32' and 'f16'}}
  %r = thunder.broadcast %x, dims = [1] : tensor<16xf32> -> tensor<8x16xf16>
  return %r : tensor<8x16xf16>
}

// -----

// broadcast_c2: two broadcast dims for a 1-D operand.
func.func @broadcast_c2(%x: tensor<16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{expects one broadcast dim per operand dim (1), got 2}}
  %r = thunder.broadcast %x, dims = [0, 1] : tensor<16xf32> -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// broadcast_c3: the broadcast dims are not increasing.
func.func @broadcast_c3_order(%x: tensor<4x4xf32>) -> tensor<2x4x4xf32> {
  // expected-error @+1 {{broadcast dims [2, 1] are not strictly increasing}}
  %r = thunder.broadcast %x, dims = [2, 1] : tensor<4x4xf32> -> tensor<2x4x4xf32>
  return %r : tensor<2x4x4xf32>
}

// -----

// broadcast_c3: a broadcast dim beyond the result rank.
func.func @broadcast_c3_range(%x: tensor<16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{operand dim 0 maps to result dim 2, which is out of range for the result rank 2}}
  %r = thunder.broadcast %x, dims = [2] : tensor<16xf32> -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// broadcast_c4: a mapped dim that is neither 1 nor its result dim.
func.func @broadcast_c4(%x: tensor<4xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{operand dim 0 has size 4 but maps to result dim 1 of size 16}}
  %r = thunder.broadcast %x, dims = [1] : tensor<4xf32> -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// expand_c1: the expand changes the element type.
func.func @expand_c1(%x: tensor<1x4xf32>) -> tensor<2x3x4xbf16> {
  // expected-error @+1 {{expects the operand and result element types to match, got 'f32' and 'bf16'}}
  %r = thunder.expand %x : tensor<1x4xf32> -> tensor<2x3x4xbf16>
  return %r : tensor<2x3x4xbf16>
}

// -----

// expand_c2: the result rank is smaller than the operand rank.
func.func @expand_c2(%x: tensor<2x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the result rank 1 is smaller than the operand rank 2}}
  %r = thunder.expand %x : tensor<2x4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// expand_c3: a dim that is not 1 grows.
func.func @expand_c3(%x: tensor<3x4xf32>) -> tensor<2x5x4xf32> {
  // expected-error @+1 {{operand dim 0 of size 3 cannot expand to size 5 (result dim 1); only size-1 dims expand}}
  %r = thunder.expand %x : tensor<3x4xf32> -> tensor<2x5x4xf32>
  return %r : tensor<2x5x4xf32>
}

// -----

// reshape_c1: the reshape changes the element type.
func.func @reshape_c1(%x: tensor<2x3xf32>) -> tensor<6xi32> {
  // expected-error @+1 {{expects the operand and result element types to match, got 'f32' and 'i32'}}
  %r = thunder.reshape %x : tensor<2x3xf32> -> tensor<6xi32>
  return %r : tensor<6xi32>
}

// -----

// reshape_c2: static shapes with different element counts.
func.func @reshape_c2(%x: tensor<2x3x4xf32>) -> tensor<5x4xf32> {
  // expected-error @+1 {{expects the same number of elements, got 24 in 'tensor<2x3x4xf32>' and 20 in 'tensor<5x4xf32>'}}
  %r = thunder.reshape %x : tensor<2x3x4xf32> -> tensor<5x4xf32>
  return %r : tensor<5x4xf32>
}

// -----

// transpose_c1: the permutation repeats a dim.
func.func @transpose_c1_repeat(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+2 {{entry 1 of the permutation [0, 0] repeats dim 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.transpose %x, permutation = [0, 0] : tensor<2x3xf32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// transpose_c1: the permutation has the wrong length.
func.func @transpose_c1_length(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{the permutation [1, 0, 2] has 3 entries, but the input has rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.transpose %x, permutation = [1, 0, 2] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// transpose_c1: a permutation entry out of range.
func.func @transpose_c1_range(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{entry 0 of the permutation [2, 0] is 2, which is out of range [0, 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.transpose %x, permutation = [2, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// slice_c1: start has one entry for a 2-D operand.
func.func @slice_c1(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+2 {{expects start, end and step to have one entry per dim (2), got 1, 2 and 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.slice %x, start = [0], end = [4, 8], step = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// slice_c2: a zero step.
func.func @slice_c2(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+2 {{expects step >= 1, got 0 for dim 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.slice %x, start = [0, 0], end = [4, 8], step = [1, 0] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// slice_c3: end beyond the dim size.
func.func @slice_c3_end(%x: tensor<4x8xf32>) -> tensor<4x9xf32> {
  // expected-error @+2 {{expects 0 <= start <= end <= size for dim 1, got start = 0, end = 9, size = 8}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.slice %x, start = [0, 0], end = [4, 9], step = [1, 1] : tensor<4x8xf32> -> tensor<4x9xf32>
  return %r : tensor<4x9xf32>
}

// -----

// slice_c3: a negative start (the importer normalizes PyTorch's indices).
func.func @slice_c3_negative(%x: tensor<4x8xf32>) -> tensor<1x8xf32> {
  // expected-error @+2 {{expects 0 <= start <= end <= size for dim 0, got start = -1, end = 4, size = 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.slice %x, start = [-1, 0], end = [4, 8], step = [1, 1] : tensor<4x8xf32> -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

// slice_c3: start after end.
func.func @slice_c3_order(%x: tensor<4x8xf32>) -> tensor<0x8xf32> {
  // expected-error @+2 {{expects 0 <= start <= end <= size for dim 0, got start = 3, end = 2, size = 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.slice %x, start = [3, 0], end = [2, 8], step = [1, 1] : tensor<4x8xf32> -> tensor<0x8xf32>
  return %r : tensor<0x8xf32>
}

// -----

// slice_c3: on a dynamic dim, both counted from the size, the start after the end.
func.func @slice_c3_dynamic_order(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+2 {{expects start <= end for dim 0 (both counted from the same side of its dynamic size), got start = -1, end = -3}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.slice %x, start = [-1, 0], end = [-3, 8], step = [1, 1] : tensor<?x8xf32> -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

// slice_c3: a negative end on a static dim (only a dynamic dim's counts from its size).
func.func @slice_c3_static_negative_end(%x: tensor<4x8xf32>) -> tensor<3x8xf32> {
  // expected-error @+2 {{expects 0 <= start <= end <= size for dim 0, got start = 0, end = -1, size = 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.slice %x, start = [0, 0], end = [-1, 8], step = [1, 1] : tensor<4x8xf32> -> tensor<3x8xf32>
  return %r : tensor<3x8xf32>
}

// -----

// concat_c1: no inputs.
func.func @concat_c1() -> tensor<4xf32> {
  // expected-error @+2 {{expects at least one input}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.concat dim = 0 : () -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// concat_c2: inputs of different element types.
func.func @concat_c2_element_type(%a: tensor<2x3xf32>, %b: tensor<2x5xf16>) -> tensor<2x8xf32> {
  // expected-error @+2 {{expects all inputs to have one element type, got f32 (input #0) and f16 (input #1)}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.concat %a, %b dim = 1 : (tensor<2x3xf32>, tensor<2x5xf16>) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

// concat_c2: inputs of different ranks.
func.func @concat_c2_rank(%a: tensor<2x3xf32>, %b: tensor<2x5x1xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{input 1 [2, 5, 1] has rank 3, but input 0 [2, 3] has rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.concat %a, %b dim = 1 : (tensor<2x3xf32>, tensor<2x5x1xf32>) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

// concat_c3: dim out of range.
func.func @concat_c3(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{expects dim in [0, 2), got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.concat %a, %b dim = 2 : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

// concat_c4: a dim other than the concatenation dim differs.
func.func @concat_c4(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{dim 0 is 2 in input 0 and 3 in input 1, but all dims except the concatenation dim 1 must match}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.concat %a, %b dim = 1 : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

// pad_c1: low has one entry for a 2-D operand.
func.func @pad_c1(%x: tensor<4x5xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{expects low and high to have one entry per dim (2), got 1 and 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.pad %x, low = [1], high = [0, 2], value = 0.0 : tensor<4x5xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// pad_c2: negative padding crops more than the dim holds.
func.func @pad_c2(%x: tensor<4x5xf32>) -> tensor<0x5xf32> {
  // expected-error @+2 {{dim 0 of size 4 padded by -5 low and 0 high has size -1, which is negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.pad %x, low = [-5, 0], high = [0, 0], value = 0.0 : tensor<4x5xf32> -> tensor<0x5xf32>
  return %r : tensor<0x5xf32>
}

// -----

// gather_c1: input and index of different ranks.
func.func @gather_c1(%x: tensor<4x8xf32>, %idx: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+2 {{expects input and index of the same rank, got 2 and 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.gather %x, %idx dim = 1 : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// gather_c2: dim out of range.
func.func @gather_c2(%x: tensor<4x8xf32>, %idx: tensor<4x2xi64>) -> tensor<4x2xf32> {
  // expected-error @+2 {{expects dim in [0, 2), got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.gather %x, %idx dim = 2 : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// gather_c3: an index dim other than `dim` is larger than the input's.
func.func @gather_c3(%x: tensor<4x8xf32>, %idx: tensor<5x2xi64>) -> tensor<5x2xf32> {
  // expected-error @+2 {{expects index dim 0 (5) to be at most the input's (4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.gather %x, %idx dim = 1 : (tensor<4x8xf32>, tensor<5x2xi64>) -> tensor<5x2xf32>
  return %r : tensor<5x2xf32>
}

// -----

// index_select_c1: a 2-D index.
func.func @index_select_c1(%x: tensor<10x4xf32>, %idx: tensor<3x1xi64>) -> tensor<3x4xf32> {
  // expected-error @+2 {{expects a 1-D index, got rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.index_select %x, %idx dim = 0 : (tensor<10x4xf32>, tensor<3x1xi64>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// index_select_c2: dim out of range.
func.func @index_select_c2(%x: tensor<10x4xf32>, %idx: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error @+2 {{expects dim in [0, 2), got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.index_select %x, %idx dim = 2 : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// embedding_c1: a 3-D weight.
func.func @embedding_c1(%table: tensor<10x4x2xf32>, %ids: tensor<7xi64>) -> tensor<7x4xf32> {
  // expected-error @+2 {{expects a 2-D weight, got rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.embedding %table, %ids : (tensor<10x4x2xf32>, tensor<7xi64>) -> tensor<7x4xf32>
  return %r : tensor<7x4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// reduce_c1: no reduced dims.
func.func @reduce_c1(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{expects at least one reduced dim}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.sum %x dims = [] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// reduce_c2: a reduced dim out of range.
func.func @reduce_c2(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{expects reduced dims in [0, 2), got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.max %x dims = [2] : tensor<4x8xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// reduce_c2: a negative reduced dim (no PyTorch-style wrap-around in the IR).
func.func @reduce_c2_negative(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{expects reduced dims in [0, 2), got -1}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.prod %x dims = [-1] : tensor<4x8xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// reduce_c3: a reduced dim named twice.
func.func @reduce_c3(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{expects each reduced dim once, got 1 twice}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.min %x dims = [1, 1] : tensor<4x8xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// argreduce_c1: dim out of range.
func.func @argreduce_c1(%x: tensor<4x10xf32>) -> tensor<4xi64> {
  // expected-error @+2 {{expects dim in [0, 2), got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.argmax %x dim = 2 : tensor<4x10xf32> -> tensor<4xi64>
  return %r : tensor<4xi64>
}

// -----

//===----------------------------------------------------------------------===//
// Matmul, convolution, pooling
//===----------------------------------------------------------------------===//

// matmul_c1: operands of different element types.
func.func @matmul_c1(%a: tensor<8x16xf32>, %b: tensor<16x4xf16>) -> tensor<8x4xf32> {
  // expected-error @+2 {{expects operands of one element type, got f32 and f16}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.matmul %a, %b : (tensor<8x16xf32>, tensor<16x4xf16>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// matmul_c2: a 1-D lhs.
func.func @matmul_c2_lhs(%a: tensor<16xf32>, %b: tensor<16x4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{lhs [16] has rank 1, but matmul needs rank >= 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.matmul %a, %b : (tensor<16xf32>, tensor<16x4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// matmul_c2: an rhs whose rank is neither 2 nor the lhs rank.
func.func @matmul_c2_rhs(%a: tensor<2x3x8x16xf32>, %b: tensor<3x16x4xf32>) -> tensor<2x3x8x4xf32> {
  // expected-error @+2 {{rhs [3, 16, 4] has rank 3, but must have rank 2 or the lhs rank 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.matmul %a, %b : (tensor<2x3x8x16xf32>, tensor<3x16x4xf32>) -> tensor<2x3x8x4xf32>
  return %r : tensor<2x3x8x4xf32>
}

// -----

// matmul_c3: batch dims differ.
func.func @matmul_c3(%a: tensor<2x8x16xf32>, %b: tensor<3x16x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+2 {{batch dim 0 is 2 in lhs [2, 8, 16] and 3 in rhs [3, 16, 4], which differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.matmul %a, %b : (tensor<2x8x16xf32>, tensor<3x16x4xf32>) -> tensor<2x8x4xf32>
  return %r : tensor<2x8x4xf32>
}

// -----

// matmul_c4: contraction dims differ (rhs is transposed, so its K is dim 1).
func.func @matmul_c4(%x: tensor<8x768xf32>, %w: tensor<3072x512xf32>) -> tensor<8x3072xf32> {
  // expected-error @+2 {{the contraction size is 768 in lhs [8, 768] and 512 in rhs [3072, 512] (transposed), which differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.matmul %x, %w transpose_rhs : (tensor<8x768xf32>, tensor<3072x512xf32>) -> tensor<8x3072xf32>
  return %r : tensor<8x3072xf32>
}

// -----

// inferred_result: the written result shape is not the inferred one.
func.func @inferred_result_shape(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x8xf32> {
  // expected-error @+2 {{'thunder.matmul' op inferred type(s) 'tensor<8x4xf32>' are incompatible with return type(s) of operation 'tensor<8x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.matmul %a, %b : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// inferred_result: the written result element type is not the inferred
// one (a matmul does not convert).
func.func @inferred_result_element_type(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>) -> tensor<8x4xf32> {
  // expected-error @+2 {{'thunder.matmul' op inferred type(s) 'tensor<8x4xbf16>' are incompatible with return type(s) of operation 'tensor<8x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.matmul %a, %b : (tensor<8x16xbf16>, tensor<16x4xbf16>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// inferred_result: the written result rank is not the inferred one.
func.func @inferred_result_rank(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+2 {{'thunder.sum' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4x1xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.sum %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  return %r : tensor<4x1xf32>
}

// -----

// conv_c1: an input without spatial dims.
func.func @conv_c1(%x: tensor<1x3xf32>, %w: tensor<8x3xf32>) -> tensor<1x8xf32> {
  // expected-error @+2 {{expects an input of rank 3 to 5 ([N, C, 1-3 spatial dims]), got rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.convolution %x, %w stride = [] padding = [] dilation = [] groups = 1 : (tensor<1x3xf32>, tensor<8x3xf32>) -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

// conv_c2: a weight of another rank than the input.
func.func @conv_c2(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3xf32>) -> tensor<1x8x6x6xf32> {
  // expected-error @+2 {{expects a weight of the input's rank (4), got rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.convolution %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<8x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %r : tensor<1x8x6x6xf32>
}

// -----

// conv_c3: one stride for two spatial dims.
func.func @conv_c3(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32> {
  // expected-error @+2 {{expects 2 strides, 2 dilations and 4 paddings for 2 spatial dims, got 1, 2 and 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.convolution %x, %w stride = [1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %r : tensor<1x8x6x6xf32>
}

// -----

// conv_c4: groups does not divide the input channels.
func.func @conv_c4_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x6x6xf32> {
  // expected-error @+2 {{the input has 3 channels (dim 1), which is not divisible by groups = 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.convolution %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 2 : (tensor<1x3x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %r : tensor<1x8x6x6xf32>
}

// -----

// conv_c4: groups does not divide the output channels.
func.func @conv_c4_out_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+2 {{the weight has 6 output channels (dim 0), which is not divisible by groups = 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.convolution %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 4 : (tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %r : tensor<1x6x6x6xf32>
}

// -----

// conv_c4: weight dim 1 is not C / groups.
func.func @conv_c4_weight(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32> {
  // expected-error @+2 {{weight dim 1 is 4, but must be input channels / groups = 4 / 2 = 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.convolution %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 2 : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %r : tensor<1x8x6x6xf32>
}

// -----

// conv_c4: groups = 0.
func.func @conv_c4_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32> {
  // expected-error @+2 {{groups is 0, but must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.convolution %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 0 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %r : tensor<1x8x6x6xf32>
}

// -----

// conv_c5: a bias of the wrong size.
func.func @conv_c5(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x8x6x6xf32> {
  // expected-error @+2 {{expects a 1-D bias of size 8, got tensor<4xf32>}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.convolution %x, %w, %b stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<4xf32>) -> tensor<1x8x6x6xf32>
  return %r : tensor<1x8x6x6xf32>
}

// -----

// conv_c5: a 2-D bias.
func.func @conv_c5_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8x1xf32>) -> tensor<1x8x6x6xf32> {
  // expected-error @+2 {{expects a 1-D bias of size 8, got tensor<8x1xf32>}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.convolution %x, %w, %b stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8x1xf32>) -> tensor<1x8x6x6xf32>
  return %r : tensor<1x8x6x6xf32>
}

// -----

// conv_c6: input and weight of different element types.
func.func @conv_c6(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf16>) -> tensor<1x8x6x6xf32> {
  // expected-error @+2 {{expects input, weight and bias of one element type, got f32 and f16}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.convolution %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf16>) -> tensor<1x8x6x6xf32>
  return %r : tensor<1x8x6x6xf32>
}

// -----

// conv_c6: a bias of another element type.
func.func @conv_c6_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xbf16>) -> tensor<1x8x6x6xf32> {
  // expected-error @+2 {{expects input, weight and bias of one element type, got bias bf16}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.convolution %x, %w, %b stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xbf16>) -> tensor<1x8x6x6xf32>
  return %r : tensor<1x8x6x6xf32>
}

// -----

// conv_c7: a zero stride.
func.func @conv_c7_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32> {
  // expected-error @+2 {{stride is 0 for spatial dim 1, but must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.convolution %x, %w stride = [1, 0] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %r : tensor<1x8x6x6xf32>
}

// -----

// conv_c7: negative padding.
func.func @conv_c7_padding(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32> {
  // expected-error @+2 {{padding is -1 on the high side of spatial dim 0, but must be non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.convolution %x, %w stride = [1, 1] padding = [0, -1, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %r : tensor<1x8x6x6xf32>
}

// -----

// conv_c7: a zero dilation.
func.func @conv_c7_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32> {
  // expected-error @+2 {{dilation is 0 for spatial dim 0, but must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.convolution %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [0, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %r : tensor<1x8x6x6xf32>
}

// -----

// conv_c7: the kernel is larger than the padded input, so the output is empty.
func.func @conv_c7_empty(%x: tensor<1x3x4x4xf32>, %w: tensor<8x3x7x7xf32>) -> tensor<1x8x1x1xf32> {
  // expected-error @+2 {{spatial dim 0 (input dim 2) of size 4 with padding 0+0 is smaller than the kernel size 7 dilated by 1, which gives output size 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.convolution %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x3x4x4xf32>, tensor<8x3x7x7xf32>) -> tensor<1x8x1x1xf32>
  return %r : tensor<1x8x1x1xf32>
}

// -----

// pool_c1: a 4-d window.
func.func @pool_c1_window(%x: tensor<1x2x4x4x4x4xf32>) -> tensor<1x2x2x2x2x2xf32> {
  // expected-error @+2 {{expects 1 to 3 window dims and at least one leading dim, got a 4-d window on rank 6}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.max_pool %x kernel = [2, 2, 2, 2] stride = [2, 2, 2, 2] padding = [0, 0, 0, 0, 0, 0, 0, 0] dilation = [1, 1, 1, 1] : tensor<1x2x4x4x4x4xf32> -> tensor<1x2x2x2x2x2xf32>
  return %r : tensor<1x2x2x2x2x2xf32>
}

// -----

// pool_c1: no leading dim in front of the window dims.
func.func @pool_c1_rank(%x: tensor<4x4xf32>) -> tensor<2x2xf32> {
  // expected-error @+2 {{expects 1 to 3 window dims and at least one leading dim, got a 2-d window on rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.max_pool %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] dilation = [1, 1] : tensor<4x4xf32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// pool_c1: an empty kernel.
func.func @pool_c1_empty(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  // expected-error @+2 {{expects 1 to 3 window dims and at least one leading dim, got a 0-d window on rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.max_pool %x kernel = [] stride = [] padding = [] dilation = [] : tensor<1x4xf32> -> tensor<1x4xf32>
  return %r : tensor<1x4xf32>
}

// -----

// pool_c2: one stride for a 2-d window.
func.func @pool_c2(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+2 {{expects 2 strides and 4 paddings for a 2-d window, got 1 and 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.max_pool %x kernel = [2, 2] stride = [2] padding = [0, 0, 0, 0] dilation = [1, 1] : tensor<1x8x8x8xf32> -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// pool_c2: padding with one entry per window dim instead of two.
func.func @pool_c2_padding(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+2 {{expects 2 strides and 4 paddings for a 2-d window, got 2 and 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.max_pool %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] : tensor<1x8x8x8xf32> -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// pool_c2: one dilation for a 2-d window.
func.func @pool_c2_dilation(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+2 {{expects 2 dilations for a 2-d window, got 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.max_pool %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] dilation = [1] : tensor<1x8x8x8xf32> -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// pool_c3: a zero stride.
func.func @pool_c3_stride(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+2 {{stride is 0 for window dim 0, but must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.max_pool %x kernel = [2, 2] stride = [0, 2] padding = [0, 0, 0, 0] dilation = [1, 1] : tensor<1x8x8x8xf32> -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// pool_c3: a zero kernel size.
func.func @pool_c3_kernel(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+2 {{the kernel size is 0 in window dim 1, but must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.max_pool %x kernel = [2, 0] stride = [2, 2] padding = [0, 0, 0, 0] dilation = [1, 1] : tensor<1x8x8x8xf32> -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// pool_c3: padding more than half the kernel (PyTorch's rule).
func.func @pool_c3_padding(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x6x6xf32> {
  // expected-error @+2 {{padding 2 on the low side of window dim 0 is more than half the kernel size 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.max_pool %x kernel = [3, 3] stride = [2, 2] padding = [2, 2, 1, 1] dilation = [1, 1] : tensor<1x8x8x8xf32> -> tensor<1x8x6x6xf32>
  return %r : tensor<1x8x6x6xf32>
}

// -----

// pool_c3: the dilated window does not fit the input, so the output is empty.
func.func @pool_c3_empty(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x1x1xf32> {
  // expected-error @+2 {{window dim 0 (input dim 2) of size 4 with padding 0+0 is smaller than the kernel size 3 dilated by 2, which gives output size 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.max_pool %x kernel = [3, 3] stride = [1, 1] padding = [0, 0, 0, 0] dilation = [2, 2] : tensor<1x8x4x4xf32> -> tensor<1x8x1x1xf32>
  return %r : tensor<1x8x1x1xf32>
}

// -----

// pool_c2 (avg_pool): avg_pool shares pool_c1..pool_c3; here one stride for a
// 2-d window.
func.func @pool_c2_avg(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+2 {{expects 2 strides and 4 paddings for a 2-d window, got 1 and 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = thunder.avg_pool %x kernel = [2, 2] stride = [2] padding = [0, 0, 0, 0] : tensor<1x8x8x8xf32> -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// unary_float_c1 (avg_pool): average pooling of an integer tensor.
func.func @unary_float_c1_avg_pool(%x: tensor<1x8x8x8xi32>) -> tensor<1x8x4x4xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of floating-point}}
  %r = thunder.avg_pool %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x8x8x8xi32> -> tensor<1x8x4x4xi32>
  return %r : tensor<1x8x4x4xi32>
}

// -----

//===----------------------------------------------------------------------===//
// Composites
//===----------------------------------------------------------------------===//

// softmax_c1: dim out of range.
func.func @softmax_c1(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects dim in [0, 2), got 2}}
  %r = thunder.softmax %x dim = 2 : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// softmax_c1 (log_softmax): a negative dim.
func.func @softmax_c1_log(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects dim in [0, 2), got -1}}
  %r = thunder.log_softmax %x dim = -1 : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// unary_float_c1 (softmax): softmax of an integer tensor.
func.func @unary_float_c1_softmax(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of floating-point}}
  %r = thunder.softmax %x dim = 1 : tensor<4x8xi32>
  return %r : tensor<4x8xi32>
}

// -----

// norm_c1: normalized_rank = 0.
func.func @norm_c1(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{expects normalized_rank in [1, 3], got 0}}
  %r = thunder.layer_norm %x normalized_rank = 0 epsilon = 1.0e-05 : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

// -----

// norm_c1 (rms_norm): normalized_rank larger than the rank.
func.func @norm_c1_rms(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects normalized_rank in [1, 2], got 3}}
  %r = thunder.rms_norm %x normalized_rank = 3 epsilon = 1.0e-06 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// norm_c2: a weight that is not of the normalized shape.
func.func @norm_c2(%x: tensor<2x128x768xf32>, %g: tensor<512xf32>) -> tensor<2x128x768xf32> {
  // expected-error @+1 {{expects weight of the normalized shape [768] and element type 'f32', got 'tensor<512xf32>'}}
  %r = thunder.layer_norm %x weight %g normalized_rank = 1 epsilon = 1.0e-05 : (tensor<2x128x768xf32>, tensor<512xf32>) -> tensor<2x128x768xf32>
  return %r : tensor<2x128x768xf32>
}

// -----

// norm_c2: a bias of another element type than the input.
func.func @norm_c2_bias(%x: tensor<2x4x8xf32>, %g: tensor<4x8xf32>, %b: tensor<4x8xf16>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{expects bias of the normalized shape [4, 8] and element type 'f32', got 'tensor<4x8xf16>'}}
  %r = thunder.layer_norm %x weight %g bias %b normalized_rank = 2 epsilon = 1.0e-05 : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf16>) -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

// -----

// norm_c2 (rms_norm): a weight of another element type than the input.
func.func @norm_c2_rms(%x: tensor<1x64x512xbf16>, %g: tensor<512xf32>) -> tensor<1x64x512xbf16> {
  // expected-error @+1 {{expects weight of the normalized shape [512] and element type 'bf16', got 'tensor<512xf32>'}}
  %r = thunder.rms_norm %x weight %g normalized_rank = 1 epsilon = 1.0e-06 : (tensor<1x64x512xbf16>, tensor<512xf32>) -> tensor<1x64x512xbf16>
  return %r : tensor<1x64x512xbf16>
}

// -----

// norm_c3: a negative epsilon.
func.func @norm_c3(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects epsilon >= 0, got -1.000000e+00}}
  %r = thunder.layer_norm %x normalized_rank = 1 epsilon = -1.0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// norm_c3 (rms_norm): a NaN epsilon.
func.func @norm_c3_nan(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects epsilon >= 0, got nan}}
  %r = thunder.rms_norm %x normalized_rank = 1 epsilon = 0x7FF8000000000000 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// norm_c3 (batch_norm): a negative epsilon.
func.func @norm_c3_batch(%x: tensor<1x4x8x8xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{expects epsilon >= 0, got -5.000000e-01}}
  %r = thunder.batch_norm %x, %m, %v epsilon = -0.5 : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}

// -----

// batch_norm_c1: a 1-D input has no channel dim.
func.func @batch_norm_c1(%x: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expects an input of rank >= 2 ([N, C, ...]), got rank 1}}
  %r = thunder.batch_norm %x, %m, %v epsilon = 1.0e-05 : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// batch_norm_c2: a mean of the wrong size.
func.func @batch_norm_c2(%x: tensor<1x64x8x8xf32>, %m: tensor<32xf32>, %v: tensor<64xf32>) -> tensor<1x64x8x8xf32> {
  // expected-error @+1 {{expects mean to be 1-D of size 64 (the input's dim 1) with element type 'f32', got 'tensor<32xf32>'}}
  %r = thunder.batch_norm %x, %m, %v epsilon = 1.0e-05 : (tensor<1x64x8x8xf32>, tensor<32xf32>, tensor<64xf32>) -> tensor<1x64x8x8xf32>
  return %r : tensor<1x64x8x8xf32>
}

// -----

// batch_norm_c2: a bias of another element type.
func.func @batch_norm_c2_bias(%x: tensor<1x64x8x8xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>, %b: tensor<64xf16>) -> tensor<1x64x8x8xf32> {
  // expected-error @+1 {{expects bias to be 1-D of size 64 (the input's dim 1) with element type 'f32', got 'tensor<64xf16>'}}
  %r = thunder.batch_norm %x, %m, %v bias %b epsilon = 1.0e-05 : (tensor<1x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf16>) -> tensor<1x64x8x8xf32>
  return %r : tensor<1x64x8x8xf32>
}

// -----

// batch_norm_c2: a 2-D variance.
func.func @batch_norm_c2_rank(%x: tensor<1x64x8x8xf32>, %m: tensor<64xf32>, %v: tensor<64x1xf32>) -> tensor<1x64x8x8xf32> {
  // expected-error @+1 {{expects variance to be 1-D of size 64}}
  %r = thunder.batch_norm %x, %m, %v epsilon = 1.0e-05 : (tensor<1x64x8x8xf32>, tensor<64xf32>, tensor<64x1xf32>) -> tensor<1x64x8x8xf32>
  return %r : tensor<1x64x8x8xf32>
}

// -----

// sdpa_c1: key of another rank than query.
func.func @sdpa_c1_rank(%q: tensor<1x2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{expects query, key and value of one rank >= 2, got 4, 3 and 4}}
  %o = thunder.sdpa %q, %k, %v : (tensor<1x2x8x16xf32>, tensor<2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// sdpa_c1: 1-D query, key and value.
func.func @sdpa_c1_rank1(%q: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{expects query, key and value of one rank >= 2, got 1, 1 and 1}}
  %o = thunder.sdpa %q, %q, %q : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %o : tensor<16xf32>
}

// -----

// sdpa_c1: value of another element type.
func.func @sdpa_c1_element_type(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf16>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{expects query, key and value of one element type, got 'f32', 'f32' and 'f16'}}
  %o = thunder.sdpa %q, %k, %v : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf16>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// sdpa_c2: batch dims differ.
func.func @sdpa_c2_batch(%q: tensor<2x8x16xf32>, %k: tensor<3x8x16xf32>, %v: tensor<3x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{expects equal batch dims in query, key and value, got [2, 8, 16], [3, 8, 16] and [3, 8, 16]}}
  %o = thunder.sdpa %q, %k, %v : (tensor<2x8x16xf32>, tensor<3x8x16xf32>, tensor<3x8x16xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// sdpa_c2: key and value of different sequence lengths.
func.func @sdpa_c2_length(%q: tensor<2x8x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x12x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{expects key and value of one sequence length, got 10 and 12}}
  %o = thunder.sdpa %q, %k, %v : (tensor<2x8x16xf32>, tensor<2x10x16xf32>, tensor<2x12x16xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// sdpa_c2: query and key of different head dims.
func.func @sdpa_c2_head(%q: tensor<2x8x16xf32>, %k: tensor<2x8x32xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{expects query and key of one head dim, got 16 and 32}}
  %o = thunder.sdpa %q, %k, %v : (tensor<2x8x16xf32>, tensor<2x8x32xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// sdpa_c3: a float mask of another type than the query.
func.func @sdpa_c3_type(%q: tensor<2x8x16xf32>, %m: tensor<2x8x8xf16>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{expects a mask of i1 or 'f32' broadcastable to the scores' shape [2, 8, 8], got 'tensor<2x8x8xf16>'}}
  %o = thunder.sdpa %q, %q, %q mask %m : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x8xf16>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// sdpa_c3: a mask dim that is neither 1 nor the scores' dim.
func.func @sdpa_c3_shape(%q: tensor<2x8x16xf32>, %m: tensor<1x8x4xi1>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{expects a mask of i1 or 'f32' broadcastable to the scores' shape [2, 8, 8], got 'tensor<1x8x4xi1>'}}
  %o = thunder.sdpa %q, %q, %q mask %m : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<1x8x4xi1>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// sdpa_c3: a mask of lower rank than the query (no implicit broadcast).
func.func @sdpa_c3_rank(%q: tensor<2x8x16xf32>, %m: tensor<8x8xi1>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{expects a mask of i1 or 'f32' broadcastable to the scores' shape [2, 8, 8], got 'tensor<8x8xi1>'}}
  %o = thunder.sdpa %q, %q, %q mask %m : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<8x8xi1>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// sdpa_c4: both causal and a mask.
func.func @sdpa_c4(%q: tensor<2x8x16xf32>, %m: tensor<2x8x8xi1>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{expects causal or mask, not both}}
  %o = thunder.sdpa %q, %q, %q mask %m causal : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x8xi1>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// sdpa_c5: the result's last dim is not the value's head dim.
func.func @sdpa_c5(%q: tensor<2x8x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x10x32xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{expects result type 'tensor<2x8x32xf32>', got 'tensor<2x8x16xf32>'}}
  %o = thunder.sdpa %q, %k, %v : (tensor<2x8x16xf32>, tensor<2x10x16xf32>, tensor<2x10x32xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// sdpa_c5: the result's element type is not the query's.
func.func @sdpa_c5_element_type(%q: tensor<2x8x16xbf16>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{expects result type 'tensor<2x8x16xbf16>', got 'tensor<2x8x16xf32>'}}
  %o = thunder.sdpa %q, %q, %q : (tensor<2x8x16xbf16>, tensor<2x8x16xbf16>, tensor<2x8x16xbf16>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

// fusion_c1: one block argument for two inputs.
func.func @fusion_c1_count(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expects one block argument per input (2), got 1}}
  %r = thunder.fusion pointwise "fused_neg_0" (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %n = thunder.neg %x : tensor<4xf32>
    thunder.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// fusion_c1: a block argument of another type than its input.
func.func @fusion_c1_type(%a: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{expects block argument #0 to have the type of input #0 ('tensor<4xf32>'), got 'tensor<4xf16>'}}
  %r = thunder.fusion pointwise "fused_neg_0" (%a) : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%x: tensor<4xf16>):
    %n = thunder.neg %x : tensor<4xf16>
    thunder.yield %n : tensor<4xf16>
  }
  return %r : tensor<4xf16>
}

// -----

// fusion_c2: a non-thunder op inside a fusion region.
func.func @fusion_c2(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = thunder.fusion pointwise "fused_neg_0" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    // expected-error @+1 {{'func.constant' op is not allowed in a thunder.fusion region: only thunder ops other than thunder.fusion are}}
    %f = func.constant @fusion_c2 : (tensor<4xf32>) -> tensor<4xf32>
    %n = thunder.neg %x : tensor<4xf32>
    thunder.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// fusion_c2: a fusion nested in a fusion.
func.func @fusion_c2_nested(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = thunder.fusion pointwise "fused_neg_0" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    // expected-error @+1 {{'thunder.fusion' op is not allowed in a thunder.fusion region}}
    %i = thunder.fusion pointwise "fused_neg_1" (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%y: tensor<4xf32>):
      %n = thunder.neg %y : tensor<4xf32>
      thunder.yield %n : tensor<4xf32>
    }
    thunder.yield %i : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// fusion_c3: the yield's type is not the fusion's result type.
func.func @fusion_c3_type(%a: tensor<4xf32>) -> tensor<4xf16> {
  %r = thunder.fusion pointwise "fused_neg_0" (%a) : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%x: tensor<4xf32>):
    %n = thunder.neg %x : tensor<4xf32>
    // expected-error @+1 {{'thunder.yield' op expects the fusion's result types ('tensor<4xf16>'), got ('tensor<4xf32>')}}
    thunder.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf16>
}

// -----

// fusion_c3: the yield gives fewer values than the fusion has results.
func.func @fusion_c3_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r:2 = thunder.fusion pointwise "fused_neg_0" (%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    %n = thunder.neg %x : tensor<4xf32>
    // expected-error @+1 {{'thunder.yield' op expects the fusion's result types}}
    thunder.yield %n : tensor<4xf32>
  }
  return %r#0 : tensor<4xf32>
}

// -----

// cumsum_c1: dim out of range.
func.func @cumsum_c1(%x: tensor<4x8xi64>) -> tensor<4x8xi64> {
  // expected-error @+1 {{expects dim in [0, 2), got 2}}
  %r = thunder.cumsum %x dim = 2 : tensor<4x8xi64>
  return %r : tensor<4x8xi64>
}

// -----

// argsort_c1: dim out of range.
func.func @argsort_c1(%x: tensor<4x8xf32>) -> tensor<4x8xi64> {
  // expected-error @+1 {{expects dim in [0, 2), got 2}}
  %r = thunder.argsort %x dim = 2 : tensor<4x8xf32> -> tensor<4x8xi64>
  return %r : tensor<4x8xi64>
}

// -----

// argsort_c2: a result of another shape.
func.func @argsort_c2(%x: tensor<4x8xf32>) -> tensor<4x7xi64> {
  // expected-error @+1 {{expects a result of the input's shape}}
  %r = thunder.argsort %x dim = 1 : tensor<4x8xf32> -> tensor<4x7xi64>
  return %r : tensor<4x7xi64>
}

// -----

// scatter_c1: index of another rank.
func.func @scatter_c1(%x: tensor<4x8xf32>, %i: tensor<2xi64>, %s: tensor<2xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects input, index and src of one rank, got 2, 1 and 1}}
  %r = thunder.scatter %x, %i, %s dim = 0 : (tensor<4x8xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// scatter_c2: dim out of range.
func.func @scatter_c2(%x: tensor<4x8xf32>, %i: tensor<2x8xi64>, %s: tensor<2x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects dim in [0, 2), got 2}}
  %r = thunder.scatter %x, %i, %s dim = 2 : (tensor<4x8xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// scatter_c3: index larger than src.
func.func @scatter_c3(%x: tensor<4x8xf32>, %i: tensor<2x8xi64>, %s: tensor<2x4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects index dim 1 (8) to be at most src's and input's}}
  %r = thunder.scatter %x, %i, %s dim = 0 : (tensor<4x8xf32>, tensor<2x8xi64>, tensor<2x4xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// scatter_c4: an unknown reduction.
func.func @scatter_c4(%x: tensor<4x8xf32>, %i: tensor<2x8xi64>, %s: tensor<2x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects reduce none, sum, prod, amax, amin or mean, got 'max'}}
  %r = thunder.scatter %x, %i, %s dim = 0 reduce = "max" : (tensor<4x8xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
