//===- ConvertElementwise.cpp - ATen elementwise ops to thunder -----------===//
//
// Arithmetic, unary math, activations, comparisons, logical ops, where and
// clamp. PyTorch's type promotion is applied from what torch.export recorded:
// arithmetic computes in the result's dtype (which is the promoted one), and
// comparisons in the promoted dtype of their operands (torch.result_type).
//
//===----------------------------------------------------------------------===//
#include "Conversion.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::thunder;
using namespace ::thunder;
using namespace ::thunder::import;
using namespace ::thunder::import::detail;

namespace {

/// The result type and two tensor-or-number arguments in it: the arithmetic
/// ops compute in their result's dtype, which is the promoted one.
struct BinaryOperands {
  RankedTensorType type;
  Value lhs, rhs;
};

FailureOr<BinaryOperands> binaryOperands(NodeContext &ctx,
                                         llvm::StringRef lhsName = "self",
                                         llvm::StringRef rhsName = "other") {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  FailureOr<Value> lhs = ctx.operandAs(lhsName, *type);
  FailureOr<Value> rhs = ctx.operandAs(rhsName, *type);
  if (failed(lhs) || failed(rhs))
    return failure();
  return BinaryOperands{*type, *lhs, *rhs};
}

bool isNumber(const std::optional<Scalar> &number, double value) {
  return number &&
         std::visit([value](auto v) { return double(v) == value; }, *number);
}

/// `value * alpha` for PyTorch's `alpha` argument (absent or 1: `value`).
Value scaleByAlpha(NodeContext &ctx, Value value, RankedTensorType type) {
  if (ctx.dataRef("alpha")) {
    FailureOr<Value> alpha = ctx.operandAs("alpha", type);
    if (succeeded(alpha))
      return ctx.create<MulOp>(value, *alpha);
  }
  std::optional<Scalar> alpha = ctx.scalar("alpha");
  if (!alpha || isNumber(alpha, 1))
    return value;
  return ctx.create<MulOp>(value, ctx.splat(type, *alpha));
}

/// Converts `op(self, other)`.
template <typename OpTy>
LogicalResult convertBinary(NodeContext &ctx) {
  FailureOr<BinaryOperands> in = binaryOperands(ctx);
  if (failed(in))
    return failure();
  return ctx.setResult(ctx.create<OpTy>(in->lhs, in->rhs));
}

/// add/sub with PyTorch's `alpha`: self op alpha * other.
template <typename OpTy>
LogicalResult convertAddSub(NodeContext &ctx) {
  FailureOr<BinaryOperands> in = binaryOperands(ctx);
  if (failed(in))
    return failure();
  return ctx.setResult(
      ctx.create<OpTy>(in->lhs, scaleByAlpha(ctx, in->rhs, in->type)));
}

/// An arithmetic op that PyTorch also defines on bools, where type promotion
/// keeps bool and the op is logic: add and maximum are `or`, mul and minimum
/// are `and`. Other dtypes get `OpTy` (with add's `alpha`).
template <typename OpTy, typename BoolOpTy>
LogicalResult convertArithmeticOrLogic(NodeContext &ctx) {
  FailureOr<BinaryOperands> in = binaryOperands(ctx);
  if (failed(in))
    return failure();
  if (!in->type.getElementType().isInteger(1)) {
    if constexpr (std::is_same_v<OpTy, AddOp>)
      return ctx.setResult(
          ctx.create<OpTy>(in->lhs, scaleByAlpha(ctx, in->rhs, in->type)));
    return ctx.setResult(ctx.create<OpTy>(in->lhs, in->rhs));
  }
  if (std::optional<Scalar> alpha = ctx.scalar("alpha"); alpha && !isNumber(alpha, 1))
    return ctx.fail("a bool add with alpha other than 1 is not supported");
  return ctx.setResult(ctx.create<BoolOpTy>(in->lhs, in->rhs));
}

/// rsub: other - alpha * self.
LogicalResult convertRsub(NodeContext &ctx) {
  FailureOr<BinaryOperands> in = binaryOperands(ctx);
  if (failed(in))
    return failure();
  return ctx.setResult(
      ctx.create<SubOp>(in->rhs, scaleByAlpha(ctx, in->lhs, in->type)));
}

LogicalResult convertDiv(NodeContext &ctx) {
  FailureOr<std::string> mode = ctx.getString("rounding_mode", "none");
  if (failed(mode))
    return failure();
  RoundingMode rounding = RoundingMode::None;
  if (*mode == "trunc")
    rounding = RoundingMode::Trunc;
  else if (*mode == "floor")
    rounding = RoundingMode::Floor;
  else if (*mode != "none")
    return ctx.fail("unknown rounding_mode '" + *mode + "'");
  FailureOr<BinaryOperands> in = binaryOperands(ctx);
  if (failed(in))
    return failure();
  return ctx.setResult(ctx.create<DivOp>(in->lhs, in->rhs, rounding));
}

/// pow: self ^ exponent, or a number raised to a tensor (pow.Scalar).
LogicalResult convertPow(NodeContext &ctx) {
  FailureOr<BinaryOperands> in = binaryOperands(ctx, "self", "exponent");
  if (failed(in))
    return failure();
  // x ^ 2 is x * x: exact, and what every backend does fastest.
  if (isNumber(ctx.scalar("exponent"), 2))
    return ctx.setResult(ctx.create<MulOp>(in->lhs, in->lhs));
  return ctx.setResult(ctx.create<PowOp>(in->lhs, in->rhs));
}

/// A one-operand op on `self` in the result type.
template <typename OpTy>
LogicalResult convertUnary(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  FailureOr<Value> x = ctx.operandAs("self", *type);
  if (failed(x))
    return failure();
  return ctx.setResult(ctx.create<OpTy>(*x));
}

LogicalResult convertGelu(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<std::string> approximate = ctx.getString("approximate", "none");
  if (failed(type) || failed(approximate))
    return failure();
  FailureOr<Value> x = ctx.operandAs("self", *type);
  if (failed(x))
    return failure();
  if (*approximate != "none" && *approximate != "tanh")
    return ctx.fail("unknown approximate='" + *approximate + "'");
  auto mode = *approximate == "tanh" ? GeluApproximation::Tanh
                                     : GeluApproximation::None;
  return ctx.setResult(ctx.create<GeluOp>(*x, mode));
}

/// The kind of a tensor-or-number argument for torch.result_type.
std::optional<PromotionOperand> promotionOperand(NodeContext &ctx,
                                                 llvm::StringRef name) {
  if (std::optional<Scalar> number = ctx.scalar(name)) {
    DType dtype = std::holds_alternative<bool>(*number)      ? DType::Bool
                  : std::holds_alternative<int64_t>(*number) ? DType::Int64
                                                             : DType::Float64;
    return PromotionOperand{dtype, OperandKind::Scalar};
  }
  // A value read from tensor data (.item()) is a Python number to PyTorch:
  // its category (bool, int, float) promotes, its width does not.
  if (Value data = ctx.dataValue(name)) {
    Type element = cast<RankedTensorType>(data.getType()).getElementType();
    DType dtype = element.isInteger(1)      ? DType::Bool
                  : isa<IntegerType>(element) ? DType::Int64
                                              : DType::Float64;
    return PromotionOperand{dtype, OperandKind::Scalar};
  }
  // A symbolic size (`positions >= seq_len`) is a Python int to PyTorch (a
  // float through sym_float, a bool from a comparison of sizes).
  if (ctx.isSize(name)) {
    const llvm::json::Object *a = ctx.arg(name);
    DType dtype = a->get("as_sym_float") ? DType::Float64
                  : a->get("as_sym_bool") ? DType::Bool
                                          : DType::Int64;
    return PromotionOperand{dtype, OperandKind::Scalar};
  }
  FailureOr<Value> value = ctx.tensor(name);
  if (failed(value))
    return std::nullopt;
  auto type = cast<RankedTensorType>(value->getType());
  Type element = type.getElementType();
  DType dtype = element.isInteger(1)    ? DType::Bool
                : element.isInteger(8)  ? DType::Int8
                : element.isInteger(32) ? DType::Int32
                : element.isInteger(64) ? DType::Int64
                : element.isF16()       ? DType::Float16
                : element.isBF16()      ? DType::BFloat16
                : element.isF32()       ? DType::Float32
                : element.isF64()       ? DType::Float64
                : element.isFloat8E4M3FN() ? DType::Float8E4M3FN
                                           : DType::Float8E5M2;
  return PromotionOperand{dtype, type.getRank() == 0 ? OperandKind::ZeroDimTensor
                                                     : OperandKind::Tensor};
}

template <ComparisonDirection direction>
LogicalResult convertCompare(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  std::optional<PromotionOperand> a = promotionOperand(ctx, "self");
  std::optional<PromotionOperand> b = promotionOperand(ctx, "other");
  if (!a || !b)
    return failure();
  std::optional<DType> common = resultType({*a, *b});
  if (!common)
    return ctx.fail(llvm::Twine("PyTorch does not promote ") +
                    dtypeName(a->dtype) + " with " + dtypeName(b->dtype));
  auto computeType = type->clone(elementTypeOf(ctx.b.getContext(), *common));
  FailureOr<Value> lhs = ctx.operandAs("self", computeType);
  FailureOr<Value> rhs = ctx.operandAs("other", computeType);
  if (failed(lhs) || failed(rhs))
    return failure();
  return ctx.setResult(ctx.create<CompareOp>(direction, *lhs, *rhs));
}

/// Logical ops take any dtype and test `!= 0`; bitwise ops on bool are the
/// same thing.
template <typename OpTy>
LogicalResult convertLogical(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  if (!type->getElementType().isInteger(1))
    return ctx.fail("bitwise ops on integer tensors are not supported; only "
                    "on bool");
  return convertBinary<OpTy>(ctx);
}

LogicalResult convertLogicalNot(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  if (!type->getElementType().isInteger(1))
    return ctx.fail("bitwise_not on integer tensors is not supported; only "
                    "on bool");
  FailureOr<Value> x = ctx.operandAs("self", *type);
  if (failed(x))
    return failure();
  return ctx.setResult(ctx.create<LogicalNotOp>(*x));
}

LogicalResult convertWhere(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  auto boolType = type->clone(ctx.b.getI1Type());
  FailureOr<Value> cond = ctx.operandAs("condition", boolType);
  FailureOr<Value> a = ctx.operandAs("self", *type);
  FailureOr<Value> b = ctx.operandAs("other", *type);
  if (failed(cond) || failed(a) || failed(b))
    return failure();
  return ctx.setResult(ctx.create<WhereOp>(*cond, *a, *b));
}

/// clamp with number bounds; tensor bounds become maximum/minimum.
LogicalResult convertClamp(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  FailureOr<Value> x = ctx.operandAs("self", *type);
  if (failed(x))
    return failure();
  Value result = *x;
  auto bound = [&](llvm::StringRef name, bool isMin) -> LogicalResult {
    if (!ctx.has(name))
      return success();
    FailureOr<Value> limit = ctx.operandAs(name, *type);
    if (failed(limit))
      return failure();
    result = isMin ? ctx.create<MaximumOp>(result, *limit)
                   : ctx.create<MinimumOp>(result, *limit);
    return success();
  };
  if (failed(bound("min", true)) || failed(bound("max", false)))
    return failure();
  return ctx.setResult(result);
}

/// hardtanh(x, min_val=-1, max_val=1).
LogicalResult convertHardtanh(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<double> lo = ctx.getFloat("min_val", -1.0);
  FailureOr<double> hi = ctx.getFloat("max_val", 1.0);
  if (failed(type) || failed(lo) || failed(hi))
    return failure();
  FailureOr<Value> x = ctx.operandAs("self", *type);
  if (failed(x))
    return failure();
  return ctx.setResult(ctx.create<ClampOp>(*x, ctx.b.getF64FloatAttr(*lo),
                                           ctx.b.getF64FloatAttr(*hi)));
}

} // namespace

void ::thunder::import::detail::registerElementwiseConversions(ConversionTable &table) {
  for (const char *op : {"aten.add.Tensor", "aten.add.Scalar"})
    table[op] = convertArithmeticOrLogic<AddOp, LogicalOrOp>;
  for (const char *op : {"aten.sub.Tensor", "aten.sub.Scalar"})
    table[op] = convertAddSub<SubOp>;
  for (const char *op : {"aten.rsub.Scalar", "aten.rsub.Tensor"})
    table[op] = convertRsub;
  for (const char *op : {"aten.mul.Tensor", "aten.mul.Scalar"})
    table[op] = convertArithmeticOrLogic<MulOp, LogicalAndOp>;
  for (const char *op : {"aten.div.Tensor", "aten.div.Scalar",
                         "aten.div.Tensor_mode", "aten.div.Scalar_mode"})
    table[op] = convertDiv;
  for (const char *op : {"aten.remainder.Tensor", "aten.remainder.Scalar"})
    table[op] = convertBinary<RemainderOp>;
  for (const char *op : {"aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor",
                         "aten.pow.Scalar"})
    table[op] = convertPow;
  table["aten.maximum.default"] = convertArithmeticOrLogic<MaximumOp, LogicalOrOp>;
  table["aten.minimum.default"] = convertArithmeticOrLogic<MinimumOp, LogicalAndOp>;

  table["aten.neg.default"] = convertUnary<NegOp>;
  table["aten.abs.default"] = convertUnary<AbsOp>;
  table["aten.exp.default"] = convertUnary<ExpOp>;
  table["aten.log.default"] = convertUnary<LogOp>;
  table["aten.log1p.default"] = convertUnary<Log1pOp>;
  table["aten.sqrt.default"] = convertUnary<SqrtOp>;
  table["aten.rsqrt.default"] = convertUnary<RsqrtOp>;
  table["aten.reciprocal.default"] = convertUnary<ReciprocalOp>;
  table["aten.tanh.default"] = convertUnary<TanhOp>;
  table["aten.sigmoid.default"] = convertUnary<SigmoidOp>;
  table["aten.erf.default"] = convertUnary<ErfOp>;
  table["aten.sin.default"] = convertUnary<SinOp>;
  table["aten.cos.default"] = convertUnary<CosOp>;
  table["aten.floor.default"] = convertUnary<FloorOp>;
  table["aten.ceil.default"] = convertUnary<CeilOp>;
  table["aten.relu.default"] = convertUnary<ReluOp>;
  table["aten.silu.default"] = convertUnary<SiluOp>;
  table["aten.gelu.default"] = convertGelu;
  table["aten.hardtanh.default"] = convertHardtanh;

  for (const char *suffix : {".Tensor", ".Scalar"}) {
    table[std::string("aten.eq") + suffix] = convertCompare<ComparisonDirection::EQ>;
    table[std::string("aten.ne") + suffix] = convertCompare<ComparisonDirection::NE>;
    table[std::string("aten.lt") + suffix] = convertCompare<ComparisonDirection::LT>;
    table[std::string("aten.le") + suffix] = convertCompare<ComparisonDirection::LE>;
    table[std::string("aten.gt") + suffix] = convertCompare<ComparisonDirection::GT>;
    table[std::string("aten.ge") + suffix] = convertCompare<ComparisonDirection::GE>;
  }
  table["aten.logical_and.default"] = convertLogical<LogicalAndOp>;
  table["aten.logical_or.default"] = convertLogical<LogicalOrOp>;
  table["aten.logical_xor.default"] = convertLogical<LogicalXorOp>;
  table["aten.logical_not.default"] = convertLogicalNot;
  for (const char *op : {"aten.where.self", "aten.where.ScalarOther",
                         "aten.where.ScalarSelf", "aten.where.Scalar"})
    table[op] = convertWhere;
  for (const char *op : {"aten.clamp.default", "aten.clamp.Tensor",
                         "aten.clamp_min.default", "aten.clamp_max.default"})
    table[op] = convertClamp;
  table["aten.hardtanh.default"] = convertHardtanh;
}
