//===- ConvertComposite.cpp - ATen softmax, normalizations, attention -----===//
//
// These stay composites (docs/dialect.md) so backends with fused kernels can
// use them. Their statistics outputs (mean, rstd of native_layer_norm and
// batch norm) are training-only; an inference graph that reads them is
// reported.
//
//===----------------------------------------------------------------------===//
#include "Conversion.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace ::thunder;
using namespace ::thunder::import;
using namespace ::thunder::import::detail;

namespace {

/// Fails when any result after the first is read.
LogicalResult onlyFirstResultUsed(NodeContext &ctx) {
  for (unsigned i = 1, e = ctx.numResults(); i < e; ++i)
    if (ctx.resultUsed(i))
      return ctx.fail("result #" + llvm::Twine(i) + " ('" + ctx.resultName(i) +
                      "', a saved statistic) is read; Thunder computes "
                      "inference outputs only");
  return success();
}

template <typename OpTy> LogicalResult convertSoftmax(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<int64_t> dim = ctx.getInt("dim");
  if (failed(type) || failed(self) || failed(dim))
    return failure();
  FailureOr<int64_t> d = normalizeDim(ctx, *dim, type->getRank());
  if (failed(d))
    return failure();
  // half_to_float is in the recorded result type: compute in it.
  Value x = ctx.convert(*self, type->getElementType());
  if (type->getRank() == 0) // softmax of a scalar is 1, log_softmax 0
    return ctx.setResult(ctx.splat(*type, std::is_same_v<OpTy, SoftmaxOp> ? 1.0 : 0.0));
  return ctx.setResult(ctx.create<OpTy>(x, *d));
}

LogicalResult convertLayerNorm(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> input = ctx.tensor("input");
  FailureOr<SmallVector<int64_t>> shape = ctx.getInts("normalized_shape");
  FailureOr<Value> weight = ctx.optionalTensor("weight");
  FailureOr<Value> bias = ctx.optionalTensor("bias");
  FailureOr<double> eps = ctx.getFloat("eps", 1e-5);
  if (failed(type) || failed(input) || failed(shape) || failed(weight) ||
      failed(bias) || failed(eps) || failed(onlyFirstResultUsed(ctx)))
    return failure();
  Type element = type->getElementType();
  Value w = *weight ? ctx.convert(*weight, element) : Value();
  Value b = *bias ? ctx.convert(*bias, element) : Value();
  return ctx.setResult(ctx.create<LayerNormOp>(
      *type, ctx.convert(*input, element), w, b,
      static_cast<uint64_t>(shape->size()), llvm::APFloat(*eps)));
}

LogicalResult convertRmsNorm(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> input = ctx.tensor("input");
  FailureOr<SmallVector<int64_t>> shape = ctx.getInts("normalized_shape");
  FailureOr<Value> weight = ctx.optionalTensor("weight");
  if (failed(type) || failed(input) || failed(shape) || failed(weight))
    return failure();
  Type element = type->getElementType();
  // PyTorch's default eps is the machine epsilon of the input's dtype.
  double eps = element.isF64() ? 2.220446049250313e-16
               : element.isF32() ? 1.1920928955078125e-07
               : element.isF16() ? 0.0009765625
                                 : 0.0078125;
  if (ctx.has("eps")) {
    FailureOr<double> given = ctx.getFloat("eps");
    if (failed(given))
      return failure();
    eps = *given;
  }
  Value w = *weight ? ctx.convert(*weight, element) : Value();
  return ctx.setResult(ctx.create<RmsNormOp>(
      *type, ctx.convert(*input, element), w,
      static_cast<uint64_t>(shape->size()), llvm::APFloat(eps)));
}

/// _native_batch_norm_legit_no_training(input, weight, bias, running_mean,
/// running_var, momentum, eps), and batch_norm (before decomposition) with
/// training false.
LogicalResult convertBatchNorm(NodeContext &ctx) {
  FailureOr<bool> training = ctx.getBool("training", false);
  if (failed(training))
    return failure();
  if (*training)
    return ctx.fail("batch norm in training mode computes the batch's statistics and "
                    "updates the running ones; export the model in eval mode");
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> input = ctx.tensor("input");
  FailureOr<Value> weight = ctx.optionalTensor("weight");
  FailureOr<Value> bias = ctx.optionalTensor("bias");
  FailureOr<Value> mean = ctx.tensor("running_mean");
  FailureOr<Value> var = ctx.tensor("running_var");
  FailureOr<double> eps = ctx.getFloat("eps", 1e-5);
  if (failed(type) || failed(input) || failed(weight) || failed(bias) ||
      failed(mean) || failed(var) || failed(eps) ||
      failed(onlyFirstResultUsed(ctx)))
    return failure();
  Type element = type->getElementType();
  auto asElement = [&](Value v) { return v ? ctx.convert(v, element) : Value(); };
  return ctx.setResult(ctx.create<BatchNormOp>(
      *type, asElement(*input), asElement(*mean), asElement(*var),
      asElement(*weight), asElement(*bias), llvm::APFloat(*eps)));
}

/// scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
/// is_causal, scale, enable_gqa), kept whole when export preserves it.
LogicalResult convertAttention(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> q = ctx.tensor("query");
  FailureOr<Value> k = ctx.tensor("key");
  FailureOr<Value> v = ctx.tensor("value");
  FailureOr<Value> mask = ctx.optionalTensor("attn_mask");
  FailureOr<double> dropout = ctx.getFloat("dropout_p", 0.0);
  FailureOr<bool> causal = ctx.getBool("is_causal", false);
  FailureOr<bool> gqa = ctx.getBool("enable_gqa", false);
  if (failed(type) || failed(q) || failed(k) || failed(v) || failed(mask) ||
      failed(dropout) || failed(causal) || failed(gqa))
    return failure();
  if (*dropout != 0.0)
    return ctx.fail("attention dropout is training-only; dropout_p must be 0");
  if (*gqa)
    return ctx.fail("grouped-query attention (enable_gqa) is not supported yet");
  FloatAttr scale;
  if (ctx.has("scale")) {
    FailureOr<double> s = ctx.getFloat("scale");
    if (failed(s))
      return failure();
    scale = ctx.b.getF64FloatAttr(*s);
  }
  Value m = *mask;
  if (m && *causal)
    return ctx.fail("attention with both a mask and is_causal is not supported");
  if (m) {
    // The mask broadcasts to [..., L, S]; give it the query's rank.
    auto maskType = cast<RankedTensorType>(m.getType());
    auto qType = cast<RankedTensorType>(q->getType());
    if (maskType.getRank() < qType.getRank()) {
      SmallVector<int64_t> shape(qType.getRank() - maskType.getRank(), 1);
      llvm::append_range(shape, maskType.getShape());
      m = ctx.create<ReshapeOp>(maskType.clone(shape), m);
    }
    if (!maskType.getElementType().isInteger(1))
      m = ctx.convert(m, type->getElementType());
  }
  UnitAttr causalAttr = *causal ? ctx.b.getUnitAttr() : UnitAttr();
  return ctx.setResult(ctx.create<ScaledDotProductAttentionOp>(
      *type, *q, *k, *v, m, causalAttr, scale));
}

} // namespace

void ::thunder::import::detail::registerCompositeConversions(ConversionTable &table) {
  table["aten._softmax.default"] = convertSoftmax<SoftmaxOp>;
  table["aten.softmax.int"] = convertSoftmax<SoftmaxOp>;
  table["aten._log_softmax.default"] = convertSoftmax<LogSoftmaxOp>;
  table["aten.log_softmax.int"] = convertSoftmax<LogSoftmaxOp>;
  table["aten.native_layer_norm.default"] = convertLayerNorm;
  table["aten.layer_norm.default"] = convertLayerNorm;
  table["aten.rms_norm.default"] = convertRmsNorm;
  table["aten._native_batch_norm_legit_no_training.default"] = convertBatchNorm;
  table["aten.batch_norm.default"] = convertBatchNorm;
  table["aten.scaled_dot_product_attention.default"] = convertAttention;
}
