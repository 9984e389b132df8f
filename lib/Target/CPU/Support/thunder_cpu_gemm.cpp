// thunder_cpu_gemm.cpp: Thunder's GEMM driver, compiled once per library.
//
// Every GEMM of a model's kernels (thunder_gemm::matmul_f32 with the
// kernel's epilogue, thunder_cpu::gemm and matmul for fp32, pointwise
// convolutions on their packed filters) calls these functions
// (THUNDER_GEMM_APART, thunder_cpu_gemm.h), so the driver and its
// microkernels are compiled in this unit only, not in each kernel's. The
// backend adds this unit to libraries that have GEMMs or convolutions, under
// kernels/ so that the kernel cache keeps its object by content like any
// kernel's (lib/Target/CPU/CPUBackend.cpp).
#include "thunder_cpu_base.h"
#include "thunder_cpu_gemm.h"

namespace thunder_gemm {

void matmul_f32_apart(const float *lhs, const float *rhs, const float *packed, float *out,
                      i64 batch, i64 m, i64 n, i64 k, bool ta, bool tb, bool rhs_shared,
                      EpilogueRef epi) {
  matmul_batched(lhs, rhs, packed, out, batch, m, n, k, ta, tb, rhs_shared, epi);
}

void sgemm_apart(bool ta, bool tb, i64 m, i64 n, i64 k, const float *a, i64 lda,
                 const float *b, i64 ldb, float *c, i64 ldc, float beta, int threads) {
  sgemm(m, n, k, a, lda, ta, b, ldb, tb, nullptr, c, ldc, beta, EpilogueRef(), threads);
}

void pack_a_once_apart(const float *a, i64 m, i64 k, float *out) {
  pack_a_once(a, m, k, out);
}

void gemm_packed_a_apart(const float *packed_a, const float *b, float *c, i64 m, i64 n,
                         i64 k, const float *row_bias, EpilogueRef epi) {
  sgemm(m, n, k, nullptr, k, false, b, n, false, nullptr, c, n, 0.0f, epi, 0, packed_a,
        row_bias);
}

} // namespace thunder_gemm
