// thunder_cpu_attention.h: blocked flash-style fp32 attention of Thunder's CPU
// support library (included at the end of thunder_cpu.h).
//
// Per (batch, head) and query tile of kQueryTile rows, the keys are walked in
// tiles of kKeyTile: the scores of the tile (kQueryTile x kKeyTile floats,
// L1/L2-resident) come from a register-blocked microkernel over K^T packed
// once per call, the masks (causal, additive, boolean) apply to the tile, an
// online softmax (running max and sum per row) rescales the output
// accumulator, and a second microkernel adds P @ V. Nothing of size L x S is
// ever materialized. The microkernels use GCC vector extensions: 16 lanes
// (zmm) where the build has AVX-512, 8 (ymm) otherwise; the compiler lowers
// them to whatever the -march allows, so the same code is the portable path.
#ifndef THUNDER_CPU_ATTENTION_H
#define THUNDER_CPU_ATTENTION_H

#include "thunder_cpu_math.h"

namespace thunder_cpu {

/// exp(x) in float for the softmax (x <= 0 there): thunder_cpu_math.h's,
/// which vectorizes inside `omp simd` loops and gives exactly 0 for masked
/// -inf scores. Always inlined, as thunder_math's are: GCC left a plain
/// `inline` one out of line in flash_attention, a scalar call per score
/// (4.5% of Llama's samples at batch 1, the softmax loop not vectorized).
THUNDER_MATH_INLINE float attn_expf(float x) { return thunder_math::exp(x); }

namespace attn {

using simd::kLanes;
using simd::load;
using simd::splat;
using simd::store;
using simd::vf;

/// Rows and vectors of the microkernels' register block: 4 x 4 zmm (16
/// accumulators of 32 registers) with AVX-512, 6 x 2 ymm (12 of 16)
/// otherwise (xmm without AVX). AVX2's 4 x 2 had 8 accumulators, too few to
/// hide the FMA latency: 6 x 2 runs ViT's attention (12 heads, 197 tokens)
/// 1.04-1.15x faster. Every loop over a register block is unrolled (`GCC
/// unroll 8`): at 4, GCC kept the 6-row loops rolled with the accumulators
/// on the stack, 0.79x.
#if defined(__AVX512F__)
constexpr int kRows = 4;
constexpr int kVecs = 4;
constexpr int kQueryTile = 32; // multiple of kRows
#else
constexpr int kRows = 6;
constexpr int kVecs = 2;
constexpr int kQueryTile = 48; // multiple of kRows
#endif
constexpr int kKeyTile = 128; // multiple of kLanes * kVecs


/// s[r][0 .. NV*kLanes) = scale * q[r] . kt[:, col] for MR query rows (ld
/// `ldq`) against NV vectors of packed K^T columns (row stride kKeyTile).
template <int MR, int NV>
inline void qk_block(const float *q, int64_t ldq, const float *kt, int64_t e,
                     float scale, float *s) {
  vf acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n)
      acc[r][n] = vf{};
  for (int64_t p = 0; p < e; ++p) {
    vf b[NV];
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n)
      b[n] = load(kt + p * kKeyTile + n * kLanes);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      vf a = splat(q[r * ldq + p]);
#pragma GCC unroll 8
      for (int n = 0; n < NV; ++n)
        acc[r][n] += a * b[n];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n)
      store(s + r * kKeyTile + n * kLanes, acc[r][n] * scale);
}

/// o[r][0 .. NV*kLanes) += p[r][0 .. kt) @ v[0 .. kt)[cols] for MR rows (p
/// with row stride kKeyTile, o with `ldo`, v with `ldv`).
template <int MR, int NV>
inline void pv_block(const float *p, const float *v, int64_t ldv, int64_t kt,
                     float *o, int64_t ldo) {
  vf acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n)
      acc[r][n] = load(o + r * ldo + n * kLanes);
  for (int64_t j = 0; j < kt; ++j) {
    vf b[NV];
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n)
      b[n] = load(v + j * ldv + n * kLanes);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      vf a = splat(p[r * kKeyTile + j]);
#pragma GCC unroll 8
      for (int n = 0; n < NV; ++n)
        acc[r][n] += a * b[n];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n)
      store(o + r * ldo + n * kLanes, acc[r][n]);
}

/// The register blocks over a rows x vecs region, with the partial blocks at
/// its edges (rows < kRows, vecs < kVecs) as smaller instantiations.
template <int MR, class F> inline void by_vecs(int64_t vecs, F &&f) {
  int64_t n = 0;
  for (; n + kVecs <= vecs; n += kVecs)
    f(std::integral_constant<int, MR>{}, std::integral_constant<int, kVecs>{}, n);
  switch (vecs - n) {
  case 1: f(std::integral_constant<int, MR>{}, std::integral_constant<int, 1>{}, n); break;
#if defined(__AVX512F__)
  case 2: f(std::integral_constant<int, MR>{}, std::integral_constant<int, 2>{}, n); break;
  case 3: f(std::integral_constant<int, MR>{}, std::integral_constant<int, 3>{}, n); break;
#endif
  default: break;
  }
}
template <class F> inline void blocks(int64_t rows, int64_t vecs, F &&f) {
  int64_t r = 0;
  for (; r + kRows <= rows; r += kRows)
    by_vecs<kRows>(vecs, [&](auto mr, auto nv, int64_t n) { f(mr, nv, r, n); });
  switch (rows - r) {
  case 1: by_vecs<1>(vecs, [&](auto mr, auto nv, int64_t n) { f(mr, nv, r, n); }); break;
  case 2: by_vecs<2>(vecs, [&](auto mr, auto nv, int64_t n) { f(mr, nv, r, n); }); break;
  case 3: by_vecs<3>(vecs, [&](auto mr, auto nv, int64_t n) { f(mr, nv, r, n); }); break;
  case 4: by_vecs<4>(vecs, [&](auto mr, auto nv, int64_t n) { f(mr, nv, r, n); }); break;
  case 5: by_vecs<5>(vecs, [&](auto mr, auto nv, int64_t n) { f(mr, nv, r, n); }); break;
  default: break;
  }
  static_assert(kRows <= 6, "blocks() handles remainders of up to 5 rows");
}

/// A per-call scratch buffer of the calling thread, kept across calls so a
/// run allocates nothing once warm.
inline float *scratch(int slot, size_t floats) {
  static thread_local std::vector<float> buffers[2];
  if (buffers[slot].size() < floats)
    buffers[slot].resize(floats);
  return buffers[slot].data();
}

} // namespace attn

/// Flash-style fp32 attention: out[b] = softmax(scale * q[b] k[b/g]^T + mask)
/// v[b/g] for b < batch, q [L, E], k [S, E], v [S, Ev], out [L, Ev] per
/// batch (all dense), g = kv_group query heads per key/value head (GQA; 1 when
/// key and value have the query's batch). `causal` masks key j > query i
/// (PyTorch's top-left alignment). The optional mask (additive floats `add`,
/// or booleans `keep` where false masks) is read at mask_offset(b) + i * mrow
/// + j * mcol (strides 0 where it broadcasts). A row whose keys are all
/// masked yields zeros. Parallel over (batch, query tile) with OpenMP's
/// current thread count.
template <class MaskOffset>
void flash_attention(const float *q, const float *k, const float *v, float *out,
                     int64_t batch, int64_t l, int64_t s, int64_t e, int64_t ev,
                     double scale_d, bool causal, int64_t kv_group,
                     const float *add, const bool *keep, int64_t mrow,
                     int64_t mcol, MaskOffset &&mask_offset) {
  using namespace attn;
  if (batch <= 0 || l <= 0 || ev <= 0)
    return;
  const float scale = static_cast<float>(scale_d);
  const float ninf = -std::numeric_limits<float>::infinity();
  if (kv_group < 1)
    kv_group = 1;
  const int64_t kv_batch = (batch + kv_group - 1) / kv_group;
  const int64_t key_tiles = (s + kKeyTile - 1) / kKeyTile;
  // V's columns in whole vectors: read in place when Ev is a multiple of the
  // lane count, else packed into zero-padded rows.
  const int64_t ev_vecs = (ev + kLanes - 1) / kLanes, evp = ev_vecs * kLanes;
  const bool pack_v = evp != ev;
  // Phase 1: K^T of each (kv head, key tile), [E][kKeyTile] with zero columns
  // past S; and V padded where needed. Shared by all query tiles.
  const size_t kt_size = static_cast<size_t>(e * kKeyTile);
  float *kpack = scratch(0, static_cast<size_t>(kv_batch * key_tiles) * kt_size + 1);
  float *vpack = pack_v ? scratch(1, static_cast<size_t>(kv_batch * s * evp) + 1) : nullptr;
#pragma omp parallel for collapse(2) if (kv_batch * s * (e + ev) > 32768)
  for (int64_t b = 0; b < kv_batch; ++b)
    for (int64_t t = 0; t < key_tiles; ++t) {
      float *dst = kpack + static_cast<size_t>(b * key_tiles + t) * kt_size;
      const int64_t k0 = t * kKeyTile, kt = std::min<int64_t>(kKeyTile, s - k0);
      const float *src = k + (b * s + k0) * e;
      for (int64_t p = 0; p < e; ++p) {
        float *row = dst + p * kKeyTile;
        for (int64_t j = 0; j < kt; ++j)
          row[j] = src[j * e + p];
        for (int64_t j = kt; j < kKeyTile; ++j)
          row[j] = 0.0f;
      }
      if (pack_v)
        for (int64_t j = 0; j < kt; ++j) {
          const float *vs = v + (b * s + k0 + j) * ev;
          float *vd = vpack + (b * s + k0 + j) * evp;
          std::copy(vs, vs + ev, vd);
          std::fill(vd + ev, vd + evp, 0.0f);
        }
    }
  const int64_t q_tiles = (l + kQueryTile - 1) / kQueryTile;
  // Phase 2: one task per (batch, query tile), largest (causal: last) tiles
  // first through the dynamic schedule.
#pragma omp parallel if (batch * l * s * (e + ev) > 32768)
  {
    alignas(64) float sc[kQueryTile * kKeyTile];
    std::vector<float> obuf(static_cast<size_t>(kQueryTile * evp));
    float *o = obuf.data();
    float m[kQueryTile], sum[kQueryTile], corr[kQueryTile];
#pragma omp for collapse(2) schedule(dynamic)
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t qt_rev = 0; qt_rev < q_tiles; ++qt_rev) {
        const int64_t qt_i = q_tiles - 1 - qt_rev;
        const int64_t q0 = qt_i * kQueryTile, qt = std::min<int64_t>(kQueryTile, l - q0);
        const int64_t kvb = b / kv_group;
        const float *qb = q + (b * l + q0) * e;
        const float *vb = pack_v ? vpack + kvb * s * evp : v + kvb * s * ev;
        const int64_t moff = (add || keep) ? mask_offset(b) : 0;
        std::fill(o, o + qt * evp, 0.0f);
        for (int64_t i = 0; i < qt; ++i) {
          m[i] = ninf;
          sum[i] = 0.0f;
        }
        // Causal: keys past the tile's last row are masked for every row.
        const int64_t s_end = causal ? std::min<int64_t>(s, q0 + qt) : s;
        for (int64_t k0 = 0; k0 < s_end; k0 += kKeyTile) {
          const int64_t kt = std::min<int64_t>(kKeyTile, s_end - k0);
          const int64_t kvecs = (kt + kLanes - 1) / kLanes;
          const float *ktile = kpack + static_cast<size_t>(kvb * key_tiles + k0 / kKeyTile) * kt_size;
          blocks(qt, kvecs, [&](auto mr, auto nv, int64_t r, int64_t n) {
            qk_block<decltype(mr)::value, decltype(nv)::value>(
                qb + r * e, e, ktile + n * kLanes, e, scale, sc + r * kKeyTile + n * kLanes);
          });
          const int64_t kw = kvecs * kLanes; // scored width, past kt: padding
          for (int64_t i = 0; i < qt; ++i) {
            float *row = sc + i * kKeyTile;
            const int64_t gi = q0 + i;
            for (int64_t j = kt; j < kw; ++j)
              row[j] = ninf;
            if (causal)
              for (int64_t j = std::max<int64_t>(0, gi + 1 - k0); j < kt; ++j)
                row[j] = ninf;
            if (add) {
              const float *mr_ = add + moff + gi * mrow + k0 * mcol;
              if (mcol == 1) {
#pragma omp simd
                for (int64_t j = 0; j < kt; ++j)
                  row[j] += mr_[j];
              } else {
                for (int64_t j = 0; j < kt; ++j)
                  row[j] += mr_[j * mcol];
              }
            } else if (keep) {
              const bool *mr_ = keep + moff + gi * mrow + k0 * mcol;
              for (int64_t j = 0; j < kt; ++j)
                row[j] = mr_[j * mcol] ? row[j] : ninf;
            }
            float mx = ninf;
#pragma omp simd reduction(max : mx)
            for (int64_t j = 0; j < kw; ++j)
              mx = std::max(mx, row[j]);
            const float mnew = std::max(m[i], mx);
            if (mnew == ninf) { // every key so far masked: nothing to add
              std::fill(row, row + kw, 0.0f);
              corr[i] = 1.0f;
              continue;
            }
            float ts = 0.0f;
#pragma omp simd reduction(+ : ts)
            for (int64_t j = 0; j < kw; ++j) {
              float pj = attn_expf(row[j] - mnew);
              row[j] = pj;
              ts += pj;
            }
            corr[i] = attn_expf(m[i] - mnew);
            sum[i] = sum[i] * corr[i] + ts;
            m[i] = mnew;
          }
          for (int64_t i = 0; i < qt; ++i)
            if (corr[i] != 1.0f) {
              float *orow = o + i * evp;
              const float c = corr[i];
#pragma omp simd
              for (int64_t c_ = 0; c_ < evp; ++c_)
                orow[c_] *= c;
            }
          const float *vt = vb + k0 * (pack_v ? evp : ev);
          const int64_t ldv = pack_v ? evp : ev;
          blocks(qt, ev_vecs, [&](auto mr, auto nv, int64_t r, int64_t n) {
            pv_block<decltype(mr)::value, decltype(nv)::value>(
                sc + r * kKeyTile, vt + n * kLanes, ldv, kt, o + r * evp + n * kLanes, evp);
          });
        }
        for (int64_t i = 0; i < qt; ++i) {
          float *dst = out + (b * l + q0 + i) * ev;
          const float inv = sum[i] > 0.0f ? 1.0f / sum[i] : 0.0f;
          const float *orow = o + i * evp;
#pragma omp simd
          for (int64_t c_ = 0; c_ < ev; ++c_)
            dst[c_] = orow[c_] * inv;
        }
      }
  }
}

} // namespace thunder_cpu

#endif // THUNDER_CPU_ATTENTION_H
