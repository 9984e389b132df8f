//===- ConvertMath.cpp - ATen math functions and bitwise ops to thunder ---===//
//
// Trigonometric and hyperbolic functions and their inverses, expm1, log2,
// log10, trunc, round, sign, isnan/isinf, atan2, fmod, the integer bitwise
// ops and the activations elu and leaky_relu. Floating-point functions take
// integer inputs converted to the result dtype (the default float), as
// PyTorch's type promotion says; bool tensors take the logical ops.
//
//===----------------------------------------------------------------------===//
#include "Conversion.h"

#include <limits>

using namespace mlir;
using namespace mlir::thunder;
using namespace ::thunder;
using namespace ::thunder::import;
using namespace ::thunder::import::detail;

namespace {

/// `self` in the result type, with that type.
FailureOr<std::pair<RankedTensorType, Value>> selfAsResult(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  FailureOr<Value> x = ctx.operandAs("self", *type);
  if (failed(x))
    return failure();
  return std::make_pair(*type, *x);
}

/// A one-operand op on `self` in the result type.
template <typename OpTy>
LogicalResult convertUnary(NodeContext &ctx) {
  auto in = selfAsResult(ctx);
  if (failed(in))
    return failure();
  return ctx.setResult(ctx.create<OpTy>(in->second));
}

/// trunc/round: the identity on integers (PyTorch keeps their dtype).
template <typename OpTy>
LogicalResult convertRounding(NodeContext &ctx) {
  auto in = selfAsResult(ctx);
  if (failed(in))
    return failure();
  if (!isa<FloatType>(in->first.getElementType()))
    return ctx.setResult(in->second);
  return ctx.setResult(ctx.create<OpTy>(in->second));
}

/// `op(self, other)` in the result type.
template <typename OpTy>
LogicalResult convertBinary(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  FailureOr<Value> lhs = ctx.operandAs("self", *type);
  FailureOr<Value> rhs = ctx.operandAs("other", *type);
  if (failed(lhs) || failed(rhs))
    return failure();
  return ctx.setResult(ctx.create<OpTy>(*lhs, *rhs));
}

/// Bitwise ops: logical on bool, bitwise on integers.
template <typename BitwiseOpTy, typename LogicalOpTy>
LogicalResult convertBitwise(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  if (isa<FloatType>(type->getElementType()))
    return ctx.fail("bitwise ops are not defined on floating-point tensors");
  if (type->getElementType().isInteger(1))
    return convertBinary<LogicalOpTy>(ctx);
  return convertBinary<BitwiseOpTy>(ctx);
}

LogicalResult convertBitwiseNot(NodeContext &ctx) {
  auto in = selfAsResult(ctx);
  if (failed(in))
    return failure();
  if (isa<FloatType>(in->first.getElementType()))
    return ctx.fail("bitwise_not is not defined on floating-point tensors");
  if (in->first.getElementType().isInteger(1))
    return ctx.setResult(ctx.create<LogicalNotOp>(in->second));
  return ctx.setResult(ctx.create<BitwiseNotOp>(in->second));
}

/// sign: 1, -1 or 0 (NaN gives 0, as PyTorch's does); bool is the identity.
LogicalResult convertSign(NodeContext &ctx) {
  auto in = selfAsResult(ctx);
  if (failed(in))
    return failure();
  auto [type, x] = *in;
  if (type.getElementType().isInteger(1))
    return ctx.setResult(x);
  Value zero = ctx.splat(type, int64_t(0));
  Value pos = ctx.create<CompareOp>(ComparisonDirection::GT, x, zero);
  Value neg = ctx.create<CompareOp>(ComparisonDirection::LT, x, zero);
  Value one = ctx.splat(type, int64_t(1)), minusOne = ctx.splat(type, int64_t(-1));
  return ctx.setResult(
      ctx.create<WhereOp>(pos, one, ctx.create<WhereOp>(neg, minusOne, zero)));
}

/// isnan: x != x; isinf: |x| == inf; false for integers and bool.
template <bool isInf>
LogicalResult convertIsSpecial(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  if (failed(type) || failed(self))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  if (!isa<FloatType>(selfType.getElementType()))
    return ctx.setResult(ctx.splat(*type, false));
  if (!isInf)
    return ctx.setResult(ctx.create<CompareOp>(ComparisonDirection::NE, *self, *self));
  Value inf = ctx.splat(selfType, std::numeric_limits<double>::infinity());
  return ctx.setResult(
      ctx.create<CompareOp>(ComparisonDirection::EQ, ctx.create<AbsOp>(*self), inf));
}

/// elu: x > 0 ? scale * x : scale * alpha * (exp(input_scale * x) - 1).
LogicalResult convertElu(NodeContext &ctx) {
  FailureOr<double> alpha = ctx.getFloat("alpha", 1.0);
  FailureOr<double> scale = ctx.getFloat("scale", 1.0);
  FailureOr<double> inputScale = ctx.getFloat("input_scale", 1.0);
  if (failed(alpha) || failed(scale) || failed(inputScale))
    return failure();
  auto in = selfAsResult(ctx);
  if (failed(in))
    return failure();
  auto [type, x] = *in;
  Value scaledIn = *inputScale == 1.0 ? x : ctx.create<MulOp>(x, ctx.splat(type, *inputScale));
  Value negative = ctx.create<MulOp>(ctx.create<Expm1Op>(scaledIn),
                                     ctx.splat(type, *alpha * *scale));
  Value positive = *scale == 1.0 ? x : ctx.create<MulOp>(x, ctx.splat(type, *scale));
  Value isPositive =
      ctx.create<CompareOp>(ComparisonDirection::GT, x, ctx.splat(type, int64_t(0)));
  return ctx.setResult(ctx.create<WhereOp>(isPositive, positive, negative));
}

/// leaky_relu: x > 0 ? x : x * negative_slope.
LogicalResult convertLeakyRelu(NodeContext &ctx) {
  FailureOr<double> slope = ctx.getFloat("negative_slope", 0.01);
  if (failed(slope))
    return failure();
  auto in = selfAsResult(ctx);
  if (failed(in))
    return failure();
  auto [type, x] = *in;
  Value isPositive =
      ctx.create<CompareOp>(ComparisonDirection::GT, x, ctx.splat(type, int64_t(0)));
  return ctx.setResult(
      ctx.create<WhereOp>(isPositive, x, ctx.create<MulOp>(x, ctx.splat(type, *slope))));
}

} // namespace

void ::thunder::import::detail::registerMathConversions(ConversionTable &table) {
  table["aten.tan.default"] = convertUnary<TanOp>;
  table["aten.asin.default"] = convertUnary<AsinOp>;
  table["aten.acos.default"] = convertUnary<AcosOp>;
  table["aten.atan.default"] = convertUnary<AtanOp>;
  table["aten.sinh.default"] = convertUnary<SinhOp>;
  table["aten.cosh.default"] = convertUnary<CoshOp>;
  table["aten.asinh.default"] = convertUnary<AsinhOp>;
  table["aten.acosh.default"] = convertUnary<AcoshOp>;
  table["aten.atanh.default"] = convertUnary<AtanhOp>;
  table["aten.expm1.default"] = convertUnary<Expm1Op>;
  table["aten.log2.default"] = convertUnary<Log2Op>;
  table["aten.log10.default"] = convertUnary<Log10Op>;
  table["aten.trunc.default"] = convertRounding<TruncOp>;
  table["aten.fix.default"] = convertRounding<TruncOp>;
  table["aten.round.default"] = convertRounding<RoundOp>;
  table["aten.sign.default"] = convertSign;
  table["aten.isnan.default"] = convertIsSpecial<false>;
  table["aten.isinf.default"] = convertIsSpecial<true>;
  for (const char *op : {"aten.atan2.default", "aten.atan2.out"})
    table[op] = convertBinary<Atan2Op>;
  for (const char *op : {"aten.fmod.Tensor", "aten.fmod.Scalar"})
    table[op] = convertBinary<FmodOp>;
  for (const char *suffix : {".Tensor", ".Scalar"}) {
    table[std::string("aten.bitwise_and") + suffix] = convertBitwise<BitwiseAndOp, LogicalAndOp>;
    table[std::string("aten.bitwise_or") + suffix] = convertBitwise<BitwiseOrOp, LogicalOrOp>;
    table[std::string("aten.bitwise_xor") + suffix] = convertBitwise<BitwiseXorOp, LogicalXorOp>;
    // `a & b` on tensors, before decomposition.
    table[std::string("aten.__and__") + suffix] = convertBitwise<BitwiseAndOp, LogicalAndOp>;
    table[std::string("aten.__or__") + suffix] = convertBitwise<BitwiseOrOp, LogicalOrOp>;
    table[std::string("aten.__xor__") + suffix] = convertBitwise<BitwiseXorOp, LogicalXorOp>;
  }
  table["aten.bitwise_not.default"] = convertBitwiseNot;
  table["aten.elu.default"] = convertElu;
  table["aten.leaky_relu.default"] = convertLeakyRelu;
}
