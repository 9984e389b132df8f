// thunder_cuda.cuh: the support library that Thunder's generated CUDA code includes.
//
// Shipped inside the compiler and written next to the generated sources, so a
// compiled model needs only nvcc and the CUDA runtime (linked statically).
// Generated code emits elementwise and fused kernels itself and calls these
// templates for everything with more structure. This header is CUDA's
// dialect of the GPU support library: its element types and the dialect
// macros that the vendor-neutral headers are written against; those bring
// the scalar vocabulary (thunder_scalar.h, shared with the CPU), the GPU
// primitives (thunder_gpu.h: reductions with warp shuffles, data movement)
// and the composites (thunder_gpu_nn.h: softmax, norms, pooling,
// attention). thunder_cuda_libs.cuh adds what calls NVIDIA's libraries
// (GEMMs through cuBLASLt, convolutions through cuDNN) and the model's device
// state (streams, events, CUDA graphs).
//
// All tensors are dense row-major; shapes are int64_t arrays on the host.
// f16, bf16 and f8 are computed in float, f64 in double.
#ifndef THUNDER_CUDA_CUH
#define THUNDER_CUDA_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <library_types.h>

#include <dlfcn.h>
#include <strings.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>


// The dialect macros thunder_gpu.h and thunder_gpu_nn.h are written against.
#define THUNDER_GPU_NS thunder_cuda
#define THUNDER_WARP_SIZE 32
#define THUNDER_SHFL_XOR(v, lane_mask) __shfl_xor_sync(0xffffffffu, v, lane_mask)
#define THUNDER_SYNC_WARP() __syncwarp()
#define THUNDER_STREAM_T cudaStream_t
/// Threads a multiprocessor keeps resident: a full wave of blocks.
#define THUNDER_RESIDENT_THREADS 2048
/// Shared memory a block may use without opting in (static and dynamic).
#define THUNDER_SMEM_DEFAULT_BYTES (48 * 1024)
#define THUNDER_SMEM_OPT_IN(kernel, bytes)                                      \
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes))

#include "thunder_scalar.h"

namespace thunder_cuda {

using i64 = int64_t;
using f16 = __half;
using bf16 = __nv_bfloat16;
using f8e4m3fn = __nv_fp8_e4m3;
using f8e5m2 = __nv_fp8_e5m2;

/// float to an f8 type as PyTorch converts: to nearest even, and out of range
/// to NaN (e4m3fn, which has no infinity) or infinity (e5m2), not saturated
/// as the __nv_fp8 constructors do.
template <class T> __host__ __device__ inline T to_fp8(float x) {
  T r;
  r.__x = __nv_cvt_float_to_fp8(x, __NV_NOSAT,
                                std::is_same_v<T, f8e4m3fn> ? __NV_E4M3 : __NV_E5M2);
  return r;
}

} // namespace thunder_cuda

/// CUDA's narrow floats for the scalar vocabulary: computed in float, f8
/// stored through to_fp8.
namespace thunder_scalar {
template <> struct is_lowp<thunder_cuda::f16> : std::true_type {};
template <> struct is_lowp<thunder_cuda::bf16> : std::true_type {};
template <> struct is_lowp<thunder_cuda::f8e4m3fn> : std::true_type {};
template <> struct is_lowp<thunder_cuda::f8e5m2> : std::true_type {};
template <> struct narrow<thunder_cuda::f8e4m3fn> {
  static __host__ __device__ thunder_cuda::f8e4m3fn from(float x) {
    return thunder_cuda::to_fp8<thunder_cuda::f8e4m3fn>(x);
  }
};
template <> struct narrow<thunder_cuda::f8e5m2> {
  static __host__ __device__ thunder_cuda::f8e5m2 from(float x) {
    return thunder_cuda::to_fp8<thunder_cuda::f8e5m2>(x);
  }
};
} // namespace thunder_scalar

#include "thunder_gpu.h"
#include "thunder_gpu_nn.h"

#endif // THUNDER_CUDA_CUH
