//===- ConvertLinalg.cpp - ATen matmuls, convolutions and pooling ---------===//
#include "Conversion.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace ::thunder;
using namespace ::thunder::import;
using namespace ::thunder::import::detail;

namespace {

/// mm and bmm: same-rank operands.
LogicalResult convertMatmul(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> lhs = ctx.tensor("self");
  FailureOr<Value> rhs = ctx.tensor("mat2");
  if (failed(type) || failed(lhs) || failed(rhs))
    return failure();
  return ctx.setResult(ctx.create<MatmulOp>(
      ctx.convert(*lhs, type->getElementType()),
      ctx.convert(*rhs, type->getElementType()), false, false));
}

/// addmm: beta * self + alpha * (mat1 @ mat2); `self` is the broadcast bias.
LogicalResult convertAddmm(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> mat1 = ctx.tensor("mat1");
  FailureOr<Value> mat2 = ctx.tensor("mat2");
  if (failed(type) || failed(mat1) || failed(mat2))
    return failure();
  Type element = type->getElementType();
  Value product = ctx.create<MatmulOp>(ctx.convert(*mat1, element),
                                       ctx.convert(*mat2, element), false, false);
  auto isOne = [](const std::optional<Scalar> &s) {
    return !s || std::visit([](auto v) { return v == 1; }, *s);
  };
  if (std::optional<Scalar> alpha = ctx.scalar("alpha"); !isOne(alpha))
    product = ctx.create<MulOp>(product, ctx.splat(*type, *alpha));
  FailureOr<Value> bias = ctx.operandAs("self", *type);
  if (failed(bias))
    return failure();
  Value scaledBias = *bias;
  if (std::optional<Scalar> beta = ctx.scalar("beta"); !isOne(beta))
    scaledBias = ctx.create<MulOp>(scaledBias, ctx.splat(*type, *beta));
  return ctx.setResult(ctx.create<AddOp>(scaledBias, product));
}

/// linear: input @ weight^T + bias, the weight read transposed by the GEMM.
LogicalResult convertLinear(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> input = ctx.tensor("input");
  FailureOr<Value> weight = ctx.tensor("weight");
  FailureOr<Value> bias = ctx.optionalTensor("bias");
  if (failed(type) || failed(input) || failed(weight) || failed(bias))
    return failure();
  Value y = ctx.create<MatmulOp>(*input, *weight, false, true);
  if (*bias) {
    FailureOr<Value> b = ctx.coerce(*bias, *type);
    if (failed(b))
      return failure();
    y = ctx.create<AddOp>(y, *b);
  }
  return ctx.setResult(y);
}

/// [a, b] per spatial dim from PyTorch's symmetric padding list.
SmallVector<int64_t> symmetricPadding(ArrayRef<int64_t> padding, size_t n) {
  SmallVector<int64_t> result;
  for (size_t i = 0; i < n; ++i) {
    int64_t p = padding.size() == 1 ? padding[0] : padding[i];
    result.push_back(p);
    result.push_back(p);
  }
  return result;
}

/// Expands PyTorch's single-entry shorthand (stride=2 means 2 per dim).
SmallVector<int64_t> perDim(ArrayRef<int64_t> values, size_t n) {
  if (values.size() == 1 && n > 1)
    return SmallVector<int64_t>(n, values[0]);
  return SmallVector<int64_t>(values.begin(), values.end());
}

LogicalResult convertConvolution(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> input = ctx.tensor("input");
  FailureOr<Value> weight = ctx.tensor("weight");
  FailureOr<Value> bias = ctx.optionalTensor("bias");
  FailureOr<SmallVector<int64_t>> stride = ctx.getInts("stride");
  FailureOr<SmallVector<int64_t>> padding = ctx.getInts("padding");
  FailureOr<SmallVector<int64_t>> dilation = ctx.getInts("dilation");
  FailureOr<bool> transposed = ctx.getBool("transposed", false);
  FailureOr<SmallVector<int64_t>> outputPadding =
      ctx.getInts("output_padding", ArrayRef<int64_t>{0});
  FailureOr<int64_t> groups = ctx.getInt("groups", 1);
  if (failed(type) || failed(input) || failed(weight) || failed(bias) ||
      failed(stride) || failed(padding) || failed(dilation) ||
      failed(transposed) || failed(outputPadding) || failed(groups))
    return failure();
  if (*transposed)
    return ctx.fail("transposed convolution is not supported yet");
  size_t spatial = type->getRank() - 2;
  Type element = type->getElementType();
  Value b = *bias ? ctx.convert(*bias, element) : Value();
  Value y = ctx.create<ConvolutionOp>(
      ctx.convert(*input, element), ctx.convert(*weight, element), b,
      perDim(*stride, spatial), symmetricPadding(*padding, spatial),
      perDim(*dilation, spatial), *groups);
  return ctx.setResult(y);
}

/// max_pool{1,2,3}d[_with_indices]: the values; the indices only if unused.
LogicalResult convertMaxPool(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType(0);
  FailureOr<Value> input = ctx.tensor("self");
  FailureOr<SmallVector<int64_t>> kernel = ctx.getInts("kernel_size");
  if (failed(type) || failed(input) || failed(kernel))
    return failure();
  size_t n = kernel->size();
  FailureOr<SmallVector<int64_t>> stride = ctx.getInts("stride", ArrayRef<int64_t>{});
  FailureOr<SmallVector<int64_t>> padding = ctx.getInts("padding", ArrayRef<int64_t>{0});
  FailureOr<SmallVector<int64_t>> dilation = ctx.getInts("dilation", ArrayRef<int64_t>{1});
  FailureOr<bool> ceilMode = ctx.getBool("ceil_mode", false);
  if (failed(stride) || failed(padding) || failed(dilation) || failed(ceilMode))
    return failure();
  // PyTorch: an empty stride means stride = kernel size.
  SmallVector<int64_t> strides = stride->empty() ? *kernel : perDim(*stride, n);
  Value y = ctx.create<MaxPoolOp>(*input, *kernel, strides,
                                  symmetricPadding(*padding, n),
                                  perDim(*dilation, n), *ceilMode);
  if (ctx.numResults() > 1 && ctx.resultUsed(1))
    return ctx.fail("the indices output of max pooling is not supported "
                    "(used as '" + ctx.resultName(1) + "')");
  return ctx.setResult(y, 0);
}

LogicalResult convertAvgPool(NodeContext &ctx) {
  FailureOr<Value> input = ctx.tensor("self");
  FailureOr<SmallVector<int64_t>> kernel = ctx.getInts("kernel_size");
  if (failed(input) || failed(kernel))
    return failure();
  size_t n = kernel->size();
  FailureOr<SmallVector<int64_t>> stride = ctx.getInts("stride", ArrayRef<int64_t>{});
  FailureOr<SmallVector<int64_t>> padding = ctx.getInts("padding", ArrayRef<int64_t>{0});
  FailureOr<bool> ceilMode = ctx.getBool("ceil_mode", false);
  FailureOr<bool> countIncludePad = ctx.getBool("count_include_pad", true);
  if (failed(stride) || failed(padding) || failed(ceilMode) ||
      failed(countIncludePad))
    return failure();
  if (ctx.has("divisor_override"))
    return ctx.fail("avg_pool with divisor_override is not supported");
  SmallVector<int64_t> strides = stride->empty() ? *kernel : perDim(*stride, n);
  // Integer average pooling (PyTorch divides the integer sum and truncates):
  // the window's mean in f64, exact for sums below 2^53, then truncated back.
  Type element = cast<RankedTensorType>(input->getType()).getElementType();
  bool integer = isa<IntegerType>(element);
  if (element.isInteger(1))
    return ctx.fail("avg_pool of a bool tensor is not defined (PyTorch refuses it too)");
  Value x = integer ? ctx.convert(*input, ctx.b.getF64Type()) : *input;
  Value y = ctx.create<AvgPoolOp>(x, *kernel, strides, symmetricPadding(*padding, n),
                                  *ceilMode, *countIncludePad);
  return ctx.setResult(integer ? ctx.convert(y, element) : y);
}

/// adaptive_avg_pool: output element i of a dim averages input elements
/// [floor(i * in / out), ceil((i + 1) * in / out)). Averages over a box are
/// separable, so each pooled dim is done in turn: a mean when the output
/// size is 1, an avg_pool when the input divides evenly, else one slice and
/// mean per output element, concatenated.
LogicalResult convertAdaptiveAvgPool(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> input = ctx.tensor("self");
  FailureOr<SmallVector<int64_t>> outputSize = ctx.getInts("output_size");
  if (failed(type) || failed(input) || failed(outputSize))
    return failure();
  Value x = *input;
  size_t n = outputSize->size();
  int64_t first = type->getRank() - n;
  for (size_t i = 0; i < n; ++i) {
    int64_t dim = first + i;
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t in = xType.getDimSize(dim), out = (*outputSize)[i];
    if (in == out)
      continue;
    if (ShapedType::isDynamic(in) || out <= 0)
      return ctx.fail("adaptive_avg_pool needs a static input size and a "
                      "positive output size, got " +
                      llvm::Twine(in) + " to " + llvm::Twine(out));
    SmallVector<Value> pieces;
    for (int64_t o = 0; o < out; ++o) {
      int64_t start = (o * in) / out, end = ((o + 1) * in + out - 1) / out;
      FailureOr<Value> window = ctx.sliceDim(x, dim, start, end);
      if (failed(window))
        return failure();
      pieces.push_back(ctx.create<MeanOp>(*window, SmallVector<int64_t>{dim},
                                          /*keepdim=*/true));
    }
    x = pieces.size() == 1 ? pieces.front()
                           : ctx.create<ConcatOp>(pieces, static_cast<uint64_t>(dim));
  }
  return ctx.setResult(x);
}

} // namespace

void ::thunder::import::detail::registerLinalgConversions(ConversionTable &table) {
  table["aten.mm.default"] = convertMatmul;
  table["aten.bmm.default"] = convertMatmul;
  table["aten.addmm.default"] = convertAddmm;
  table["aten.linear.default"] = convertLinear;
  table["aten.convolution.default"] = convertConvolution;
  for (const char *op :
       {"aten.max_pool1d.default", "aten.max_pool2d.default",
        "aten.max_pool3d.default", "aten.max_pool2d_with_indices.default",
        "aten.max_pool3d_with_indices.default"})
    table[op] = convertMaxPool;
  for (const char *op : {"aten.avg_pool1d.default", "aten.avg_pool2d.default",
                         "aten.avg_pool3d.default"})
    table[op] = convertAvgPool;
  for (const char *op : {"aten._adaptive_avg_pool2d.default",
                         "aten.adaptive_avg_pool2d.default",
                         "aten._adaptive_avg_pool3d.default",
                         "aten.adaptive_avg_pool1d.default"})
    table[op] = convertAdaptiveAvgPool;
}
