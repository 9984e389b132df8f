// Unit tests for thunder/Dialect/Thunder/Reference/Scalar.h: each op's scalar
// semantics on its edge cases. Expected values are PyTorch's (torch 2.13,
// CPU), computed as noted beside each; where PyTorch's kernels disagree among
// themselves (the sign of max(-0.0, 0.0), transcendental last bits), the
// comment says which one the reference follows.
#include "ReferenceTestUtils.h"

#include "thunder/Dialect/Thunder/Reference/Scalar.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::reference;
using namespace thunder_test;

namespace {

using ScalarTest = ReferenceTest;

//===----------------------------------------------------------------------===//
// Rounding of arithmetic into narrow float types
//===----------------------------------------------------------------------===//

TEST_F(ScalarTest, AddRoundsBF16ToNearestEven) {
  // torch.tensor([1.0], dtype=bf16) + 2**-8: the tie goes to the even 1.0;
  // just above the tie it goes up.
  EXPECT_TRUE(sameElement(add(exact(bf16, 1.0), exact(bf16, 0x1p-8)),
                          exact(bf16, 1.0)));
  EXPECT_TRUE(sameElement(add(exact(bf16, 1.0), exact(bf16, 0x1p-8 + 0x1p-15)),
                          exact(bf16, 1.0078125)));
}

TEST_F(ScalarTest, AddRoundsF16ToNearestEven) {
  // 1 + 2**-11 ties to 1.0; (1 + 2**-10) + 2**-11 ties up to the even
  // 1 + 2**-9.
  EXPECT_TRUE(sameElement(add(exact(f16, 1.0), exact(f16, 0x1p-11)),
                          exact(f16, 1.0)));
  EXPECT_TRUE(sameElement(add(exact(f16, 1.0 + 0x1p-10), exact(f16, 0x1p-11)),
                          exact(f16, 1.001953125)));
  // 60000 + 10000 overflows f16.
  EXPECT_TRUE(sameElement(add(exact(f16, 60000), exact(f16, 10000)),
                          exact(f16, inf)));
}

TEST_F(ScalarTest, DivideComputesInF32ThenRounds) {
  // torch.tensor([1.], dtype=f16) / 3: f32 quotient rounded to f16.
  EXPECT_TRUE(sameElement(divide(exact(f16, 1), exact(f16, 3), RoundingMode::None),
                          exact(f16, 0.333251953125)));
  EXPECT_TRUE(sameElement(divide(F32(1), F32(0), RoundingMode::None), F32(inf)));
  EXPECT_TRUE(sameElement(divide(F32(-1), F32(0), RoundingMode::None), F32(-inf)));
  EXPECT_TRUE(sameElement(divide(F32(0), F32(0), RoundingMode::None), F32(nan)));
}

TEST_F(ScalarTest, SubtractAndMultiplyF32AreIEEE) {
  EXPECT_TRUE(sameElement(subtract(F32(0.0f), F32(0.0f)), F32(0.0f)));
  EXPECT_TRUE(sameElement(subtract(F32(-0.0f), F32(0.0f)), F32(-0.0f)));
  EXPECT_TRUE(sameElement(multiply(F32(-0.0f), F32(5.0f)), F32(-0.0f)));
  EXPECT_TRUE(sameElement(multiply(F32(inf), F32(0.0f)), F32(nan)));
  // 3.4e38 * 10 overflows f32 (the f64 product would not).
  EXPECT_TRUE(sameElement(multiply(F32(3.4e38f), F32(10.0f)), F32(inf)));
}

//===----------------------------------------------------------------------===//
// Division with rounding, remainder
//===----------------------------------------------------------------------===//

TEST_F(ScalarTest, FloorDivideFloatIsPythonFloorDivision) {
  // torch.div(a, b, rounding_mode='floor') for
  // a = [-0., 5., -5., 5., 0., -1., 1.], b = [1., -3., 3., 0., 0., inf, -inf]
  // -> [-0., -2., -2., inf, nan, -1., -1.]
  auto floorDiv = [&](float a, float b) {
    return divide(F32(a), F32(b), RoundingMode::Floor);
  };
  EXPECT_TRUE(sameElement(floorDiv(-0.0f, 1), F32(-0.0f)));
  EXPECT_TRUE(sameElement(floorDiv(5, -3), F32(-2)));
  EXPECT_TRUE(sameElement(floorDiv(-5, 3), F32(-2)));
  EXPECT_TRUE(sameElement(floorDiv(5, 0), F32(inf)));
  EXPECT_TRUE(sameElement(floorDiv(0, 0), F32(nan)));
  EXPECT_TRUE(sameElement(floorDiv(-1, inf), F32(-1)));
  EXPECT_TRUE(sameElement(floorDiv(1, -inf), F32(-1)));
  // [1e-30, -1e-30] // 1e30 -> [0., -1.]
  EXPECT_TRUE(sameElement(floorDiv(1e-30f, 1e30f), F32(0)));
  EXPECT_TRUE(sameElement(floorDiv(-1e-30f, 1e30f), F32(-1)));
  // 5 // 0.1 is 49 (from fmod, as Python), where floor(5 / 0.1) would be 50.
  EXPECT_TRUE(sameElement(floorDiv(5, 0.1f), F32(49)));
  EXPECT_TRUE(sameElement(divide(F64(5), F64(0.1), RoundingMode::Floor), F64(49)));
  // f16: -3 // 0.7 -> -5 (0.7 is 0.7001953125 in f16).
  EXPECT_TRUE(sameElement(divide(exact(f16, -3), exact(f16, 0.7001953125),
                                 RoundingMode::Floor),
                          exact(f16, -5)));
}

TEST_F(ScalarTest, TruncDivideFloat) {
  // torch.div([-1., 5.], [3., -3.], rounding_mode='trunc') -> [-0., -1.]
  EXPECT_TRUE(sameElement(divide(F32(-1), F32(3), RoundingMode::Trunc), F32(-0.0f)));
  EXPECT_TRUE(sameElement(divide(F32(5), F32(-3), RoundingMode::Trunc), F32(-1)));
}

TEST_F(ScalarTest, RemainderFloatTakesTheDivisorsSign) {
  // torch.remainder([-0., 5., -5., 5., 1., -3.], [1., -3., 3., 0., inf, inf])
  // -> [-0., -1., 1., nan, 1., inf]
  EXPECT_TRUE(sameElement(remainder(F32(-0.0f), F32(1)), F32(-0.0f)));
  EXPECT_TRUE(sameElement(remainder(F32(5), F32(-3)), F32(-1)));
  EXPECT_TRUE(sameElement(remainder(F32(-5), F32(3)), F32(1)));
  EXPECT_TRUE(sameElement(remainder(F32(5), F32(0)), F32(nan)));
  EXPECT_TRUE(sameElement(remainder(F32(1), F32(inf)), F32(1)));
  EXPECT_TRUE(sameElement(remainder(F32(-3), F32(inf)), F32(inf)));
  // torch.remainder(5., 0.1) in f32 -> 0.09999992698431015 (exact fmod).
  EXPECT_TRUE(sameElement(remainder(F32(5), F32(0.1f)), F32(0.09999992698431015f)));
  // f16: remainder(-3, 0.7) -> 0.5009765625
  EXPECT_TRUE(sameElement(remainder(exact(f16, -3), exact(f16, 0.7001953125)),
                          exact(f16, 0.5009765625)));
}

TEST_F(ScalarTest, IntegerDivision) {
  // torch.div(int32 [7, -7, 7], [2, 2, -2], rounding_mode=...)
  EXPECT_TRUE(sameElement(divide(Int(i32, -7), Int(i32, 2), RoundingMode::Trunc),
                          Int(i32, -3)));
  EXPECT_TRUE(sameElement(divide(Int(i32, -7), Int(i32, 2), RoundingMode::Floor),
                          Int(i32, -4)));
  EXPECT_TRUE(sameElement(divide(Int(i32, 7), Int(i32, -2), RoundingMode::Floor),
                          Int(i32, -4)));
  EXPECT_TRUE(sameElement(divide(Int(i32, 6), Int(i32, -2), RoundingMode::Floor),
                          Int(i32, -3)));
  // Division by zero raises ZeroDivisionError in PyTorch: no value.
  EXPECT_TRUE(failed(divide(Int(i32, 5), Int(i32, 0), RoundingMode::Floor)));
  EXPECT_TRUE(failed(divide(Int(i64, 5), Int(i64, 0), RoundingMode::Trunc)));
  // INT_MIN / -1 traps (SIGFPE) in the i32 and i64 kernels: no value; i8
  // computes in int and wraps: torch.div(int8 -128, -1, 'trunc') -> -128.
  EXPECT_TRUE(failed(divide(Int(i32, INT32_MIN), Int(i32, -1), RoundingMode::Trunc)));
  EXPECT_TRUE(failed(divide(Int(i64, INT64_MIN), Int(i64, -1), RoundingMode::Floor)));
  EXPECT_TRUE(sameElement(divide(Int(i8, -128), Int(i8, -1), RoundingMode::Trunc),
                          Int(i8, -128)));
  // True division is defined on floats only (div_c1).
  EXPECT_TRUE(failed(divide(Int(i32, 4), Int(i32, 2), RoundingMode::None)));
}

TEST_F(ScalarTest, IntegerRemainder) {
  // torch.remainder(int32 [-7, 7, -7], [3, -3, -3]) -> [2, -2, -1]
  EXPECT_TRUE(sameElement(remainder(Int(i32, -7), Int(i32, 3)), Int(i32, 2)));
  EXPECT_TRUE(sameElement(remainder(Int(i32, 7), Int(i32, -3)), Int(i32, -2)));
  EXPECT_TRUE(sameElement(remainder(Int(i32, -7), Int(i32, -3)), Int(i32, -1)));
  EXPECT_TRUE(failed(remainder(Int(i32, 7), Int(i32, 0))));
  EXPECT_TRUE(failed(remainder(Int(i64, INT64_MIN), Int(i64, -1))));
}

//===----------------------------------------------------------------------===//
// Integer wrap, power, bools
//===----------------------------------------------------------------------===//

TEST_F(ScalarTest, IntegersWrapAtTheirWidth) {
  // int32 2**31-1 + 1 -> -2**31; int8 100 * 3 -> 44; int8 -(-128) -> -128.
  EXPECT_TRUE(sameElement(add(Int(i32, INT32_MAX), Int(i32, 1)), Int(i32, INT32_MIN)));
  EXPECT_TRUE(sameElement(multiply(Int(i8, 100), Int(i8, 3)), Int(i8, 44)));
  EXPECT_TRUE(sameElement(subtract(Int(i8, -128), Int(i8, 1)), Int(i8, 127)));
  EXPECT_TRUE(sameElement(negate(Int(i8, -128)), Int(i8, -128)));
  EXPECT_TRUE(sameElement(reference::abs(Int(i8, -128)), Int(i8, -128)));
  EXPECT_TRUE(sameElement(add(Int(i64, INT64_MAX), Int(i64, 1)), Int(i64, INT64_MIN)));
}

TEST_F(ScalarTest, IntegerPower) {
  // torch.pow(int8 3, 5) -> -13 (243 wraps).
  EXPECT_TRUE(sameElement(power(Int(i8, 3), Int(i8, 5)), Int(i8, -13)));
  EXPECT_TRUE(sameElement(power(Int(i32, 7), Int(i32, 0)), Int(i32, 1)));
  // torch.pow(int32 [1, -1, -1, 2, 0], [-3, -3, -2, -1, -1]) -> [1, -1, 1, 0, 0]
  EXPECT_TRUE(sameElement(power(Int(i32, 1), Int(i32, -3)), Int(i32, 1)));
  EXPECT_TRUE(sameElement(power(Int(i32, -1), Int(i32, -3)), Int(i32, -1)));
  EXPECT_TRUE(sameElement(power(Int(i32, -1), Int(i32, -2)), Int(i32, 1)));
  EXPECT_TRUE(sameElement(power(Int(i32, 2), Int(i32, -1)), Int(i32, 0)));
  EXPECT_TRUE(sameElement(power(Int(i32, 0), Int(i32, -1)), Int(i32, 0)));
}

TEST_F(ScalarTest, FloatPower) {
  // torch.pow(0., -1.) -> inf; torch.pow(-8., 1/3) -> nan; 2 ** 10 = 1024.
  EXPECT_TRUE(sameElement(power(F32(0), F32(-1)), F32(inf)));
  EXPECT_TRUE(sameElement(power(F32(-8), F32(1.0f / 3)), F32(nan)));
  EXPECT_TRUE(sameElement(power(exact(bf16, 2), exact(bf16, 10)), exact(bf16, 1024)));
}

TEST_F(ScalarTest, BoolArithmeticIsLogical) {
  // torch.tensor([True]) + torch.tensor([True]) -> True; max(True, False) -> True.
  EXPECT_TRUE(sameElement(add(Bool(true), Bool(true)), Bool(true)));
  EXPECT_TRUE(sameElement(multiply(Bool(true), Bool(false)), Bool(false)));
  EXPECT_TRUE(sameElement(maximum(Bool(true), Bool(false)), Bool(true)));
  EXPECT_TRUE(sameElement(minimum(Bool(true), Bool(false)), Bool(false)));
  EXPECT_TRUE(sameElement(logicalNot(Bool(false)), Bool(true)));
  EXPECT_TRUE(sameElement(logicalAnd(Bool(true), Bool(false)), Bool(false)));
  EXPECT_TRUE(sameElement(logicalOr(Bool(true), Bool(false)), Bool(true)));
  EXPECT_TRUE(sameElement(logicalXor(Bool(true), Bool(true)), Bool(false)));
  // logical ops read any type's truth: NaN is true.
  EXPECT_TRUE(sameElement(logicalAnd(F32(nan), F32(2)), Bool(true)));
  EXPECT_TRUE(sameElement(logicalNot(F32(-0.0f)), Bool(true)));
}

//===----------------------------------------------------------------------===//
// maximum, minimum, relu, clamp
//===----------------------------------------------------------------------===//

TEST_F(ScalarTest, MaximumAndMinimumPropagateNaN) {
  // torch.maximum(nan, 1.) and (1., nan) -> nan
  EXPECT_TRUE(sameElement(maximum(F32(nan), F32(1)), F32(nan)));
  EXPECT_TRUE(sameElement(maximum(F32(1), F32(nan)), F32(nan)));
  EXPECT_TRUE(sameElement(minimum(F32(nan), F32(1)), F32(nan)));
  EXPECT_TRUE(sameElement(minimum(exact(bf16, 1), exact(bf16, nan)), exact(bf16, nan)));
  EXPECT_TRUE(sameElement(maximum(F32(-2), F32(3)), F32(3)));
  EXPECT_TRUE(sameElement(minimum(Int(i32, -2), Int(i32, 3)), Int(i32, -2)));
}

TEST_F(ScalarTest, MaximumOfSignedZerosIsTheSecondOperand) {
  // PyTorch's vectorized kernel (64 elements): maximum(-0., 0.) -> 0.,
  // maximum(0., -0.) -> -0.; minimum likewise. (Its scalar tail, on a
  // one-element tensor, returns the first operand instead.)
  EXPECT_TRUE(sameElement(maximum(F32(-0.0f), F32(0.0f)), F32(0.0f)));
  EXPECT_TRUE(sameElement(maximum(F32(0.0f), F32(-0.0f)), F32(-0.0f)));
  EXPECT_TRUE(sameElement(minimum(F32(-0.0f), F32(0.0f)), F32(0.0f)));
  EXPECT_TRUE(sameElement(minimum(F32(0.0f), F32(-0.0f)), F32(-0.0f)));
}

TEST_F(ScalarTest, ReluKeepsNaNAndNegativeZero) {
  // torch.relu([-0., nan, -2., 3.]) -> [-0., nan, 0., 3.]
  EXPECT_TRUE(sameElement(relu(F32(-0.0f)), F32(-0.0f)));
  EXPECT_TRUE(sameElement(relu(F32(nan)), F32(nan)));
  EXPECT_TRUE(sameElement(relu(F32(-2)), F32(0.0f)));
  EXPECT_TRUE(sameElement(relu(F32(3)), F32(3)));
  EXPECT_TRUE(sameElement(relu(Int(i8, -5)), Int(i8, 0)));
}

TEST_F(ScalarTest, Clamp) {
  // torch.clamp([nan, 5.], min=0., max=1.) -> [nan, 1.]
  EXPECT_TRUE(sameElement(clamp(F32(nan), 0.0, 1.0), F32(nan)));
  EXPECT_TRUE(sameElement(clamp(F32(5), 0.0, 1.0), F32(1)));
  EXPECT_TRUE(sameElement(clamp(F32(-5), 0.0, std::nullopt), F32(0)));
  // The bound rounds into the element type: clamp(f16 0.1, min=0.1) is
  // f16's 0.1, 0.0999755859375.
  EXPECT_TRUE(sameElement(clamp(exact(f16, 0), 0.1, std::nullopt),
                          exact(f16, 0.0999755859375)));
  EXPECT_TRUE(sameElement(clamp(Int(i32, 300), std::nullopt, 255.0), Int(i32, 255)));
}

//===----------------------------------------------------------------------===//
// Unary float ops
//===----------------------------------------------------------------------===//

TEST_F(ScalarTest, SqrtRsqrtReciprocalEdges) {
  // torch.sqrt([-1., -0.]) -> [nan, -0.]; rsqrt([0., -0.]) -> [inf, -inf];
  // reciprocal(-0.) -> -inf.
  EXPECT_TRUE(sameElement(reference::sqrt(F32(-1)), F32(nan)));
  EXPECT_TRUE(sameElement(reference::sqrt(F32(-0.0f)), F32(-0.0f)));
  EXPECT_TRUE(sameElement(rsqrt(F32(0)), F32(inf)));
  EXPECT_TRUE(sameElement(rsqrt(F32(-0.0f)), F32(-inf)));
  EXPECT_TRUE(sameElement(reciprocal(F32(-0.0f)), F32(-inf)));
  EXPECT_TRUE(sameElement(reference::sqrt(F32(2)), F32(1.41421353816986083984375f)));
  // torch.rsqrt(3.) -> 0.5773502588272095; in f16 -> 0.5771484375.
  EXPECT_TRUE(sameElement(rsqrt(F32(3)), F32(0.5773502588272095f)));
  EXPECT_TRUE(sameElement(rsqrt(exact(f16, 3)), exact(f16, 0.5771484375)));
  // Float-only ops do not take integers.
  EXPECT_TRUE(failed(reference::sqrt(Int(i32, 4))));
}

TEST_F(ScalarTest, FloorAndCeil) {
  // torch.floor(-0.5) -> -1.; torch.ceil(-0.5) -> -0.; identity on ints.
  EXPECT_TRUE(sameElement(reference::floor(F32(-0.5f)), F32(-1)));
  EXPECT_TRUE(sameElement(reference::ceil(F32(-0.5f)), F32(-0.0f)));
  EXPECT_TRUE(sameElement(reference::floor(exact(bf16, 2.5)), exact(bf16, 2)));
  EXPECT_TRUE(sameElement(reference::floor(Int(i32, -7)), Int(i32, -7)));
}

TEST_F(ScalarTest, TranscendentalsWithinAnUlpOfPyTorch) {
  // PyTorch's f32 kernels are not correctly rounded; the reference computes
  // in double and rounds once, so they agree within an ulp.
  // F.gelu(1.) -> 0.8413447141647339, approximate='tanh' -> 0.8411920070648193
  EXPECT_TRUE(nearElement(gelu(F32(1), GeluApproximation::None),
                          F32(0.8413447141647339f), 1));
  EXPECT_TRUE(nearElement(gelu(F32(1), GeluApproximation::Tanh),
                          F32(0.8411920070648193f), 1));
  // In f64: 0.841344746068543 and 0.8411919906082768.
  EXPECT_TRUE(nearElement(gelu(F64(1), GeluApproximation::None),
                          F64(0.841344746068543), 1));
  EXPECT_TRUE(nearElement(gelu(F64(1), GeluApproximation::Tanh),
                          F64(0.8411919906082768), 1));
  // sigmoid(2.) -> 0.8807970285415649, silu(2.) -> 1.7615940570831299.
  EXPECT_TRUE(nearElement(sigmoid(F32(2)), F32(0.8807970285415649f), 1));
  EXPECT_TRUE(nearElement(silu(F32(2)), F32(1.7615940570831299f), 1));
  // exp(1.) in bf16 -> 2.71875.
  EXPECT_TRUE(sameElement(reference::exp(exact(bf16, 1)), exact(bf16, 2.71875)));
  EXPECT_TRUE(sameElement(reference::exp(F32(-inf)), F32(0)));
  EXPECT_TRUE(sameElement(reference::log(F32(0)), F32(-inf)));
  EXPECT_TRUE(sameElement(reference::log(F32(-1)), F32(nan)));
  EXPECT_TRUE(sameElement(reference::tanh(F32(inf)), F32(1)));
  EXPECT_TRUE(sameElement(sigmoid(F32(-inf)), F32(0)));
  // F.gelu(-inf) -> nan (-inf * 0 in the formula).
  EXPECT_TRUE(sameElement(gelu(F32(-inf), GeluApproximation::None), F32(nan)));
}

TEST_F(ScalarTest, NegateAndAbsFlipTheSignBit) {
  EXPECT_TRUE(sameElement(negate(F32(0.0f)), F32(-0.0f)));
  EXPECT_TRUE(sameElement(reference::abs(F32(-0.0f)), F32(0.0f)));
  EXPECT_TRUE(sameElement(reference::abs(exact(f16, -inf)), exact(f16, inf)));
}

//===----------------------------------------------------------------------===//
// compare, select
//===----------------------------------------------------------------------===//

TEST_F(ScalarTest, CompareNaNIsUnordered) {
  Element n = F32(nan), one = F32(1);
  EXPECT_TRUE(sameElement(compare(ComparisonDirection::EQ, n, n), Bool(false)));
  EXPECT_TRUE(sameElement(compare(ComparisonDirection::NE, n, n), Bool(true)));
  EXPECT_TRUE(sameElement(compare(ComparisonDirection::LT, n, one), Bool(false)));
  EXPECT_TRUE(sameElement(compare(ComparisonDirection::GE, n, one), Bool(false)));
  EXPECT_TRUE(sameElement(compare(ComparisonDirection::GT, one, n), Bool(false)));
  // -0. == 0.
  EXPECT_TRUE(sameElement(compare(ComparisonDirection::EQ, F32(-0.0f), F32(0.0f)),
                          Bool(true)));
}

TEST_F(ScalarTest, CompareIntegersSignedAndBoolsUnsigned) {
  EXPECT_TRUE(sameElement(compare(ComparisonDirection::LT, Int(i8, -1), Int(i8, 1)),
                          Bool(true)));
  EXPECT_TRUE(sameElement(compare(ComparisonDirection::GT, Bool(true), Bool(false)),
                          Bool(true)));
  EXPECT_TRUE(sameElement(compare(ComparisonDirection::LE, Int(i64, INT64_MIN),
                                  Int(i64, INT64_MAX)),
                          Bool(true)));
}

TEST_F(ScalarTest, SelectReadsTruth) {
  EXPECT_TRUE(sameElement(select(Bool(true), F32(1), F32(2)), F32(1)));
  EXPECT_TRUE(sameElement(select(Bool(false), F32(1), F32(2)), F32(2)));
}

} // namespace
