// fusion_c2/fusion_c3 with ops from dialects that are not registered (the
// verifier must report them, not crash on their missing dialect).
// RUN: thunder-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect

func.func @unregistered_op_inside(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = thunder.fusion pointwise "k" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    // expected-error @+1 {{is not allowed in a thunder.fusion region}}
    %y = "foreign.op"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    thunder.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @foreign_terminator(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expects the region to end with thunder.yield}}
  %r = thunder.fusion pointwise "k" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    "foreign.return"(%x) : (tensor<4xf32>) -> ()
  }
  return %r : tensor<4xf32>
}
