// A model with a matmul, a convolution, a pooling, generated loops and a
// dynamic dim, which the build compiles once with the default options into
// build/share/thunder/kernels (tools/thunder-compile/CMakeLists.txt): its
// library's GEMM and convolution drivers (thunder_cpu_gemm.cpp,
// thunder_cpu_conv.cpp), the arena packer of dynamic shapes
// (thunder_arena_packing.cpp) and the precompiled thunder_cpu_base.h (four
// or more kernel units include it) are the same in every model, and compiles
// take them from there (UnitBuild.h, defaultPrebuiltKernelDirs) instead of
// spending seconds on them.
func.func @main(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>, %a: tensor<4x16xf32>, %b: tensor<16x8xf32>, %d: tensor<?x16xf32> {thunder.dim_symbols = ["s0", ""]}) -> (tensor<1x8x4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<?x8xf32>) {
  %y = thunder.convolution %x, %w stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x8x8xf32>
  %p = thunder.max_pool %y kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] dilation = [1, 1] : tensor<1x8x8x8xf32> -> tensor<1x8x4x4xf32>
  %m = thunder.matmul %a, %b : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %s = thunder.softmax %m dim = 1 : tensor<4x8xf32>
  %t = thunder.tanh %m : tensor<4x8xf32>
  %e = thunder.matmul %d, %b : (tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  %f = thunder.softmax %e dim = 1 : tensor<?x8xf32>
  return %p, %s, %t, %f : tensor<1x8x4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<?x8xf32>
}
