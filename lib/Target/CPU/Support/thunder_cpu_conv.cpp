// thunder_cpu_conv.cpp: Thunder's fp32 convolution driver, compiled once per
// library.
//
// Every fp32 convolution and pooling of a model's kernels (thunder_cpu::conv
// and pool) calls conv_f32_apart or pool_f32_apart (THUNDER_GEMM_APART,
// thunder_cpu_conv_api.h), so the direct kernels, the oneDNN primitive cache,
// the im2col fallback and the pooling loops are compiled in this unit only,
// not in each kernel's. The backend adds this unit to libraries that have
// convolutions or pooling, under kernels/ so that the kernel cache keeps its
// object by content like any kernel's (lib/Target/CPU/CPUBackend.cpp).
#include "thunder_cpu.h"

namespace thunder_cpu {

void conv_f32_apart(const float *in, const float *w, const float *bias, float *out,
                    i64 batch, i64 cin, i64 cout, i64 groups, const Window &win,
                    bool weights_constant, thunder_gemm::EpilogueRef epi, int layout) {
  conv_inline(in, w, bias, out, batch, cin, cout, groups, win, weights_constant, epi, layout);
}

void pool_f32_apart(const float *in, float *out, i64 planes, const Window &win, bool is_max,
                    bool count_include_pad, const i64 *pad_hi, int layout, i64 channels) {
  pool_inline(in, out, planes, win, is_max, count_include_pad, pad_hi, layout, channels);
}

} // namespace thunder_cpu
