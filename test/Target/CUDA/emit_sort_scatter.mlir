// thunder.argsort and thunder.scatter on CUDA: each is a library call of the
// GPU support header (thunder_gpu.h) on its own stream, with the op's dim,
// direction, reduce mode (none 0, sum 1, prod 2, amax 3, amin 4, mean 5) and
// include_self; the header defines both and their kernels.
// RUN: thunder-opt %s --thunder-cuda-pipeline | thunder-translate --thunder-to-cuda --name ss --file=model.cu | FileCheck %s
// RUN: thunder-opt %s --thunder-cuda-pipeline | thunder-translate --thunder-to-cuda --file=thunder_gpu.h | FileCheck %s --check-prefix=HEADER

func.func @main(%x: tensor<4x8xf32>, %idx: tensor<2x8xi64>, %src: tensor<2x8xf32>, %y: tensor<?x5xi32>)
    -> (tensor<4x8xi64>, tensor<4x8xi64>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<?x5xi64>) {
  %a = thunder.argsort %x dim = 0 : tensor<4x8xf32> -> tensor<4x8xi64>
  %d = thunder.argsort %x dim = 1 descending = true : tensor<4x8xf32> -> tensor<4x8xi64>
  %s = thunder.scatter %x, %idx, %src dim = 0 : (tensor<4x8xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %r = thunder.scatter %x, %idx, %src dim = 1 reduce = "amin" include_self = false : (tensor<4x8xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %y1 = thunder.argsort %y dim = 0 descending = true : tensor<?x5xi32> -> tensor<?x5xi64>
  return %a, %d, %s, %r, %y1 : tensor<4x8xi64>, tensor<4x8xi64>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<?x5xi64>
}

// CHECK-LABEL: static int enqueue(
// CHECK: // Kernel 0: library_argsort_0 (library)
// CHECK: argsort(c, a0, a0_shape, 2, 0, false, v{{[0-9]+}});
// CHECK: // Kernel 1: library_argsort_1 (library)
// CHECK: argsort(c, a0, a0_shape, 2, 1, true, v{{[0-9]+}});
// CHECK: // Kernel 2: library_scatter_2 (library)
// CHECK: scatter(c, a0, a0_shape, 2, 0, a1, a1_shape, a2, a2_shape, 0, true, v{{[0-9]+}});
// CHECK: // Kernel 3: library_scatter_3 (library)
// CHECK: scatter(c, a0, a0_shape, 2, 1, a1, a1_shape, a2, a2_shape, 4, false, v{{[0-9]+}});
// CHECK: // Kernel 4: library_argsort_4 (library)
// CHECK: argsort(c, a3, a3_shape, 2, 0, true, v{{[0-9]+}});

// HEADER: argsort_kernel(const T *__restrict__ in, i64 *__restrict__ out
// HEADER: void argsort(const Ctx &c, const T *in, const i64 *shape, int rank, int dim, bool descending,
// HEADER: scatter_kernel(ScatterInfo g, const I *__restrict__ index, const T *__restrict__ src,
// HEADER: void scatter(const Ctx &c, const T *in, const i64 *in_shape, int rank, int dim, const I *index,
