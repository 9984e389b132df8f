// Unit tests for thunder/Dialect/Thunder/Reference/Element.h and the convert
// op of Scalar.h: how values round into each element type. Expected values
// are PyTorch's (torch 2.13, CPU), from the expression beside each.
#include "ReferenceTestUtils.h"

#include "thunder/Dialect/Thunder/Reference/Scalar.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::reference;
using namespace thunder_test;

namespace {

using ElementTest = ReferenceTest;

/// An element of `type` with the raw bits `bits`.
Element bitsOf(Type type, uint64_t bits) {
  return Element(type, llvm::APFloat(cast<FloatType>(type).getFloatSemantics(),
                                     llvm::APInt(type.getIntOrFloatBitWidth(), bits)));
}

TEST_F(ElementTest, FromDoubleRoundsNarrowTypesThroughF32) {
  // torch.tensor([1 + 2**-11 + 2**-40], dtype=f64).to(f16) -> 1.0: the f64
  // value rounds to f32 first (a tie there), then the tie goes to even.
  // Rounded once it would be 1 + 2**-10.
  double x = 1 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(Element::fromDouble(f16, x).toDouble(), 1.0);
  EXPECT_TRUE(sameElement(convert(F64(x), f16), exact(f16, 1.0)));
  // .to(bf16) of 1 + 2**-8 + 2**-40 -> 1.0 likewise.
  EXPECT_TRUE(sameElement(convert(F64(1 + 0x1p-8 + 0x1p-40), bf16), exact(bf16, 1.0)));
  // f32 -> f16 rounds once: 1 + 2**-11 + 2**-20 goes up.
  EXPECT_TRUE(sameElement(convert(F32(1 + 0x1p-11f + 0x1p-20f), f16),
                          exact(f16, 1 + 0x1p-10)));
}

TEST_F(ElementTest, ConvertF32ToBF16AndF16) {
  // torch.tensor([0.1]).to(bf16) -> 0.10009765625, .to(f16) -> 0.0999755859375
  EXPECT_TRUE(sameElement(convert(F32(0.1f), bf16), exact(bf16, 0.10009765625)));
  EXPECT_TRUE(sameElement(convert(F32(0.1f), f16), exact(f16, 0.0999755859375)));
  // .to(f16) of [65520., 65519.] -> [inf, 65504.]
  EXPECT_TRUE(sameElement(convert(F32(65520), f16), exact(f16, inf)));
  EXPECT_TRUE(sameElement(convert(F32(65519), f16), exact(f16, 65504)));
  // The smallest f16 subnormal, and half of it (a tie, to even: zero).
  EXPECT_TRUE(sameElement(convert(F32(0x1p-24f), f16), bitsOf(f16, 0x0001)));
  EXPECT_TRUE(sameElement(convert(F32(0x1p-25f), f16), exact(f16, 0)));
  EXPECT_TRUE(sameElement(convert(F32(-0x1p-25f), f16), exact(f16, -0.0)));
  // bf16 keeps f32's range: 3e38 stays finite.
  EXPECT_TRUE(sameElement(convert(F32(3e38f), bf16), bitsOf(bf16, 0x7f62)));
  // NaN stays NaN.
  EXPECT_TRUE(convert(F32(nan), bf16)->getFloat().isNaN());
}

TEST_F(ElementTest, ConvertIntoF8) {
  // torch.tensor([500., 1e6, 448., 464., 0.0017, inf, -inf, -500.])
  //   .to(float8_e4m3fn) -> [448., 448., 448., 448., 0.001953125, 448., -448., -448.]
  // (PyTorch saturates into e4m3fn, which has no infinity.)
  for (float v : {500.0f, 1e6f, 448.0f, 464.0f, float(inf)})
    EXPECT_TRUE(sameElement(convert(F32(v), e4m3), exact(e4m3, 448))) << v;
  EXPECT_TRUE(sameElement(convert(F32(0.0017f), e4m3), exact(e4m3, 0.001953125)));
  EXPECT_TRUE(sameElement(convert(F32(-inf), e4m3), exact(e4m3, -448)));
  EXPECT_TRUE(sameElement(convert(F32(-500), e4m3), exact(e4m3, -448)));
  EXPECT_TRUE(convert(F32(nan), e4m3)->getFloat().isNaN());
  // .to(float8_e5m2) of [60000., 1e6, 57344., 61440.] -> [57344., inf, 57344., inf]
  EXPECT_TRUE(sameElement(convert(F32(60000), e5m2), exact(e5m2, 57344)));
  EXPECT_TRUE(sameElement(convert(F32(1e6f), e5m2), exact(e5m2, inf)));
  EXPECT_TRUE(sameElement(convert(F32(61440), e5m2), exact(e5m2, inf)));
  // And back: f8 values widen exactly.
  EXPECT_TRUE(sameElement(convert(exact(e4m3, -448), f32), F32(-448)));
}

TEST_F(ElementTest, ConvertFloatToInteger) {
  // torch.tensor([2.9, -2.9]).to(int8) -> [2, -2]: truncation.
  EXPECT_TRUE(sameElement(convert(F32(2.9f), i8), Int(i8, 2)));
  EXPECT_TRUE(sameElement(convert(F32(-2.9f), i8), Int(i8, -2)));
  EXPECT_TRUE(sameElement(convert(F32(-0.5f), i32), Int(i32, 0)));
  // Out of range and NaN are undefined behaviour in PyTorch's cast (x86
  // gives 44 for 300. -> int8, INT_MIN for NaN -> int32): no value.
  EXPECT_TRUE(failed(convert(F32(300), i8)));
  EXPECT_TRUE(failed(convert(F32(nan), i32)));
  EXPECT_TRUE(failed(convert(F32(inf), i64)));
  EXPECT_TRUE(sameElement(convert(F32(-128.5f), i8), Int(i8, -128)));
  // Anything to bool is != 0: NaN -> True, -0. -> False.
  EXPECT_TRUE(sameElement(convert(F32(nan), i1), Bool(true)));
  EXPECT_TRUE(sameElement(convert(F32(-0.0f), i1), Bool(false)));
  EXPECT_TRUE(sameElement(convert(Int(i32, 256), i1), Bool(true)));
}

TEST_F(ElementTest, ConvertIntegers) {
  // int64 2**24 + 1 -> f32 rounds once (to even): 2**24.
  EXPECT_TRUE(sameElement(convert(Int(i64, (1 << 24) + 1), f32), F32(0x1p24f)));
  EXPECT_TRUE(sameElement(convert(Int(i64, (1 << 24) + 3), f32), F32(0x1p24f + 4)));
  // int32 2049 -> f16: a tie, to the even 2048; 65520 -> inf.
  EXPECT_TRUE(sameElement(convert(Int(i32, 2049), f16), exact(f16, 2048)));
  EXPECT_TRUE(sameElement(convert(Int(i32, 65520), f16), exact(f16, inf)));
  // Integers wrap; bools widen to 0 or 1.
  EXPECT_TRUE(sameElement(convert(Int(i32, 300), i8), Int(i8, 44)));
  EXPECT_TRUE(sameElement(convert(Int(i8, -1), i64), Int(i64, -1)));
  EXPECT_TRUE(sameElement(convert(Bool(true), i32), Int(i32, 1)));
  EXPECT_TRUE(sameElement(convert(Bool(true), bf16), exact(bf16, 1)));
}

TEST_F(ElementTest, FromIntAndToInt) {
  EXPECT_EQ(Int(i8, 300).toInt(), 44);
  EXPECT_EQ(Int(i64, INT64_MIN).toInt(), INT64_MIN);
  EXPECT_EQ(Bool(true).toInt(), 1);
  EXPECT_EQ(Int(i1, 2).toInt(), 1);
  EXPECT_EQ(Int(f32, (1 << 24) + 1).toDouble(), 0x1p24);
}

TEST_F(ElementTest, BitwiseEqualityTellsZerosApart) {
  EXPECT_FALSE(F32(0.0f).isBitwiseEqual(F32(-0.0f)));
  EXPECT_TRUE(F32(nan).isBitwiseEqual(F32(nan)));
  EXPECT_FALSE(F32(1).isBitwiseEqual(F64(1)));
  EXPECT_EQ(exact(f16, 1.5).toString(), "f16 1.5");
  EXPECT_EQ(Int(i32, -7).toString(), "i32 -7");
  EXPECT_EQ(Bool(true).toString(), "i1 true");
}

} // namespace
