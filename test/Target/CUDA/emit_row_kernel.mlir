// RUN: thunder-opt %s --thunder-cuda-pipeline | thunder-translate --thunder-to-cuda --name rows --file=model.cu | FileCheck %s
// RUN: thunder-opt %s --thunder-cuda-pipeline | thunder-translate --thunder-to-cuda --file=thunder_gpu_nn.h | FileCheck %s --check-prefix=HEADER

// A decomposed layer_norm (and softmax) is ONE generated kernel: a block per
// row, a pass and a block reduction (warp shuffles, then the warps through
// shared memory) per reduction, the per-row values (rsqrt(var + eps)) once
// per row, then one pass writing the full row. A full-row input read in more
// than one pass is read from global memory once: the first pass keeps it in
// dynamic shared memory (`cached`, when it fits), the later ones read it
// there. The weight and bias are read once, per column: not cached.

// CHECK-LABEL: reduction_mean_sub_mul_etc_0(int64_t rows, int64_t inner, bool cached, Syms S, const float *in0, const float *in1, const float *in2, float *out0) {
// CHECK-NEXT: (void)S;
// CHECK-NEXT: __shared__ double scratch[32];
// CHECK: unsigned char *row_cache = dynamic_smem<unsigned char>();
// CHECK-NEXT: float *row0 = reinterpret_cast<float *>(row_cache);
// CHECK-NEXT: for (int64_t prow = blockIdx.x; prow < rows; prow += gridDim.x) {
// CHECK-NEXT: // Pass 0: mean.
// CHECK-NEXT: acc_t<float> a0 = reduce_init<Reduce::Sum, acc_t<float>>();
// CHECK-NEXT: for (int64_t inner_j = threadIdx.x; inner_j < inner; inner_j += blockDim.x) {
// CHECK-NEXT: const compute_t<float> [[X0:t[0-9]+]] = cv(row_fill(cached, row0[inner_j], in0[prow * inner + inner_j]));
// CHECK-NEXT: a0 = reduce_op<Reduce::Sum>(a0, static_cast<acc_t<float>>([[X0]]));
// CHECK-NEXT: }
// CHECK-NEXT: a0 = block_reduce<Reduce::Sum>(a0, reinterpret_cast<acc_t<float> *>(scratch));
// CHECK-NEXT: const compute_t<float> acc0 = static_cast<compute_t<float>>(a0 / static_cast<acc_t<float>>(inner));
// CHECK-NEXT: // Pass 1: mean.
// CHECK-NEXT: acc_t<float> a1 = reduce_init<Reduce::Sum, acc_t<float>>();
// CHECK-NEXT: for (int64_t inner_j = threadIdx.x; inner_j < inner; inner_j += blockDim.x) {
// CHECK-NEXT: const compute_t<float> [[X1:t[0-9]+]] = cv((cached ? row0[inner_j] : in0[prow * inner + inner_j]));
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
// CHECK-NEXT: const compute_t<float> [[X2:t[0-9]+]] = cv((cached ? row0[inner_j] : in0[prow * inner + inner_j]));
// CHECK-NEXT: const compute_t<float> [[C:t[0-9]+]] = static_cast<compute_t<float>>([[X2]] - acc0);
// CHECK-NEXT: const compute_t<float> [[N:t[0-9]+]] = static_cast<compute_t<float>>([[C]] * [[R]]);
// CHECK-NEXT: const compute_t<float> [[W:t[0-9]+]] = cv(in1[inner_j]);
// CHECK-NEXT: const compute_t<float> [[NW:t[0-9]+]] = static_cast<compute_t<float>>([[N]] * [[W]]);
// CHECK-NEXT: const compute_t<float> [[B:t[0-9]+]] = cv(in2[inner_j]);
// CHECK-NEXT: const compute_t<float> [[Y:t[0-9]+]] = static_cast<compute_t<float>>([[NW]] + [[B]]);
// CHECK-NEXT: out0[prow * inner + inner_j] = st<float>([[Y]]);
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }

// Softmax: a max pass (NaN-propagating) that keeps the row, a sum pass and
// the full rows that read it back.
// CHECK-LABEL: reduction_max_sub_exp_etc_1(int64_t rows, int64_t inner, bool cached, Syms S, const float *in0, float *out0) {
// CHECK: float *row0 = reinterpret_cast<float *>(row_cache);
// CHECK: // Pass 0: max.
// CHECK: cv(row_fill(cached, row0[inner_j], in0[prow * inner + inner_j]));
// CHECK: a0 = block_reduce<Reduce::Max>(a0, reinterpret_cast<acc_t<float> *>(scratch));
// CHECK: // Pass 1: sum.
// CHECK-NOT: row_fill
// CHECK: cv((cached ? row0[inner_j] : in0[prow * inner + inner_j]));
// CHECK: a1 = block_reduce<Reduce::Sum>(a1, reinterpret_cast<acc_t<float> *>(scratch));
// CHECK: // The full rows.
// CHECK-NOT: row_fill
// CHECK: cv((cached ? row0[inner_j] : in0[prow * inner + inner_j]));
// CHECK: out0[prow * inner + inner_j] = st<float>(

// (v - min(v)) * z: v, an 8x64 input reshaped to the row's 2x4x64 (read at
// the row's flat position all the same), is read twice and cached; z is read
// once (in the last pass), from global memory only.
// CHECK: /// reduction_min_sub_mul_2: one block per row
// CHECK-NEXT: thunder.reshape %{{.+}} : tensor<8x64xf32> -> tensor<2x4x64xf32>
// CHECK-LABEL: reduction_min_sub_mul_2(int64_t rows, int64_t inner, bool cached, Syms S, const float *in0, const float *in1, float *out0) {
// CHECK: float *row0 = reinterpret_cast<float *>(row_cache);
// CHECK-NEXT: for (int64_t prow
// CHECK: cv(row_fill(cached, row0[inner_j], in0[prow * inner + inner_j]));
// CHECK: // The full rows.
// CHECK: cv((cached ? row0[inner_j] : in0[prow * inner + inner_j]));
// CHECK: cv(in1[prow * inner + inner_j]);

// A residual add and rms_norm in bf16 over a dynamic row: both inputs are
// kept, in their storage type (2 bytes), each array 16-byte aligned.
// CHECK-LABEL: reduction_add_convert_mul_etc_3(int64_t rows, int64_t inner, bool cached, Syms S, const bf16 *in0, const bf16 *in1, bf16 *out0) {
// CHECK: bf16 *row0 = reinterpret_cast<bf16 *>(row_cache);
// CHECK-NEXT: bf16 *row1 = reinterpret_cast<bf16 *>(row_cache + align16(inner * 2));
// CHECK: cv(row_fill(cached, row0[inner_j], in0[prow * inner + inner_j]));
// CHECK-NEXT: cv(row_fill(cached, row1[inner_j], in1[prow * inner + inner_j]));
// CHECK: // The full rows.
// CHECK: cv((cached ? row0[inner_j] : in0[prow * inner + inner_j]));
// CHECK-NEXT: cv((cached ? row1[inner_j] : in1[prow * inner + inner_j]));

// One launch each: a block of row_block(inner) threads per row, at most a
// wave of blocks (the kernel loops over the rest), the row cache's bytes as
// dynamic shared memory when they are within the default limit.
// CHECK-LABEL: static int enqueue(
// CHECK: // Kernel 0: reduction_mean_sub_mul_etc_0 (reduction)
// CHECK: const int64_t rows = int64_t(1) * 2LL * 4LL, inner = int64_t(1) * 64LL;
// CHECK-NEXT: const int block = row_block(inner);
// CHECK-NEXT: const int64_t cache = align16(inner * 4);
// CHECK-NEXT: const bool cached = cache <= int64_t(kRowCacheBytes);
// CHECK-NEXT: if (rows > 0)
// CHECK-NEXT: reduction_mean_sub_mul_etc_0<<<unsigned(std::min<int64_t>(rows, int64_t(c.sms) * (THUNDER_RESIDENT_THREADS / block))), block, cached ? size_t(cache) : 0, c.stream>>>(rows, inner, cached, S, a0, a1, a2, v{{[0-9]+}});
// CHECK-NOT: <<<
// CHECK: // Kernel 1: reduction_max_sub_exp_etc_1 (reduction)
// CHECK: reduction_max_sub_exp_etc_1<<<{{.*}}, block, cached ? size_t(cache) : 0, c.stream>>>(rows, inner, cached, S,
// CHECK-NOT: <<<
// CHECK: // Kernel 2: reduction_min_sub_mul_2 (reduction)
// CHECK: const int64_t cache = align16(inner * 4);
// CHECK: reduction_min_sub_mul_2<<<
// CHECK-NOT: <<<
// The dynamic row: whether it fits is decided at run time.
// CHECK: // Kernel 3: reduction_add_convert_mul_etc_3 (reduction)
// CHECK: const int64_t rows = int64_t(1) * 4LL, inner = int64_t(1) * sym[0];
// CHECK: const int64_t cache = align16(inner * 2) + align16(inner * 2);
// CHECK-NEXT: const bool cached = cache <= int64_t(kRowCacheBytes);
// CHECK: rt.join(main);

// HEADER: constexpr size_t kRowCacheBytes = THUNDER_SMEM_DEFAULT_BYTES - kMaxWarps * sizeof(double);
// HEADER-LABEL: template <class T> __device__ inline T row_fill(bool cached, T &slot, T x) {
// HEADER-NEXT: if (cached)
// HEADER-NEXT: slot = x;
// HEADER-NEXT: return x;

func.func @main(%x: tensor<2x4x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>, %z: tensor<2x4x64xf32>, %v8: tensor<8x64xf32>,
                %d0: tensor<4x?xbf16> {thunder.dim_symbols = ["", "s0"]},
                %d1: tensor<4x?xbf16> {thunder.dim_symbols = ["", "s0"]})
    -> (tensor<2x4x64xf32>, tensor<2x4x64xf32>, tensor<2x4x64xf32>, tensor<4x?xbf16>)
    attributes {thunder.symbol_ranges = {s0 = array<i64: 1, 65536>}} {
  %n = thunder.layer_norm %x weight %w bias %b normalized_rank = 1 epsilon = 1.0e-05 : (tensor<2x4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x4x64xf32>
  %p = thunder.softmax %x dim = 2 : tensor<2x4x64xf32>
  %v = thunder.reshape %v8 : tensor<8x64xf32> -> tensor<2x4x64xf32>
  %m = thunder.min %v dims = [2] keepdim : tensor<2x4x64xf32> -> tensor<2x4x1xf32>
  %mb = thunder.broadcast %m, dims = [0, 1, 2] : tensor<2x4x1xf32> -> tensor<2x4x64xf32>
  %c = thunder.sub %v, %mb : tensor<2x4x64xf32>
  %q = thunder.mul %c, %z : tensor<2x4x64xf32>
  // Composites with dynamic dims are not decomposed: rms_norm by hand.
  %r = thunder.add %d0, %d1 {thunder.dim_symbols = ["", "s0"]} : tensor<4x?xbf16>
  %f = thunder.convert %r {thunder.dim_symbols = ["", "s0"]} : tensor<4x?xbf16> -> tensor<4x?xf32>
  %sq = thunder.mul %f, %f {thunder.dim_symbols = ["", "s0"]} : tensor<4x?xf32>
  %ms = thunder.mean %sq dims = [1] keepdim : tensor<4x?xf32> -> tensor<4x1xf32>
  %eps = thunder.constant dense<1.0e-06> : tensor<4x1xf32>
  %a = thunder.add %ms, %eps : tensor<4x1xf32>
  %rs = thunder.rsqrt %a : tensor<4x1xf32>
  %rb = thunder.broadcast %rs, dims = [0, 1] {thunder.dim_symbols = ["", "s0"]} : tensor<4x1xf32> -> tensor<4x?xf32>
  %nr = thunder.mul %f, %rb {thunder.dim_symbols = ["", "s0"]} : tensor<4x?xf32>
  %o = thunder.convert %nr {thunder.dim_symbols = ["", "s0"]} : tensor<4x?xf32> -> tensor<4x?xbf16>
  return %n, %p, %q, %o : tensor<2x4x64xf32>, tensor<2x4x64xf32>, tensor<2x4x64xf32>, tensor<4x?xbf16>
}
