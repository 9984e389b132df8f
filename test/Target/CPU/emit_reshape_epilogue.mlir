// GPT-2's MLP as the importer gives it: addmm, a view of [tokens, n] as
// [batch, seq, n], then the tanh GELU reading its input three times. One GEMM
// kernel: the epilogue takes the reshape and the whole GELU, reads the bias
// by column (not at flat % n), and computes x^3 with multiplications. The
// reshape that splits the hidden dim into heads is indexed per group of dims,
// without dividing the flat position.
// RUN: rm -rf %t && thunder-compile %s --compile-to=source -o %t --name mlp
// RUN: cat %t/kernels/thunder_kernel_*.cpp | FileCheck %s
// RUN: cat %t/kernels/thunder_kernel_*.cpp | FileCheck %s --check-prefix=HEADS
// RUN: rm -rf %t.lib && thunder-compile %s -o %t.lib --name mlp
// RUN: thunder-run %t.lib/libmlp.so | FileCheck %s --check-prefix=RUNS

func.func @main(%x: tensor<8x16xf32> {thunder.name = "x"}, %w: tensor<16x32xf32> {thunder.name = "w"},
                %b: tensor<32xf32> {thunder.name = "b"}) -> (tensor<2x4x32xf32>, tensor<2x4x4x8xf32>) {
  %m = thunder.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %bb = thunder.broadcast %b, dims = [1] : tensor<32xf32> -> tensor<8x32xf32>
  %a = thunder.add %m, %bb : tensor<8x32xf32>
  %v = thunder.reshape %a : tensor<8x32xf32> -> tensor<2x4x32xf32>
  %half = thunder.constant dense<0.5> : tensor<2x4x32xf32>
  %three = thunder.constant dense<3.0> : tensor<2x4x32xf32>
  %c = thunder.constant dense<0.044715> : tensor<2x4x32xf32>
  %k = thunder.constant dense<0.7978846> : tensor<2x4x32xf32>
  %one = thunder.constant dense<1.0> : tensor<2x4x32xf32>
  %h = thunder.mul %v, %half : tensor<2x4x32xf32>
  %cube = thunder.pow %v, %three : tensor<2x4x32xf32>
  %t = thunder.mul %cube, %c : tensor<2x4x32xf32>
  %i = thunder.add %v, %t : tensor<2x4x32xf32>
  %s = thunder.mul %i, %k : tensor<2x4x32xf32>
  %th = thunder.tanh %s : tensor<2x4x32xf32>
  %p = thunder.add %th, %one : tensor<2x4x32xf32>
  %g = thunder.mul %h, %p : tensor<2x4x32xf32>
  %heads = thunder.reshape %g : tensor<2x4x32xf32> -> tensor<2x4x4x8xf32>
  %ht = thunder.transpose %heads, permutation = [0, 2, 1, 3] : tensor<2x4x4x8xf32> -> tensor<2x4x4x8xf32>
  %e = thunder.exp %ht : tensor<2x4x4x8xf32>
  return %g, %e : tensor<2x4x32xf32>, tensor<2x4x4x8xf32>
}

// CHECK: auto epilogue = [&](int64_t tile_r0, int64_t tile_r1, int64_t tile_c0, int64_t tile_c1) {
// CHECK: cv(in2[pcol])
// CHECK-NOT: pow(
// CHECK: thunder_math::tanh(
// CHECK: thunder_gemm::matmul_f32({{.*}}, epilogue);
// The head split read by dims: (batch, seq, head, position) of the
// transposed loop's (batch, head, seq) rows and position columns.
// HEADS: cv(in0[(((prow / 16) * 4 + prow % 4) * 4 + (prow / 4) % 4) * 8 + pcol])
// HEADS-NEXT: thunder_math::exp(

// RUNS: output 0 output_0: float32 [2, 4, 32]
// RUNS: output 1 output_1: float32 [2, 4, 4, 8]
