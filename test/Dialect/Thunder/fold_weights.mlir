// RUN: thunder-opt %s -thunder-fold-weights -split-input-file | FileCheck %s
// RUN: %python %S/Inputs/fold_weights_large.py | thunder-opt -thunder-fold-weights | FileCheck %s --check-prefix=LARGE

// A broadcast that would multiply its operand's bytes stays an op (512 bytes
// -> 128 KiB); it still counts as known for a consumer whose result is no
// larger than the weights it reads: w * scale[:, None] folds, and its rows
// are 1.0 (0x3F800000), 2.0 (0x40000000), ...
// LARGE-LABEL: func.func @large_broadcast
// LARGE-SAME:  (%[[X:.+]]: tensor<128x256xf32>)
// LARGE-NEXT:  %[[S:.+]] = thunder.constant dense_resource<scale> : tensor<128xf32>
// LARGE-NEXT:  %[[B:.+]] = thunder.broadcast %[[S]], dims = [0]
// LARGE-NEXT:  %[[WS:.+]] = thunder.constant dense_resource<w.mul> : tensor<128x256xf32>
// LARGE-NEXT:  %[[A:.+]] = thunder.add %[[X]], %[[B]]
// LARGE-NEXT:  %[[M:.+]] = thunder.mul %[[A]], %[[WS]]
// LARGE-NEXT:  return %[[M]]
// LARGE:       w.mul: "0x04000000{{(0000803F){128}(0000803F){128}(00000040){128}(00000040){128}00004040}}

// A weight's transpose becomes a new blob named after it, with the
// transposed bytes: [[-1, 2, 3], [4, 5, 6]]^T = [[-1, 4], [2, 5], [3, 6]].
// CHECK-LABEL: func.func @transpose_resource
// CHECK-NEXT:  %[[W:.+]] = thunder.constant dense_resource<fc.weight.T> : tensor<3x2xf32>
// CHECK-NEXT:  return %[[W]]
// f16 arithmetic: [1, 2] * 3 = [3, 6] (0x4200, 0x4600).
// CHECK-LABEL: func.func @f16_mul
// CHECK-NEXT:  thunder.constant dense_resource<h.mul> : tensor<2xf16>
// CHECK-NEXT:  return
// CHECK:       fc.weight.T: "0x04000000000080BF00008040000000400000A040000040400000C040"
// CHECK:       h.mul: "0x0200000000420046"
func.func @transpose_resource() -> tensor<3x2xf32> {
  %w = thunder.constant dense_resource<fc.weight> : tensor<2x3xf32>
  %t = thunder.transpose %w, permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}
func.func @f16_mul() -> tensor<2xf16> {
  %w = thunder.constant dense_resource<h> : tensor<2xf16>
  %c = thunder.constant dense<3.0> : tensor<2xf16>
  %m = thunder.mul %w, %c : tensor<2xf16>
  return %m : tensor<2xf16>
}
{-#
  dialect_resources: {
    builtin: {
      fc.weight: "0x04000000000080BF0000004000004040000080400000A0400000C040",
      h: "0x02000000003C0040"
    }
  }
#-}

// -----

// A chain folds link by link: reshape, transpose, convert to bf16 (round to
// nearest even: 1 + 2^-8 is a tie that goes down to 1.0, 1 + 3 * 2^-8 one
// that goes up to 1.015625), then back to f32 and a multiply by a splat.
// CHECK-LABEL: func.func @chain
// CHECK-SAME:  (%[[X:.+]]: tensor<2x2xf32>)
// CHECK-NEXT:  %[[C:.+]] = thunder.constant dense<{{\[}}[2.000000e+00, 2.000000e+00], [2.000000e+00, 2.031250e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:  %[[R:.+]] = thunder.add %[[X]], %[[C]]
// CHECK-NEXT:  return %[[R]]
func.func @chain(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = thunder.constant dense<[1.0, 1.0, 1.00390625, 1.01171875]> : tensor<4xf32>
  %r = thunder.reshape %w : tensor<4xf32> -> tensor<2x2xf32>
  %t = thunder.transpose %r, permutation = [1, 0] : tensor<2x2xf32> -> tensor<2x2xf32>
  %h = thunder.convert %t : tensor<2x2xf32> -> tensor<2x2xbf16>
  %f = thunder.convert %h : tensor<2x2xbf16> -> tensor<2x2xf32>
  %two = thunder.constant dense<2.0> : tensor<2x2xf32>
  %m = thunder.mul %f, %two : tensor<2x2xf32>
  %y = thunder.add %x, %m : tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// Slice, concat, pad and a reduction of literals.
// CHECK-LABEL: func.func @data_movement
// CHECK-NEXT:  %[[S:.+]] = thunder.constant dense<[2, 4, 6]> : tensor<3xi64>
// CHECK-NEXT:  %[[C:.+]] = thunder.constant dense<[1, 2, 3, 4, 5, 6, 0, 0]> : tensor<8xi32>
// CHECK-NEXT:  %[[P:.+]] = thunder.constant dense<{{\[}}[9.000000e+00, 9.000000e+00], [9.000000e+00, 1.000000e+00], [9.000000e+00, 2.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT:  %[[R:.+]] = thunder.constant dense<[3.000000e+00, 7.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:  return %[[S]], %[[C]], %[[P]], %[[R]]
func.func @data_movement() -> (tensor<3xi64>, tensor<8xi32>, tensor<3x2xf32>, tensor<2xf32>) {
  %a = thunder.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi64>
  %s = thunder.slice %a, start = [1], end = [6], step = [2] : tensor<6xi64> -> tensor<3xi64>
  %b = thunder.constant dense<[1, 2, 3]> : tensor<3xi32>
  %c = thunder.constant dense<[4, 5, 6]> : tensor<3xi32>
  %z = thunder.constant dense<0> : tensor<2xi32>
  %cat = thunder.concat %b, %c, %z dim = 0 : (tensor<3xi32>, tensor<3xi32>, tensor<2xi32>) -> tensor<8xi32>
  %v = thunder.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %p = thunder.pad %v, low = [1, 1], high = [0, 0], value = 9.0 : tensor<2x1xf32> -> tensor<3x2xf32>
  %m = thunder.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %sum = thunder.sum %m dims = [1] : tensor<2x2xf32> -> tensor<2xf32>
  return %s, %cat, %p, %sum : tensor<3xi64>, tensor<8xi32>, tensor<3x2xf32>, tensor<2xf32>
}

// -----

// Gathers of constants by constant indices (BERT's position embeddings).
// CHECK-LABEL: func.func @gathers
// CHECK-NEXT:  dense<{{\[}}[3, 1], [6, 6]]> : tensor<2x2xi64>
// CHECK-NEXT:  dense<{{\[}}[3, 1], [6, 4]]> : tensor<2x2xi64>
// CHECK:       dense<{{\[\[}}[5, 6], [1, 2]]]> : tensor<1x2x2xi64>
// CHECK:       thunder.embedding
// CHECK-NEXT:  return
func.func @gathers() -> (tensor<2x2xi64>, tensor<2x2xi64>, tensor<1x2x2xi64>, tensor<1x1x2xi64>) {
  %t = thunder.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %gi = thunder.constant dense<[[2, 0], [2, 2]]> : tensor<2x2xi64>
  %g = thunder.gather %t, %gi dim = 1 : (tensor<2x3xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  %si = thunder.constant dense<[2, 0]> : tensor<2xi32>
  %s = thunder.index_select %t, %si dim = 1 : (tensor<2x3xi64>, tensor<2xi32>) -> tensor<2x2xi64>
  %table = thunder.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
  %ids = thunder.constant dense<[[2, 0]]> : tensor<1x2xi64>
  %e = thunder.embedding %table, %ids : (tensor<3x2xi64>, tensor<1x2xi64>) -> tensor<1x2x2xi64>
  // Out of range: PyTorch raises, so it is left to run.
  %bad = thunder.constant dense<[[3]]> : tensor<1x1xi64>
  %eb = thunder.embedding %table, %bad : (tensor<3x2xi64>, tensor<1x1xi64>) -> tensor<1x1x2xi64>
  return %g, %s, %e, %eb : tensor<2x2xi64>, tensor<2x2xi64>, tensor<1x2x2xi64>, tensor<1x1x2xi64>
}

// -----

// Elementwise ops with PyTorch's semantics: compare and where, clamp,
// float to int truncates toward zero, floor division and remainder follow
// the divisor's sign, max and mean reductions, i1 logic, gelu, and
// f32 -> f16 -> f32 (65504 is the largest f16, 1e-8 underflows to 0). An
// expand that grows a non-splat stays an op (a kernel reads it in place).
// CHECK-LABEL: func.func @elementwise
// CHECK-NEXT:  dense<[2.500000e+00, 5.000000e-01, 1.500000e+00, 7.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:  dense<[-1.000000e+00, -5.000000e-01, 1.500000e+00, 2.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:  dense<[-2, 0, 1, 7]> : tensor<4xi32>
// CHECK-NEXT:  dense<[-4, -4, 3, 3]> : tensor<4xi64>
// CHECK-NEXT:  dense<[1, -1, -1, 1]> : tensor<4xi64>
// CHECK-NEXT:  dense<{{\[}}[5.000000e+00], [6.000000e+00]]> : tensor<2x1xf32>
// CHECK-NEXT:  dense<[2.500000e+00, 3.500000e+00, 4.500000e+00]> : tensor<3xf32>
// CHECK-NEXT:  dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:  thunder.expand
// CHECK-NEXT:  dense<[false, true, true, false]> : tensor<4xi1>
// CHECK-NEXT:  dense<[-0.0155241{{[0-9]*}}, -0.15426877{{[0-9]*}}, 1.3997892{{[0-9]*}}, 7.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:  dense<[6.550400e+04, 0.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:  return
func.func @elementwise() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi64>, tensor<4xi64>, tensor<2x1xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<4xi1>, tensor<4xf32>, tensor<2xf32>) {
  %a = thunder.constant dense<[-2.5, -0.5, 1.5, 7.0]> : tensor<4xf32>
  %z = thunder.constant dense<0.0> : tensor<4xf32>
  %lt = thunder.compare lt, %a, %z : tensor<4xf32>
  %neg = thunder.neg %a : tensor<4xf32>
  %abs = thunder.where %lt, %neg, %a : tensor<4xf32>
  %cl = thunder.clamp %a min = -1.0 max = 2.0 : tensor<4xf32>
  %i = thunder.convert %a : tensor<4xf32> -> tensor<4xi32>
  %n = thunder.constant dense<[-7, 7, -7, 7]> : tensor<4xi64>
  %d = thunder.constant dense<[2, -2, -2, 2]> : tensor<4xi64>
  %fd = thunder.div %n, %d rounding_mode = floor : tensor<4xi64>
  %rem = thunder.remainder %n, %d : tensor<4xi64>
  %m = thunder.constant dense<[[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]]> : tensor<2x3xf32>
  %mx = thunder.max %m dims = [1] keepdim : tensor<2x3xf32> -> tensor<2x1xf32>
  %mean = thunder.mean %m dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
  %row = thunder.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %e = thunder.expand %row : tensor<3xf32> -> tensor<2x3xf32>
  %t = thunder.constant dense<[false, true, true, false]> : tensor<4xi1>
  %x = thunder.logical_and %t, %t : tensor<4xi1>
  %g = thunder.gelu %a : tensor<4xf32>
  %h = thunder.constant dense<[65504.0, 1.0e-8]> : tensor<2xf32>
  %hh = thunder.convert %h : tensor<2xf32> -> tensor<2xf16>
  %hf = thunder.convert %hh : tensor<2xf16> -> tensor<2xf32>
  return %abs, %cl, %i, %fd, %rem, %mx, %mean, %e, %x, %g, %hf : tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi64>, tensor<4xi64>, tensor<2x1xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<4xi1>, tensor<4xf32>, tensor<2xf32>
}

// -----

// f8 weights are dequantized at compile time (f8 -> f32 is exact); rounding
// into f8 (which saturates or gives NaN depending on the kernel) is left to
// the target.
// CHECK-LABEL: func.func @f8
// CHECK-NEXT:  %[[F:.+]] = thunder.constant dense<[1.000000e+00, 4.480000e+02]> : tensor<2xf32>
// CHECK-NEXT:  %[[X:.+]] = thunder.constant dense<[1.000000e+00, 5.000000e+02]> : tensor<2xf32>
// CHECK-NEXT:  %[[Q:.+]] = thunder.convert %[[X]] : tensor<2xf32> -> tensor<2xf8E4M3FN>
// CHECK-NEXT:  return %[[F]], %[[Q]]
func.func @f8() -> (tensor<2xf32>, tensor<2xf8E4M3FN>) {
  %w = thunder.constant dense<[1.0, 448.0]> : tensor<2xf8E4M3FN>
  %f = thunder.convert %w : tensor<2xf8E4M3FN> -> tensor<2xf32>
  %x = thunder.constant dense<[1.0, 500.0]> : tensor<2xf32>
  %q = thunder.convert %x : tensor<2xf32> -> tensor<2xf8E4M3FN>
  return %f, %q : tensor<2xf32>, tensor<2xf8E4M3FN>
}

// -----

// Splats stay splats, whatever their size.
// CHECK-LABEL: func.func @splat
// CHECK-NEXT:  %[[C:.+]] = thunder.constant dense<5.000000e-01> : tensor<1024x1024xf32>
// CHECK-NEXT:  return %[[C]]
func.func @splat() -> tensor<1024x1024xf32> {
  %a = thunder.constant dense<4.0> : tensor<1024xf32>
  %b = thunder.broadcast %a, dims = [1] : tensor<1024xf32> -> tensor<1024x1024xf32>
  %r = thunder.rsqrt %b : tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}

// -----

// Not folded: an operand computed at run time, an integer division by zero,
// a float out of the integer type's range, a blob elided from the text (no
// bytes to read).
// CHECK-LABEL: func.func @not_constant
// CHECK:       thunder.transpose
// CHECK:       thunder.div
// CHECK:       thunder.convert
// CHECK:       thunder.neg
func.func @not_constant(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<2xi64>, tensor<2xi32>, tensor<4xf32>) {
  %t = thunder.transpose %x, permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %a = thunder.constant dense<[7, 8]> : tensor<2xi64>
  %z = thunder.constant dense<[2, 0]> : tensor<2xi64>
  %d = thunder.div %a, %z rounding_mode = trunc : tensor<2xi64>
  %big = thunder.constant dense<[1.0, 3.0e9]> : tensor<2xf32>
  %i = thunder.convert %big : tensor<2xf32> -> tensor<2xi32>
  %e = thunder.constant dense_resource<__elided__> : tensor<4xf32>
  %n = thunder.neg %e : tensor<4xf32>
  return %t, %d, %i, %n : tensor<3x2xf32>, tensor<2xi64>, tensor<2xi32>, tensor<4xf32>
}

// -----

// batch_norm after a 1x1 convolution with 2 output channels:
// s = gamma / sqrt(var + eps) = [2 / sqrt(3 + 1), 0.5 / sqrt(0 + 1)] = [1, 0.5],
// W' = W * s per output channel, b' = (b - mean) * s + beta
//    = [(0 - 1) * 1 + 0.5, (0 - 2) * 0.5 - 1] = [-0.5, -2].
// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME:  (%[[X:.+]]: tensor<1x2x4x4xf32>)
// CHECK-DAG:   %[[W:.+]] = thunder.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}1.500000e+00]], {{\[\[}}2.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK-DAG:   %[[B:.+]] = thunder.constant dense<[-5.000000e-01, -2.000000e+00]> : tensor<2xf32>
// CHECK:       %[[Y:.+]] = thunder.convolution %[[X]], %[[W]], %[[B]] stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1
// CHECK-NOT:   thunder.batch_norm
// CHECK:       return %[[Y]]
func.func @batch_norm(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = thunder.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %mean = thunder.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = thunder.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %g = thunder.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %b = thunder.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %y = thunder.convolution %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = thunder.batch_norm %y, %mean, %var weight %g bias %b epsilon = 1.0 : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %z : tensor<1x2x4x4xf32>
}

// -----

// With a convolution bias, no affine parameters, and weights from blobs: the
// new blobs are named after the convolution's weight. W = [[1], [2]] with a
// dynamic batch, b = [1, 1], mean = [0, 3], var = [3, 15], eps = 1:
// s = [0.5, 0.25], W' = [0.5, 0.5], b' = [0.5, -0.5].
// CHECK-LABEL: func.func @batch_norm_bias
// CHECK-DAG:   %[[W:.+]] = thunder.constant dense_resource<conv.weight.bn_folded> : tensor<2x1x1x1xf32>
// CHECK-DAG:   %[[B:.+]] = thunder.constant dense_resource<conv.bias.bn_folded> : tensor<2xf32>
// CHECK:       thunder.convolution %{{.+}}, %[[W]], %[[B]] {{.*}} -> tensor<?x2x3x3xf32>
// CHECK-NOT:   thunder.batch_norm
// CHECK:       conv.weight.bn_folded: "0x040000000000003F0000003F"
// CHECK:       conv.bias.bn_folded: "0x040000000000003F000000BF"
func.func @batch_norm_bias(%x: tensor<?x1x3x3xf32>) -> tensor<?x2x3x3xf32> {
  %w = thunder.constant dense_resource<conv.weight> : tensor<2x1x1x1xf32>
  %b = thunder.constant dense_resource<conv.bias> : tensor<2xf32>
  %mean = thunder.constant dense_resource<bn.running_mean> : tensor<2xf32>
  %var = thunder.constant dense_resource<bn.running_var> : tensor<2xf32>
  %y = thunder.convolution %x, %w, %b stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<?x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<?x2x3x3xf32>
  %z = thunder.batch_norm %y, %mean, %var epsilon = 1.0 : (tensor<?x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x3x3xf32>
  return %z : tensor<?x2x3x3xf32>
}
{-#
  dialect_resources: {
    builtin: {
      conv.weight: "0x040000000000803F00000040",
      conv.bias: "0x040000000000803F0000803F",
      bn.running_mean: "0x040000000000000000004040",
      bn.running_var: "0x040000000000404000007041"
    }
  }
#-}

// -----

// Not folded: the convolution's result has another user (folding would
// change it), or the statistics are computed at run time.
// CHECK-LABEL: func.func @batch_norm_shared_conv
// CHECK:       %[[Y:.+]] = thunder.convolution
// CHECK:       thunder.batch_norm %[[Y]]
// CHECK:       thunder.relu %[[Y]]
// CHECK-LABEL: func.func @batch_norm_runtime_stats
// CHECK:       thunder.batch_norm
func.func @batch_norm_shared_conv(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = thunder.constant dense<1.0> : tensor<2x2x1x1xf32>
  %mean = thunder.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = thunder.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %y = thunder.convolution %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = thunder.batch_norm %y, %mean, %var epsilon = 1.0e-05 : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r = thunder.relu %y : tensor<1x2x4x4xf32>
  return %z, %r : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
func.func @batch_norm_runtime_stats(%x: tensor<1x2x4x4xf32>, %mean: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %w = thunder.constant dense<1.0> : tensor<2x2x1x1xf32>
  %var = thunder.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %y = thunder.convolution %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = thunder.batch_norm %y, %mean, %var epsilon = 1.0e-05 : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %z : tensor<1x2x4x4xf32>
}

// -----

// The reference interpreter's edge cases, as torch computes them: relu keeps
// -0.0 (and turns -2 into +0.0), float floor division is Python's
// (1 // 0.1 is 9, not floor(1 / 0.1) = 10; -1 // inf is -1), and an integer
// power with a negative exponent is 0 but for the bases 1 and -1.
// CHECK-LABEL: func.func @reference_edges
// CHECK-NEXT:  dense<[-0.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:  dense<[9.000000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:  dense<[0, 1, -1]> : tensor<3xi32>
// CHECK-NEXT:  return
func.func @reference_edges() -> (tensor<2xf32>, tensor<2xf32>, tensor<3xi32>) {
  %z = thunder.constant dense<[-0.0, -2.0]> : tensor<2xf32>
  %r = thunder.relu %z : tensor<2xf32>
  %a = thunder.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %b = thunder.constant dense<[0.1, 0x7F800000]> : tensor<2xf32>
  %q = thunder.div %a, %b rounding_mode = floor : tensor<2xf32>
  %base = thunder.constant dense<[2, 1, -1]> : tensor<3xi32>
  %e = thunder.constant dense<-3> : tensor<3xi32>
  %p = thunder.pow %base, %e : tensor<3xi32>
  return %r, %q, %p : tensor<2xf32>, tensor<2xf32>, tensor<3xi32>
}
