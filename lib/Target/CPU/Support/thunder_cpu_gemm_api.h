// thunder_cpu_gemm_api.h: how a kernel calls Thunder's GEMM driver.
//
// The epilogue types (NoEpilogue, EpilogueRef) and, with THUNDER_GEMM_APART
// (thunder_cpu_base.h sets it), matmul_f32 and sgemm: the entries that a
// generated GEMM kernel and the library's gemm call, which hand the epilogue
// to the driver compiled once per library (thunder_cpu_gemm.cpp) through an
// EpilogueRef. A unit that includes only this declares the driver without
// reading it.
// thunder_cpu_gemm.h (the driver) includes this header.
#ifndef THUNDER_CPU_GEMM_API_H
#define THUNDER_CPU_GEMM_API_H

#include <cstdint>

namespace thunder_gemm {

using i64 = int64_t;

//===--------------------------------------------------------------------===//
// Epilogues: called as epi(r0, r1, c0, c1) on each finished tile of C (rows
// [r0, r1), columns [c0, c1)), right after its last store.
//===--------------------------------------------------------------------===//

/// No epilogue.
struct NoEpilogue {
  void operator()(i64, i64, i64, i64) const {}
};

/// Any epilogue, type-erased: the driver compiled once calls it through a
/// pointer per finished tile (a register tile is thousands of FMAs: the
/// call costs nothing measurable). Refers to `epi`, which must outlive it.
///
/// An epilogue that is only a clamp (ReLU, ReLU6, hardtanh: what follows
/// most convolutions) also says so (`clamping`, lo <= hi): a kernel that
/// can, clamps its registers before it stores them and skips the call, which would read
/// and write the finished tile again (MobileNet's pointwise convolutions,
/// k = cin as small as 16, spent 12% of their time in such calls). A kernel
/// that cannot just calls `fn`, which does the same clamp.
struct EpilogueRef {
  void (*fn)(const void *, i64, i64, i64, i64) = nullptr; ///< null: no epilogue
  const void *epi = nullptr;
  /// When clamp_only: the whole epilogue is x -> min(max(x, lo), hi), NaN
  /// kept (as `fn` does it).
  bool clamp_only = false;
  float lo = 0.0f, hi = 0.0f;
  EpilogueRef() = default;
  explicit EpilogueRef(const NoEpilogue &) {}
  template <class Epi>
  explicit EpilogueRef(const Epi &e)
      : fn([](const void *p, i64 r0, i64 r1, i64 c0, i64 c1) {
          (*static_cast<const Epi *>(p))(r0, r1, c0, c1);
        }),
        epi(&e) {}
  void operator()(i64 r0, i64 r1, i64 c0, i64 c1) const {
    if (fn)
      fn(epi, r0, r1, c0, c1);
  }
  /// This epilogue, marked as the clamp to [lo, hi] (-inf / inf: no bound).
  EpilogueRef clamping(float lo_, float hi_) const {
    EpilogueRef r = *this;
    r.clamp_only = fn != nullptr;
    r.lo = lo_, r.hi = hi_;
    return r;
  }
  /// This epilogue with `other`'s clamp mark (a wrapper that shifts its
  /// indices keeps the clamp of the epilogue it calls).
  EpilogueRef clamping(const EpilogueRef &other) const {
    return other.clamp_only ? clamping(other.lo, other.hi) : *this;
  }
};

#if THUNDER_GEMM_APART
/// matmul_batched and the plain sgemm, compiled once (thunder_cpu_gemm.cpp).
void matmul_f32_apart(const float *lhs, const float *rhs, const float *packed, float *out,
                      i64 batch, i64 m, i64 n, i64 k, bool ta, bool tb, bool rhs_shared,
                      EpilogueRef epi);
void sgemm_apart(bool ta, bool tb, i64 m, i64 n, i64 k, const float *a, i64 lda,
                 const float *b, i64 ldb, float *c, i64 ldc, float beta, int threads);

/// matmul_batched with any epilogue, through an EpilogueRef.
template <class Epi>
inline void matmul_f32(const float *lhs, const float *rhs, const float *packed, float *out,
                       i64 batch, i64 m, i64 n, i64 k, bool ta, bool tb, bool rhs_shared,
                       const Epi &epi) {
  matmul_f32_apart(lhs, rhs, packed, out, batch, m, n, k, ta, tb, rhs_shared,
                   EpilogueRef(epi));
}

/// Convenience: op(B) unpacked, no epilogue.
inline void sgemm(bool ta, bool tb, i64 m, i64 n, i64 k, const float *a, i64 lda,
                  const float *b, i64 ldb, float *c, i64 ldc, float beta = 0.0f,
                  int threads = 0) {
  sgemm_apart(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, beta, threads);
}

/// A row-major A [m, k] that does not change between calls, packed once
/// (m * k floats at `out`), and C [m, n] = that A @ B [k, n] (row-major)
/// + row_bias[i] on row i (when not null: the accumulators start from it),
/// with the epilogue per tile (thunder_cpu_gemm.h's pack_a_once and sgemm).
void pack_a_once_apart(const float *a, i64 m, i64 k, float *out);
void gemm_packed_a_apart(const float *packed_a, const float *b, float *c, i64 m, i64 n,
                         i64 k, const float *row_bias, EpilogueRef epi);
inline void pack_a_once_f32(const float *a, i64 m, i64 k, float *out) {
  pack_a_once_apart(a, m, k, out);
}
template <class Epi>
inline void gemm_packed_a(const float *packed_a, const float *b, float *c, i64 m, i64 n,
                          i64 k, const float *row_bias, const Epi &epi) {
  gemm_packed_a_apart(packed_a, b, c, m, n, k, row_bias, EpilogueRef(epi));
}
#endif

} // namespace thunder_gemm

#endif // THUNDER_CPU_GEMM_API_H
