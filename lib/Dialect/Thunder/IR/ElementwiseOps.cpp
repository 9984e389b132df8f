//===- ElementwiseOps.cpp - Elementwise ops of the `thunder` dialect ------===//
//
// Verifiers, constant folders and canonicalizations for unary, binary,
// comparison, select, clamp and convert ops.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"

#include <cmath>

using namespace mlir;
using namespace mlir::thunder;

#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/ElementwiseOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Constant folding helpers
//===----------------------------------------------------------------------===//

/// Folding materializes every element of a non-splat constant, so it is
/// limited to small tensors: a folder must never copy a weight into IR text.
static constexpr int64_t kMaxFoldedElements = 4096;

static bool isFoldableConstant(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  return dense && (dense.isSplat() || dense.getNumElements() <= kMaxFoldedElements);
}

/// Folds a binary op over constants of float or integer element type.
template <typename FloatFn, typename IntFn>
static OpFoldResult foldBinary(ArrayRef<Attribute> operands, FloatFn floatFn,
                               IntFn intFn) {
  if (!llvm::all_of(operands, isFoldableConstant))
    return {};
  Type element = cast<DenseElementsAttr>(operands[0]).getElementType();
  if (isa<FloatType>(element))
    return constFoldBinaryOpConditional<FloatAttr, APFloat, void>(operands,
                                                                  floatFn);
  if (element.isInteger(1))
    return {};
  return constFoldBinaryOpConditional<IntegerAttr, APInt, void>(operands, intFn);
}

template <typename FloatFn, typename IntFn>
static OpFoldResult foldUnary(ArrayRef<Attribute> operands, FloatFn floatFn,
                              IntFn intFn) {
  if (!isFoldableConstant(operands[0]))
    return {};
  Type element = cast<DenseElementsAttr>(operands[0]).getElementType();
  if (isa<FloatType>(element))
    return constFoldUnaryOp<FloatAttr, APFloat, void>(operands, floatFn);
  if (element.isInteger(1))
    return {};
  return constFoldUnaryOp<IntegerAttr, APInt, void>(operands, intFn);
}

using OptFloat = std::optional<APFloat>;
using OptInt = std::optional<APInt>;

//===----------------------------------------------------------------------===//
// Unary folders
//===----------------------------------------------------------------------===//

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      adaptor.getOperands(), [](APFloat a) { return -a; },
      [](APInt a) { return -a; });
}

OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      adaptor.getOperands(), [](APFloat a) { return llvm::abs(a); },
      [](APInt a) { return a.abs(); });
}

//===----------------------------------------------------------------------===//
// Binary folders
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getOperands(),
      [](APFloat a, const APFloat &b) -> OptFloat {
        a.add(b, APFloat::rmNearestTiesToEven);
        return a;
      },
      [](const APInt &a, const APInt &b) -> OptInt { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getOperands(),
      [](APFloat a, const APFloat &b) -> OptFloat {
        a.subtract(b, APFloat::rmNearestTiesToEven);
        return a;
      },
      [](const APInt &a, const APInt &b) -> OptInt { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getOperands(),
      [](APFloat a, const APFloat &b) -> OptFloat {
        a.multiply(b, APFloat::rmNearestTiesToEven);
        return a;
      },
      [](const APInt &a, const APInt &b) -> OptInt { return a * b; });
}

OpFoldResult MaximumOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldBinary(
      adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) -> OptFloat {
        return llvm::maximum(a, b);
      },
      [](const APInt &a, const APInt &b) -> OptInt {
        return a.sge(b) ? a : b;
      });
}

OpFoldResult MinimumOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldBinary(
      adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) -> OptFloat {
        return llvm::minimum(a, b);
      },
      [](const APInt &a, const APInt &b) -> OptInt {
        return a.sle(b) ? a : b;
      });
}

LogicalResult DivOp::verify() {
  // div_c1: true division is defined on floating point only.
  if (getRoundingMode() == RoundingMode::None &&
      !isa<FloatType>(getType().getElementType()))
    return emitOpError("true division (rounding_mode = none) expects a "
                       "floating-point element type, got ")
           << getType().getElementType()
           << "; convert the operands or give rounding_mode = trunc or floor";
  return success();
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  RoundingMode mode = getRoundingMode();
  return foldBinary(
      adaptor.getOperands(),
      [mode](APFloat a, const APFloat &b) -> OptFloat {
        a.divide(b, APFloat::rmNearestTiesToEven);
        if (mode == RoundingMode::Trunc)
          a.roundToIntegral(APFloat::rmTowardZero);
        else if (mode == RoundingMode::Floor)
          a.roundToIntegral(APFloat::rmTowardNegative);
        return a;
      },
      [mode](const APInt &a, const APInt &b) -> OptInt {
        // Division by zero is a run-time error in PyTorch; leave it alone.
        if (b.isZero())
          return std::nullopt;
        if (mode == RoundingMode::Floor) {
          APInt q = a.sdiv(b), r = a.srem(b);
          if (!r.isZero() && (r.isNegative() != b.isNegative()))
            q -= 1;
          return q;
        }
        return a.sdiv(b);
      });
}

//===----------------------------------------------------------------------===//
// Compare, where, clamp
//===----------------------------------------------------------------------===//

static bool compareFloats(ComparisonDirection dir, const APFloat &a,
                          const APFloat &b) {
  APFloat::cmpResult c = a.compare(b);
  switch (dir) {
  case ComparisonDirection::EQ: return c == APFloat::cmpEqual;
  case ComparisonDirection::NE: return c != APFloat::cmpEqual;
  case ComparisonDirection::LT: return c == APFloat::cmpLessThan;
  case ComparisonDirection::LE:
    return c == APFloat::cmpLessThan || c == APFloat::cmpEqual;
  case ComparisonDirection::GT: return c == APFloat::cmpGreaterThan;
  case ComparisonDirection::GE:
    return c == APFloat::cmpGreaterThan || c == APFloat::cmpEqual;
  }
  return false;
}

/// Integers are signed; i1 is PyTorch's bool, where false < true (as a signed
/// 1-bit value, true would be -1).
static bool compareInts(ComparisonDirection dir, const APInt &a,
                        const APInt &b) {
  bool isBool = a.getBitWidth() == 1;
  switch (dir) {
  case ComparisonDirection::EQ: return a == b;
  case ComparisonDirection::NE: return a != b;
  case ComparisonDirection::LT: return isBool ? a.ult(b) : a.slt(b);
  case ComparisonDirection::LE: return isBool ? a.ule(b) : a.sle(b);
  case ComparisonDirection::GT: return isBool ? a.ugt(b) : a.sgt(b);
  case ComparisonDirection::GE: return isBool ? a.uge(b) : a.sge(b);
  }
  return false;
}

OpFoldResult CompareOp::fold(FoldAdaptor adaptor) {
  auto lhs = dyn_cast_or_null<DenseElementsAttr>(adaptor.getLhs());
  auto rhs = dyn_cast_or_null<DenseElementsAttr>(adaptor.getRhs());
  // Only splats: the result of comparing two splats is a splat.
  if (!lhs || !rhs || !lhs.isSplat() || !rhs.isSplat())
    return {};
  auto resultType = cast<ShapedType>(getType());
  if (!resultType.hasStaticShape())
    return {};
  bool value;
  if (isa<FloatType>(lhs.getElementType()))
    value = compareFloats(getDirection(), lhs.getSplatValue<APFloat>(),
                          rhs.getSplatValue<APFloat>());
  else
    value = compareInts(getDirection(), lhs.getSplatValue<APInt>(),
                        rhs.getSplatValue<APInt>());
  return DenseElementsAttr::get(resultType, value);
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  if (getOnTrue() == getOnFalse())
    return getOnTrue();
  auto cond = dyn_cast_or_null<DenseElementsAttr>(adaptor.getCondition());
  if (cond && cond.isSplat())
    return cond.getSplatValue<bool>() ? getOnTrue() : getOnFalse();
  return {};
}

LogicalResult ClampOp::verify() {
  auto toDouble = [](std::optional<APFloat> v) -> std::optional<double> {
    if (!v)
      return std::nullopt;
    return v->convertToDouble();
  };
  std::optional<double> lo = toDouble(getMin()), hi = toDouble(getMax());
  // clamp_c1
  if (!lo && !hi)
    return emitOpError("expects at least one of min and max");
  // clamp_c2
  if (lo && hi && *lo > *hi)
    return emitOpError("expects min <= max, got min = ")
           << *lo << " and max = " << *hi;
  // clamp_c3
  if (isa<IntegerType>(getType().getElementType())) {
    for (std::optional<double> bound : {lo, hi})
      if (bound && std::trunc(*bound) != *bound)
        return emitOpError("expects integral bounds for an integer tensor, got ")
               << *bound;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Convert
//===----------------------------------------------------------------------===//

OpFoldResult ConvertOp::fold(FoldAdaptor adaptor) {
  // convert to the same type is the identity.
  if (getOperand().getType() == getType())
    return getOperand();
  auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getOperand());
  auto resultType = cast<ShapedType>(getType());
  // A constant has a static shape (constant_c2).
  if (!splat || !resultType.hasStaticShape())
    return {};
  Type from = splat.getElementType(), to = resultType.getElementType();
  // Float to float splats: round to nearest even, as PyTorch's .to() does.
  if (auto toFloat = dyn_cast<FloatType>(to); toFloat && isa<FloatType>(from)) {
    APFloat value = splat.getSplatValue<APFloat>();
    bool losesInfo;
    value.convert(toFloat.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
    return DenseElementsAttr::get(resultType, value);
  }
  // Integer to wider/narrower integer (not bool: bool is `!= 0`).
  if (isa<IntegerType>(from) && isa<IntegerType>(to) && !to.isInteger(1)) {
    APInt value = splat.getSplatValue<APInt>();
    value = from.isInteger(1) ? value.zextOrTrunc(to.getIntOrFloatBitWidth())
                              : value.sextOrTrunc(to.getIntOrFloatBitWidth());
    return DenseElementsAttr::get(resultType, value);
  }
  return {};
}

/// Whether converting from `from` to `to` is exact for every value, so that a
/// conversion back to `from` restores the original.
static bool isExactConversion(Type from, Type to) {
  auto fromFloat = dyn_cast<FloatType>(from), toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat)
    return APFloat::isRepresentableAsNormalIn(fromFloat.getFloatSemantics(),
                                              toFloat.getFloatSemantics());
  auto fromInt = dyn_cast<IntegerType>(from), toInt = dyn_cast<IntegerType>(to);
  if (fromInt && toInt)
    return !fromInt.isInteger(1) && !toInt.isInteger(1) &&
           toInt.getWidth() >= fromInt.getWidth();
  return false;
}

namespace {
/// convert(convert(x : A -> B) : B -> A) -> x when A -> B loses nothing
/// (f16 -> f32 -> f16, i32 -> i64 -> i32).
struct FoldConvertRoundTrip : OpRewritePattern<ConvertOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvertOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getOperand().getDefiningOp<ConvertOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "operand is not a convert");
    Value source = inner.getOperand();
    if (source.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "not a round trip");
    if (!isExactConversion(getElementTypeOrSelf(source.getType()),
                           getElementTypeOrSelf(inner.getType())))
      return rewriter.notifyMatchFailure(op, "inner conversion loses values");
    rewriter.replaceOp(op, source);
    return success();
  }
};
} // namespace

void ConvertOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<FoldConvertRoundTrip>(context);
}
