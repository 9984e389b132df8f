//===- HIPDeviceMathTest.cpp - The hip target's device math, on the host --===//
//
// thunder_hip_math.h gives HIP device code the <cmath> functions the AMDGPU
// backend cannot lower (f64 transcendentals, erf, tanh, log1p, ...). Compiled
// here for the host (its `std` renamed so that its overloads stand beside the
// host's) and checked against the host's libm over each function's range:
// the math is plain C++ on clang builtins, so what it computes here is what
// it computes on the GPU, up to the hardware's float exp and log.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstring>
#include <limits>

#define __device__
#define std hip_device_std
#include "thunder_hip_math.h"
#undef std
#undef __device__

#include <gtest/gtest.h>

namespace {

namespace dev = hip_device_std;

/// |got - want| within `ulps` units in the last place of `want` (or an
/// absolute `floor` near zero).
template <class T> bool near(T got, T want, double ulps, double floor = 0) {
  if (std::isnan(want))
    return std::isnan(got);
  if (std::isinf(want))
    return got == want;
  double ulp = std::abs(double(std::nextafter(want, std::numeric_limits<T>::infinity()) - want));
  return std::abs(double(got) - double(want)) <= std::max(ulps * ulp, floor);
}

TEST(HIPDeviceMath, DoubleExpAndLog) {
  for (double x = -745.0; x < 709.7; x += 0.37)
    EXPECT_TRUE(near(dev::exp(x), std::exp(x), 4)) << x;
  for (double x : {0.0, -0.0, 1e-300, 5e-324})
    EXPECT_TRUE(near(dev::exp(x), std::exp(x), 4)) << x;
  for (double x = 1e-310; x < 1e300; x *= 1.9)
    EXPECT_TRUE(near(dev::log(x), std::log(x), 4, 1e-15)) << x;
  EXPECT_TRUE(std::isnan(dev::log(-1.0)));
  EXPECT_EQ(dev::log(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(dev::exp(1000.0), std::numeric_limits<double>::infinity());
}

TEST(HIPDeviceMath, ErfTanhLog1p) {
  for (double x = -7; x < 7; x += 0.0137) {
    EXPECT_TRUE(near(dev::erf(x), std::erf(x), 64, 1e-15)) << x;
    EXPECT_TRUE(near(dev::erf(float(x)), std::erf(float(x)), 2)) << x;
    EXPECT_TRUE(near(dev::tanh(x), std::tanh(x), 16, 1e-16)) << x;
    EXPECT_TRUE(near(dev::tanh(float(x)), std::tanh(float(x)), 4, 1e-7)) << x;
  }
  for (double x : {1e-30, -1e-20, 1e-8, 0.5, -0.9, 3.0, 1e10})
    EXPECT_TRUE(near(dev::log1p(x), std::log1p(x), 8)) << x;
  EXPECT_EQ(dev::tanh(30.0), 1.0);
  EXPECT_EQ(dev::erf(-9.0), -1.0);
}

TEST(HIPDeviceMath, SinCosAndPow) {
  for (double x = -1000; x < 1000; x += 0.731) {
    EXPECT_TRUE(near(dev::sin(x), std::sin(x), 16, 1e-15)) << x;
    EXPECT_TRUE(near(dev::cos(x), std::cos(x), 16, 1e-15)) << x;
    EXPECT_TRUE(near(dev::sin(float(x)), std::sin(float(x)), 2, 1e-7)) << x;
  }
  EXPECT_EQ(dev::pow(-2.0, 3.0), -8.0);
  EXPECT_EQ(dev::pow(-2.0f, 2.0f), 4.0f);
  EXPECT_EQ(dev::pow(2.0, -2.0), 0.25);
  EXPECT_TRUE(std::isnan(dev::pow(-2.0, 0.5)));
  for (double b = -3.3; b < 3.3; b += 0.17)
    EXPECT_TRUE(near(dev::pow(1.7, b), std::pow(1.7, b), 16)) << b;
}

} // namespace
