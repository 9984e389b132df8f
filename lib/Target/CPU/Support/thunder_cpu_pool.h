// thunder_cpu_pool.h: max and average pooling of Thunder's CPU support
// library, 1-3 spatial dims: 2-D fp32 pooling vectorized over a padded row of
// the window's rows (pool2d_rows), or channels last between convolutions
// that oneDNN runs so (pool2d_channels_last); otherwise a direct loop.
//
// A part of thunder_cpu_conv.h, which includes it at its end (it uses the
// Window and ConvLayout of thunder_cpu_conv_api.h and direct_conv's
// valid_range); not a header to include on its own.
#ifndef THUNDER_CPU_POOL_H
#define THUNDER_CPU_POOL_H

namespace thunder_cpu {

/// f(stride) with the stride as a compile-time constant where it is 1 or 2
/// (std::integral_constant), else as it is: a loop over `o * stride` then
/// loads whole vectors (stride 2: two and a permute) rather than a gather.
template <class F>
inline void with_stride(i64 stride, F &&f) {
  if (stride == 1)
    f(std::integral_constant<i64, 1>{});
  else if (stride == 2)
    f(std::integral_constant<i64, 2>{});
  else
    f(stride);
}

/// Max pooling's step, as PyTorch's: x replaces acc where it is NaN or
/// larger, so a NaN anywhere in the window is the result.
inline float pool_max(float acc, float x) { return (x != x || x > acc) ? x : acc; }

/// Average pooling's divisor along one dim with count_include_pad, as
/// PyTorch's: the window from `start` clipped to the padded input, which
/// ends at in + pad_hi.
inline i64 padded_window(i64 start, i64 kernel, i64 in, i64 pad_hi) {
  return std::min(start + kernel, in + pad_hi) - start;
}

/// acc[0, n) combined with x[0, n): set to it (first), else its max
/// (pool_max) or sum with it. Contiguous: one vector op each.
inline void pool_combine(float *__restrict acc, const float *__restrict x, i64 n, bool is_max,
                         bool first) {
  if (first) {
    std::copy(x, x + n, acc);
  } else if (is_max) {
#pragma omp simd
    for (i64 c = 0; c < n; ++c)
      acc[c] = pool_max(acc[c], x[c]);
  } else {
#pragma omp simd
    for (i64 c = 0; c < n; ++c)
      acc[c] += x[c];
  }
}

/// Max (is_max) or average pooling over the trailing spatial dims; `planes`
/// is the product of the leading dims.
/// 2-D fp32 pooling, one output row at a time, in two passes over vectors:
/// the window's input rows combined column by column into one padded row
/// (contiguous), then each output column's kw taps of that row (strided by
/// sw, a constant where it is 1 or 2). The padding holds the operation's
/// identity (-inf, 0), so no tap needs a bounds check. Max propagates NaN as
/// PyTorch does; of equal values it may keep another one than PyTorch's
/// row-major scan (-0 for +0: rows are combined before columns). (Each tap
/// gathered from the input rows, with the stride known only at run time,
/// took 0.55-0.57 ms for ResNet-18's 3x3/2 max pool at batch 1 on 2 threads
/// of an Intel Xeon; this takes 0.19-0.21 ms, and the pool's share of
/// ResNet-18's samples went from 2.8% to 0.8%.)
inline void pool2d_rows(const float *in, float *out, i64 planes, const Window &win,
                        bool is_max, bool count_include_pad, const i64 *pad_hi) {
  const i64 ih = win.in[0], iw = win.in[1], oh = win.out[0], ow = win.out[1];
  const i64 kh = win.kernel[0], kw = win.kernel[1], sh = win.stride[0],
            sw = win.stride[1], ph = win.pad_lo[0], pw = win.pad_lo[1],
            dh = win.dilation[0], dw = win.dilation[1];
  // Average pooling's divisor per output column: the taps inside the input,
  // or (count_include_pad) the window clipped to the padded input.
  std::vector<float> wcount(static_cast<size_t>(ow), 0.0f);
  if (count_include_pad) {
    for (i64 o = 0; o < ow; ++o)
      wcount[o] = static_cast<float>(padded_window(o * sw - pw, kw, iw, pad_hi[1]));
  } else {
    for (i64 j = 0; j < kw; ++j) {
      i64 lo, hi;
      direct_conv::valid_range(ow, iw, sw, pw, j * dw, &lo, &hi);
      for (i64 o = lo; o < hi; ++o)
        wcount[o] += 1.0f;
    }
  }
  // The padded row: column c holds input column c - pw; it spans every tap
  // of every output column (ceil mode can reach past the right padding).
  const i64 width = std::max(pw + iw, (ow - 1) * sw + (kw - 1) * dw + 1);
  const float identity = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
#pragma omp parallel if (planes * oh * ow * kh * kw > 32768)
  {
    std::vector<float> row_buf(static_cast<size_t>(width), identity);
    float *padded = row_buf.data(), *cols = padded + pw;
#pragma omp for
    for (i64 p = 0; p < planes; ++p) {
      const float *x = in + p * ih * iw;
      float *y = out + p * oh * ow;
      for (i64 r = 0; r < oh; ++r) {
        // The window's rows inside the input, combined into cols[0, iw).
        i64 rows = 0;
        for (i64 i = 0; i < kh; ++i) {
          const i64 row = r * sh - ph + i * dh;
          if (row < 0 || row >= ih)
            continue;
          pool_combine(cols, x + row * iw, iw, is_max, rows++ == 0);
        }
        if (rows == 0)
          std::fill(cols, cols + iw, identity);
        // Each output column's taps of the padded row.
        float *yr = y + r * ow;
        with_stride(sw, [&](auto stride) {
#pragma omp simd
          for (i64 o = 0; o < ow; ++o)
            yr[o] = padded[o * stride];
          for (i64 j = 1; j < kw; ++j) {
            const float *tap = padded + j * dw;
            if (is_max) {
#pragma omp simd
              for (i64 o = 0; o < ow; ++o)
                yr[o] = pool_max(yr[o], tap[o * stride]);
            } else {
#pragma omp simd
              for (i64 o = 0; o < ow; ++o)
                yr[o] += tap[o * stride];
            }
          }
        });
        if (!is_max) {
          const i64 start = r * sh - ph;
          const float hcount = count_include_pad
              ? static_cast<float>(padded_window(start, kh, ih, pad_hi[0]))
              : static_cast<float>(rows);
#pragma omp simd
          for (i64 o = 0; o < ow; ++o)
            yr[o] = yr[o] / (hcount * wcount[o]);
        }
      }
    }
  }
}

/// 2-D fp32 pooling of tensors kept channels last ([N, H, W, C] in memory,
/// input and output: ChannelsLast.cpp keeps a pool's output so only when its
/// input is), the channels in SIMD lanes: each output pixel's C values are
/// the max or sum of its window's input pixels, each a contiguous row of C.
/// Between convolutions that oneDNN runs channels last (ResNet's stem max
/// pool) this saves the reorder into channels first and back.
inline void pool2d_channels_last(const float *in, float *out, i64 batch, i64 channels,
                                 const Window &win, bool is_max, bool count_include_pad,
                                 const i64 *pad_hi) {
  const i64 ih = win.in[0], iw = win.in[1], oh = win.out[0], ow = win.out[1];
  const i64 kh = win.kernel[0], kw = win.kernel[1], sh = win.stride[0],
            sw = win.stride[1], ph = win.pad_lo[0], pw = win.pad_lo[1],
            dh = win.dilation[0], dw = win.dilation[1], nc = channels;
  const float identity = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
#pragma omp parallel for collapse(2) if (batch * oh * ow * nc * kh * kw > 32768)
  for (i64 n = 0; n < batch; ++n)
    for (i64 r = 0; r < oh; ++r)
      for (i64 o = 0; o < ow; ++o) {
        float *y = out + ((n * oh + r) * ow + o) * nc;
        i64 taps = 0;
        for (i64 i = 0; i < kh; ++i) {
          const i64 row = r * sh - ph + i * dh;
          if (row < 0 || row >= ih)
            continue;
          for (i64 j = 0; j < kw; ++j) {
            const i64 col = o * sw - pw + j * dw;
            if (col < 0 || col >= iw)
              continue;
            pool_combine(y, in + ((n * ih + row) * iw + col) * nc, nc, is_max, taps++ == 0);
          }
        }
        if (taps == 0)
          std::fill(y, y + nc, identity);
        if (!is_max) {
          // As pool2d_rows: the taps inside the input, or (count_include_pad)
          // the window clipped to the padded input.
          const i64 top = r * sh - ph, left = o * sw - pw;
          const float divisor = count_include_pad
              ? static_cast<float>(padded_window(top, kh, ih, pad_hi[0]) *
                                   padded_window(left, kw, iw, pad_hi[1]))
              : static_cast<float>(taps);
#pragma omp simd
          for (i64 c = 0; c < nc; ++c)
            y[c] = y[c] / divisor;
        }
      }
}

/// `layout` (ConvLayout) is kChannelsFirst, or, for fp32 2-D pooling only,
/// both bits (ChannelsLast.cpp keeps a pool's input and output alike): then
/// `planes` is batch x `channels`.
template <class T>
void pool_inline(const T *in, T *out, i64 planes, const Window &win, bool is_max,
                 bool count_include_pad, const i64 *pad_hi, int layout = kChannelsFirst,
                 i64 channels = 1) {
  using C = compute_t<T>;
  if constexpr (std::is_same_v<T, float>) {
    if (layout != kChannelsFirst) {
      // (ChannelsLast.cpp gives a layout only to 2-D pooling.)
      if (channels > 0)
        pool2d_channels_last(in, out, planes / channels, channels, win, is_max,
                             count_include_pad, pad_hi);
      return;
    }
    if (win.spatial == 2) {
      pool2d_rows(in, out, planes, win, is_max, count_include_pad, pad_hi);
      return;
    }
  }
  i64 in_size = 1, out_size = 1;
  for (int s = 0; s < win.spatial; ++s) {
    in_size *= win.in[s];
    out_size *= win.out[s];
  }
#pragma omp parallel for if (planes * out_size > 32768)
  for (i64 p = 0; p < planes; ++p)
    for (i64 o = 0; o < out_size; ++o) {
      i64 oidx[3] = {0, 0, 0}, oflat = o;
      for (int s = win.spatial - 1; s >= 0; --s) {
        oidx[s] = oflat % win.out[s];
        oflat /= win.out[s];
      }
      double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
      bool nan = false;
      i64 count = 0, padded_count = 1;
      // PyTorch's avg divisor with count_include_pad: the window clipped to
      // the padded input.
      for (int s = 0; s < win.spatial; ++s)
        padded_count *= padded_window(oidx[s] * win.stride[s] - win.pad_lo[s], win.kernel[s],
                                      win.in[s], pad_hi[s]);
      i64 kn = 1;
      for (int s = 0; s < win.spatial; ++s)
        kn *= win.kernel[s];
      for (i64 kf = 0; kf < kn; ++kf) {
        i64 rest = kf, off = 0, mul = 1;
        bool inside = true;
        for (int s = win.spatial - 1; s >= 0; --s) {
          i64 ki = rest % win.kernel[s];
          rest /= win.kernel[s];
          i64 ii = oidx[s] * win.stride[s] - win.pad_lo[s] + ki * win.dilation[s];
          inside = inside && ii >= 0 && ii < win.in[s];
          off += ii * mul;
          mul *= win.in[s];
        }
        if (!inside)
          continue;
        double v = static_cast<double>(cv(in[p * in_size + off]));
        ++count;
        if (is_max) {
          nan = nan || v != v;
          acc = v > acc ? v : acc;
        } else {
          acc += v;
        }
      }
      if (is_max && nan)
        acc = std::numeric_limits<double>::quiet_NaN();
      if (!is_max)
        acc /= static_cast<double>(count_include_pad ? padded_count : count);
      out[p * out_size + o] = st<T>(static_cast<C>(acc));
    }
}

/// Pooling (pool_inline's) of a type other than fp32, or of any type when
/// THUNDER_GEMM_APART is 0; fp32 takes thunder_cpu_conv_api.h's overload.
template <class T>
void pool(const T *in, T *out, i64 planes, const Window &win, bool is_max,
          bool count_include_pad, const i64 *pad_hi, int layout = kChannelsFirst,
          i64 channels = 1) {
  pool_inline(in, out, planes, win, is_max, count_include_pad, pad_hi, layout, channels);
}

} // namespace thunder_cpu

#endif // THUNDER_CPU_POOL_H
