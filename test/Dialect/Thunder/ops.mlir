// Round trip of every op in the thunder dialect: parse, print, parse again,
// and the generic form parses back to the same IR.
// RUN: thunder-opt %s | thunder-opt | FileCheck %s
// RUN: thunder-opt %s --mlir-print-op-generic | thunder-opt | FileCheck %s

// CHECK-LABEL: func.func @unary
func.func @unary(%f: tensor<2x?xf32>, %i: tensor<3xi32>, %b: tensor<4xi1>) {
  // CHECK: thunder.neg %{{.*}} : tensor<2x?xf32>
  %0 = thunder.neg %f : tensor<2x?xf32>
  // CHECK: thunder.neg %{{.*}} : tensor<3xi32>
  %1 = thunder.neg %i : tensor<3xi32>
  // CHECK: thunder.abs
  %2 = thunder.abs %i : tensor<3xi32>
  // CHECK: thunder.relu
  %3 = thunder.relu %f : tensor<2x?xf32>
  // CHECK: thunder.exp
  %4 = thunder.exp %f : tensor<2x?xf32>
  // CHECK: thunder.log
  %5 = thunder.log %f : tensor<2x?xf32>
  // CHECK: thunder.log1p
  %6 = thunder.log1p %f : tensor<2x?xf32>
  // CHECK: thunder.sqrt
  %7 = thunder.sqrt %f : tensor<2x?xf32>
  // CHECK: thunder.rsqrt
  %8 = thunder.rsqrt %f : tensor<2x?xf32>
  // CHECK: thunder.reciprocal
  %9 = thunder.reciprocal %f : tensor<2x?xf32>
  // CHECK: thunder.tanh
  %10 = thunder.tanh %f : tensor<2x?xf32>
  // CHECK: thunder.sigmoid
  %11 = thunder.sigmoid %f : tensor<2x?xf32>
  // CHECK: thunder.erf
  %12 = thunder.erf %f : tensor<2x?xf32>
  // CHECK: thunder.sin
  %13 = thunder.sin %f : tensor<2x?xf32>
  // CHECK: thunder.cos
  %14 = thunder.cos %f : tensor<2x?xf32>
  // CHECK: thunder.floor
  %15 = thunder.floor %f : tensor<2x?xf32>
  // CHECK: thunder.ceil
  %16 = thunder.ceil %f : tensor<2x?xf32>
  // CHECK: thunder.silu
  %17 = thunder.silu %f : tensor<2x?xf32>
  // CHECK: thunder.gelu %{{.*}} : tensor<2x?xf32>
  %18 = thunder.gelu %f : tensor<2x?xf32>
  // CHECK: thunder.gelu %{{.*}} approximate = tanh : tensor<2x?xf32>
  %19 = thunder.gelu %f approximate = tanh : tensor<2x?xf32>
  // CHECK: thunder.logical_not %{{.*}} : tensor<4xi1>
  %20 = thunder.logical_not %b : tensor<4xi1>
  return
}

// CHECK-LABEL: func.func @element_types
func.func @element_types(%a: tensor<2xf64>, %b: tensor<2xf16>, %c: tensor<2xbf16>,
                         %d: tensor<2xf8E4M3FN>, %e: tensor<2xf8E5M2>,
                         %f: tensor<2xi64>, %g: tensor<2xi8>, %h: tensor<f32>) {
  // CHECK: thunder.add %{{.*}} : tensor<2xf64>
  %0 = thunder.add %a, %a : tensor<2xf64>
  // CHECK: thunder.mul %{{.*}} : tensor<2xf16>
  %1 = thunder.mul %b, %b : tensor<2xf16>
  // CHECK: thunder.sub %{{.*}} : tensor<2xbf16>
  %2 = thunder.sub %c, %c : tensor<2xbf16>
  // CHECK: thunder.convert %{{.*}} : tensor<2xf8E4M3FN> -> tensor<2xf32>
  %3 = thunder.convert %d : tensor<2xf8E4M3FN> -> tensor<2xf32>
  // CHECK: thunder.convert %{{.*}} : tensor<2xf8E5M2> -> tensor<2xbf16>
  %4 = thunder.convert %e : tensor<2xf8E5M2> -> tensor<2xbf16>
  // CHECK: thunder.maximum %{{.*}} : tensor<2xi64>
  %5 = thunder.maximum %f, %f : tensor<2xi64>
  // CHECK: thunder.minimum %{{.*}} : tensor<2xi8>
  %6 = thunder.minimum %g, %g : tensor<2xi8>
  // Rank-0 tensors are tensors too.
  // CHECK: thunder.exp %{{.*}} : tensor<f32>
  %7 = thunder.exp %h : tensor<f32>
  return
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<4x?xf32>, %i: tensor<4xi64>, %p: tensor<4xi1>, %q: tensor<4xi1>) {
  // CHECK: thunder.add
  %0 = thunder.add %a, %a : tensor<4x?xf32>
  // CHECK: thunder.sub
  %1 = thunder.sub %a, %a : tensor<4x?xf32>
  // CHECK: thunder.mul
  %2 = thunder.mul %a, %a : tensor<4x?xf32>
  // CHECK: thunder.div %{{.*}} : tensor<4x?xf32>
  %3 = thunder.div %a, %a : tensor<4x?xf32>
  // CHECK: thunder.div %{{.*}} rounding_mode = floor : tensor<4xi64>
  %4 = thunder.div %i, %i rounding_mode = floor : tensor<4xi64>
  // CHECK: thunder.div %{{.*}} rounding_mode = trunc : tensor<4xi64>
  %5 = thunder.div %i, %i rounding_mode = trunc : tensor<4xi64>
  // CHECK: thunder.remainder
  %6 = thunder.remainder %i, %i : tensor<4xi64>
  // CHECK: thunder.pow
  %7 = thunder.pow %a, %a : tensor<4x?xf32>
  // CHECK: thunder.maximum
  %8 = thunder.maximum %a, %a : tensor<4x?xf32>
  // CHECK: thunder.minimum
  %9 = thunder.minimum %a, %a : tensor<4x?xf32>
  // CHECK: thunder.logical_and
  %10 = thunder.logical_and %p, %q : tensor<4xi1>
  // CHECK: thunder.logical_or
  %11 = thunder.logical_or %p, %q : tensor<4xi1>
  // CHECK: thunder.logical_xor
  %12 = thunder.logical_xor %p, %q : tensor<4xi1>
  return
}

// CHECK-LABEL: func.func @compare_select_clamp_convert
func.func @compare_select_clamp_convert(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %i: tensor<4x8xi32>) -> tensor<4x8xi1> {
  // CHECK: thunder.compare eq, %{{.*}}, %{{.*}} : tensor<4x8xf32>
  %0 = thunder.compare eq, %a, %b : tensor<4x8xf32>
  // CHECK: thunder.compare ne,
  %1 = thunder.compare ne, %a, %b : tensor<4x8xf32>
  // CHECK: thunder.compare lt,
  %2 = thunder.compare lt, %a, %b : tensor<4x8xf32>
  // CHECK: thunder.compare le,
  %3 = thunder.compare le, %a, %b : tensor<4x8xf32>
  // CHECK: thunder.compare gt,
  %4 = thunder.compare gt, %i, %i : tensor<4x8xi32>
  // CHECK: thunder.compare ge,
  %5 = thunder.compare ge, %i, %i : tensor<4x8xi32>
  // CHECK: thunder.where %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32>
  %6 = thunder.where %2, %a, %b : tensor<4x8xf32>
  // CHECK: thunder.clamp %{{.*}} min = 0.000000e+00 max = 6.000000e+00 : tensor<4x8xf32>
  %7 = thunder.clamp %a min = 0.0 max = 6.0 : tensor<4x8xf32>
  // CHECK: thunder.clamp %{{.*}} max = 1.000000e+01 : tensor<4x8xi32>
  %8 = thunder.clamp %i max = 10.0 : tensor<4x8xi32>
  // CHECK: thunder.convert %{{.*}} : tensor<4x8xf32> -> tensor<4x8xbf16>
  %9 = thunder.convert %a : tensor<4x8xf32> -> tensor<4x8xbf16>
  // CHECK: thunder.convert %{{.*}} : tensor<4x8xi32> -> tensor<4x8xi1>
  %10 = thunder.convert %i : tensor<4x8xi32> -> tensor<4x8xi1>
  return %0 : tensor<4x8xi1>
}

// CHECK-LABEL: func.func @values
func.func @values() {
  // CHECK: thunder.constant dense<1.000000e+00> : tensor<4xf32>
  %0 = thunder.constant dense<1.0> : tensor<4xf32>
  // CHECK: thunder.constant dense<[1, 2, 3]> : tensor<3xi64>
  %1 = thunder.constant dense<[1, 2, 3]> : tensor<3xi64>
  // CHECK: thunder.constant dense_resource<fc1_weight> : tensor<2x2xf32>
  %2 = thunder.constant dense_resource<fc1_weight> : tensor<2x2xf32>
  // CHECK: thunder.weight "encoder.layer.0.weight" : tensor<16x8xbf16>
  %3 = thunder.weight "encoder.layer.0.weight" : tensor<16x8xbf16>
  // CHECK: thunder.iota dim = 1 : tensor<4x8xi64>
  %4 = thunder.iota dim = 1 : tensor<4x8xi64>
  // CHECK: thunder.random uniform stream = 0 : tensor<?x4xf32>
  %5 = thunder.random uniform stream = 0 : tensor<?x4xf32>
  // CHECK: thunder.random normal stream = 1 : tensor<3xbf16>
  %6 = thunder.random normal stream = 1 : tensor<3xbf16>
  // CHECK: thunder.random bits stream = 2 : tensor<5xi64>
  %7 = thunder.random bits stream = 2 : tensor<5xi64>
  return
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<2x3x4xf32>, %v: tensor<16xf32>, %d: tensor<?x4xf32>,
                         %idx: tensor<4x2xi64>, %sel: tensor<3xi32>, %ids: tensor<2x7xi64>,
                         %table: tensor<1000x64xf32>, %m: tensor<4x8xf32>) {
  // CHECK: thunder.broadcast %{{.*}}, dims = [1] : tensor<16xf32> -> tensor<8x16xf32>
  %0 = thunder.broadcast %v, dims = [1] : tensor<16xf32> -> tensor<8x16xf32>
  // CHECK: thunder.broadcast %{{.*}}, dims = [0, 1] : tensor<?x4xf32> -> tensor<?x4xf32>
  %1 = thunder.broadcast %d, dims = [0, 1] : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: thunder.expand %{{.*}} : tensor<16xf32> -> tensor<2x16xf32>
  %2 = thunder.expand %v : tensor<16xf32> -> tensor<2x16xf32>
  // CHECK: thunder.reshape %{{.*}} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %3 = thunder.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  // CHECK: thunder.reshape %{{.*}} : tensor<?x4xf32> -> tensor<?xf32>
  %4 = thunder.reshape %d : tensor<?x4xf32> -> tensor<?xf32>
  // CHECK: thunder.transpose %{{.*}}, permutation = [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  %5 = thunder.transpose %x, permutation = [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  // CHECK: thunder.slice %{{.*}}, start = [0, 1], end = [4, 8], step = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  %6 = thunder.slice %m, start = [0, 1], end = [4, 8], step = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  // A dynamic dim's start and end counted from its size: the last three rows, and the
  // window [size - 3, size - 1).
  // CHECK: thunder.slice %{{.*}}, start = [-3, 0], end = [9223372036854775807, 4], step = [1, 1] : tensor<?x4xf32> -> tensor<?x4xf32>
  %s0 = thunder.slice %d, start = [-3, 0], end = [9223372036854775807, 4], step = [1, 1] : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: thunder.slice %{{.*}}, start = [-3, 0], end = [-1, 4], step = [1, 1] : tensor<?x4xf32> -> tensor<?x4xf32>
  %s1 = thunder.slice %d, start = [-3, 0], end = [-1, 4], step = [1, 1] : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: thunder.concat %{{.*}}, %{{.*}} dim = 1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  %7 = thunder.concat %m, %m dim = 1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  // CHECK: thunder.concat %{{.*}}, %{{.*}} dim = 0 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %8 = thunder.concat %d, %d dim = 0 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: thunder.pad %{{.*}}, low = [0, 1], high = [0, 2], value = 0.000000e+00 : tensor<4x8xf32> -> tensor<4x11xf32>
  %9 = thunder.pad %m, low = [0, 1], high = [0, 2], value = 0.0 : tensor<4x8xf32> -> tensor<4x11xf32>
  // CHECK: thunder.pad %{{.*}}, low = [-1, 0], high = [0, 0], value = 1.000000e+00 : tensor<4x8xf32> -> tensor<3x8xf32>
  %10 = thunder.pad %m, low = [-1, 0], high = [0, 0], value = 1.0 : tensor<4x8xf32> -> tensor<3x8xf32>
  // CHECK: thunder.gather %{{.*}}, %{{.*}} dim = 1 : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  %11 = thunder.gather %m, %idx dim = 1 : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  // CHECK: thunder.index_select %{{.*}}, %{{.*}} dim = 0 : (tensor<4x8xf32>, tensor<3xi32>) -> tensor<3x8xf32>
  %12 = thunder.index_select %m, %sel dim = 0 : (tensor<4x8xf32>, tensor<3xi32>) -> tensor<3x8xf32>
  // CHECK: thunder.embedding %{{.*}}, %{{.*}} : (tensor<1000x64xf32>, tensor<2x7xi64>) -> tensor<2x7x64xf32>
  %13 = thunder.embedding %table, %ids : (tensor<1000x64xf32>, tensor<2x7xi64>) -> tensor<2x7x64xf32>
  return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<4x?xf32>, %i: tensor<4x8xi64>) {
  // CHECK: thunder.sum %{{.*}} dims = [1] : tensor<4x?xf32> -> tensor<4xf32>
  %0 = thunder.sum %x dims = [1] : tensor<4x?xf32> -> tensor<4xf32>
  // CHECK: thunder.mean %{{.*}} dims = [0, 1] keepdim : tensor<4x?xf32> -> tensor<1x1xf32>
  %1 = thunder.mean %x dims = [0, 1] keepdim : tensor<4x?xf32> -> tensor<1x1xf32>
  // CHECK: thunder.max %{{.*}} dims = [0] : tensor<4x?xf32> -> tensor<?xf32>
  %2 = thunder.max %x dims = [0] : tensor<4x?xf32> -> tensor<?xf32>
  // CHECK: thunder.min %{{.*}} dims = [1] keepdim : tensor<4x8xi64> -> tensor<4x1xi64>
  %3 = thunder.min %i dims = [1] keepdim : tensor<4x8xi64> -> tensor<4x1xi64>
  // CHECK: thunder.prod %{{.*}} dims = [1] : tensor<4x8xi64> -> tensor<4xi64>
  %4 = thunder.prod %i dims = [1] : tensor<4x8xi64> -> tensor<4xi64>
  // CHECK: thunder.cumsum %{{.*}} dim = 1 : tensor<4x8xi64>
  %7 = thunder.cumsum %i dim = 1 : tensor<4x8xi64>
  // CHECK: thunder.argmax %{{.*}} dim = 1 : tensor<4x?xf32> -> tensor<4xi64>
  %5 = thunder.argmax %x dim = 1 : tensor<4x?xf32> -> tensor<4xi64>
  // CHECK: thunder.argmin %{{.*}} dim = 0 keepdim : tensor<4x8xi64> -> tensor<1x8xi64>
  %6 = thunder.argmin %i dim = 0 keepdim : tensor<4x8xi64> -> tensor<1x8xi64>
  return
}

// CHECK-LABEL: func.func @linalg
func.func @linalg(%x: tensor<8x128x768xbf16>, %w: tensor<3072x768xbf16>,
                  %q: tensor<2x4x16xf32>, %k: tensor<2x16x4xf32>,
                  %img: tensor<1x3x224x224xf32>, %f: tensor<64x3x7x7xf32>, %b: tensor<64xf32>,
                  %seq: tensor<?x4x10xf32>, %dw: tensor<4x1x3xf32>, %vol: tensor<1x2x4x4x4xf32>,
                  %f3: tensor<3x2x2x2x2xf32>, %p: tensor<1x64x112x112xf32>) {
  // CHECK: thunder.matmul %{{.*}}, %{{.*}} transpose_rhs : (tensor<8x128x768xbf16>, tensor<3072x768xbf16>) -> tensor<8x128x3072xbf16>
  %0 = thunder.matmul %x, %w transpose_rhs : (tensor<8x128x768xbf16>, tensor<3072x768xbf16>) -> tensor<8x128x3072xbf16>
  // CHECK: thunder.matmul %{{.*}}, %{{.*}} : (tensor<2x4x16xf32>, tensor<2x16x4xf32>) -> tensor<2x4x4xf32>
  %1 = thunder.matmul %q, %k : (tensor<2x4x16xf32>, tensor<2x16x4xf32>) -> tensor<2x4x4xf32>
  // CHECK: thunder.matmul %{{.*}}, %{{.*}} transpose_lhs transpose_rhs : (tensor<2x4x16xf32>, tensor<2x16x4xf32>) -> tensor<2x16x16xf32>
  %2 = thunder.matmul %q, %k transpose_lhs transpose_rhs : (tensor<2x4x16xf32>, tensor<2x16x4xf32>) -> tensor<2x16x16xf32>
  // CHECK: thunder.convolution %{{.*}}, %{{.*}}, %{{.*}} stride = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] groups = 1 : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  %3 = thunder.convolution %img, %f, %b stride = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] groups = 1 : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  // Depthwise 1-d convolution with a dynamic batch and no bias.
  // CHECK: thunder.convolution %{{.*}}, %{{.*}} stride = [1] padding = [1, 1] dilation = [2] groups = 4 : (tensor<?x4x10xf32>, tensor<4x1x3xf32>) -> tensor<?x4x8xf32>
  %4 = thunder.convolution %seq, %dw stride = [1] padding = [1, 1] dilation = [2] groups = 4 : (tensor<?x4x10xf32>, tensor<4x1x3xf32>) -> tensor<?x4x8xf32>
  // CHECK: thunder.convolution {{.*}} -> tensor<1x3x3x3x3xf32>
  %5 = thunder.convolution %vol, %f3 stride = [1, 1, 1] padding = [0, 0, 0, 0, 0, 0] dilation = [1, 1, 1] groups = 1 : (tensor<1x2x4x4x4xf32>, tensor<3x2x2x2x2xf32>) -> tensor<1x3x3x3x3xf32>
  // CHECK: thunder.max_pool %{{.*}} kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  %6 = thunder.max_pool %p kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  // CHECK: thunder.max_pool %{{.*}} ceil_mode : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  %7 = thunder.max_pool %p kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] dilation = [1, 1] ceil_mode : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  // CHECK: thunder.avg_pool %{{.*}} kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] count_include_pad : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  %8 = thunder.avg_pool %p kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] count_include_pad : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  return
}

// CHECK-LABEL: func.func @composites
func.func @composites(%x: tensor<2x128x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>,
                      %h: tensor<1x64x512xbf16>, %hg: tensor<512xbf16>,
                      %img: tensor<1x64x56x56xf32>, %c: tensor<64xf32>,
                      %q: tensor<1x12x128x64xbf16>, %mask: tensor<1x1x128x128xi1>,
                      %fmask: tensor<1x12x128x128xbf16>) {
  // CHECK: thunder.softmax %{{.*}} dim = 2 : tensor<2x128x768xf32>
  %0 = thunder.softmax %x dim = 2 : tensor<2x128x768xf32>
  // CHECK: thunder.log_softmax %{{.*}} dim = 0 : tensor<2x128x768xf32>
  %1 = thunder.log_softmax %x dim = 0 : tensor<2x128x768xf32>
  // CHECK: thunder.layer_norm %{{.*}} weight %{{.*}} bias %{{.*}} normalized_rank = 1 epsilon = 1.000000e-05 : (tensor<2x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x128x768xf32>
  %2 = thunder.layer_norm %x weight %g bias %b normalized_rank = 1 epsilon = 1.0e-05 : (tensor<2x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x128x768xf32>
  // CHECK: thunder.layer_norm %{{.*}} normalized_rank = 2 epsilon = 1.000000e-05 : (tensor<2x128x768xf32>) -> tensor<2x128x768xf32>
  %3 = thunder.layer_norm %x normalized_rank = 2 epsilon = 1.0e-05 : (tensor<2x128x768xf32>) -> tensor<2x128x768xf32>
  // CHECK: thunder.layer_norm %{{.*}} bias %{{.*}} normalized_rank = 1
  %4 = thunder.layer_norm %x bias %b normalized_rank = 1 epsilon = 1.0e-05 : (tensor<2x128x768xf32>, tensor<768xf32>) -> tensor<2x128x768xf32>
  // CHECK: thunder.rms_norm %{{.*}} weight %{{.*}} normalized_rank = 1 epsilon = 9.9999999999999995E-7 : (tensor<1x64x512xbf16>, tensor<512xbf16>) -> tensor<1x64x512xbf16>
  %5 = thunder.rms_norm %h weight %hg normalized_rank = 1 epsilon = 1.0e-06 : (tensor<1x64x512xbf16>, tensor<512xbf16>) -> tensor<1x64x512xbf16>
  // CHECK: thunder.batch_norm %{{.*}}, %{{.*}}, %{{.*}} weight %{{.*}} bias %{{.*}} epsilon = 1.000000e-05
  %6 = thunder.batch_norm %img, %c, %c weight %c bias %c epsilon = 1.0e-05 : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  // CHECK: thunder.batch_norm %{{.*}}, %{{.*}}, %{{.*}} epsilon = 1.000000e-03 : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  %7 = thunder.batch_norm %img, %c, %c epsilon = 1.0e-03 : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  // CHECK: thunder.sdpa %{{.*}}, %{{.*}}, %{{.*}} causal : (tensor<1x12x128x64xbf16>, tensor<1x12x128x64xbf16>, tensor<1x12x128x64xbf16>) -> tensor<1x12x128x64xbf16>
  %8 = thunder.sdpa %q, %q, %q causal : (tensor<1x12x128x64xbf16>, tensor<1x12x128x64xbf16>, tensor<1x12x128x64xbf16>) -> tensor<1x12x128x64xbf16>
  // CHECK: thunder.sdpa %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} scale = 1.250000e-01 : (tensor<1x12x128x64xbf16>, tensor<1x12x128x64xbf16>, tensor<1x12x128x64xbf16>, tensor<1x1x128x128xi1>) -> tensor<1x12x128x64xbf16>
  %9 = thunder.sdpa %q, %q, %q mask %mask scale = 0.125 : (tensor<1x12x128x64xbf16>, tensor<1x12x128x64xbf16>, tensor<1x12x128x64xbf16>, tensor<1x1x128x128xi1>) -> tensor<1x12x128x64xbf16>
  // CHECK: thunder.sdpa %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} : (
  %10 = thunder.sdpa %q, %q, %q mask %fmask : (tensor<1x12x128x64xbf16>, tensor<1x12x128x64xbf16>, tensor<1x12x128x64xbf16>, tensor<1x12x128x128xbf16>) -> tensor<1x12x128x64xbf16>
  return
}

// CHECK-LABEL: func.func @fusion
func.func @fusion(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  // CHECK: thunder.fusion pointwise "fused_add_gelu_0"(%{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: ^bb0(%[[X:.+]]: tensor<4xf32>, %[[Y:.+]]: tensor<4xf32>):
  // CHECK-NEXT:   %[[S:.+]] = thunder.add %[[X]], %[[Y]] : tensor<4xf32>
  // CHECK-NEXT:   %[[G:.+]] = thunder.gelu %[[S]] : tensor<4xf32>
  // CHECK-NEXT:   thunder.yield %[[G]] : tensor<4xf32>
  %0 = thunder.fusion pointwise "fused_add_gelu_0" (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %s = thunder.add %x, %y : tensor<4xf32>
    %g = thunder.gelu %s : tensor<4xf32>
    thunder.yield %g : tensor<4xf32>
  }
  // CHECK: thunder.fusion reduction "sum_1"
  %1 = thunder.fusion reduction "sum_1" (%a) : (tensor<4xf32>) -> tensor<f32> {
  ^bb0(%x: tensor<4xf32>):
    %s = thunder.sum %x dims = [0] : tensor<4xf32> -> tensor<f32>
    thunder.yield %s : tensor<f32>
  }
  // CHECK: thunder.fusion gemm
  // CHECK: thunder.fusion conv
  // CHECK: thunder.fusion attention
  // CHECK: thunder.fusion data_movement
  // CHECK: thunder.fusion library
  %2 = thunder.fusion gemm "k2" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    thunder.yield %x : tensor<4xf32>
  }
  %3 = thunder.fusion conv "k3" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    thunder.yield %x : tensor<4xf32>
  }
  %4 = thunder.fusion attention "k4" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    thunder.yield %x : tensor<4xf32>
  }
  %5 = thunder.fusion data_movement "k5" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    thunder.yield %x : tensor<4xf32>
  }
  %6 = thunder.fusion library "k6" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    thunder.yield %x : tensor<4xf32>
  }
  return %0, %1 : tensor<4xf32>, tensor<f32>
}

{-#
  dialect_resources: {
    builtin: {
      fc1_weight: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
