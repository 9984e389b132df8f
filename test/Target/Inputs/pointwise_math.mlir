// A pointwise region over every function of the CPU backend's vector math
// (thunder_cpu_math.h), the issue's exp(gelu(1.5 x + 0.25)) first, with an
// f32 and a bf16 output: the input of vectorize_math.test.
func.func @main(%x: tensor<64x4096xf32> {thunder.name = "x"}) -> (tensor<64x4096xf32>, tensor<64x4096xf32>, tensor<64x4096xbf16>) {
  %a = thunder.constant dense<1.5> : tensor<64x4096xf32>
  %b = thunder.constant dense<0.25> : tensor<64x4096xf32>
  %m = thunder.mul %x, %a : tensor<64x4096xf32>
  %s = thunder.add %m, %b : tensor<64x4096xf32>
  %g = thunder.gelu %s : tensor<64x4096xf32>
  %e = thunder.exp %g : tensor<64x4096xf32>
  %l = thunder.log %x : tensor<64x4096xf32>
  %t = thunder.tanh %l : tensor<64x4096xf32>
  %sg = thunder.sigmoid %t : tensor<64x4096xf32>
  %si = thunder.silu %sg : tensor<64x4096xf32>
  %gt = thunder.gelu %si approximate = tanh : tensor<64x4096xf32>
  %er = thunder.erf %gt : tensor<64x4096xf32>
  %p = thunder.pow %er, %x : tensor<64x4096xf32>
  %r = thunder.rsqrt %p : tensor<64x4096xf32>
  %sn = thunder.sin %r : tensor<64x4096xf32>
  %c = thunder.cos %sn : tensor<64x4096xf32>
  %h = thunder.convert %c : tensor<64x4096xf32> -> tensor<64x4096xbf16>
  %he = thunder.exp %h : tensor<64x4096xbf16>
  return %e, %c, %he : tensor<64x4096xf32>, tensor<64x4096xf32>, tensor<64x4096xbf16>
}
