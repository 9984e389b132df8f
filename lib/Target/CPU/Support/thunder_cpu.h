// thunder_cpu.h: the support library that Thunder's generated CPU code includes.
//
// Shipped inside the compiler and written next to the generated sources, so a
// compiled model needs only a C++17 compiler, OpenMP and a CBLAS. Generated
// code emits elementwise loops itself and calls these templates for
// everything with more structure. All tensors are dense row-major; shapes are
// int64_t arrays; low-precision types (f16, bf16, f8) are computed in float.
#ifndef THUNDER_CPU_H
#define THUNDER_CPU_H

#include "thunder_cpu_base.h"
#include "thunder_cpu_host.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include <cblas.h>
#include <dnnl.h>

namespace thunder_cpu {

// thunder_cpu_init, FileBackedWeights, release_weight_pages: thunder_cpu_host.h.

//===--------------------------------------------------------------------===//
// Shapes and indexing
//===--------------------------------------------------------------------===//

// numel and strides_of: thunder_scalar.h.

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
    // A negative start (a dynamic dim's) counts from the size, clamped at 0.
    const i64 first = start[i] < 0 ? std::max<i64>(in_shape[i] + start[i], 0) : start[i];
    base += first * in_strides[i];
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

/// thunder.random: n elements of `kind` (random_element in thunder_scalar.h),
/// each from its own index, so the loop is parallel and its result does not
/// depend on the thread count.
template <class T>
void draw_random(T *out, i64 n, int kind, int digits, i64 seed, i64 offset, i64 stream) {
#pragma omp parallel for if (n > 16384)
  for (i64 i = 0; i < n; ++i)
    out[i] = random_element<T>(kind, digits, uint64_t(seed), uint64_t(offset),
                               uint32_t(stream), uint64_t(i));
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

/// An embedding lookup whose [n, k] table is stored as the GEMM's packed
/// panels of its transpose (a table tied to an LM head): 32 rows of the table
/// per panel, k deep, row v at panel v / 32, column v % 32. Out-of-range
/// indices read zero, as index_select's do.
template <class I>
void embedding_from_panels(const float *panels, i64 n, i64 k, const I *index, i64 count,
                           float *out) {
  constexpr i64 kWidth = 32; // thunder_gemm::kNR
#pragma omp parallel for if (count * k > 65536)
  for (i64 t = 0; t < count; ++t) {
    const i64 v = static_cast<i64>(index[t]);
    float *dst = out + t * k;
    if (v < 0 || v >= n) {
      std::fill(dst, dst + k, 0.0f);
      continue;
    }
    const float *src = panels + v / kWidth * k * kWidth + v % kWidth;
    for (i64 c = 0; c < k; ++c)
      dst[c] = src[c * kWidth];
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

/// The stable sorting permutation of every line along `dim` (argsort).
template <class T>
void argsort(const T *in, const i64 *shape, int rank, int dim, bool descending, i64 *out) {
  i64 outer = numel(shape, dim), size = rank ? shape[dim] : 1;
  i64 inner = rank ? numel(shape + dim + 1, rank - dim - 1) : 1;
#pragma omp parallel for if (outer * inner * size > 65536)
  for (i64 line = 0; line < outer * inner; ++line) {
    i64 o = line / inner, i = line % inner;
    const T *base = in + o * size * inner + i;
    std::vector<i64> order(size);
    for (i64 k = 0; k < size; ++k)
      order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](i64 a, i64 b) {
      return sorts_before(cv(base[a * inner]), cv(base[b * inner]), descending);
    });
    for (i64 k = 0; k < size; ++k)
      out[o * size * inner + i + k * inner] = order[k];
  }
}

/// torch.scatter_reduce: `out` is the input with `src` scattered in along `dim`.
template <class T, class I>
void scatter(const T *in, const i64 *in_shape, int rank, int dim, const I *index,
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
  if (out != in)
    std::copy(in, in + numel(in_shape, rank), out);
  i64 k = rank ? index_shape[dim] : 1;
  i64 lines = k ? numel(index_shape, rank) / k : 0;
#pragma omp parallel for if (numel(index_shape, rank) > 65536)
  for (i64 line = 0; line < lines; ++line)
    scatter_line(g, line, index, src, static_cast<Scatter>(reduce), include_self, out);
}

//===--------------------------------------------------------------------===//
// Matmul (Thunder's GEMM for f32, CBLAS for f64; loops with f32/f64
// accumulation otherwise)
//===--------------------------------------------------------------------===//

/// One GEMM: out[m, n] = op(a) @ op(b), row-major, with the given leading
/// dimensions (Thunder's own for float, single-threaded OpenBLAS for double).
template <class T>
inline void gemm(bool ta, bool tb, i64 m, i64 n, i64 k, const T *a, i64 lda,
                 const T *b, i64 ldb, T *out, i64 ldc) {
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0) {
    // An empty sum: zeros. The libraries refuse lda = 0 and leave `out` as it
    // was, which would hand back whatever the arena held.
    for (i64 r = 0; r < m; ++r)
      std::fill(out + r * ldc, out + r * ldc + n, T(0));
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    // Thunder's own packed GEMM (thunder_cpu_gemm.h): faster than oneDNN 2.x's
    // and OpenBLAS's SGEMM on the zoo's shapes (docs/performance.md, "GEMM
    // microbenchmark"); it threads through OpenMP itself.
    thunder_gemm::sgemm(ta, tb, m, n, k, a, lda, b, ldb, out, ldc);
  } else {
    // double: single-threaded OpenBLAS, which the library then links (only
    // then: the link is --as-needed, and float never names it).
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)m, (int)n, (int)k, 1.0, a, (int)lda, b, (int)ldb, 0.0, out, (int)ldc);
  }
}

/// out[b] = op(lhs[b]) @ op(rhs[b or shared]); lhs is [batch, m, k] (or
/// [batch, k, m] transposed), rhs [batch or 1, k, n] (or [.., n, k]).
///
/// One thread pool: float GEMMs go to Thunder's own GEMM (thunder_cpu_gemm.h),
/// which threads through OpenMP; double GEMMs are split over OpenMP's threads
/// (batches, else rows, else columns), each calling a single-threaded OpenBLAS GEMM, so OpenBLAS's own
/// threads never compete with the OpenMP loops around them
/// (thunder_cpu_init sets OpenBLAS to one thread). Batched GEMMs run one
/// batch per OpenMP thread.
template <class T>
void matmul(const T *lhs, const T *rhs, T *out, i64 batch, i64 m, i64 n, i64 k,
            bool ta, bool tb, bool rhs_shared) {
  i64 lhs_stride = m * k, rhs_stride = rhs_shared ? 0 : k * n;
  if constexpr (std::is_same_v<T, float>) {
    thunder_gemm::matmul_f32(lhs, rhs, nullptr, out, batch, m, n, k, ta, tb, rhs_shared,
                     thunder_gemm::NoEpilogue{});
    return;
  } else if constexpr (std::is_same_v<T, double>) {
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

} // namespace thunder_cpu

#include "thunder_cpu_conv.h"

namespace thunder_cpu {

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
      C mx = lowest<C>();
      for (i64 k = 0; k < size; ++k)
        mx = softmax_max(mx, static_cast<C>(cv(x[k * inner])));
      mx = softmax_shift(mx);
      C sum = 0;
      for (i64 k = 0; k < size; ++k)
        sum += std::exp(static_cast<C>(cv(x[k * inner])) - mx);
      C lse = std::log(sum);
      for (i64 k = 0; k < size; ++k)
        y[k * inner] = softmax_out<T>(static_cast<C>(cv(x[k * inner])) - mx, sum, lse, log);
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

#include "thunder_cpu_attention.h"

#endif // THUNDER_CPU_H
