// PyTorch's dtype names, sizes and type promotion (promote_types, result_type) for Thunder.
#include "thunder/Support/TypePromotion.h"

namespace thunder {
namespace {

/// PyTorch's type categories, ordered: a higher category wins in result_type.
enum class Category { Bool, Integral, Floating };

struct DTypeInfo {
  const char *name;
  int64_t sizeInBytes;
  Category category;
  /// Order within the category for promotion (wider wins). float16 and bfloat16 share a
  /// width; promoteTypes special-cases that pair.
  int width;
};

// Indexed by DType; keep in the enum's order.
constexpr DTypeInfo kInfo[kNumDTypes] = {
    {"bool", 1, Category::Bool, 0},
    {"int8", 1, Category::Integral, 8},
    {"int32", 4, Category::Integral, 32},
    {"int64", 8, Category::Integral, 64},
    {"float8_e4m3fn", 1, Category::Floating, 8},
    {"float8_e5m2", 1, Category::Floating, 8},
    {"float16", 2, Category::Floating, 16},
    {"bfloat16", 2, Category::Floating, 16},
    {"float32", 4, Category::Floating, 32},
    {"float64", 8, Category::Floating, 64},
};

const DTypeInfo &info(DType type) { return kInfo[static_cast<int>(type)]; }

/// promote_types where an absent side (no operand of that kind yet) yields the other.
/// Returns false when PyTorch would refuse.
bool promoteInto(std::optional<DType> &state, DType type) {
  if (!state) {
    state = type;
    return true;
  }
  std::optional<DType> promoted = promoteTypes(*state, type);
  state = promoted;
  return promoted.has_value();
}

/// ATen's combine_categories: `higher` comes from the higher-priority operand kind. A floating
/// `higher` wins outright; otherwise a bool `higher` or a floating `lower` promotes; otherwise
/// the higher-priority kind wins. Returns false when PyTorch would refuse.
bool combineCategories(std::optional<DType> higher, std::optional<DType> lower,
                       std::optional<DType> &result) {
  if (higher && isFloating(*higher)) {
    result = higher;
    return true;
  }
  if ((higher && *higher == DType::Bool) || (lower && isFloating(*lower))) {
    result = higher;
    if (!lower)
      return true;
    return promoteInto(result, *lower);
  }
  result = higher ? higher : lower;
  return true;
}

} // namespace

const char *dtypeName(DType type) { return info(type).name; }

std::optional<DType> dtypeFromName(std::string_view name) {
  constexpr std::string_view prefix = "torch.";
  if (name.substr(0, prefix.size()) == prefix)
    name.remove_prefix(prefix.size());
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == kInfo[i].name)
      return static_cast<DType>(i);
  // PyTorch's aliases (torch.float is torch.float32, ...).
  if (name == "float")
    return DType::Float32;
  if (name == "double")
    return DType::Float64;
  if (name == "half")
    return DType::Float16;
  if (name == "long")
    return DType::Int64;
  if (name == "int")
    return DType::Int32;
  return std::nullopt;
}

int64_t dtypeSizeInBytes(DType type) { return info(type).sizeInBytes; }

bool isFloating(DType type) { return info(type).category == Category::Floating; }

bool isIntegral(DType type) { return info(type).category == Category::Integral; }

bool isFloat8(DType type) { return type == DType::Float8E4M3FN || type == DType::Float8E5M2; }

std::optional<DType> promoteTypes(DType a, DType b) {
  if (a == b)
    return a;
  // PyTorch has no implicit promotion to or from float8 (c10::promoteTypes throws).
  if (isFloat8(a) || isFloat8(b))
    return std::nullopt;
  // Neither 16-bit float holds the other: meet at float32.
  if ((a == DType::Float16 && b == DType::BFloat16) ||
      (a == DType::BFloat16 && b == DType::Float16))
    return DType::Float32;
  const DTypeInfo &ia = info(a), &ib = info(b);
  if (ia.category != ib.category)
    return ia.category > ib.category ? a : b;
  return ia.width >= ib.width ? a : b;
}

std::optional<DType> resultType(const std::vector<PromotionOperand> &operands) {
  if (operands.empty())
    return std::nullopt;
  // ATen's ResultTypeState: one running promotion per operand kind.
  std::optional<DType> dimResult, zeroResult, scalarResult;
  for (const PromotionOperand &operand : operands) {
    DType type = operand.dtype;
    std::optional<DType> *state = &dimResult;
    if (operand.kind == OperandKind::ZeroDimTensor) {
      state = &zeroResult;
    } else if (operand.kind == OperandKind::Scalar) {
      state = &scalarResult;
      // A Python float is a wrapped number of the default dtype (float32); a Python int is
      // int64. Normalise by category so any floating/integral scalar dtype behaves the same.
      if (isFloating(type))
        type = DType::Float32;
      else if (isIntegral(type))
        type = DType::Int64;
    }
    if (!promoteInto(*state, type))
      return std::nullopt;
  }
  std::optional<DType> lower, result;
  if (!combineCategories(zeroResult, scalarResult, lower) ||
      !combineCategories(dimResult, lower, result))
    return std::nullopt;
  return result;
}

} // namespace thunder
