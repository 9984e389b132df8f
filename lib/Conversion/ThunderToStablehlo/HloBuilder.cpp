//===- HloBuilder.cpp - StableHLO operations in generic form --------------===//
//
// The one place that spells StableHLO's operation names and attribute
// syntax; the op families build through it.
//
//===----------------------------------------------------------------------===//
#include "PopulatePatterns.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::thunder::stablehlo;

bool mlir::thunder::stablehlo::isNarrowFloat(Type element) {
  auto f = dyn_cast<FloatType>(element);
  return f && f.getWidth() < 32;
}

std::string mlir::thunder::stablehlo::dimList(ArrayRef<int64_t> values) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(values, os);
  os << "]";
  return text;
}

Type mlir::thunder::stablehlo::accumulatorType(Type element) {
  return isNarrowFloat(element) ? Float32Type::get(element.getContext()) : element;
}

Operation *HloBuilder::create(StringRef name, ValueRange operands,
                           TypeRange results, ArrayRef<NamedAttribute> attrs,
                           unsigned regions) {
  OperationState state(loc, ("stablehlo." + name).str());
  state.addOperands(operands);
  state.addTypes(results);
  state.addAttributes(attrs);
  for (unsigned i = 0; i < regions; ++i)
    state.addRegion();
  return b.create(state);
}

Value HloBuilder::op(StringRef name, ValueRange operands, Type result,
                  ArrayRef<NamedAttribute> attrs) {
  return create(name, operands, result, attrs)->getResult(0);
}

Attribute HloBuilder::opaque(StringRef data) {
  return OpaqueAttr::get(b.getStringAttr("stablehlo"), data,
                         NoneType::get(context()));
}

Attribute HloBuilder::padding(ArrayRef<int64_t> low, ArrayRef<int64_t> high) {
  SmallVector<int64_t> pairs;
  for (auto [lo, hi] : llvm::zip_equal(low, high)) {
    pairs.push_back(lo);
    pairs.push_back(hi);
  }
  auto type = RankedTensorType::get({static_cast<int64_t>(low.size()), 2},
                                    b.getI64Type());
  return DenseIntElementsAttr::get(type, ArrayRef<int64_t>(pairs));
}

Value HloBuilder::constant(ElementsAttr value) {
  return op("constant", {}, value.getType(), {attr("value", value)});
}

/// `value` as an attribute of `element`: floats round to nearest, integers
/// truncate and wrap, i1 is `value != 0`.
static TypedAttr elementAttr(OpBuilder &b, Type element, double value) {
  if (auto f = dyn_cast<FloatType>(element)) {
    APFloat v(value);
    bool lost = false;
    v.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return FloatAttr::get(element, v);
  }
  unsigned width = element.getIntOrFloatBitWidth();
  if (width == 1)
    return IntegerAttr::get(element, APInt(1, value != 0.0));
  if (std::isinf(value))
    return IntegerAttr::get(element, value > 0 ? APInt::getSignedMaxValue(width)
                                               : APInt::getSignedMinValue(width));
  return IntegerAttr::get(element,
                          APInt(width, static_cast<int64_t>(value), true));
}

Value HloBuilder::splat(RankedTensorType type, double value) {
  // A rank-0 constant broadcast to the shape, as jax writes it: XLA turns a
  // full-shape splat constant into a literal of that size.
  auto scalarType = RankedTensorType::get({}, type.getElementType());
  Value scalar = constant(SplatElementsAttr::get(
      scalarType, elementAttr(b, type.getElementType(), value)));
  return broadcastInDim(scalar, type, {});
}

Value HloBuilder::lowest(Type element) {
  return scalar(element, -std::numeric_limits<double>::infinity());
}

Value HloBuilder::highest(Type element) {
  return scalar(element, std::numeric_limits<double>::infinity());
}

/// StableHLO's comparison type for an element type.
static StringRef comparisonType(Type element) {
  if (isa<FloatType>(element))
    return "FLOAT";
  return element.isInteger(1) ? "UNSIGNED" : "SIGNED";
}

Value HloBuilder::compare(StringRef direction, Value lhs, Value rhs) {
  auto type = cast<RankedTensorType>(lhs.getType());
  return op("compare", {lhs, rhs}, type.clone(b.getI1Type()),
            {attr("comparison_direction",
                  opaque(("comparison_direction " + direction).str())),
             attr("compare_type",
                  opaque(("comparison_type " + comparisonType(type.getElementType())).str()))});
}

Value HloBuilder::select(Value condition, Value onTrue, Value onFalse) {
  return op("select", {condition, onTrue, onFalse}, onTrue.getType());
}

Value HloBuilder::convert(Value x, Type element) {
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getElementType() == element)
    return x;
  // StableHLO converts to i1 as `x != 0` already; the comparison says so in
  // the IR and keeps NaN -> true as PyTorch has it.
  if (element.isInteger(1))
    return compare("NE", x, splatLike(x, 0));
  return op("convert", x, type.clone(element));
}

Value HloBuilder::reshape(Value x, RankedTensorType type) {
  if (x.getType() == type)
    return x;
  return op("reshape", x, type);
}

Value HloBuilder::broadcastInDim(Value x, RankedTensorType type,
                              ArrayRef<int64_t> dims) {
  if (x.getType() == type)
    return x;
  return op("broadcast_in_dim", x, type,
            {attr("broadcast_dimensions", i64Array(dims))});
}

Value HloBuilder::iota(RankedTensorType type, int64_t dim) {
  return op("iota", {}, type, {attr("iota_dimension", i64(dim))});
}

/// Fills `region` with a block of two rank-0 `element` arguments that
/// returns `stablehlo.<body>` of them.
static void buildBinaryBody(HloBuilder &h, Region &region, Type element,
                            StringRef body) {
  OpBuilder &b = h.builder();
  OpBuilder::InsertionGuard guard(b);
  auto scalar = RankedTensorType::get({}, element);
  Block *block = b.createBlock(&region, {}, {scalar, scalar},
                               {h.location(), h.location()});
  Value result = h.binary(body, block->getArgument(0), block->getArgument(1));
  h.create("return", result, {});
}

Value HloBuilder::reduce(Value input, Value init, ArrayRef<int64_t> dims,
                      StringRef body) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    if (!llvm::is_contained(dims, static_cast<int64_t>(i)))
      shape.push_back(size);
  Operation *reduce =
      create("reduce", {input, init}, tensorOf(shape, type.getElementType()),
             {attr("dimensions", i64Array(dims))}, /*regions=*/1);
  buildBinaryBody(*this, reduce->getRegion(0), type.getElementType(), body);
  return reduce->getResult(0);
}

Value HloBuilder::reduceWindow(Value input, Value init, RankedTensorType result,
                            ArrayRef<int64_t> window, ArrayRef<int64_t> strides,
                            ArrayRef<int64_t> dilations,
                            ArrayRef<int64_t> padLow, ArrayRef<int64_t> padHigh,
                            StringRef body) {
  Operation *op = create(
      "reduce_window", {input, init}, result,
      {attr("window_dimensions", i64Array(window)),
       attr("window_strides", i64Array(strides)),
       attr("window_dilations", i64Array(dilations)),
       attr("padding", padding(padLow, padHigh))},
      /*regions=*/1);
  buildBinaryBody(*this, op->getRegion(0), result.getElementType(), body);
  return op->getResult(0);
}
