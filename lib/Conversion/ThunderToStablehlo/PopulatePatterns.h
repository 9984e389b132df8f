//===- PopulatePatterns.h - ThunderToStablehlo op families ------*- C++ -*-===//
//
// One populate function per op family (one file each), and the builder of
// StableHLO operations in generic form they share.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_LIB_CONVERSION_THUNDERTOSTABLEHLO_POPULATEPATTERNS_H
#define THUNDER_LIB_CONVERSION_THUNDERTOSTABLEHLO_POPULATEPATTERNS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <functional>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace mlir::thunder::stablehlo {

/// Elementwise arithmetic, comparisons, select, clamp, convert.
void populateElementwisePatterns(RewritePatternSet &patterns);
/// matmul, convolution, max_pool, avg_pool.
void populateLinalgPatterns(RewritePatternSet &patterns);
/// sum, mean, max, min, prod, argmax, argmin, cumsum.
void populateReductionPatterns(RewritePatternSet &patterns);
/// Reshapes, broadcasts, transposes, slices, concat, pad, gathers, iota.
void populateDataMovementPatterns(RewritePatternSet &patterns);
/// Small and splat constants (weights are arguments by then).
void populateConstantPatterns(RewritePatternSet &patterns);

/// True when a constant's value is a weight: a resource blob, or a
/// non-splat literal of more than 64 elements.
bool isWeight(ElementsAttr value);
/// Turns every weight constant of `main` into a leading argument (one per
/// distinct value, in order of first appearance) and records the values and
/// names in `thunder.weights` and `thunder.weight_names`.
void extractWeights(func::FuncOp main);

/// Builds StableHLO operations as unregistered `stablehlo.*` operations at
/// one location. Every helper takes and returns values of static ranked
/// tensor type.
class HloBuilder {
public:
  HloBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &builder() { return b; }
  Location location() const { return loc; }
  MLIRContext *context() { return b.getContext(); }

  /// Creates `stablehlo.<name>` with `regions` empty regions.
  Operation *create(StringRef name, ValueRange operands, TypeRange results,
                    ArrayRef<NamedAttribute> attrs = {}, unsigned regions = 0);
  /// The single result of `create`.
  Value op(StringRef name, ValueRange operands, Type result,
           ArrayRef<NamedAttribute> attrs = {});
  /// A named attribute.
  NamedAttribute attr(StringRef name, Attribute value) {
    return b.getNamedAttr(name, value);
  }
  /// `#stablehlo<data>` or `#stablehlo.mnemonic<...>` (an OpaqueAttr).
  Attribute opaque(StringRef data);
  /// `array<i64: ...>`.
  Attribute i64Array(ArrayRef<int64_t> values) {
    return b.getDenseI64ArrayAttr(values);
  }
  /// An i64 integer attribute.
  Attribute i64(int64_t value) { return b.getI64IntegerAttr(value); }
  /// `dense<[[lo, hi], ...]> : tensor<Nx2xi64>` from pairs.
  Attribute padding(ArrayRef<int64_t> low, ArrayRef<int64_t> high);

  /// `stablehlo.constant` of an elements attribute.
  Value constant(ElementsAttr value);
  /// `value` (integers truncate, i1 is `value != 0`) in the shape of `type`:
  /// a rank-0 `stablehlo.constant`, broadcast unless `type` is rank 0.
  Value splat(RankedTensorType type, double value);
  /// A rank-0 constant of `element` holding `value`.
  Value scalar(Type element, double value) {
    return splat(RankedTensorType::get({}, element), value);
  }
  /// The lowest value of `element` (-inf for floats, the minimum integer).
  Value lowest(Type element);
  /// The highest value of `element` (+inf, the maximum integer).
  Value highest(Type element);
  /// A splat like `like` (same shape and element type) holding `value`.
  Value splatLike(Value like, double value) {
    return splat(cast<RankedTensorType>(like.getType()), value);
  }

  Value unary(StringRef name, Value x) { return op(name, x, x.getType()); }
  Value binary(StringRef name, Value lhs, Value rhs) {
    return op(name, {lhs, rhs}, lhs.getType());
  }
  Value add(Value a, Value c) { return binary("add", a, c); }
  Value sub(Value a, Value c) { return binary("subtract", a, c); }
  Value mul(Value a, Value c) { return binary("multiply", a, c); }
  Value div(Value a, Value c) { return binary("divide", a, c); }
  /// `stablehlo.compare` with `direction` (EQ, NE, LT, LE, GT, GE) and the
  /// comparison type of the element type (FLOAT, SIGNED, UNSIGNED for i1).
  Value compare(StringRef direction, Value lhs, Value rhs);
  /// `stablehlo.select`.
  Value select(Value condition, Value onTrue, Value onFalse);
  /// `stablehlo.convert` to `element` (no op when it already is).
  Value convert(Value x, Type element);
  /// `stablehlo.reshape` (no op when the type already is `type`).
  Value reshape(Value x, RankedTensorType type);
  /// `stablehlo.broadcast_in_dim`.
  Value broadcastInDim(Value x, RankedTensorType type, ArrayRef<int64_t> dims);
  /// `stablehlo.iota` along `dim`.
  Value iota(RankedTensorType type, int64_t dim);

  /// `stablehlo.reduce` of `input` over `dims` with `init` (rank 0) and a
  /// body applying the binary `stablehlo.<body>`.
  Value reduce(Value input, Value init, ArrayRef<int64_t> dims, StringRef body);
  /// `stablehlo.reduce_window` of `input` with a binary `stablehlo.<body>`.
  Value reduceWindow(Value input, Value init, RankedTensorType result,
                     ArrayRef<int64_t> window, ArrayRef<int64_t> strides,
                     ArrayRef<int64_t> dilations, ArrayRef<int64_t> padLow,
                     ArrayRef<int64_t> padHigh, StringRef body);

private:
  OpBuilder &b;
  Location loc;
};

/// `[a, b, c]`: a dimension list in a dimension-numbers attribute.
std::string dimList(ArrayRef<int64_t> values);

/// The element type of a ranked tensor value.
inline Type elementOf(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}
/// The static shape of a ranked tensor value.
inline ArrayRef<int64_t> shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}
/// `shape` with `element`.
inline RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type element) {
  return RankedTensorType::get(shape, element);
}
/// True for f16 and bf16 (and the f8 types): the types PyTorch accumulates
/// in f32.
bool isNarrowFloat(Type element);
/// The type reductions of `element` accumulate in (f32 for narrow floats).
Type accumulatorType(Type element);

/// A conversion pattern that replaces `OpTy` by the value `lower` builds.
/// `lower` may refuse an op the pass's pre-check let through: it reports at
/// the op and returns failure.
template <typename OpTy>
class LowerPattern : public OpConversionPattern<OpTy> {
public:
  using Adaptor = typename OpTy::Adaptor;
  using LowerFn = std::function<FailureOr<Value>(OpTy, Adaptor, HloBuilder &)>;

  LowerPattern(MLIRContext *context, LowerFn lower)
      : OpConversionPattern<OpTy>(context), lower(std::move(lower)) {}

  LogicalResult
  matchAndRewrite(OpTy op, Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    HloBuilder h(rewriter, op->getLoc());
    FailureOr<Value> result = lower(op, adaptor, h);
    if (failed(result))
      return failure();
    rewriter.replaceOp(op, *result);
    return success();
  }

private:
  LowerFn lower;
};

/// Adds a LowerPattern for `OpTy`.
template <typename OpTy>
void addLowering(RewritePatternSet &patterns,
                 typename LowerPattern<OpTy>::LowerFn lower) {
  patterns.add<LowerPattern<OpTy>>(patterns.getContext(), std::move(lower));
}

} // namespace mlir::thunder::stablehlo

#endif // THUNDER_LIB_CONVERSION_THUNDERTOSTABLEHLO_POPULATEPATTERNS_H
