// thunder_cuda.cuh: the support library that Thunder's generated CUDA code includes.
//
// Shipped inside the compiler and written next to the generated sources, so a
// compiled model needs only nvcc and the CUDA runtime (linked statically).
// Generated code emits elementwise and fused kernels itself and calls these
// templates for everything with more structure: reductions (warp shuffles and
// block reductions), row-wise softmax and normalization (the row kept in
// shared memory when it fits), data movement, pooling and an attention kernel
// (FlashAttention-style online softmax). thunder_cuda_libs.cuh adds what
// calls NVIDIA's libraries (GEMMs through cuBLASLt, convolutions through
// cuDNN) and the model's device state (streams, events, CUDA graphs).
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

namespace thunder_cuda {

using i64 = int64_t;
using f16 = __half;
using bf16 = __nv_bfloat16;
using f8e4m3fn = __nv_fp8_e4m3;
using f8e5m2 = __nv_fp8_e5m2;

/// The largest rank the index helpers handle.
constexpr int kMaxRank = 8;
/// Threads per block of the one-dimensional kernels.
constexpr int kBlock = 256;

//===--------------------------------------------------------------------===//
// Element types and the scalar vocabulary of generated code
//===--------------------------------------------------------------------===//

template <class T> struct is_lowp : std::false_type {};
template <> struct is_lowp<f16> : std::true_type {};
template <> struct is_lowp<bf16> : std::true_type {};
template <> struct is_lowp<f8e4m3fn> : std::true_type {};
template <> struct is_lowp<f8e5m2> : std::true_type {};

/// The type arithmetic on T happens in.
template <class T> struct compute { using type = T; };
template <> struct compute<f16> { using type = float; };
template <> struct compute<bf16> { using type = float; };
template <> struct compute<f8e4m3fn> { using type = float; };
template <> struct compute<f8e5m2> { using type = float; };
template <class T> using compute_t = typename compute<T>::type;

/// The accumulator of reductions and GEMM-like loops over T.
template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                 std::conditional_t<is_lowp<T>::value ||
                                                        std::is_same_v<T, float>,
                                                    float, compute_t<T>>>;

template <class T> __host__ __device__ inline compute_t<T> cv(T x) {
  if constexpr (is_lowp<T>::value)
    return static_cast<float>(x);
  else
    return x;
}

/// float to an f8 type as PyTorch converts: to nearest even, and out of range
/// to NaN (e4m3fn, which has no infinity) or infinity (e5m2), not saturated
/// as the __nv_fp8 constructors do.
template <class T> __host__ __device__ inline T to_fp8(float x) {
  T r;
  r.__x = __nv_cvt_float_to_fp8(x, __NV_NOSAT,
                                std::is_same_v<T, f8e4m3fn> ? __NV_E4M3 : __NV_E5M2);
  return r;
}

/// Stores a compute-typed value as T with PyTorch's conversion rules: to bool
/// is `!= 0`, float to integer truncates (NaN gives 0), narrowing floats round
/// to nearest even.
template <class T, class U> __host__ __device__ inline T st(U x) {
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (is_lowp<U>::value)
      return static_cast<float>(x) != 0.0f;
    else
      return x != U(0);
  } else if constexpr (std::is_same_v<T, f8e4m3fn> || std::is_same_v<T, f8e5m2>) {
    return to_fp8<T>(static_cast<float>(x));
  } else if constexpr (is_lowp<T>::value) {
    return T(static_cast<float>(x));
  } else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<U>) {
    return x != x ? T(0) : static_cast<T>(std::trunc(x));
  } else if constexpr (is_lowp<U>::value) {
    return st<T>(static_cast<float>(x));
  } else {
    return static_cast<T>(x);
  }
}

template <class T> __host__ __device__ inline T relu(T x) {
  return x > T(0) ? x : (x != x ? x : T(0));
}
__host__ __device__ inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
__host__ __device__ inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
template <class T> __host__ __device__ inline T gelu(T x) {
  return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
}
template <class T> __host__ __device__ inline T gelu_tanh(T x) {
  const T k = T(0.79788456080286535588); // std::sqrt(2/pi)
  return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
}
template <class T> __host__ __device__ inline T silu(T x) { return x * sigmoid(x); }
template <class T> __host__ __device__ inline T maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (a != a || b != b)
      return a + b; // NaN
  return a > b ? a : b;
}
template <class T> __host__ __device__ inline T minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (a != a || b != b)
      return a + b; // NaN
  return a < b ? a : b;
}
template <class T> __host__ __device__ inline T div_floor(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::floor(a / b);
  } else {
    if (b == 0)
      return 0; // PyTorch raises; compiled code cannot, and returns 0
    T q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
  }
}
template <class T> __host__ __device__ inline T div_trunc(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return std::trunc(a / b);
  else
    return b == 0 ? T(0) : a / b;
}
/// Python's remainder (the sign of the divisor).
template <class T> __host__ __device__ inline T py_remainder(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T r = std::fmod(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  } else {
    if (b == 0)
      return 0;
    T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  }
}
template <class T> __host__ __device__ inline T power(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::pow(a, b);
  } else {
    if (b < 0)
      return a == 1 ? T(1) : (a == -1 ? T((b % 2) ? -1 : 1) : T(0));
    T r = 1;
    for (; b; b >>= 1, a *= a)
      if (b & 1)
        r *= a;
    return r;
  }
}

/// The lowest / highest value of an accumulator (infinities for floats).
template <class A> __host__ __device__ inline A lowest() {
  if constexpr (std::is_floating_point_v<A>)
    return -std::numeric_limits<A>::infinity();
  else
    return std::numeric_limits<A>::lowest();
}
template <class A> __host__ __device__ inline A highest() {
  if constexpr (std::is_floating_point_v<A>)
    return std::numeric_limits<A>::infinity();
  else
    return std::numeric_limits<A>::max();
}

//===--------------------------------------------------------------------===//
// Vector loads and stores (16 bytes at most), for the generated kernels
//===--------------------------------------------------------------------===//

template <int Bytes> struct raw;
template <> struct raw<1> { using type = uint8_t; };
template <> struct raw<2> { using type = uint16_t; };
template <> struct raw<4> { using type = uint32_t; };
template <> struct raw<8> { using type = uint2; };
template <> struct raw<16> { using type = uint4; };

/// Whether `p` may be accessed V elements at a time.
template <int V, class T> __device__ inline bool aligned(const T *p) {
  return reinterpret_cast<uintptr_t>(p) % (sizeof(T) * V) == 0;
}

template <int V, class T> __device__ inline void load_vec(const T *p, T (&out)[V]) {
  using R = typename raw<sizeof(T) * V>::type;
  R r = *reinterpret_cast<const R *>(p);
  memcpy(out, &r, sizeof(R));
}

template <int V, class T> __device__ inline void store_vec(T *p, const T (&in)[V]) {
  using R = typename raw<sizeof(T) * V>::type;
  R r;
  memcpy(&r, in, sizeof(R));
  *reinterpret_cast<R *>(p) = r;
}

/// The block's dynamic shared memory, aligned for any element type.
template <class A> __device__ inline A *dynamic_smem() {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  return reinterpret_cast<A *>(smem_raw);
}

/// The index of this thread in a one-dimensional grid, and the grid's size.
__device__ inline i64 thread_index() { return i64(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline i64 grid_size() { return i64(gridDim.x) * blockDim.x; }

//===--------------------------------------------------------------------===//
// Warp and block reductions
//===--------------------------------------------------------------------===//

enum class Reduce { Sum, Mean, Max, Min, Prod };

template <Reduce K, class A> __device__ inline A reduce_init() {
  if constexpr (K == Reduce::Sum || K == Reduce::Mean)
    return A(0);
  else if constexpr (K == Reduce::Prod)
    return A(1);
  else if constexpr (K == Reduce::Max)
    return lowest<A>();
  else
    return highest<A>();
}

/// Combines two partial results; NaN wins for max and min (PyTorch).
template <Reduce K, class A> __device__ inline A reduce_op(A a, A b) {
  if constexpr (K == Reduce::Sum || K == Reduce::Mean)
    return a + b;
  else if constexpr (K == Reduce::Prod)
    return a * b;
  else if constexpr (K == Reduce::Max)
    return maximum(a, b);
  else
    return minimum(a, b);
}

template <Reduce K, class A> __device__ inline A warp_reduce(A v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = reduce_op<K>(v, static_cast<A>(__shfl_xor_sync(0xffffffffu, v, offset)));
  return v;
}

/// Reduces `v` over the block (blockDim.x a multiple of 32, at most 1024); every
/// thread gets the result. `scratch` holds 32 values.
template <Reduce K, class A> __device__ inline A block_reduce(A v, A *scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  v = warp_reduce<K>(v);
  __syncthreads(); // scratch may still be read by a previous reduction
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : reduce_init<K, A>();
  return warp_reduce<K>(v);
}

//===--------------------------------------------------------------------===//
// The run's context: stream, device facts, library workspace, scratch
//===--------------------------------------------------------------------===//

struct Lt;  // cuBLASLt, in thunder_cuda_libs.cuh
struct Dnn; // cuDNN, in thunder_cuda_libs.cuh

/// What every enqueue helper needs: where to launch and what it may use.
struct Ctx {
  cudaStream_t stream = nullptr;
  int sms = 1;               ///< multiprocessors of the device
  Lt *lt = nullptr;          ///< cuBLASLt, or null when the model needs none
  Dnn *dnn = nullptr;        ///< cuDNN, or null when the model needs none
  /// This stream's workspace for cuBLASLt and cuDNN (their calls on one
  /// stream are ordered, so they share it).
  void *lib_workspace = nullptr;
  size_t lib_workspace_bytes = 0;
  void *scratch = nullptr;   ///< per-kernel scratch (im2col) of this stream
  size_t scratch_bytes = 0;
  /// Set by a failing library call: 1000 + cuBLASLt's status, 2000 + cuDNN's.
  int *error = nullptr;
};

/// Blocks for `work` items of `block` threads each, at most one full wave of
/// resident blocks (the kernels loop over the rest).
inline unsigned grid_for(i64 work, int block, const Ctx &c) {
  i64 blocks = (work + block - 1) / block;
  i64 cap = i64(c.sms) * (2048 / block);
  return unsigned(std::max<i64>(1, std::min(blocks, cap)));
}

inline i64 numel(const i64 *shape, int rank) {
  i64 n = 1;
  for (int i = 0; i < rank; ++i)
    n *= shape[i];
  return n;
}

inline void strides_of(const i64 *shape, int rank, i64 *strides) {
  i64 s = 1;
  for (int i = rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape[i];
  }
}

//===--------------------------------------------------------------------===//
// Data movement
//===--------------------------------------------------------------------===//

/// An output shape and, per output dim, the input stride it advances by.
struct Strided {
  int rank;
  i64 shape[kMaxRank];
  i64 stride[kMaxRank];
};

__device__ inline i64 strided_offset(const Strided &s, i64 flat) {
  i64 off = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    i64 i = flat % s.shape[d];
    flat /= s.shape[d];
    off += i * s.stride[d];
  }
  return off;
}

/// out[flat] = in[base + offset(flat)]: broadcasts, transposes, slices.
template <class R>
__global__ void __launch_bounds__(kBlock)
    strided_copy_kernel(const R *__restrict__ in, i64 base, Strided s, R *__restrict__ out, i64 n) {
  for (i64 i = thread_index(); i < n; i += grid_size())
    out[i] = in[base + strided_offset(s, i)];
}

/// out[base + offset(flat)] = in[flat]: writes a dense input into a strided
/// window of the output (concat).
template <class R>
__global__ void __launch_bounds__(kBlock)
    strided_scatter_kernel(const R *__restrict__ in, Strided s, R *__restrict__ out, i64 base, i64 n) {
  for (i64 i = thread_index(); i < n; i += grid_size())
    out[base + strided_offset(s, i)] = in[i];
}

template <class T> using bits_t = typename raw<sizeof(T)>::type;

template <class T>
void strided_copy(const Ctx &c, const T *in, i64 base, const Strided &s, T *out) {
  i64 n = numel(s.shape, s.rank);
  if (n == 0)
    return;
  using R = bits_t<T>;
  strided_copy_kernel<R><<<grid_for(n, kBlock, c), kBlock, 0, c.stream>>>(
      reinterpret_cast<const R *>(in), base, s, reinterpret_cast<R *>(out), n);
}

template <class T>
void broadcast_in_dim(const Ctx &c, const T *in, const i64 *in_shape, int in_rank, T *out,
                      const i64 *out_shape, int out_rank, const i64 *dims) {
  Strided s{out_rank, {}, {}};
  i64 in_strides[kMaxRank];
  strides_of(in_shape, in_rank, in_strides);
  for (int i = 0; i < out_rank; ++i) {
    s.shape[i] = out_shape[i];
    s.stride[i] = 0;
  }
  for (int i = 0; i < in_rank; ++i)
    if (in_shape[i] != 1)
      s.stride[dims[i]] = in_strides[i];
  strided_copy(c, in, 0, s, out);
}

template <class T>
void transpose(const Ctx &c, const T *in, const i64 *in_shape, int rank, const i64 *perm, T *out) {
  Strided s{rank, {}, {}};
  i64 in_strides[kMaxRank];
  strides_of(in_shape, rank, in_strides);
  for (int i = 0; i < rank; ++i) {
    s.shape[i] = in_shape[perm[i]];
    s.stride[i] = in_strides[perm[i]];
  }
  strided_copy(c, in, 0, s, out);
}

template <class T>
void slice(const Ctx &c, const T *in, const i64 *in_shape, int rank, const i64 *start,
           const i64 *step, T *out, const i64 *out_shape) {
  Strided s{rank, {}, {}};
  i64 in_strides[kMaxRank];
  strides_of(in_shape, rank, in_strides);
  i64 base = 0;
  for (int i = 0; i < rank; ++i) {
    base += start[i] * in_strides[i];
    s.shape[i] = out_shape[i];
    s.stride[i] = step[i] * in_strides[i];
  }
  strided_copy(c, in, base, s, out);
}

/// Concatenates `n` inputs along `dim`: one strided scatter per input.
template <class T>
void concat(const Ctx &c, const T *const *ins, const i64 *const *in_shapes, int n, int rank,
            int dim, T *out, const i64 *out_shape) {
  i64 out_strides[kMaxRank];
  strides_of(out_shape, rank, out_strides);
  i64 at = 0;
  using R = bits_t<T>;
  for (int k = 0; k < n; ++k) {
    Strided s{rank, {}, {}};
    for (int d = 0; d < rank; ++d) {
      s.shape[d] = in_shapes[k][d];
      s.stride[d] = out_strides[d];
    }
    i64 count = numel(in_shapes[k], rank);
    if (count > 0)
      strided_scatter_kernel<R><<<grid_for(count, kBlock, c), kBlock, 0, c.stream>>>(
          reinterpret_cast<const R *>(ins[k]), s, reinterpret_cast<R *>(out),
          at * out_strides[dim], count);
    at += in_shapes[k][dim];
  }
}

struct PadInfo {
  int rank;
  i64 in_shape[kMaxRank], out_shape[kMaxRank], in_stride[kMaxRank], low[kMaxRank];
};

template <class T>
__global__ void __launch_bounds__(kBlock)
    pad_kernel(const T *__restrict__ in, PadInfo p, T value, T *__restrict__ out, i64 n) {
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 rest = flat, off = 0;
    bool inside = true;
    for (int d = p.rank - 1; d >= 0; --d) {
      i64 i = rest % p.out_shape[d] - p.low[d];
      rest /= p.out_shape[d];
      inside = inside && i >= 0 && i < p.in_shape[d];
      off += i * p.in_stride[d];
    }
    out[flat] = inside ? in[off] : value;
  }
}

/// Constant padding (negative padding crops).
template <class T>
void pad(const Ctx &c, const T *in, const i64 *in_shape, int rank, const i64 *low, T value,
         T *out, const i64 *out_shape) {
  PadInfo p{rank, {}, {}, {}, {}};
  strides_of(in_shape, rank, p.in_stride);
  for (int d = 0; d < rank; ++d) {
    p.in_shape[d] = in_shape[d];
    p.out_shape[d] = out_shape[d];
    p.low[d] = low[d];
  }
  i64 n = numel(out_shape, rank);
  if (n > 0)
    pad_kernel<T><<<grid_for(n, kBlock, c), kBlock, 0, c.stream>>>(in, p, value, out, n);
}

template <class T>
__global__ void __launch_bounds__(kBlock) iota_kernel(T *out, i64 n, i64 inner, i64 size) {
  for (i64 flat = thread_index(); flat < n; flat += grid_size())
    out[flat] = st<T>(static_cast<compute_t<T>>((flat / inner) % size));
}

template <class T> void iota(const Ctx &c, T *out, const i64 *shape, int rank, int dim) {
  i64 n = numel(shape, rank);
  i64 inner = numel(shape + dim + 1, rank - dim - 1);
  if (n > 0)
    iota_kernel<T><<<grid_for(n, kBlock, c), kBlock, 0, c.stream>>>(out, n, inner, shape[dim]);
}

template <class T>
__global__ void __launch_bounds__(kBlock) fill_kernel(T *out, T value, i64 n) {
  for (i64 i = thread_index(); i < n; i += grid_size())
    out[i] = value;
}

template <class T> void fill(const Ctx &c, T *out, i64 n, T value) {
  if (n > 0)
    fill_kernel<T><<<grid_for(n, kBlock, c), kBlock, 0, c.stream>>>(out, value, n);
}

/// index_select / embedding: out[o, k, i] = in[o, index[k], i] (zero when the
/// index is out of range, rather than reading out of bounds).
template <class T, class I>
__global__ void __launch_bounds__(kBlock)
    index_select_kernel(const T *__restrict__ in, const I *__restrict__ index, T *__restrict__ out,
                        i64 outer, i64 n_index, i64 inner, i64 size) {
  i64 n = outer * n_index * inner;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 i = flat % inner, rest = flat / inner;
    i64 k = rest % n_index, o = rest / n_index;
    i64 at = static_cast<i64>(index[k]);
    out[flat] = (at < 0 || at >= size) ? T() : in[(o * size + at) * inner + i];
  }
}

template <class T, class I>
void index_select(const Ctx &c, const T *in, const i64 *in_shape, int rank, int dim,
                  const I *index, i64 n_index, T *out) {
  i64 outer = numel(in_shape, dim);
  i64 inner = numel(in_shape + dim + 1, rank - dim - 1);
  i64 n = outer * n_index * inner;
  using R = bits_t<T>;
  if (n > 0)
    index_select_kernel<R, I><<<grid_for(n, kBlock, c), kBlock, 0, c.stream>>>(
        reinterpret_cast<const R *>(in), index, reinterpret_cast<R *>(out), outer, n_index,
        inner, in_shape[dim]);
}

struct GatherInfo {
  int rank, dim;
  i64 index_shape[kMaxRank], in_shape[kMaxRank], in_stride[kMaxRank];
};

template <class T, class I>
__global__ void __launch_bounds__(kBlock)
    gather_kernel(const T *__restrict__ in, const I *__restrict__ index, GatherInfo g,
                  T *__restrict__ out, i64 n) {
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 rest = flat, off = 0;
    bool ok = true;
    for (int d = g.rank - 1; d >= 0; --d) {
      i64 i = rest % g.index_shape[d];
      rest /= g.index_shape[d];
      if (d == g.dim) {
        i = static_cast<i64>(index[flat]);
        ok = ok && i >= 0 && i < g.in_shape[d];
      }
      off += i * g.in_stride[d];
    }
    out[flat] = ok ? in[off] : T();
  }
}

template <class T, class I>
void gather(const Ctx &c, const T *in, const i64 *in_shape, int rank, int dim, const I *index,
            const i64 *index_shape, T *out) {
  GatherInfo g{rank, dim, {}, {}, {}};
  strides_of(in_shape, rank, g.in_stride);
  for (int d = 0; d < rank; ++d) {
    g.index_shape[d] = index_shape[d];
    g.in_shape[d] = in_shape[d];
  }
  i64 n = numel(index_shape, rank);
  using R = bits_t<T>;
  if (n > 0)
    gather_kernel<R, I><<<grid_for(n, kBlock, c), kBlock, 0, c.stream>>>(
        reinterpret_cast<const R *>(in), index, g, reinterpret_cast<R *>(out), n);
}

//===--------------------------------------------------------------------===//
// Reductions
//===--------------------------------------------------------------------===//

/// Rows of `size` contiguous elements, one warp per row (rows of at most
/// 1024 elements) or one block per row: warp shuffles, then a block reduction.
template <Reduce K, class T, bool WarpPerRow>
__global__ void __launch_bounds__(kBlock)
    reduce_rows_kernel(const T *__restrict__ in, T *__restrict__ out, i64 rows, i64 size) {
  using A = acc_t<T>;
  __shared__ A scratch[32];
  if constexpr (WarpPerRow) {
    const int lane = threadIdx.x & 31;
    const i64 warps_per_block = blockDim.x / 32;
    for (i64 r = i64(blockIdx.x) * warps_per_block + threadIdx.x / 32; r < rows;
         r += i64(gridDim.x) * warps_per_block) {
      A acc = reduce_init<K, A>();
      const T *x = in + r * size;
      for (i64 k = lane; k < size; k += 32)
        acc = reduce_op<K>(acc, static_cast<A>(cv(x[k])));
      acc = warp_reduce<K>(acc);
      if (lane == 0)
        out[r] = st<T>(static_cast<compute_t<T>>(K == Reduce::Mean ? acc / A(size) : acc));
    }
  } else {
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
      A acc = reduce_init<K, A>();
      const T *x = in + r * size;
      for (i64 k = threadIdx.x; k < size; k += blockDim.x)
        acc = reduce_op<K>(acc, static_cast<A>(cv(x[k])));
      acc = block_reduce<K>(acc, scratch);
      if (threadIdx.x == 0)
        out[r] = st<T>(static_cast<compute_t<T>>(K == Reduce::Mean ? acc / A(size) : acc));
    }
  }
}

/// [outer, size, inner] reduced over the middle dim, one thread per (outer,
/// inner) column: neighbouring threads read neighbouring elements.
template <Reduce K, class T>
__global__ void __launch_bounds__(kBlock)
    reduce_cols_kernel(const T *__restrict__ in, T *__restrict__ out, i64 outer, i64 size,
                       i64 inner) {
  using A = acc_t<T>;
  i64 n = outer * inner;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 o = flat / inner, i = flat % inner;
    const T *x = in + o * size * inner + i;
    A acc = reduce_init<K, A>();
    for (i64 k = 0; k < size; ++k)
      acc = reduce_op<K>(acc, static_cast<A>(cv(x[k * inner])));
    out[flat] = st<T>(static_cast<compute_t<T>>(K == Reduce::Mean ? acc / A(size) : acc));
  }
}

/// Any set of reduced dims: one thread per output element, the reduced
/// elements visited through their strides.
template <Reduce K, class T>
__global__ void __launch_bounds__(kBlock)
    reduce_strided_kernel(const T *__restrict__ in, T *__restrict__ out, Strided kept,
                          Strided red, i64 n_out, i64 n_red) {
  using A = acc_t<T>;
  for (i64 o = thread_index(); o < n_out; o += grid_size()) {
    const T *x = in + strided_offset(kept, o);
    A acc = reduce_init<K, A>();
    for (i64 r = 0; r < n_red; ++r)
      acc = reduce_op<K>(acc, static_cast<A>(cv(x[strided_offset(red, r)])));
    out[o] = st<T>(static_cast<compute_t<T>>(K == Reduce::Mean ? acc / A(n_red) : acc));
  }
}

template <Reduce K, class T>
void reduce_k(const Ctx &c, const T *in, const i64 *shape, int rank, const int *reduced, T *out) {
  i64 in_strides[kMaxRank];
  strides_of(shape, rank, in_strides);
  int first = -1, last = -1, count = 0;
  for (int d = 0; d < rank; ++d)
    if (reduced[d]) {
      if (first < 0)
        first = d;
      last = d;
      ++count;
    }
  i64 n_out = 1, n_red = 1;
  for (int d = 0; d < rank; ++d)
    (reduced[d] ? n_red : n_out) *= shape[d];
  if (n_out == 0)
    return;
  if (count == last - first + 1) {
    // The reduced dims are one contiguous block: [outer, size, inner].
    i64 outer = numel(shape, first), size = numel(shape + first, count);
    i64 inner = numel(shape + last + 1, rank - last - 1);
    if (inner == 1) {
      if (size <= 1024) {
        unsigned blocks = unsigned(std::min<i64>((outer + 7) / 8, i64(c.sms) * 8));
        reduce_rows_kernel<K, T, true><<<std::max(1u, blocks), kBlock, 0, c.stream>>>(
            in, out, outer, size);
      } else {
        unsigned blocks = unsigned(std::min<i64>(outer, i64(c.sms) * 8));
        reduce_rows_kernel<K, T, false><<<std::max(1u, blocks), kBlock, 0, c.stream>>>(
            in, out, outer, size);
      }
    } else {
      reduce_cols_kernel<K, T><<<grid_for(outer * inner, kBlock, c), kBlock, 0, c.stream>>>(
          in, out, outer, size, inner);
    }
    return;
  }
  Strided kept{0, {}, {}}, red{0, {}, {}};
  for (int d = 0; d < rank; ++d) {
    Strided &s = reduced[d] ? red : kept;
    s.shape[s.rank] = shape[d];
    s.stride[s.rank] = in_strides[d];
    ++s.rank;
  }
  reduce_strided_kernel<K, T><<<grid_for(n_out, kBlock, c), kBlock, 0, c.stream>>>(
      in, out, kept, red, n_out, n_red);
}

template <class T>
void reduce(const Ctx &c, const T *in, const i64 *shape, int rank, const int *reduced,
            Reduce kind, T *out) {
  switch (kind) {
  case Reduce::Sum: return reduce_k<Reduce::Sum>(c, in, shape, rank, reduced, out);
  case Reduce::Mean: return reduce_k<Reduce::Mean>(c, in, shape, rank, reduced, out);
  case Reduce::Max: return reduce_k<Reduce::Max>(c, in, shape, rank, reduced, out);
  case Reduce::Min: return reduce_k<Reduce::Min>(c, in, shape, rank, reduced, out);
  case Reduce::Prod: return reduce_k<Reduce::Prod>(c, in, shape, rank, reduced, out);
  }
}

/// Index of the first max (is_max) or min along the middle dim; NaN counts
/// as the extreme, as in PyTorch.
template <class T>
__global__ void __launch_bounds__(kBlock)
    arg_reduce_kernel(const T *__restrict__ in, int64_t *__restrict__ out, i64 outer, i64 size,
                      i64 inner, bool is_max) {
  i64 n = outer * inner;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 o = flat / inner, i = flat % inner;
    const T *x = in + o * size * inner + i;
    i64 best = 0;
    auto bv = cv(x[0]);
    for (i64 k = 1; k < size; ++k) {
      auto v = cv(x[k * inner]);
      if (bv != bv)
        break;
      if (v != v || (is_max ? v > bv : v < bv)) {
        bv = v;
        best = k;
      }
    }
    out[flat] = best;
  }
}

template <class T>
void arg_reduce(const Ctx &c, const T *in, const i64 *shape, int rank, int dim, bool is_max,
                int64_t *out) {
  i64 outer = numel(shape, dim), size = shape[dim];
  i64 inner = numel(shape + dim + 1, rank - dim - 1);
  if (outer * inner > 0)
    arg_reduce_kernel<T><<<grid_for(outer * inner, kBlock, c), kBlock, 0, c.stream>>>(
        in, out, outer, size, inner, is_max);
}

/// One thread per line: a sequential scan (accumulated in the compute type).
template <class T>
__global__ void __launch_bounds__(kBlock)
    cumsum_kernel(const T *__restrict__ in, T *__restrict__ out, i64 outer, i64 size, i64 inner) {
  i64 n = outer * inner;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 o = flat / inner, i = flat % inner;
    compute_t<T> acc = 0;
    for (i64 k = 0; k < size; ++k) {
      i64 at = (o * size + k) * inner + i;
      acc += cv(in[at]);
      out[at] = st<T>(acc);
    }
  }
}

template <class T>
void cumsum(const Ctx &c, const T *in, const i64 *shape, int rank, int dim, T *out) {
  i64 outer = numel(shape, dim), size = rank ? shape[dim] : 1;
  i64 inner = rank ? numel(shape + dim + 1, rank - dim - 1) : 1;
  if (outer * inner > 0)
    cumsum_kernel<T><<<grid_for(outer * inner, kBlock, c), kBlock, 0, c.stream>>>(
        in, out, outer, size, inner);
}

//===--------------------------------------------------------------------===//
// Row-wise composites: softmax, layer_norm / rms_norm, batch_norm
//===--------------------------------------------------------------------===//

/// Threads of a block that serves rows of `size` elements.
inline int row_block(i64 size) {
  return int(std::min<i64>(kBlock, std::max<i64>(32, (size + 31) / 32 * 32)));
}

/// The dynamic shared memory a generated row kernel may keep its row's inputs
/// in: the default limit without cudaFuncSetAttribute (48 KB, static and
/// dynamic together) less the kernel's own `scratch` (32 doubles). A row that
/// needs more is read from global memory in every pass.
constexpr size_t kRowCacheBytes = 48 * 1024 - 32 * sizeof(double);

/// `bytes` rounded up to 16: each array of a row cache starts aligned for any
/// element type.
__host__ __device__ constexpr i64 align16(i64 bytes) { return (bytes + 15) / 16 * 16; }

/// A generated row kernel's first read of a cached input: `x`, also kept in
/// the row cache at `slot` when the cache is in use.
template <class T> __device__ inline T row_fill(bool cached, T &slot, T x) {
  if (cached)
    slot = x;
  return x;
}

/// Shared memory that keeps a row of `size` accumulators; 0 when it does not
/// fit in the default 48 KB (the kernels then read the row from memory again).
template <class A> inline size_t row_smem(i64 size) {
  size_t bytes = size_t(size) * sizeof(A);
  return bytes <= 40 * 1024 ? bytes : 0;
}

/// softmax / log_softmax of contiguous rows, one block per row. The row is
/// read from memory once when it fits in shared memory.
template <class T>
__global__ void softmax_rows_kernel(const T *__restrict__ in, T *__restrict__ out, i64 rows,
                                    i64 size, bool log_softmax, bool cached) {
  using A = acc_t<T>;
  A *row = dynamic_smem<A>();
  __shared__ A scratch[32];
  for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *x = in + r * size;
    T *y = out + r * size;
    A mx = lowest<A>();
    for (i64 k = threadIdx.x; k < size; k += blockDim.x) {
      A v = static_cast<A>(cv(x[k]));
      if (cached)
        row[k] = v;
      mx = v > mx ? v : mx;
    }
    mx = block_reduce<Reduce::Max>(mx, scratch);
    if (mx == lowest<A>())
      mx = A(0); // a row of -inf: std::exp(-inf - 0) = 0, as the CPU backend does
    A sum = 0;
    for (i64 k = threadIdx.x; k < size; k += blockDim.x)
      sum += std::exp((cached ? row[k] : static_cast<A>(cv(x[k]))) - mx);
    sum = block_reduce<Reduce::Sum>(sum, scratch);
    A lse = std::log(sum);
    for (i64 k = threadIdx.x; k < size; k += blockDim.x) {
      A v = (cached ? row[k] : static_cast<A>(cv(x[k]))) - mx;
      y[k] = st<T>(static_cast<compute_t<T>>(log_softmax ? v - lse : std::exp(v) / sum));
    }
    __syncthreads(); // the row buffer is reused by the next row
  }
}

/// softmax along a dim that is not the last: one thread per column.
template <class T>
__global__ void __launch_bounds__(kBlock)
    softmax_cols_kernel(const T *__restrict__ in, T *__restrict__ out, i64 outer, i64 size,
                        i64 inner, bool log_softmax) {
  using A = acc_t<T>;
  i64 n = outer * inner;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 o = flat / inner, i = flat % inner;
    const T *x = in + o * size * inner + i;
    T *y = out + o * size * inner + i;
    A mx = lowest<A>();
    for (i64 k = 0; k < size; ++k) {
      A v = static_cast<A>(cv(x[k * inner]));
      mx = v > mx ? v : mx;
    }
    if (mx == lowest<A>())
      mx = A(0);
    A sum = 0;
    for (i64 k = 0; k < size; ++k)
      sum += std::exp(static_cast<A>(cv(x[k * inner])) - mx);
    A lse = std::log(sum);
    for (i64 k = 0; k < size; ++k) {
      A v = static_cast<A>(cv(x[k * inner])) - mx;
      y[k * inner] = st<T>(static_cast<compute_t<T>>(log_softmax ? v - lse : std::exp(v) / sum));
    }
  }
}

template <class T>
void softmax(const Ctx &c, const T *in, const i64 *shape, int rank, int dim, bool log_softmax, T *out) {
  i64 outer = numel(shape, dim), size = shape[dim];
  i64 inner = numel(shape + dim + 1, rank - dim - 1);
  if (outer * inner == 0 || size == 0)
    return;
  if (inner == 1) {
    size_t smem = row_smem<acc_t<T>>(size);
    unsigned blocks = unsigned(std::min<i64>(outer, i64(c.sms) * 16));
    softmax_rows_kernel<T><<<std::max(1u, blocks), row_block(size), smem, c.stream>>>(
        in, out, outer, size, log_softmax, smem != 0);
  } else {
    softmax_cols_kernel<T><<<grid_for(outer * inner, kBlock, c), kBlock, 0, c.stream>>>(
        in, out, outer, size, inner, log_softmax);
  }
}

/// layer_norm (rms = false) or rms_norm over rows of `size` elements, one block
/// per row; mean and variance in two passes over the row kept in shared
/// memory when it fits.
template <class T>
__global__ void norm_kernel(const T *__restrict__ in, const T *__restrict__ weight,
                            const T *__restrict__ bias, T *__restrict__ out, i64 rows, i64 size,
                            float eps, bool rms, bool cached) {
  using A = acc_t<T>;
  A *row = dynamic_smem<A>();
  __shared__ A scratch[32];
  for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *x = in + r * size;
    T *y = out + r * size;
    A mean = 0;
    if (!rms || cached) {
      A sum = 0;
      for (i64 k = threadIdx.x; k < size; k += blockDim.x) {
        A v = static_cast<A>(cv(x[k]));
        if (cached)
          row[k] = v;
        sum += v;
      }
      sum = block_reduce<Reduce::Sum>(sum, scratch);
      if (!rms)
        mean = sum / A(size);
    }
    A sq = 0;
    for (i64 k = threadIdx.x; k < size; k += blockDim.x) {
      A d = (cached ? row[k] : static_cast<A>(cv(x[k]))) - mean;
      sq += d * d;
    }
    sq = block_reduce<Reduce::Sum>(sq, scratch);
    A rstd = A(1) / std::sqrt(sq / A(size) + A(eps));
    for (i64 k = threadIdx.x; k < size; k += blockDim.x) {
      A v = ((cached ? row[k] : static_cast<A>(cv(x[k]))) - mean) * rstd;
      if (weight)
        v *= static_cast<A>(cv(weight[k]));
      if (bias)
        v += static_cast<A>(cv(bias[k]));
      y[k] = st<T>(static_cast<compute_t<T>>(v));
    }
    __syncthreads();
  }
}

template <class T>
void norm(const Ctx &c, const T *in, const T *weight, const T *bias, T *out, i64 rows, i64 size,
          double eps, bool rms) {
  if (rows == 0 || size == 0)
    return;
  size_t smem = row_smem<acc_t<T>>(size);
  unsigned blocks = unsigned(std::min<i64>(rows, i64(c.sms) * 16));
  norm_kernel<T><<<std::max(1u, blocks), row_block(size), smem, c.stream>>>(
      in, weight, bias, out, rows, size, float(eps), rms, smem != 0);
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    batch_norm_kernel(const T *__restrict__ in, const T *__restrict__ mean,
                      const T *__restrict__ var, const T *__restrict__ weight,
                      const T *__restrict__ bias, T *__restrict__ out, i64 n, i64 channels,
                      i64 rest, double eps) {
  using A = acc_t<T>;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 ch = (flat / rest) % channels;
    A scale = A(1) / std::sqrt(static_cast<A>(cv(var[ch])) + A(eps));
    if (weight)
      scale *= static_cast<A>(cv(weight[ch]));
    A shift = bias ? static_cast<A>(cv(bias[ch])) : A(0);
    A v = (static_cast<A>(cv(in[flat])) - static_cast<A>(cv(mean[ch]))) * scale + shift;
    out[flat] = st<T>(static_cast<compute_t<T>>(v));
  }
}

/// Inference batch norm over [N, C, rest].
template <class T>
void batch_norm(const Ctx &c, const T *in, const T *mean, const T *var, const T *weight,
                const T *bias, T *out, i64 n, i64 channels, i64 rest, double eps) {
  i64 total = n * channels * rest;
  if (total > 0)
    batch_norm_kernel<T><<<grid_for(total, kBlock, c), kBlock, 0, c.stream>>>(
        in, mean, var, weight, bias, out, total, channels, rest, eps);
}

//===--------------------------------------------------------------------===//
// Pooling
//===--------------------------------------------------------------------===//

/// A pooling or convolution window over the trailing `spatial` dims.
struct Window {
  int spatial;
  i64 in[3], out[3], kernel[3], stride[3], pad_lo[3], dilation[3];

  /// Elements of one input plane, one output plane, and taps of the kernel.
  __host__ __device__ i64 in_size() const { return product(in); }
  __host__ __device__ i64 out_size() const { return product(out); }
  __host__ __device__ i64 taps() const { return product(kernel); }

  /// The output position of flat index `o` of an output plane.
  __device__ void out_index(i64 o, i64 *oidx) const {
    for (int s = spatial - 1; s >= 0; --s) {
      oidx[s] = o % out[s];
      o /= out[s];
    }
  }

  /// The offset in an input plane that kernel tap `tap` (row-major over the
  /// kernel) reads for output position `oidx`; false when it is padding.
  __device__ bool tap_offset(const i64 *oidx, i64 tap, i64 &offset) const {
    i64 off = 0, mul = 1;
    bool inside = true;
    for (int s = spatial - 1; s >= 0; --s) {
      i64 ki = tap % kernel[s];
      tap /= kernel[s];
      i64 ii = oidx[s] * stride[s] - pad_lo[s] + ki * dilation[s];
      inside = inside && ii >= 0 && ii < in[s];
      off += ii * mul;
      mul *= in[s];
    }
    offset = off;
    return inside;
  }

private:
  __host__ __device__ i64 product(const i64 *dims) const {
    i64 n = 1;
    for (int s = 0; s < spatial; ++s)
      n *= dims[s];
    return n;
  }
};

template <class T>
__global__ void __launch_bounds__(kBlock)
    pool_kernel(const T *__restrict__ in, T *__restrict__ out, i64 planes, Window win,
                bool is_max, bool count_include_pad, i64 pad_hi0, i64 pad_hi1, i64 pad_hi2) {
  using A = acc_t<T>;
  const i64 pad_hi[3] = {pad_hi0, pad_hi1, pad_hi2};
  const i64 in_size = win.in_size(), out_size = win.out_size(), kn = win.taps();
  i64 n = planes * out_size;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 p = flat / out_size, o = flat % out_size;
    i64 oidx[3] = {0, 0, 0};
    win.out_index(o, oidx);
    A acc = is_max ? lowest<A>() : A(0);
    bool nan = false;
    i64 count = 0, padded_count = 1;
    for (int s = 0; s < win.spatial; ++s) {
      i64 start = oidx[s] * win.stride[s] - win.pad_lo[s];
      i64 end = min(start + win.kernel[s], win.in[s] + pad_hi[s]);
      padded_count *= end - start;
    }
    for (i64 kf = 0; kf < kn; ++kf) {
      i64 off;
      if (!win.tap_offset(oidx, kf, off))
        continue;
      A v = static_cast<A>(cv(in[p * in_size + off]));
      ++count;
      if (is_max) {
        if constexpr (std::is_floating_point_v<A>)
          nan = nan || v != v;
        acc = v > acc ? v : acc;
      } else {
        acc += v;
      }
    }
    if constexpr (std::is_floating_point_v<A>) {
      if (is_max && nan)
        acc = std::numeric_limits<A>::quiet_NaN();
      if (!is_max)
        acc /= A(count_include_pad ? padded_count : count);
    }
    out[flat] = st<T>(static_cast<compute_t<T>>(acc));
  }
}

/// Max (is_max) or average pooling over the trailing spatial dims; `planes`
/// is the product of the leading dims.
template <class T>
void pool(const Ctx &c, const T *in, T *out, i64 planes, const Window &win, bool is_max,
          bool count_include_pad, const i64 *pad_hi) {
  const i64 out_size = win.out_size();
  if (planes * out_size > 0)
    pool_kernel<T><<<grid_for(planes * out_size, kBlock, c), kBlock, 0, c.stream>>>(
        in, out, planes, win, is_max, count_include_pad, pad_hi[0], pad_hi[1], pad_hi[2]);
}


//===--------------------------------------------------------------------===//
// Attention: FlashAttention-style online softmax
//===--------------------------------------------------------------------===//

/// How a mask (if any) is read: it broadcasts over [lead..., L, S].
struct MaskInfo {
  int kind = 0; ///< 0: none, 1: bool (keep where true), 2: additive
  const void *data = nullptr;
  int lead = 0;
  i64 lead_shape[kMaxRank] = {}, lead_stride[kMaxRank] = {};
  i64 stride_l = 0, stride_s = 0;
};

/// Each warp owns one query row; the block's warps share tiles of 32 keys and
/// values in shared memory. Per tile, lane j scores key j against the row,
/// the warp updates the running max and sum (online softmax), and each lane
/// accumulates its slice of the output over the tile. EPL: head-dim elements
/// per lane (E, Ev <= 32 * EPL). Computes in float (double for f64).
template <class T, int EPL>
__global__ void attention_kernel(const T *__restrict__ q, const T *__restrict__ k,
                                 const T *__restrict__ v, T *__restrict__ out, i64 l, i64 s,
                                 int e, int ev, double scale, bool causal, MaskInfo mask,
                                 i64 b0) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  constexpr int kTile = 32, kWarps = 4;
  A *ks = dynamic_smem<A>();      // [kTile][e + 1]
  A *vs = ks + kTile * (e + 1);                  // [kTile][ev]
  A *qs = vs + kTile * ev;                       // [kWarps][e]
  A *ps = qs + kWarps * e;                       // [kWarps][kTile]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const i64 b = b0 + blockIdx.y; // launches cover at most 65535 batches each
  const i64 row = i64(blockIdx.x) * kWarps + warp;
  const bool active = row < l;
  const T *kb = k + b * s * e, *vb = v + b * s * ev;

  // The mask's offset for this (batch, row).
  i64 mask_base = 0;
  if (mask.kind) {
    i64 rest = b;
    for (int d = mask.lead - 1; d >= 0; --d) {
      mask_base += (rest % mask.lead_shape[d]) * mask.lead_stride[d];
      rest /= mask.lead_shape[d];
    }
    mask_base += (active ? row : 0) * mask.stride_l;
  }
  if (active)
    for (int i = lane; i < e; i += 32)
      qs[warp * e + i] = static_cast<A>(cv(q[(b * l + row) * e + i])) * A(scale);
  A m = lowest<A>(), sum = 0, acc[EPL];
#pragma unroll
  for (int t = 0; t < EPL; ++t)
    acc[t] = 0;

  // With causal masking no row of this block looks past its last row.
  i64 last_row = min(l, i64(blockIdx.x + 1) * kWarps) - 1;
  i64 keys = causal ? min(s, last_row + 1) : s;
  for (i64 s0 = 0; s0 < keys; s0 += kTile) {
    __syncthreads(); // the previous tile is no longer read
    for (int idx = threadIdx.x; idx < kTile * e; idx += blockDim.x) {
      int j = idx / e, i = idx % e;
      ks[j * (e + 1) + i] = s0 + j < s ? static_cast<A>(cv(kb[(s0 + j) * e + i])) : A(0);
    }
    for (int idx = threadIdx.x; idx < kTile * ev; idx += blockDim.x) {
      int j = idx / ev, i = idx % ev;
      vs[j * ev + i] = s0 + j < s ? static_cast<A>(cv(vb[(s0 + j) * ev + i])) : A(0);
    }
    __syncthreads();
    if (!active)
      continue;
    // Lane j scores key s0 + j.
    const i64 key = s0 + lane;
    A score = lowest<A>();
    if (key < s && !(causal && key > row)) {
      A dot = 0;
      for (int i = 0; i < e; ++i)
        dot += qs[warp * e + i] * ks[lane * (e + 1) + i];
      score = dot;
      if (mask.kind == 1) {
        if (!static_cast<const bool *>(mask.data)[mask_base + key * mask.stride_s])
          score = lowest<A>();
      } else if (mask.kind == 2) {
        score += static_cast<A>(cv(static_cast<const T *>(mask.data)[mask_base + key * mask.stride_s]));
      }
    }
    A tile_max = warp_reduce<Reduce::Max>(score);
    A m_new = tile_max > m ? tile_max : m;
    if (m_new == lowest<A>())
      continue; // every key so far is masked out (warp-uniform)
    A p = score == lowest<A>() ? A(0) : std::exp(score - m_new);
    A correction = m == lowest<A>() ? A(0) : std::exp(m - m_new);
    sum = sum * correction + warp_reduce<Reduce::Sum>(p);
    ps[warp * kTile + lane] = p;
    __syncwarp();
#pragma unroll
    for (int t = 0; t < EPL; ++t) {
      int i = lane + 32 * t;
      if (i < ev) {
        A a = acc[t] * correction;
        for (int j = 0; j < kTile; ++j)
          a += ps[warp * kTile + j] * vs[j * ev + i];
        acc[t] = a;
      }
    }
    __syncwarp();
    m = m_new;
  }
  if (active) {
#pragma unroll
    for (int t = 0; t < EPL; ++t) {
      int i = lane + 32 * t;
      if (i < ev)
        out[(b * l + row) * ev + i] = st<T>(static_cast<compute_t<T>>(sum > 0 ? acc[t] / sum : acc[t]));
    }
  }
}

/// q [batch, l, e], k [batch, s, e], v [batch, s, ev] -> out [batch, l, ev].
/// Returns false when the head dims are too large (> 256).
template <class T>
bool sdpa(const Ctx &c, const T *q, const T *k, const T *v, T *out, i64 batch, i64 l, i64 s,
          i64 e, i64 ev, double scale, bool causal, const MaskInfo &mask) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  if (batch * l == 0)
    return true;
  i64 widest = std::max(e, ev);
  if (widest > 256)
    return false;
  size_t smem = (32 * (e + 1) + 32 * ev + 4 * e + 4 * 32) * sizeof(A);
  auto launch = [&](auto kernel) {
    if (smem > 48 * 1024)
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    // The grid's y dimension holds 65535 batches at most: one launch per chunk.
    for (i64 b0 = 0; b0 < batch; b0 += 65535) {
      dim3 grid(unsigned((l + 3) / 4), unsigned(std::min<i64>(65535, batch - b0)));
      kernel<<<grid, 128, smem, c.stream>>>(q, k, v, out, l, s, int(e), int(ev), scale,
                                            causal, mask, b0);
    }
  };
  if (widest <= 32)
    launch(attention_kernel<T, 1>);
  else if (widest <= 64)
    launch(attention_kernel<T, 2>);
  else if (widest <= 128)
    launch(attention_kernel<T, 4>);
  else
    launch(attention_kernel<T, 8>);
  return true;
}

} // namespace thunder_cuda

#endif // THUNDER_CUDA_CUH
