// exp(gelu(1.5 x + 0.25)) over 64 x 4096 floats: one memory-bound pointwise
// region with transcendental functions (issue 16's benchmark of fused math),
// the input of isa_dispatch.test and of docs/performance.md's measurement.
func.func @main(%x: tensor<64x4096xf32> {thunder.name = "x"}) -> tensor<64x4096xf32> {
  %a = thunder.constant dense<1.5> : tensor<64x4096xf32>
  %b = thunder.constant dense<0.25> : tensor<64x4096xf32>
  %m = thunder.mul %x, %a : tensor<64x4096xf32>
  %s = thunder.add %m, %b : tensor<64x4096xf32>
  %g = thunder.gelu %s : tensor<64x4096xf32>
  %e = thunder.exp %g : tensor<64x4096xf32>
  return %e : tensor<64x4096xf32>
}
