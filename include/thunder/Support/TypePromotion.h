// Thunder's element types and PyTorch's type promotion rules over them.
//
// Framework-free (standard library only) so that the importer, the verifiers and the runtime
// agree on dtype names, sizes and promotion without depending on MLIR.
#ifndef THUNDER_SUPPORT_TYPEPROMOTION_H
#define THUNDER_SUPPORT_TYPEPROMOTION_H

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace thunder {

/// Element types Thunder supports, by PyTorch name.
enum class DType : uint8_t {
  Bool,
  Int8,
  Int32,
  Int64,
  Float8E4M3FN,
  Float8E5M2,
  Float16,
  BFloat16,
  Float32,
  Float64
};

/// The number of DType values; DType(i) for i in [0, kNumDTypes) enumerates them all.
inline constexpr int kNumDTypes = 10;

/// PyTorch's name without "torch.": "float32", "bfloat16", "float8_e4m3fn", "bool", ...
const char *dtypeName(DType type);

/// Inverse of dtypeName; also accepts a "torch." prefix and PyTorch's aliases "float", "half",
/// "long", "int", "double" (and "bool"). Empty for anything else.
std::optional<DType> dtypeFromName(std::string_view name);

/// Storage size of one element (bool is one byte, as in PyTorch).
int64_t dtypeSizeInBytes(DType type);

/// Whether `type` is a floating-point type (float8 variants included).
bool isFloating(DType type);

/// Whether `type` is a (signed) integer type; excludes Bool.
bool isIntegral(DType type);

/// Whether `type` is one of the float8 types, which PyTorch never promotes implicitly.
bool isFloat8(DType type);

/// torch.promote_types(a, b). Empty optional where PyTorch refuses (float8 with any different
/// type).
std::optional<DType> promoteTypes(DType a, DType b);

/// How an operand takes part in torch.result_type.
enum class OperandKind : uint8_t {
  Tensor,        ///< a tensor with at least one dim
  ZeroDimTensor, ///< a rank-0 tensor
  Scalar         ///< a Python bool/int/float
};

/// One operand of resultType. For Scalar, dtype is Bool, Int64 or Float64 (a Python bool, int
/// or float); only its category matters.
struct PromotionOperand {
  DType dtype;
  OperandKind kind;
};

/// Category-aware result type of an operation (torch.result_type): operands are dimensioned
/// tensors, zero-dim tensors, or Python scalars (bool/int/float). Implements PyTorch's rule: the
/// highest category (bool < integral < floating) among all operands decides; within the winning
/// category, dimensioned tensors beat zero-dim tensors beat scalars; a Python float scalar with
/// only integral/bool tensors gives the default dtype float32; a Python int scalar with only bool
/// tensors gives int64. Empty for no operands or where PyTorch refuses (float8 mixed with
/// another type in a way that needs promote_types).
std::optional<DType> resultType(const std::vector<PromotionOperand> &operands);

} // namespace thunder

#endif // THUNDER_SUPPORT_TYPEPROMOTION_H
