// The CUDA kernel of mylib::rms_norm(x, weight, eps): one block per row, a
// shared-memory tree for the sum of squares, launched on the model's stream
// (thunder-c/custom_op.h). float32 only.
#include "thunder-c/custom_op.h"

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;

__global__ void rms_norm_rows(const float *x, const float *w, float *y, int64_t n,
                              float eps) {
  __shared__ float partial[kThreads];
  const float *row = x + blockIdx.x * n;
  float *dst = y + blockIdx.x * n;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads)
    sum += row[i] * row[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  const float scale = rsqrtf(partial[0] / static_cast<float>(n) + eps);
  for (int64_t i = threadIdx.x; i < n; i += kThreads)
    dst[i] = row[i] * scale * w[i];
}

} // namespace

extern "C" int mylib_rms_norm(THUNDER_CUSTOM_KERNEL_PARAMS) {
  if (num_inputs != 2 || num_outputs != 1 || num_scalars != 1)
    return 1;
  const thunder_tensor &x = inputs[0], &w = inputs[1], &y = outputs[0];
  if (x.dtype != THUNDER_DTYPE_FLOAT32 || w.dtype != THUNDER_DTYPE_FLOAT32 || x.rank < 1)
    return 2;
  const int64_t n = x.shape[x.rank - 1];
  const int64_t rows = n ? thunder_numel(&x) / n : 0;
  if (rows == 0)
    return 0;
  rms_norm_rows<<<static_cast<unsigned>(rows), kThreads, 0,
                  static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float *>(x.data), static_cast<const float *>(w.data),
      static_cast<float *>(y.data), n, static_cast<float>(scalars[0]));
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}
