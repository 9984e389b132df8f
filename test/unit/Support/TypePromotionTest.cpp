// Unit tests for thunder/Support/TypePromotion.h: dtype names and sizes, and promote_types /
// result_type checked against tables produced by PyTorch.
#include "thunder/Support/TypePromotion.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

using namespace thunder;

namespace {

// Short names so that the PyTorch tables below stay readable.
constexpr DType B = DType::Bool, I8 = DType::Int8, I32 = DType::Int32, I64 = DType::Int64,
                E4M3 = DType::Float8E4M3FN, E5M2 = DType::Float8E5M2, F16 = DType::Float16,
                BF16 = DType::BFloat16, F32 = DType::Float32, F64 = DType::Float64;
constexpr OperandKind T = OperandKind::Tensor, Z = OperandKind::ZeroDimTensor,
                      S = OperandKind::Scalar;
/// PyTorch raises: no result type.
constexpr std::nullopt_t X = std::nullopt;

std::string show(std::optional<DType> type) { return type ? dtypeName(*type) : "<none>"; }

std::string show(const std::vector<PromotionOperand> &operands) {
  std::string out;
  for (const PromotionOperand &operand : operands) {
    if (!out.empty())
      out += ", ";
    out += dtypeName(operand.dtype);
    out += operand.kind == T ? " tensor" : operand.kind == Z ? " zero-dim tensor" : " scalar";
  }
  return out;
}

} // namespace

TEST(TypePromotionTest, NamesRoundTrip) {
  const char *expected[kNumDTypes] = {"bool",          "int8",        "int32",   "int64",
                                      "float8_e4m3fn", "float8_e5m2", "float16", "bfloat16",
                                      "float32",       "float64"};
  for (int i = 0; i < kNumDTypes; ++i) {
    DType type = static_cast<DType>(i);
    EXPECT_STREQ(dtypeName(type), expected[i]);
    EXPECT_EQ(dtypeFromName(expected[i]), type) << expected[i];
    EXPECT_EQ(dtypeFromName(std::string("torch.") + expected[i]), type) << expected[i];
  }
}

TEST(TypePromotionTest, NameAliases) {
  // torch.float is torch.float32, torch.half is torch.float16, ... (checked with torch 2.13).
  EXPECT_EQ(dtypeFromName("float"), F32);
  EXPECT_EQ(dtypeFromName("torch.float"), F32);
  EXPECT_EQ(dtypeFromName("double"), F64);
  EXPECT_EQ(dtypeFromName("half"), F16);
  EXPECT_EQ(dtypeFromName("torch.half"), F16);
  EXPECT_EQ(dtypeFromName("long"), I64);
  EXPECT_EQ(dtypeFromName("int"), I32);
  EXPECT_EQ(dtypeFromName("torch.bool"), B);
}

TEST(TypePromotionTest, UnknownNames) {
  for (const char *name : {"", "torch.", "float128", "int16", "uint8", "Float32", "FLOAT",
                           "complex64", "torch.torch.float32", "float32 ", "float8"})
    EXPECT_EQ(dtypeFromName(name), std::nullopt) << '"' << name << '"';
}

TEST(TypePromotionTest, SizesAndCategories) {
  // torch.<dtype>.itemsize and .is_floating_point.
  const int64_t sizes[kNumDTypes] = {1, 1, 4, 8, 1, 1, 2, 2, 4, 8};
  for (int i = 0; i < kNumDTypes; ++i)
    EXPECT_EQ(dtypeSizeInBytes(static_cast<DType>(i)), sizes[i]) << dtypeName(DType(i));
  for (DType type : {E4M3, E5M2, F16, BF16, F32, F64}) {
    EXPECT_TRUE(isFloating(type)) << dtypeName(type);
    EXPECT_FALSE(isIntegral(type)) << dtypeName(type);
  }
  for (DType type : {I8, I32, I64}) {
    EXPECT_TRUE(isIntegral(type)) << dtypeName(type);
    EXPECT_FALSE(isFloating(type)) << dtypeName(type);
  }
  EXPECT_FALSE(isIntegral(B));
  EXPECT_FALSE(isFloating(B));
  EXPECT_TRUE(isFloat8(E4M3));
  EXPECT_TRUE(isFloat8(E5M2));
  EXPECT_FALSE(isFloat8(F16));
}

TEST(TypePromotionTest, PromoteTypesMatchesPyTorch) {
  // Produced with torch 2.13:
  //   for a in dtypes: [str(torch.promote_types(a, b)) for b in dtypes]  ("X": it raised)
  // Rows are a, columns b, in DType order.
  const std::optional<DType> expected[kNumDTypes][kNumDTypes] = {
      //    B,   I8,  I32,  I64, E4M3, E5M2,  F16, BF16,  F32,  F64
      {   B,   I8,  I32,  I64,    X,    X,  F16, BF16,  F32,  F64}, // bool
      {  I8,   I8,  I32,  I64,    X,    X,  F16, BF16,  F32,  F64}, // int8
      { I32,  I32,  I32,  I64,    X,    X,  F16, BF16,  F32,  F64}, // int32
      { I64,  I64,  I64,  I64,    X,    X,  F16, BF16,  F32,  F64}, // int64
      {   X,    X,    X,    X, E4M3,    X,    X,    X,    X,    X}, // float8_e4m3fn
      {   X,    X,    X,    X,    X, E5M2,    X,    X,    X,    X}, // float8_e5m2
      { F16,  F16,  F16,  F16,    X,    X,  F16,  F32,  F32,  F64}, // float16
      {BF16, BF16, BF16, BF16,    X,    X,  F32, BF16,  F32,  F64}, // bfloat16
      { F32,  F32,  F32,  F32,    X,    X,  F32,  F32,  F32,  F64}, // float32
      { F64,  F64,  F64,  F64,    X,    X,  F64,  F64,  F64,  F64}, // float64
  };
  for (int i = 0; i < kNumDTypes; ++i)
    for (int j = 0; j < kNumDTypes; ++j) {
      DType a = static_cast<DType>(i), b = static_cast<DType>(j);
      EXPECT_EQ(promoteTypes(a, b), expected[i][j])
          << "promote_types(" << dtypeName(a) << ", " << dtypeName(b) << ") gave "
          << show(promoteTypes(a, b)) << ", PyTorch gives " << show(expected[i][j]);
    }
}

namespace {
struct ResultTypeCase {
  std::vector<PromotionOperand> operands;
  std::optional<DType> expected;
};
} // namespace

TEST(TypePromotionTest, ResultTypeMatchesPyTorch) {
  // Produced with torch 2.13: torch.result_type(a, b) where a "T" operand is torch.zeros(2,
  // dtype=...), a "Z" operand torch.zeros((), dtype=...) and an "S" operand the Python scalar
  // True, 3 or 2.5 (listed as bool, int64, float64); three-operand rows take the dtype of
  // torch.addcmul(a, b, c), which TensorIterator promotes by the same rule. "X": it raised.
  const ResultTypeCase cases[] = {
      // Tensor or zero-dim tensor with a Python scalar.
      {{{B, T}, {B, S}}, B},
      {{{B, Z}, {B, S}}, B},
      {{{B, T}, {I64, S}}, I64},
      {{{B, Z}, {I64, S}}, I64},
      {{{B, T}, {F64, S}}, F32},
      {{{B, Z}, {F64, S}}, F32},
      {{{I8, T}, {B, S}}, I8},
      {{{I8, Z}, {B, S}}, I8},
      {{{I8, T}, {I64, S}}, I8},
      {{{I8, Z}, {I64, S}}, I8},
      {{{I8, T}, {F64, S}}, F32},
      {{{I8, Z}, {F64, S}}, F32},
      {{{I32, T}, {B, S}}, I32},
      {{{I32, Z}, {B, S}}, I32},
      {{{I32, T}, {I64, S}}, I32},
      {{{I32, Z}, {I64, S}}, I32},
      {{{I32, T}, {F64, S}}, F32},
      {{{I32, Z}, {F64, S}}, F32},
      {{{I64, T}, {B, S}}, I64},
      {{{I64, Z}, {B, S}}, I64},
      {{{I64, T}, {I64, S}}, I64},
      {{{I64, Z}, {I64, S}}, I64},
      {{{I64, T}, {F64, S}}, F32},
      {{{I64, Z}, {F64, S}}, F32},
      {{{E4M3, T}, {B, S}}, E4M3},
      {{{E4M3, Z}, {B, S}}, E4M3},
      {{{E4M3, T}, {I64, S}}, E4M3},
      {{{E4M3, Z}, {I64, S}}, E4M3},
      {{{E4M3, T}, {F64, S}}, E4M3},
      {{{E4M3, Z}, {F64, S}}, E4M3},
      {{{E5M2, T}, {B, S}}, E5M2},
      {{{E5M2, Z}, {B, S}}, E5M2},
      {{{E5M2, T}, {I64, S}}, E5M2},
      {{{E5M2, Z}, {I64, S}}, E5M2},
      {{{E5M2, T}, {F64, S}}, E5M2},
      {{{E5M2, Z}, {F64, S}}, E5M2},
      {{{F16, T}, {B, S}}, F16},
      {{{F16, Z}, {B, S}}, F16},
      {{{F16, T}, {I64, S}}, F16},
      {{{F16, Z}, {I64, S}}, F16},
      {{{F16, T}, {F64, S}}, F16},
      {{{F16, Z}, {F64, S}}, F16},
      {{{BF16, T}, {B, S}}, BF16},
      {{{BF16, Z}, {B, S}}, BF16},
      {{{BF16, T}, {I64, S}}, BF16},
      {{{BF16, Z}, {I64, S}}, BF16},
      {{{BF16, T}, {F64, S}}, BF16},
      {{{BF16, Z}, {F64, S}}, BF16},
      {{{F32, T}, {B, S}}, F32},
      {{{F32, Z}, {B, S}}, F32},
      {{{F32, T}, {I64, S}}, F32},
      {{{F32, Z}, {I64, S}}, F32},
      {{{F32, T}, {F64, S}}, F32},
      {{{F32, Z}, {F64, S}}, F32},
      {{{F64, T}, {B, S}}, F64},
      {{{F64, Z}, {B, S}}, F64},
      {{{F64, T}, {I64, S}}, F64},
      {{{F64, Z}, {I64, S}}, F64},
      {{{F64, T}, {F64, S}}, F64},
      {{{F64, Z}, {F64, S}}, F64},
      // Dimensioned tensor with zero-dim tensor, every pair.
      {{{B, T}, {B, Z}}, B},
      {{{B, T}, {I8, Z}}, I8},
      {{{B, T}, {I32, Z}}, I32},
      {{{B, T}, {I64, Z}}, I64},
      {{{B, T}, {E4M3, Z}}, X},
      {{{B, T}, {E5M2, Z}}, X},
      {{{B, T}, {F16, Z}}, F16},
      {{{B, T}, {BF16, Z}}, BF16},
      {{{B, T}, {F32, Z}}, F32},
      {{{B, T}, {F64, Z}}, F64},
      {{{I8, T}, {B, Z}}, I8},
      {{{I8, T}, {I8, Z}}, I8},
      {{{I8, T}, {I32, Z}}, I8},
      {{{I8, T}, {I64, Z}}, I8},
      {{{I8, T}, {E4M3, Z}}, X},
      {{{I8, T}, {E5M2, Z}}, X},
      {{{I8, T}, {F16, Z}}, F16},
      {{{I8, T}, {BF16, Z}}, BF16},
      {{{I8, T}, {F32, Z}}, F32},
      {{{I8, T}, {F64, Z}}, F64},
      {{{I32, T}, {B, Z}}, I32},
      {{{I32, T}, {I8, Z}}, I32},
      {{{I32, T}, {I32, Z}}, I32},
      {{{I32, T}, {I64, Z}}, I32},
      {{{I32, T}, {E4M3, Z}}, X},
      {{{I32, T}, {E5M2, Z}}, X},
      {{{I32, T}, {F16, Z}}, F16},
      {{{I32, T}, {BF16, Z}}, BF16},
      {{{I32, T}, {F32, Z}}, F32},
      {{{I32, T}, {F64, Z}}, F64},
      {{{I64, T}, {B, Z}}, I64},
      {{{I64, T}, {I8, Z}}, I64},
      {{{I64, T}, {I32, Z}}, I64},
      {{{I64, T}, {I64, Z}}, I64},
      {{{I64, T}, {E4M3, Z}}, X},
      {{{I64, T}, {E5M2, Z}}, X},
      {{{I64, T}, {F16, Z}}, F16},
      {{{I64, T}, {BF16, Z}}, BF16},
      {{{I64, T}, {F32, Z}}, F32},
      {{{I64, T}, {F64, Z}}, F64},
      {{{E4M3, T}, {B, Z}}, E4M3},
      {{{E4M3, T}, {I8, Z}}, E4M3},
      {{{E4M3, T}, {I32, Z}}, E4M3},
      {{{E4M3, T}, {I64, Z}}, E4M3},
      {{{E4M3, T}, {E4M3, Z}}, E4M3},
      {{{E4M3, T}, {E5M2, Z}}, E4M3},
      {{{E4M3, T}, {F16, Z}}, E4M3},
      {{{E4M3, T}, {BF16, Z}}, E4M3},
      {{{E4M3, T}, {F32, Z}}, E4M3},
      {{{E4M3, T}, {F64, Z}}, E4M3},
      {{{E5M2, T}, {B, Z}}, E5M2},
      {{{E5M2, T}, {I8, Z}}, E5M2},
      {{{E5M2, T}, {I32, Z}}, E5M2},
      {{{E5M2, T}, {I64, Z}}, E5M2},
      {{{E5M2, T}, {E4M3, Z}}, E5M2},
      {{{E5M2, T}, {E5M2, Z}}, E5M2},
      {{{E5M2, T}, {F16, Z}}, E5M2},
      {{{E5M2, T}, {BF16, Z}}, E5M2},
      {{{E5M2, T}, {F32, Z}}, E5M2},
      {{{E5M2, T}, {F64, Z}}, E5M2},
      {{{F16, T}, {B, Z}}, F16},
      {{{F16, T}, {I8, Z}}, F16},
      {{{F16, T}, {I32, Z}}, F16},
      {{{F16, T}, {I64, Z}}, F16},
      {{{F16, T}, {E4M3, Z}}, F16},
      {{{F16, T}, {E5M2, Z}}, F16},
      {{{F16, T}, {F16, Z}}, F16},
      {{{F16, T}, {BF16, Z}}, F16},
      {{{F16, T}, {F32, Z}}, F16},
      {{{F16, T}, {F64, Z}}, F16},
      {{{BF16, T}, {B, Z}}, BF16},
      {{{BF16, T}, {I8, Z}}, BF16},
      {{{BF16, T}, {I32, Z}}, BF16},
      {{{BF16, T}, {I64, Z}}, BF16},
      {{{BF16, T}, {E4M3, Z}}, BF16},
      {{{BF16, T}, {E5M2, Z}}, BF16},
      {{{BF16, T}, {F16, Z}}, BF16},
      {{{BF16, T}, {BF16, Z}}, BF16},
      {{{BF16, T}, {F32, Z}}, BF16},
      {{{BF16, T}, {F64, Z}}, BF16},
      {{{F32, T}, {B, Z}}, F32},
      {{{F32, T}, {I8, Z}}, F32},
      {{{F32, T}, {I32, Z}}, F32},
      {{{F32, T}, {I64, Z}}, F32},
      {{{F32, T}, {E4M3, Z}}, F32},
      {{{F32, T}, {E5M2, Z}}, F32},
      {{{F32, T}, {F16, Z}}, F32},
      {{{F32, T}, {BF16, Z}}, F32},
      {{{F32, T}, {F32, Z}}, F32},
      {{{F32, T}, {F64, Z}}, F32},
      {{{F64, T}, {B, Z}}, F64},
      {{{F64, T}, {I8, Z}}, F64},
      {{{F64, T}, {I32, Z}}, F64},
      {{{F64, T}, {I64, Z}}, F64},
      {{{F64, T}, {E4M3, Z}}, F64},
      {{{F64, T}, {E5M2, Z}}, F64},
      {{{F64, T}, {F16, Z}}, F64},
      {{{F64, T}, {BF16, Z}}, F64},
      {{{F64, T}, {F32, Z}}, F64},
      {{{F64, T}, {F64, Z}}, F64},
      // Two Python scalars.
      {{{B, S}, {B, S}}, B},
      {{{B, S}, {I64, S}}, I64},
      {{{B, S}, {F64, S}}, F32},
      {{{I64, S}, {B, S}}, I64},
      {{{I64, S}, {I64, S}}, I64},
      {{{I64, S}, {F64, S}}, F32},
      {{{F64, S}, {B, S}}, F32},
      {{{F64, S}, {I64, S}}, F32},
      {{{F64, S}, {F64, S}}, F32},
      // Two zero-dim tensors; a Python scalar before a tensor.
      {{{B, Z}, {B, Z}}, B},
      {{{B, Z}, {I8, Z}}, I8},
      {{{B, Z}, {I64, Z}}, I64},
      {{{B, Z}, {F16, Z}}, F16},
      {{{B, Z}, {BF16, Z}}, BF16},
      {{{B, Z}, {F64, Z}}, F64},
      {{{I32, Z}, {B, Z}}, I32},
      {{{I32, Z}, {I8, Z}}, I32},
      {{{I32, Z}, {I64, Z}}, I64},
      {{{I32, Z}, {F16, Z}}, F16},
      {{{I32, Z}, {BF16, Z}}, BF16},
      {{{I32, Z}, {F64, Z}}, F64},
      {{{F16, Z}, {B, Z}}, F16},
      {{{F16, Z}, {I8, Z}}, F16},
      {{{F16, Z}, {I64, Z}}, F16},
      {{{F16, Z}, {F16, Z}}, F16},
      {{{F16, Z}, {BF16, Z}}, F32},
      {{{F16, Z}, {F64, Z}}, F64},
      {{{BF16, Z}, {B, Z}}, BF16},
      {{{BF16, Z}, {I8, Z}}, BF16},
      {{{BF16, Z}, {I64, Z}}, BF16},
      {{{BF16, Z}, {F16, Z}}, F32},
      {{{BF16, Z}, {BF16, Z}}, BF16},
      {{{BF16, Z}, {F64, Z}}, F64},
      {{{F64, S}, {I8, T}}, F32},
      {{{I64, S}, {B, Z}}, I64},
      {{{B, S}, {BF16, T}}, BF16},
      // Two dimensioned tensors.
      {{{BF16, T}, {F16, T}}, F32},
      {{{I8, T}, {B, T}}, I8},
      {{{E4M3, T}, {F32, T}}, X},
      {{{E4M3, T}, {E5M2, T}}, X},
      {{{E5M2, T}, {E5M2, T}}, E5M2},
      {{{B, T}, {E5M2, T}}, X},
      // Three operands (through torch.addcmul's output dtype).
      {{{I32, T}, {F64, Z}, {I8, T}}, F64},
      {{{I8, T}, {I64, Z}, {I32, T}}, I32},
      {{{F64, Z}, {I32, T}, {B, T}}, F64},
      {{{F16, T}, {F64, Z}, {I64, Z}}, F16},
      {{{B, T}, {I32, Z}, {F16, Z}}, F16},
      {{{BF16, T}, {F16, T}, {F64, Z}}, F32},
      {{{I8, Z}, {I32, Z}, {B, T}}, I32},
      {{{I64, T}, {I32, T}, {BF16, Z}}, BF16},
      {{{BF16, Z}, {F16, Z}, {I32, T}}, F32},
      {{{B, Z}, {B, T}, {I8, T}}, I8},
  };
  for (const ResultTypeCase &c : cases)
    EXPECT_EQ(resultType(c.operands), c.expected)
        << "result_type(" << show(c.operands) << ") gave " << show(resultType(c.operands))
        << ", PyTorch gives " << show(c.expected);
}

TEST(TypePromotionTest, ResultTypeRules) {
  // The rules from the header, spelled out.
  // int tensor + float scalar -> the default dtype, not the scalar's float64.
  EXPECT_EQ(resultType({{I32, T}, {F64, S}}), F32);
  // bool tensor + int scalar -> int64.
  EXPECT_EQ(resultType({{B, T}, {I64, S}}), I64);
  // Within a category, dimensioned beats zero-dim beats scalar.
  EXPECT_EQ(resultType({{I8, T}, {I64, Z}, {I64, S}}), I8);
  EXPECT_EQ(resultType({{F16, T}, {F64, Z}}), F16);
  EXPECT_EQ(resultType({{F16, Z}, {F64, S}}), F16);
  // A higher category in a weaker kind still wins the category.
  EXPECT_EQ(resultType({{I32, T}, {F64, Z}}), F64);
  EXPECT_EQ(resultType({{I32, T}, {F16, Z}, {F64, S}}), F16);
  EXPECT_EQ(resultType({{BF16, T}, {F16, T}}), F32);
  // Order does not matter.
  EXPECT_EQ(resultType({{F64, S}, {I8, Z}, {I32, T}}), F32);
  // Single operands.
  EXPECT_EQ(resultType({{BF16, Z}}), BF16);
  EXPECT_EQ(resultType({{F64, S}}), F32);
  EXPECT_EQ(resultType({{B, S}}), B);
}

TEST(TypePromotionTest, ResultTypeScalarDtypeIsOnlyItsCategory) {
  // A scalar's dtype only says bool/int/float: an Int8 or Float16 scalar acts like Int64/Float64.
  EXPECT_EQ(resultType({{B, T}, {I8, S}}), I64);
  EXPECT_EQ(resultType({{I32, T}, {F16, S}}), F32);
  EXPECT_EQ(resultType({{I8, S}}), I64);
}

TEST(TypePromotionTest, ResultTypeRefusals) {
  EXPECT_EQ(resultType({}), std::nullopt);
  EXPECT_EQ(resultType({{E4M3, T}, {F32, T}}), std::nullopt);
  // A float8 tensor beats a zero-dim float8 of another format, but PyTorch promotes within
  // each kind first, so two different float8 zero-dim tensors still raise (checked with
  // torch.addcmul).
  EXPECT_EQ(resultType({{E4M3, T}, {E5M2, Z}}), E4M3);
  EXPECT_EQ(resultType({{E4M3, Z}, {E5M2, Z}, {E4M3, T}}), std::nullopt);
  EXPECT_EQ(resultType({{I32, T}, {E5M2, Z}}), std::nullopt);
  // The refusal is sticky: a later operand does not hide it.
  EXPECT_EQ(resultType({{E4M3, T}, {F32, T}, {E4M3, T}}), std::nullopt);
}
