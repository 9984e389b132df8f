// thunder_cpu_conv_api.h: how a kernel calls Thunder's convolution and
// pooling driver.
//
// The Window of a convolution or pooling and, with THUNDER_GEMM_APART
// (thunder_cpu_base.h sets it), the fp32 conv and pool that a kernel calls:
// they hand the work (and the kernel's fused epilogue) to the driver compiled
// once per library (thunder_cpu_conv.cpp). A kernel whose only library calls
// are fp32 convolutions and pooling includes this header and
// thunder_cpu_base.h, not thunder_cpu.h (oneDNN's, OpenBLAS's and the
// library's templates), which took most of such a unit's compile
// (lib/Target/CPU/KernelUnits.cpp). thunder_cpu_conv.h (the driver) includes
// this header; its templates serve the other element types.
#ifndef THUNDER_CPU_CONV_API_H
#define THUNDER_CPU_CONV_API_H

#include "thunder_cpu_base.h"

namespace thunder_cpu {

/// A convolution's or pooling's window over 1-3 spatial dims (unused dims
/// are 1 wide).
struct Window {
  int spatial;
  i64 in[3], out[3], kernel[3], stride[3], pad_lo[3], dilation[3];
};

/// Where a convolution's input and output hold their channels (bits of its
/// `layout` argument): channels first (NC[D]HW, every tensor's layout to the
/// rest of the model), or last (N[D]HWC, the layout oneDNN's convolutions run
/// in): between two such convolutions the compiler keeps a tensor channels
/// last, and neither pays a reorder (lib/Target/CPU/ChannelsLast.cpp).
enum ConvLayout : int { kChannelsFirst = 0, kInputChannelsLast = 1, kOutputChannelsLast = 2 };

/// The layout of a convolution that the compiler keeps channels last only in
/// kernels compiled for AVX-512: depthwise and pointwise ones, which oneDNN
/// runs channels last faster there than Thunder's channels-first kernels do
/// (a MobileNet-style network 1.27x), while without AVX-512 oneDNN 2.6
/// would reorder around each into its blocked layout. Also of a pooling
/// between such convolutions.
#if defined(__AVX512F__)
#define THUNDER_CONV_LAYOUT(avx512, other) (avx512)
#else
#define THUNDER_CONV_LAYOUT(avx512, other) (other)
#endif

#if THUNDER_GEMM_APART
/// thunder_cpu_conv.h's conv_inline<float> and pool_inline<float>, compiled
/// once per library (thunder_cpu_conv.cpp).
void conv_f32_apart(const float *in, const float *w, const float *bias, float *out,
                    i64 batch, i64 cin, i64 cout, i64 groups, const Window &win,
                    bool weights_constant, thunder_gemm::EpilogueRef epi, int layout);
void pool_f32_apart(const float *in, float *out, i64 planes, const Window &win, bool is_max,
                    bool count_include_pad, const i64 *pad_hi, int layout, i64 channels);

/// out = conv(in, w) + bias, then `epi`, for fp32 (thunder_cpu_conv.h's
/// conv_inline says what each argument is). Other element types take
/// thunder_cpu_conv.h's template, which this overload wins against for fp32.
inline void conv(const float *in, const float *w, const float *bias, float *out, i64 batch,
                 i64 cin, i64 cout, i64 groups, const Window &win,
                 bool weights_constant = false, thunder_gemm::EpilogueRef epi = {},
                 int layout = kChannelsFirst) {
  conv_f32_apart(in, w, bias, out, batch, cin, cout, groups, win, weights_constant, epi,
                 layout);
}

/// Max (is_max) or average pooling of fp32 (thunder_cpu_conv.h's pool_inline;
/// `layout` kChannelsFirst, or both bits for a 2-D pool of `channels`
/// channels kept channels last).
inline void pool(const float *in, float *out, i64 planes, const Window &win, bool is_max,
                 bool count_include_pad, const i64 *pad_hi, int layout = kChannelsFirst,
                 i64 channels = 1) {
  pool_f32_apart(in, out, planes, win, is_max, count_include_pad, pad_hi, layout, channels);
}
#endif

} // namespace thunder_cpu

#if !THUNDER_GEMM_APART
// Without the drivers apart, every conv and pool is thunder_cpu_conv.h's
// template (this header's guard makes the include below a no-op inside
// thunder_cpu.h).
#include "thunder_cpu.h"
#endif

#endif // THUNDER_CPU_CONV_API_H
