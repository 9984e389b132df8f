// RUN: thunder-opt %s -split-input-file -verify-diagnostics --thunder-set-phase=phase=fusion | FileCheck %s

// A module without a marker is at import; the pass records the new phase.
// CHECK-LABEL: module attributes {thunder.phase = "fusion"}
module {
  func.func @imported(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// CHECK-LABEL: module attributes {thunder.phase = "fusion"}
module attributes {thunder.phase = "graph"} {
  func.func @graph(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// The fusion pipeline must not run again on a module past it.
// expected-error @+1 {{the fusion pipeline ran on a module already at phase 'plan'}}
module attributes {thunder.phase = "plan"} {
  func.func @planned(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{thunder.phase must name a phase of the IR (import, graph, fusion, plan), got "library"}}
module attributes {thunder.phase = "library"} {
  func.func @bad(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
