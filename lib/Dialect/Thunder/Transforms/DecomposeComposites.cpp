//===- DecomposeComposites.cpp - Composites into primitives ---------------===//
//
// The thunder-decompose-composites pass and the patterns behind it: softmax,
// log_softmax, layer_norm, rms_norm, batch_norm and sdpa rewritten into
// reductions, elementwise ops and matmuls, following PyTorch's reference
// decompositions (f16/bf16 are computed in f32 and converted back, as
// torch._refs does).
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"

#include <cmath>
#include <limits>
#include <string>

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERDECOMPOSECOMPOSITES
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;

namespace {

/// Builds primitive ops at one location. Results have the composite's shapes,
/// static or dynamic: a dynamic dim's run-time size is unified with the
/// composite's input (ShapePlan), never computed here.
class Builder {
public:
  Builder(PatternRewriter &rewriter, Location loc)
      : b(rewriter), loc(loc) {}

  /// `value` as a tensor of `type`: a splat constant, or, where `type` has
  /// dynamic dims (an attribute holds static shapes only), a 0-d constant
  /// broadcast to it, whose run-time sizes are its user's (ShapePlan).
  Value splat(RankedTensorType type, double value) {
    Attribute element =
        isa<FloatType>(type.getElementType())
            ? Attribute(b.getFloatAttr(type.getElementType(), value))
            : Attribute(b.getIntegerAttr(type.getElementType(),
                                         static_cast<int64_t>(value)));
    if (type.hasStaticShape())
      return b.create<ConstantOp>(loc, SplatElementsAttr::get(type, element));
    auto scalarType = RankedTensorType::get({}, type.getElementType());
    Value scalar =
        b.create<ConstantOp>(loc, SplatElementsAttr::get(scalarType, element));
    return b.create<BroadcastOp>(loc, type, scalar, ArrayRef<int64_t>{});
  }

  /// Broadcasts `value` to `type`, operand dim i going to result dim dims[i].
  Value broadcast(Value value, RankedTensorType type, ArrayRef<int64_t> dims) {
    if (value.getType() == type)
      return value;
    return b.create<BroadcastOp>(loc, type, value, dims);
  }

  /// Broadcasts a same-rank value (keepdim reductions) to `type`.
  Value expandKept(Value value, RankedTensorType type) {
    SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    return broadcast(value, type, dims);
  }

  /// Broadcasts `value` onto the trailing dims of `type`.
  Value expandTrailing(Value value, RankedTensorType type) {
    int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
    int64_t offset = type.getRank() - rank;
    SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(offset, offset + rank));
    return broadcast(value, type, dims);
  }

  Value convert(Value value, Type elementType) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getElementType() == elementType)
      return value;
    return b.create<ConvertOp>(loc, type.clone(elementType), value);
  }

  template <typename OpTy> Value reduceKeep(Value value, ArrayRef<int64_t> dims) {
    return b.create<OpTy>(loc, value, dims, /*keepdim=*/true);
  }

  template <typename OpTy, typename... Args> Value create(Args &&...args) {
    return b.create<OpTy>(loc, std::forward<Args>(args)...);
  }

private:
  PatternRewriter &b;
  Location loc;
};

/// f16, bf16 and f8 are computed in f32, as PyTorch's reference
/// decompositions do; f32 and f64 in themselves.
Type computeElementType(Type element) {
  if (element.getIntOrFloatBitWidth() < 32)
    return Float32Type::get(element.getContext());
  return element;
}

/// Base for the composite patterns.
template <typename OpTy>
struct CompositePattern : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const final {
    if (std::string why = unsupported(op); !why.empty())
      return rewriter.notifyMatchFailure(op, why);
    Builder b(rewriter, op.getLoc());
    Value result = decompose(op, b);
    rewriter.replaceOp(op, result);
    return success();
  }

  /// Why `op` stays composite; empty when it decomposes.
  virtual std::string unsupported(OpTy) const { return {}; }
  virtual Value decompose(OpTy op, Builder &b) const = 0;
};

/// exp(x - max) / sum(exp(x - max)) or, for log_softmax,
/// (x - max) - log(sum(exp(x - max))).
template <typename OpTy, bool isLog>
struct DecomposeSoftmax : CompositePattern<OpTy> {
  using CompositePattern<OpTy>::CompositePattern;
  Value decompose(OpTy op, Builder &b) const override {
    auto type = op.getType();
    Type compute = computeElementType(type.getElementType());
    auto computeType = type.clone(compute);
    Value x = b.convert(op.getInput(), compute);
    int64_t dim = static_cast<int64_t>(op.getDim());
    Value max = b.expandKept(b.reduceKeep<MaxOp>(x, {dim}), computeType);
    Value shifted = b.create<SubOp>(x, max);
    Value exp = b.create<ExpOp>(shifted);
    Value sum = b.expandKept(b.reduceKeep<SumOp>(exp, {dim}), computeType);
    Value result = isLog ? b.create<SubOp>(shifted, b.create<LogOp>(sum))
                         : b.create<DivOp>(exp, sum);
    return b.convert(result, type.getElementType());
  }
};

/// Normalizes `x` (already in the compute type) over its trailing
/// `normalizedRank` dims: (x - mean) * rsqrt(var + eps), or x * rsqrt(mean(x^2)
/// + eps) for RMS.
Value normalize(Builder &b, Value x, int64_t normalizedRank, double epsilon,
                bool rms) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> dims = llvm::to_vector(
      llvm::seq<int64_t>(type.getRank() - normalizedRank, type.getRank()));
  Value centered = x;
  if (!rms)
    centered = b.create<SubOp>(x, b.expandKept(b.reduceKeep<MeanOp>(x, dims), type));
  Value square = b.create<MulOp>(centered, centered);
  Value moment = b.reduceKeep<MeanOp>(square, dims);
  auto statType = cast<RankedTensorType>(moment.getType());
  Value rstd = b.create<RsqrtOp>(
      b.create<AddOp>(moment, b.splat(statType, epsilon)));
  return b.create<MulOp>(centered, b.expandKept(rstd, type));
}

/// layer_norm and rms_norm: normalize, then scale by the weight and (layer
/// norm) shift by the bias along the trailing dims.
template <typename OpTy>
struct DecomposeNorm : CompositePattern<OpTy> {
  using CompositePattern<OpTy>::CompositePattern;
  static constexpr bool isRms = std::is_same_v<OpTy, RmsNormOp>;
  Value decompose(OpTy op, Builder &b) const override {
    auto type = op.getType();
    Type compute = computeElementType(type.getElementType());
    auto computeType = type.clone(compute);
    Value y = normalize(b, b.convert(op.getInput(), compute),
                        op.getNormalizedRank(), op.getEpsilon().convertToDouble(),
                        isRms);
    if (Value w = op.getWeight())
      y = b.create<MulOp>(y, b.expandTrailing(b.convert(w, compute), computeType));
    if constexpr (!isRms)
      if (Value bias = op.getBias())
        y = b.create<AddOp>(
            y, b.expandTrailing(b.convert(bias, compute), computeType));
    return b.convert(y, type.getElementType());
  }
};

/// (x - mean[c]) * (rsqrt(var[c] + eps) * weight[c]) + bias[c]: the per-channel
/// factors are computed on [C] vectors, then broadcast along dim 1.
struct DecomposeBatchNorm : CompositePattern<BatchNormOp> {
  using CompositePattern::CompositePattern;
  Value decompose(BatchNormOp op, Builder &b) const override {
    auto type = op.getType();
    Type compute = computeElementType(type.getElementType());
    auto computeType = type.clone(compute);
    auto channel = [&](Value v) {
      return b.broadcast(b.convert(v, compute), computeType, {1});
    };
    Value var = b.convert(op.getVariance(), compute);
    auto vecType = cast<RankedTensorType>(var.getType());
    Value scale = b.create<RsqrtOp>(
        b.create<AddOp>(var, b.splat(vecType, op.getEpsilon().convertToDouble())));
    if (Value w = op.getWeight())
      scale = b.create<MulOp>(scale, b.convert(w, compute));
    Value x = b.convert(op.getInput(), compute);
    // Sequenced statements, not nested calls: argument evaluation order is
    // unspecified in C++, and the emitted IR must not depend on the compiler.
    Value centered = b.create<SubOp>(x, channel(op.getMean()));
    Value y = b.create<MulOp>(centered, channel(scale));
    if (Value bias = op.getBias())
      y = b.create<AddOp>(y, channel(bias));
    return b.convert(y, type.getElementType());
  }
};

/// softmax(q @ k^T * scale (+ mask)) @ v, with the causal mask built from two
/// iotas (key position <= query position).
struct DecomposeAttention : CompositePattern<ScaledDotProductAttentionOp> {
  using CompositePattern::CompositePattern;
  std::string unsupported(ScaledDotProductAttentionOp op) const override {
    auto q = op.getQuery().getType();
    if (!op.getScale() && q.isDynamicDim(q.getRank() - 1))
      return "the default scale needs a static head dim";
    return {};
  }
  Value decompose(ScaledDotProductAttentionOp op, Builder &b) const override {
    auto q = op.getQuery().getType();
    int64_t rank = q.getRank();
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt(double(q.getDimSize(rank - 1)));
    Value scores = b.create<MatmulOp>(op.getQuery(), op.getKey(),
                                      /*transpose_lhs=*/false,
                                      /*transpose_rhs=*/true);
    auto scoresType = cast<RankedTensorType>(scores.getType());
    scores = b.create<MulOp>(scores, b.splat(scoresType, scale));
    auto boolType = scoresType.clone(IntegerType::get(q.getContext(), 1));
    Value keep;
    if (op.getCausal()) {
      auto indexType = scoresType.clone(IntegerType::get(q.getContext(), 64));
      Value row = b.create<IotaOp>(indexType, rank - 2);
      Value col = b.create<IotaOp>(indexType, rank - 1);
      keep = b.create<CompareOp>(ComparisonDirection::GE, row, col);
    } else if (Value mask = op.getMask()) {
      auto maskType = cast<RankedTensorType>(mask.getType());
      if (maskType.getElementType().isInteger(1))
        keep = b.expandKept(mask, boolType);
      else
        scores = b.create<AddOp>(scores, b.expandKept(mask, scoresType));
    }
    if (keep)
      scores = b.create<WhereOp>(
          keep, scores,
          b.splat(scoresType, -std::numeric_limits<double>::infinity()));
    Value probs = b.create<SoftmaxOp>(scores, rank - 1);
    return b.create<MatmulOp>(probs, op.getValue(), false, false);
  }
};

struct ThunderDecomposeComposites
    : mlir::thunder::impl::ThunderDecomposeCompositesBase<ThunderDecomposeComposites> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    static constexpr StringRef known[] = {"softmax",  "log_softmax", "layer_norm",
                                          "rms_norm", "batch_norm",  "sdpa"};
    for (const std::string &name : ops)
      if (!llvm::is_contained(known, name))
        return emitError(UnknownLoc::get(context))
               << "thunder-decompose-composites: unknown composite '" << name
               << "'; expected one of softmax, log_softmax, layer_norm, "
                  "rms_norm, batch_norm, sdpa";
    RewritePatternSet set(context);
    populateDecomposeCompositePatterns(set, ops);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    if (failed(applyPatternsAndFoldGreedily(getOperation(), patterns)))
      signalPassFailure();
  }

  FrozenRewritePatternSet patterns;
};

} // namespace

void mlir::thunder::populateDecomposeCompositePatterns(
    RewritePatternSet &patterns, ArrayRef<std::string> ops) {
  MLIRContext *context = patterns.getContext();
  auto wanted = [&](StringRef name) {
    return ops.empty() || llvm::is_contained(ops, name);
  };
  if (wanted("softmax"))
    patterns.add<DecomposeSoftmax<SoftmaxOp, false>>(context);
  if (wanted("log_softmax"))
    patterns.add<DecomposeSoftmax<LogSoftmaxOp, true>>(context);
  if (wanted("layer_norm"))
    patterns.add<DecomposeNorm<LayerNormOp>>(context);
  if (wanted("rms_norm"))
    patterns.add<DecomposeNorm<RmsNormOp>>(context);
  if (wanted("batch_norm"))
    patterns.add<DecomposeBatchNorm>(context);
  if (wanted("sdpa"))
    patterns.add<DecomposeAttention>(context);
}
