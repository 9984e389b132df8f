// thunder_gpu.h: the GPU primitives of Thunder's support library: vector
// loads and stores, warp and block reductions, the launch context, data
// movement and reductions.
//
// Written once for every GPU vendor against the dialect macros of the vendor
// header that includes it (thunder_cuda.cuh): THUNDER_GPU_NS (the namespace),
// THUNDER_WARP_SIZE, THUNDER_SHFL_XOR(v, lane_mask), THUNDER_SYNC_WARP(),
// THUNDER_STREAM_T, THUNDER_RESIDENT_THREADS, THUNDER_SMEM_DEFAULT_BYTES and
// THUNDER_SMEM_OPT_IN(kernel, bytes); the vendor header also defines the element types (i64, f16, bf16,
// f8e4m3fn, f8e5m2) in THUNDER_GPU_NS before including this one. Kernel
// syntax (__global__, __shared__, blockIdx, <<<...>>>) is the same in CUDA
// and HIP.
#ifndef THUNDER_GPU_H
#define THUNDER_GPU_H

#include "thunder_scalar.h"

#include <dlfcn.h>

#include <initializer_list>

namespace THUNDER_GPU_NS {

using namespace thunder_scalar;

/// A shared library opened with dlopen (the first of several sonames found),
/// whose symbols are read into function pointers: get(fn, "name"). The
/// library stays loaded for the life of the process. Host side: how both
/// vendors' headers open their GEMM and convolution libraries at create().
struct Library {
  void *lib = nullptr;
  const char *missing = nullptr; ///< the first symbol not found
  explicit Library(std::initializer_list<const char *> names) {
    for (const char *name : names)
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
  }
  template <class F> void operator()(F *&fn, const char *name) {
    fn = reinterpret_cast<F *>(dlsym(lib, name));
    if (!fn && !missing)
      missing = name;
  }
};

/// The largest rank the index helpers handle.
constexpr int kMaxRank = 8;
/// Threads per block of the one-dimensional kernels.
constexpr int kBlock = 256;
/// Warps in the largest block (1024 threads): block_reduce's scratch.
constexpr int kMaxWarps = 1024 / THUNDER_WARP_SIZE;

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

/// Reduces `v` over the warp (THUNDER_WARP_SIZE lanes); every lane gets the
/// result.
template <Reduce K, class A> __device__ inline A warp_reduce(A v) {
#pragma unroll
  for (int offset = THUNDER_WARP_SIZE / 2; offset > 0; offset >>= 1)
    v = reduce_op<K>(v, static_cast<A>(THUNDER_SHFL_XOR(v, offset)));
  return v;
}

/// Reduces `v` over the block (blockDim.x a multiple of the warp size, at
/// most 1024); every thread gets the result. `scratch` holds kMaxWarps values.
template <Reduce K, class A> __device__ inline A block_reduce(A v, A *scratch) {
  const int lane = threadIdx.x % THUNDER_WARP_SIZE, warp = threadIdx.x / THUNDER_WARP_SIZE;
  const int warps = (blockDim.x + THUNDER_WARP_SIZE - 1) / THUNDER_WARP_SIZE;
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

struct Lt;  // the GEMM library (cuBLASLt), in the vendor's libraries header
struct Dnn; // the convolution library (cuDNN), likewise

/// What every enqueue helper needs: where to launch and what it may use.
struct Ctx {
  THUNDER_STREAM_T stream = nullptr;
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
  i64 cap = i64(c.sms) * (THUNDER_RESIDENT_THREADS / block);
  return unsigned(std::max<i64>(1, std::min(blocks, cap)));
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
    // A negative start (a dynamic dim's) counts from the size, clamped at 0.
    const i64 first = start[i] < 0 ? (in_shape[i] + start[i] > 0 ? in_shape[i] + start[i] : 0)
                                   : start[i];
    base += first * in_strides[i];
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

/// thunder.random: element i from its own index (random_element in
/// thunder_scalar.h), the same numbers as the CPU's for a seed and offset.
template <class T>
__global__ void __launch_bounds__(kBlock)
    random_kernel(T *out, i64 n, int kind, int digits, uint64_t seed, uint64_t offset,
                  uint32_t stream) {
  for (i64 i = thread_index(); i < n; i += grid_size())
    out[i] = random_element<T>(kind, digits, seed, offset, stream, uint64_t(i));
}

template <class T>
void draw_random(const Ctx &c, T *out, i64 n, int kind, int digits, i64 seed, i64 offset,
            i64 stream) {
  if (n > 0)
    random_kernel<T><<<grid_for(n, kBlock, c), kBlock, 0, c.stream>>>(
        out, n, kind, digits, uint64_t(seed), uint64_t(offset), uint32_t(stream));
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
  __shared__ A scratch[kMaxWarps];
  if constexpr (WarpPerRow) {
    const int lane = threadIdx.x % THUNDER_WARP_SIZE;
    const i64 warps_per_block = blockDim.x / THUNDER_WARP_SIZE;
    for (i64 r = i64(blockIdx.x) * warps_per_block + threadIdx.x / THUNDER_WARP_SIZE; r < rows;
         r += i64(gridDim.x) * warps_per_block) {
      A acc = reduce_init<K, A>();
      const T *x = in + r * size;
      for (i64 k = lane; k < size; k += THUNDER_WARP_SIZE)
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

/// One thread per element: its rank in its line's stable sort (a count over the
/// line, so no scratch memory) says where its index goes.
template <class T>
__global__ void __launch_bounds__(kBlock)
    argsort_kernel(const T *__restrict__ in, i64 *__restrict__ out, i64 n, i64 size,
                   i64 inner, bool descending) {
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 i = flat % inner, k = (flat / inner) % size, o = flat / (inner * size);
    const T *line = in + o * size * inner + i;
    out[o * size * inner + i + sorted_rank(line, size, inner, k, descending) * inner] = k;
  }
}

template <class T>
void argsort(const Ctx &c, const T *in, const i64 *shape, int rank, int dim, bool descending,
             i64 *out) {
  i64 n = numel(shape, rank), size = rank ? shape[dim] : 1;
  i64 inner = rank ? numel(shape + dim + 1, rank - dim - 1) : 1;
  if (n > 0)
    argsort_kernel<T><<<grid_for(n, kBlock, c), kBlock, 0, c.stream>>>(in, out, n, size, inner,
                                                                       descending);
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    scatter_copy_kernel(const T *__restrict__ in, T *__restrict__ out, i64 n) {
  for (i64 flat = thread_index(); flat < n; flat += grid_size())
    out[flat] = in[flat];
}

/// One thread per line: the positions of a line never collide with another
/// line's, so there are no atomics and the result is deterministic.
template <class T, class I>
__global__ void __launch_bounds__(kBlock)
    scatter_kernel(ScatterInfo g, const I *__restrict__ index, const T *__restrict__ src,
                   Scatter reduce, bool include_self, T *out, i64 lines) {
  for (i64 line = thread_index(); line < lines; line += grid_size())
    scatter_line(g, line, index, src, reduce, include_self, out);
}

template <class T, class I>
void scatter(const Ctx &c, const T *in, const i64 *in_shape, int rank, int dim, const I *index,
             const i64 *index_shape, const T *src, const i64 *src_shape, int reduce,
             bool include_self, T *out) {
  ScatterInfo g{rank, dim, {}, {}, {}, {}, {}};
  for (int d = 0; d < rank; ++d) {
    g.index_shape[d] = index_shape[d];
    g.in_shape[d] = in_shape[d];
  }
  strides_of(in_shape, rank, g.in_stride);
  strides_of(index_shape, rank, g.index_stride);
  strides_of(src_shape, rank, g.src_stride);
  i64 n = numel(in_shape, rank);
  if (n > 0 && out != in)
    scatter_copy_kernel<T><<<grid_for(n, kBlock, c), kBlock, 0, c.stream>>>(in, out, n);
  i64 k = rank ? index_shape[dim] : 1;
  i64 lines = k ? numel(index_shape, rank) / k : 0;
  if (lines > 0)
    scatter_kernel<T, I><<<grid_for(lines, kBlock, c), kBlock, 0, c.stream>>>(
        g, index, src, static_cast<Scatter>(reduce), include_self, out, lines);
}

} // namespace THUNDER_GPU_NS

#endif // THUNDER_GPU_H
