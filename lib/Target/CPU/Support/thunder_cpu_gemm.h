// thunder_cpu_gemm.h: Thunder's own packed fp32 GEMM with a fused epilogue.
//
// C[m, n] = op(A)[m, k] @ op(B)[k, n] (+ beta * C), then an epilogue over
// each finished register tile while it is still in L1. Included by
// thunder_cpu.h; self-contained so tests and tools/bench compile it alone.
//
// Layout of packed B (ISA-independent, so weights packed at compile time by
// the compiler serve every kernel the artifact carries): columns in panels of
// kNR = 32; panel q holds op(B)[0..k)[32q .. 32q+32) k-major, i.e.
//   packed[(q * k + p) * 32 + j] = op(B)[p][32 q + j],
// zero-padded past n. kc-blocks of a panel are contiguous (offset p0 * 32).
// lib/Target/CPU/CPUBackend.cpp writes the same layout (packWeightPanels).
//
// Microkernels, chosen by the instruction set this unit is compiled for:
// AVX-512F: MR x 32 with 2 zmm per row (MR <= 14, 28 accumulators);
// AVX2+FMA: MR x 16 with 2 ymm per row (MR <= 6), run on each half of a
// 32-column panel; otherwise a portable loop nest the compiler vectorizes.
// A is packed per (MC x KC) block into panels of at most MR rows (k-major,
// balanced: Panels).
//
// Compiled once per library: with THUNDER_GEMM_APART set (thunder_cpu_base.h
// sets it to 1 unless it is given; -DTHUNDER_GEMM_APART=0 compiles the driver
// into every kernel again, to measure against), matmul_f32 and the plain
// sgemm call the driver through matmul_f32_apart / sgemm_apart, defined in
// thunder_cpu_gemm.cpp, one unit of each library that has GEMMs (declared in
// thunder_cpu_gemm_api.h, all that a kernel unit includes), with the
// epilogue passed as an EpilogueRef (a function pointer called once per
// finished tile). Kernel units then compile only their epilogue:
// instantiating the driver in each one took 4-10 s of the system compiler
// per unit. Without it (tests, tools/bench) everything here is inline, as
// the templates are.
//
// Packing (pack_b, pack_a, the transposes) is in thunder_cpu_gemm_pack.h,
// and the dot-product path for an unpacked [n, k] B over few rows in
// thunder_cpu_gemm_dot.h; this header includes both.
#ifndef THUNDER_CPU_GEMM_H
#define THUNDER_CPU_GEMM_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include <omp.h>
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "thunder_cpu_gemm_api.h"

namespace thunder_gemm {

/// The packed panel width (columns), shared by every instruction set.
constexpr int kNR = 32;

#if defined(__AVX512F__)
constexpr int kMR = 14;
constexpr const char *kIsa = "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int kMR = 6;
constexpr const char *kIsa = "avx2";
#else
constexpr int kMR = 4;
constexpr const char *kIsa = "portable";
#endif

/// Cache blocking: KC rows of a B panel (32 KC floats) stay in L1 while MC
/// rows of packed A (MC KC floats) stream from L2.
constexpr i64 kKC = 256;
constexpr i64 kMC = kMR * 8;
/// How far ahead (rows of a B panel) the microkernels prefetch B: 16 rows
/// (4 KiB) measured 5-15% faster than 8 rows of one line at m <= 128
/// (tools/bench/gemm_ab.py, docs/performance.md).
constexpr int kPrefetchRows = 16;
/// At most this many column panels per tile: a tile that packs its own rows
/// of A (A too large to share) packs them once per kc block, so wider tiles
/// pack A fewer times.
constexpr i64 kMaxTilePanels = 32;
/// At most this many column panels per tile when the tile packs B itself
/// (kKC x 16 x kNR floats: 512 KiB, in L2 while the row blocks run over it).
constexpr i64 kMaxPackedPanels = 16;
/// A row-major ([k, n]) B that was not packed at compile time (GPT-2's
/// Conv1D weights, read in place from the module) is read in place by the
/// microkernel, its panels strided by ldb. Without AVX-512 (AVX2 and the
/// portable kernel), up to kInPlaceRows rows of A, and up to
/// kInPlaceUnaliasedRows where its rows are not a multiple of 4 KiB
/// apart (rows that are fall into the same few cache sets, and a panel's 256
/// rows thrash L2 for every row panel that reads them). Measured against
/// packing it per call (tools/bench/gemm_ab.py --cold --b nn, 2026-12-05),
/// AVX2: 1.4-1.9x at m = 8, 1.3-1.6x at m = 16, 1.0-1.4x at m = 32, 1.0-1.2x
/// at m = 64-128 for ldb = 768, 1000 or 2304, but 0.8x at m = 64-128 for
/// ldb = 3072 or 4096; from m = 256, 0.95-1.15x. AVX-512 (Zen 4), against
/// packing it per call with its next kc block prefetched: 1.15-1.18x at
/// m = 32, 1.05-1.11x at m = 64, 1.07-1.15x at m = 128 (ldb 768 or 2304),
/// and with the next panel prefetched (below) 1.3-1.6x at m = 4-16.
/// With AVX-512 such a B is read in place at every m and ldb: its microkernel
/// reads a panel's row (32 floats) once per panel of up to 14 rows of A, and
/// the aliasing that costs AVX2 (6 x 16, each half-panel read on its own)
/// did not show on Zen 4. (On an Intel Xeon it did, in the calls that read a
/// panel again: copies_b_in_place, below, now has the first call copy it.)
/// Against packing per call (same command, 2026-12-06, Zen 4): ldb = 3072
/// or 4096 at m = 32-128 1.03-1.10x, m = 256-1024 1.00-1.17x, m = 2048-4096
/// 1.04-1.17x; ldb = 768 or 2304 at m = 192-2048 1.01-1.17x.
constexpr i64 kInPlaceRows = 32, kInPlaceUnaliasedRows = 128;
/// Up to this many rows of A, a B read in place is streamed once per row
/// panel or two, and the tile's first row block prefetches the next panel's
/// lines as it runs (Ahead, as for prepacked weights). Against in place
/// alone: AVX-512 1.35-1.55x at m = 4-16 (0.98-1.04x at m = 32-128); AVX2
/// 1.1-1.4x at m = 4-8, 0.94-1.13x at m = 12-24, where B is read by more
/// row panels and the prefetches compete. (The portable kernel ignores it.)
/// With AVX-512 at every m, since the tile's later calls read copy_b's copy:
/// on an Intel Xeon 1.02-1.16x with B cold at m = 32-1024 (a model's
/// weights, beyond the caches), 0.90-0.98x warm; GPT-2 at batch 1 with
/// --pack-weights=false, alternating thunder-run: 0.88-0.99x of the time
/// per round (2026-12-06).
#if defined(__AVX512F__)
constexpr i64 kInPlaceAheadRows = i64(1) << 40;
#else
constexpr i64 kInPlaceAheadRows = 8;
#endif
inline bool reads_b_in_place(i64 m, i64 ldb) {
#if defined(__AVX512F__)
  (void)m, (void)ldb;
  return true;
#else
  return m <= kInPlaceRows || (m <= kInPlaceUnaliasedRows && ldb % 1024 != 0);
#endif
}
/// Whether a B read in place by `rows` rows of A (a tile's) is copied by its
/// first reader for the others (sgemm's copy_b). Against reading it in place
/// every time (tools/bench/gemm_ab.py --b nn, 2026-12-06, Intel Xeon with
/// AVX-512): rows 4 KiB multiples apart (ldb 3072) 1.17-1.21x at m = 128-512;
/// other ldb 1.04-1.13x from m = 128, 0.92-1.10x at m = 16-32, so not for
/// two panels of rows or fewer. AVX2 (the same machine, -march=x86-64-v3),
/// where each half-panel call reads its B lines again: only for rows 4 KiB
/// multiples apart (1.00-1.14x at m = 24-32; 0.88-0.97x otherwise, the copy
/// taking L1 from a half-panel that fits).
inline bool copies_b_in_place(i64 rows, i64 ldb) {
  const bool aliased = ldb % 1024 == 0;
#if defined(__AVX512F__)
  return rows > (aliased ? kMR : 2 * kMR);
#else
  return aliased && rows > kMR;
#endif
}
/// Up to this many floats of A (4 MiB), sgemm packs A once per call into a
/// buffer all threads read, instead of once per tile (a tile repacks its
/// rows for every column block: m = 128 spent 10-20% of its time there).
constexpr i64 kSharedAFloats = i64(1) << 20;

} // namespace thunder_gemm

// Packing B into panels and A into row panels (pack_b, pack_a, Panels): a
// part of this header, kept in a file of its own.
#include "thunder_cpu_gemm_pack.h"

namespace thunder_gemm {

//===--------------------------------------------------------------------===//
// Microkernels: c[MR x nv] (=|+=) a_panel @ b_panel over kc.
// `first`: the first kc-block, which writes acc + beta * c (beta 0: acc);
// later blocks add. nv: valid columns (the rest are padding). bs: floats
// between B rows (kNR in a packed panel; ldb for a row-major B read in
// place, whose panel then has all kNR columns). rbias (first block only;
// null: none): a value per row the accumulators start from (a
// convolution's bias, whose rows are output channels). ahead: lines of B's
// next block to prefetch meanwhile (AVX2 and AVX-512; the portable kernel
// ignores it). copy (null: none): where the call also writes the kc rows of
// B it reads, kNR floats apart (64-byte aligned; the AVX2 kernel's halves
// write theirs at copy and copy + 16): sgemm's copy_b.
//===--------------------------------------------------------------------===//

/// What a microkernel call prefetches (prefetcht1) while it runs: `lines`
/// 64-byte lines every kAheadSteps k steps, from line `pos` of a stream of
/// `end` lines that starts at `base` (null: none) and is contiguous, or
/// (row_lines > 0) made of rows of row_lines lines `stride` bytes apart. The
/// driver spreads B's next block over the calls before it (spread), so it
/// does not arrive from memory line by line while the first row panel over
/// it waits:
///  - a prepacked panel, the next one (m = 128 read 139-150 GFLOP/s with
///    the weights from memory, 163-173 with them prefetched so; 1.0-1.4x at
///    m = 1-1024; docs/performance.md);
///  - a B packed per call, the rows of its next kc block, read by the
///    packing that follows.
///  - a B read in place by few rows of A, the next panel's rows (ldb apart).
constexpr i64 kAheadSteps = 8;
/// Up to this many rows of A, an [n, k] B packed per call is prefetched too.
/// With AVX-512 at every m: on an Intel Xeon, 1.00-1.10x at m = 128-197 with
/// B cold, 0.99-1.08x warm (tools/bench/gemm_ab.py --b nt, 2026-12-06), and
/// the packing had been 14.5% of BERT's samples at batch 1 with its weights
/// in place. (AVX2, Zen 3-4: 0.90-0.96x at m = 32-128, below.)
#if defined(__AVX512F__)
constexpr i64 kAheadTbRows = i64(1) << 40;
#else
constexpr i64 kAheadTbRows = 16;
#endif
struct Ahead {
  const char *base = nullptr;
  i64 stride = 0, row_lines = 0, pos = 0, end = 0;
  int lines = 0;
  /// Lines a call over kc steps prefetches.
  i64 per_call(i64 kc) const { return (kc + kAheadSteps - 1) / kAheadSteps * lines; }
  /// The same stream from `count` lines further on.
  Ahead skip(i64 count) const {
    Ahead next = *this;
    next.pos += count;
    return next;
  }
  /// The first line of this call and its column in its row; null past the
  /// stream's end.
  const char *start(i64 &col) const {
    if (!base || pos >= end)
      return nullptr;
    if (row_lines <= 0) {
      col = 0;
      return base + pos * 64;
    }
    col = pos % row_lines;
    return base + pos / row_lines * stride + col * 64;
  }
  /// The stream of `total` lines from `base` spread over `calls` calls of
  /// kc steps each.
  static Ahead spread(const float *base, i64 stride, i64 row_lines, i64 total, i64 calls,
                      i64 kc) {
    const i64 chunks = std::max<i64>(1, calls * ((kc + kAheadSteps - 1) / kAheadSteps));
    return {reinterpret_cast<const char *>(base), stride, row_lines, 0, total,
            static_cast<int>((total + chunks - 1) / chunks)};
  }
};

/// The clamp a microkernel applies to its registers before the last kc
/// block's store, when the tile's whole epilogue is one (EpilogueRef's
/// clamp_only): min(max(x, lo), hi), NaN kept, as PyTorch's clamp.
struct Clamp {
  bool on = false;
  float lo = 0.0f, hi = 0.0f;
};
inline Clamp clamp_of(const EpilogueRef &e) { return {e.clamp_only, e.lo, e.hi}; }
/// One value clamped (a comparison with NaN is false: NaN kept).
inline float clamped(float x, const Clamp &cl) {
  return !cl.on ? x : x < cl.lo ? cl.lo : x > cl.hi ? cl.hi : x;
}
template <class Epi>
inline Clamp clamp_of(const Epi &) {
  return {};
}

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
/// A microkernel call's walk over its share of an Ahead stream: `lines`
/// prefetches per chunk of kAheadSteps k steps (issue), row by row.
struct AheadWalk {
  const char *next;
  i64 col = 0, left, wrap, row_lines;
  int lines;
  explicit AheadWalk(const Ahead &ahead)
      : left(ahead.end - ahead.pos), wrap(ahead.stride - ahead.row_lines * 64),
        row_lines(ahead.row_lines), lines(ahead.lines) {
    next = ahead.start(col);
  }
  /// k steps between prefetches: all of kc when there is nothing to fetch.
  i64 chunk(i64 kc) const { return next ? kAheadSteps : kc; }
  void issue() {
    if (!next)
      return;
    for (int l = 0; l < lines && left > 0; ++l, --left) {
      _mm_prefetch(next, _MM_HINT_T1);
      next += 64;
      if (++col == row_lines)
        col = 0, next += wrap;
    }
  }
};
#endif

#if defined(__AVX512F__)
template <int MR>
inline void ukernel(i64 kc, const float *__restrict a, const float *__restrict b, i64 bs,
                    float *__restrict c, i64 ldc, int nv, bool first, float beta,
                    const float *rbias, Ahead ahead = {}, Clamp cl = {},
                    float *__restrict copy = nullptr) {
  __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    acc0[i] = rbias ? _mm512_set1_ps(rbias[i]) : _mm512_setzero_ps();
    acc1[i] = acc0[i];
  }
  // As the AVX2 kernel below: the k loop in chunks, `ahead`'s lines
  // prefetched between them.
  AheadWalk walk(ahead);
  const i64 chunk = walk.chunk(kc);
  auto k_loop = [&](auto copying) {
    for (i64 p0 = 0; p0 < kc; p0 += chunk) {
      walk.issue();
      const i64 p1 = std::min(kc, p0 + chunk);
      for (i64 p = p0; p < p1; ++p) {
        __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
        if constexpr (decltype(copying)::value) {
          _mm512_store_ps(copy, b0);
          _mm512_store_ps(copy + 16, b1);
          copy += kNR;
        }
        // Both cache lines of the B row kPrefetchRows ahead (B streams from
        // L2 or L3 on the first row panel of a tile).
        _mm_prefetch(reinterpret_cast<const char *>(b + kPrefetchRows * bs), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char *>(b + kPrefetchRows * bs + 16), _MM_HINT_T0);
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) {
          __m512 av = _mm512_set1_ps(a[i]);
          acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
          acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
        }
        a += MR;
        b += bs;
      }
    }
  };
  if (copy)
    k_loop(std::true_type{});
  else
    k_loop(std::false_type{});
  __mmask16 m0 = nv >= 16 ? __mmask16(0xffff) : __mmask16((1u << nv) - 1);
  __mmask16 m1 = nv >= 32 ? __mmask16(0xffff)
                 : nv <= 16 ? __mmask16(0)
                            : __mmask16((1u << (nv - 16)) - 1);
  const __m512 vb = _mm512_set1_ps(beta);
  const __m512 vlo = _mm512_set1_ps(cl.lo), vhi = _mm512_set1_ps(cl.hi);
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    float *row = c + i * ldc;
    __m512 x0 = acc0[i], x1 = acc1[i];
    if (!first) {
      x0 = _mm512_add_ps(x0, _mm512_maskz_loadu_ps(m0, row));
      x1 = _mm512_add_ps(x1, _mm512_maskz_loadu_ps(m1, row + 16));
    } else if (beta != 0.0f) {
      x0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, row), x0);
      x1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, row + 16), x1);
    }
    if (cl.on) {
      // max/min return their second operand when either is NaN: x's NaN.
      x0 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, x0));
      x1 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, x1));
    }
    _mm512_mask_storeu_ps(row, m0, x0);
    _mm512_mask_storeu_ps(row + 16, m1, x1);
  }
}
#elif defined(__AVX2__) && defined(__FMA__)
/// MR x 16 (two ymm per row) over one half of a 32-wide panel.
template <int MR>
inline void ukernel16(i64 kc, const float *__restrict a, const float *__restrict b, i64 bs,
                      float *__restrict c, i64 ldc, int nv, bool first, float beta,
                      const float *rbias, Ahead ahead, Clamp cl,
                      float *__restrict copy) {
  __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    acc0[i] = rbias ? _mm256_broadcast_ss(rbias + i) : _mm256_setzero_ps();
    acc1[i] = acc0[i];
  }
  // The k loop in chunks of kAheadSteps, the next panel's lines prefetched
  // once per chunk (one prefetch in every step read 0.85-0.95x with B in
  // cache: the loop's issue slots).
  AheadWalk walk(ahead);
  const i64 chunk = walk.chunk(kc);
  auto k_loop = [&](auto copying) {
    for (i64 p0 = 0; p0 < kc; p0 += chunk) {
      walk.issue();
      const i64 p1 = std::min(kc, p0 + chunk);
      for (i64 p = p0; p < p1; ++p) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
        if constexpr (decltype(copying)::value) {
          _mm256_store_ps(copy, b0);
          _mm256_store_ps(copy + 8, b1);
          copy += kNR;
        }
        // B in registers: left to itself, GCC folds the two loads into
        // each row's FMAs where registers allow (1-4 rows), 2 MR loads
        // instead of 2, which then bound the loop: 4 rows ran at 63% of the
        // FMA peak, 95% with the loads kept apart (in L1, one thread).
        asm("" : "+x"(b0), "+x"(b1));
        // Both cache lines of the B row ahead: the first half-panel pass is
        // the one that streams B from memory, and a prefetch of its own line
        // only left the other half's line to the hardware (a weight that does
        // not fit in cache, m = 16-32: 1.13-1.26x; gemm_ab.py,
        // docs/performance.md). (The second pass's second prefetch is a line
        // it will not read.)
        _mm_prefetch(reinterpret_cast<const char *>(b + kPrefetchRows * bs), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char *>(b + kPrefetchRows * bs + 16), _MM_HINT_T0);
#pragma GCC unroll 8
        for (int i = 0; i < MR; ++i) {
          __m256 av = _mm256_broadcast_ss(a + i);
          acc0[i] = _mm256_fmadd_ps(av, b0, acc0[i]);
          acc1[i] = _mm256_fmadd_ps(av, b1, acc1[i]);
        }
        a += MR;
        b += bs;
      }
    }
  };
  if (copy)
    k_loop(std::true_type{});
  else
    k_loop(std::false_type{});
  if (nv >= 16) {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      float *row = c + i * ldc;
      __m256 x0 = acc0[i], x1 = acc1[i];
      if (!first) {
        x0 = _mm256_add_ps(x0, _mm256_loadu_ps(row));
        x1 = _mm256_add_ps(x1, _mm256_loadu_ps(row + 8));
      } else if (beta != 0.0f) {
        x0 = _mm256_fmadd_ps(_mm256_set1_ps(beta), _mm256_loadu_ps(row), x0);
        x1 = _mm256_fmadd_ps(_mm256_set1_ps(beta), _mm256_loadu_ps(row + 8), x1);
      }
      if (cl.on) {
        // NaN kept: max/min return their second operand when either is NaN.
        const __m256 vlo = _mm256_set1_ps(cl.lo), vhi = _mm256_set1_ps(cl.hi);
        x0 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, x0));
        x1 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, x1));
      }
      _mm256_storeu_ps(row, x0);
      _mm256_storeu_ps(row + 8, x1);
    }
    return;
  }
  // (Every loop over the accumulators is unrolled: an indexed access would
  // keep them on the stack through the k loop.)
  alignas(32) float tile[MR][16];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    _mm256_store_ps(tile[i], acc0[i]);
    _mm256_store_ps(tile[i] + 8, acc1[i]);
  }
  for (int i = 0; i < MR; ++i) {
    float *row = c + i * ldc;
    for (int j = 0; j < nv; ++j)
      row[j] = clamped(!first ? row[j] + tile[i][j]
                              : (beta != 0.0f ? beta * row[j] + tile[i][j] : tile[i][j]),
                       cl);
  }
}

template <int MR>
inline void ukernel(i64 kc, const float *a, const float *b, i64 bs, float *c, i64 ldc,
                    int nv, bool first, float beta, const float *rbias, Ahead ahead = {},
                    Clamp cl = {}, float *copy = nullptr) {
  ukernel16<MR>(kc, a, b, bs, c, ldc, std::min(nv, 16), first, beta, rbias, ahead, cl, copy);
  if (nv > 16)
    ukernel16<MR>(kc, a, b + 16, bs, c + 16, ldc, nv - 16, first, beta, rbias,
                  ahead.skip(ahead.per_call(kc)), cl, copy ? copy + 16 : nullptr);
}
#else
template <int MR>
inline void ukernel(i64 kc, const float *__restrict a, const float *__restrict b, i64 bs,
                    float *__restrict c, i64 ldc, int nv, bool first, float beta,
                    const float *rbias, Ahead = {}, Clamp cl = {},
                    float *__restrict copy = nullptr) {
  if (copy)
    for (i64 p = 0; p < kc; ++p)
      std::memcpy(copy + p * kNR, b + p * bs, sizeof(float) * kNR);
  float acc[MR][kNR] = {};
  if (rbias)
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < kNR; ++j)
        acc[i][j] = rbias[i];
  for (i64 p = 0; p < kc; ++p) {
    for (int i = 0; i < MR; ++i) {
      float av = a[i];
#pragma omp simd
      for (int j = 0; j < kNR; ++j)
        acc[i][j] += av * b[j];
    }
    a += MR;
    b += bs;
  }
  for (int i = 0; i < MR; ++i) {
    float *row = c + i * ldc;
    for (int j = 0; j < nv; ++j)
      row[j] = clamped(!first ? row[j] + acc[i][j]
                              : (beta != 0.0f ? beta * row[j] + acc[i][j] : acc[i][j]),
                       cl);
  }
}
#endif

/// Microkernel calls over one panel of nv columns: two 16-column halves
/// with AVX2, one call otherwise (what a call's `ahead` share is counted in).
inline int calls_per_panel(int nv) {
#if !defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__)
  return nv > 16 ? 2 : 1;
#else
  (void)nv;
  return 1;
#endif
}

/// The microkernel for `mr` rows (1..kMR).
inline void ukernel_rows(int mr, i64 kc, const float *a, const float *b, i64 bs, float *c,
                         i64 ldc, int nv, bool first, float beta,
                         const float *rbias = nullptr, Ahead ahead = {}, Clamp cl = {},
                         float *copy = nullptr) {
  with_rows(mr, [&](auto rows) {
    ukernel<decltype(rows)::value>(kc, a, b, bs, c, ldc, nv, first, beta, rbias, ahead, cl,
                                   copy);
  });
}

//===--------------------------------------------------------------------===//
// Epilogues: called as epi(r0, r1, c0, c1) on each finished tile of C (rows
// [r0, r1), columns [c0, c1)), right after its last store.
//===--------------------------------------------------------------------===//

// NoEpilogue and EpilogueRef: thunder_cpu_gemm_api.h.

enum class Act { None, Relu, GeluTanh, GeluErf, Silu };

inline float activate(Act act, float v) {
  switch (act) {
  case Act::None: return v;
  case Act::Relu: return v > 0.0f ? v : 0.0f;
  case Act::GeluTanh: {
    float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
    return 0.5f * v * (1.0f + std::tanh(u));
  }
  case Act::GeluErf: return 0.5f * v * (1.0f + std::erf(v * 0.7071067811865476f));
  case Act::Silu: return v / (1.0f + std::exp(-v));
  }
  return v;
}

/// The common epilogue: C = act(C + bias[col]) + residual[row, col].
struct BiasActResidual {
  float *c;
  i64 ldc;
  const float *bias = nullptr;     ///< per column, or null
  Act act = Act::None;
  const float *residual = nullptr; ///< [m, n] with ldr, or null
  i64 ldr = 0;
  void operator()(i64 r0, i64 r1, i64 c0, i64 c1) const {
    for (i64 r = r0; r < r1; ++r) {
      float *row = c + r * ldc;
      if (bias) {
#pragma omp simd
        for (i64 j = c0; j < c1; ++j)
          row[j] += bias[j];
      }
      if (act == Act::Relu) {
#pragma omp simd
        for (i64 j = c0; j < c1; ++j)
          row[j] = row[j] > 0.0f ? row[j] : 0.0f;
      } else if (act != Act::None) {
        for (i64 j = c0; j < c1; ++j)
          row[j] = activate(act, row[j]);
      }
      if (residual) {
        const float *res = residual + r * ldr;
#pragma omp simd
        for (i64 j = c0; j < c1; ++j)
          row[j] += res[j];
      }
    }
  }
};

//===--------------------------------------------------------------------===//
// The driver
//===--------------------------------------------------------------------===//

/// Per-thread packing buffers, kept across calls (a run allocates nothing
/// once warm): 0, a tile's A block; 1, a tile's B block; 2, the whole of A
/// packed by the calling thread's team (up to kSharedAFloats), or its rows
/// copied for the dot-product path (dot_gemm: m x (k + 16 per kc block)).
inline float *thread_buffer(int which, size_t floats) {
  static thread_local std::vector<float> buffers[3];
  std::vector<float> &v = buffers[which];
  if (v.size() < floats + 16)
    v.resize(floats + 16);
  // 64-byte aligned inside the vector.
  auto p = reinterpret_cast<uintptr_t>(v.data());
  return reinterpret_cast<float *>((p + 63) & ~uintptr_t(63));
}

} // namespace thunder_gemm

// nn.Linear's [n, k] weight read in place as dot products (dot_gemm, which
// sgemm below calls): a part of this header, kept in a file of its own.
#include "thunder_cpu_gemm_dot.h"

namespace thunder_gemm {

/// C[m, n] (ldc) = op(A) @ op(B) + beta * C (+ row_bias[i] on row i), then
/// epi on each finished tile.
/// B is either prepacked (`packed`, the layout above, for exactly this k
/// and n) or read from b/ldb/tb: in place (row-major, reads_b_in_place), as
/// dot products (few rows, [n, k]: thunder_cpu_gemm_dot.h), or packed per
/// tile. A is read from a/lda/ta and packed (once per call or per tile), or
/// taken from `packed_a` (pack_a_once of a row-major A with exactly this m
/// and k; a is then unused). threads <= 0: OpenMP's default, 1 inside a
/// parallel region.
template <class Epi>
void sgemm(i64 m, i64 n, i64 k, const float *a, i64 lda, bool ta, const float *b,
           i64 ldb, bool tb, const float *packed, float *c, i64 ldc, float beta,
           const Epi &epi, int threads = 0, const float *packed_a = nullptr,
           const float *row_bias = nullptr) {
  if (m <= 0 || n <= 0)
    return;
  if (threads <= 0)
    threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (k <= 0) {
    // An empty sum: beta * C (zeros for beta 0) and the bias, then the
    // epilogue.
    for (i64 r = 0; r < m; ++r) {
      float *row = c + r * ldc;
      const float add = row_bias ? row_bias[r] : 0.0f;
      for (i64 j = 0; j < n; ++j)
        row[j] = (beta != 0.0f ? beta * row[j] : 0.0f) + add;
    }
    epi(0, m, 0, n);
    return;
  }
#ifdef THUNDER_GEMM_HAS_DOT
  if (!packed && !packed_a && !row_bias && tb && !ta &&
      (m <= kDotFewRows || (m <= kDotRows && k >= kDotMinDepth &&
                            (n + kDotBlock - 1) / kDotBlock >= threads))) {
    dot_gemm(m, n, k, a, lda, b, ldb, c, ldc, beta, epi, threads);
    return;
  }
#endif
  // An epilogue that is a clamp: done by the microkernels' last store.
  const Clamp clamp = clamp_of(epi);
  const i64 mc = row_block_rows(m), row_blocks = (m + mc - 1) / mc;
  i64 panels = (n + kNR - 1) / kNR;
  i64 kblocks = (k + kKC - 1) / kKC;
  // B not packed at compile time: a row-major B is read in place (packing
  // would copy it, in a pass that waits on memory: reads_b_in_place, at any
  // m with AVX-512, up to 32-128 rows of A without); otherwise each tile
  // packs its block of B once per kc block and runs all its row blocks over
  // it.
  const bool in_place = !packed && !tb && reads_b_in_place(m, ldb);
  const bool pack_here = !packed && !in_place;
  // A is packed once per call, by all threads, when it is small enough to
  // share; else each tile packs its rows once per kc block.
  const bool shared_a = packed_a || (panels > 1 && m * k <= kSharedAFloats);
  // Tiles of row blocks x NC columns, NC shrunk (down to one panel) until
  // every thread has a few. A tile packing B spans every row block (B is
  // then packed once) until NC is one panel, and only then are row blocks
  // split (each such tile packs B again, but no thread idles: n = 64 with
  // many rows) -- unless A is not shared: then narrow tiles would pack A for
  // few columns, so tiles stay at least half as wide while there are row
  // blocks to split instead.
  i64 tiles_m = pack_here ? 1 : row_blocks;
  i64 nc_panels = std::min<i64>(panels, pack_here ? kMaxPackedPanels : kMaxTilePanels);
  auto tiles_n_of = [&](i64 nc) { return (panels + nc - 1) / nc; };
  while (tiles_m * tiles_n_of(nc_panels) < 4 * threads) {
    bool split_rows = pack_here && tiles_m < row_blocks &&
                      (shared_a ? nc_panels == 1 : nc_panels <= kMaxPackedPanels / 2);
    if (split_rows)
      tiles_m = std::min(row_blocks, tiles_m * 2);
    else if (nc_panels > 1)
      nc_panels = (nc_panels + 1) / 2;
    else
      break;
  }
  i64 blocks_per_tile = (row_blocks + tiles_m - 1) / tiles_m;
  tiles_m = (row_blocks + blocks_per_tile - 1) / blocks_per_tile;
  // Then, while the tiles are few, until the threads have as many each (9
  // tiles on 2 threads left one idle for a ninth of the time: m = 128,
  // n = 3072) -- where narrower tiles cost nothing: A is shared, not packed
  // again by every tile.
  while (shared_a && tiles_m * tiles_n_of(nc_panels) % threads != 0 &&
         tiles_m * tiles_n_of(nc_panels) < 8 * threads && nc_panels > 1)
    nc_panels = (nc_panels + 1) / 2;
  i64 tiles_n = tiles_n_of(nc_panels);
  i64 tiles = tiles_m * tiles_n;
  int nt = static_cast<int>(std::min<i64>(threads, tiles));
  // Work per tile below this runs on one thread.
  bool parallel = nt > 1 && m * n * k > 32768;
  // Shared packed A: row block rb's kc block p0 at r0 * k + p0 * (r1 - r0),
  // laid out as pack_a writes it.
  float *a_buffer = shared_a && !packed_a
                       ? thread_buffer(2, static_cast<size_t>(m * k)) : nullptr;
  const float *a_all = packed_a ? packed_a : a_buffer;
  auto a_block = [&](i64 r0, i64 r1, i64 p0) { return a_all + r0 * k + p0 * (r1 - r0); };
#pragma omp parallel num_threads(nt) if (parallel)
  {
    if (a_buffer) {
#pragma omp for schedule(static)
      for (i64 j = 0; j < row_blocks * kblocks; ++j)
        pack_a_item(a, lda, ta, m, k, j, a_buffer);
    }
#pragma omp for schedule(dynamic, 1)
    for (i64 t = 0; t < tiles; ++t) {
      // n-major tile order: neighbours share the B panels.
      i64 tn = t / tiles_m, tm = t % tiles_m;
      i64 rows0 = tm * blocks_per_tile * mc, rows1 = std::min(m, rows0 + blocks_per_tile * mc);
      i64 q0 = tn * nc_panels, q1 = std::min(panels, q0 + nc_panels);
      i64 c0 = q0 * kNR, c1 = std::min(n, q1 * kNR);
      // In place, a last panel narrower than kNR is packed (zero-padded).
      const bool pack_last = in_place && c1 - (q1 - 1) * kNR < kNR;
      // In place, where copies_b_in_place says so (enough rows of A to read
      // each panel several times): the first microkernel call over each
      // panel of B (a row block's first panel of rows; a tile reading B in
      // place is one row block) copies what it reads into the panel's slot
      // of bp, in the packed layout, and the row block's later calls read
      // that copy. B is then
      // read once from memory, as in place, and the calls that reuse it
      // read a contiguous panel: a B whose rows are a multiple of 4 KiB
      // apart puts a panel's rows into the same few L1 sets, and was read
      // at 0.75-0.9x of packed by the reusing calls.
      const bool copy_b = in_place && copies_b_in_place(rows1 - rows0, ldb);
      i64 kcmax = std::min(kKC, k);
      float *ap = shared_a ? nullptr : thread_buffer(0, static_cast<size_t>(kMC * kcmax));
      float *bp = pack_here || pack_last || copy_b
                      ? thread_buffer(1, static_cast<size_t>(nc_panels * kNR * kcmax))
                      : nullptr;
      for (i64 p0 = 0; p0 < k; p0 += kKC) {
        i64 kc = std::min(kKC, k - p0);
        bool first = p0 == 0, last = p0 + kc >= k;
        if (pack_here)
          pack_b(b, ldb, tb, p0, kc, c0, c1, bp, kc * kNR);
        else if (pack_last)
          pack_b(b, ldb, tb, p0, kc, (q1 - 1) * kNR, c1, bp + (q1 - 1 - q0) * kc * kNR,
                 kc * kNR);
        // B packed here comes from memory too (a module's weights, read in
        // place): the last row block's calls prefetch the rows that the next
        // kc block's packing reads, [c0, c1) x [p0 + kc, + next_kc) of B.
        // (Spread over every row block, they took the cache from the packed
        // block in use: 0.86-0.92x at m = 128-512.) Without AVX-512, not
        // for nn.Linear's [n, k] B beyond kAheadTbRows = 16 rows: m = 32-128
        // read 0.90-0.96x with them on Zen 3-4 (why was not found: its next
        // block is about 17 lines from each of up to 512 rows, and a [k, n]
        // B's, which gains, about as many from each of 256); at m = 16,
        // 1.16x. (Such a B is packed here only where the dot-product path
        // does not take it: k < kDotMinDepth, few columns, more than kDotRows
        // rows.) With AVX-512 a [k, n] B is never packed here
        // (reads_b_in_place), so only an [n, k] one is.
        Ahead next_block;
        if (pack_here && !last && (!tb || rows1 - rows0 <= kAheadTbRows)) {
          const i64 next_kc = std::min(kKC, k - p0 - kc);
          const float *from = tb ? b + c0 * ldb + p0 + kc : b + (p0 + kc) * ldb + c0;
          const i64 rows = tb ? c1 - c0 : next_kc, row_bytes = 4 * (tb ? next_kc : c1 - c0);
          // One line more per row than its bytes: rows need not start on a line.
          const i64 row_lines = (row_bytes + 63) / 64 + 1;
          const i64 last_rows = rows1 - rows0 - (rows1 - rows0 - 1) / mc * mc;
          const i64 calls = (q1 - q0) * Panels(last_rows).count * calls_per_panel(kNR);
          next_block = Ahead::spread(from, 4 * ldb, row_lines, rows * row_lines, calls, kc);
        }
        for (i64 r0 = rows0; r0 < rows1; r0 += mc) {
          i64 r1 = std::min(rows1, r0 + mc);
          const Panels apanels(r1 - r0);
          Ahead ahead = r1 == rows1 ? next_block : Ahead{};
          const float *arows = ap;
          if (shared_a)
            arows = a_block(r0, r1, p0);
          else
            pack_a(a, lda, ta, r0, r1 - r0, p0, kc, ap);
          for (i64 q = q0; q < q1; ++q) {
            i64 j0 = q * kNR;
            const float *bq;
            i64 bs = kNR;
            // This panel's slot in bp (packed here, or copied by copy_b).
            float *slot = bp ? bp + (q - q0) * kc * kNR : nullptr;
            // Whether this row block's first call copies the panel.
            bool copying = false;
            if (packed)
              bq = packed + (q * k + p0) * kNR;
            else if (pack_here || (pack_last && q == q1 - 1))
              bq = slot;
            else
              bq = b + p0 * ldb + j0, bs = ldb, copying = copy_b;
            int nv = static_cast<int>(std::min<i64>(kNR, n - j0));
            // A prepacked B comes from memory (a model's weights do not stay
            // in cache): the tile's first row block, whose calls stream it,
            // prefetches the next panel (or the first of the next kc block).
            // (Over prepacked B a tile is one row block, so that is every
            // row block: none finds B in L2 after another.)
            const int panel_calls = calls_per_panel(nv);
            // The panel it streams next: the tile's next one, or its first
            // of the next kc block (rows [next_p0, + next_kc) of panel nq).
            const bool within = q + 1 < q1, streams = r0 == rows0 && (within || !last);
            const i64 nq = within ? q + 1 : q0, next_p0 = within ? p0 : p0 + kc;
            const i64 next_kc = within ? kc : std::min(kKC, k - p0 - kc);
            const i64 calls = apanels.count * panel_calls;
            if (packed) {
              // Its lines: next_kc rows of kNR floats, contiguous.
              ahead = streams ? Ahead::spread(packed + (nq * k + next_p0) * kNR, 0, 0,
                                              next_kc * kNR / 16, calls, kc)
                              : Ahead{};
            } else if (in_place && m <= kInPlaceAheadRows) {
              // The same for a B read in place (over few rows of A without
              // AVX-512, kInPlaceAheadRows): next_kc rows of kNR floats each
              // (2 lines, 3 where rows do not start on a line), ldb apart.
              const bool lined = ldb % 16 == 0 && reinterpret_cast<uintptr_t>(b) % 64 == 0;
              const i64 row_lines = lined ? kNR / 16 : kNR / 16 + 1;
              ahead = streams ? Ahead::spread(b + next_p0 * ldb + nq * kNR, 4 * ldb, row_lines,
                                              next_kc * row_lines, calls, kc)
                              : Ahead{};
            }
            for (i64 i = 0; i < apanels.count; ++i) {
              const i64 i0 = r0 + apanels.start(i);
              const int mr = apanels.rows(i);
              ukernel_rows(mr, kc, arows + (i0 - r0) * kc, bq, bs, c + i0 * ldc + j0, ldc,
                           nv, first, beta, first && row_bias ? row_bias + i0 : nullptr,
                           ahead, last ? clamp : Clamp{}, copying ? slot : nullptr);
              if (copying)
                bq = slot, bs = kNR, copying = false;
              ahead = ahead.skip(ahead.per_call(kc) * panel_calls);
              if (last && !clamp.on)
                epi(i0, i0 + mr, j0, j0 + nv);
            }
          }
        }
      }
    }
  }
}

/// A matmul of the backend: out[b] = op(lhs[b]) @ op(rhs[b or shared]) for
/// batch slices (thunder_cpu::matmul's arguments), B prepacked when `packed`
/// is given (then rhs is shared and unused). `epi` sees rows of the whole
/// [batch * m, n] output. (matmul_f32 is what callers use.)
template <class Epi>
void matmul_batched(const float *lhs, const float *rhs, const float *packed, float *out,
                    i64 batch, i64 m, i64 n, i64 k, bool ta, bool tb, bool rhs_shared,
                    const Epi &epi) {
  if (rhs_shared && !ta) {
    // One GEMM over all batches: [batch*m, k] @ [k, n].
    m *= batch;
    batch = 1;
  }
  i64 lda = ta ? m : k, ldb = tb ? k : n;
  if (batch == 1) {
    sgemm(m, n, k, lhs, lda, ta, rhs, ldb, tb, packed, out, n, 0.0f, epi);
    return;
  }
  if (batch <= 0)
    return;
  i64 rhs_stride = rhs_shared ? 0 : k * n;
  // Enough batches for every thread: one single-threaded GEMM per batch;
  // else each GEMM spreads over the threads.
  bool per_batch = !omp_in_parallel() && batch >= omp_get_max_threads() &&
                   batch * m * n * k > 32768;
#pragma omp parallel for if (per_batch)
  for (i64 b = 0; b < batch; ++b) {
    auto shifted = [&](i64 r0, i64 r1, i64 c0, i64 c1) {
      epi(b * m + r0, b * m + r1, c0, c1);
    };
    // Through an EpilogueRef: the driver compiled apart is then one
    // instance, sgemm<EpilogueRef> (a third of the unit's compile time).
    sgemm(m, n, k, lhs + b * m * k, lda, ta, packed ? nullptr : rhs + b * rhs_stride, ldb,
          tb, packed, out + b * m * n, n, 0.0f, EpilogueRef(shifted), per_batch ? 1 : 0);
  }
}

#if !THUNDER_GEMM_APART
/// matmul_batched with any epilogue (apart: thunder_cpu_gemm_api.h's, through
/// an EpilogueRef).
template <class Epi>
inline void matmul_f32(const float *lhs, const float *rhs, const float *packed, float *out,
                       i64 batch, i64 m, i64 n, i64 k, bool ta, bool tb, bool rhs_shared,
                       const Epi &epi) {
  matmul_batched(lhs, rhs, packed, out, batch, m, n, k, ta, tb, rhs_shared, epi);
}

/// pack_a_once, and C [m, n] = its packed A @ row-major B [k, n] (+ row_bias
/// per row, when given) with the epilogue per tile (apart:
/// thunder_cpu_gemm_api.h's).
inline void pack_a_once_f32(const float *a, i64 m, i64 k, float *out) {
  pack_a_once(a, m, k, out);
}
template <class Epi>
inline void gemm_packed_a(const float *packed_a, const float *b, float *c, i64 m, i64 n,
                          i64 k, const float *row_bias, const Epi &epi) {
  sgemm(m, n, k, nullptr, k, false, b, n, false, nullptr, c, n, 0.0f, epi, 0, packed_a,
        row_bias);
}

/// Convenience: op(B) unpacked, no epilogue (apart: thunder_cpu_gemm_api.h's).
inline void sgemm(bool ta, bool tb, i64 m, i64 n, i64 k, const float *a, i64 lda,
                  const float *b, i64 ldb, float *c, i64 ldc, float beta = 0.0f,
                  int threads = 0) {
  sgemm(m, n, k, a, lda, ta, b, ldb, tb, nullptr, c, ldc, beta, NoEpilogue{}, threads);
}
#endif

} // namespace thunder_gemm

#endif // THUNDER_CPU_GEMM_H
