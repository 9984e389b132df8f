//===- ConvertStatistics.cpp - ATen variance, norms, distances to thunder -===//
//
// var, group norm, batch norm with batch statistics, vector norms, pairwise
// distances (cdist, pdist), dropout in inference, and the creation ops whose
// contents do not matter or are one value (empty, fill, copy). Each is a
// composition of thunder reductions and elementwise ops.
//
//===----------------------------------------------------------------------===//
#include "Conversion.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::thunder;
using namespace ::thunder;
using namespace ::thunder::import;
using namespace ::thunder::import::detail;

namespace {

/// Normalized, sorted reduction dims (all when absent or empty).
FailureOr<SmallVector<int64_t>> dimsArg(NodeContext &ctx, llvm::StringRef name,
                                        int64_t rank) {
  SmallVector<int64_t> result;
  if (ctx.has(name)) {
    FailureOr<SmallVector<int64_t>> dims = ctx.getInts(name);
    if (failed(dims))
      return failure();
    for (int64_t d : *dims) {
      FailureOr<int64_t> n = normalizeDim(ctx, d, rank);
      if (failed(n))
        return failure();
      if (rank > 0)
        result.push_back(*n);
    }
  }
  if (result.empty())
    for (int64_t d = 0; d < rank; ++d)
      result.push_back(d);
  llvm::sort(result);
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

/// sum((x - mean)^2) / max(N - correction, 0) over `dims` of `x` (float).
FailureOr<Value> variance(NodeContext &ctx, Value x, ArrayRef<int64_t> dims, double correction,
                          bool keepdim) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t n = 1;
  for (int64_t d : dims) {
    if (type.isDynamicDim(d))
      return ctx.fail("the variance over a dynamic dim is not supported");
    n *= type.getDimSize(d);
  }
  if (dims.empty())
    return ctx.splat(type, 0.0);
  Value mean = ctx.create<MeanOp>(x, dims, true);
  FailureOr<Value> b = ctx.broadcastTo(mean, type.getShape());
  if (failed(b))
    return failure();
  Value diff = ctx.create<SubOp>(x, *b);
  Value sq = ctx.create<SumOp>(ctx.create<MulOp>(diff, diff), dims, keepdim);
  double divisor = std::max(0.0, static_cast<double>(n) - correction);
  return ctx.create<DivOp>(sq, ctx.splat(cast<RankedTensorType>(sq.getType()), divisor),
                           RoundingMode::None);
}

/// var.correction / var.dim.
LogicalResult convertVar(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<bool> keepdim = ctx.getBool("keepdim", false);
  if (failed(type) || failed(self) || failed(keepdim))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  FailureOr<SmallVector<int64_t>> dims = dimsArg(ctx, "dim", selfType.getRank());
  if (failed(dims))
    return failure();
  double correction = 1.0;
  if (ctx.arg("unbiased")) {
    FailureOr<bool> unbiased = ctx.getBool("unbiased", true);
    if (failed(unbiased))
      return failure();
    correction = *unbiased ? 1.0 : 0.0;
  } else if (std::optional<Scalar> c = ctx.scalar("correction")) {
    correction = std::visit([](auto v) { return static_cast<double>(v); }, *c);
  }
  Value x = ctx.convert(*self, type->getElementType());
  FailureOr<Value> v = variance(ctx, x, *dims, correction, *keepdim);
  if (failed(v))
    return failure();
  if (v->getType() != *type)
    return ctx.setResult(ctx.create<ReshapeOp>(*type, *v));
  return ctx.setResult(*v);
}

/// `value` reshaped to [1, C, 1, ...] and broadcast to `shape` (a per-channel
/// parameter).
FailureOr<Value> perChannel(NodeContext &ctx, Value value, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  s[1] = shape[1];
  Value r = ctx.create<ReshapeOp>(
      RankedTensorType::get(s, getElementTypeOrSelf(value.getType())), value);
  return ctx.broadcastTo(r, shape);
}

/// y * weight + bias, per channel (dim 1), each optional.
FailureOr<Value> affine(NodeContext &ctx, Value y, Value weight, Value bias) {
  auto type = cast<RankedTensorType>(y.getType());
  if (weight) {
    FailureOr<Value> w = perChannel(ctx, ctx.convert(weight, type.getElementType()), type.getShape());
    if (failed(w))
      return failure();
    y = ctx.create<MulOp>(y, *w);
  }
  if (bias) {
    FailureOr<Value> b = perChannel(ctx, ctx.convert(bias, type.getElementType()), type.getShape());
    if (failed(b))
      return failure();
    y = ctx.create<AddOp>(y, *b);
  }
  return y;
}

/// native_group_norm: a layer norm over each group's [C/G, HxW] block, then
/// the per-channel affine; mean and rstd ([N, G]) when read.
LogicalResult convertGroupNorm(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> input = ctx.tensor("input");
  FailureOr<Value> weight = ctx.optionalTensor("weight");
  FailureOr<Value> bias = ctx.optionalTensor("bias");
  FailureOr<int64_t> groups = ctx.getInt("group");
  FailureOr<double> eps = ctx.getFloat("eps", 1e-5);
  if (failed(type) || failed(input) || failed(weight) || failed(bias) || failed(groups) ||
      failed(eps))
    return failure();
  if (!type->hasStaticShape() || type->getRank() < 2)
    return ctx.fail("group norm needs static shapes of rank 2 or more");
  int64_t n = type->getDimSize(0), c = type->getDimSize(1), g = *groups;
  if (g <= 0 || c % g)
    return ctx.fail("group norm needs channels divisible by the groups");
  int64_t per = n * c != 0 ? type->getNumElements() / (n * g) : 0;
  Type element = type->getElementType();
  Value x = ctx.convert(*input, element);
  auto grouped = RankedTensorType::get({n, g, per}, element);
  Value xg = ctx.create<ReshapeOp>(grouped, x);
  Value normed = ctx.create<LayerNormOp>(grouped, xg, Value(), Value(), uint64_t(1),
                                         llvm::APFloat(*eps));
  FailureOr<Value> y =
      affine(ctx, ctx.create<ReshapeOp>(*type, normed), *weight, *bias);
  if (failed(y) || failed(ctx.setResult(*y, 0)))
    return failure();
  if (ctx.numResults() > 1 && (ctx.resultUsed(1) || ctx.resultUsed(2))) {
    FailureOr<RankedTensorType> statType = ctx.resultType(1);
    if (failed(statType))
      return failure();
    Value xs = ctx.convert(xg, statType->getElementType());
    Value mean = ctx.create<MeanOp>(xs, SmallVector<int64_t>{2}, false);
    FailureOr<Value> var = variance(ctx, xs, {2}, 0.0, false);
    if (failed(var))
      return failure();
    Value rstd = ctx.create<RsqrtOp>(
        ctx.create<AddOp>(*var, ctx.splat(cast<RankedTensorType>(var->getType()), *eps)));
    if (!ctx.resultName(1).empty() &&
        failed(ctx.setResult(ctx.create<ReshapeOp>(*statType, mean), 1)))
      return failure();
    if (!ctx.resultName(2).empty() &&
        failed(ctx.setResult(ctx.create<ReshapeOp>(*statType, rstd), 2)))
      return failure();
  }
  return success();
}

/// _native_batch_norm_legit (training, batch statistics): normalized over
/// every dim but 1; save_mean and save_rstd when read. The running
/// statistics are not updated (the compiled program is a pure function).
LogicalResult convertBatchNormTraining(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> input = ctx.tensor("input");
  FailureOr<Value> weight = ctx.optionalTensor("weight");
  FailureOr<Value> bias = ctx.optionalTensor("bias");
  FailureOr<bool> training = ctx.getBool("training");
  FailureOr<double> eps = ctx.getFloat("eps", 1e-5);
  if (failed(type) || failed(input) || failed(weight) || failed(bias) || failed(training) ||
      failed(eps))
    return failure();
  if (!*training) {
    if (!ctx.has("running_mean"))
      return ctx.fail("batch norm without statistics must be in training mode");
    FailureOr<Value> mean = ctx.tensor("running_mean");
    FailureOr<Value> var = ctx.tensor("running_var");
    if (failed(mean) || failed(var))
      return failure();
    Type element = type->getElementType();
    Value w = *weight ? ctx.convert(*weight, element) : Value();
    Value b = *bias ? ctx.convert(*bias, element) : Value();
    if (ctx.resultUsed(1) || ctx.resultUsed(2))
      return ctx.fail("the saved statistics of an inference batch norm are not supported");
    return ctx.setResult(ctx.create<BatchNormOp>(
        *type, ctx.convert(*input, element), ctx.convert(*mean, element),
        ctx.convert(*var, element), w, b, llvm::APFloat(*eps)));
  }
  if (type->getRank() < 2)
    return ctx.fail("batch norm needs a rank of 2 or more");
  Type element = type->getElementType();
  Value x = ctx.convert(*input, element);
  SmallVector<int64_t> dims{0};
  for (int64_t d = 2; d < type->getRank(); ++d)
    dims.push_back(d);
  Value mean = ctx.create<MeanOp>(x, dims, true);
  FailureOr<Value> var = variance(ctx, x, dims, 0.0, true);
  if (failed(var))
    return failure();
  Value rstd = ctx.create<RsqrtOp>(
      ctx.create<AddOp>(*var, ctx.splat(cast<RankedTensorType>(var->getType()), *eps)));
  FailureOr<Value> mb = ctx.broadcastTo(mean, type->getShape());
  FailureOr<Value> rb = ctx.broadcastTo(rstd, type->getShape());
  if (failed(mb) || failed(rb))
    return failure();
  FailureOr<Value> y =
      affine(ctx, ctx.create<MulOp>(ctx.create<SubOp>(x, *mb), *rb), *weight, *bias);
  if (failed(y) || failed(ctx.setResult(*y, 0)))
    return failure();
  for (unsigned i : {1u, 2u}) {
    if (ctx.numResults() <= i || ctx.resultName(i).empty())
      continue;
    FailureOr<RankedTensorType> statType = ctx.resultType(i);
    if (failed(statType))
      return failure();
    Value stat = ctx.convert(i == 1 ? mean : rstd, statType->getElementType());
    if (failed(ctx.setResult(ctx.create<ReshapeOp>(*statType, stat), i)))
      return failure();
  }
  return success();
}

/// native_dropout outside training (or p = 0): the input, and an all-true mask
/// (dropout and its variants: the input alone).
LogicalResult convertDropout(NodeContext &ctx) {
  FailureOr<Value> input = ctx.tensor("input");
  FailureOr<double> p = ctx.getFloat("p", 0.5);
  FailureOr<bool> train = ctx.getBool("train", true);
  if (failed(input) || failed(p) || failed(train))
    return failure();
  if (*train && *p != 0.0)
    return ctx.fail("dropout in training mode draws random numbers, which compiled "
                    "programs do not (export the model in eval mode)");
  if (failed(ctx.setResult(*input, 0)))
    return failure();
  if (ctx.numResults() > 1 && !ctx.resultName(1).empty()) {
    FailureOr<RankedTensorType> maskType = ctx.resultType(1);
    if (failed(maskType))
      return failure();
    return ctx.setResult(ctx.splat(*maskType, true), 1);
  }
  return success();
}

/// The p-norm of `x` over `dims`: sum(|x|^p)^(1/p), with p = 0 (count of
/// nonzeros), 1, 2 and +-inf as special cases.
Value pNorm(NodeContext &ctx, Value x, ArrayRef<int64_t> dims, double p, bool keepdim) {
  auto type = cast<RankedTensorType>(x.getType());
  Value a = ctx.create<AbsOp>(x);
  if (std::isinf(p))
    return p > 0 ? Value(ctx.create<MaxOp>(a, dims, keepdim))
                 : Value(ctx.create<MinOp>(a, dims, keepdim));
  if (p == 0.0) {
    Value nz = ctx.create<CompareOp>(ComparisonDirection::NE, x, ctx.splat(type, 0.0));
    return ctx.create<SumOp>(ctx.convert(nz, type.getElementType()), dims, keepdim);
  }
  if (p == 1.0)
    return ctx.create<SumOp>(a, dims, keepdim);
  if (p == 2.0)
    return ctx.create<SqrtOp>(ctx.create<SumOp>(ctx.create<MulOp>(x, x), dims, keepdim));
  Value s = ctx.create<SumOp>(ctx.create<PowOp>(a, ctx.splat(type, p)), dims, keepdim);
  return ctx.create<PowOp>(s, ctx.splat(cast<RankedTensorType>(s.getType()), 1.0 / p));
}

/// linalg_vector_norm(self, ord, dim, keepdim, dtype).
LogicalResult convertVectorNorm(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<double> ord = ctx.getFloat("ord", 2.0);
  FailureOr<bool> keepdim = ctx.getBool("keepdim", false);
  if (failed(type) || failed(self) || failed(ord) || failed(keepdim))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  FailureOr<SmallVector<int64_t>> dims = dimsArg(ctx, "dim", selfType.getRank());
  if (failed(dims))
    return failure();
  Value x = ctx.convert(*self, type->getElementType());
  if (dims->empty())
    return ctx.setResult(ctx.create<AbsOp>(x));
  Value n = pNorm(ctx, x, *dims, *ord, *keepdim);
  if (n.getType() != *type)
    n = ctx.create<ReshapeOp>(*type, n);
  return ctx.setResult(n);
}

/// `x1` [..., P, M] and `x2` [..., R, M] to their p-distances [..., P, R].
FailureOr<Value> pairwise(NodeContext &ctx, Value x1, Value x2, double p) {
  auto t1 = cast<RankedTensorType>(x1.getType()), t2 = cast<RankedTensorType>(x2.getType());
  if (!t1.hasStaticShape() || !t2.hasStaticShape() || t1.getRank() < 2 ||
      t1.getRank() != t2.getRank())
    return ctx.fail("pairwise distances need static shapes of one rank, 2 or more");
  int64_t r = t1.getRank();
  SmallVector<int64_t> s1(t1.getShape()), s2(t2.getShape());
  s1.insert(s1.begin() + r - 1, 1); // [..., P, 1, M]
  s2.insert(s2.begin() + r - 2, 1); // [..., 1, R, M]
  SmallVector<int64_t> full(t1.getShape().drop_back(2));
  for (int64_t i = 0; i < r - 2; ++i)
    full[i] = std::max(t1.getDimSize(i), t2.getDimSize(i));
  full.append({t1.getDimSize(r - 2), t2.getDimSize(r - 2), t1.getDimSize(r - 1)});
  Type element = t1.getElementType();
  FailureOr<Value> a = ctx.broadcastTo(ctx.create<ReshapeOp>(RankedTensorType::get(s1, element), x1), full);
  FailureOr<Value> b = ctx.broadcastTo(
      ctx.create<ReshapeOp>(RankedTensorType::get(s2, element), ctx.convert(x2, element)), full);
  if (failed(a) || failed(b))
    return failure();
  return pNorm(ctx, ctx.create<SubOp>(*a, *b), {r}, p, false);
}

LogicalResult convertCdist(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> x1 = ctx.tensor("x1");
  FailureOr<Value> x2 = ctx.tensor("x2");
  FailureOr<double> p = ctx.getFloat("p", 2.0);
  if (failed(type) || failed(x1) || failed(x2) || failed(p))
    return failure();
  FailureOr<Value> d = pairwise(ctx, *x1, *x2, *p);
  if (failed(d))
    return failure();
  return ctx.setResult(d->getType() == *type ? *d : ctx.create<ReshapeOp>(*type, *d));
}

/// _pdist_forward: the upper triangle (i < j, row-major) of cdist(x, x).
LogicalResult convertPdist(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<double> p = ctx.getFloat("p", 2.0);
  if (failed(type) || failed(self) || failed(p))
    return failure();
  FailureOr<Value> d = pairwise(ctx, *self, *self, *p);
  if (failed(d))
    return failure();
  int64_t n = cast<RankedTensorType>(self->getType()).getDimSize(0);
  SmallVector<int64_t> index;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j)
      index.push_back(i * n + j);
  Type element = type->getElementType();
  Value flat = ctx.create<ReshapeOp>(RankedTensorType::get({n * n}, element), *d);
  auto indexType = RankedTensorType::get({static_cast<int64_t>(index.size())},
                                         ctx.b.getI64Type());
  Value idx = ctx.create<ConstantOp>(DenseElementsAttr::get(indexType, ArrayRef(index)));
  return ctx.setResult(ctx.create<IndexSelectOp>(flat, idx, 0));
}

/// empty / empty_strided: zeros (the contents are unspecified).
LogicalResult convertEmpty(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  return ctx.setResult(ctx.splat(*type, int64_t(0)));
}

/// fill.Scalar / fill.Tensor: every element the value.
LogicalResult convertFill(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  if (std::optional<Scalar> value = ctx.scalar("value"))
    return ctx.setResult(ctx.splat(*type, *value));
  FailureOr<Value> value = ctx.operandAs("value", *type);
  if (failed(value))
    return failure();
  return ctx.setResult(*value);
}

/// copy(self, src): src broadcast to self's shape in self's dtype.
LogicalResult convertCopy(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  FailureOr<Value> src = ctx.operandAs("src", *type);
  if (failed(src))
    return failure();
  return ctx.setResult(*src);
}

} // namespace

void ::thunder::import::detail::registerStatisticsConversions(ConversionTable &table) {
  for (const char *op : {"aten.var.correction", "aten.var.dim"})
    table[op] = convertVar;
  table["aten.native_group_norm.default"] = convertGroupNorm;
  for (const char *op : {"aten._native_batch_norm_legit.default",
                         "aten._native_batch_norm_legit.no_stats"})
    table[op] = convertBatchNormTraining;
  // dropout and its feature/alpha variants (before decomposition) have one
  // result and the same arguments.
  for (const char *op : {"aten.native_dropout.default", "aten.dropout.default",
                         "aten.feature_dropout.default", "aten.alpha_dropout.default",
                         "aten.feature_alpha_dropout.default"})
    table[op] = convertDropout;
  table["aten.linalg_vector_norm.default"] = convertVectorNorm;
  table["aten._cdist_forward.default"] = convertCdist;
  table["aten._pdist_forward.default"] = convertPdist;
  for (const char *op : {"aten.empty.memory_format", "aten.empty_strided.default",
                         "aten.empty_like.default"})
    table[op] = convertEmpty;
  for (const char *op : {"aten.fill.Scalar", "aten.fill.Tensor"})
    table[op] = convertFill;
  table["aten.copy.default"] = convertCopy;
}
