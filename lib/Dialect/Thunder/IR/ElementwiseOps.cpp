//===- ElementwiseOps.cpp - Elementwise ops of the `thunder` dialect ------===//
//
// Verifiers, constant folders and canonicalizations for unary, binary,
// comparison, select, clamp and convert ops.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "thunder/Dialect/Thunder/Reference/Scalar.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"

#include <cmath>
#include <type_traits>

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

/// The stored elements of a constant (one for a splat) as reference elements.
static SmallVector<reference::Element> elementsOf(DenseElementsAttr attr) {
  Type type = attr.getElementType();
  SmallVector<reference::Element> elements;
  if (attr.isSplat()) {
    if (isa<FloatType>(type))
      elements.emplace_back(type, attr.getSplatValue<APFloat>());
    else
      elements.emplace_back(type, attr.getSplatValue<APInt>());
    return elements;
  }
  if (isa<FloatType>(type))
    for (APFloat value : attr.getValues<APFloat>())
      elements.emplace_back(type, value);
  else
    for (APInt value : attr.getValues<APInt>())
      elements.emplace_back(type, value);
  return elements;
}

/// Folds an elementwise op over constants with its scalar semantics from the
/// reference interpreter (thunder/Dialect/Thunder/Reference/Scalar.h), the
/// one definition of each op's arithmetic: fn(elements...) per element, and
/// no fold when an element has no value (integer division by zero). Bools
/// are left to thunder-fold-weights, as they always were here.
template <typename Fn>
static OpFoldResult foldElementwise(ArrayRef<Attribute> operands,
                                    Type resultType, Fn fn) {
  if (!llvm::all_of(operands, isFoldableConstant))
    return {};
  auto shaped = dyn_cast<ShapedType>(resultType);
  if (!shaped || !shaped.hasStaticShape() ||
      cast<DenseElementsAttr>(operands[0]).getElementType().isInteger(1))
    return {};
  SmallVector<SmallVector<reference::Element>> values;
  bool splat = true;
  for (Attribute operand : operands) {
    auto dense = cast<DenseElementsAttr>(operand);
    splat &= dense.isSplat();
    values.push_back(elementsOf(dense));
  }
  int64_t count = splat ? 1 : shaped.getNumElements();
  SmallVector<APFloat> floats;
  SmallVector<APInt> ints;
  for (int64_t i = 0; i < count; ++i) {
    auto at = [&](size_t operand) -> const reference::Element & {
      const SmallVector<reference::Element> &v = values[operand];
      return v[v.size() == 1 ? 0 : i];
    };
    FailureOr<reference::Element> result = failure();
    if constexpr (std::is_invocable_v<Fn, const reference::Element &>)
      result = fn(at(0));
    else
      result = fn(at(0), at(1));
    if (failed(result))
      return {};
    if (result->isFloat())
      floats.push_back(result->getFloat());
    else
      ints.push_back(result->getInt());
  }
  if (!floats.empty())
    return DenseElementsAttr::get(shaped, floats);
  return DenseElementsAttr::get(shaped, ints);
}

//===----------------------------------------------------------------------===//
// Unary folders
//===----------------------------------------------------------------------===//

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  return foldElementwise(adaptor.getOperands(), getType(), reference::negate);
}

OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  return foldElementwise(adaptor.getOperands(), getType(), reference::abs);
}

//===----------------------------------------------------------------------===//
// Binary folders
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldElementwise(adaptor.getOperands(), getType(), reference::add);
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldElementwise(adaptor.getOperands(), getType(), reference::subtract);
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldElementwise(adaptor.getOperands(), getType(), reference::multiply);
}

OpFoldResult MaximumOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldElementwise(adaptor.getOperands(), getType(), reference::maximum);
}

OpFoldResult MinimumOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldElementwise(adaptor.getOperands(), getType(), reference::minimum);
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
  return foldElementwise(
      adaptor.getOperands(), getType(),
      [mode](const reference::Element &a, const reference::Element &b) {
        return reference::divide(a, b, mode);
      });
}

//===----------------------------------------------------------------------===//
// Compare, where, clamp
//===----------------------------------------------------------------------===//

OpFoldResult CompareOp::fold(FoldAdaptor adaptor) {
  auto lhs = dyn_cast_or_null<DenseElementsAttr>(adaptor.getLhs());
  auto rhs = dyn_cast_or_null<DenseElementsAttr>(adaptor.getRhs());
  // Only splats: the result of comparing two splats is a splat.
  if (!lhs || !rhs || !lhs.isSplat() || !rhs.isSplat())
    return {};
  auto resultType = cast<ShapedType>(getType());
  if (!resultType.hasStaticShape())
    return {};
  reference::Element value = reference::compare(
      getDirection(), elementsOf(lhs).front(), elementsOf(rhs).front());
  return DenseElementsAttr::get(resultType, !value.getInt().isZero());
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
  // Float to float (rounded to nearest even as PyTorch's .to(), to f16 and
  // bf16 through f32), and integer to integer other than i1 (wrapping; an i1
  // source is 0 or 1): the reference's convert.
  bool floats = isa<FloatType>(from) && isa<FloatType>(to);
  bool ints = isa<IntegerType>(from) && isa<IntegerType>(to) && !to.isInteger(1);
  if (!floats && !ints)
    return {};
  FailureOr<reference::Element> value =
      reference::convert(elementsOf(splat).front(), to);
  if (failed(value))
    return {};
  if (value->isFloat())
    return DenseElementsAttr::get(resultType, value->getFloat());
  return DenseElementsAttr::get(resultType, value->getInt());
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

//===----------------------------------------------------------------------===//
// Pow
//===----------------------------------------------------------------------===//

/// The value of a splat float constant, directly or broadcast from a scalar
/// (the importer's splat of a dynamic shape).
static std::optional<double> splatFloat(Value value) {
  if (auto broadcast = value.getDefiningOp<BroadcastOp>())
    value = broadcast.getOperand();
  DenseElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || !attr.isSplat() ||
      !isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

namespace {
/// pow(x, c) for c in {1, 2, 3, 0.5, -0.5, -1, -2} -> x, x * x, x * x * x,
/// sqrt, rsqrt, reciprocal, reciprocal(x * x): a few multiplications instead
/// of an exp and a log per element (GPT-2's tanh GELU has x^3). It is what
/// ATen computes for torch.pow(tensor, scalar) in fp32, fp64 and bf16, so
/// those match eager exactly. Where eager calls std::pow instead (fp16, or
/// an exponent given as a tensor) results may differ by an ulp, and at the
/// signed zeros and -inf: sqrt(-0) = -0 where pow gives +0, sqrt(-inf) = NaN
/// where pow gives +inf.
struct PowOfSmallConstant : OpRewritePattern<PowOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PowOp op, PatternRewriter &rewriter) const override {
    if (!isa<FloatType>(getElementTypeOrSelf(op.getType())))
      return rewriter.notifyMatchFailure(op, "not a floating-point power");
    std::optional<double> exponent = splatFloat(op.getRhs());
    if (!exponent)
      return rewriter.notifyMatchFailure(op, "exponent is not a splat constant");
    Location loc = op.getLoc();
    Value x = op.getLhs();
    auto square = [&] { return rewriter.create<MulOp>(loc, x, x).getResult(); };
    Value result;
    if (*exponent == 1.0)
      result = x;
    else if (*exponent == 2.0)
      result = square();
    else if (*exponent == 3.0)
      result = rewriter.create<MulOp>(loc, square(), x);
    else if (*exponent == 0.5)
      result = rewriter.create<SqrtOp>(loc, x);
    else if (*exponent == -0.5)
      result = rewriter.create<RsqrtOp>(loc, x);
    else if (*exponent == -1.0)
      result = rewriter.create<ReciprocalOp>(loc, x);
    else if (*exponent == -2.0)
      result = rewriter.create<ReciprocalOp>(loc, square());
    else
      return rewriter.notifyMatchFailure(op, "no cheaper form of this exponent");
    rewriter.replaceOp(op, result);
    return success();
  }
};
} // namespace

void PowOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<PowOfSmallConstant>(context);
}
