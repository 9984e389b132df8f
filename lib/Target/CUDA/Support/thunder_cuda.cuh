// thunder_cuda.cuh: the support library that Thunder's generated CUDA code includes.
//
// Shipped inside the compiler and written next to the generated sources, so a
// compiled model needs only nvcc and the CUDA runtime (linked statically).
// Generated code emits elementwise and fused kernels itself and calls these
// templates for everything with more structure: reductions (warp shuffles and
// block reductions), row-wise softmax and normalization (the row kept in
// shared memory when it fits), data movement, pooling, an attention kernel
// (FlashAttention-style online softmax), GEMMs through cuBLASLt (dlopen'ed at
// create(), with a heuristics cache and the BIAS/RELU/GELU epilogues; a tiled
// kernel for the types cuBLASLt lacks) and convolutions (im2col + GEMM, or a
// direct kernel for grouped convolutions).
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

/// Stores a compute-typed value as T with PyTorch's conversion rules: to bool
/// is `!= 0`, float to integer truncates (NaN gives 0), narrowing floats round
/// to nearest even.
template <class T, class U> __host__ __device__ inline T st(U x) {
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (is_lowp<U>::value)
      return static_cast<float>(x) != 0.0f;
    else
      return x != U(0);
  } else if constexpr (is_lowp<T>::value) {
    if constexpr (is_lowp<U>::value)
      return T(static_cast<float>(x));
    else
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

struct Lt; // cuBLASLt, below

/// What every enqueue helper needs: where to launch and what it may use.
struct Ctx {
  cudaStream_t stream = nullptr;
  int sms = 1;               ///< multiprocessors of the device
  Lt *lt = nullptr;          ///< cuBLASLt, or null when it could not be loaded
  void *lt_workspace = nullptr;
  size_t lt_workspace_bytes = 0;
  void *scratch = nullptr;   ///< per-kernel scratch (im2col) of this stream
  size_t scratch_bytes = 0;
  int *error = nullptr;      ///< set to a non-zero code by a failing library call
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

struct Window {
  int spatial;
  i64 in[3], out[3], kernel[3], stride[3], pad_lo[3], dilation[3];
};

template <class T>
__global__ void __launch_bounds__(kBlock)
    pool_kernel(const T *__restrict__ in, T *__restrict__ out, i64 planes, Window win,
                bool is_max, bool count_include_pad, i64 pad_hi0, i64 pad_hi1, i64 pad_hi2) {
  using A = acc_t<T>;
  const i64 pad_hi[3] = {pad_hi0, pad_hi1, pad_hi2};
  i64 in_size = 1, out_size = 1, kn = 1;
  for (int s = 0; s < win.spatial; ++s) {
    in_size *= win.in[s];
    out_size *= win.out[s];
    kn *= win.kernel[s];
  }
  i64 n = planes * out_size;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 p = flat / out_size, o = flat % out_size;
    i64 oidx[3] = {0, 0, 0}, oflat = o;
    for (int s = win.spatial - 1; s >= 0; --s) {
      oidx[s] = oflat % win.out[s];
      oflat /= win.out[s];
    }
    A acc = is_max ? lowest<A>() : A(0);
    bool nan = false;
    i64 count = 0, padded_count = 1;
    for (int s = 0; s < win.spatial; ++s) {
      i64 start = oidx[s] * win.stride[s] - win.pad_lo[s];
      i64 end = min(start + win.kernel[s], win.in[s] + pad_hi[s]);
      padded_count *= end - start;
    }
    for (i64 kf = 0; kf < kn; ++kf) {
      i64 rest = kf, off = 0, mul = 1;
      bool inside = true;
      for (int s = win.spatial - 1; s >= 0; --s) {
        i64 ki = rest % win.kernel[s];
        rest /= win.kernel[s];
        i64 ii = oidx[s] * win.stride[s] - win.pad_lo[s] + ki * win.dilation[s];
        inside = inside && ii >= 0 && ii < win.in[s];
        off += ii * mul;
        mul *= win.in[s];
      }
      if (!inside)
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
  i64 out_size = 1;
  for (int s = 0; s < win.spatial; ++s)
    out_size *= win.out[s];
  if (planes * out_size > 0)
    pool_kernel<T><<<grid_for(planes * out_size, kBlock, c), kBlock, 0, c.stream>>>(
        in, out, planes, win, is_max, count_include_pad, pad_hi[0], pad_hi[1], pad_hi[2]);
}

//===--------------------------------------------------------------------===//
// cuBLASLt, loaded at create() (the subset of cublasLt.h Thunder uses; its C
// ABI has been stable since CUDA 11)
//===--------------------------------------------------------------------===//

namespace lt_api {
using Status = int;                       // cublasStatus_t
using Handle = struct cublasLtContext *;  // cublasLtHandle_t
using MatmulDesc = struct cublasLtMatmulDescOpaque_t *;
using Layout = struct cublasLtMatrixLayoutOpaque_t *;
using Preference = struct cublasLtMatmulPreferenceOpaque_t *;
struct Algo {
  uint64_t data[8];
};
struct HeuristicResult {
  Algo algo;
  size_t workspaceSize;
  Status state;
  float wavesCount;
  int reserved[4];
};
constexpr int kOpN = 0, kOpT = 1;                          // cublasOperation_t
constexpr int kCompute32F = 68, kCompute64F = 70;          // cublasComputeType_t
constexpr int kDescTransA = 3, kDescTransB = 4, kDescEpilogue = 7, kDescBiasPointer = 8;
constexpr int kLayoutBatchCount = 5, kLayoutBatchStride = 6;
constexpr int kPrefMaxWorkspace = 1, kPrefAlignA = 5, kPrefAlignB = 6, kPrefAlignC = 7,
              kPrefAlignD = 8;
} // namespace lt_api

/// cuBLASLt epilogues Thunder fuses (cublasLtEpilogue_t values).
enum class Epilogue : uint32_t {
  None = 1,
  Relu = 2,
  Bias = 4,
  ReluBias = 6,
  GeluTanh = 32,     ///< cuBLASLt's GELU is the tanh approximation
  GeluTanhBias = 36,
};

struct Lt {
  lt_api::Handle handle = nullptr;
  lt_api::Status (*create)(lt_api::Handle *) = nullptr;
  lt_api::Status (*destroy)(lt_api::Handle) = nullptr;
  lt_api::Status (*descCreate)(lt_api::MatmulDesc *, int, int) = nullptr;
  lt_api::Status (*descDestroy)(lt_api::MatmulDesc) = nullptr;
  lt_api::Status (*descSet)(lt_api::MatmulDesc, int, const void *, size_t) = nullptr;
  lt_api::Status (*layoutCreate)(lt_api::Layout *, int, uint64_t, uint64_t, int64_t) = nullptr;
  lt_api::Status (*layoutDestroy)(lt_api::Layout) = nullptr;
  lt_api::Status (*layoutSet)(lt_api::Layout, int, const void *, size_t) = nullptr;
  lt_api::Status (*prefCreate)(lt_api::Preference *) = nullptr;
  lt_api::Status (*prefDestroy)(lt_api::Preference) = nullptr;
  lt_api::Status (*prefSet)(lt_api::Preference, int, const void *, size_t) = nullptr;
  lt_api::Status (*heuristic)(lt_api::Handle, lt_api::MatmulDesc, lt_api::Layout, lt_api::Layout,
                              lt_api::Layout, lt_api::Layout, lt_api::Preference, int,
                              lt_api::HeuristicResult *, int *) = nullptr;
  lt_api::Status (*matmul)(lt_api::Handle, lt_api::MatmulDesc, const void *, const void *,
                           lt_api::Layout, const void *, lt_api::Layout, const void *,
                           const void *, lt_api::Layout, void *, lt_api::Layout,
                           const lt_api::Algo *, void *, size_t, cudaStream_t) = nullptr;

  /// One planned GEMM: descriptors and the algorithm the heuristic chose.
  struct Plan {
    lt_api::MatmulDesc desc = nullptr;
    lt_api::Layout a = nullptr, b = nullptr, d = nullptr;
    lt_api::Algo algo{};
    bool ok = false;
  };
  std::mutex mutex;
  std::map<std::vector<int64_t>, Plan> plans;

  /// Loads libcublasLt; false (with a message) when it is missing.
  bool load(std::string &why) {
    void *lib = nullptr;
    for (const char *name : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!lib) {
      why = "libcublasLt.so.13 not found (install the CUDA toolkit's cuBLAS or the "
            "nvidia-cublas wheel and put its lib folder on LD_LIBRARY_PATH)";
      return false;
    }
    const char *missing = nullptr;
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn && !missing)
        missing = name;
    };
    get(create, "cublasLtCreate");
    get(destroy, "cublasLtDestroy");
    get(descCreate, "cublasLtMatmulDescCreate");
    get(descDestroy, "cublasLtMatmulDescDestroy");
    get(descSet, "cublasLtMatmulDescSetAttribute");
    get(layoutCreate, "cublasLtMatrixLayoutCreate");
    get(layoutDestroy, "cublasLtMatrixLayoutDestroy");
    get(layoutSet, "cublasLtMatrixLayoutSetAttribute");
    get(prefCreate, "cublasLtMatmulPreferenceCreate");
    get(prefDestroy, "cublasLtMatmulPreferenceDestroy");
    get(prefSet, "cublasLtMatmulPreferenceSetAttribute");
    get(heuristic, "cublasLtMatmulAlgoGetHeuristic");
    get(matmul, "cublasLtMatmul");
    if (missing) {
      why = std::string("libcublasLt has no ") + missing;
      return false;
    }
    if (create(&handle) != 0) {
      why = "cublasLtCreate failed";
      return false;
    }
    return true;
  }

  ~Lt() {
    for (auto &[key, p] : plans) {
      if (p.a) layoutDestroy(p.a);
      if (p.b) layoutDestroy(p.b);
      if (p.d) layoutDestroy(p.d);
      if (p.desc) descDestroy(p.desc);
    }
    if (handle)
      destroy(handle);
  }
};

template <class T> constexpr int cuda_type() {
  if constexpr (std::is_same_v<T, float>) return CUDA_R_32F;
  else if constexpr (std::is_same_v<T, double>) return CUDA_R_64F;
  else if constexpr (std::is_same_v<T, f16>) return CUDA_R_16F;
  else if constexpr (std::is_same_v<T, bf16>) return CUDA_R_16BF;
  else return -1;
}

/// The largest power of two (at most 256) that divides the address.
inline uint32_t alignment_of(const void *p) {
  uintptr_t v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a)
    a >>= 1;
  return a;
}

/// Row-major strided-batched GEMM: C[b] = op(A[b]) @ op(B[b]) (+ bias[n],
/// activation), where A[b] starts at A + b * sa (sa may be 0: shared), lda/ldb
/// the row strides as stored. Through cuBLASLt: the row-major product is the
/// column-major C^T = op(B)^T op(A)^T. Returns false when cuBLASLt has no
/// algorithm for it (the caller then runs the fallback kernel).
template <class T>
bool lt_gemm(const Ctx &c, bool ta, bool tb, i64 m, i64 n, i64 k, const T *a, i64 lda, i64 sa,
             const T *b, i64 ldb, i64 sb, T *out, i64 ldc, i64 sc, i64 batch, Epilogue epi,
             const T *bias) {
  using namespace lt_api;
  constexpr int type = cuda_type<T>();
  if constexpr (type < 0) {
    return false;
  } else {
    Lt *lt = c.lt;
    if (!lt || m <= 0 || n <= 0 || k <= 0 || batch <= 0 || batch > INT32_MAX)
      return false;
    const int compute = std::is_same_v<T, double> ? kCompute64F : kCompute32F;
    const int scale = std::is_same_v<T, double> ? CUDA_R_64F : CUDA_R_32F;
    std::vector<int64_t> key = {type, ta, tb, m, n, k, lda, sa, ldb, sb, ldc, sc, batch,
                                int64_t(epi), int64_t(alignment_of(a)), int64_t(alignment_of(b)),
                                int64_t(alignment_of(out)),
                                int64_t(bias ? alignment_of(bias) : 0),
                                int64_t(c.lt_workspace_bytes)};
    std::lock_guard<std::mutex> lock(lt->mutex);
    auto [it, fresh] = lt->plans.try_emplace(key);
    Lt::Plan &p = it->second;
    if (fresh) {
      // cuBLASLt's A is our B (op(B)^T: n x k), its B is our A (op(A)^T: k x m).
      int opA = tb ? kOpT : kOpN, opB = ta ? kOpT : kOpN;
      uint32_t e = uint32_t(epi);
      bool ok = lt->descCreate(&p.desc, compute, scale) == 0 &&
                lt->descSet(p.desc, kDescTransA, &opA, sizeof(opA)) == 0 &&
                lt->descSet(p.desc, kDescTransB, &opB, sizeof(opB)) == 0 &&
                lt->descSet(p.desc, kDescEpilogue, &e, sizeof(e)) == 0;
      if (ok && bias)
        ok = lt->descSet(p.desc, kDescBiasPointer, &bias, sizeof(bias)) == 0;
      // Stored shapes (column-major rows x cols = row-major cols x rows).
      ok = ok && lt->layoutCreate(&p.a, type, tb ? k : n, tb ? n : k, ldb) == 0 &&
           lt->layoutCreate(&p.b, type, ta ? m : k, ta ? k : m, lda) == 0 &&
           lt->layoutCreate(&p.d, type, n, m, ldc) == 0;
      if (ok && batch > 1) {
        int32_t count = int32_t(batch);
        ok = lt->layoutSet(p.a, kLayoutBatchCount, &count, sizeof(count)) == 0 &&
             lt->layoutSet(p.a, kLayoutBatchStride, &sb, sizeof(sb)) == 0 &&
             lt->layoutSet(p.b, kLayoutBatchCount, &count, sizeof(count)) == 0 &&
             lt->layoutSet(p.b, kLayoutBatchStride, &sa, sizeof(sa)) == 0 &&
             lt->layoutSet(p.d, kLayoutBatchCount, &count, sizeof(count)) == 0 &&
             lt->layoutSet(p.d, kLayoutBatchStride, &sc, sizeof(sc)) == 0;
      }
      Preference pref = nullptr;
      if (ok && lt->prefCreate(&pref) == 0) {
        uint64_t ws = c.lt_workspace_bytes;
        uint32_t al[4] = {alignment_of(b), alignment_of(a), alignment_of(out), alignment_of(out)};
        lt->prefSet(pref, kPrefMaxWorkspace, &ws, sizeof(ws));
        lt->prefSet(pref, kPrefAlignA, &al[0], sizeof(uint32_t));
        lt->prefSet(pref, kPrefAlignB, &al[1], sizeof(uint32_t));
        lt->prefSet(pref, kPrefAlignC, &al[2], sizeof(uint32_t));
        lt->prefSet(pref, kPrefAlignD, &al[3], sizeof(uint32_t));
        HeuristicResult result{};
        int found = 0;
        if (lt->heuristic(lt->handle, p.desc, p.a, p.b, p.d, p.d, pref, 1, &result, &found) == 0 &&
            found > 0 && result.state == 0 && result.workspaceSize <= ws) {
          p.algo = result.algo;
          p.ok = true;
        }
        lt->prefDestroy(pref);
      }
    }
    if (!p.ok)
      return false;
    if (bias && lt->descSet(p.desc, kDescBiasPointer, &bias, sizeof(bias)) != 0)
      return false;
    using S = std::conditional_t<std::is_same_v<T, double>, double, float>;
    S one = 1, zero = 0;
    lt_api::Status s = lt->matmul(lt->handle, p.desc, &one, b, p.a, a, p.b, &zero, out, p.d, out,
                                  p.d, &p.algo, c.lt_workspace, c.lt_workspace_bytes, c.stream);
    if (s != 0 && c.error && !*c.error)
      *c.error = 1000 + s;
    return s == 0;
  }
}

/// The GEMM for types cuBLASLt lacks (integers, f8) or shapes it refuses:
/// 16x16 tiles in shared memory, one output element per thread, batches on
/// the grid's z dimension.
template <class T>
__global__ void gemm_tiled_kernel(bool ta, bool tb, i64 m, i64 n, i64 k, const T *a, i64 lda,
                                  i64 sa, const T *b, i64 ldb, i64 sb, T *out, i64 ldc, i64 sc,
                                  Epilogue epi, const T *bias) {
  using A = acc_t<T>;
  constexpr int TS = 16;
  __shared__ A as[TS][TS + 1], bs[TS][TS + 1];
  const i64 batch = blockIdx.z;
  const T *ab = a + batch * sa, *bb = b + batch * sb;
  const i64 row = i64(blockIdx.y) * TS + threadIdx.y, col = i64(blockIdx.x) * TS + threadIdx.x;
  A acc = 0;
  for (i64 k0 = 0; k0 < k; k0 += TS) {
    // as[y][x] = op(A)[row][k0 + x]; bs[y][x] = op(B)[k0 + y][col].
    i64 ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    as[threadIdx.y][threadIdx.x] =
        (row < m && ka < k) ? static_cast<A>(cv(ta ? ab[ka * lda + row] : ab[row * lda + ka])) : A(0);
    bs[threadIdx.y][threadIdx.x] =
        (col < n && kb < k) ? static_cast<A>(cv(tb ? bb[col * ldb + kb] : bb[kb * ldb + col])) : A(0);
    __syncthreads();
#pragma unroll
    for (int t = 0; t < TS; ++t)
      acc += as[threadIdx.y][t] * bs[t][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) {
    if (bias)
      acc += static_cast<A>(cv(bias[col]));
    if (epi == Epilogue::Relu || epi == Epilogue::ReluBias)
      acc = relu(acc);
    if constexpr (std::is_floating_point_v<A>)
      if (epi == Epilogue::GeluTanh || epi == Epilogue::GeluTanhBias)
        acc = gelu_tanh(acc);
    out[batch * sc + row * ldc + col] = st<T>(static_cast<compute_t<T>>(acc));
  }
}

template <class T>
void gemm(const Ctx &c, bool ta, bool tb, i64 m, i64 n, i64 k, const T *a, i64 lda, i64 sa,
          const T *b, i64 ldb, i64 sb, T *out, i64 ldc, i64 sc, i64 batch,
          Epilogue epi = Epilogue::None, const T *bias = nullptr) {
  if (m <= 0 || n <= 0 || batch <= 0)
    return;
  if (lt_gemm(c, ta, tb, m, n, k, a, lda, sa, b, ldb, sb, out, ldc, sc, batch, epi, bias))
    return;
  dim3 block(16, 16);
  for (i64 b0 = 0; b0 < batch; b0 += 65535) {
    i64 nb = std::min<i64>(65535, batch - b0);
    dim3 grid(unsigned((n + 15) / 16), unsigned((m + 15) / 16), unsigned(nb));
    gemm_tiled_kernel<T><<<grid, block, 0, c.stream>>>(ta, tb, m, n, k, a + b0 * sa, lda, sa,
                                                      b + b0 * sb, ldb, sb, out + b0 * sc, ldc,
                                                      sc, epi, bias);
  }
}

/// out[b] = op(lhs[b]) @ op(rhs[b or shared]); lhs is [batch, m, k] (or
/// [batch, k, m] transposed), rhs [batch or 1, k, n] (or [.., n, k]).
template <class T>
void matmul(const Ctx &c, const T *lhs, const T *rhs, T *out, i64 batch, i64 m, i64 n, i64 k,
            bool ta, bool tb, bool rhs_shared, Epilogue epi = Epilogue::None,
            const T *bias = nullptr) {
  if (rhs_shared && !ta) {
    // One GEMM over every batch: [batch*m, k] @ [k, n].
    m *= batch;
    batch = 1;
  }
  i64 lda = ta ? m : k, ldb = tb ? k : n;
  gemm(c, ta, tb, m, n, k, lhs, lda, m * k, rhs, ldb, rhs_shared ? 0 : k * n, out, n, m * n,
       batch, epi, bias);
}

//===--------------------------------------------------------------------===//
// Convolution: im2col + GEMM, a direct kernel for grouped convolutions
//===--------------------------------------------------------------------===//

/// cols[b][c * kk + kf][o] = input[b][c][window position of o and kf] (zero
/// in the padding).
template <class T>
__global__ void __launch_bounds__(kBlock)
    im2col_kernel(const T *__restrict__ in, T *__restrict__ cols, i64 batch, i64 cin, Window win) {
  i64 in_size = 1, out_size = 1, kk = 1;
  for (int s = 0; s < win.spatial; ++s) {
    in_size *= win.in[s];
    out_size *= win.out[s];
    kk *= win.kernel[s];
  }
  i64 n = batch * cin * kk * out_size;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 o = flat % out_size, rest = flat / out_size;
    i64 kf = rest % kk;
    rest /= kk;
    i64 ch = rest % cin, b = rest / cin;
    i64 off = 0, mul = 1;
    bool inside = true;
    i64 orest = o, krest = kf;
    for (int s = win.spatial - 1; s >= 0; --s) {
      i64 oi = orest % win.out[s], ki = krest % win.kernel[s];
      orest /= win.out[s];
      krest /= win.kernel[s];
      i64 ii = oi * win.stride[s] - win.pad_lo[s] + ki * win.dilation[s];
      inside = inside && ii >= 0 && ii < win.in[s];
      off += ii * mul;
      mul *= win.in[s];
    }
    cols[flat] = inside ? in[(b * cin + ch) * in_size + off] : T(0.0f);
  }
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    conv_direct_kernel(const T *__restrict__ in, const T *__restrict__ w, const T *__restrict__ bias,
                       T *__restrict__ out, i64 batch, i64 cin, i64 cout, i64 groups, Window win) {
  using A = acc_t<T>;
  i64 in_size = 1, out_size = 1, kk = 1;
  for (int s = 0; s < win.spatial; ++s) {
    in_size *= win.in[s];
    out_size *= win.out[s];
    kk *= win.kernel[s];
  }
  i64 cin_g = cin / groups, cout_g = cout / groups;
  i64 n = batch * cout * out_size;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 o = flat % out_size, rest = flat / out_size;
    i64 oc = rest % cout, b = rest / cout;
    i64 g = oc / cout_g;
    i64 oidx[3] = {0, 0, 0}, orest = o;
    for (int s = win.spatial - 1; s >= 0; --s) {
      oidx[s] = orest % win.out[s];
      orest /= win.out[s];
    }
    A acc = bias ? static_cast<A>(cv(bias[oc])) : A(0);
    for (i64 ic = 0; ic < cin_g; ++ic) {
      const T *x = in + (b * cin + g * cin_g + ic) * in_size;
      const T *wk = w + (oc * cin_g + ic) * kk;
      for (i64 kf = 0; kf < kk; ++kf) {
        i64 krest = kf, off = 0, mul = 1;
        bool inside = true;
        for (int s = win.spatial - 1; s >= 0; --s) {
          i64 ki = krest % win.kernel[s];
          krest /= win.kernel[s];
          i64 ii = oidx[s] * win.stride[s] - win.pad_lo[s] + ki * win.dilation[s];
          inside = inside && ii >= 0 && ii < win.in[s];
          off += ii * mul;
          mul *= win.in[s];
        }
        if (inside)
          acc += static_cast<A>(cv(x[off])) * static_cast<A>(cv(wk[kf]));
      }
    }
    out[flat] = st<T>(static_cast<compute_t<T>>(acc));
  }
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    channel_bias_kernel(T *__restrict__ out, const T *__restrict__ bias, i64 n, i64 channels,
                        i64 rest) {
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 ch = (flat / rest) % channels;
    out[flat] = st<T>(cv(out[flat]) + cv(bias[ch]));
  }
}

/// Bytes of scratch conv() needs (the im2col matrix; none for 1x1 convs
/// with unit stride and no padding, or for grouped ones).
inline i64 conv_scratch_bytes(i64 elem_bytes, i64 batch, i64 cin, i64 groups, const Window &w) {
  if (groups != 1)
    return 0;
  bool pointwise = true;
  i64 out_size = 1, kk = 1;
  for (int s = 0; s < w.spatial; ++s) {
    pointwise = pointwise && w.kernel[s] == 1 && w.stride[s] == 1 && w.pad_lo[s] == 0 &&
                w.out[s] == w.in[s];
    out_size *= w.out[s];
    kk *= w.kernel[s];
  }
  return pointwise ? 0 : (batch * cin * kk * out_size * elem_bytes + 255) / 256 * 256;
}

template <class T>
void conv(const Ctx &c, const T *in, const T *w, const T *bias, T *out, i64 batch, i64 cin,
          i64 cout, i64 groups, const Window &win) {
  i64 in_size = 1, out_size = 1, kk = 1;
  for (int s = 0; s < win.spatial; ++s) {
    in_size *= win.in[s];
    out_size *= win.out[s];
    kk *= win.kernel[s];
  }
  i64 total = batch * cout * out_size;
  if (total == 0)
    return;
  if (groups != 1 || cuda_type<T>() < 0) {
    conv_direct_kernel<T><<<grid_for(total, kBlock, c), kBlock, 0, c.stream>>>(
        in, w, bias, out, batch, cin, cout, groups, win);
    return;
  }
  // out[b] (cout x out_size) = w (cout x cin*kk) @ cols[b] (cin*kk x out_size).
  const T *cols = in;
  if (conv_scratch_bytes(sizeof(T), batch, cin, groups, win) > 0) {
    T *buffer = static_cast<T *>(c.scratch);
    i64 n = batch * cin * kk * out_size;
    im2col_kernel<T><<<grid_for(n, kBlock, c), kBlock, 0, c.stream>>>(in, buffer, batch, cin, win);
    cols = buffer;
  }
  i64 k = cin * kk;
  gemm(c, false, false, cout, out_size, k, w, k, 0, cols, out_size, k * out_size, out, out_size,
       cout * out_size, batch);
  if (bias)
    channel_bias_kernel<T><<<grid_for(total, kBlock, c), kBlock, 0, c.stream>>>(
        out, bias, total, cout, out_size);
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
                                 int e, int ev, double scale, bool causal, MaskInfo mask) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  constexpr int kTile = 32, kWarps = 4;
  A *ks = dynamic_smem<A>();      // [kTile][e + 1]
  A *vs = ks + kTile * (e + 1);                  // [kTile][ev]
  A *qs = vs + kTile * ev;                       // [kWarps][e]
  A *ps = qs + kWarps * e;                       // [kWarps][kTile]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const i64 b = blockIdx.y;
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
  if (widest > 256 || batch > 65535)
    return false;
  size_t smem = (32 * (e + 1) + 32 * ev + 4 * e + 4 * 32) * sizeof(A);
  dim3 grid(unsigned((l + 3) / 4), unsigned(batch));
  auto launch = [&](auto kernel) {
    if (smem > 48 * 1024)
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    kernel<<<grid, 128, smem, c.stream>>>(q, k, v, out, l, s, int(e), int(ev), scale,
                                          causal, mask);
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

//===--------------------------------------------------------------------===//
// The model's device state: streams, events, cuBLASLt, CUDA graphs
//===--------------------------------------------------------------------===//

/// Writes "what: cudaGetErrorString" into error; returns 1.
inline int report(char *error, size_t size, const char *what, cudaError_t e) {
  snprintf(error, size, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
  return 1;
}

/// Everything a model keeps on the device between runs, except its weights.
/// Runs enqueue under one mutex (streams and events are shared); the work
/// itself runs concurrently on the callers' streams.
class Runtime {
public:
  int sms = 1;
  int num_streams = 1;                  ///< the caller's stream plus auxiliaries
  std::vector<cudaStream_t> aux;        ///< streams 1..num_streams-1
  std::vector<cudaEvent_t> events;      ///< one per kernel another stream waits for
  std::vector<cudaEvent_t> joins;       ///< fork (index 0) and joins of aux streams
  Lt lt;
  bool have_lt = false;
  std::string lt_missing;
  bool graphs = false;
  cudaStream_t capture = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::vector<uintptr_t> exec_key, warm_key;
  std::mutex mutex;

  /// Creates streams and events, loads cuBLASLt (when `needs_lt`), reads
  /// THUNDER_CUDA_GRAPHS. `probe` is a kernel of this model: fetching its
  /// attributes tells whether the library holds code for this device.
  int init(int streams, int num_events, bool needs_lt, bool allow_graphs, const void *probe,
           const char *archs, char *error, size_t size) {
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess)
      return report(error, size, "cudaGetDevice", e);
    cudaFuncAttributes attributes;
    e = cudaFuncGetAttributes(&attributes, probe);
    if (e != cudaSuccess) {
      cudaDeviceProp prop;
      cudaGetDeviceProperties(&prop, device);
      cudaGetLastError();
      snprintf(error, size,
               "this model holds GPU code for %s, which cannot run on device %d (%s, sm_%d%d): "
               "recompile it with --cuda-arch=sm_%d%d (%s)",
               archs, device, prop.name, prop.major, prop.minor, prop.major, prop.minor,
               cudaGetErrorString(e));
      return 1;
    }
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    num_streams = streams;
    for (int i = 1; i < streams; ++i) {
      cudaStream_t s;
      if ((e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) != cudaSuccess)
        return report(error, size, "cudaStreamCreate", e);
      aux.push_back(s);
    }
    for (int i = 0; i < num_events + streams; ++i) {
      cudaEvent_t ev;
      if ((e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)) != cudaSuccess)
        return report(error, size, "cudaEventCreate", e);
      (i < num_events ? events : joins).push_back(ev);
    }
    if (needs_lt)
      have_lt = lt.load(lt_missing);
    const char *env = getenv("THUNDER_CUDA_GRAPHS");
    graphs = allow_graphs && !(env && (!strcmp(env, "0") || !strcasecmp(env, "off") ||
                                        !strcasecmp(env, "false")));
    if (graphs && (e = cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking)) != cudaSuccess)
      return report(error, size, "cudaStreamCreate", e);
    return 0;
  }

  ~Runtime() {
    if (exec)
      cudaGraphExecDestroy(exec);
    if (capture)
      cudaStreamDestroy(capture);
    for (cudaEvent_t ev : events)
      cudaEventDestroy(ev);
    for (cudaEvent_t ev : joins)
      cudaEventDestroy(ev);
    for (cudaStream_t s : aux)
      cudaStreamDestroy(s);
  }

  /// The stream of schedule index `i` for a run whose main stream is `main`.
  cudaStream_t stream(int i, cudaStream_t main) const { return i == 0 ? main : aux[i - 1]; }

  /// Runs `enqueue(main)` on the caller's stream: replays the CUDA graph
  /// captured for the same pointers (key), captures it first if needed, or
  /// enqueues directly when graphs are off. The first run with a key runs
  /// directly (a warm-up: cuBLASLt's heuristics and kernel attributes are
  /// settled outside the capture); the second captures.
  template <class F>
  int run(cudaStream_t caller, const std::vector<uintptr_t> &key, F &&enqueue, char *error,
          size_t size) {
    std::lock_guard<std::mutex> lock(mutex);
    cudaGetLastError(); // an earlier, unrelated failure is not ours
    if (!graphs || (key != exec_key && key != warm_key)) {
      if (graphs)
        warm_key = key;
      if (int rc = enqueue(caller))
        return rc;
      cudaError_t e = cudaGetLastError();
      return e == cudaSuccess ? 0 : report(error, size, "launching the model's kernels", e);
    }
    if (!exec || key != exec_key) {
      cudaError_t e = cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal);
      if (e != cudaSuccess)
        return report(error, size, "cudaStreamBeginCapture", e);
      int rc = enqueue(capture);
      cudaGraph_t graph = nullptr;
      cudaError_t end = cudaStreamEndCapture(capture, &graph);
      if (rc) {
        if (graph)
          cudaGraphDestroy(graph);
        return rc;
      }
      if (end != cudaSuccess || !graph)
        return report(error, size, "capturing the model into a CUDA graph", end);
      if (exec) {
        cudaGraphExecUpdateResultInfo info;
        if (cudaGraphExecUpdate(exec, graph, &info) != cudaSuccess) {
          cudaGetLastError();
          cudaGraphExecDestroy(exec);
          exec = nullptr;
        }
      }
      if (!exec && (e = cudaGraphInstantiate(&exec, graph, 0)) != cudaSuccess) {
        cudaGraphDestroy(graph);
        exec = nullptr;
        return report(error, size, "cudaGraphInstantiate", e);
      }
      cudaGraphDestroy(graph);
      exec_key = key;
    }
    cudaError_t e = cudaGraphLaunch(exec, caller);
    return e == cudaSuccess ? 0 : report(error, size, "cudaGraphLaunch", e);
  }

  /// Makes every auxiliary stream wait for the work enqueued so far on `main`.
  void fork(cudaStream_t main) {
    if (aux.empty())
      return;
    cudaEventRecord(joins[0], main);
    for (cudaStream_t s : aux)
      cudaStreamWaitEvent(s, joins[0], 0);
  }
  /// Makes `main` wait for everything enqueued on the auxiliary streams.
  void join(cudaStream_t main) {
    for (size_t i = 0; i < aux.size(); ++i) {
      cudaEventRecord(joins[i + 1], aux[i]);
      cudaStreamWaitEvent(main, joins[i + 1], 0);
    }
  }
};

/// Device memory holding a model's weights and splat constants.
struct DeviceBuffer {
  void *ptr = nullptr;
  ~DeviceBuffer() {
    if (ptr)
      cudaFree(ptr);
  }
};

} // namespace thunder_cuda

#endif // THUNDER_CUDA_CUH
