// RUN: thunder-opt %s --thunder-cuda-pipeline | thunder-translate --thunder-to-cuda --name dyn --file=model.cu | FileCheck %s

// With a dynamic intermediate (the first GEMM's result) the arena is packed
// at run time and holds tensors only: each stream then gets its own library
// workspace after the arena.

// CHECK: constexpr uint64_t kLibWorkspace = 33554432ULL;
// CHECK-NEXT: constexpr uint64_t kStreamLibWorkspace = 33554432ULL;
// CHECK: L.lib[s] = at; at += kStreamLibWorkspace;
// CHECK-LABEL: static int enqueue(
// CHECK: c.lib_workspace = ws + L.lib[s];
// CHECK-NOT: thunder.workspace
// CHECK: matmul(c,

func.func @main(%x: tensor<?x32xf32> {thunder.dim_symbols = ["s0", 32]}) -> tensor<?x8xf32> {
  %w = thunder.constant dense<0.5> : tensor<32x16xf32>
  %v = thunder.constant dense<0.25> : tensor<16x8xf32>
  %y = thunder.matmul %x, %w : (tensor<?x32xf32>, tensor<32x16xf32>) -> tensor<?x16xf32>
  %r = thunder.relu %y : tensor<?x16xf32>
  %z = thunder.matmul %r, %v : (tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  return %z : tensor<?x8xf32>
}
