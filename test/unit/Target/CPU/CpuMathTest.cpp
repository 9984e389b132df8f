//===- CpuMathTest.cpp - thunder_cpu_math.h against the exact values ------===//
//
// Sweeps each function of thunder_cpu_math.h over the whole float range
// (every 97th bit pattern, every float in [1, 2) of either sign, and the
// special values) against a double-precision reference (whose error is far
// below a float ULP), and asserts the maximum error in ULP that the
// header documents. THUNDER_MATH_STRIDE=N sweeps every Nth pattern instead
// (1: every float, which takes hours on two cores).
// This file is compiled as the generated kernels are (-O2 -march=native
// -fno-math-errno -fno-trapping-math), in its own test binary.
//
//===----------------------------------------------------------------------===//
#include "thunder_cpu_math.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

float asFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

/// The error of `got` in ULP of the exact value `ref`; 0 when both are the
/// same NaN/inf/zero class, infinite for a NaN where a number is due (and
/// the other way round) or a wrong infinity.
double ulpError(float got, double ref) {
  if (std::isnan(ref) || std::isnan(got))
    return std::isnan(ref) && std::isnan(got) ? 0 : INFINITY;
  float rounded = static_cast<float>(ref);
  if (std::isinf(rounded) || std::isinf(got)) {
    if (got == rounded)
      return 0;
    // A finite result against a reference just past FLT_MAX (or inf for a
    // reference just below it) counts as the distance to FLT_MAX + 1 ULP.
    double top = std::ldexp(1.0, 128);
    double g = std::isinf(got) ? std::copysign(top, got) : got;
    double r = std::isinf(ref) ? std::copysign(top, ref) : ref;
    return std::fabs(g - r) / std::ldexp(1.0, 127 - 23);
  }
  int e;
  std::frexp(ref, &e); // |ref| in [2^(e-1), 2^e)
  int exponent = std::max(e - 1, -126);
  return std::fabs(double(got) - ref) / std::ldexp(1.0, exponent - 23);
}

struct Worst {
  double ulp = 0;
  float x = 0;
  float got = 0;
  double ref = 0;
};

uint32_t stride() {
  if (const char *s = std::getenv("THUNDER_MATH_STRIDE"))
    return std::max(1, std::atoi(s));
  return 97;
}

/// The inputs of a unary sweep, in chunks, handed to `visit`.
void sweep(const std::function<void(float)> &visit) {
  const uint32_t step = stride();
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += step)
    visit(asFloat(uint32_t(b)));
  // Every float in [1, 2) and (-2, -1] (where the polynomials switch).
  for (uint32_t b = 0x3f800000u; b < 0x40000000u; ++b) {
    visit(asFloat(b));
    visit(-asFloat(b));
  }
  const float specials[] = {0.0f,     -0.0f,    INFINITY,  -INFINITY, NAN,
                            FLT_MIN,  -FLT_MIN, FLT_MAX,   -FLT_MAX,  FLT_TRUE_MIN,
                            -FLT_TRUE_MIN, 1.0f, -1.0f, 88.72283f, 88.7228394f,
                            -87.33654f, -103.972084f, -103.97208f, 1e-30f, -1e-30f};
  for (float x : specials)
    visit(x);
}

/// Sweeps `f` against `ref` and checks the bound where `region` holds.
template <class F>
Worst check(const char *name, F f, double (*ref)(double), double bound,
            bool (*region)(float) = nullptr) {
  Worst worst;
  sweep([&](float x) {
    if (region && !region(x))
      return;
    float got = f(x);
    double r = ref(double(x));
    double e = ulpError(got, r);
    if (e > worst.ulp)
      worst = {e, x, got, r};
  });
  EXPECT_LE(worst.ulp, bound) << name << "(" << worst.x << ") = " << worst.got
                              << ", exact " << worst.ref;
  std::printf("%-10s max %.3f ULP at x = %.9g\n", name, worst.ulp, worst.x);
  return worst;
}

double refSigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double refSilu(double x) {
  if (x == -INFINITY)
    return NAN;
  return x / (1.0 + std::exp(-x));
}
double refGelu(double x) {
  if (x == -INFINITY)
    return NAN;
  if (x == INFINITY)
    return x;
  return 0.5 * x * std::erfc(-x * M_SQRT1_2);
}
double refGeluTanh(double x) {
  if (x == INFINITY)
    return x;
  if (x == -INFINITY)
    return NAN;
  double u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
  return x / (1.0 + std::exp(-2.0 * u));
}
double refRsqrt(double x) { return 1.0 / std::sqrt(x); }
double refSin(double x) { return std::sin(x); }
double refCos(double x) { return std::cos(x); }

// The kernels' functions as plain function pointers (inlined into the sweep).
#define THUNDER_UNARY(fn)                                                      \
  [](float x) { return thunder_math::fn(x); }

TEST(CpuMath, Exp) { check("exp", THUNDER_UNARY(exp), [](double x) { return std::exp(x); }, 1.5); }
TEST(CpuMath, Log) { check("log", THUNDER_UNARY(log), [](double x) { return std::log(x); }, 1); }
TEST(CpuMath, Erf) { check("erf", THUNDER_UNARY(erf), [](double x) { return std::erf(x); }, 2); }
TEST(CpuMath, Tanh) { check("tanh", THUNDER_UNARY(tanh), [](double x) { return std::tanh(x); }, 2); }
TEST(CpuMath, Sigmoid) { check("sigmoid", THUNDER_UNARY(sigmoid), refSigmoid, 3); }
TEST(CpuMath, Silu) { check("silu", THUNDER_UNARY(silu), refSilu, 5); }
TEST(CpuMath, Gelu) {
  check("gelu+", THUNDER_UNARY(gelu), refGelu, 3, [](float x) { return !(x < -0.7f); });
  check("gelu-", THUNDER_UNARY(gelu), refGelu, 9, [](float x) { return x < -0.7f; });
}
TEST(CpuMath, GeluTanh) {
  check("gelu_tanh+", THUNDER_UNARY(gelu_tanh), refGeluTanh, 4,
        [](float x) { return !(x < -1.0f); });
  // Below -1 the function's condition number 3|u| bounds what float
  // arithmetic can reach: the error is checked relative to it.
  Worst worst;
  sweep([&](float x) {
    if (!(x < -1.0f) || std::isinf(x))
      return;
    double u = 0.7978845608028654 * (x + 0.044715 * double(x) * x * x);
    double e = ulpError(thunder_math::gelu_tanh(x), refGeluTanh(x)) / (3 * std::fabs(2 * u) + 4);
    if (e > worst.ulp)
      worst = {e, x, 0, 0};
  });
  EXPECT_LE(worst.ulp, 2) << "gelu_tanh(" << worst.x << ")";
  std::printf("gelu_tanh- max %.3f ULP per unit of condition at x = %.9g\n", worst.ulp, worst.x);
}
TEST(CpuMath, Rsqrt) { check("rsqrt", THUNDER_UNARY(rsqrt), refRsqrt, 1.5); }
TEST(CpuMath, Sin) {
  check("sin", THUNDER_UNARY(sin), refSin, 1, [](float x) { return !(std::fabs(x) >= 16777216.0f); });
}
TEST(CpuMath, Cos) {
  check("cos", THUNDER_UNARY(cos), refCos, 1, [](float x) { return !(std::fabs(x) >= 16777216.0f); });
}

TEST(CpuMath, Pow) {
  // Bases over the whole range (a coarser stride), against exponents that
  // cover the special cases, small and large integers and fractions.
  const float ys[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 3.0f, -3.0f, 0.5f, -0.5f,
                      1.5f, 2.5f, 7.0f, 1e-3f, 13.37f, -41.2f, 100.0f, 16777217.0f,
                      16777216.0f, 1e10f, INFINITY, -INFINITY, NAN};
  Worst worst;
  float worstY = 0;
  const uint32_t step = stride() * 61;
  for (float y : ys) {
    auto visit = [&](float x) {
      float got = thunder_math::pow(x, y);
      double ref = std::pow(double(x), double(y));
      double e = ulpError(got, ref);
      if (e > worst.ulp) {
        worst = {e, x, got, ref};
        worstY = y;
      }
    };
    for (uint64_t b = 0; b < (uint64_t(1) << 32); b += step)
      visit(asFloat(uint32_t(b)));
    for (float x : {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 0.5f, -0.5f, 2.0f, -2.0f})
      visit(x);
  }
  // Exponents over the whole range at a few bases.
  for (float x : {0.5f, 1.0001f, 2.0f, -2.0f, 10.0f, 0.999f}) {
    for (uint64_t b = 0; b < (uint64_t(1) << 32); b += step) {
      float y = asFloat(uint32_t(b));
      float got = thunder_math::pow(x, y);
      double ref = std::pow(double(x), double(y));
      double e = ulpError(got, ref);
      if (e > worst.ulp) {
        worst = {e, x, got, ref};
        worstY = y;
      }
    }
  }
  EXPECT_LE(worst.ulp, 1) << "pow(" << worst.x << ", " << worstY << ") = " << worst.got
                          << ", exact " << worst.ref;
  std::printf("pow        max %.3f ULP at (%.9g, %.9g)\n", worst.ulp, worst.x, worstY);
}

} // namespace
