// Checks thunder_cpu_conv.h's convolutions with tensors channels last
// (ConvLayout: the input, the output or both) against the same convolution
// channels first: fp32 through oneDNN, pointwise and depthwise ones that
// channels first run on Thunder's kernels, a grouped one, and fp64, which takes the channels-first copies a
// convolution oneDNN does not run falls back to; each with an elementwise
// epilogue. Compiled and run by test_conv_layout.py; prints "ok" or the first
// mismatch.
#include "thunder_cpu.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace thunder_cpu;

static int failures = 0;

template <class T>
static void check(i64 batch, i64 cin, i64 cout, i64 h, i64 w, i64 kernel, i64 stride, i64 pad,
                  i64 dilation, i64 groups = 1) {
  Window win{2, {h, w, 1}, {0, 0, 1}, {kernel, kernel, 1}, {stride, stride, 1},
             {pad, pad, 0}, {dilation, dilation, 1}};
  for (int s = 0; s < 2; ++s)
    win.out[s] = (win.in[s] + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
  const i64 in_size = h * w, out_size = win.out[0] * win.out[1];
  std::mt19937 gen(static_cast<unsigned>(cin * 131 + cout * 7 + kernel));
  std::uniform_real_distribution<double> dist(-1, 1);
  auto random = [&](i64 n) {
    std::vector<T> v(static_cast<size_t>(n));
    for (T &x : v)
      x = static_cast<T>(dist(gen));
    return v;
  };
  std::vector<T> in = random(batch * cin * in_size), filter = random(cout * (cin / groups) * kernel * kernel),
                 bias = random(cout);
  // The epilogue adds 0.25 and squares: elementwise, so the same in any layout.
  auto run = [&](const std::vector<T> &x, int layout) {
    std::vector<T> out(static_cast<size_t>(batch * cout * out_size));
    T *o = out.data();
    auto epi = [&](i64 r0, i64 r1, i64 c0, i64 c1) {
      for (i64 r = r0; r < r1; ++r)
        for (i64 c = c0; c < c1; ++c) {
          T &v = o[r * out_size + c];
          v = (v + T(0.25)) * (v + T(0.25));
        }
    };
    conv_inline(x.data(), filter.data(), bias.data(), o, batch, cin, cout, groups, win, false,
                thunder_gemm::EpilogueRef(epi), layout);
    return out;
  };
  const std::vector<T> expected = run(in, kChannelsFirst);
  std::vector<T> in_last(in.size());
  transpose_channels(in.data(), in_last.data(), batch, cin, in_size, true);
  for (int layout : {int(kInputChannelsLast), int(kOutputChannelsLast),
                     kInputChannelsLast | kOutputChannelsLast}) {
    std::vector<T> got = run(layout & kInputChannelsLast ? in_last : in, layout);
    if (layout & kOutputChannelsLast) {
      std::vector<T> first(got.size());
      transpose_channels(got.data(), first.data(), batch, cout, out_size, false);
      got = first;
    }
    for (size_t i = 0; i < got.size(); ++i)
      if (!(std::abs(double(got[i]) - double(expected[i])) <=
            1e-5 * (1 + std::abs(double(expected[i]))))) {
        if (failures++ < 5)
          std::printf("mismatch: %s batch %lld cin %lld cout %lld %lldx%lld kernel %lld stride "
                      "%lld groups %lld layout %d at %zu: %g, channels first %g\n",
                      sizeof(T) == 4 ? "f32" : "f64", (long long)batch, (long long)cin,
                      (long long)cout, (long long)h, (long long)w, (long long)kernel,
                      (long long)stride, (long long)groups, layout, i, double(got[i]), double(expected[i]));
        break;
      }
  }
}

int main() {
  for (i64 batch : {1, 3}) {
    check<float>(batch, 5, 6, 9, 7, 3, 1, 1, 1);
    check<float>(batch, 8, 16, 10, 10, 3, 2, 1, 1);
    check<float>(batch, 4, 4, 9, 9, 3, 1, 2, 2);
    check<float>(batch, 6, 10, 7, 5, 1, 1, 0, 1); // pointwise
    check<float>(batch, 16, 16, 9, 8, 3, 1, 1, 1, 16); // depthwise
    check<float>(batch, 24, 24, 14, 14, 3, 2, 1, 1, 24); // depthwise, strided
    check<float>(batch, 8, 12, 7, 9, 3, 1, 1, 1, 4); // grouped
    check<double>(batch, 5, 6, 9, 7, 3, 1, 1, 1);
    check<double>(batch, 8, 16, 10, 10, 3, 2, 1, 1);
  }
  std::printf(failures ? "FAILED\n" : "ok\n");
  return failures ? 1 : 0;
}
