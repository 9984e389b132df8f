// thunder_cpu_math.h: vectorizable fp32 math for the CPU backend's fused loops.
//
// Every function is an inline function on float built only from arithmetic,
// fma, bit casts between float and integer and selects (no libm calls, no
// branches, no tables), so GCC and Clang vectorize the loops that call them
// (`#pragma omp simd` or plain counted loops) at the width -march allows:
// 16 lanes with AVX-512, 8 with AVX2. Each range-reduces, evaluates a
// polynomial and rebuilds the result; the special values (NaN, infinities,
// signed zeros, denormal inputs and results, overflow) come out as PyTorch
// gives them. exp/log/erf/tanh/sigmoid/silu/gelu work in float; pow, sin and
// cos work in double inside (half the lanes, but below 1 ULP). Double
// arguments go to std:: (the templates at the end), so generated code may
// call thunder_math::exp on any compute type.
//
// Maximum error in ULP of the float result against the exact value, as
// asserted by test/unit/Target/CPU/CpuMathTest.cpp over every 97th float bit
// pattern, every float in [1, 2) of either sign and the special values
// (in brackets the maximum measured on 2026-12-02; exp, log, erf and tanh
// also over every 17th pattern, with the same maxima):
//
//   exp        1.5 ULP  [1.003]
//   log        1 ULP    [0.83]
//   erf        2 ULP    [1.25]
//   tanh       2 ULP    [1.31]
//   sigmoid    3 ULP    [2.28]
//   silu       5 ULP    [4.36]
//   gelu       3 ULP for x >= -0.7 [1.91]; 9 ULP below [8.61] (1 + erf(z)
//              cancels down to x = -sqrt 2, where the erfc tail takes over)
//   gelu_tanh  4 ULP for x >= -1 [2.90]; below, 2 (6|u| + 4) ULP [0.72 (6|u| + 4)],
//              u = sqrt(2/pi) (x + 0.044715 x^3): the function's condition
//              number there is about 6|u|, so float arithmetic on x cannot do
//              better (PyTorch's 1 + tanh(u) loses every digit)
//   rsqrt      1.5 ULP  [1.49] (1 / sqrt, each correctly rounded)
//   sin, cos   1 ULP    [0.50] for |x| < 2^24 (Cody-Waite reduction in double);
//              larger arguments are not reduced exactly (no Payne-Hanek)
//   pow        1 ULP    [0.50] (computed in double)
//
// Without FMA (a build for plain x86-64) the fma() steps round twice and the
// bounds grow by about one ULP.
#ifndef THUNDER_CPU_MATH_H
#define THUNDER_CPU_MATH_H

#include <cmath>
#include <cstdint>
#include <cstring>

#include "thunder_scalar.h"

/// Every function is inlined into the loop that calls it, at -O2 as at -O3
/// (a call left in a loop body keeps the loop from vectorizing).
#define THUNDER_MATH_INLINE inline __attribute__((always_inline))

namespace thunder_math {

//===--------------------------------------------------------------------===//
// Building blocks
//===--------------------------------------------------------------------===//

/// a * b + c, rounded once where the target has FMA (GCC does not contract
/// a * b + c under -std=c++17, so the fused form is asked for explicitly).
THUNDER_MATH_INLINE float fma(float a, float b, float c) {
#if defined(__FMA__) || defined(__AVX512F__)
  return __builtin_fmaf(a, b, c);
#else
  return a * b + c;
#endif
}
THUNDER_MATH_INLINE double fma(double a, double b, double c) {
#if defined(__FMA__) || defined(__AVX512F__)
  return __builtin_fma(a, b, c);
#else
  return a * b + c;
#endif
}

THUNDER_MATH_INLINE int32_t bits(float x) {
  int32_t i;
  std::memcpy(&i, &x, 4);
  return i;
}
THUNDER_MATH_INLINE float from_bits(int32_t i) {
  float x;
  std::memcpy(&x, &i, 4);
  return x;
}
THUNDER_MATH_INLINE int64_t bits(double x) {
  int64_t i;
  std::memcpy(&i, &x, 8);
  return i;
}
THUNDER_MATH_INLINE double from_bits(int64_t i) {
  double x;
  std::memcpy(&x, &i, 8);
  return x;
}
THUNDER_MATH_INLINE float fabs(float x) { return from_bits(bits(x) & 0x7fffffff); }
/// |x| with the sign of s.
THUNDER_MATH_INLINE float copysign(float x, float s) {
  return from_bits((bits(x) & 0x7fffffff) | (bits(s) & int32_t(0x80000000u)));
}
THUNDER_MATH_INLINE bool isnan(float x) { return x != x; }

/// 2^n for n in [-126, 127] (no range check).
THUNDER_MATH_INLINE float pow2i(int32_t n) { return from_bits(int32_t(uint32_t(n + 127) << 23)); }
THUNDER_MATH_INLINE double pow2i(int64_t n) { return from_bits(int64_t(uint64_t(n + 1023) << 52)); }

/// e^r - 1 - r for |r| <= ln2/2, divided by r^2 (Cephes' expf polynomial).
THUNDER_MATH_INLINE float exp_poly(float r) {
  float p = 1.9875691500e-4f;
  p = fma(p, r, 1.3981999507e-3f);
  p = fma(p, r, 8.3334519073e-3f);
  p = fma(p, r, 4.1665795894e-2f);
  p = fma(p, r, 1.6666665459e-1f);
  p = fma(p, r, 5.0000001201e-1f);
  return p;
}

//===--------------------------------------------------------------------===//
// exp and log
//===--------------------------------------------------------------------===//

/// e^x: x = n ln2 + r, |r| <= ln2/2, e^r by a degree-7 polynomial, scaled
/// by 2^n in two steps so that denormal results round once and 2^128 never
/// forms. Results overflow to inf above 88.72 and underflow to 0 below -103.97.
THUNDER_MATH_INLINE float exp(float x) {
  const float magic = 12582912.0f; // 1.5 * 2^23: adding it rounds to an integer
  float xc = x > 89.0f ? 89.0f : x;
  xc = xc < -104.0f ? -104.0f : xc;
  float t = fma(xc, 1.44269504088896341f, magic);
  float n = t - magic;
  int32_t ni = bits(t) - bits(magic);
  float r = fma(n, -0.693147182464599609375f, xc);
  r = fma(n, 1.904654212125934e-09f, r);
  float p = fma(r * r, exp_poly(r), r) + 1.0f;
  int32_t n1 = ni >> 1;
  return p * pow2i(n1) * pow2i(ni - n1);
}

/// ln x: x = 2^e m with m in [sqrt(1/2), sqrt(2)), ln(1 + f) for f = m - 1 by
/// Cephes' polynomial, e ln2 added in two parts. Denormals are scaled up
/// first; 0 gives -inf, negatives NaN, inf inf.
THUNDER_MATH_INLINE float log(float x) {
  bool sub = x < 1.17549435e-38f;
  float xs = sub ? x * 8388608.0f : x;
  int32_t b = bits(xs);
  int32_t e = ((b >> 23) & 0xff) - 127 - (sub ? 23 : 0);
  float m = from_bits((b & 0x007fffff) | 0x3f800000);
  bool big = m > 1.41421356f;
  m = big ? m * 0.5f : m;
  float fe = float(big ? e + 1 : e);
  float f = m - 1.0f;
  float z = f * f;
  float p = 7.0376836292e-2f;
  p = fma(p, f, -1.1514610310e-1f);
  p = fma(p, f, 1.1676998740e-1f);
  p = fma(p, f, -1.2420140846e-1f);
  p = fma(p, f, 1.4249322787e-1f);
  p = fma(p, f, -1.6668057665e-1f);
  p = fma(p, f, 2.0000714765e-1f);
  p = fma(p, f, -2.4999993993e-1f);
  p = fma(p, f, 3.3333331174e-1f);
  float y = p * f * z;
  y = fma(fe, -2.12194440e-4f, y);
  y = fma(z, -0.5f, y);
  float result = fma(fe, 0.693359375f, f + y);
  const float inf = __builtin_inff();
  result = x == inf ? inf : result;
  result = x == 0.0f ? -inf : result;
  result = x < 0.0f ? __builtin_nanf("") : result;
  return isnan(x) ? x : result;
}

//===--------------------------------------------------------------------===//
// erf, tanh and the activations
//===--------------------------------------------------------------------===//

/// erf(x) / x - 2/sqrt(pi) for |x| < 1, divided by x^2 (fitted, in x^2).
THUNDER_MATH_INLINE float erf_small_poly(float x2) {
  float q = 7.842548803e-05f;
  q = fma(q, x2, -8.009398589e-04f);
  q = fma(q, x2, 5.188598298e-03f);
  q = fma(q, x2, -2.685420215e-02f);
  q = fma(q, x2, 1.128360331e-01f);
  q = fma(q, x2, -3.761262894e-01f);
  return q;
}
/// erf(x) for |x| < 1: x (2/sqrt(pi)) + x^3 Q(x^2), 2/sqrt(pi) in two parts.
THUNDER_MATH_INLINE float erf_small(float x) {
  float x2 = x * x;
  return fma(x, 1.128379225730896f, x * fma(x2, erf_small_poly(x2), -5.8635382771399236e-08f));
}
/// erfc(z) for z >= 1 (z <= 11; 0 from z = 10.06): e^-z^2 R(z), R(z) z
/// fitted as a polynomial in 1/z; z^2 = z2h + z2l exactly (the caller's fma),
/// since e^-z^2 is as sensitive to z^2 as its magnitude.
THUNDER_MATH_INLINE float erfc_tail(float z, float z2h, float z2l) {
  float t = 1.0f / z;
  float p = -5.313622952e-02f;
  p = fma(p, t, 2.628382146e-01f);
  p = fma(p, t, -4.695393741e-01f);
  p = fma(p, t, 1.906014681e-01f);
  p = fma(p, t, 6.001822352e-01f);
  p = fma(p, t, -1.122204065e+00f);
  p = fma(p, t, 8.056796193e-01f);
  p = fma(p, t, -7.778509706e-02f);
  p = fma(p, t, -2.726284266e-01f);
  p = fma(p, t, -6.320415996e-04f);
  p = fma(p, t, 5.642072558e-01f);
  float r = p * t;
  return exp(-z2h) * fma(-r, z2l, r);
}

/// erf(x): the odd polynomial below 1, 1 - erfc above (±1 from 3.92).
THUNDER_MATH_INLINE float erf(float x) {
  float ax = fabs(x);
  float az = ax < 11.0f ? ax : 11.0f;
  float h = az * az;
  float tail = 1.0f - erfc_tail(az, h, fma(az, az, -h));
  float result = ax < 1.0f ? erf_small(x) : copysign(tail, x);
  return isnan(x) ? x : result;
}

/// tanh(x) / x - 1 for |x| < 0.625, divided by x^2 (fitted, in x^2).
THUNDER_MATH_INLINE float tanh_small_poly(float x2) {
  float p = -5.698500201e-03f;
  p = fma(p, x2, 2.063277923e-02f);
  p = fma(p, x2, -5.373758078e-02f);
  p = fma(p, x2, 1.333141327e-01f);
  p = fma(p, x2, -3.333328068e-01f);
  return p;
}
/// tanh(x): the odd polynomial below 0.625, 1 - 2 / (e^2|x| + 1) above.
THUNDER_MATH_INLINE float tanh(float x) {
  float ax = fabs(x);
  float x2 = x * x;
  float small = fma(x * x2, tanh_small_poly(x2), x);
  float e = exp(2.0f * (ax < 10.0f ? ax : 10.0f));
  float large = copysign(1.0f - 2.0f / (e + 1.0f), x);
  float result = ax < 0.625f ? small : large;
  return isnan(x) ? x : result;
}

/// 1 / (1 + e^-x), from e = e^-|x| <= 1: 1 / (1 + e) for x >= 0, e / (1 + e)
/// below, so neither side cancels or overflows.
THUNDER_MATH_INLINE float sigmoid(float x) {
  float e = exp(-fabs(x));
  float d = 1.0f + e;
  float result = (x >= 0.0f ? 1.0f : e) / d;
  return isnan(x) ? x : result;
}

/// x sigmoid(x): for x < 0, x e^x / (1 + e^x) with e^x as h * h, h = e^(x/2),
/// so results of normal size are not computed from a denormal e^x.
THUNDER_MATH_INLINE float silu(float x) {
  float h = exp(-0.5f * fabs(x));
  float e = h * h;
  float d = 1.0f + e;
  float result = (x >= 0.0f ? x : (x * h) * h) / d;
  // PyTorch gives x / (1 + e^-x): NaN for -inf (-inf / inf), inf for inf.
  result = x == -__builtin_inff() ? __builtin_nanf("") : result;
  return isnan(x) ? x : result;
}

/// x Phi(x) = x/2 (1 + erf(x / sqrt 2)); for x <= -sqrt 2, x/2 erfc(|x| / sqrt 2)
/// with the exact x^2 / 2, so the negative tail does not cancel. inf at inf
/// and NaN at -inf (-inf * 0), as the formula gives in PyTorch's scalar path.
THUNDER_MATH_INLINE float gelu(float x) {
  float z = x * 0.70710678118654752f;
  float az = fabs(z);
  float xc = fabs(x) < 15.6f ? x : 15.6f; // z <= 11
  float azc = az < 11.0f ? az : 11.0f;
  float h = xc * xc;
  float tail = erfc_tail(azc, 0.5f * h, 0.5f * fma(xc, xc, -h));
  float hx = 0.5f * x;
  float result = az < 1.0f ? hx * (1.0f + erf_small(z))
                           : (x > 0.0f ? hx * (2.0f - tail) : hx * tail);
  result = x == __builtin_inff() ? x : result;
  result = x == -__builtin_inff() ? __builtin_nanf("") : result;
  return isnan(x) ? x : result;
}

/// The tanh approximation x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3),
/// as x sigmoid(2u) (the same value, without 1 + tanh cancelling for x < 0).
/// PyTorch gives inf at inf and NaN at -inf.
THUNDER_MATH_INLINE float gelu_tanh(float x) {
  float x2 = x * x;
  float u2 = (2.0f * 0.79788456080286535588f) * fma(0.044715f * x, x2, x);
  float e = exp(-fabs(u2));
  float d = 1.0f + e;
  float result = x * ((u2 >= 0.0f ? 1.0f : e) / d);
  result = x == __builtin_inff() ? x : result;
  return isnan(x) ? x : result;
}

/// 1 / sqrt(x): both operations are correctly rounded and vectorize
/// (vsqrtps, vdivps) when the build passes -fno-math-errno.
THUNDER_MATH_INLINE float rsqrt(float x) { return 1.0f / __builtin_sqrtf(x); }

//===--------------------------------------------------------------------===//
// pow, sin and cos (in double)
//===--------------------------------------------------------------------===//

/// ln|x| in double for finite nonzero float x (atanh series on the
/// mantissa; about 1e-15 relative).
THUNDER_MATH_INLINE double log_abs_d(float x) {
  float ax = fabs(x);
  bool sub = ax < 1.17549435e-38f;
  float xs = sub ? ax * 8388608.0f : ax;
  int32_t b = bits(xs);
  int32_t e = ((b >> 23) & 0xff) - 127 - (sub ? 23 : 0);
  float m = from_bits((b & 0x007fffff) | 0x3f800000);
  bool big = m > 1.41421356f;
  double md = big ? double(m) * 0.5 : double(m);
  double fe = double(big ? e + 1 : e);
  double s = (md - 1.0) / (md + 1.0), s2 = s * s;
  double p = 1.0 / 19;
  p = fma(p, s2, 1.0 / 17);
  p = fma(p, s2, 1.0 / 15);
  p = fma(p, s2, 1.0 / 13);
  p = fma(p, s2, 1.0 / 11);
  p = fma(p, s2, 1.0 / 9);
  p = fma(p, s2, 1.0 / 7);
  p = fma(p, s2, 1.0 / 5);
  p = fma(p, s2, 1.0 / 3);
  p = fma(p, s2, 1.0);
  return fma(fe, 0.6931471805599453, 2.0 * s * p);
}

/// e^v in double for the float range (|v| clamped to 200; Taylor series on
/// |r| <= ln2/2, about 1e-15 relative).
THUNDER_MATH_INLINE double exp_d(double v) {
  double vc = v > 200.0 ? 200.0 : v;
  vc = vc < -200.0 ? -200.0 : vc;
  const double magic = 6755399441055744.0; // 1.5 * 2^52
  double t = fma(vc, 1.4426950408889634, magic);
  double n = t - magic;
  int64_t ni = bits(t) - bits(magic);
  double r = fma(n, -0.6931471805599453, vc);
  r = fma(n, -2.3190468138462996e-17, r);
  double p = 1.0 / 479001600;
  p = fma(p, r, 1.0 / 39916800);
  p = fma(p, r, 1.0 / 3628800);
  p = fma(p, r, 1.0 / 362880);
  p = fma(p, r, 1.0 / 40320);
  p = fma(p, r, 1.0 / 5040);
  p = fma(p, r, 1.0 / 720);
  p = fma(p, r, 1.0 / 120);
  p = fma(p, r, 1.0 / 24);
  p = fma(p, r, 1.0 / 6);
  p = fma(p, r, 0.5);
  p = fma(p, r, 1.0);
  p = fma(p, r, 1.0);
  return p * pow2i(ni);
}

/// Whether a float is an integer, and an odd one (every float >= 2^24 is even).
THUNDER_MATH_INLINE bool is_int(float y) {
  float a = fabs(y);
  float r = (a + 8388608.0f) - 8388608.0f;
  return a >= 8388608.0f || r == a;
}
THUNDER_MATH_INLINE bool is_odd(float y) {
  float h = fabs(y) * 0.5f;
  float r = (h + 8388608.0f) - 8388608.0f;
  return is_int(y) && fabs(y) < 16777216.0f && r != h;
}

/// x^y as C's powf (and torch.pow): e^(y ln|x|) in double, the sign of x for
/// odd integer y, NaN for negative x and non-integer y, pow(x, 0) = pow(1, y) = 1.
THUNDER_MATH_INLINE float pow(float x, float y) {
  const float inf = __builtin_inff();
  float ax = fabs(x);
  double l = log_abs_d(x);
  l = ax == 0.0f ? -double(inf) : l;
  l = ax == inf ? double(inf) : l;
  float r = float(exp_d(double(y) * l));
  // |x| = 1 with y = ±inf: 1 (ln 1 * inf is NaN).
  r = ax == 1.0f ? 1.0f : r;
  r = (bits(x) < 0 && is_odd(y)) ? -r : r; // -0 too
  r = (x < 0.0f && x != -inf && !is_int(y)) ? __builtin_nanf("") : r;
  r = (isnan(x) || isnan(y)) ? __builtin_nanf("") : r;
  r = x == 1.0f ? 1.0f : r;
  return y == 0.0f ? 1.0f : r;
}

/// x = n pi/2 + r in double, |r| <= pi/4 (three-part pi/2, each step an fma:
/// exact enough for |x| < 2^24), and n mod 4.
THUNDER_MATH_INLINE double reduce_pio2(float x, int64_t &quadrant) {
  const double magic = 6755399441055744.0;
  double xd = x;
  double t = fma(xd, 0.6366197723675814, magic);
  double n = t - magic;
  quadrant = bits(t) - bits(magic);
  double r = fma(n, -1.5707963267948966, xd);
  r = fma(n, -6.123233995736766e-17, r);
  return fma(n, 1.4973849048591698e-33, r);
}
/// sin and cos of |r| <= pi/4 in double (Taylor series).
THUNDER_MATH_INLINE double sin_d(double r) {
  double r2 = r * r;
  double p = -1.0 / 1307674368000.0;
  p = fma(p, r2, 1.0 / 6227020800.0);
  p = fma(p, r2, -1.0 / 39916800.0);
  p = fma(p, r2, 1.0 / 362880.0);
  p = fma(p, r2, -1.0 / 5040.0);
  p = fma(p, r2, 1.0 / 120.0);
  p = fma(p, r2, -1.0 / 6.0);
  return fma(r * r2, p, r);
}
THUNDER_MATH_INLINE double cos_d(double r) {
  double r2 = r * r;
  double p = 1.0 / 20922789888000.0;
  p = fma(p, r2, -1.0 / 87178291200.0);
  p = fma(p, r2, 1.0 / 479001600.0);
  p = fma(p, r2, -1.0 / 3628800.0);
  p = fma(p, r2, 1.0 / 40320.0);
  p = fma(p, r2, -1.0 / 720.0);
  p = fma(p, r2, 1.0 / 24.0);
  p = fma(p, r2, -0.5);
  return fma(r2, p, 1.0);
}
THUNDER_MATH_INLINE float sin(float x) {
  int64_t q;
  double r = reduce_pio2(x, q);
  double s = sin_d(r), c = cos_d(r);
  double v = (q & 1) ? c : s;
  v = (q & 2) ? -v : v;
  // sin(-0) = -0; inf and NaN give NaN.
  return x == 0.0f ? x : (fabs(x) == __builtin_inff() ? __builtin_nanf("") : float(v));
}
THUNDER_MATH_INLINE float cos(float x) {
  int64_t q;
  double r = reduce_pio2(x, q);
  double s = sin_d(r), c = cos_d(r);
  double v = (q & 1) ? s : c;
  v = ((q + 1) & 2) ? -v : v;
  return fabs(x) == __builtin_inff() ? __builtin_nanf("") : float(v);
}

//===--------------------------------------------------------------------===//
// Other compute types: the standard library (double, and anything else)
//===--------------------------------------------------------------------===//

template <class T> THUNDER_MATH_INLINE T exp(T x) { return std::exp(x); }
template <class T> THUNDER_MATH_INLINE T log(T x) { return std::log(x); }
template <class T> THUNDER_MATH_INLINE T erf(T x) { return std::erf(x); }
template <class T> THUNDER_MATH_INLINE T tanh(T x) { return std::tanh(x); }
template <class T> THUNDER_MATH_INLINE T sin(T x) { return std::sin(x); }
template <class T> THUNDER_MATH_INLINE T cos(T x) { return std::cos(x); }
template <class T> THUNDER_MATH_INLINE T rsqrt(T x) { return T(1) / std::sqrt(x); }
/// Integer powers and double: the scalar vocabulary's (PyTorch's rules).
template <class T> THUNDER_MATH_INLINE T pow(T x, T y) { return thunder_scalar::power(x, y); }
template <class T> THUNDER_MATH_INLINE T sigmoid(T x) { return T(1) / (T(1) + std::exp(-x)); }
template <class T> THUNDER_MATH_INLINE T silu(T x) { return x * sigmoid(x); }
template <class T> THUNDER_MATH_INLINE T gelu(T x) {
  return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
}
template <class T> THUNDER_MATH_INLINE T gelu_tanh(T x) {
  const T k = T(0.79788456080286535588);
  return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
}

} // namespace thunder_math

#endif // THUNDER_CPU_MATH_H
