// thunder_gpu_libs.h: the vendor-neutral part of the GPU support library's
// libraries header: the tiled GEMM behind the vendor's GEMM libraries, and
// the convolutions behind its DNN library (im2col + GEMM, a direct kernel).
//
// Written against the dialect macros like thunder_gpu.h. Not self-contained:
// the vendor's libraries header (thunder_cuda_dnn.cuh, thunder_hip_libs.h)
// includes it once it has declared what these call, in THUNDER_GPU_NS:
//   Epilogue          the GEMM epilogues;
//   lt_gemm(c, ...)   a GEMM through the vendor's libraries, false when none
//                     takes it;
//   blas_type<T>()    the GEMM libraries' code for T, < 0 when they lack it;
//   dnn_type<T>()     the DNN library's code for T, < 0 when it lacks it;
//   dnn_conv(c, ...)  a convolution through the DNN library, false when it
//                     has no algorithm for it.
// The CPU emulation (tools/gpu_emu) replaces the libraries headers, so it
// does not include this one.
#ifndef THUNDER_GPU_LIBS_H
#define THUNDER_GPU_LIBS_H

namespace THUNDER_GPU_NS {

//===--------------------------------------------------------------------===//
// GEMM: the vendor's libraries, else a tiled kernel
//===--------------------------------------------------------------------===//

/// The GEMM for types the vendor's GEMM libraries lack (integers, f8) or
/// shapes they refuse: 16x16 tiles in shared memory, one output element per
/// thread, batches on the grid's z dimension.
template <class T>
__global__ void gemm_tiled_kernel(bool ta, bool tb, i64 m, i64 n, i64 k, const T *a, i64 lda,
                                  i64 sa, const T *b, i64 ldb, i64 sb, T *out, i64 ldc, i64 sc,
                                  Epilogue epi, const T *bias) {
  using A = acc_t<T>;
  constexpr int TS = 16;
  __shared__ A as[TS][TS + 1], bs[TS][TS + 1];
  const i64 batch = blockIdx.z;
  const T *ab = a + batch * sa, *bb = b + batch * sb;
  const i64 row = i64(blockIdx.y) * TS + threadIdx.y, col = i64(blockIdx.x) * TS + threadIdx.x;
  A acc = 0;
  for (i64 k0 = 0; k0 < k; k0 += TS) {
    // as[y][x] = op(A)[row][k0 + x]; bs[y][x] = op(B)[k0 + y][col].
    i64 ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    as[threadIdx.y][threadIdx.x] =
        (row < m && ka < k) ? static_cast<A>(cv(ta ? ab[ka * lda + row] : ab[row * lda + ka])) : A(0);
    bs[threadIdx.y][threadIdx.x] =
        (col < n && kb < k) ? static_cast<A>(cv(tb ? bb[col * ldb + kb] : bb[kb * ldb + col])) : A(0);
    __syncthreads();
#pragma unroll
    for (int t = 0; t < TS; ++t)
      acc += as[threadIdx.y][t] * bs[t][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) {
    if (bias)
      acc += static_cast<A>(cv(bias[col]));
    if (epi == Epilogue::Relu || epi == Epilogue::ReluBias)
      acc = relu(acc);
    if constexpr (std::is_floating_point_v<A>)
      if (epi == Epilogue::GeluTanh || epi == Epilogue::GeluTanhBias)
        acc = gelu_tanh(acc);
    out[batch * sc + row * ldc + col] = st<T>(static_cast<compute_t<T>>(acc));
  }
}

template <class T>
void gemm(const Ctx &c, bool ta, bool tb, i64 m, i64 n, i64 k, const T *a, i64 lda, i64 sa,
          const T *b, i64 ldb, i64 sb, T *out, i64 ldc, i64 sc, i64 batch,
          Epilogue epi = Epilogue::None, const T *bias = nullptr) {
  if (m <= 0 || n <= 0 || batch <= 0)
    return;
  if (lt_gemm(c, ta, tb, m, n, k, a, lda, sa, b, ldb, sb, out, ldc, sc, batch, epi, bias))
    return;
  dim3 block(16, 16);
  // The grid's y and z dimensions hold 65535 blocks: rows and batches in chunks.
  constexpr i64 kRows = 65535 * 16;
  for (i64 b0 = 0; b0 < batch; b0 += 65535) {
    i64 nb = std::min<i64>(65535, batch - b0);
    for (i64 r0 = 0; r0 < m; r0 += kRows) {
      i64 mr = std::min<i64>(kRows, m - r0);
      const T *ar = a + b0 * sa + (ta ? r0 : r0 * lda);
      dim3 grid(unsigned((n + 15) / 16), unsigned((mr + 15) / 16), unsigned(nb));
      gemm_tiled_kernel<T><<<grid, block, 0, c.stream>>>(ta, tb, mr, n, k, ar, lda, sa,
                                                        b + b0 * sb, ldb, sb,
                                                        out + b0 * sc + r0 * ldc, ldc, sc, epi,
                                                        bias);
    }
  }
}

/// out[b] = op(lhs[b]) @ op(rhs[b or shared]); lhs is [batch, m, k] (or
/// [batch, k, m] transposed), rhs [batch or 1, k, n] (or [.., n, k]).
template <class T>
void matmul(const Ctx &c, const T *lhs, const T *rhs, T *out, i64 batch, i64 m, i64 n, i64 k,
            bool ta, bool tb, bool rhs_shared, Epilogue epi = Epilogue::None,
            const T *bias = nullptr) {
  if (rhs_shared && !ta) {
    // One GEMM over every batch: [batch*m, k] @ [k, n].
    m *= batch;
    batch = 1;
  }
  i64 lda = ta ? m : k, ldb = tb ? k : n;
  gemm(c, ta, tb, m, n, k, lhs, lda, m * k, rhs, ldb, rhs_shared ? 0 : k * n, out, n, m * n,
       batch, epi, bias);
}

//===--------------------------------------------------------------------===//
// Convolution: the DNN library; im2col + GEMM or a direct kernel where it
// cannot
//===--------------------------------------------------------------------===//

/// cols[b][c * kk + kf][o] = input[b][c][window position of o and kf] (zero
/// in the padding).
template <class T>
__global__ void __launch_bounds__(kBlock)
    im2col_kernel(const T *__restrict__ in, T *__restrict__ cols, i64 batch, i64 cin, Window win) {
  const i64 in_size = win.in_size(), out_size = win.out_size(), kk = win.taps();
  i64 n = batch * cin * kk * out_size;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 o = flat % out_size, rest = flat / out_size;
    i64 kf = rest % kk;
    rest /= kk;
    i64 ch = rest % cin, b = rest / cin;
    i64 oidx[3] = {0, 0, 0}, off;
    win.out_index(o, oidx);
    bool inside = win.tap_offset(oidx, kf, off);
    cols[flat] = inside ? in[(b * cin + ch) * in_size + off] : T(0.0f);
  }
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    conv_direct_kernel(const T *__restrict__ in, const T *__restrict__ w, const T *__restrict__ bias,
                       T *__restrict__ out, i64 batch, i64 cin, i64 cout, i64 groups, Window win) {
  using A = acc_t<T>;
  const i64 in_size = win.in_size(), out_size = win.out_size(), kk = win.taps();
  i64 cin_g = cin / groups, cout_g = cout / groups;
  i64 n = batch * cout * out_size;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 o = flat % out_size, rest = flat / out_size;
    i64 oc = rest % cout, b = rest / cout;
    i64 g = oc / cout_g;
    i64 oidx[3] = {0, 0, 0};
    win.out_index(o, oidx);
    A acc = bias ? static_cast<A>(cv(bias[oc])) : A(0);
    for (i64 ic = 0; ic < cin_g; ++ic) {
      const T *x = in + (b * cin + g * cin_g + ic) * in_size;
      const T *wk = w + (oc * cin_g + ic) * kk;
      for (i64 kf = 0; kf < kk; ++kf) {
        i64 off;
        if (win.tap_offset(oidx, kf, off))
          acc += static_cast<A>(cv(x[off])) * static_cast<A>(cv(wk[kf]));
      }
    }
    out[flat] = st<T>(static_cast<compute_t<T>>(acc));
  }
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    channel_bias_kernel(T *__restrict__ out, const T *__restrict__ bias, i64 n, i64 channels,
                        i64 rest) {
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 ch = (flat / rest) % channels;
    out[flat] = st<T>(cv(out[flat]) + cv(bias[ch]));
  }
}

/// Bytes of scratch conv() needs (the im2col matrix; none for 1x1 convs
/// with unit stride and no padding, or for grouped ones).
inline i64 conv_scratch_bytes(i64 elem_bytes, i64 batch, i64 cin, i64 groups, const Window &w) {
  if (groups != 1)
    return 0;
  bool pointwise = true;
  for (int s = 0; s < w.spatial; ++s)
    pointwise = pointwise && w.kernel[s] == 1 && w.stride[s] == 1 && w.pad_lo[s] == 0 &&
                w.out[s] == w.in[s];
  return pointwise ? 0 : (batch * cin * w.taps() * w.out_size() * elem_bytes + 255) / 256 * 256;
}

/// out = conv(in, w) (+ bias per output channel). Through the DNN library
/// (cuDNN, MIOpen) when the padding is the same on both sides (`symmetric`,
/// known when the model is compiled) and the type is one it takes; else
/// im2col + GEMM (ungrouped, the GEMM libraries' types, the im2col scratch
/// reserved), else the direct kernel.
template <class T>
void conv(const Ctx &c, const T *in, const T *w, const T *bias, T *out, i64 batch, i64 cin,
          i64 cout, i64 groups, const Window &win, bool symmetric) {
  const i64 in_size = win.in_size(), out_size = win.out_size(), kk = win.taps();
  i64 total = batch * cout * out_size;
  if (total == 0)
    return;
  auto add_bias = [&] {
    if (bias)
      channel_bias_kernel<T><<<grid_for(total, kBlock, c), kBlock, 0, c.stream>>>(
          out, bias, total, cout, out_size);
  };
  // The DNN libraries' descriptors hold int sizes and strides: a call takes as many
  // images as keep every tensor under 2^31 elements.
  const i64 per_image = std::max(cin * in_size, cout * out_size);
  if (symmetric && c.dnn && dnn_type<T>() >= 0 && per_image <= INT32_MAX) {
    const i64 step = INT32_MAX / std::max<i64>(per_image, 1);
    bool done = true;
    for (i64 b0 = 0; done && b0 < batch; b0 += step)
      done = dnn_conv(c, in + b0 * cin * in_size, w, out + b0 * cout * out_size,
                      std::min(step, batch - b0), cin, cout, groups, win);
    if (done) {
      add_bias();
      return;
    }
  }
  const i64 scratch = conv_scratch_bytes(sizeof(T), batch, cin, groups, win);
  if (groups != 1 || blas_type<T>() < 0 || scratch > i64(c.scratch_bytes)) {
    conv_direct_kernel<T><<<grid_for(total, kBlock, c), kBlock, 0, c.stream>>>(
        in, w, bias, out, batch, cin, cout, groups, win);
    return;
  }
  // out[b] (cout x out_size) = w (cout x cin*kk) @ cols[b] (cin*kk x out_size).
  const T *cols = in;
  if (scratch > 0) {
    T *buffer = static_cast<T *>(c.scratch);
    i64 n = batch * cin * kk * out_size;
    im2col_kernel<T><<<grid_for(n, kBlock, c), kBlock, 0, c.stream>>>(in, buffer, batch, cin, win);
    cols = buffer;
  }
  i64 k = cin * kk;
  gemm(c, false, false, cout, out_size, k, w, k, 0, cols, out_size, k * out_size, out, out_size,
       cout * out_size, batch);
  add_bias();
}

} // namespace THUNDER_GPU_NS

#endif // THUNDER_GPU_LIBS_H
