// A fused RMSNorm written by hand: the CPU kernel of the custom op
// mylib::rms_norm(x, weight, eps), in the C ABI of thunder-c/custom_op.h.
//
//   y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * weight
//
// One pass for the sum of squares and one for the scaled output, per row; rows
// in parallel. float32 only (the op's meta kernel says so too).
#include "thunder-c/custom_op.h"

#include <cmath>

extern "C" int mylib_rms_norm(THUNDER_CUSTOM_KERNEL_PARAMS) {
  (void)stream;
  if (num_inputs != 2 || num_outputs != 1 || num_scalars != 1)
    return 1; // not the op this kernel was written for
  const thunder_tensor &x = inputs[0], &w = inputs[1], &y = outputs[0];
  if (x.dtype != THUNDER_DTYPE_FLOAT32 || w.dtype != THUNDER_DTYPE_FLOAT32 ||
      y.dtype != THUNDER_DTYPE_FLOAT32 || x.rank < 1 || w.rank != 1)
    return 2;
  const int64_t n = x.shape[x.rank - 1];
  if (w.shape[0] != n)
    return 3;
  const int64_t rows = n ? thunder_numel(&x) / n : 0;
  const float eps = static_cast<float>(scalars[0]);
  const float *in = static_cast<const float *>(x.data);
  const float *weight = static_cast<const float *>(w.data);
  float *out = static_cast<float *>(y.data);
#pragma omp parallel for if (rows * n > 32768)
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = in + r * n;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i)
      sum += row[i] * row[i];
    const float scale = 1.0f / std::sqrt(sum / static_cast<float>(n) + eps);
    float *dst = out + r * n;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      dst[i] = row[i] * scale * weight[i];
  }
  return 0;
}
