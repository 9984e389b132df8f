// RUN: not thunder-translate %s --thunder-to-cuda --name bad 2>&1 | FileCheck %s

// A planned workspace the CUDA backend cannot use is an error at the kernel,
// not memory the library would write past: here it is not 256-byte aligned
// (cuBLASLt's requirement).

// CHECK: error: thunder.workspace 64 is not 256-byte aligned (cuBLASLt needs that)

// A planned module: thunder-translate emits it as it is.
module attributes {thunder.phase = "plan"} {
  func.func @main(%x: tensor<32x32xf32>) -> tensor<32x32xf32> attributes {thunder.arena = {alignment = 64 : i64, bytes = 33554688 : i64, lower_bound = 33554688 : i64, naive = 33554688 : i64, workspace = 33554432 : i64}} {
    %g = thunder.fusion gemm "g" (%x) {thunder.offsets = array<i64: -1>, thunder.inplace = array<i64: -1>, thunder.live = array<i64: 0, 0>, thunder.workspace = 64 : i64} : (tensor<32x32xf32>) -> tensor<32x32xf32> {
    ^bb0(%i: tensor<32x32xf32>):
      %r = thunder.matmul %i, %i : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
      thunder.yield %r : tensor<32x32xf32>
    }
    return %g : tensor<32x32xf32>
  }
}
