// RUN: thunder-opt %s -thunder-decompose-composites -split-input-file | FileCheck %s
// RUN: thunder-opt %s -thunder-decompose-composites=ops=sdpa -split-input-file | FileCheck %s --check-prefix=ONLY-SDPA
// RUN: not thunder-opt %s -thunder-decompose-composites=ops=conv 2>&1 | FileCheck %s --check-prefix=BAD-OPT

// BAD-OPT: unknown composite 'conv'

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK:      %[[MAX:.+]] = thunder.max %[[X]] dims = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK:      %[[MAXB:.+]] = thunder.broadcast %[[MAX]], dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK:      %[[SUB:.+]] = thunder.sub %[[X]], %[[MAXB]]
// CHECK:      %[[EXP:.+]] = thunder.exp %[[SUB]]
// CHECK:      %[[SUM:.+]] = thunder.sum %[[EXP]] dims = [1] keepdim
// CHECK:      %[[SUMB:.+]] = thunder.broadcast %[[SUM]], dims = [0, 1]
// CHECK:      %[[DIV:.+]] = thunder.div %[[EXP]], %[[SUMB]] : tensor<4x8xf32>
// CHECK:      return %[[DIV]]
// ONLY-SDPA-LABEL: func.func @softmax
// ONLY-SDPA: thunder.softmax
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %p = thunder.softmax %x dim = 1 : tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

// f16 is computed in f32 and converted back, as PyTorch's decomposition does.
// CHECK-LABEL: func.func @log_softmax_f16
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf16>)
// CHECK:      %[[UP:.+]] = thunder.convert %[[X]] : tensor<4x8xf16> -> tensor<4x8xf32>
// CHECK:      %[[MAX:.+]] = thunder.max %[[UP]] dims = [0] keepdim
// CHECK:      %[[SUB:.+]] = thunder.sub %[[UP]], %{{.+}} : tensor<4x8xf32>
// CHECK:      %[[EXP:.+]] = thunder.exp %[[SUB]]
// CHECK:      %[[SUM:.+]] = thunder.sum %[[EXP]] dims = [0] keepdim
// CHECK:      %[[SUMB:.+]] = thunder.broadcast %[[SUM]]
// CHECK:      %[[LOG:.+]] = thunder.log %[[SUMB]]
// CHECK:      %[[RES:.+]] = thunder.sub %[[SUB]], %[[LOG]]
// CHECK:      %[[DOWN:.+]] = thunder.convert %[[RES]] : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK:      return %[[DOWN]]
func.func @log_softmax_f16(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %p = thunder.log_softmax %x dim = 0 : tensor<4x8xf16>
  return %p : tensor<4x8xf16>
}

// -----

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x8xf32>, %[[W:.+]]: tensor<8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK-DAG:  %[[EPS:.+]] = thunder.constant dense<9.99999974E-6> : tensor<2x3x1xf32>
// CHECK:      %[[MEAN:.+]] = thunder.mean %[[X]] dims = [2] keepdim : tensor<2x3x8xf32> -> tensor<2x3x1xf32>
// CHECK:      %[[MEANB:.+]] = thunder.broadcast %[[MEAN]]
// CHECK:      %[[XC:.+]] = thunder.sub %[[X]], %[[MEANB]]
// CHECK:      %[[SQ:.+]] = thunder.mul %[[XC]], %[[XC]]
// CHECK:      %[[VAR:.+]] = thunder.mean %[[SQ]] dims = [2] keepdim
// CHECK:      %[[VEPS:.+]] = thunder.add %[[VAR]], %[[EPS]]
// CHECK:      %[[RSTD:.+]] = thunder.rsqrt %[[VEPS]]
// CHECK:      %[[RSTDB:.+]] = thunder.broadcast %[[RSTD]]
// CHECK:      %[[NORM:.+]] = thunder.mul %[[XC]], %[[RSTDB]]
// CHECK:      %[[WB:.+]] = thunder.broadcast %[[W]], dims = [2] : tensor<8xf32> -> tensor<2x3x8xf32>
// CHECK:      %[[SCALED:.+]] = thunder.mul %[[NORM]], %[[WB]]
// CHECK:      %[[BB:.+]] = thunder.broadcast %[[B]], dims = [2]
// CHECK:      %[[OUT:.+]] = thunder.add %[[SCALED]], %[[BB]]
// CHECK:      return %[[OUT]]
func.func @layer_norm(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %y = thunder.layer_norm %x weight %w bias %b normalized_rank = 1 epsilon = 1.0e-05 : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// Normalizing over two trailing dims reduces both.
// CHECK-LABEL: func.func @layer_norm_two_dims
// CHECK:      thunder.mean %{{.+}} dims = [1, 2] keepdim : tensor<2x3x8xf32> -> tensor<2x1x1xf32>
// CHECK-NOT:  thunder.layer_norm
func.func @layer_norm_two_dims(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %y = thunder.layer_norm %x normalized_rank = 2 epsilon = 1.0e-05 : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// CHECK-LABEL: func.func @rms_norm_bf16
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x16xbf16>, %[[W:.+]]: tensor<16xbf16>)
// CHECK:      %[[UP:.+]] = thunder.convert %[[X]] : tensor<1x4x16xbf16> -> tensor<1x4x16xf32>
// CHECK:      %[[SQ:.+]] = thunder.mul %[[UP]], %[[UP]]
// CHECK:      %[[MS:.+]] = thunder.mean %[[SQ]] dims = [2] keepdim
// CHECK:      %[[ADD:.+]] = thunder.add %[[MS]], %{{.+}}
// CHECK:      %[[R:.+]] = thunder.rsqrt %[[ADD]]
// CHECK:      %[[RB:.+]] = thunder.broadcast %[[R]]
// CHECK:      %[[N:.+]] = thunder.mul %[[UP]], %[[RB]]
// CHECK:      %[[WF:.+]] = thunder.convert %[[W]] : tensor<16xbf16> -> tensor<16xf32>
// CHECK:      %[[WB:.+]] = thunder.broadcast %[[WF]], dims = [2]
// CHECK:      %[[Y:.+]] = thunder.mul %[[N]], %[[WB]]
// CHECK:      thunder.convert %[[Y]] : tensor<1x4x16xf32> -> tensor<1x4x16xbf16>
func.func @rms_norm_bf16(%x: tensor<1x4x16xbf16>, %w: tensor<16xbf16>) -> tensor<1x4x16xbf16> {
  %y = thunder.rms_norm %x weight %w normalized_rank = 1 epsilon = 1.0e-06 : (tensor<1x4x16xbf16>, tensor<16xbf16>) -> tensor<1x4x16xbf16>
  return %y : tensor<1x4x16xbf16>
}

// -----

// Per-channel factors are computed on the [C] vectors, then broadcast on dim 1.
// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x5x5xf32>, %[[M:.+]]: tensor<4xf32>, %[[V:.+]]: tensor<4xf32>, %[[W:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK:      %[[VE:.+]] = thunder.add %[[V]], %{{.+}} : tensor<4xf32>
// CHECK:      %[[INV:.+]] = thunder.rsqrt %[[VE]] : tensor<4xf32>
// CHECK:      %[[SCALE:.+]] = thunder.mul %[[INV]], %[[W]] : tensor<4xf32>
// CHECK:      %[[MB:.+]] = thunder.broadcast %[[M]], dims = [1] : tensor<4xf32> -> tensor<2x4x5x5xf32>
// CHECK:      %[[XC:.+]] = thunder.sub %[[X]], %[[MB]]
// CHECK:      %[[SB:.+]] = thunder.broadcast %[[SCALE]], dims = [1]
// CHECK:      %[[Y:.+]] = thunder.mul %[[XC]], %[[SB]]
// CHECK:      %[[BB:.+]] = thunder.broadcast %[[B]], dims = [1]
// CHECK:      thunder.add %[[Y]], %[[BB]]
func.func @batch_norm(%x: tensor<2x4x5x5xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4x5x5xf32> {
  %y = thunder.batch_norm %x, %m, %v weight %w bias %b epsilon = 1.0e-05 : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
  return %y : tensor<2x4x5x5xf32>
}

// -----

// Causal attention: scores masked where the key position is after the query's.
// CHECK-LABEL: func.func @sdpa_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[K:.+]]: tensor<1x2x6x8xf32>, %[[V:.+]]: tensor<1x2x6x8xf32>)
// CHECK-DAG:  %[[NEGINF:.+]] = thunder.constant dense<0xFF800000> : tensor<1x2x4x6xf32>
// CHECK-DAG:  %[[SCALE:.+]] = thunder.constant dense<0.353553385> : tensor<1x2x4x6xf32>
// CHECK:      %[[S:.+]] = thunder.matmul %[[Q]], %[[K]] transpose_rhs : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x6xf32>
// CHECK:      %[[SS:.+]] = thunder.mul %[[S]], %[[SCALE]]
// CHECK:      %[[ROW:.+]] = thunder.iota dim = 2 : tensor<1x2x4x6xi64>
// CHECK:      %[[COL:.+]] = thunder.iota dim = 3 : tensor<1x2x4x6xi64>
// CHECK:      %[[KEEP:.+]] = thunder.compare ge, %[[ROW]], %[[COL]]
// CHECK:      %[[MASKED:.+]] = thunder.where %[[KEEP]], %[[SS]], %[[NEGINF]]
// CHECK:      thunder.max %[[MASKED]] dims = [3] keepdim
// CHECK:      %[[P:.+]] = thunder.div
// CHECK:      thunder.matmul %[[P]], %[[V]] : (tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
// ONLY-SDPA-LABEL: func.func @sdpa_causal
// ONLY-SDPA: thunder.matmul
// ONLY-SDPA: thunder.softmax
// ONLY-SDPA: thunder.matmul
func.func @sdpa_causal(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32> {
  %o = thunder.sdpa %q, %k, %v causal : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A boolean mask selects; a float mask is added. An explicit scale is used as is.
// CHECK-LABEL: func.func @sdpa_masks
// CHECK-DAG:  thunder.constant dense<5.000000e-01> : tensor<2x3x4xf32>
// CHECK:      %[[BM:.+]] = thunder.broadcast %{{.+}}, dims = [0, 1, 2] : tensor<1x3x4xi1> -> tensor<2x3x4xi1>
// CHECK:      thunder.where %[[BM]]
// CHECK:      %[[FM:.+]] = thunder.broadcast %{{.+}}, dims = [0, 1, 2] : tensor<2x1x4xf32> -> tensor<2x3x4xf32>
// CHECK:      thunder.add %{{.+}}, %[[FM]]
func.func @sdpa_masks(%q: tensor<2x3x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x5xf32>,
                      %bm: tensor<1x3x4xi1>, %fm: tensor<2x1x4xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>) {
  %a = thunder.sdpa %q, %k, %v mask %bm scale = 0.5 : (tensor<2x3x8xf32>, tensor<2x4x8xf32>, tensor<2x4x5xf32>, tensor<1x3x4xi1>) -> tensor<2x3x5xf32>
  %b = thunder.sdpa %q, %k, %v mask %fm : (tensor<2x3x8xf32>, tensor<2x4x8xf32>, tensor<2x4x5xf32>, tensor<2x1x4xf32>) -> tensor<2x3x5xf32>
  return %a, %b : tensor<2x3x5xf32>, tensor<2x3x5xf32>
}

// -----

// Dynamic dims decompose too: constants are 0-d and broadcast to the dynamic
// shape, whose run-time sizes come from their users (ShapePlan).
// CHECK-LABEL: func.func @dynamic_softmax
// CHECK-NOT:  thunder.softmax
// CHECK:      thunder.max %{{.+}} dims = [1] keepdim : tensor<?x8xf32> -> tensor<?x1xf32>
// CHECK:      thunder.broadcast %{{.+}}, dims = [0, 1] : tensor<?x1xf32> -> tensor<?x8xf32>
// CHECK:      thunder.sum %{{.+}} dims = [1] keepdim : tensor<?x8xf32> -> tensor<?x1xf32>
// CHECK:      thunder.div
func.func @dynamic_softmax(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %p = thunder.softmax %x dim = 1 : tensor<?x8xf32>
  return %p : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_layer_norm
// CHECK-NOT:  thunder.layer_norm
// CHECK:      %[[EPS:.+]] = thunder.constant dense<9.99999974E-6> : tensor<f32>
// CHECK:      thunder.mean %{{.+}} dims = [2] keepdim : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
// CHECK:      %[[SQ:.+]] = thunder.mul
// CHECK:      %[[VAR:.+]] = thunder.mean %[[SQ]] dims = [2] keepdim : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
// CHECK:      %[[EPSB:.+]] = thunder.broadcast %[[EPS]], dims = [] : tensor<f32> -> tensor<?x?x1xf32>
// CHECK:      thunder.add %[[VAR]], %[[EPSB]] : tensor<?x?x1xf32>
func.func @dynamic_layer_norm(%x: tensor<?x?x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %y = thunder.layer_norm %x weight %w bias %b normalized_rank = 1 epsilon = 1.0e-05 : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_sdpa_causal
// CHECK-NOT:  thunder.sdpa
// CHECK-DAG:  thunder.iota dim = 2 : tensor<?x2x4x6xi64>
// CHECK-DAG:  thunder.iota dim = 3 : tensor<?x2x4x6xi64>
// CHECK-DAG:  thunder.broadcast %{{.+}}, dims = [] : tensor<f32> -> tensor<?x2x4x6xf32>
// CHECK:      thunder.where
// CHECK:      thunder.max %{{.+}} dims = [3] keepdim : tensor<?x2x4x6xf32> -> tensor<?x2x4x1xf32>
// CHECK:      thunder.matmul %{{.+}}, %{{.+}} : (tensor<?x2x4x6xf32>, tensor<?x2x6x8xf32>) -> tensor<?x2x4x8xf32>
func.func @dynamic_sdpa_causal(%q: tensor<?x2x4x8xf32>, %k: tensor<?x2x6x8xf32>, %v: tensor<?x2x6x8xf32>) -> tensor<?x2x4x8xf32> {
  %o = thunder.sdpa %q, %k, %v causal : (tensor<?x2x4x8xf32>, tensor<?x2x6x8xf32>, tensor<?x2x6x8xf32>) -> tensor<?x2x4x8xf32>
  return %o : tensor<?x2x4x8xf32>
}

// -----

// The default scale is 1/sqrt(head dim): a dynamic head dim keeps the composite.
// CHECK-LABEL: func.func @dynamic_head_dim_kept
// CHECK: thunder.sdpa
func.func @dynamic_head_dim_kept(%q: tensor<1x4x?xf32>, %k: tensor<1x6x?xf32>, %v: tensor<1x6x8xf32>) -> tensor<1x4x8xf32> {
  %o = thunder.sdpa %q, %k, %v : (tensor<1x4x?xf32>, tensor<1x6x?xf32>, tensor<1x6x8xf32>) -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}
