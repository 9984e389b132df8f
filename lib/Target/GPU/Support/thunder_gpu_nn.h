// thunder_gpu_nn.h: the GPU support library's composites: row-wise softmax
// and normalization (the row kept in shared memory when it fits), pooling,
// and an attention kernel (FlashAttention-style online softmax).
//
// Written against the dialect macros like thunder_gpu.h, which it follows.
#ifndef THUNDER_GPU_NN_H
#define THUNDER_GPU_NN_H

#include "thunder_gpu.h"

namespace THUNDER_GPU_NS {

//===--------------------------------------------------------------------===//
// Row-wise composites: softmax, layer_norm / rms_norm, batch_norm
//===--------------------------------------------------------------------===//

/// Threads of a block that serves rows of `size` elements.
inline int row_block(i64 size) {
  constexpr i64 w = THUNDER_WARP_SIZE;
  return int(std::min<i64>(kBlock, std::max<i64>(w, (size + w - 1) / w * w)));
}

/// The dynamic shared memory a generated row kernel may keep its row's inputs
/// in: the default limit without opting in (THUNDER_SMEM_DEFAULT_BYTES, static
/// and dynamic together) less the kernel's own `scratch` (kMaxWarps doubles).
/// A row that needs more is read from global memory in every pass.
constexpr size_t kRowCacheBytes = THUNDER_SMEM_DEFAULT_BYTES - kMaxWarps * sizeof(double);

/// `bytes` rounded up to 16: each array of a row cache starts aligned for any
/// element type.
__host__ __device__ constexpr i64 align16(i64 bytes) { return (bytes + 15) / 16 * 16; }

/// A generated row kernel's first read of a cached input: `x`, also kept in
/// the row cache at `slot` when the cache is in use.
template <class T> __device__ inline T row_fill(bool cached, T &slot, T x) {
  if (cached)
    slot = x;
  return x;
}

/// Shared memory that keeps a row of `size` accumulators; 0 when it does not
/// fit in the dialect's default shared memory less 8 KB for the kernels' own
/// scratch (the kernels then read the row from memory again).
template <class A> inline size_t row_smem(i64 size) {
  size_t bytes = size_t(size) * sizeof(A);
  return bytes <= THUNDER_SMEM_DEFAULT_BYTES - 8 * 1024 ? bytes : 0;
}

/// softmax / log_softmax of contiguous rows, one block per row. The row is
/// read from memory once when it fits in shared memory.
template <class T>
__global__ void softmax_rows_kernel(const T *__restrict__ in, T *__restrict__ out, i64 rows,
                                    i64 size, bool log_softmax, bool cached) {
  using A = acc_t<T>;
  A *row = dynamic_smem<A>();
  __shared__ A scratch[kMaxWarps];
  for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *x = in + r * size;
    T *y = out + r * size;
    A mx = lowest<A>();
    for (i64 k = threadIdx.x; k < size; k += blockDim.x) {
      A v = static_cast<A>(cv(x[k]));
      if (cached)
        row[k] = v;
      mx = softmax_max(mx, v);
    }
    mx = softmax_shift(block_reduce<Reduce::Max>(mx, scratch));
    A sum = 0;
    for (i64 k = threadIdx.x; k < size; k += blockDim.x)
      sum += std::exp((cached ? row[k] : static_cast<A>(cv(x[k]))) - mx);
    sum = block_reduce<Reduce::Sum>(sum, scratch);
    A lse = std::log(sum);
    for (i64 k = threadIdx.x; k < size; k += blockDim.x) {
      A v = (cached ? row[k] : static_cast<A>(cv(x[k]))) - mx;
      y[k] = softmax_out<T>(v, sum, lse, log_softmax);
    }
    __syncthreads(); // the row buffer is reused by the next row
  }
}

/// softmax along a dim that is not the last: one thread per column.
template <class T>
__global__ void __launch_bounds__(kBlock)
    softmax_cols_kernel(const T *__restrict__ in, T *__restrict__ out, i64 outer, i64 size,
                        i64 inner, bool log_softmax) {
  using A = acc_t<T>;
  i64 n = outer * inner;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 o = flat / inner, i = flat % inner;
    const T *x = in + o * size * inner + i;
    T *y = out + o * size * inner + i;
    A mx = lowest<A>();
    for (i64 k = 0; k < size; ++k) {
      mx = softmax_max(mx, static_cast<A>(cv(x[k * inner])));
    }
    mx = softmax_shift(mx);
    A sum = 0;
    for (i64 k = 0; k < size; ++k)
      sum += std::exp(static_cast<A>(cv(x[k * inner])) - mx);
    A lse = std::log(sum);
    for (i64 k = 0; k < size; ++k) {
      A v = static_cast<A>(cv(x[k * inner])) - mx;
      y[k * inner] = softmax_out<T>(v, sum, lse, log_softmax);
    }
  }
}

template <class T>
void softmax(const Ctx &c, const T *in, const i64 *shape, int rank, int dim, bool log_softmax, T *out) {
  i64 outer = numel(shape, dim), size = shape[dim];
  i64 inner = numel(shape + dim + 1, rank - dim - 1);
  if (outer * inner == 0 || size == 0)
    return;
  if (inner == 1) {
    size_t smem = row_smem<acc_t<T>>(size);
    unsigned blocks = unsigned(std::min<i64>(outer, i64(c.sms) * 16));
    softmax_rows_kernel<T><<<std::max(1u, blocks), row_block(size), smem, c.stream>>>(
        in, out, outer, size, log_softmax, smem != 0);
  } else {
    softmax_cols_kernel<T><<<grid_for(outer * inner, kBlock, c), kBlock, 0, c.stream>>>(
        in, out, outer, size, inner, log_softmax);
  }
}

/// layer_norm (rms = false) or rms_norm over rows of `size` elements, one block
/// per row; mean and variance in two passes over the row kept in shared
/// memory when it fits.
template <class T>
__global__ void norm_kernel(const T *__restrict__ in, const T *__restrict__ weight,
                            const T *__restrict__ bias, T *__restrict__ out, i64 rows, i64 size,
                            float eps, bool rms, bool cached) {
  using A = acc_t<T>;
  A *row = dynamic_smem<A>();
  __shared__ A scratch[kMaxWarps];
  for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *x = in + r * size;
    T *y = out + r * size;
    A mean = 0;
    if (!rms || cached) {
      A sum = 0;
      for (i64 k = threadIdx.x; k < size; k += blockDim.x) {
        A v = static_cast<A>(cv(x[k]));
        if (cached)
          row[k] = v;
        sum += v;
      }
      sum = block_reduce<Reduce::Sum>(sum, scratch);
      if (!rms)
        mean = sum / A(size);
    }
    A sq = 0;
    for (i64 k = threadIdx.x; k < size; k += blockDim.x) {
      A d = (cached ? row[k] : static_cast<A>(cv(x[k]))) - mean;
      sq += d * d;
    }
    sq = block_reduce<Reduce::Sum>(sq, scratch);
    A rstd = A(1) / std::sqrt(sq / A(size) + A(eps));
    for (i64 k = threadIdx.x; k < size; k += blockDim.x) {
      A v = ((cached ? row[k] : static_cast<A>(cv(x[k]))) - mean) * rstd;
      if (weight)
        v *= static_cast<A>(cv(weight[k]));
      if (bias)
        v += static_cast<A>(cv(bias[k]));
      y[k] = st<T>(static_cast<compute_t<T>>(v));
    }
    __syncthreads();
  }
}

template <class T>
void norm(const Ctx &c, const T *in, const T *weight, const T *bias, T *out, i64 rows, i64 size,
          double eps, bool rms) {
  if (rows == 0 || size == 0)
    return;
  size_t smem = row_smem<acc_t<T>>(size);
  unsigned blocks = unsigned(std::min<i64>(rows, i64(c.sms) * 16));
  norm_kernel<T><<<std::max(1u, blocks), row_block(size), smem, c.stream>>>(
      in, weight, bias, out, rows, size, float(eps), rms, smem != 0);
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    batch_norm_kernel(const T *__restrict__ in, const T *__restrict__ mean,
                      const T *__restrict__ var, const T *__restrict__ weight,
                      const T *__restrict__ bias, T *__restrict__ out, i64 n, i64 channels,
                      i64 rest, double eps) {
  using A = acc_t<T>;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 ch = (flat / rest) % channels;
    A scale = A(1) / std::sqrt(static_cast<A>(cv(var[ch])) + A(eps));
    if (weight)
      scale *= static_cast<A>(cv(weight[ch]));
    A shift = bias ? static_cast<A>(cv(bias[ch])) : A(0);
    A v = (static_cast<A>(cv(in[flat])) - static_cast<A>(cv(mean[ch]))) * scale + shift;
    out[flat] = st<T>(static_cast<compute_t<T>>(v));
  }
}

/// Inference batch norm over [N, C, rest].
template <class T>
void batch_norm(const Ctx &c, const T *in, const T *mean, const T *var, const T *weight,
                const T *bias, T *out, i64 n, i64 channels, i64 rest, double eps) {
  i64 total = n * channels * rest;
  if (total > 0)
    batch_norm_kernel<T><<<grid_for(total, kBlock, c), kBlock, 0, c.stream>>>(
        in, mean, var, weight, bias, out, total, channels, rest, eps);
}

//===--------------------------------------------------------------------===//
// Pooling
//===--------------------------------------------------------------------===//

/// A pooling or convolution window over the trailing `spatial` dims.
struct Window {
  int spatial;
  i64 in[3], out[3], kernel[3], stride[3], pad_lo[3], dilation[3];

  /// Elements of one input plane, one output plane, and taps of the kernel.
  __host__ __device__ i64 in_size() const { return product(in); }
  __host__ __device__ i64 out_size() const { return product(out); }
  __host__ __device__ i64 taps() const { return product(kernel); }

  /// The output position of flat index `o` of an output plane.
  __device__ void out_index(i64 o, i64 *oidx) const {
    for (int s = spatial - 1; s >= 0; --s) {
      oidx[s] = o % out[s];
      o /= out[s];
    }
  }

  /// The offset in an input plane that kernel tap `tap` (row-major over the
  /// kernel) reads for output position `oidx`; false when it is padding.
  __device__ bool tap_offset(const i64 *oidx, i64 tap, i64 &offset) const {
    i64 off = 0, mul = 1;
    bool inside = true;
    for (int s = spatial - 1; s >= 0; --s) {
      i64 ki = tap % kernel[s];
      tap /= kernel[s];
      i64 ii = oidx[s] * stride[s] - pad_lo[s] + ki * dilation[s];
      inside = inside && ii >= 0 && ii < in[s];
      off += ii * mul;
      mul *= in[s];
    }
    offset = off;
    return inside;
  }

private:
  __host__ __device__ i64 product(const i64 *dims) const {
    i64 n = 1;
    for (int s = 0; s < spatial; ++s)
      n *= dims[s];
    return n;
  }
};

template <class T>
__global__ void __launch_bounds__(kBlock)
    pool_kernel(const T *__restrict__ in, T *__restrict__ out, i64 planes, Window win,
                bool is_max, bool count_include_pad, i64 pad_hi0, i64 pad_hi1, i64 pad_hi2) {
  using A = acc_t<T>;
  const i64 pad_hi[3] = {pad_hi0, pad_hi1, pad_hi2};
  const i64 in_size = win.in_size(), out_size = win.out_size(), kn = win.taps();
  i64 n = planes * out_size;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 p = flat / out_size, o = flat % out_size;
    i64 oidx[3] = {0, 0, 0};
    win.out_index(o, oidx);
    A acc = is_max ? lowest<A>() : A(0);
    bool nan = false;
    i64 count = 0, padded_count = 1;
    for (int s = 0; s < win.spatial; ++s) {
      i64 start = oidx[s] * win.stride[s] - win.pad_lo[s];
      i64 end = min(start + win.kernel[s], win.in[s] + pad_hi[s]);
      padded_count *= end - start;
    }
    for (i64 kf = 0; kf < kn; ++kf) {
      i64 off;
      if (!win.tap_offset(oidx, kf, off))
        continue;
      A v = static_cast<A>(cv(in[p * in_size + off]));
      ++count;
      if (is_max) {
        if constexpr (std::is_floating_point_v<A>)
          nan = nan || v != v;
        acc = v > acc ? v : acc;
      } else {
        acc += v;
      }
    }
    if constexpr (std::is_floating_point_v<A>) {
      if (is_max && nan)
        acc = std::numeric_limits<A>::quiet_NaN();
      if (!is_max)
        acc /= A(count_include_pad ? padded_count : count);
    }
    out[flat] = st<T>(static_cast<compute_t<T>>(acc));
  }
}

/// Max (is_max) or average pooling over the trailing spatial dims; `planes`
/// is the product of the leading dims.
template <class T>
void pool(const Ctx &c, const T *in, T *out, i64 planes, const Window &win, bool is_max,
          bool count_include_pad, const i64 *pad_hi) {
  const i64 out_size = win.out_size();
  if (planes * out_size > 0)
    pool_kernel<T><<<grid_for(planes * out_size, kBlock, c), kBlock, 0, c.stream>>>(
        in, out, planes, win, is_max, count_include_pad, pad_hi[0], pad_hi[1], pad_hi[2]);
}


//===--------------------------------------------------------------------===//
// Attention: FlashAttention-style online softmax
//===--------------------------------------------------------------------===//

/// The smallest tile of keys the attention kernel may use: a dialect whose
/// shared memory cannot hold a warp's width of keys and values for wide heads
/// (HIP: 64 wavefront lanes, 64 KiB of LDS on gfx90a and gfx942) defines it
/// below THUNDER_WARP_SIZE, and the kernel then scores each key with
/// THUNDER_WARP_SIZE / tile lanes, each over a slice of the head dim.
#ifndef THUNDER_ATTENTION_MIN_TILE
#define THUNDER_ATTENTION_MIN_TILE THUNDER_WARP_SIZE
#endif

/// The attention kernel's largest tile of keys (one per lane), its smallest,
/// and warps per block.
constexpr int kAttentionTile = THUNDER_WARP_SIZE, kAttentionMinTile = THUNDER_ATTENTION_MIN_TILE,
              kAttentionWarps = 4;
static_assert(kAttentionMinTile > 0 && kAttentionMinTile <= kAttentionTile &&
                  kAttentionTile % kAttentionMinTile == 0,
              "THUNDER_ATTENTION_MIN_TILE divides the warp size");

/// How a mask (if any) is read: it broadcasts over [lead..., L, S].
struct MaskInfo {
  int kind = 0; ///< 0: none, 1: bool (keep where true), 2: additive
  const void *data = nullptr;
  int lead = 0;
  i64 lead_shape[kMaxRank] = {}, lead_stride[kMaxRank] = {};
  i64 stride_l = 0, stride_s = 0;
};

/// Each warp owns one query row; the block's warps share tiles of KT keys and
/// values in shared memory. Per tile, key j is scored against the row by the
/// lanes j, j + KT, ... (one lane when KT is the warp's width; else each
/// takes a slice of the head dim and the parts are summed across lanes), the
/// warp updates the running max and sum (online softmax), and each lane
/// accumulates its slice of the output over the tile. EPL: head-dim elements
/// per lane (E, Ev <= THUNDER_WARP_SIZE * EPL). Computes in float (double for f64).
template <class T, int EPL, int KT = kAttentionTile>
__global__ void attention_kernel(const T *__restrict__ q, const T *__restrict__ k,
                                 const T *__restrict__ v, T *__restrict__ out, i64 l, i64 s,
                                 int e, int ev, double scale, bool causal, MaskInfo mask,
                                 i64 b0) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  constexpr int kTile = KT, kWarps = kAttentionWarps, kParts = THUNDER_WARP_SIZE / KT;
  A *ks = dynamic_smem<A>();      // [kTile][e + 1]
  A *vs = ks + kTile * (e + 1);                  // [kTile][ev]
  A *qs = vs + kTile * ev;                       // [kWarps][e]
  A *ps = qs + kWarps * e;                       // [kWarps][kTile]
  const int lane = threadIdx.x % THUNDER_WARP_SIZE, warp = threadIdx.x / THUNDER_WARP_SIZE;
  // The tile's key this lane scores, and its slice of the head dim.
  const int key_lane = lane % kTile, part = lane / kTile;
  const i64 b = b0 + blockIdx.y; // launches cover at most 65535 batches each
  const i64 row = i64(blockIdx.x) * kWarps + warp;
  const bool active = row < l;
  const T *kb = k + b * s * e, *vb = v + b * s * ev;

  // The mask's offset for this (batch, row).
  i64 mask_base = 0;
  if (mask.kind) {
    i64 rest = b;
    for (int d = mask.lead - 1; d >= 0; --d) {
      mask_base += (rest % mask.lead_shape[d]) * mask.lead_stride[d];
      rest /= mask.lead_shape[d];
    }
    mask_base += (active ? row : 0) * mask.stride_l;
  }
  if (active)
    for (int i = lane; i < e; i += THUNDER_WARP_SIZE)
      qs[warp * e + i] = static_cast<A>(cv(q[(b * l + row) * e + i])) * A(scale);
  A m = lowest<A>(), sum = 0, acc[EPL];
#pragma unroll
  for (int t = 0; t < EPL; ++t)
    acc[t] = 0;

  // With causal masking no row of this block looks past its last row.
  i64 last_row = min(l, i64(blockIdx.x + 1) * kWarps) - 1;
  i64 keys = causal ? min(s, last_row + 1) : s;
  for (i64 s0 = 0; s0 < keys; s0 += kTile) {
    __syncthreads(); // the previous tile is no longer read
    for (int idx = threadIdx.x; idx < kTile * e; idx += blockDim.x) {
      int j = idx / e, i = idx % e;
      ks[j * (e + 1) + i] = s0 + j < s ? static_cast<A>(cv(kb[(s0 + j) * e + i])) : A(0);
    }
    for (int idx = threadIdx.x; idx < kTile * ev; idx += blockDim.x) {
      int j = idx / ev, i = idx % ev;
      vs[j * ev + i] = s0 + j < s ? static_cast<A>(cv(vb[(s0 + j) * ev + i])) : A(0);
    }
    __syncthreads();
    if (!active)
      continue;
    // Lane j (and j + kTile, ...) scores key s0 + j.
    const i64 key = s0 + key_lane;
    A score = lowest<A>(), dot = 0;
    if constexpr (kParts > 1) {
      // The parts of every key's dot product, summed by all lanes together
      // (the shuffles need the whole warp; keys past the end read zeros).
      for (int i = part; i < e; i += kParts)
        dot += qs[warp * e + i] * ks[key_lane * (e + 1) + i];
#pragma unroll
      for (int offset = kTile; offset < THUNDER_WARP_SIZE; offset <<= 1)
        dot += static_cast<A>(THUNDER_SHFL_XOR(dot, offset));
    }
    if (key < s && !(causal && key > row)) {
      if constexpr (kParts == 1)
        for (int i = 0; i < e; ++i)
          dot += qs[warp * e + i] * ks[lane * (e + 1) + i];
      score = dot;
      if (mask.kind == 1) {
        if (!static_cast<const bool *>(mask.data)[mask_base + key * mask.stride_s])
          score = lowest<A>();
      } else if (mask.kind == 2) {
        score += static_cast<A>(cv(static_cast<const T *>(mask.data)[mask_base + key * mask.stride_s]));
      }
    }
    A tile_max = warp_reduce<Reduce::Max>(score);
    A m_new = tile_max > m ? tile_max : m;
    if (m_new == lowest<A>())
      continue; // every key so far is masked out (warp-uniform)
    A p = score == lowest<A>() ? A(0) : std::exp(score - m_new);
    A correction = m == lowest<A>() ? A(0) : std::exp(m - m_new);
    // Each key counts once: the lanes of part 0 hold the tile's probabilities.
    sum = sum * correction + warp_reduce<Reduce::Sum>(part == 0 ? p : A(0));
    if (part == 0)
      ps[warp * kTile + key_lane] = p;
    THUNDER_SYNC_WARP();
#pragma unroll
    for (int t = 0; t < EPL; ++t) {
      int i = lane + THUNDER_WARP_SIZE * t;
      if (i < ev) {
        A a = acc[t] * correction;
        for (int j = 0; j < kTile; ++j)
          a += ps[warp * kTile + j] * vs[j * ev + i];
        acc[t] = a;
      }
    }
    THUNDER_SYNC_WARP();
    m = m_new;
  }
  if (active) {
#pragma unroll
    for (int t = 0; t < EPL; ++t) {
      int i = lane + THUNDER_WARP_SIZE * t;
      if (i < ev)
        out[(b * l + row) * ev + i] = st<T>(static_cast<compute_t<T>>(sum > 0 ? acc[t] / sum : acc[t]));
    }
  }
}

/// The attention kernel's shared memory for a tile of `tile` keys.
template <class A> constexpr size_t attention_smem(int tile, i64 e, i64 ev) {
  return size_t(tile * (e + 1) + tile * ev + kAttentionWarps * e + kAttentionWarps * tile) *
         sizeof(A);
}

/// Whether sdpa may choose a tile of `tile` keys for head dims that take
/// `epl` elements per lane: a tile below THUNDER_ATTENTION_MIN_TILE never,
/// and one whose double would fit even the widest such heads never either
/// (sdpa picks the largest tile that fits), so that kernel is not built.
template <class A> constexpr bool attention_tile_used(int tile, int epl) {
  const i64 widest = std::min<i64>(256, i64(epl) * THUNDER_WARP_SIZE);
  return tile >= kAttentionMinTile &&
         attention_smem<A>(2 * tile, widest, widest) > THUNDER_SMEM_DEFAULT_BYTES;
}

/// q [batch, l, e], k [batch, s, e], v [batch, s, ev] -> out [batch, l, ev].
/// Returns false when the head dims are too large (> 256). The tile of keys is
/// the warp's width, or on dialects with a smaller THUNDER_ATTENTION_MIN_TILE
/// the largest power-of-two fraction of it whose shared memory fits
/// THUNDER_SMEM_DEFAULT_BYTES (HIP's LDS).
template <class T>
bool sdpa(const Ctx &c, const T *q, const T *k, const T *v, T *out, i64 batch, i64 l, i64 s,
          i64 e, i64 ev, double scale, bool causal, const MaskInfo &mask) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  if (batch * l == 0)
    return true;
  i64 widest = std::max(e, ev);
  if (widest > 256)
    return false;
  constexpr int kWarps = kAttentionWarps;
  int tile = kAttentionTile;
  if constexpr (kAttentionMinTile < kAttentionTile) {
    while (tile > kAttentionMinTile && attention_smem<A>(tile, e, ev) > THUNDER_SMEM_DEFAULT_BYTES)
      tile /= 2;
    if (attention_smem<A>(tile, e, ev) > THUNDER_SMEM_DEFAULT_BYTES)
      return false;
  }
  size_t smem = attention_smem<A>(tile, e, ev);
  auto launch = [&](auto kernel) {
    if (smem > THUNDER_SMEM_DEFAULT_BYTES)
      THUNDER_SMEM_OPT_IN(kernel, smem);
    // The grid's y dimension holds 65535 batches at most: one launch per chunk.
    for (i64 b0 = 0; b0 < batch; b0 += 65535) {
      dim3 grid(unsigned((l + kWarps - 1) / kWarps), unsigned(std::min<i64>(65535, batch - b0)));
      kernel<<<grid, kWarps * THUNDER_WARP_SIZE, smem, c.stream>>>(q, k, v, out, l, s, int(e), int(ev), scale,
                                            causal, mask, b0);
    }
  };
  // One kernel per (elements per lane, tile): only the tiles the dialect may
  // use, and only the EPL that head dims up to 256 need.
  auto with_tile = [&](auto epl) {
    constexpr int kEpl = decltype(epl)::value, kW = kAttentionTile;
    if constexpr (attention_tile_used<A>(kW / 8, kEpl))
      if (tile == kW / 8)
        return launch(attention_kernel<T, kEpl, kW / 8>);
    if constexpr (attention_tile_used<A>(kW / 4, kEpl))
      if (tile == kW / 4)
        return launch(attention_kernel<T, kEpl, kW / 4>);
    if constexpr (attention_tile_used<A>(kW / 2, kEpl))
      if (tile == kW / 2)
        return launch(attention_kernel<T, kEpl, kW / 2>);
    launch(attention_kernel<T, kEpl>);
  };
  if (widest <= THUNDER_WARP_SIZE)
    with_tile(std::integral_constant<int, 1>());
  else if (widest <= 2 * THUNDER_WARP_SIZE)
    with_tile(std::integral_constant<int, 2>());
  else if (widest <= 4 * THUNDER_WARP_SIZE)
    with_tile(std::integral_constant<int, 4>());
  else if constexpr (4 * THUNDER_WARP_SIZE < 256) // else unreachable: widest <= 256
    with_tile(std::integral_constant<int, 8>());
  return true;
}

} // namespace THUNDER_GPU_NS

#endif // THUNDER_GPU_NN_H
