// thunder_cpu_conv.cpp: Thunder's fp32 convolution driver, compiled once per
// library.
//
// Every fp32 convolution of a model's kernels (thunder_cpu::conv) calls
// conv_f32_apart (THUNDER_GEMM_APART, thunder_cpu_conv.h), so the direct
// kernels, the oneDNN primitive cache and the im2col fallback are compiled in
// this unit only, not in each kernel's. The backend adds this unit to
// libraries that have convolutions, under kernels/ so that the kernel cache
// keeps its object by content like any kernel's (lib/Target/CPU/CPUBackend.cpp).
#include "thunder_cpu.h"

namespace thunder_cpu {

void conv_f32_apart(const float *in, const float *w, const float *bias, float *out,
                    i64 batch, i64 cin, i64 cout, i64 groups, const Window &win,
                    bool weights_constant, thunder_gemm::EpilogueRef epi) {
  conv_inline(in, w, bias, out, batch, cin, cout, groups, win, weights_constant, epi);
}

} // namespace thunder_cpu
