// thunder_hip_math.h: device overloads of the <cmath> functions that
// Thunder's generated HIP code and the scalar header call (std::exp,
// std::erf, std::tanh, ...), for a compile without ROCm's device libraries
// (-nogpulib -nogpuinc).
//
// The AMDGPU backend lowers some float math itself (exp, log, sqrt, floor,
// fmod); what it cannot (every f64 transcendental, erf, tanh, log1p), or
// not as PyTorch computes it (sin and cos far from 0, pow of negative
// bases), is written here from exp/log and series. These are
// declared before <cmath>, and this header is a system header, so clang
// makes libstdc++'s constexpr float overloads host-only where ours exist
// (clang's own CUDA/HIP wrapper headers rely on the same rule).
//
// Accuracy: a few ulp in float; double goes through a range-reduced
// polynomial (about 1e-15 relative) for exp and log, and through those for
// the rest. Not yet checked on an AMD GPU (docs/hip.md).
#ifndef THUNDER_HIP_MATH_H
#define THUNDER_HIP_MATH_H
#if defined(__clang__)
#pragma clang system_header
#endif

namespace thunder_hip_math {

/// 2^k as a double, k in the normal range.
__device__ inline double pow2(int k) {
  return __builtin_bit_cast(double, (unsigned long long)(k + 1023) << 52);
}

/// e^x in double: x = k ln2 + r, |r| <= ln2/2, e^r by its Taylor series.
__device__ inline double exp_d(double x) {
  if (x != x)
    return x;
  if (x > 709.78)
    return __builtin_inf();
  if (x < -745.2)
    return 0.0;
  double k = __builtin_rint(x * 1.4426950408889634);
  double r = x - k * 6.93147180369123816490e-01;
  r = r - k * 1.90821492927058770002e-10;
  double p = 1.0;
  for (int i = 12; i >= 1; --i)
    p = 1.0 + r * p / i;
  // p = 1 + r (1 + r/2 (1 + r/3 ...)): Horner on the Taylor series.
  int ki = int(k);
  if (ki < -1021) // subnormal results: scale in two steps
    return p * pow2(ki + 60) * pow2(-60);
  if (ki > 1023)
    return p * pow2(ki - 1) * 2.0;
  return p * pow2(ki);
}

/// log(x) in double: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) =
/// 2 atanh((m - 1) / (m + 1)) by its series.
__device__ inline double log_d(double x) {
  if (x != x || x < 0)
    return __builtin_nan("");
  if (x == 0)
    return -__builtin_inf();
  if (x == __builtin_inf())
    return x;
  int e = 0;
  if (x < 2.2250738585072014e-308) { // subnormal
    x *= 18014398509481984.0;        // 2^54
    e = -54;
  }
  unsigned long long bits = __builtin_bit_cast(unsigned long long, x);
  e += int((bits >> 52) & 0x7ff) - 1023;
  double m = __builtin_bit_cast(double, (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    ++e;
  }
  double s = (m - 1) / (m + 1), s2 = s * s, term = s, sum = 0;
  for (int i = 1; i < 40; i += 2) {
    sum += term / i;
    term *= s2;
  }
  return 2 * sum + e * 6.93147180559945309417e-01;
}

/// log(1 + x) with the rounding of 1 + x compensated (Kahan's trick).
template <class T> __device__ inline T log1p_t(T x, T (*lg)(T)) {
  T u = T(1) + x;
  if (u == T(1))
    return x;
  if (u == __builtin_inf() || u <= T(0))
    return lg(u);
  return lg(u) * x / (u - T(1));
}

/// e^x - 1 for small |x| without cancellation.
template <class T> __device__ inline T expm1_t(T x, T (*ex)(T), T (*lg)(T)) {
  T u = ex(x);
  if (u == T(1))
    return x;
  T um1 = u - T(1);
  if (um1 == T(-1))
    return T(-1);
  return um1 * x / lg(u);
}

__device__ inline float expf_(float x) { return __builtin_expf(x); }
__device__ inline float logf_(float x) { return __builtin_logf(x); }

/// tanh through expm1: no cancellation near 0, +-1 beyond |x| = 20.
template <class T> __device__ inline T tanh_t(T x, T (*ex)(T), T (*lg)(T)) {
  if (x != x)
    return x;
  T a = x < T(0) ? -x : x;
  T r;
  if (a > T(20))
    r = T(1);
  else {
    T e = expm1_t<T>(T(2) * a, ex, lg);
    r = e / (e + T(2));
  }
  return x < T(0) ? -r : r;
}

/// erf: its Taylor series near 0, the continued fraction of erfc beyond.
template <class T> __device__ inline T erf_t(T x, T (*ex)(T)) {
  if (x != x)
    return x;
  T a = x < T(0) ? -x : x;
  T r;
  if (a < T(2)) {
    // erf(a) = 2/sqrt(pi) sum (-1)^n a^(2n+1) / (n! (2n+1))
    T a2 = a * a, term = a, sum = a;
    for (int n = 1; n < 60; ++n) {
      term *= -a2 / T(n);
      T add = term / T(2 * n + 1);
      sum += add;
      if ((add < T(0) ? -add : add) < T(1e-17) * (sum < T(0) ? -sum : sum))
        break;
    }
    r = sum * T(1.12837916709551257390);
  } else if (a < T(6)) {
    // erfc(a) = exp(-a^2)/sqrt(pi) / (a + 1/2 / (a + 1 / (a + 3/2 / (a + ...))))
    T f = a;
    for (int n = 60; n >= 1; --n)
      f = a + T(n) / T(2) / f;
    r = T(1) - ex(-a * a) / f * T(0.56418958354775628695);
  } else {
    r = T(1);
  }
  return x < T(0) ? -r : r;
}

/// sin and cos in double: reduced by multiples of pi/2 (Cody-Waite, three
/// parts; arguments beyond 2^20 pi lose accuracy), then Taylor series.
__device__ inline void sincos_d(double x, double *s, double *c) {
  double k = __builtin_rint(x * 0.63661977236758134308);
  double r = x - k * 1.57079632673412561417e+00;
  r = r - k * 6.07710050650619224932e-11;
  r = r - k * 2.02226624879595063154e-21;
  double r2 = r * r, sn = r, cs = 1, ts = r, tc = 1;
  for (int n = 1; n < 12; ++n) {
    ts *= -r2 / ((2 * n) * (2 * n + 1));
    tc *= -r2 / ((2 * n - 1) * (2 * n));
    sn += ts;
    cs += tc;
  }
  long long q = (long long)k & 3;
  double sv = q == 0 ? sn : q == 1 ? cs : q == 2 ? -sn : -cs;
  double cv = q == 0 ? cs : q == 1 ? -sn : q == 2 ? -cs : sn;
  *s = sv;
  *c = cv;
}

/// atan in double: |x| > 1 through pi/2 - atan(1/x), then two halvings of
/// the angle (t / (1 + sqrt(1 + t^2))) to |t| < 0.2 and the Taylor series.
__device__ inline double atan_d(double x) {
  if (x != x)
    return x;
  double a = x < 0 ? -x : x;
  bool invert = a > 1;
  double t = invert ? 1 / a : a;
  t = t / (1 + __builtin_sqrt(1 + t * t));
  t = t / (1 + __builtin_sqrt(1 + t * t));
  double t2 = t * t, term = t, sum = t;
  for (int n = 1; n < 30; ++n) {
    term *= -t2;
    sum += term / (2 * n + 1);
  }
  double r = 4 * sum;
  if (invert)
    r = 1.57079632679489661923 - r;
  return x < 0 ? -r : r;
}

/// atan2 with the quadrant from the signs (C's conventions for zeros).
__device__ inline double atan2_d(double y, double x) {
  if (x != x || y != y)
    return x + y;
  const double pi = 3.14159265358979323846;
  if (x == 0) {
    if (y == 0)
      return __builtin_signbit(x) ? __builtin_copysign(pi, y) : y;
    return y > 0 ? pi / 2 : -pi / 2;
  }
  double ax = x < 0 ? -x : x, ay = y < 0 ? -y : y;
  if (ax == __builtin_inf() && ay == __builtin_inf())
    return __builtin_copysign(x > 0 ? pi / 4 : 3 * pi / 4, y);
  double r = atan_d(y / x);
  if (x < 0)
    r += __builtin_signbit(y) ? -pi : pi;
  return r;
}

__device__ inline double exp_dp(double x) { return exp_d(x); }
__device__ inline double log_dp(double x) { return log_d(x); }

} // namespace thunder_hip_math

namespace std {
__device__ inline double exp(double x) { return thunder_hip_math::exp_d(x); }
__device__ inline double log(double x) { return thunder_hip_math::log_d(x); }
__device__ inline double log1p(double x) {
  return thunder_hip_math::log1p_t<double>(x, thunder_hip_math::log_dp);
}
__device__ inline float log1p(float x) {
  return thunder_hip_math::log1p_t<float>(x, thunder_hip_math::logf_);
}
__device__ inline double tanh(double x) {
  return thunder_hip_math::tanh_t<double>(x, thunder_hip_math::exp_dp, thunder_hip_math::log_dp);
}
__device__ inline float tanh(float x) {
  return thunder_hip_math::tanh_t<float>(x, thunder_hip_math::expf_, thunder_hip_math::logf_);
}
__device__ inline double erf(double x) {
  return thunder_hip_math::erf_t<double>(x, thunder_hip_math::exp_dp);
}
__device__ inline float erf(float x) {
  // In double: the float series and fraction would lose digits near 2.
  return float(thunder_hip_math::erf_t<double>(double(x), thunder_hip_math::exp_dp));
}
__device__ inline double sin(double x) {
  double s, c;
  thunder_hip_math::sincos_d(x, &s, &c);
  return s;
}
__device__ inline double cos(double x) {
  double s, c;
  thunder_hip_math::sincos_d(x, &s, &c);
  return c;
}
/// Float sin and cos: the hardware's are accurate only near 0.
__device__ inline float sin(float x) { return float(std::sin(double(x))); }
__device__ inline float cos(float x) { return float(std::cos(double(x))); }
__device__ inline double pow(double a, double b) {
  // Integral exponents exactly by squaring (negative bases included).
  if (b == __builtin_rint(b) && (b < 0 ? -b : b) < 1024) {
    long long n = (long long)(b < 0 ? -b : b);
    double r = 1, p = a;
    for (; n; n >>= 1, p *= p)
      if (n & 1)
        r *= p;
    return b < 0 ? 1 / r : r;
  }
  if (a < 0)
    return __builtin_nan("");
  if (a == 0)
    return b > 0 ? 0.0 : __builtin_inf();
  return thunder_hip_math::exp_d(b * thunder_hip_math::log_d(a));
}
/// Float pow through double: integral exponents of negative bases (the
/// backend's own expansion goes through log2, NaN for a < 0).
__device__ inline float pow(float a, float b) { return float(std::pow(double(a), double(b))); }
__device__ inline double floor(double x) { return __builtin_floor(x); }
__device__ inline double ceil(double x) { return __builtin_ceil(x); }
__device__ inline double trunc(double x) { return __builtin_trunc(x); }
__device__ inline double sqrt(double x) { return __builtin_sqrt(x); }
__device__ inline double fmod(double a, double b) { return __builtin_fmod(a, b); }
__device__ inline double copysign(double a, double b) { return __builtin_copysign(a, b); }
__device__ inline double abs(double x) { return __builtin_fabs(x); }
__device__ inline int abs(int x) { return x < 0 ? -x : x; }
__device__ inline long abs(long x) { return x < 0 ? -x : x; }
__device__ inline long long abs(long long x) { return x < 0 ? -x : x; }
// The inverse and hyperbolic functions, from atan, exp and log above; float
// through double.
__device__ inline double expm1(double x) {
  return thunder_hip_math::expm1_t<double>(x, thunder_hip_math::exp_dp, thunder_hip_math::log_dp);
}
__device__ inline double atan(double x) { return thunder_hip_math::atan_d(x); }
__device__ inline double atan2(double y, double x) { return thunder_hip_math::atan2_d(y, x); }
__device__ inline double asin(double x) {
  return thunder_hip_math::atan2_d(x, __builtin_sqrt((1 - x) * (1 + x)));
}
__device__ inline double acos(double x) {
  return thunder_hip_math::atan2_d(__builtin_sqrt((1 - x) * (1 + x)), x);
}
__device__ inline double tan(double x) {
  double s, c;
  thunder_hip_math::sincos_d(x, &s, &c);
  return s / c;
}
__device__ inline double sinh(double x) {
  double a = x < 0 ? -x : x, e = std::expm1(a);
  double r = a < 1 ? (e + e / (e + 1)) / 2 : (thunder_hip_math::exp_d(a) - thunder_hip_math::exp_d(-a)) / 2;
  return x < 0 ? -r : r;
}
__device__ inline double cosh(double x) {
  return (thunder_hip_math::exp_d(x) + thunder_hip_math::exp_d(-x)) / 2;
}
__device__ inline double asinh(double x) {
  double a = x < 0 ? -x : x;
  double r = a > 1e150 ? thunder_hip_math::log_d(a) + 0.69314718055994530942
                       : std::log1p(a + a * a / (1 + __builtin_sqrt(1 + a * a)));
  return x < 0 ? -r : r;
}
__device__ inline double acosh(double x) {
  if (x > 1e150)
    return thunder_hip_math::log_d(x) + 0.69314718055994530942;
  double t = x - 1;
  return std::log1p(t + __builtin_sqrt(2 * t + t * t));
}
__device__ inline double atanh(double x) { return 0.5 * std::log1p(2 * x / (1 - x)); }
__device__ inline double log2(double x) {
  return thunder_hip_math::log_d(x) * 1.44269504088896340736;
}
__device__ inline double log10(double x) {
  return thunder_hip_math::log_d(x) * 0.43429448190325182765;
}
__device__ inline double rint(double x) { return __builtin_rint(x); }
__device__ inline float expm1(float x) { return float(std::expm1(double(x))); }
__device__ inline float atan(float x) { return float(std::atan(double(x))); }
__device__ inline float atan2(float y, float x) { return float(std::atan2(double(y), double(x))); }
__device__ inline float asin(float x) { return float(std::asin(double(x))); }
__device__ inline float acos(float x) { return float(std::acos(double(x))); }
__device__ inline float tan(float x) { return float(std::tan(double(x))); }
__device__ inline float sinh(float x) { return float(std::sinh(double(x))); }
__device__ inline float cosh(float x) { return float(std::cosh(double(x))); }
__device__ inline float asinh(float x) { return float(std::asinh(double(x))); }
__device__ inline float acosh(float x) { return float(std::acosh(double(x))); }
__device__ inline float atanh(float x) { return float(std::atanh(double(x))); }
__device__ inline float log2(float x) { return float(std::log2(double(x))); }
__device__ inline float log10(float x) { return float(std::log10(double(x))); }
} // namespace std

#endif // THUNDER_HIP_MATH_H
