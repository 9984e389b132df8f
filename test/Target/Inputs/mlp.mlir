// A two-layer MLP as the importer leaves it (phase import): the input of the
// tests that check thunder-opt + thunder-translate against thunder-compile.
func.func @main(%x: tensor<4x8xf32> {thunder.name = "x"}) -> tensor<4x3xf32> {
  %w1 = thunder.constant dense<[[0.5, -0.25, 0.125, 1.0, -1.5, 0.75, 0.0, 2.0], [1.0, 0.5, -0.5, 0.25, 0.125, -2.0, 1.5, -0.75], [0.25, 0.25, 0.25, -0.25, 0.5, 0.5, -1.0, 1.0], [-0.5, 1.5, 0.75, 0.0, -0.125, 0.25, 0.5, -1.0], [2.0, -1.0, 0.5, 0.5, 0.25, -0.25, 0.125, 0.0], [0.0, 0.75, -0.75, 1.25, -1.25, 0.5, 0.25, 0.5]]> : tensor<6x8xf32>
  %b1 = thunder.constant dense<[0.1, -0.2, 0.3, -0.4, 0.5, -0.6]> : tensor<6xf32>
  %w2 = thunder.constant dense<[[1.0, -1.0, 0.5, -0.5, 0.25, -0.25], [0.5, 0.5, 0.5, 0.5, 0.5, 0.5], [-1.0, 2.0, -0.5, 0.0, 1.0, 0.25]]> : tensor<3x6xf32>
  %b2 = thunder.constant dense<[0.0, 1.0, -1.0]> : tensor<3xf32>
  %h = thunder.matmul %x, %w1 transpose_rhs : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %b1b = thunder.broadcast %b1, dims = [1] : tensor<6xf32> -> tensor<4x6xf32>
  %hb = thunder.add %h, %b1b : tensor<4x6xf32>
  %g = thunder.gelu %hb : tensor<4x6xf32>
  %o = thunder.matmul %g, %w2 transpose_rhs : (tensor<4x6xf32>, tensor<3x6xf32>) -> tensor<4x3xf32>
  %b2b = thunder.broadcast %b2, dims = [1] : tensor<3xf32> -> tensor<4x3xf32>
  %y = thunder.add %o, %b2b : tensor<4x3xf32>
  %e = thunder.exp %y : tensor<4x3xf32>
  return %e : tensor<4x3xf32>
}
