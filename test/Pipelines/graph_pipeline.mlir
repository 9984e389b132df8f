// The registered graph pipeline, exactly as the compiler runs it.
// RUN: thunder-opt %s -thunder-graph-pipeline | FileCheck %s
// RUN: thunder-opt %s '-thunder-graph-pipeline=decompose-composites=true' | FileCheck %s --check-prefix=DECOMP

// Canonicalization folds constants and views; CSE merges duplicates; the
// composite is kept unless decomposition is asked for.
// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>, %[[W:.+]]: tensor<16x8xf32>)
// CHECK:      %[[Y:.+]] = thunder.matmul %[[X]], %[[W]] transpose_rhs
// CHECK:      %[[G:.+]] = thunder.gelu %[[Y]]
// CHECK:      %[[S:.+]] = thunder.softmax %[[G]] dim = 1
// CHECK:      %[[A:.+]] = thunder.add %[[S]], %[[S]]
// CHECK:      return %[[A]]
// DECOMP-LABEL: func.func @block
// DECOMP-NOT: thunder.softmax
// DECOMP:     thunder.exp
// DECOMP-NOT: thunder.softmax
func.func @block(%x: tensor<2x8xf32>, %w: tensor<16x8xf32>) -> tensor<2x16xf32> {
  %wt = thunder.transpose %w, permutation = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %y = thunder.matmul %x, %wt : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
  %g = thunder.gelu %y : tensor<2x16xf32>
  %r = thunder.reshape %g : tensor<2x16xf32> -> tensor<32xf32>
  %r2 = thunder.reshape %r : tensor<32xf32> -> tensor<2x16xf32>
  %s = thunder.softmax %r2 dim = 1 : tensor<2x16xf32>
  %s2 = thunder.softmax %r2 dim = 1 : tensor<2x16xf32>
  %a = thunder.add %s, %s2 : tensor<2x16xf32>
  return %a : tensor<2x16xf32>
}
