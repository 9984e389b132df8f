// RUN: thunder-opt %s --thunder-cuda-pipeline=fuse=false | thunder-translate --thunder-to-cuda --name red --file=model.cu | FileCheck %s
// RUN: thunder-opt %s --thunder-cuda-pipeline=fuse=false | thunder-translate --thunder-to-cuda --file=thunder_gpu.h | FileCheck %s --check-prefix=HEADER
// RUN: thunder-opt %s --thunder-cuda-pipeline=fuse=false | thunder-translate --thunder-to-cuda --file=thunder_gpu_nn.h | FileCheck %s --check-prefix=NN
// RUN: thunder-opt %s --thunder-cuda-pipeline=fuse=false | thunder-translate --thunder-to-cuda --file=thunder_cuda.cuh | FileCheck %s --check-prefix=DIALECT

// Single reductions over trailing dims are generated row kernels; row-wise
// composites left whole are kernels of the support header.

// (--fusion=false: one single-op kernel each, the composites whole.)
// A row reduction is a generated row kernel: a block per row, a block reduction.
// CHECK-LABEL: __global__ void __launch_bounds__(kBlock) reduction_sum_0(int64_t rows, int64_t inner, Syms S, const float *in0, float *out0) {
// CHECK: for (int64_t prow = blockIdx.x; prow < rows; prow += gridDim.x) {
// CHECK: a0 = block_reduce<Reduce::Sum>(a0, reinterpret_cast<acc_t<float> *>(scratch));
// CHECK: if (threadIdx.x == 0)
// CHECK-NEXT: out0[prow] = st<float>(acc0);
// CHECK-LABEL: static int enqueue(
// CHECK: // Kernel 0: reduction_sum_0 (reduction)
// CHECK: const int64_t rows = int64_t(1) * 4LL, inner = int64_t(1) * 64LL;
// CHECK: reduction_sum_0<<<unsigned(std::min<int64_t>(rows, int64_t(c.sms) * (THUNDER_RESIDENT_THREADS / block))), block, 0, c.stream>>>(rows, inner, S, a0, v{{[0-9]+}});
// CHECK: // Kernel 1: library_softmax_1 (library)
// CHECK: softmax(c, a0, v{{[0-9]+}}_shape, 2, 1, false, v{{[0-9]+}});
// CHECK: // Kernel 2: library_layer_norm_2 (library)
// CHECK: norm(c, a0, v{{[0-9]+}}, (const float *)nullptr, v{{[0-9]+}}, int64_t(1) * 4LL, int64_t(1) * 64LL, {{.*}}, false);

// The rows: warp shuffles within a warp (the dialect's width and shuffle),
// then across the block's warps.
// DIALECT: #define THUNDER_WARP_SIZE 32
// DIALECT: #define THUNDER_SHFL_XOR(v, lane_mask) __shfl_xor_sync(0xffffffffu, v, lane_mask)
// DIALECT: #include "thunder_gpu.h"
// HEADER-LABEL: template <Reduce K, class A> __device__ inline A warp_reduce(A v) {
// HEADER: for (int offset = THUNDER_WARP_SIZE / 2; offset > 0; offset >>= 1)
// HEADER-NEXT: v = reduce_op<K>(v, static_cast<A>(THUNDER_SHFL_XOR(v, offset)));
// HEADER-LABEL: template <Reduce K, class A> __device__ inline A block_reduce(A v, A *scratch) {
// HEADER: v = warp_reduce<K>(v);
// HEADER: scratch[warp] = v;
// HEADER-LABEL: reduce_rows_kernel(const T *__restrict__ in, T *__restrict__ out, i64 rows, i64 size) {
// HEADER: acc = warp_reduce<K>(acc);
// HEADER: acc = block_reduce<K>(acc, scratch);
// The row of a softmax is kept in shared memory when it fits.
// NN-LABEL: __global__ void softmax_rows_kernel(
// NN: if (cached)
// NN-NEXT: row[k] = v;

func.func @main(%x: tensor<4x64xf32>) -> (tensor<4xf32>, tensor<4x64xf32>, tensor<4x64xf32>) {
  %s = thunder.sum %x dims = [1] : tensor<4x64xf32> -> tensor<4xf32>
  %p = thunder.softmax %x dim = 1 : tensor<4x64xf32>
  %g = thunder.constant dense<1.5> : tensor<64xf32>
  %n = thunder.layer_norm %x weight %g normalized_rank = 1 epsilon = 1.0e-05 : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return %s, %p, %n : tensor<4xf32>, tensor<4x64xf32>, tensor<4x64xf32>
}
