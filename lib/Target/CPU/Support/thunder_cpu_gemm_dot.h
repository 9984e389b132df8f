// thunder_cpu_gemm_dot.h: the dot-product path of Thunder's fp32 GEMM, for
// nn.Linear's [n, k] weight read in place (thunder.compile's libraries read
// the module's tensors) over few rows of A.
//
// A part of thunder_cpu_gemm.h, which includes it where the pieces it uses
// are defined (the constants, thread_buffer) and calls dot_gemm from sgemm;
// not a header to include on its own. With AVX2+FMA or AVX-512 only: it
// defines THUNDER_GEMM_HAS_DOT when it defines dot_gemm.
#ifndef THUNDER_CPU_GEMM_DOT_H
#define THUNDER_CPU_GEMM_DOT_H

namespace thunder_gemm {

//===--------------------------------------------------------------------===//
// nn.Linear's [n, k] weight read in place: dot products
//===--------------------------------------------------------------------===//

/// Rows of A up to which sgemm runs an unpacked [n, k] B as dot products
/// rather than packing it per call (nn.Linear's weight as the module holds
/// it: thunder.compile's library reads the module's tensors). Each B row is
/// read from memory once per kc block, sequentially, and then from L1 by
/// every group of rows; the packing path would first copy it, transposing,
/// in a pass that waits on memory. With AVX-512, up to 64 rows: on an Intel
/// Xeon (two 512-bit FMA ports) packing per call read 1.1-1.4x of the dot
/// products at m = 96-128 (tools/bench/gemm_ab.py --b nt, cold and warm,
/// 2026-12-06), and mixed at 64 (0.87-1.19x); on Zen 4 the two had read
/// within 1-4% of each other at m = 128. With AVX2 (the same Xeon) the dot
/// products stay ahead at m = 96-128 (packing 0.81-1.03x).
#if defined(__AVX512F__)
constexpr i64 kDotRows = 64;
#else
constexpr i64 kDotRows = 128;
#endif
/// Beyond this many rows, only for k of at least kDotMinDepth and a block of
/// kDotBlock columns for each thread: shorter dot products spend about as
/// long reducing as multiplying (one thread, against packing: 0.78x at
/// m = 128, k = 64, attention's scores; 0.91x at k = 128, 0.95-0.98x at 256),
/// and the packing path splits rows among threads too.
constexpr i64 kDotFewRows = 8, kDotMinDepth = 512, kDotBlock = 64;
/// Floats of A (m x kc) that stay in L2 while a block of columns runs over
/// them: k is split into blocks of kc where m k is larger.
constexpr i64 kDotAFloats = 96 * 1024;
/// And into blocks of at most this many: a register tile's rows (kDotMR of A,
/// kDotCols of B: 32 KiB at 1024) then stay in L1 while it runs, where whole
/// rows of k = 4096 (128 KiB) came from L2 on every step. Against no such
/// limit (tools/bench/gemm_ab.py --b nt, 2026-12-06, Intel Xeon, AVX-512):
/// 1.02-1.16x at 16 x 4096 x 4096, 1.0-1.15x at m = 32, 1.0-1.05x at
/// 128 x 768 x 3072; AVX2 0.94-1.06x. (512: 0.93-0.95x at 128 x 768 x 3072.)
/// The MLP at batch 16 with its weights in place (thunder-run, alternating):
/// 4.1 -> 3.6 ms, against 3.1 packed.
constexpr i64 kDotMaxDepth = 1024;

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#if defined(__AVX512F__)
using dvec = __m512;
constexpr int kDotWidth = 16;
/// Rows of A per register tile (times kDotCols rows of B): 4 x 4
/// accumulators, 4 A vectors and a B vector in registers.
constexpr int kDotMR = 4;
inline dvec dzero() { return _mm512_setzero_ps(); }
inline dvec dload(const float *p) { return _mm512_loadu_ps(p); }
/// The first `rest` (< kDotWidth) floats at p, zeros after them (nothing
/// past them is read).
inline dvec dload_part(const float *p, int rest) {
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << rest) - 1), p);
}
inline dvec dfma(dvec a, dvec b, dvec c) { return _mm512_fmadd_ps(a, b, c); }
inline float dsum(dvec v) { return _mm512_reduce_add_ps(v); }
inline __m256 dhalves(dvec v) {
  return _mm256_add_ps(_mm512_castps512_ps256(v),
                       _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}
#else
using dvec = __m256;
constexpr int kDotWidth = 8;
constexpr int kDotMR = 3;
inline dvec dzero() { return _mm256_setzero_ps(); }
inline dvec dload(const float *p) { return _mm256_loadu_ps(p); }
inline dvec dload_part(const float *p, int rest) {
  alignas(32) static const int32_t kLanes[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                 0,  0,  0,  0,  0,  0,  0,  0};
  return _mm256_maskload_ps(
      p, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(kLanes + 8 - rest)));
}
inline dvec dfma(dvec a, dvec b, dvec c) { return _mm256_fmadd_ps(a, b, c); }
inline float dsum(dvec v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline __m256 dhalves(dvec v) { return v; }
#endif
/// Rows of B per register tile.
constexpr int kDotCols = 4;

/// The sums of four accumulators, in order: one reduction for a tile row
/// (a horizontal sum each took a quarter of the tile's time at k = 768).
inline __m128 dsum4(dvec a0, dvec a1, dvec a2, dvec a3) {
  __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(dhalves(a0), dhalves(a1)),
                            _mm256_hadd_ps(dhalves(a2), dhalves(a3)));
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

/// Keeps v in a register: GCC would otherwise fold its load into each FMA
/// that uses it (an A vector loaded 4 times, a B vector 4 times: twice the
/// loads of the tile's FMAs, 0.4-0.7x).
inline void in_register(dvec &v) { asm("" : "+v"(v)); }

/// c[i, j] (=|+ beta *) sum_p a[i, p] b[j, p] for MR rows of A and NJ rows
/// of B: MR x NJ vector accumulators over k, each B row read sequentially
/// (the access a weight streamed from memory wants); a last partial vector
/// of k is loaded masked. Each step also prefetches a line of each of
/// `ahead_rows` rows of B from `ahead` on (ldb apart), the rows the next
/// tiles read.
template <int MR, int NJ>
inline void dot_tile(i64 k, const float *a, i64 lda, const float *b, i64 ldb, float *c,
                     i64 ldc, float beta, const float *ahead = nullptr, int ahead_rows = 0) {
  dvec acc[MR][NJ];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NJ; ++j)
      acc[i][j] = dzero();
  auto step = [&](i64 p, auto load) __attribute__((always_inline)) {
    for (int r = 0; r < ahead_rows; ++r)
      _mm_prefetch(reinterpret_cast<const char *>(ahead + r * ldb + p), _MM_HINT_T1);
    dvec av[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      av[i] = load(a + i * lda + p);
      in_register(av[i]);
    }
#pragma GCC unroll 4
    for (int j = 0; j < NJ; ++j) {
      dvec bv = load(b + j * ldb + p);
      in_register(bv);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i)
        acc[i][j] = dfma(av[i], bv, acc[i][j]);
    }
  };
  i64 p = 0;
  for (; p + kDotWidth <= k; p += kDotWidth)
    step(p, [](const float *q) __attribute__((always_inline)) { return dload(q); });
  if (p < k) {
    const int rest = static_cast<int>(k - p);
    step(p, [rest](const float *q) __attribute__((always_inline)) {
      return dload_part(q, rest);
    });
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    float *out = c + i * ldc;
    if constexpr (NJ == 4) {
      __m128 s = dsum4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
      if (beta != 0.0f)
        s = _mm_add_ps(s, _mm_mul_ps(_mm_set1_ps(beta), _mm_loadu_ps(out)));
      _mm_storeu_ps(out, s);
    } else {
      for (int j = 0; j < NJ; ++j) {
        const float s = dsum(acc[i][j]);
        out[j] = beta != 0.0f ? s + beta * out[j] : s;
      }
    }
  }
}

/// dot_tile over up to kDotMR rows (`rows` of them) and NJ rows of B.
template <int NJ, int R = kDotMR>
inline void dot_rows(int rows, i64 k, const float *a, i64 lda, const float *b, i64 ldb,
                     float *c, i64 ldc, float beta, const float *ahead = nullptr,
                     int ahead_rows = 0) {
  if constexpr (R > 1) {
    if (rows < R)
      return dot_rows<NJ, R - 1>(rows, k, a, lda, b, ldb, c, ldc, beta, ahead, ahead_rows);
  }
  dot_tile<R, NJ>(k, a, lda, b, ldb, c, ldc, beta, ahead, ahead_rows);
}

/// C[m, n] = A [m, k] @ B^T for B [n, k] (ldb), m <= kDotRows, then epi on
/// column blocks: threads split the columns. Rows of A a multiple of 4 KiB
/// apart (k = 1024 or 3072) are first copied, by all threads, into kc blocks
/// of rows kc + 16 floats apart: read in place they shared L1 sets with the
/// B rows they met (0.85-0.9x). Then per block of columns and kc block (k
/// split by kDotAFloats and kDotMaxDepth): each group of kDotCols B rows (in
/// L1 after its first group of rows) meets every group of kDotMR rows of A
/// (m x kc floats, in L2).
template <class Epi>
void dot_gemm(i64 m, i64 n, i64 k, const float *a, i64 lda, const float *b, i64 ldb,
              float *c, i64 ldc, float beta, const Epi &epi, int threads) {
  constexpr int NJ = kDotCols;
  constexpr i64 kBlock = kDotBlock; // columns per epilogue call
  const i64 kblocks = std::max<i64>({1, (m * k + kDotAFloats - 1) / kDotAFloats,
                                     (k + kDotMaxDepth - 1) / kDotMaxDepth});
  const i64 kc = ((k + kblocks - 1) / kblocks + kDotWidth - 1) / kDotWidth * kDotWidth;
  const bool copy_a = m > 1 && lda % 1024 == 0;
  // Rows of the next B group each row group prefetches.
  const i64 groups = (m + kDotMR - 1) / kDotMR, ahead_share = (NJ + groups - 1) / groups;
  const i64 lda_packed = copy_a ? kc + 16 : lda;
  const i64 blocks = (n + kBlock - 1) / kBlock;
  const int nt = static_cast<int>(std::min<i64>(threads, blocks));
  const bool parallel = nt > 1 && m * n * k > 32768;
  // Copied, block pb of row r at (pb * m + r) * lda_packed.
  float *ap = copy_a ? thread_buffer(2, static_cast<size_t>(kblocks * m * lda_packed)) : nullptr;
#pragma omp parallel num_threads(nt) if (parallel)
  {
    if (copy_a)
#pragma omp for schedule(static)
    for (i64 r = 0; r < m; ++r)
      for (i64 pb = 0; pb * kc < k; ++pb)
        std::memcpy(ap + (pb * m + r) * lda_packed, a + r * lda + pb * kc,
                    static_cast<size_t>(std::min(kc, k - pb * kc)) * sizeof(float));
#pragma omp for schedule(static)
    for (i64 blk = 0; blk < blocks; ++blk) {
      const i64 c0 = blk * kBlock, c1 = std::min(n, c0 + kBlock);
      for (i64 p0 = 0; p0 < k; p0 += kc) {
        const i64 kcur = std::min(kc, k - p0);
        const float bt = p0 == 0 ? beta : 1.0f;
        const float *ablock = copy_a ? ap + p0 / kc * m * lda_packed : a + p0;
        for (i64 j = c0; j < c1; j += NJ) {
          const int nj = static_cast<int>(std::min<i64>(NJ, c1 - j));
          const float *bj = b + j * ldb + p0;
          // The next group's B rows, [j + NJ, + NJ) x [p0, + kcur), are
          // prefetched while this group runs, each row group taking a share
          // of them: only the first row group reads B from memory, which
          // would otherwise sit idle during the others.
          const int next_rows = static_cast<int>(std::clamp<i64>(n - j - NJ, 0, NJ));
          for (i64 i0 = 0, g = 0; i0 < m; i0 += kDotMR, ++g) {
            const int rows = static_cast<int>(std::min<i64>(kDotMR, m - i0));
            const float *ai = ablock + i0 * lda_packed;
            float *ci = c + i0 * ldc + j;
            const int from = static_cast<int>(std::min<i64>(next_rows, g * ahead_share));
            const int ahead_rows =
                static_cast<int>(std::min<i64>(next_rows, (g + 1) * ahead_share)) - from;
            const float *ahead = ahead_rows > 0 ? bj + (NJ + from) * ldb : nullptr;
            if (nj == NJ)
              dot_rows<NJ>(rows, kcur, ai, lda_packed, bj, ldb, ci, ldc, bt, ahead, ahead_rows);
            else
              for (int jj = 0; jj < nj; ++jj)
                dot_rows<1>(rows, kcur, ai, lda_packed, bj + jj * ldb, ldb, ci + jj, ldc, bt);
          }
        }
      }
      epi(0, m, c0, c1);
    }
  }
}
#define THUNDER_GEMM_HAS_DOT 1
#endif

} // namespace thunder_gemm

#endif // THUNDER_CPU_GEMM_DOT_H
