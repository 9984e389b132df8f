// thunder_hip.h: the support library that Thunder's generated HIP code includes.
//
// HIP's dialect of the GPU support library, for a compile with clang alone
// (-nogpulib -nogpuinc: no ROCm headers or device libraries): the kernel
// language's qualifiers and built-in variables spelled with clang's AMDGPU
// builtins, the element types, wavefront shuffles through ds_bpermute, the
// device math (thunder_hip_math.h), and the dialect macros the
// vendor-neutral headers are written against. Those bring the scalar
// vocabulary (thunder_scalar.h), the GPU primitives (thunder_gpu.h) and the
// composites (thunder_gpu_nn.h). thunder_hip_runtime.h (included here)
// loads libamdhip64 at run time and launches kernels through its module
// API; thunder_hip_libs.h adds hipBLASLt/rocBLAS, MIOpen and the model's
// device state.
//
// Wavefronts are 64 lanes (CDNA: gfx90a, gfx942, gfx950). All tensors are
// dense row-major; f16, bf16 and f8 are computed in float, f64 in double.
#ifndef THUNDER_HIP_H
#define THUNDER_HIP_H

// The kernel language (hip_runtime.h's spellings).
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __align__(n) __attribute__((aligned(n)))
/// At most `n` threads per block (HIP's __launch_bounds__(n)).
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
#ifndef __HIPCC__
#define __HIPCC__ 1 // thunder_scalar.h's test for a GPU compile
#endif

// Before any standard header: see thunder_hip_math.h.
#include "thunder_hip_math.h"

#include <dlfcn.h>
#include <strings.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
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

// What CUDA's and HIP's headers give device code in the global namespace:
// memcpy (the support headers' vector loads), min and max.
__device__ inline void *memcpy(void *dst, const void *src, __SIZE_TYPE__ n) {
  return __builtin_memcpy(dst, src, n);
}
#define THUNDER_HIP_MINMAX(T)                                                                  \
  __device__ inline T min(T a, T b) { return b < a ? b : a; }                                  \
  __device__ inline T max(T a, T b) { return a < b ? b : a; }
THUNDER_HIP_MINMAX(int)
THUNDER_HIP_MINMAX(unsigned)
THUNDER_HIP_MINMAX(long)
THUNDER_HIP_MINMAX(unsigned long)
THUNDER_HIP_MINMAX(long long)
THUNDER_HIP_MINMAX(unsigned long long)
THUNDER_HIP_MINMAX(float)
THUNDER_HIP_MINMAX(double)
#undef THUNDER_HIP_MINMAX

/// A launch's grid and block sizes (HIP's dim3).
struct dim3 {
  unsigned x, y, z;
  constexpr __host__ __device__ dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1)
      : x(x_), y(y_), z(z_) {}
};

/// The vector types the support headers' 8- and 16-byte loads use.
struct __attribute__((aligned(8))) uint2 {
  unsigned x, y;
};
struct __attribute__((aligned(16))) uint4 {
  unsigned x, y, z, w;
};

// threadIdx, blockIdx, blockDim, gridDim: properties that read the
// work-item registers and the dispatch packet.
#define THUNDER_HIP_BUILTIN_VAR(type, getx, gety, getz)                                        \
  struct type {                                                                                \
    static __device__ unsigned get_x() { return getx; }                                        \
    static __device__ unsigned get_y() { return gety; }                                        \
    static __device__ unsigned get_z() { return getz; }                                        \
    __declspec(property(get = get_x)) unsigned x;                                              \
    __declspec(property(get = get_y)) unsigned y;                                              \
    __declspec(property(get = get_z)) unsigned z;                                              \
  }
THUNDER_HIP_BUILTIN_VAR(thunder_hip_thread_idx, __builtin_amdgcn_workitem_id_x(),
                        __builtin_amdgcn_workitem_id_y(), __builtin_amdgcn_workitem_id_z());
THUNDER_HIP_BUILTIN_VAR(thunder_hip_block_idx, __builtin_amdgcn_workgroup_id_x(),
                        __builtin_amdgcn_workgroup_id_y(), __builtin_amdgcn_workgroup_id_z());
THUNDER_HIP_BUILTIN_VAR(thunder_hip_block_dim, __builtin_amdgcn_workgroup_size_x(),
                        __builtin_amdgcn_workgroup_size_y(), __builtin_amdgcn_workgroup_size_z());
THUNDER_HIP_BUILTIN_VAR(thunder_hip_grid_dim,
                        __builtin_amdgcn_grid_size_x() / __builtin_amdgcn_workgroup_size_x(),
                        __builtin_amdgcn_grid_size_y() / __builtin_amdgcn_workgroup_size_y(),
                        __builtin_amdgcn_grid_size_z() / __builtin_amdgcn_workgroup_size_z());
#undef THUNDER_HIP_BUILTIN_VAR
extern const __device__ thunder_hip_thread_idx threadIdx;
extern const __device__ thunder_hip_block_idx blockIdx;
extern const __device__ thunder_hip_block_dim blockDim;
extern const __device__ thunder_hip_grid_dim gridDim;

/// A block-wide barrier that also orders the block's LDS and global
/// accesses (hip_runtime.h's __syncthreads).
__device__ inline void __syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// The dialect macros thunder_gpu.h and thunder_gpu_nn.h are written against.
#define THUNDER_GPU_NS thunder_hip
/// CDNA's wavefront: 64 lanes in lockstep.
#define THUNDER_WARP_SIZE 64
#define THUNDER_SHFL_XOR(v, lane_mask) ::thunder_hip::shfl_xor(v, lane_mask)
#define THUNDER_SYNC_WARP() __builtin_amdgcn_wave_barrier()
#define THUNDER_STREAM_T ::hipStream_t
/// Threads a compute unit keeps resident: 32 wavefronts of 64.
#define THUNDER_RESIDENT_THREADS 2048
/// LDS a block may use: 64 KiB on gfx90a and gfx942, 160 KiB on gfx950. The
/// build defines THUNDER_HIP_LDS_BYTES as the smallest among the library's
/// architectures (hipLdsBytes in HIPBackend.cpp).
#ifndef THUNDER_HIP_LDS_BYTES
#define THUNDER_HIP_LDS_BYTES (64 * 1024)
#endif
#define THUNDER_SMEM_DEFAULT_BYTES THUNDER_HIP_LDS_BYTES
/// HIP has no opt-in: a block may use up to the device's LDS. A larger
/// request (only gfx950 has more) fails at launch, reported by the run.
#define THUNDER_SMEM_OPT_IN(kernel, bytes) ((void)(kernel), (void)(bytes))
/// The attention kernel's tile of keys may shrink to 8 (each key then scored
/// by 8 lanes) so that K and V tiles of head dims up to 256, f64 too, fit the
/// LDS of gfx90a and gfx942: a wavefront's 64 keys of width 128 in f32 would not.
#define THUNDER_ATTENTION_MIN_TILE 8

#include "thunder_hip_runtime.h"
#include "thunder_scalar.h"

namespace thunder_hip {

using i64 = int64_t;
using f16 = _Float16;
using bf16 = __bf16;

/// An 8-bit float (E exponent bits, M mantissa bits), converted as PyTorch
/// does: to nearest even; out of range to NaN (e4m3fn: no infinity) or
/// infinity (e5m2); e4m3fn's only NaN is S.1111.111.
template <int E, int M, bool FN> struct f8 {
  uint8_t __x;
  static constexpr int kBias = (1 << (E - 1)) - 1;
  /// The largest finite value: 448 (e4m3fn), 57344 (e5m2).
  static constexpr float kMax = FN ? 448.0f : 57344.0f;

  f8() = default;
  __host__ __device__ explicit f8(float x) { __x = encode(x); }
  __host__ __device__ operator float() const { return decode(__x); }

  static __host__ __device__ uint8_t encode(float x) {
    uint8_t sign = (__builtin_bit_cast(uint32_t, x) >> 24) & 0x80;
    float a = __builtin_fabsf(x);
    if (a != a)
      return sign | 0x7f;
    // The spacing of representable values around a: 2^(exponent - M),
    // and 2^(1 - bias - M) among the subnormals.
    int ex = a == 0 ? 0 : int((__builtin_bit_cast(uint32_t, a) >> 23) & 0xff) - 127;
    int q = ex < 1 - kBias ? 1 - kBias - M : ex - M;
    float r = __builtin_rintf(__builtin_ldexpf(a, -q)); // to nearest even
    float v = __builtin_ldexpf(r, q);
    if (v > kMax)
      return sign | (FN ? 0x7f : 0x7c);
    if (v == 0)
      return sign;
    int ev = int((__builtin_bit_cast(uint32_t, v) >> 23) & 0xff) - 127;
    if (ev < 1 - kBias) // subnormal: the mantissa counts the spacing
      return sign | uint8_t(__builtin_ldexpf(v, kBias - 1 + M));
    uint32_t mant = (__builtin_bit_cast(uint32_t, v) >> (23 - M)) & ((1u << M) - 1);
    return sign | uint8_t((ev + kBias) << M) | uint8_t(mant);
  }
  static __host__ __device__ float decode(uint8_t b) {
    float sign = (b & 0x80) ? -1.0f : 1.0f;
    int e = (b >> M) & ((1 << E) - 1), m = b & ((1 << M) - 1);
    if (FN ? (e == (1 << E) - 1 && m == (1 << M) - 1) : (e == (1 << E) - 1))
      return (FN || m) ? __builtin_nanf("") : sign * __builtin_inff();
    if (e == 0)
      return sign * __builtin_ldexpf(float(m), 1 - kBias - M);
    return sign * __builtin_ldexpf(float(m + (1 << M)), e - kBias - M);
  }
};
using f8e4m3fn = f8<4, 3, true>;
using f8e5m2 = f8<5, 2, false>;

/// The lane's index in its wavefront.
__device__ inline int lane_id() {
  return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}

/// v from lane (this lane ^ lane_mask) of the wavefront, through
/// ds_bpermute (a 4-byte cross-lane read; wider values in 4-byte parts).
template <class T> __device__ inline T shfl_xor(T v, int lane_mask) {
  const int address = (lane_id() ^ lane_mask) << 2;
  constexpr int kWords = (sizeof(T) + 3) / 4;
  int words[kWords] = {};
  __builtin_memcpy(words, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < kWords; ++i)
    words[i] = __builtin_amdgcn_ds_bpermute(address, words[i]);
  T out;
  __builtin_memcpy(&out, words, sizeof(T));
  return out;
}

} // namespace thunder_hip

/// HIP's narrow floats for the scalar vocabulary: computed in float.
namespace thunder_scalar {
template <> struct is_lowp<thunder_hip::f16> : std::true_type {};
template <> struct is_lowp<thunder_hip::bf16> : std::true_type {};
template <> struct is_lowp<thunder_hip::f8e4m3fn> : std::true_type {};
template <> struct is_lowp<thunder_hip::f8e5m2> : std::true_type {};
} // namespace thunder_scalar

#include "thunder_gpu.h"
#include "thunder_gpu_nn.h"

#endif // THUNDER_HIP_H
