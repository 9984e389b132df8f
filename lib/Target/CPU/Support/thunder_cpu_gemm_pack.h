// thunder_cpu_gemm_pack.h: packing for Thunder's fp32 GEMM -- op(B) into
// the panels the microkernels read (per call, or whole at compile time for a
// model's weights), op(A) into the row panels of a block (Panels), and the
// 8 x 8 and 16 x 16 transposes that pack an [n, k] B.
//
// A part of thunder_cpu_gemm.h, which includes it after the constants it
// uses (kNR, kMR, kKC, kMC) and before the microkernels and the driver that
// read what it writes; not a header to include on its own. The layout of
// packed B is described at the top of thunder_cpu_gemm.h.
#ifndef THUNDER_CPU_GEMM_PACK_H
#define THUNDER_CPU_GEMM_PACK_H

namespace thunder_gemm {

/// Floats of packed B for op(B) of k x n.
inline i64 packed_b_floats(i64 k, i64 n) { return (n + kNR - 1) / kNR * kNR * k; }

#if defined(__AVX2__)
/// out[i * ldo + j] = in[j * ldi + i] for an 8 x 8 block.
inline void transpose8(const float *in, i64 ldi, float *out, i64 ldo) {
  __m256 r0 = _mm256_loadu_ps(in), r1 = _mm256_loadu_ps(in + ldi),
         r2 = _mm256_loadu_ps(in + 2 * ldi), r3 = _mm256_loadu_ps(in + 3 * ldi),
         r4 = _mm256_loadu_ps(in + 4 * ldi), r5 = _mm256_loadu_ps(in + 5 * ldi),
         r6 = _mm256_loadu_ps(in + 6 * ldi), r7 = _mm256_loadu_ps(in + 7 * ldi);
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1),
         t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3),
         t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
         t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0)),
         u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2)),
         u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0)),
         u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2)),
         u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0)),
         u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2)),
         u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0)),
         u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  _mm256_storeu_ps(out, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(out + ldo, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(out + 2 * ldo, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(out + 3 * ldo, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(out + 4 * ldo, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(out + 5 * ldo, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(out + 6 * ldo, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(out + 7 * ldo, _mm256_permute2f128_ps(u3, u7, 0x31));
}
#endif

#if defined(__AVX512F__)
/// out[i * ldo + j] = in[j * ldi + i] for a 16 x 16 block: 64 shuffles for
/// 256 floats, where transpose8 takes 24 for 64.
inline void transpose16(const float *in, i64 ldi, float *out, i64 ldo) {
  __m512 r[16], t[16], u[16], v[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i)
    r[i] = _mm512_loadu_ps(in + i * ldi);
#pragma GCC unroll 16
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
#pragma GCC unroll 16
  for (int i = 0; i < 16; i += 4) {
    u[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
#pragma GCC unroll 16
  for (int i = 0; i < 16; i += 8)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      v[i + j] = _mm512_shuffle_f32x4(u[i + j], u[i + 4 + j], 0x88);
      v[i + 4 + j] = _mm512_shuffle_f32x4(u[i + j], u[i + 4 + j], 0xDD);
    }
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    _mm512_storeu_ps(out + j * ldo, _mm512_shuffle_f32x4(v[j], v[8 + j], 0x88));
    _mm512_storeu_ps(out + (j + 8) * ldo, _mm512_shuffle_f32x4(v[j], v[8 + j], 0xDD));
  }
}
#endif

#if defined(__AVX2__)
/// Columns [j, w) of a panel of an [n, k] B (rows `src`, ldb apart, from
/// the panel's first row and column p0) into the panel at dst, in blocks of
/// W columns while whole ones remain: W x W blocks transposed by Transpose,
/// the last kc % W rows element by element. Returns the first column left.
template <int W, void (*Transpose)(const float *, i64, float *, i64)>
inline i64 pack_columns_transposed(const float *src, i64 ldb, i64 kc, i64 j, i64 w,
                                   float *dst) {
  for (; j + W <= w; j += W) {
    const float *rows = src + j * ldb;
    i64 p = 0;
    for (; p + W <= kc; p += W)
      Transpose(rows + p, ldb, dst + p * kNR + j, kNR);
    for (; p < kc; ++p)
      for (int jj = 0; jj < W; ++jj)
        dst[p * kNR + j + jj] = rows[jj * ldb + p];
  }
  return j;
}
#endif

/// Packs op(B) (B is [k, n] row-major with ldb, or [n, k] when tb) columns
/// [c0, c1) and rows [p0, p0 + kc) into panels of kNR with panel stride
/// `panel_stride` floats (k * kNR for a whole packed matrix, kc * kNR for a
/// block) starting at `out` (the panel of c0, which must be a multiple of kNR).
inline void pack_b(const float *b, i64 ldb, bool tb, i64 p0, i64 kc, i64 c0, i64 c1,
                   float *out, i64 panel_stride) {
  if (!tb) {
    // Row by row: each row's columns [c0, c1) are one contiguous read.
    for (i64 p = 0; p < kc; ++p) {
      const float *src = b + (p0 + p) * ldb;
      for (i64 q0 = c0; q0 < c1; q0 += kNR) {
        float *d = out + (q0 - c0) / kNR * panel_stride + p * kNR;
        i64 w = std::min<i64>(kNR, c1 - q0);
        if (w == kNR) {
          std::memcpy(d, src + q0, sizeof(float) * kNR);
        } else {
          for (i64 j = 0; j < w; ++j)
            d[j] = src[q0 + j];
          for (i64 j = w; j < kNR; ++j)
            d[j] = 0.0f;
        }
      }
    }
    return;
  }
  for (i64 q0 = c0; q0 < c1; q0 += kNR) {
    float *dst = out + (q0 - c0) / kNR * panel_stride;
    i64 w = std::min<i64>(kNR, c1 - q0);
    if (w < kNR)
      std::memset(dst, 0, sizeof(float) * kNR * kc);
    i64 j = 0;
#if defined(__AVX512F__)
    j = pack_columns_transposed<16, transpose16>(b + q0 * ldb + p0, ldb, kc, j, w, dst);
#endif
#if defined(__AVX2__)
    // 8 x 8 blocks transposed in registers (a scalar loop stores each
    // element to its own cache line: 3-5x slower).
    j = pack_columns_transposed<8, transpose8>(b + q0 * ldb + p0, ldb, kc, j, w, dst);
#endif
    for (; j < w; ++j) {
      const float *src = b + (q0 + j) * ldb + p0;
      for (i64 p = 0; p < kc; ++p)
        dst[p * kNR + j] = src[p];
    }
  }
}

/// Packs the whole op(B) into `out` (packed_b_floats(k, n) floats).
inline void pack_b_full(const float *b, i64 ldb, bool tb, i64 k, i64 n, float *out) {
  pack_b(b, ldb, tb, 0, k, 0, n, out, k * kNR);
}

/// A block of `mc` rows of A in panels: as few as kMR allows, their rows
/// balanced to within one, the larger panels first. 43 rows on AVX2 are three
/// panels of 6 and five of 5, not seven of 6 and one of 1: the 1-row kernel
/// has two accumulators, too few to hide the FMA latency, and took two
/// thirds of a 6-row panel's time (m = 128 spent 7% of its time there).
struct Panels {
  i64 count, base, extra;
  explicit Panels(i64 mc)
      : count((mc + kMR - 1) / kMR), base(mc / count), extra(mc % count) {}
  /// The first row of panel i, relative to the block.
  i64 start(i64 i) const { return i * base + std::min(i, extra); }
  int rows(i64 i) const { return static_cast<int>(base + (i < extra ? 1 : 0)); }
};

/// Calls f(std::integral_constant<int, R>{}) with R = mr, the rows of a
/// panel (1..kMR), so that each row count runs code compiled for it; false
/// when mr is out of that range.
template <class F>
inline bool with_rows(int mr, F &&f) {
  switch (mr) {
#define THUNDER_GEMM_CASE(R)                                                          \
  case R:                                                                             \
    if constexpr (R <= kMR) {                                                         \
      f(std::integral_constant<int, R>{});                                            \
      return true;                                                                    \
    }                                                                                 \
    return false;
    THUNDER_GEMM_CASE(1)
    THUNDER_GEMM_CASE(2)
    THUNDER_GEMM_CASE(3)
    THUNDER_GEMM_CASE(4)
    THUNDER_GEMM_CASE(5)
    THUNDER_GEMM_CASE(6)
    THUNDER_GEMM_CASE(7)
    THUNDER_GEMM_CASE(8)
    THUNDER_GEMM_CASE(9)
    THUNDER_GEMM_CASE(10)
    THUNDER_GEMM_CASE(11)
    THUNDER_GEMM_CASE(12)
    THUNDER_GEMM_CASE(13)
    THUNDER_GEMM_CASE(14)
#undef THUNDER_GEMM_CASE
  default:
    return false;
  }
}

/// One panel of MR rows of a row-major A, cols [0, kc): MR row streams in,
/// one sequential stream out (dst[p * MR + r] = rows[r][p]).
template <int MR>
inline void pack_a_rows(const float *a, i64 lda, i64 kc, float *__restrict dst) {
  const float *rows[MR];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
    rows[r] = a + r * lda;
  for (i64 p = 0; p < kc; ++p) {
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
      dst[p * MR + r] = rows[r][p];
  }
}

/// Packs op(A) rows [r0, r0 + mc), cols [p0, p0 + kc) into the block's
/// Panels, k-major: panel i, of mr rows from row s = start(i), at
/// out[s * kc + p * mr + r].
inline void pack_a(const float *a, i64 lda, bool ta, i64 r0, i64 mc, i64 p0, i64 kc,
                   float *out) {
  const Panels panels(mc);
  for (i64 i = 0; i < panels.count; ++i) {
    const i64 i0 = panels.start(i);
    const int mr = panels.rows(i);
    float *dst = out + i0 * kc;
    if (ta) {
      for (i64 p = 0; p < kc; ++p) {
        const float *src = a + (p0 + p) * lda + r0 + i0;
        for (int r = 0; r < mr; ++r)
          dst[p * mr + r] = src[r];
      }
      continue;
    }
    // A fixed row count per panel (balanced panels have any count up to
    // kMR; a per-row loop storing with stride mr is 2-3x slower).
    const float *src = a + (r0 + i0) * lda + p0;
    bool packed = with_rows(mr, [&](auto rows) {
      pack_a_rows<decltype(rows)::value>(src, lda, kc, dst);
    });
    if (!packed) // (not reached: panels have 1..kMR rows)
      for (int r = 0; r < mr; ++r)
        for (i64 p = 0; p < kc; ++p)
          dst[p * mr + r] = src[r * lda + p];
  }
}

/// Row blocks of op(A) for sgemm: at most kMC rows each, balanced (m = 128:
/// two of 64, not 112 + 16, whose small block runs narrow microkernels).
inline i64 row_block_rows(i64 m) {
  i64 row_blocks = (m + kMC - 1) / kMC;
  return (m + row_blocks - 1) / row_blocks;
}

/// Item j of packing all of op(A) [m, k] once for sgemm's threads (row block
/// j / kblocks, kc block j % kblocks): row block [r0, r1)'s kc block at p0
/// lies at out + r0 * k + p0 * (r1 - r0), as pack_a writes it.
inline void pack_a_item(const float *a, i64 lda, bool ta, i64 m, i64 k, i64 j, float *out) {
  const i64 mc = row_block_rows(m), kblocks = (k + kKC - 1) / kKC;
  i64 r0 = j / kblocks * mc, r1 = std::min(m, r0 + mc), p0 = j % kblocks * kKC;
  pack_a(a, lda, ta, r0, r1 - r0, p0, std::min(kKC, k - p0), out + r0 * k + p0 * (r1 - r0));
}

/// All of a row-major A [m, k] packed as sgemm's threads share it (m * k
/// floats at `out`): for an A that does not change between calls (a
/// convolution's constant filter), packed once and handed to sgemm as
/// `packed_a`. The layout depends on this instruction set's kMR, so it is
/// made at run time by the code that reads it.
inline void pack_a_once(const float *a, i64 m, i64 k, float *out) {
  if (m <= 0 || k <= 0)
    return;
  const i64 mc = row_block_rows(m), items = (m + mc - 1) / mc * ((k + kKC - 1) / kKC);
  for (i64 j = 0; j < items; ++j)
    pack_a_item(a, k, false, m, k, j, out);
}

} // namespace thunder_gemm

#endif // THUNDER_CPU_GEMM_PACK_H
