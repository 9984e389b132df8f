// RUN: rm -rf %t && thunder-compile %s --target=cuda --compile-to=source -o %t --name rows
// RUN: FileCheck %s < %t/model.cu

// A decomposed layer_norm (and softmax) is ONE generated kernel: a block per
// row, a pass and a block reduction (warp shuffles, then the warps through
// shared memory) per reduction, the per-row values (rsqrt(var + eps)) once
// per row, then one pass writing the full row.

// CHECK-LABEL: reduction_mean_sub_mul_etc_0(int64_t rows, int64_t inner, Syms S, const float *in0, const float *in1, const float *in2, float *out0) {
// CHECK-NEXT: (void)S;
// CHECK-NEXT: __shared__ double scratch[32];
// CHECK-NEXT: for (int64_t prow = blockIdx.x; prow < rows; prow += gridDim.x) {
// CHECK-NEXT: // Pass 0: mean.
// CHECK-NEXT: acc_t<float> a0 = reduce_init<Reduce::Sum, acc_t<float>>();
// CHECK-NEXT: for (int64_t inner_j = threadIdx.x; inner_j < inner; inner_j += blockDim.x) {
// CHECK-NEXT: const compute_t<float> [[X0:t[0-9]+]] = cv(in0[prow * inner + inner_j]);
// CHECK-NEXT: a0 = reduce_op<Reduce::Sum>(a0, static_cast<acc_t<float>>([[X0]]));
// CHECK-NEXT: }
// CHECK-NEXT: a0 = block_reduce<Reduce::Sum>(a0, reinterpret_cast<acc_t<float> *>(scratch));
// CHECK-NEXT: const compute_t<float> acc0 = static_cast<compute_t<float>>(a0 / static_cast<acc_t<float>>(inner));
// CHECK-NEXT: // Pass 1: mean.
// CHECK-NEXT: acc_t<float> a1 = reduce_init<Reduce::Sum, acc_t<float>>();
// CHECK-NEXT: for (int64_t inner_j = threadIdx.x; inner_j < inner; inner_j += blockDim.x) {
// CHECK-NEXT: const compute_t<float> [[X1:t[0-9]+]] = cv(in0[prow * inner + inner_j]);
// CHECK-NEXT: const compute_t<float> [[D:t[0-9]+]] = static_cast<compute_t<float>>([[X1]] - acc0);
// CHECK-NEXT: const compute_t<float> [[SQ:t[0-9]+]] = static_cast<compute_t<float>>([[D]] * [[D]]);
// CHECK-NEXT: a1 = reduce_op<Reduce::Sum>(a1, static_cast<acc_t<float>>([[SQ]]));
// CHECK-NEXT: }
// CHECK-NEXT: a1 = block_reduce<Reduce::Sum>(a1, reinterpret_cast<acc_t<float> *>(scratch));
// CHECK-NEXT: const compute_t<float> acc1 = static_cast<compute_t<float>>(a1 / static_cast<acc_t<float>>(inner));
// CHECK-NEXT: // The full rows.
// CHECK-NEXT: const compute_t<float> [[EPS:t[0-9]+]] = compute_t<float>(9.99999974737875164e-06);
// CHECK-NEXT: const compute_t<float> [[VE:t[0-9]+]] = static_cast<compute_t<float>>(acc1 + [[EPS]]);
// CHECK-NEXT: const compute_t<float> [[R:t[0-9]+]] = static_cast<compute_t<float>>(compute_t<float>(1) / std::sqrt([[VE]]));
// CHECK-NEXT: for (int64_t inner_j = threadIdx.x; inner_j < inner; inner_j += blockDim.x) {
// CHECK-NEXT: const compute_t<float> [[X2:t[0-9]+]] = cv(in0[prow * inner + inner_j]);
// CHECK-NEXT: const compute_t<float> [[C:t[0-9]+]] = static_cast<compute_t<float>>([[X2]] - acc0);
// CHECK-NEXT: const compute_t<float> [[N:t[0-9]+]] = static_cast<compute_t<float>>([[C]] * [[R]]);
// CHECK-NEXT: const compute_t<float> [[W:t[0-9]+]] = cv(in1[(inner_j)]);
// CHECK-NEXT: const compute_t<float> [[NW:t[0-9]+]] = static_cast<compute_t<float>>([[N]] * [[W]]);
// CHECK-NEXT: const compute_t<float> [[B:t[0-9]+]] = cv(in2[(inner_j)]);
// CHECK-NEXT: const compute_t<float> [[Y:t[0-9]+]] = static_cast<compute_t<float>>([[NW]] + [[B]]);
// CHECK-NEXT: out0[prow * inner + inner_j] = st<float>([[Y]]);
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }

// Softmax: a max pass (NaN-propagating), a sum pass, the full rows.
// CHECK-LABEL: reduction_max_sub_exp_etc_1(int64_t rows, int64_t inner, Syms S, const float *in0, float *out0) {
// CHECK: a0 = block_reduce<Reduce::Max>(a0, reinterpret_cast<acc_t<float> *>(scratch));
// CHECK: a1 = block_reduce<Reduce::Sum>(a1, reinterpret_cast<acc_t<float> *>(scratch));
// CHECK: out0[prow * inner + inner_j] = st<float>(

// One launch each: a block of row_block(inner) threads per row, at most a
// wave of blocks (the kernel loops over the rest).
// CHECK-LABEL: static int enqueue(
// CHECK: // Kernel 0: reduction_mean_sub_mul_etc_0 (reduction)
// CHECK: const int64_t rows = int64_t(1) * 2LL * 4LL, inner = int64_t(1) * 64LL;
// CHECK-NEXT: const int block = row_block(inner);
// CHECK-NEXT: if (rows > 0)
// CHECK-NEXT: reduction_mean_sub_mul_etc_0<<<unsigned(std::min<int64_t>(rows, int64_t(c.sms) * (2048 / block))), block, 0, c.stream>>>(rows, inner, S, a0, a1, a2, v{{[0-9]+}});
// CHECK-NOT: <<<
// CHECK: // Kernel 1: reduction_max_sub_exp_etc_1 (reduction)
// CHECK: reduction_max_sub_exp_etc_1<<<
// CHECK-NOT: <<<
// CHECK: rt.join(main);

func.func @main(%x: tensor<2x4x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<2x4x64xf32>, tensor<2x4x64xf32>) {
  %n = thunder.layer_norm %x weight %w bias %b normalized_rank = 1 epsilon = 1.0e-05 : (tensor<2x4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x4x64xf32>
  %p = thunder.softmax %x dim = 2 : tensor<2x4x64xf32>
  return %n, %p : tensor<2x4x64xf32>, tensor<2x4x64xf32>
}
