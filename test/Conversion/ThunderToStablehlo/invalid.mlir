// RUN: thunder-opt %s --thunder-convert-to-stablehlo --allow-unregistered-dialect -split-input-file -verify-diagnostics

// Every op that cannot be converted is reported in the same run, then the
// pass fails.
// expected-error @+1 {{thunder-convert-to-stablehlo: 2 ops cannot be converted to StableHLO}}
func.func @main(%x: tensor<?x4xf32>, %y: tensor<2x4xi64>) -> (tensor<?x4xf32>, tensor<2x4xi64>) {
  // expected-error @+1 {{'thunder.exp' has a dynamic shape ('tensor<?x4xf32>'): the tpu target needs static shapes}}
  %0 = thunder.exp %x : tensor<?x4xf32>
  // expected-error @+1 {{'thunder.neg' has a dynamic shape}}
  %1 = thunder.neg %0 : tensor<?x4xf32>
  %2 = thunder.add %y, %y : tensor<2x4xi64>
  return %1, %2 : tensor<?x4xf32>, tensor<2x4xi64>
}

// -----

// expected-error @+1 {{1 op cannot be converted}}
func.func @main(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  // expected-error @+1 {{'thunder.weight' (external weight 'fc.weight') is not supported: the tpu target takes weights as constants}}
  %w = thunder.weight "fc.weight" : tensor<16x8xf32>
  %0 = thunder.add %x, %w : tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// expected-error @+1 {{1 op cannot be converted}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'foo.bar' is not a thunder op; only thunder IR at the graph phase converts to StableHLO}}
  %0 = "foo.bar"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A fusion-phase module: the fusion region is reported, not its body.
// expected-error @+1 {{1 op cannot be converted}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'thunder.fusion' has no StableHLO lowering}}
  %0 = thunder.fusion pointwise "fused_exp_0" (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = thunder.exp %a : tensor<4xf32>
    thunder.yield %e : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{thunder-convert-to-stablehlo: the module has no func.func @main with a body}}
module {
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Random numbers need generator state the PJRT program does not carry.
// expected-error @+1 {{1 op cannot be converted}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'thunder.random' (random numbers: torch.rand, randn, randint, randperm) is not supported on the tpu target; compile for cpu, cuda or hip}}
  %r = thunder.random uniform stream = 0 : tensor<4xf32>
  %0 = thunder.add %x, %r : tensor<4xf32>
  return %0 : tensor<4xf32>
}
