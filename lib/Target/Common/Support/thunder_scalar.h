// thunder_scalar.h: the scalar vocabulary of Thunder's generated kernels, for
// every target (included by thunder_cpu.h and the GPU headers).
//
// One definition of PyTorch's scalar rules: the type arithmetic happens in
// (compute_t: f16, bf16 and f8 in float), conversions (cv, st), the
// activations, NaN-propagating maximum / minimum, Python's floor division and
// remainder, integer powers, and the steps of a softmax. Every function is
// THUNDER_HD: __host__ __device__ under a GPU compiler, plain inline C++
// otherwise.
//
// The element types are the target's: its header defines them and tells
// this one which are narrow floats (is_lowp) and, where a plain conversion
// from float is not PyTorch's, how to narrow (narrow<T>::from).
#ifndef THUNDER_SCALAR_H
#define THUNDER_SCALAR_H

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define THUNDER_HD __host__ __device__
#else
#define THUNDER_HD
#endif

namespace thunder_scalar {

//===--------------------------------------------------------------------===//
// Element types and conversions
//===--------------------------------------------------------------------===//

/// Whether T is a narrow float stored as its own type and computed in float
/// (f16, bf16, f8): the target's header specializes it for its types.
template <class T> struct is_lowp : std::false_type {};

/// Float to a narrow type T, as PyTorch converts (to nearest even). A
/// target specializes it where T's own conversion differs (CUDA's f8
/// constructors saturate; PyTorch gives NaN or infinity).
template <class T> struct narrow {
  static THUNDER_HD T from(float x) { return T(x); }
};

/// The type arithmetic on T happens in.
template <class T> struct compute {
  using type = std::conditional_t<is_lowp<T>::value, float, T>;
};
template <class T> using compute_t = typename compute<T>::type;

/// The accumulator of reductions and GEMM-like loops over T.
template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                 std::conditional_t<is_lowp<T>::value ||
                                                        std::is_same_v<T, float>,
                                                    float, compute_t<T>>>;

/// Loads an element as its compute type.
template <class T> THUNDER_HD inline compute_t<T> cv(T x) {
  return static_cast<compute_t<T>>(x);
}

/// Stores a compute-typed value as T with PyTorch's conversion rules: to bool
/// is `!= 0`, float to integer truncates (NaN gives 0), narrowing to a narrow
/// float goes through float (as PyTorch's does) to nearest even.
template <class T, class U> THUNDER_HD inline T st(U x) {
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (is_lowp<U>::value)
      return static_cast<float>(x) != 0.0f;
    else
      return x != U(0);
  } else if constexpr (is_lowp<T>::value) {
    return narrow<T>::from(static_cast<float>(x));
  } else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<U>) {
    return x != x ? T(0) : static_cast<T>(std::trunc(x));
  } else if constexpr (is_lowp<U>::value) {
    return st<T>(static_cast<float>(x));
  } else {
    return static_cast<T>(x);
  }
}

//===--------------------------------------------------------------------===//
// Scalar math with PyTorch's semantics
//===--------------------------------------------------------------------===//

/// torch.relu: NaN and -0. pass through (clamp_min(x, 0)).
template <class T> THUNDER_HD inline T relu(T x) { return x < T(0) ? T(0) : x; }
THUNDER_HD inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
THUNDER_HD inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
template <class T> THUNDER_HD inline T gelu(T x) {
  return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
}
template <class T> THUNDER_HD inline T gelu_tanh(T x) {
  const T k = T(0.79788456080286535588); // sqrt(2/pi)
  return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
}
template <class T> THUNDER_HD inline T silu(T x) { return x * sigmoid(x); }
/// NaN wins, as in torch.maximum.
template <class T> THUNDER_HD inline T maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a)
      return a;
    if (b != b)
      return b;
  }
  return a > b ? a : b;
}
/// NaN wins, as in torch.minimum.
template <class T> THUNDER_HD inline T minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a)
      return a;
    if (b != b)
      return b;
  }
  return a < b ? a : b;
}
/// PyTorch's floor division (div_floor_floating for floats: the quotient of
/// a - fmod(a, b), so that 1. // 0.1 is 9., not floor(10.000000000000002)).
template <class T> THUNDER_HD inline T div_floor(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (b == T(0))
      return a / b;
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != T(0) && (b < T(0)) != (mod < T(0)))
      div -= T(1);
    if (div == T(0))
      return std::copysign(T(0), a / b);
    T floordiv = std::floor(div);
    return div - floordiv > T(0.5) ? floordiv + T(1) : floordiv;
  } else {
    if (b == 0)
      return 0; // PyTorch raises; compiled code cannot, and returns 0
    T q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
  }
}
template <class T> THUNDER_HD inline T div_trunc(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return std::trunc(a / b);
  else
    return b == 0 ? T(0) : a / b;
}
/// Python's remainder (the sign of the divisor). Not `remainder`: that name is
/// libm's IEEE remainder, which unqualified calls on double would find.
template <class T> THUNDER_HD inline T py_remainder(T a, T b) {
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
/// C's remainder (the sign of the dividend), torch.fmod.
template <class T> THUNDER_HD inline T c_fmod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return std::fmod(a, b);
  else
    return b == 0 ? T(0) : T(a % b);
}
template <class T> THUNDER_HD inline T power(T a, T b) {
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
template <class A> THUNDER_HD inline A lowest() {
  if constexpr (std::is_floating_point_v<A>)
    return -std::numeric_limits<A>::infinity();
  else
    return std::numeric_limits<A>::lowest();
}
template <class A> THUNDER_HD inline A highest() {
  if constexpr (std::is_floating_point_v<A>)
    return std::numeric_limits<A>::infinity();
  else
    return std::numeric_limits<A>::max();
}

//===--------------------------------------------------------------------===//
// Shapes (dense row-major, dims as int64_t arrays)
//===--------------------------------------------------------------------===//

THUNDER_HD inline int64_t numel(const int64_t *shape, int rank) {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i)
    n *= shape[i];
  return n;
}

/// Row-major strides of `shape`.
THUNDER_HD inline void strides_of(const int64_t *shape, int rank, int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape[i];
  }
}

//===--------------------------------------------------------------------===//
// Softmax, as PyTorch computes it: y = exp(x - max) / sum(exp(x - max)),
// log_softmax = (x - max) - log(sum(exp(x - max))), in the accumulator type
//===--------------------------------------------------------------------===//

/// The running max of a row: NaN propagates (as torch.max's does), so a row
/// holding a NaN is NaN throughout.
template <class A> THUNDER_HD inline A softmax_max(A mx, A x) { return maximum(mx, x); }

/// The shift subtracted from a row: its max, except 0 for a row whose max is
/// -inf (every element -inf), where x - max would be NaN; exp(-inf) is then
/// 0 and the row's sum 0, so softmax gives NaN and log_softmax NaN, as
/// PyTorch's do.
template <class A> THUNDER_HD inline A softmax_shift(A mx) {
  return mx == lowest<A>() ? A(0) : mx;
}

/// One output element from v = x - shift, the row's sum of exp(v) and the
/// log of that sum.
template <class T, class A> THUNDER_HD inline T softmax_out(A v, A sum, A lse, bool log) {
  return st<T>(static_cast<compute_t<T>>(log ? v - lse : std::exp(v) / sum));
}

//===--------------------------------------------------------------------===//
// Sorting and scattering along a dimension: one line (the elements that
// differ only in `dim`) at a time, so that lines run in parallel without
// races, each in the order a serial loop takes
//===--------------------------------------------------------------------===//

/// Whether `a` sorts before `b`: NaN above every number, as torch.sort has it.
template <class A> THUNDER_HD inline bool sorts_before(A a, A b, bool descending) {
  bool a_nan = a != a, b_nan = b != b;
  if (descending)
    return (a_nan && !b_nan) || a > b;
  return (!a_nan && b_nan) || a < b;
}

/// The position of element `k` of a line of `size` (stride `inner` from
/// `line`) in its stable sort.
template <class T>
THUNDER_HD inline int64_t sorted_rank(const T *line, int64_t size, int64_t inner, int64_t k,
                                      bool descending) {
  compute_t<T> x = cv(line[k * inner]);
  int64_t rank = 0;
  for (int64_t m = 0; m < size; ++m) {
    compute_t<T> y = cv(line[m * inner]);
    if (sorts_before(y, x, descending) || (m < k && !sorts_before(x, y, descending)))
      ++rank;
  }
  return rank;
}

/// torch.scatter_reduce's `reduce`, in ScatterOp's order of names.
enum class Scatter { None, Sum, Prod, Amax, Amin, Mean };

/// The shapes and strides of a scatter: input (= output), index and src.
struct ScatterInfo {
  int rank, dim;
  int64_t index_shape[8], in_shape[8], in_stride[8], index_stride[8], src_stride[8];
};

/// One line of a scatter into `out` (already a copy of the input): `line`
/// numbers the index's positions outside `dim`.
template <class T, class I>
THUNDER_HD inline void scatter_line(const ScatterInfo &g, int64_t line, const I *index,
                                    const T *src, Scatter reduce, bool include_self, T *out) {
  int64_t in_off = 0, index_off = 0, src_off = 0, rest = line;
  for (int d = g.rank - 1; d >= 0; --d) {
    if (d == g.dim)
      continue;
    int64_t c = rest % g.index_shape[d];
    rest /= g.index_shape[d];
    in_off += c * g.in_stride[d];
    index_off += c * g.index_stride[d];
    src_off += c * g.src_stride[d];
  }
  int64_t K = g.rank ? g.index_shape[g.dim] : 1, J = g.rank ? g.in_shape[g.dim] : 1;
  int64_t is = g.rank ? g.index_stride[g.dim] : 0, ss = g.rank ? g.src_stride[g.dim] : 0,
          os = g.rank ? g.in_stride[g.dim] : 0;
  using A = compute_t<T>;
  auto target = [&](int64_t k) -> int64_t {
    int64_t j = static_cast<int64_t>(index[index_off + k * is]);
    if (j < 0)
      j += J;
    return j >= 0 && j < J ? j : -1;
  };
  if (reduce != Scatter::None && !include_self)
    for (int64_t k = 0; k < K; ++k)
      if (int64_t j = target(k); j >= 0)
        out[in_off + j * os] = st<T>(reduce == Scatter::Prod   ? A(1)
                                     : reduce == Scatter::Amax ? lowest<A>()
                                     : reduce == Scatter::Amin ? highest<A>()
                                                               : A(0));
  for (int64_t k = 0; k < K; ++k) {
    int64_t j = target(k);
    if (j < 0)
      continue;
    T &o = out[in_off + j * os];
    A v = cv(src[src_off + k * ss]), cur = cv(o);
    switch (reduce) {
    case Scatter::None: o = src[src_off + k * ss]; break;
    case Scatter::Sum:
    case Scatter::Mean: o = st<T>(A(cur + v)); break;
    case Scatter::Prod: o = st<T>(A(cur * v)); break;
    case Scatter::Amax: o = st<T>(maximum(cur, v)); break;
    case Scatter::Amin: o = st<T>(minimum(cur, v)); break;
    }
  }
  if (reduce == Scatter::Mean)
    for (int64_t k = 0; k < K; ++k) {
      int64_t j = target(k), count = include_self ? 1 : 0;
      bool first = j >= 0;
      for (int64_t m = 0; m < K && first; ++m)
        if (target(m) == j) {
          first = m >= k;
          ++count;
        }
      if (!first)
        continue;
      T &o = out[in_off + j * os];
      if constexpr (std::is_floating_point_v<A>)
        o = st<T>(A(cv(o) / A(count)));
      else
        o = st<T>(div_floor(cv(o), A(count)));
    }
}

//===--------------------------------------------------------------------===//
// Random numbers (thunder.random)
//===--------------------------------------------------------------------===//

/// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
/// 3", SC'11): four 32-bit words from a 128-bit counter and a 64-bit key, in
/// ten rounds of two 32x32->64 multiplies. Counter-based: element i of a
/// tensor is computed from i alone, so every thread, lane and target draws
/// the same number for it.
struct philox_block {
  uint32_t w[4];
};
THUNDER_HD inline philox_block philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2,
                                             uint32_t c3, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(0xD2511F53u) * c0, p1 = uint64_t(0xCD9E8D57u) * c2;
    uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0, n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
    c0 = n0;
    c1 = uint32_t(p1);
    c2 = n2;
    c3 = uint32_t(p0);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

/// The block of element `i` of the random op `stream` in the run keyed by
/// (seed, offset): counter (i, stream, offset's low word), key the seed with
/// offset's high word folded in (docs/dialect.md, thunder.random).
THUNDER_HD inline philox_block random_block(uint64_t seed, uint64_t offset, uint32_t stream,
                                            uint64_t i) {
  return philox4x32_10(uint32_t(i), uint32_t(i >> 32), stream, uint32_t(offset),
                       uint32_t(seed), uint32_t(seed >> 32) ^ uint32_t(offset >> 32));
}

/// The kinds of thunder.random (RandomDistribution's values).
enum random_kind : int { kRandomUniform = 0, kRandomNormal = 1, kRandomBits = 2 };

/// Element i of a thunder.random of kind `kind` with elements of type T
/// (int64_t for kRandomBits) that have `digits` significand bits (24 for
/// f32, 53 for f64, 8 for bf16, 11 for f16): uniform draws a multiple of
/// 2^-digits in [0, 1), so rounding to T never reaches 1.
template <class T>
THUNDER_HD inline T random_element(int kind, int digits, uint64_t seed, uint64_t offset,
                                   uint32_t stream, uint64_t i) {
  philox_block b = random_block(seed, offset, stream, i);
  if constexpr (std::is_integral_v<T>) {
    (void)kind;
    (void)digits;
    return T((uint64_t(b.w[1]) << 32) | b.w[0]);
  } else if constexpr (std::is_same_v<T, double>) {
    uint64_t x = (uint64_t(b.w[1]) << 32) | b.w[0];
    uint64_t y = (uint64_t(b.w[3]) << 32) | b.w[2];
    const double ulp = 1.0 / 9007199254740992.0; // 2^-53
    if (kind == kRandomUniform)
      return double(x >> 11) * ulp;
    double u1 = double((x >> 11) + 1) * ulp, u2 = double(y >> 11) * ulp;
    return ::sqrt(-2.0 * ::log(u1)) * ::cos(6.283185307179586 * u2);
  } else {
    if (kind == kRandomUniform)
      return st<T>(float(b.w[0] >> (32 - digits)) / float(uint32_t(1) << digits));
    const float ulp = 1.0f / 16777216.0f; // 2^-24
    float u1 = float((b.w[0] >> 8) + 1) * ulp, u2 = float(b.w[1] >> 8) * ulp;
    return st<T>(::sqrtf(-2.0f * ::logf(u1)) * ::cosf(6.2831855f * u2));
  }
}

} // namespace thunder_scalar

#endif // THUNDER_SCALAR_H
