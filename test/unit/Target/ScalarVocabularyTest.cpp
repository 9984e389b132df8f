//===- ScalarVocabularyTest.cpp - thunder_scalar.h against PyTorch's rules -===//
//
// The scalar vocabulary every target's generated kernels use, compiled for
// the host: Python's division and remainder, NaN-propagating extrema,
// PyTorch's conversions, and the softmax steps (values from torch 2.x).
//
//===----------------------------------------------------------------------===//
#include "thunder_scalar.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace thunder_scalar;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(ScalarVocabulary, FloorDivisionAndRemainderFollowPython) {
  EXPECT_EQ(div_floor<int64_t>(-7, 2), -4);
  EXPECT_EQ(div_trunc<int64_t>(-7, 2), -3);
  EXPECT_EQ(py_remainder<int64_t>(-7, 2), 1);
  EXPECT_EQ(py_remainder<int64_t>(7, -2), -1);
  EXPECT_DOUBLE_EQ(py_remainder(-7.5, 2.0), 0.5);
  EXPECT_DOUBLE_EQ(div_floor(-7.0, 2.0), -4.0);
  // Integer division by zero: PyTorch raises, compiled code returns 0.
  EXPECT_EQ(div_floor<int64_t>(5, 0), 0);
  EXPECT_EQ(py_remainder<int64_t>(5, 0), 0);
}

TEST(ScalarVocabulary, IntegerPowers) {
  EXPECT_EQ(power<int64_t>(3, 4), 81);
  EXPECT_EQ(power<int64_t>(2, -1), 0);
  EXPECT_EQ(power<int64_t>(-1, -3), -1);
  EXPECT_EQ(power<int64_t>(1, -3), 1);
}

TEST(ScalarVocabulary, ExtremaPropagateNaN) {
  EXPECT_TRUE(std::isnan(maximum(kNaN, 1.0)));
  EXPECT_TRUE(std::isnan(maximum(1.0, kNaN)));
  EXPECT_TRUE(std::isnan(minimum(kNaN, 1.0)));
  EXPECT_EQ(maximum<int64_t>(3, 4), 4);
  EXPECT_TRUE(std::isnan(relu(kNaN)));
  EXPECT_EQ(relu(-2.0), 0.0);
}

TEST(ScalarVocabulary, ConversionsFollowPyTorch) {
  EXPECT_EQ(st<int32_t>(-2.7), -2); // truncates
  EXPECT_EQ(st<int32_t>(kNaN), 0);
  EXPECT_TRUE(st<bool>(0.5));
  EXPECT_FALSE(st<bool>(0.0));
  EXPECT_EQ(st<float>(int64_t(3)), 3.0f);
  EXPECT_DOUBLE_EQ(cv(1.5), 1.5);
}

TEST(ScalarVocabulary, SoftmaxSteps) {
  // A row of -inf shifts by 0: exp(-inf) sums to 0, so softmax is NaN as in
  // PyTorch (0 / 0) rather than exp(-inf - -inf).
  EXPECT_EQ(softmax_shift(-kInf), 0.0);
  EXPECT_EQ(softmax_shift(2.0), 2.0);
  // The running max keeps a NaN.
  EXPECT_TRUE(std::isnan(softmax_max(softmax_max(lowest<double>(), kNaN), 3.0)));
  // softmax([0, log 3]) = [1/4, 3/4]; log_softmax of the second = log(3/4).
  double shift = softmax_shift(softmax_max(0.0, std::log(3.0)));
  double sum = std::exp(0.0 - shift) + std::exp(std::log(3.0) - shift);
  EXPECT_NEAR(softmax_out<double>(0.0 - shift, sum, std::log(sum), false), 0.25, 1e-15);
  EXPECT_NEAR(softmax_out<double>(std::log(3.0) - shift, sum, std::log(sum), true),
              std::log(0.75), 1e-15);
}

TEST(ScalarVocabulary, Shapes) {
  const int64_t shape[] = {2, 3, 4};
  int64_t strides[3];
  strides_of(shape, 3, strides);
  EXPECT_EQ(numel(shape, 3), 24);
  EXPECT_EQ(strides[0], 12);
  EXPECT_EQ(strides[1], 4);
  EXPECT_EQ(strides[2], 1);
}

} // namespace
