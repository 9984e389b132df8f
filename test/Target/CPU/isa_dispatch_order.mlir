// A library for two instruction sets given highest first: the variants are
// ordered lowest first all the same, so the library requires x86-64-v3's
// features (not x86-64-v4's) and runs on a machine with AVX2 and no AVX-512,
// and the shared code the linker keeps is the lowest variant's.
// REQUIRES: x86-64-v3
// UNSUPPORTED: sanitize
// RUN: rm -rf %t && thunder-compile %s --cpu=x86-64-v4,x86-64-v3 -o %t --name order
// RUN: thunder-run %t/liborder.so --seed 1 | FileCheck %s
// RUN: env THUNDER_CPU_ISA=x86-64-v3 thunder-run %t/liborder.so --seed 1 | FileCheck %s
// CHECK: output 0 output_0: float32 [4, 8]
func.func @main(%x: tensor<4x8xf32> {thunder.name = "x"}) -> (tensor<4x8xf32>) {
  %t = thunder.tanh %x : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
