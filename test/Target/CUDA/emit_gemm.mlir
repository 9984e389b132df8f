// RUN: thunder-opt %s --thunder-cuda-pipeline=from=fusion | thunder-translate --thunder-to-cuda --name gemm --file=model.cu | FileCheck %s

// A GEMM region whose epilogue is bias + ReLU is one cuBLASLt call with the
// RELU_BIAS epilogue; exact GELU (cuBLASLt's is the tanh approximation) runs
// as a pointwise kernel after the call.

// CHECK: constexpr bool kNeedsLt = true;
// Each GEMM's cuBLASLt workspace is in the arena (thunder.workspace); the two
// GEMMs may run at once on two streams, so their workspaces do not overlap.
// CHECK: constexpr uint64_t kLibWorkspace = 33554432ULL;
// CHECK-NEXT: constexpr uint64_t kStreamLibWorkspace = 0ULL;
// The arena ends after the second workspace (33554688 + 32 MiB): the library
// may use all of it.
// CHECK: at = 67109120ULL;
// CHECK-LABEL: /// fused_linear_gelu_1_epilogue: 3 op(s) per element:
// CHECK: thunder.gelu
// CHECK: fused_linear_gelu_1_epilogue(int64_t n, Syms S, const float *in0, const float *in1, const float *in2, const float *in3, float *out0)
// The library call's result (in3) is read in loop order, with vector loads.
// CHECK: load_vec<V>(in3 + v * V, x3);
// CHECK: gelu(
// CHECK-LABEL: static int enqueue(
// CHECK: // Kernel 0: fused_linear_relu_0 (gemm)
// CHECK: c.lib_workspace = ws + 0ULL; // thunder.workspace
// CHECK: // cuBLASLt with the epilogue ReluBias.
// CHECK-NEXT: matmul(c, a0, v{{[0-9]+}}, v[[OUT0:[0-9]+]], int64_t(1), 8LL, 16LL, 32LL, false, true, false, Epilogue::ReluBias, v{{[0-9]+}});
// CHECK: // Kernel 1: fused_linear_gelu_1 (gemm)
// CHECK: c.lib_workspace = ws + 33554688ULL; // thunder.workspace
// CHECK: matmul(c, a0, v{{[0-9]+}}, tmp1, int64_t(1), 8LL, 16LL, 32LL, false, true, false);
// CHECK: fused_linear_gelu_1_epilogue<<<
// The workspaces are 256-byte multiples from the workspace's start, which
// must itself be 256-byte aligned (a device allocation is).
// (run() is run_seeded() with no random key.)
// CHECK-LABEL: int run_seeded(
// CHECK: if (reinterpret_cast<uintptr_t>(ws) % 256) {
// CHECK-NEXT: snprintf(error, error_size, "the workspace is not 256-byte aligned");

func.func @main(%x: tensor<8x32xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %w = thunder.constant dense<0.5> : tensor<16x32xf32>
  %b = thunder.constant dense<0.25> : tensor<16xf32>
  %r = thunder.fusion gemm "fused_linear_relu_0" (%x, %w, %b) : (tensor<8x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<8x16xf32> {
  ^bb0(%a: tensor<8x32xf32>, %wt: tensor<16x32xf32>, %bias: tensor<16xf32>):
    %m = thunder.matmul %a, %wt transpose_rhs : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
    %bb = thunder.broadcast %bias, dims = [1] : tensor<16xf32> -> tensor<8x16xf32>
    %s = thunder.add %m, %bb : tensor<8x16xf32>
    %y = thunder.relu %s : tensor<8x16xf32>
    thunder.yield %y : tensor<8x16xf32>
  }
  %g = thunder.fusion gemm "fused_linear_gelu_1" (%x, %w, %b) : (tensor<8x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<8x16xf32> {
  ^bb0(%a: tensor<8x32xf32>, %wt: tensor<16x32xf32>, %bias: tensor<16xf32>):
    %m = thunder.matmul %a, %wt transpose_rhs : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
    %bb = thunder.broadcast %bias, dims = [1] : tensor<16xf32> -> tensor<8x16xf32>
    %s = thunder.add %m, %bb : tensor<8x16xf32>
    %y = thunder.gelu %s : tensor<8x16xf32>
    thunder.yield %y : tensor<8x16xf32>
  }
  return %r, %g : tensor<8x16xf32>, tensor<8x16xf32>
}
