// thunder_cpu.h: the support library that Thunder's generated CPU code includes.
//
// Shipped inside the compiler and written next to the generated sources, so a
// compiled model needs only a C++17 compiler, OpenMP and a CBLAS. Generated
// code emits elementwise loops itself and calls these templates for
// everything with more structure. All tensors are dense row-major; shapes are
// int64_t arrays; low-precision types (f16, bf16, f8) are computed in float.
#ifndef THUNDER_CPU_H
#define THUNDER_CPU_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

namespace thunder_cpu {

using i64 = int64_t;

/// Called once when a model is created: GEMMs run single-threaded inside
/// OpenMP's threads (see matmul).
inline void thunder_cpu_init() { openblas_set_num_threads(1); }

//===--------------------------------------------------------------------===//
// Element types
//===--------------------------------------------------------------------===//

/// bfloat16: the upper half of a float32, rounded to nearest even.
struct bf16 {
  uint16_t bits;
  bf16() = default;
  explicit bf16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      bits = static_cast<uint16_t>((u >> 16) | 0x40u); // quiet NaN
    } else {
      u += 0x7fffu + ((u >> 16) & 1u);
      bits = static_cast<uint16_t>(u >> 16);
    }
  }
  explicit operator float() const {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

using f16 = _Float16;

/// float8 e4m3fn (no infinities, one NaN pattern) and e5m2 (IEEE-like),
/// converted through float with round to nearest even, saturating e4m3fn.
template <int ExpBits, int ManBits, bool FN> struct f8 {
  uint8_t bits;
  f8() = default;
  explicit f8(float f) { bits = encode(f); }
  explicit operator float() const { return decode(bits); }
  static constexpr int bias = (1 << (ExpBits - 1)) - 1;
  static float decode(uint8_t b) {
    int sign = b >> 7, exp = (b >> ManBits) & ((1 << ExpBits) - 1),
        man = b & ((1 << ManBits) - 1);
    float s = sign ? -1.0f : 1.0f;
    if (FN && exp == (1 << ExpBits) - 1 && man == (1 << ManBits) - 1)
      return std::numeric_limits<float>::quiet_NaN();
    if (!FN && exp == (1 << ExpBits) - 1)
      return man ? std::numeric_limits<float>::quiet_NaN()
                 : s * std::numeric_limits<float>::infinity();
    if (exp == 0)
      return s * std::ldexp(static_cast<float>(man), 1 - bias - ManBits);
    return s * std::ldexp(1.0f + man / float(1 << ManBits), exp - bias);
  }
  static uint8_t encode(float f) {
    // Exhaustive nearest search over the 256 codes: simple and exact.
    if (std::isnan(f))
      return FN ? 0x7f : 0x7e;
    uint8_t best = 0;
    float bestErr = std::numeric_limits<float>::infinity();
    for (int c = 0; c < 256; ++c) {
      float v = decode(static_cast<uint8_t>(c));
      if (std::isnan(v))
        continue;
      float err = std::fabs(v - f);
      if (err < bestErr || (err == bestErr && (c & 1) == 0 && (best & 1))) {
        bestErr = err;
        best = static_cast<uint8_t>(c);
      }
    }
    return best;
  }
};
using f8e4m3fn = f8<4, 3, true>;
using f8e5m2 = f8<5, 2, false>;

/// The type arithmetic on T happens in.
template <class T> struct compute { using type = T; };
template <> struct compute<bf16> { using type = float; };
template <> struct compute<f16> { using type = float; };
template <> struct compute<f8e4m3fn> { using type = float; };
template <> struct compute<f8e5m2> { using type = float; };
template <class T> using compute_t = typename compute<T>::type;

template <class T> inline compute_t<T> cv(T x) {
  return static_cast<compute_t<T>>(x);
}
template <class T, class U> inline T st(U x) {
  if constexpr (std::is_same_v<T, bool>)
    return x != U(0);
  else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<U>)
    return std::isnan(x) ? T(0) : static_cast<T>(std::trunc(x));
  else
    return static_cast<T>(x);
}

//===--------------------------------------------------------------------===//
// Scalar math with PyTorch's semantics
//===--------------------------------------------------------------------===//

template <class T> inline T relu(T x) { return x > T(0) ? x : (x != x ? x : T(0)); }
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
template <class T> inline T gelu(T x) {
  return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
}
template <class T> inline T gelu_tanh(T x) {
  const T k = T(0.79788456080286535588); // sqrt(2/pi)
  return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
}
template <class T> inline T silu(T x) { return x * sigmoid(x); }
template <class T> inline T maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (a != a || b != b)
      return std::numeric_limits<T>::quiet_NaN();
  return a > b ? a : b;
}
template <class T> inline T minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (a != a || b != b)
      return std::numeric_limits<T>::quiet_NaN();
  return a < b ? a : b;
}
template <class T> inline T div_floor(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::floor(a / b);
  } else {
    if (b == 0)
      return 0; // PyTorch raises; compiled code cannot, and returns 0
    T q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
  }
}
template <class T> inline T div_trunc(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return std::trunc(a / b);
  else
    return b == 0 ? T(0) : a / b;
}
/// Python's remainder (the sign of the divisor). Not `remainder`: that name is
/// libm's IEEE remainder, which unqualified calls on double would find.
template <class T> inline T py_remainder(T a, T b) {
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
template <class T> inline T power(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::pow(a, b);
  } else {
    if (b < 0)
      return a == 1 ? 1 : (a == -1 ? (b % 2 ? -1 : 1) : 0);
    T r = 1;
    for (; b; b >>= 1, a *= a)
      if (b & 1)
        r *= a;
    return r;
  }
}

//===--------------------------------------------------------------------===//
// Shapes and indexing
//===--------------------------------------------------------------------===//

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

/// Visits every multi-index of `shape` in row-major order, with the flat
/// offset into an input viewed with `strides` (which may be 0 for broadcast
/// dims or permuted for transposes).
template <class F>
inline void for_each_strided(const i64 *shape, int rank, const i64 *strides,
                             i64 base, F &&f) {
  i64 n = numel(shape, rank);
  if (n == 0)
    return;
  if (rank == 0) {
    f(0, base);
    return;
  }
  std::vector<i64> idx(rank, 0);
  i64 off = base;
  for (i64 flat = 0; flat < n; ++flat) {
    f(flat, off);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        off += strides[d];
        break;
      }
      off -= strides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

/// Copies a strided view of `in` into dense `out` of `shape`, in parallel
/// over the outermost dim.
template <class T>
inline void strided_copy(const T *in, const i64 *shape, int rank,
                         const i64 *strides, i64 base, T *out) {
  if (rank == 0) {
    out[0] = in[base];
    return;
  }
  i64 inner = numel(shape + 1, rank - 1);
#pragma omp parallel for if (shape[0] * inner > 65536)
  for (i64 i = 0; i < shape[0]; ++i)
    for_each_strided(shape + 1, rank - 1, strides + 1, base + i * strides[0],
                     [&](i64 flat, i64 off) { out[i * inner + flat] = in[off]; });
}

template <class T>
void broadcast_in_dim(const T *in, const i64 *in_shape, int in_rank, T *out,
                      const i64 *out_shape, int out_rank, const i64 *dims) {
  std::vector<i64> in_strides(in_rank > 0 ? in_rank : 1), strides(out_rank, 0);
  strides_of(in_shape, in_rank, in_strides.data());
  for (int i = 0; i < in_rank; ++i)
    if (in_shape[i] != 1)
      strides[dims[i]] = in_strides[i];
  strided_copy(in, out_shape, out_rank, strides.data(), 0, out);
}

template <class T>
void transpose(const T *in, const i64 *in_shape, int rank, const i64 *perm,
               T *out) {
  std::vector<i64> in_strides(rank > 0 ? rank : 1), shape(rank), strides(rank);
  strides_of(in_shape, rank, in_strides.data());
  for (int i = 0; i < rank; ++i) {
    shape[i] = in_shape[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  strided_copy(in, shape.data(), rank, strides.data(), 0, out);
}

/// start/step per dim; the output shape is given.
template <class T>
void slice(const T *in, const i64 *in_shape, int rank, const i64 *start,
           const i64 *step, T *out, const i64 *out_shape) {
  std::vector<i64> in_strides(rank > 0 ? rank : 1), strides(rank);
  strides_of(in_shape, rank, in_strides.data());
  i64 base = 0;
  for (int i = 0; i < rank; ++i) {
    base += start[i] * in_strides[i];
    strides[i] = step[i] * in_strides[i];
  }
  strided_copy(in, out_shape, rank, strides.data(), base, out);
}

/// Concatenates `n` inputs along `dim`.
template <class T>
void concat(const T *const *ins, const i64 *const *in_shapes, int n, int rank,
            int dim, T *out, const i64 *out_shape) {
  i64 outer = numel(out_shape, dim);
  i64 inner = numel(out_shape + dim + 1, rank - dim - 1);
  i64 out_row = out_shape[dim] * inner;
  i64 at = 0;
  for (int k = 0; k < n; ++k) {
    i64 row = in_shapes[k][dim] * inner;
#pragma omp parallel for if (outer * row > 65536)
    for (i64 o = 0; o < outer; ++o)
      std::copy(ins[k] + o * row, ins[k] + (o + 1) * row, out + o * out_row + at);
    at += row;
  }
}

/// Constant padding (negative padding crops).
template <class T>
void pad(const T *in, const i64 *in_shape, int rank, const i64 *low, T value,
         T *out, const i64 *out_shape) {
  i64 n = numel(out_shape, rank);
  std::vector<i64> in_strides(rank > 0 ? rank : 1);
  strides_of(in_shape, rank, in_strides.data());
#pragma omp parallel for if (n > 65536)
  for (i64 flat = 0; flat < n; ++flat) {
    i64 rest = flat, off = 0;
    bool inside = true;
    for (int d = rank - 1; d >= 0; --d) {
      i64 i = rest % out_shape[d] - low[d];
      rest /= out_shape[d];
      if (i < 0 || i >= in_shape[d])
        inside = false;
      off += i * in_strides[d];
    }
    out[flat] = inside ? in[off] : value;
  }
}

template <class T>
void iota(T *out, const i64 *shape, int rank, int dim) {
  i64 n = numel(shape, rank);
  i64 inner = numel(shape + dim + 1, rank - dim - 1);
#pragma omp parallel for if (n > 65536)
  for (i64 flat = 0; flat < n; ++flat)
    out[flat] = static_cast<T>((flat / inner) % shape[dim]);
}

/// Wraps an index into [0, size) PyTorch-style is the importer's job; here
/// an out-of-range index reads zero rather than out of bounds.
template <class T, class I>
void index_select(const T *in, const i64 *in_shape, int rank, int dim,
                  const I *index, i64 n_index, T *out) {
  i64 outer = numel(in_shape, dim);
  i64 inner = numel(in_shape + dim + 1, rank - dim - 1);
  i64 size = in_shape[dim];
#pragma omp parallel for if (outer * n_index * inner > 65536)
  for (i64 o = 0; o < outer; ++o)
    for (i64 k = 0; k < n_index; ++k) {
      i64 i = static_cast<i64>(index[k]);
      T *dst = out + (o * n_index + k) * inner;
      if (i < 0 || i >= size)
        std::fill(dst, dst + inner, T());
      else
        std::copy(in + (o * size + i) * inner, in + (o * size + i + 1) * inner, dst);
    }
}

template <class T, class I>
void gather(const T *in, const i64 *in_shape, int rank, int dim, const I *index,
            const i64 *index_shape, T *out) {
  i64 n = numel(index_shape, rank);
  std::vector<i64> in_strides(rank > 0 ? rank : 1);
  strides_of(in_shape, rank, in_strides.data());
#pragma omp parallel for if (n > 65536)
  for (i64 flat = 0; flat < n; ++flat) {
    i64 rest = flat, off = 0;
    bool ok = true;
    for (int d = rank - 1; d >= 0; --d) {
      i64 i = rest % index_shape[d];
      rest /= index_shape[d];
      if (d == dim) {
        i = static_cast<i64>(index[flat]);
        ok = ok && i >= 0 && i < in_shape[d];
      }
      off += i * in_strides[d];
    }
    out[flat] = ok ? in[off] : T();
  }
}

//===--------------------------------------------------------------------===//
// Reductions
//===--------------------------------------------------------------------===//

enum class Reduce { Sum, Mean, Max, Min, Prod };

/// Reduces `in` over the dims flagged in `reduced` (rank entries of 0/1)
/// into `out` (the kept dims in order). Accumulates in double for floats.
template <class T>
void reduce(const T *in, const i64 *shape, int rank, const int *reduced,
            Reduce kind, T *out) {
  using C = compute_t<T>;
  using Acc = std::conditional_t<std::is_floating_point_v<C>, double, C>;
  // Permute so kept dims come first, reduced dims last: out[k] = reduce(row k).
  std::vector<i64> perm_shape, perm_strides, in_strides(rank > 0 ? rank : 1);
  strides_of(shape, rank, in_strides.data());
  i64 n_out = 1, n_red = 1;
  for (int d = 0; d < rank; ++d)
    if (!reduced[d]) {
      perm_shape.push_back(shape[d]);
      perm_strides.push_back(in_strides[d]);
      n_out *= shape[d];
    }
  std::vector<i64> red_shape, red_strides;
  for (int d = 0; d < rank; ++d)
    if (reduced[d]) {
      red_shape.push_back(shape[d]);
      red_strides.push_back(in_strides[d]);
      n_red *= shape[d];
    }
  std::vector<i64> out_offsets(n_out);
  for_each_strided(perm_shape.data(), (int)perm_shape.size(), perm_strides.data(),
                   0, [&](i64 flat, i64 off) { out_offsets[flat] = off; });
  std::vector<i64> red_offsets(n_red);
  for_each_strided(red_shape.data(), (int)red_shape.size(), red_strides.data(), 0,
                   [&](i64 flat, i64 off) { red_offsets[flat] = off; });
#pragma omp parallel for if (n_out * n_red > 32768)
  for (i64 k = 0; k < n_out; ++k) {
    const T *base = in + out_offsets[k];
    Acc acc;
    switch (kind) {
    case Reduce::Sum:
    case Reduce::Mean: acc = 0; break;
    case Reduce::Prod: acc = 1; break;
    case Reduce::Max: acc = std::numeric_limits<Acc>::lowest(); break;
    case Reduce::Min: acc = std::numeric_limits<Acc>::max(); break;
    }
    if constexpr (std::is_floating_point_v<Acc>)
      if (kind == Reduce::Max)
        acc = -std::numeric_limits<Acc>::infinity();
      else if (kind == Reduce::Min)
        acc = std::numeric_limits<Acc>::infinity();
    bool nan = false;
    for (i64 r = 0; r < n_red; ++r) {
      Acc v = static_cast<Acc>(cv(base[red_offsets[r]]));
      if constexpr (std::is_floating_point_v<Acc>)
        nan = nan || v != v;
      switch (kind) {
      case Reduce::Sum:
      case Reduce::Mean: acc += v; break;
      case Reduce::Prod: acc *= v; break;
      case Reduce::Max: acc = v > acc ? v : acc; break;
      case Reduce::Min: acc = v < acc ? v : acc; break;
      }
    }
    if (kind == Reduce::Mean)
      acc = n_red ? acc / static_cast<Acc>(n_red)
                  : std::numeric_limits<Acc>::quiet_NaN();
    if (nan && (kind == Reduce::Max || kind == Reduce::Min))
      acc = std::numeric_limits<Acc>::quiet_NaN();
    out[k] = st<T>(static_cast<C>(acc));
  }
}

/// Index of the first max (is_max) or min along `dim`; NaN counts as the
/// extreme, as in PyTorch.
template <class T>
void arg_reduce(const T *in, const i64 *shape, int rank, int dim, bool is_max,
                int64_t *out) {
  i64 outer = numel(shape, dim), size = shape[dim];
  i64 inner = numel(shape + dim + 1, rank - dim - 1);
#pragma omp parallel for if (outer * inner * size > 32768)
  for (i64 o = 0; o < outer; ++o)
    for (i64 i = 0; i < inner; ++i) {
      i64 best = 0;
      auto bv = cv(in[o * size * inner + i]);
      for (i64 k = 1; k < size; ++k) {
        auto v = cv(in[(o * size + k) * inner + i]);
        if (bv != bv)
          break;
        if (v != v || (is_max ? v > bv : v < bv)) {
          bv = v;
          best = k;
        }
      }
      out[o * inner + i] = best;
    }
}

template <class T>
void cumsum(const T *in, const i64 *shape, int rank, int dim, T *out) {
  i64 outer = numel(shape, dim), size = shape[dim];
  i64 inner = numel(shape + dim + 1, rank - dim - 1);
  for (i64 o = 0; o < outer; ++o)
    for (i64 i = 0; i < inner; ++i) {
      compute_t<T> acc = 0;
      for (i64 k = 0; k < size; ++k) {
        acc += cv(in[(o * size + k) * inner + i]);
        out[(o * size + k) * inner + i] = st<T>(acc);
      }
    }
}

//===--------------------------------------------------------------------===//
// Matmul (CBLAS for f32/f64; loops with f32/f64 accumulation otherwise)
//===--------------------------------------------------------------------===//

/// One GEMM: out[m, n] = op(a) @ op(b), row-major, with the given leading
/// dimensions (oneDNN for float, single-threaded OpenBLAS for double).
template <class T>
inline void gemm(bool ta, bool tb, i64 m, i64 n, i64 k, const T *a, i64 lda,
                 const T *b, i64 ldb, T *out, i64 ldc) {
  if (m <= 0 || n <= 0)
    return;
  if constexpr (std::is_same_v<T, float>) {
    // oneDNN's SGEMM measured 1.05x to 4x faster than OpenBLAS's on the zoo's
    // shapes (docs/performance.md); it threads through OpenMP itself.
    dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb,
               0.0f, out, ldc);
    return;
  }
  auto call = [&](auto fn) {
    fn(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
       (int)m, (int)n, (int)k, T(1), a, (int)lda, b, (int)ldb, T(0), out, (int)ldc);
  };
  if constexpr (std::is_same_v<T, float>)
    call(cblas_sgemm);
  else
    call(cblas_dgemm);
}

/// out[b] = op(lhs[b]) @ op(rhs[b or shared]); lhs is [batch, m, k] (or
/// [batch, k, m] transposed), rhs [batch or 1, k, n] (or [.., n, k]).
///
/// One thread pool: float GEMMs go to oneDNN, which threads through OpenMP;
/// double GEMMs are split over OpenMP's threads (batches, else rows, else
/// columns), each calling a single-threaded OpenBLAS GEMM, so OpenBLAS's own
/// threads never compete with the OpenMP loops around them
/// (thunder_cpu_init sets OpenBLAS to one thread). Batched GEMMs run one
/// batch per OpenMP thread.
template <class T>
void matmul(const T *lhs, const T *rhs, T *out, i64 batch, i64 m, i64 n, i64 k,
            bool ta, bool tb, bool rhs_shared) {
  i64 lhs_stride = m * k, rhs_stride = rhs_shared ? 0 : k * n;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (rhs_shared && !ta) {
      // One GEMM over all batches: [batch*m, k] @ [k, n].
      m *= batch;
      batch = 1;
    }
    i64 lda = ta ? m : k, ldb = tb ? k : n;
    if (batch > 1) {
#pragma omp parallel for if (batch * m * n * k > 32768)
      for (i64 b = 0; b < batch; ++b)
        gemm(ta, tb, m, n, k, lhs + b * lhs_stride, lda, rhs + b * rhs_stride,
             ldb, out + b * m * n, n);
      return;
    }
    if constexpr (std::is_same_v<T, float>) {
      gemm(ta, tb, m, n, k, lhs, lda, rhs, ldb, out, n); // oneDNN threads itself
      return;
    }
    bool parallel = m * n * k > 32768;
#pragma omp parallel if (parallel)
    {
      int threads = omp_get_num_threads(), t = omp_get_thread_num();
      if (m >= 4 * threads) {
        // Rows: op(lhs) rows [r0, r1).
        i64 r0 = m * t / threads, r1 = m * (t + 1) / threads;
        gemm(ta, tb, r1 - r0, n, k, ta ? lhs + r0 : lhs + r0 * k, lda, rhs, ldb,
             out + r0 * n, n);
      } else {
        // Columns: op(rhs) columns [c0, c1) (small m, e.g. one token).
        i64 c0 = n * t / threads, c1 = n * (t + 1) / threads;
        gemm(ta, tb, m, c1 - c0, k, lhs, lda, tb ? rhs + c0 * k : rhs + c0, ldb,
             out + c0, n);
      }
    }
  } else {
    using C = compute_t<T>;
    using Acc = std::conditional_t<std::is_floating_point_v<C>, float, C>;
#pragma omp parallel for collapse(2) if (batch * m * n * k > 65536)
    for (i64 b = 0; b < batch; ++b)
      for (i64 i = 0; i < m; ++i)
        for (i64 j = 0; j < n; ++j) {
          Acc acc = 0;
          for (i64 p = 0; p < k; ++p) {
            T a = ta ? lhs[b * lhs_stride + p * m + i] : lhs[b * lhs_stride + i * k + p];
            T c = tb ? rhs[b * rhs_stride + j * k + p] : rhs[b * rhs_stride + p * n + j];
            acc += static_cast<Acc>(cv(a)) * static_cast<Acc>(cv(c));
          }
          out[(b * m + i) * n + j] = st<T>(static_cast<C>(acc));
        }
  }
}

//===--------------------------------------------------------------------===//
// Convolution (oneDNN direct convolution for f32; im2col + GEMM otherwise)
// and pooling, 1-3 spatial dims
//===--------------------------------------------------------------------===//

struct Window {
  int spatial;
  i64 in[3], out[3], kernel[3], stride[3], pad_lo[3], dilation[3];
};

/// f32 convolutions run as oneDNN convolution primitives (direct JIT kernels
/// on blocked layouts), several times faster than im2col + GEMM. One
/// primitive per convolution shape, created on first use and kept for the
/// library's lifetime in a cache behind a mutex (primitive creation costs far
/// more than a run; models may run from several threads at once). Executing
/// a cached primitive is thread-safe: the scratchpad is ours (user mode) and
/// allocated per call, and each call uses its own stream.
///
/// Layouts: our tensors are plain NC[D]HW and weights plain O I [D]H W. The
/// primitive takes the formats oneDNN prefers (format_tag any), with reorders
/// where they differ from ours: the input and output are reordered per call
/// (kSourceAny: measured faster than plain in/out on ResNet-18, see conv),
/// the weights once, when they are constants (`weights_constant`: a
/// thunder.constant, which lives as long as the model): the reordered copy is
/// keyed by the weight pointer. Constants are the embedded blob or the
/// mapped weights file, checked to be this model's, so a pointer reused after
/// a model is destroyed holds the same bytes. Non-constant weights are
/// reordered per call.
namespace dnnl_conv {

/// Whether the input/output take oneDNN's preferred (blocked) formats, with a
/// reorder each call, or stay plain NC[D]HW.
constexpr bool kSourceAny = true;

struct Buffer {
  void *p = nullptr;
  explicit Buffer(size_t bytes) : p(bytes ? std::aligned_alloc(64, (bytes + 63) / 64 * 64) : nullptr) {}
  ~Buffer() { std::free(p); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
};

struct Primitive {
  bool ok = false;
  dnnl_primitive_t conv = nullptr, src_reorder = nullptr,
                   dst_reorder = nullptr, wei_reorder = nullptr;
  dnnl_memory_desc_t src_user, wei_user, dst_user, bias_md, src_md, wei_md,
      dst_md, scratch_md;
  // Reordered constant weights, by the pointer of the plain ones.
  std::map<const void *, std::unique_ptr<Buffer>> weights;
};

struct Cache {
  std::mutex mutex;
  dnnl_engine_t engine = nullptr;
  std::map<std::vector<i64>, std::unique_ptr<Primitive>> primitives;
  ~Cache() {
    for (auto &entry : primitives)
      for (dnnl_primitive_t p : {entry.second->conv, entry.second->src_reorder,
                                 entry.second->dst_reorder,
                                 entry.second->wei_reorder})
        if (p)
          dnnl_primitive_destroy(p);
    if (engine)
      dnnl_engine_destroy(engine);
  }
};

inline Cache &cache() {
  static Cache c;
  return c;
}

/// A reorder primitive from `from` to `to`, or null when they are equal.
inline bool make_reorder(dnnl_engine_t engine, const dnnl_memory_desc_t &from,
                         const dnnl_memory_desc_t &to, dnnl_primitive_t *out) {
  *out = nullptr;
  if (dnnl_memory_desc_equal(&from, &to))
    return true;
  dnnl_primitive_desc_t pd;
  if (dnnl_reorder_primitive_desc_create(&pd, &from, engine, &to, engine,
                                         nullptr) != dnnl_success)
    return false;
  bool ok = dnnl_primitive_create(out, pd) == dnnl_success;
  dnnl_primitive_desc_destroy(pd);
  return ok;
}

/// Creates the primitive for one convolution (under the cache's mutex).
inline void create(Primitive &p, dnnl_engine_t engine, i64 batch, i64 cin,
                   i64 cout, i64 groups, bool has_bias, const Window &win) {
  static const dnnl_format_tag_t data_tags[] = {dnnl_ncw, dnnl_nchw, dnnl_ncdhw};
  static const dnnl_format_tag_t wei_tags[] = {dnnl_oiw, dnnl_oihw, dnnl_oidhw};
  static const dnnl_format_tag_t gwei_tags[] = {dnnl_goiw, dnnl_goihw, dnnl_goidhw};
  int s = win.spatial, nd = s + 2;
  dnnl_dims_t src{}, dst{}, wei{}, bias{cout}, strides{}, dilates{}, pad_l{},
      pad_r{};
  src[0] = dst[0] = batch;
  src[1] = cin;
  dst[1] = cout;
  int wd = 0;
  if (groups > 1)
    wei[wd++] = groups;
  wei[wd++] = cout / groups;
  wei[wd++] = cin / groups;
  for (int i = 0; i < s; ++i) {
    src[2 + i] = win.in[i];
    dst[2 + i] = win.out[i];
    wei[wd++] = win.kernel[i];
    strides[i] = win.stride[i];
    dilates[i] = win.dilation[i] - 1; // oneDNN counts the holes
    pad_l[i] = win.pad_lo[i];
    // The high padding that makes oneDNN's output size PyTorch's: the
    // smallest that covers the last window, at least 0 (PyTorch's floor may
    // leave input rows unread).
    i64 extent = (win.kernel[i] - 1) * win.dilation[i] + 1;
    pad_r[i] = std::max<i64>(0, (win.out[i] - 1) * win.stride[i] + extent -
                                    win.in[i] - win.pad_lo[i]);
  }
  auto tag = [&](dnnl_memory_desc_t *md, int n, const dnnl_dims_t dims,
                 dnnl_format_tag_t t) {
    return dnnl_memory_desc_init_by_tag(md, n, dims, dnnl_f32, t) == dnnl_success;
  };
  if (!tag(&p.src_user, nd, src, data_tags[s - 1]) ||
      !tag(&p.dst_user, nd, dst, data_tags[s - 1]) ||
      !tag(&p.wei_user, wd, wei, groups > 1 ? gwei_tags[s - 1] : wei_tags[s - 1]) ||
      !tag(&p.bias_md, 1, bias, dnnl_x))
    return;
  dnnl_memory_desc_t src_any, dst_any, wei_any;
  if (!tag(&src_any, nd, src, kSourceAny ? dnnl_format_tag_any : data_tags[s - 1]) ||
      !tag(&dst_any, nd, dst, kSourceAny ? dnnl_format_tag_any : data_tags[s - 1]) ||
      !tag(&wei_any, wd, wei, dnnl_format_tag_any))
    return;
  dnnl_convolution_desc_t desc;
  if (dnnl_dilated_convolution_forward_desc_init(
          &desc, dnnl_forward_inference, dnnl_convolution_direct, &src_any,
          &wei_any, has_bias ? &p.bias_md : nullptr, &dst_any, strides,
          dilates, pad_l, pad_r) != dnnl_success)
    return;
  dnnl_primitive_attr_t attr;
  if (dnnl_primitive_attr_create(&attr) != dnnl_success)
    return;
  dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  dnnl_primitive_desc_t pd;
  dnnl_status_t status =
      dnnl_primitive_desc_create(&pd, &desc, attr, engine, nullptr);
  dnnl_primitive_attr_destroy(attr);
  if (status != dnnl_success)
    return;
  p.src_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  p.wei_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  p.dst_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  p.scratch_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  p.ok = dnnl_primitive_create(&p.conv, pd) == dnnl_success &&
         make_reorder(engine, p.src_user, p.src_md, &p.src_reorder) &&
         make_reorder(engine, p.dst_md, p.dst_user, &p.dst_reorder) &&
         make_reorder(engine, p.wei_user, p.wei_md, &p.wei_reorder);
  dnnl_primitive_desc_destroy(pd);
}

/// Memory objects for one call, destroyed with it.
struct Memories {
  dnnl_engine_t engine;
  std::vector<dnnl_memory_t> all;
  bool ok = true;
  dnnl_memory_t operator()(const dnnl_memory_desc_t &md, const void *data) {
    dnnl_memory_t m = nullptr;
    if (dnnl_memory_create(&m, &md, engine, const_cast<void *>(data)) != dnnl_success)
      ok = false;
    else
      all.push_back(m);
    return m;
  }
  ~Memories() {
    for (dnnl_memory_t m : all)
      dnnl_memory_destroy(m);
  }
};

inline bool run_reorder(dnnl_primitive_t reorder, dnnl_stream_t stream,
                        dnnl_memory_t from, dnnl_memory_t to) {
  dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  return dnnl_primitive_execute(reorder, stream, 2, args) == dnnl_success;
}

/// Runs the convolution through oneDNN; false if oneDNN does not take it
/// (the caller then falls back to im2col + GEMM).
inline bool conv(const float *in, const float *w, const float *bias, float *out,
                 i64 batch, i64 cin, i64 cout, i64 groups, const Window &win,
                 bool weights_constant) {
  Cache &c = cache();
  Primitive *p;
  const void *weights = w;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (!c.engine && dnnl_engine_create(&c.engine, dnnl_cpu, 0) != dnnl_success) {
      c.engine = nullptr;
      return false;
    }
    std::vector<i64> key{win.spatial, batch, cin, cout, groups, bias != nullptr};
    for (int s = 0; s < win.spatial; ++s)
      key.insert(key.end(), {win.in[s], win.out[s], win.kernel[s], win.stride[s],
                             win.pad_lo[s], win.dilation[s]});
    auto &slot = c.primitives[key];
    if (!slot) {
      slot = std::make_unique<Primitive>();
      create(*slot, c.engine, batch, cin, cout, groups, bias != nullptr, win);
    }
    p = slot.get();
    if (!p->ok)
      return false;
    if (p->wei_reorder && weights_constant) {
      auto &copy = p->weights[w];
      if (!copy) {
        auto buffer = std::make_unique<Buffer>(dnnl_memory_desc_get_size(&p->wei_md));
        dnnl_stream_t stream;
        if (dnnl_stream_create(&stream, c.engine, dnnl_stream_default_flags) != dnnl_success)
          return false;
        Memories mem{c.engine};
        dnnl_memory_t from = mem(p->wei_user, w), to = mem(p->wei_md, buffer->p);
        bool ok = mem.ok && run_reorder(p->wei_reorder, stream, from, to) &&
                  dnnl_stream_wait(stream) == dnnl_success;
        dnnl_stream_destroy(stream);
        if (!ok) {
          p->weights.erase(w);
          return false;
        }
        copy = std::move(buffer);
      }
      weights = copy->p;
    }
  }
  // The primitive and the cached weights never change once made: run
  // outside the lock.
  dnnl_stream_t stream;
  if (dnnl_stream_create(&stream, c.engine, dnnl_stream_default_flags) != dnnl_success)
    return false;
  Memories mem{c.engine};
  Buffer scratch(dnnl_memory_desc_get_size(&p->scratch_md));
  Buffer src_buf(p->src_reorder ? dnnl_memory_desc_get_size(&p->src_md) : 0);
  Buffer dst_buf(p->dst_reorder ? dnnl_memory_desc_get_size(&p->dst_md) : 0);
  Buffer wei_buf(p->wei_reorder && weights == w ? dnnl_memory_desc_get_size(&p->wei_md) : 0);
  bool ok = true;
  dnnl_memory_t src = mem(p->src_md, p->src_reorder ? src_buf.p : in);
  dnnl_memory_t dst = mem(p->dst_md, p->dst_reorder ? dst_buf.p : out);
  dnnl_memory_t wei = mem(p->wei_md, wei_buf.p ? wei_buf.p : weights);
  if (p->src_reorder)
    ok = ok && mem.ok && run_reorder(p->src_reorder, stream, mem(p->src_user, in), src);
  if (wei_buf.p)
    ok = ok && mem.ok && run_reorder(p->wei_reorder, stream, mem(p->wei_user, w), wei);
  if (ok && mem.ok) {
    std::vector<dnnl_exec_arg_t> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei},
                                      {DNNL_ARG_DST, dst}};
    if (bias)
      args.push_back({DNNL_ARG_BIAS, mem(p->bias_md, bias)});
    if (scratch.p)
      args.push_back({DNNL_ARG_SCRATCHPAD, mem(p->scratch_md, scratch.p)});
    ok = mem.ok && dnnl_primitive_execute(p->conv, stream, int(args.size()),
                                          args.data()) == dnnl_success;
  }
  if (ok && p->dst_reorder)
    ok = mem.ok && run_reorder(p->dst_reorder, stream, dst, mem(p->dst_user, out));
  ok = dnnl_stream_wait(stream) == dnnl_success && ok;
  dnnl_stream_destroy(stream);
  return ok;
}

} // namespace dnnl_conv

/// out = conv(in, w) + bias over 1-3 spatial dims, NC[D]HW input and output,
/// O I/groups [D]H W weights. f32 goes to oneDNN (dnnl_conv above); what it
/// does not take (f64, f16, bf16, f8, integers, or a shape oneDNN refuses)
/// runs as im2col + GEMM per group: each group's input patches unrolled into
/// a [cin_g * kernel, out_size] matrix, then one GEMM with the weights.
template <class T>
void conv(const T *in, const T *w, const T *bias, T *out, i64 batch, i64 cin,
          i64 cout, i64 groups, const Window &win, bool weights_constant = false) {
  if constexpr (std::is_same_v<T, float>) {
    if (dnnl_conv::conv(in, w, bias, out, batch, cin, cout, groups, win,
                        weights_constant))
      return;
  }
  i64 in_size = 1, out_size = 1, k_size = 1;
  for (int s = 0; s < win.spatial; ++s) {
    in_size *= win.in[s];
    out_size *= win.out[s];
    k_size *= win.kernel[s];
  }
  i64 cin_g = cin / groups, cout_g = cout / groups, rows = cin_g * k_size;
  std::vector<T> cols(static_cast<size_t>(rows * out_size));
  for (i64 b = 0; b < batch; ++b)
    for (i64 g = 0; g < groups; ++g) {
      const T *x = in + (b * cin + g * cin_g) * in_size;
#pragma omp parallel for if (rows * out_size > 65536)
      for (i64 r = 0; r < rows; ++r) {
        i64 c = r / k_size, kflat = r % k_size;
        i64 kidx[3] = {0, 0, 0};
        for (int s = win.spatial - 1; s >= 0; --s) {
          kidx[s] = kflat % win.kernel[s];
          kflat /= win.kernel[s];
        }
        for (i64 o = 0; o < out_size; ++o) {
          i64 oflat = o, off = 0;
          bool inside = true;
          i64 mul = 1;
          for (int s = win.spatial - 1; s >= 0; --s) {
            i64 oi = oflat % win.out[s];
            oflat /= win.out[s];
            i64 ii = oi * win.stride[s] - win.pad_lo[s] + kidx[s] * win.dilation[s];
            inside = inside && ii >= 0 && ii < win.in[s];
            off += ii * mul;
            mul *= win.in[s];
          }
          cols[r * out_size + o] = inside ? x[c * in_size + off] : T(0);
        }
      }
      matmul(w + g * cout_g * rows, cols.data(),
             out + (b * cout + g * cout_g) * out_size, 1, cout_g, out_size, rows,
             false, false, false);
    }
  if (bias)
    for (i64 b = 0; b < batch; ++b)
#pragma omp parallel for if (cout * out_size > 65536)
      for (i64 c = 0; c < cout; ++c)
        for (i64 o = 0; o < out_size; ++o) {
          T &v = out[(b * cout + c) * out_size + o];
          v = st<T>(cv(v) + cv(bias[c]));
        }
}

/// Max (is_max) or average pooling over the trailing spatial dims; `planes`
/// is the product of the leading dims.
template <class T>
void pool(const T *in, T *out, i64 planes, const Window &win, bool is_max,
          bool count_include_pad, const i64 *pad_hi) {
  using C = compute_t<T>;
  i64 in_size = 1, out_size = 1;
  for (int s = 0; s < win.spatial; ++s) {
    in_size *= win.in[s];
    out_size *= win.out[s];
  }
#pragma omp parallel for if (planes * out_size > 32768)
  for (i64 p = 0; p < planes; ++p)
    for (i64 o = 0; o < out_size; ++o) {
      i64 oidx[3] = {0, 0, 0}, oflat = o;
      for (int s = win.spatial - 1; s >= 0; --s) {
        oidx[s] = oflat % win.out[s];
        oflat /= win.out[s];
      }
      double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
      bool nan = false;
      i64 count = 0, padded_count = 1;
      // PyTorch's avg divisor with count_include_pad: the window clipped to
      // the padded input.
      for (int s = 0; s < win.spatial; ++s) {
        i64 start = oidx[s] * win.stride[s] - win.pad_lo[s];
        i64 end = std::min(start + win.kernel[s], win.in[s] + pad_hi[s]);
        padded_count *= end - start;
      }
      i64 kn = 1;
      for (int s = 0; s < win.spatial; ++s)
        kn *= win.kernel[s];
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
        double v = static_cast<double>(cv(in[p * in_size + off]));
        ++count;
        if (is_max) {
          nan = nan || v != v;
          acc = v > acc ? v : acc;
        } else {
          acc += v;
        }
      }
      if (is_max && nan)
        acc = std::numeric_limits<double>::quiet_NaN();
      if (!is_max)
        acc /= static_cast<double>(count_include_pad ? padded_count : count);
      out[p * out_size + o] = st<T>(static_cast<C>(acc));
    }
}

//===--------------------------------------------------------------------===//
// Composites (rows along the last dims; computed in float or double)
//===--------------------------------------------------------------------===//

/// softmax / log_softmax along `dim`.
template <class T>
void softmax(const T *in, const i64 *shape, int rank, int dim, bool log, T *out) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  i64 outer = numel(shape, dim), size = shape[dim];
  i64 inner = numel(shape + dim + 1, rank - dim - 1);
#pragma omp parallel for collapse(2) if (outer * inner * size > 32768)
  for (i64 o = 0; o < outer; ++o)
    for (i64 i = 0; i < inner; ++i) {
      const T *x = in + o * size * inner + i;
      T *y = out + o * size * inner + i;
      C mx = -std::numeric_limits<C>::infinity();
      for (i64 k = 0; k < size; ++k)
        mx = std::max(mx, static_cast<C>(cv(x[k * inner])));
      if (std::isinf(mx) && mx < 0)
        mx = 0;
      C sum = 0;
      for (i64 k = 0; k < size; ++k)
        sum += std::exp(static_cast<C>(cv(x[k * inner])) - mx);
      C lse = std::log(sum);
      for (i64 k = 0; k < size; ++k) {
        C v = static_cast<C>(cv(x[k * inner])) - mx;
        y[k * inner] = st<T>(static_cast<compute_t<T>>(log ? v - lse : std::exp(v) / sum));
      }
    }
}

/// layer_norm (rms = false) or rms_norm over rows of `row` elements.
template <class T>
void norm(const T *in, const T *weight, const T *bias, T *out, i64 rows, i64 row,
          double eps, bool rms) {
#pragma omp parallel for if (rows * row > 32768)
  for (i64 r = 0; r < rows; ++r) {
    const T *x = in + r * row;
    T *y = out + r * row;
    double mean = 0, sq = 0;
    if (!rms) {
      for (i64 k = 0; k < row; ++k)
        mean += static_cast<double>(cv(x[k]));
      mean /= row;
    }
    for (i64 k = 0; k < row; ++k) {
      double d = static_cast<double>(cv(x[k])) - mean;
      sq += d * d;
    }
    double rstd = 1.0 / std::sqrt(sq / row + eps);
    for (i64 k = 0; k < row; ++k) {
      double v = (static_cast<double>(cv(x[k])) - mean) * rstd;
      if (weight)
        v *= static_cast<double>(cv(weight[k]));
      if (bias)
        v += static_cast<double>(cv(bias[k]));
      y[k] = st<T>(static_cast<compute_t<T>>(v));
    }
  }
}

/// Inference batch norm over [N, C, rest].
template <class T>
void batch_norm(const T *in, const T *mean, const T *var, const T *weight,
                const T *bias, T *out, i64 n, i64 c, i64 rest, double eps) {
#pragma omp parallel for collapse(2) if (n * c * rest > 32768)
  for (i64 b = 0; b < n; ++b)
    for (i64 ch = 0; ch < c; ++ch) {
      double scale = 1.0 / std::sqrt(static_cast<double>(cv(var[ch])) + eps);
      if (weight)
        scale *= static_cast<double>(cv(weight[ch]));
      double shift = bias ? static_cast<double>(cv(bias[ch])) : 0.0;
      double m = static_cast<double>(cv(mean[ch]));
      const T *x = in + (b * c + ch) * rest;
      T *y = out + (b * c + ch) * rest;
      for (i64 k = 0; k < rest; ++k)
        y[k] = st<T>(static_cast<compute_t<T>>(
            (static_cast<double>(cv(x[k])) - m) * scale + shift));
    }
}

/// Scaled dot-product attention per [batch] slice: q [L, E], k [S, E],
/// v [S, Ev]; mask (optional) is given per element through `mask_at`.
/// float: two SGEMMs around a softmax in float (PyTorch's CPU kernels also
/// accumulate in float); other types: loops with double accumulation.
template <class T, class MaskAt>
void sdpa(const T *q, const T *k, const T *v, T *out, i64 batch, i64 l, i64 s,
          i64 e, i64 ev, double scale, bool causal, MaskAt &&mask_at) {
  if constexpr (std::is_same_v<T, float>) {
    // Per batch (and head): the scores S = scale * Q K^T in one SGEMM, the
    // masked softmax of each row in place, then O = P V in another SGEMM.
    // Batches go to OpenMP's threads (oneDNN runs single-threaded inside
    // them); the scores live in a per-thread buffer that persists across
    // calls, so a run allocates nothing.
#pragma omp parallel for if (batch > 1)
    for (i64 b = 0; b < batch; ++b) {
      static thread_local std::vector<float> buffer;
      if (static_cast<i64>(buffer.size()) < l * s)
        buffer.resize(static_cast<size_t>(l * s));
      float *scores = buffer.data();
      dnnl_sgemm('N', 'T', l, s, e, static_cast<float>(scale), q + b * l * e, e,
                 k + b * s * e, e, 0.0f, scores, s);
      for (i64 i = 0; i < l; ++i) {
        float *row = scores + i * s;
        float mx = -std::numeric_limits<float>::infinity();
        for (i64 j = 0; j < s; ++j) {
          float sc = row[j];
          if (causal && j > i)
            sc = -std::numeric_limits<float>::infinity();
          sc = static_cast<float>(mask_at(static_cast<double>(sc), b, i, j));
          row[j] = sc;
          mx = std::max(mx, sc);
        }
        float sum = 0;
        for (i64 j = 0; j < s; ++j) {
          row[j] = std::isinf(mx) && mx < 0 ? 0.0f : std::exp(row[j] - mx);
          sum += row[j];
        }
        const float inv = sum > 0 ? 1.0f / sum : 1.0f;
#pragma omp simd
        for (i64 j = 0; j < s; ++j)
          row[j] *= inv;
      }
      dnnl_sgemm('N', 'N', l, ev, s, 1.0f, scores, s, v + b * s * ev, ev, 0.0f,
                 out + b * l * ev, ev);
    }
    return;
  }
#pragma omp parallel for collapse(2) if (batch * l * s * e > 65536)
  for (i64 b = 0; b < batch; ++b)
    for (i64 i = 0; i < l; ++i) {
      std::vector<double> scores(static_cast<size_t>(s));
      double mx = -std::numeric_limits<double>::infinity();
      for (i64 j = 0; j < s; ++j) {
        double dot = 0;
        for (i64 p = 0; p < e; ++p)
          dot += static_cast<double>(cv(q[(b * l + i) * e + p])) *
                 static_cast<double>(cv(k[(b * s + j) * e + p]));
        double sc = dot * scale;
        if (causal && j > i)
          sc = -std::numeric_limits<double>::infinity();
        sc = mask_at(sc, b, i, j);
        scores[j] = sc;
        mx = std::max(mx, sc);
      }
      double sum = 0;
      for (i64 j = 0; j < s; ++j) {
        scores[j] = std::isinf(mx) && mx < 0 ? 0.0 : std::exp(scores[j] - mx);
        sum += scores[j];
      }
      for (i64 p = 0; p < ev; ++p) {
        double acc = 0;
        for (i64 j = 0; j < s; ++j)
          acc += scores[j] * static_cast<double>(cv(v[(b * s + j) * ev + p]));
        out[(b * l + i) * ev + p] =
            st<T>(static_cast<compute_t<T>>(sum > 0 ? acc / sum : acc));
      }
    }
}

} // namespace thunder_cpu

#endif // THUNDER_CPU_H
