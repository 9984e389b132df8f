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

/// `value` reshaped to `shape` (one dim may be dynamic: the batch).
Value reshapeTo(NodeContext &ctx, Value value, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  return ctx.create<ReshapeOp>(type.clone(shape), value);
}

/// torch.matmul: a dot product for two vectors, a vector operand promoted to a
/// matrix (a row on the left, a column on the right) and that dim dropped
/// from the result, and batch dims broadcast against each other. The batch
/// dims are read from the recorded result type: an operand whose batch dims
/// differ from them is broadcast to them (a 2-D right operand is shared by
/// every batch as it is).
LogicalResult convertTorchMatmul(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> lhs = ctx.tensor("self");
  FailureOr<Value> rhs = ctx.tensor("other");
  if (failed(type) || failed(lhs) || failed(rhs))
    return failure();
  Type element = type->getElementType();
  Value a = ctx.convert(*lhs, element), b = ctx.convert(*rhs, element);
  auto shapeOf = [](Value v) {
    return SmallVector<int64_t>(cast<RankedTensorType>(v.getType()).getShape());
  };
  SmallVector<int64_t> aShape = shapeOf(a), bShape = shapeOf(b);
  if (aShape.empty() || bShape.empty())
    return ctx.fail("matmul of a 0-d tensor is not defined (PyTorch refuses it too)");
  bool aVector = aShape.size() == 1, bVector = bShape.size() == 1;
  if (aVector)
    a = reshapeTo(ctx, a, {1, aShape[0]});
  if (bVector)
    b = reshapeTo(ctx, b, {bShape[0], 1});
  aShape = shapeOf(a);
  bShape = shapeOf(b);
  // The product's shape before the vector dims are dropped: the result's
  // batch dims, then [M, N].
  SmallVector<int64_t> batch(type->getShape());
  if (!bVector)
    batch.pop_back();
  if (!aVector && !batch.empty())
    batch.pop_back();
  if (aShape.size() == 2 && bShape.size() == 2 && !batch.empty())
    return ctx.fail("matmul: the recorded result has batch dims its 2-d operands lack");
  auto withBatch = [&](Value v, ArrayRef<int64_t> shape) -> FailureOr<Value> {
    SmallVector<int64_t> full(batch);
    full.append(shape.end() - 2, shape.end());
    if (ArrayRef<int64_t>(full) == shape)
      return v;
    return ctx.broadcastTo(v, full);
  };
  if (!batch.empty()) {
    FailureOr<Value> fullA = withBatch(a, aShape);
    if (failed(fullA))
      return failure();
    a = *fullA;
    if (bShape.size() != 2) {
      FailureOr<Value> fullB = withBatch(b, bShape);
      if (failed(fullB))
        return failure();
      b = *fullB;
    }
  }
  Value product = ctx.create<MatmulOp>(a, b, false, false);
  if (aVector || bVector)
    product = reshapeTo(ctx, product, type->getShape());
  return ctx.setResult(product);
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

/// [a, b] per spatial dim from PyTorch's symmetric padding list. A list of
/// another length (a malformed program) gives a list of the wrong length,
/// which the op's verifier reports.
SmallVector<int64_t> symmetricPadding(ArrayRef<int64_t> padding, size_t n) {
  SmallVector<int64_t> result;
  if (padding.size() != 1)
    n = std::min(n, padding.size());
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

/// A transposed convolution as a direct one: the input dilated by the stride
/// (stride - 1 zeros between elements, by reshaping each spatial dim to
/// [size, 1] and padding the 1 to the stride), padded by dilation * (k - 1) -
/// padding on both sides (plus output_padding after), then convolved at
/// stride 1 with the weight's input and output channels swapped within each
/// group and its taps reversed. The inserted zeros cost stride^spatial times
/// the multiplies of a dedicated kernel (docs/status.md).
FailureOr<Value> transposedConvolution(NodeContext &ctx, Value x, Value w, Value b,
                                       ArrayRef<int64_t> stride,
                                       ArrayRef<int64_t> padding,
                                       ArrayRef<int64_t> outputPadding,
                                       ArrayRef<int64_t> dilation, int64_t groups) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  size_t spatial = xType.getRank() - 2;
  if (stride.size() != spatial || padding.size() != spatial ||
      outputPadding.size() != spatial || dilation.size() != spatial)
    return ctx.fail("transposed convolution: stride, padding, output_padding and "
                    "dilation need one entry per spatial dim");
  if (!wType.hasStaticShape() || groups < 1 || wType.getDimSize(0) % groups != 0)
    return ctx.fail("transposed convolution needs a static weight whose input "
                    "channels divide into the groups");
  for (size_t i = 1; i < static_cast<size_t>(xType.getRank()); ++i)
    if (xType.isDynamicDim(i))
      return ctx.fail("transposed convolution needs static channel and spatial "
                      "sizes (only the batch may be dynamic)");

  // Dilate: [N, C, S0, S1] -> [N, C, S0, 1, S1, 1] -> pad -> [N, C, S0*s0, S1*s1].
  ArrayRef<int64_t> xShape = xType.getShape();
  if (llvm::any_of(stride, [](int64_t s) { return s > 1; })) {
    SmallVector<int64_t> split(xShape.take_front(2)), merged(xShape.take_front(2));
    SmallVector<int64_t> low(2 + 2 * spatial, 0), high(2 + 2 * spatial, 0);
    for (size_t i = 0; i < spatial; ++i) {
      split.append({xShape[2 + i], 1});
      high[2 + 2 * i + 1] = stride[i] - 1;
      merged.push_back(xShape[2 + i] * stride[i]);
    }
    x = reshapeTo(ctx, x, split);
    x = ctx.create<PadOp>(x, low, high, llvm::APFloat(0.0));
    x = reshapeTo(ctx, x, merged);
  }
  // Pad (or crop, when padding exceeds the kernel's reach); the dilation above
  // left stride - 1 zeros after the last element, which the high side drops.
  SmallVector<int64_t> low(2, 0), high(2, 0);
  for (size_t i = 0; i < spatial; ++i) {
    int64_t reach = dilation[i] * (wType.getDimSize(2 + i) - 1);
    low.push_back(reach - padding[i]);
    high.push_back(reach - padding[i] + outputPadding[i] - (stride[i] - 1));
  }
  x = ctx.create<PadOp>(x, low, high, llvm::APFloat(0.0));

  // Weight: [Cin, Cout/g, K...] -> [g, Cin/g, Cout/g, K...] -> swap -> [Cout, Cin/g, K...].
  ArrayRef<int64_t> wShape = wType.getShape();
  int64_t inPerGroup = wShape[0] / groups, outPerGroup = wShape[1];
  SmallVector<int64_t> grouped{groups, inPerGroup, outPerGroup};
  grouped.append(wShape.begin() + 2, wShape.end());
  w = reshapeTo(ctx, w, grouped);
  SmallVector<int64_t> perm{0, 2, 1};
  for (size_t i = 0; i < spatial; ++i)
    perm.push_back(3 + i);
  w = ctx.create<TransposeOp>(w, perm);
  SmallVector<int64_t> swapped{groups * outPerGroup, inPerGroup};
  swapped.append(wShape.begin() + 2, wShape.end());
  w = reshapeTo(ctx, w, swapped);
  for (size_t i = 0; i < spatial; ++i) {
    SmallVector<int64_t> reversed;
    for (int64_t k = wShape[2 + i] - 1; k >= 0; --k)
      reversed.push_back(k);
    w = selectAlong(ctx, w, 2 + i, reversed);
  }
  return ctx.create<ConvolutionOp>(x, w, b, SmallVector<int64_t>(spatial, 1),
                                   SmallVector<int64_t>(2 * spatial, 0),
                                   SmallVector<int64_t>(dilation), groups);
}

LogicalResult convertConvolution(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> input = ctx.tensor("input");
  FailureOr<Value> weight = ctx.tensor("weight");
  FailureOr<Value> bias = ctx.optionalTensor("bias");
  // conv{1,2,3}d default these (aten.convolution always has them).
  FailureOr<SmallVector<int64_t>> stride = ctx.getInts("stride", ArrayRef<int64_t>{1});
  FailureOr<SmallVector<int64_t>> padding = ctx.getInts("padding", ArrayRef<int64_t>{0});
  FailureOr<SmallVector<int64_t>> dilation = ctx.getInts("dilation", ArrayRef<int64_t>{1});
  FailureOr<bool> transposed = ctx.getBool("transposed", false);
  FailureOr<SmallVector<int64_t>> outputPadding =
      ctx.getInts("output_padding", ArrayRef<int64_t>{0});
  FailureOr<int64_t> groups = ctx.getInt("groups", 1);
  if (failed(type) || failed(input) || failed(weight) || failed(bias) ||
      failed(stride) || failed(padding) || failed(dilation) ||
      failed(transposed) || failed(outputPadding) || failed(groups))
    return failure();
  // (Fewer spatial dims than one, or more than three, reach the op's
  // verifier; fewer than none would count them from below zero.)
  if (type->getRank() < 2)
    return ctx.fail("convolution needs a result with batch and channel dims; the "
                    "recorded one has rank " + std::to_string(type->getRank()));
  size_t spatial = type->getRank() - 2;
  Type element = type->getElementType();
  Value b = *bias ? ctx.convert(*bias, element) : Value();
  if (*transposed) {
    FailureOr<Value> y = transposedConvolution(
        ctx, ctx.convert(*input, element), ctx.convert(*weight, element), b,
        perDim(*stride, spatial), perDim(*padding, spatial),
        perDim(*outputPadding, spatial), perDim(*dilation, spatial), *groups);
    return failed(y) ? failure() : ctx.setResult(*y);
  }
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

/// adaptive_{avg,max}_pool: output element i of a dim covers input elements
/// [floor(i * in / out), ceil((i + 1) * in / out)). A mean or a max over a box
/// is separable, so each pooled dim is done in turn: nothing when the sizes
/// match, else one slice and reduction per output element, concatenated.
template <typename ReduceOp>
LogicalResult convertAdaptivePool(NodeContext &ctx, llvm::StringRef name) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> input = ctx.tensor("self");
  FailureOr<SmallVector<int64_t>> outputSize = ctx.getInts("output_size");
  if (failed(type) || failed(input) || failed(outputSize))
    return failure();
  if (ctx.numResults() > 1 && ctx.resultUsed(1))
    return ctx.fail("the indices output of " + name + " is not supported (used as '" +
                    ctx.resultName(1) + "')");
  Value x = *input;
  size_t n = outputSize->size();
  int64_t first = type->getRank() - n;
  // Global pooling (every output size 1, the usual head of a CNN): one
  // reduction over all the pooled dims, whatever their sizes.
  if (llvm::all_of(*outputSize, [](int64_t o) { return o == 1; })) {
    SmallVector<int64_t> dims;
    for (size_t i = 0; i < n; ++i)
      dims.push_back(first + i);
    return ctx.setResult(ctx.create<ReduceOp>(x, dims, /*keepdim=*/true));
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t dim = first + i;
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t in = xType.getDimSize(dim), out = (*outputSize)[i];
    if (in == out)
      continue;
    if (ShapedType::isDynamic(in) || out <= 0 || in == 0)
      return ctx.fail(name + " needs a static, nonzero input size and a positive "
                      "output size, got " + llvm::Twine(in) + " to " + llvm::Twine(out));
    SmallVector<Value> pieces;
    for (int64_t o = 0; o < out; ++o) {
      int64_t start = (o * in) / out, end = ((o + 1) * in + out - 1) / out;
      FailureOr<Value> window = ctx.sliceDim(x, dim, start, end);
      if (failed(window))
        return failure();
      pieces.push_back(ctx.create<ReduceOp>(*window, SmallVector<int64_t>{dim},
                                            /*keepdim=*/true));
    }
    x = pieces.size() == 1 ? pieces.front()
                           : ctx.create<ConcatOp>(pieces, static_cast<uint64_t>(dim));
  }
  return ctx.setResult(x);
}

LogicalResult convertAdaptiveAvgPool(NodeContext &ctx) {
  return convertAdaptivePool<MeanOp>(ctx, "adaptive_avg_pool");
}

LogicalResult convertAdaptiveMaxPool(NodeContext &ctx) {
  return convertAdaptivePool<MaxOp>(ctx, "adaptive_max_pool");
}

/// _trilinear (nn.Bilinear): each input unsqueezed at its `expand` dims, the
/// three multiplied with broadcasting, summed over `sumdim`. The product is
/// materialized before the sum (batch x out x in1 x in2 elements).
LogicalResult convertTrilinear(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  SmallVector<Value> inputs;
  SmallVector<SmallVector<int64_t>> expands;
  for (const char *name : {"i1", "i2", "i3"}) {
    FailureOr<Value> input = ctx.tensor(name);
    if (failed(input))
      return failure();
    inputs.push_back(*input);
  }
  for (const char *name : {"expand1", "expand2", "expand3"}) {
    FailureOr<SmallVector<int64_t>> expand = ctx.getInts(name);
    if (failed(expand))
      return failure();
    expands.push_back(*expand);
  }
  FailureOr<SmallVector<int64_t>> sumdim = ctx.getInts("sumdim");
  if (failed(type) || failed(sumdim))
    return failure();
  SmallVector<int64_t> shape;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Value &input = inputs[i];
    SmallVector<int64_t> dims(cast<RankedTensorType>(input.getType()).getShape());
    SmallVector<int64_t> expand = expands[i];
    llvm::sort(expand);
    for (int64_t d : expand) {
      if (d < 0 || d > static_cast<int64_t>(dims.size()))
        return ctx.fail("_trilinear: expand dim " + llvm::Twine(d) + " is out of range");
      dims.insert(dims.begin() + d, 1);
    }
    if (!shape.empty() && shape.size() != dims.size())
      return ctx.fail("_trilinear: the expanded inputs have different ranks");
    shape.resize(dims.size(), 1);
    for (auto [s, d] : llvm::zip(shape, dims))
      if (d != 1)
        s = d;
    input = ctx.create<ReshapeOp>(
        cast<RankedTensorType>(input.getType()).clone(dims), input);
  }
  Type element = type->getElementType();
  Value product;
  for (Value input : inputs) {
    FailureOr<Value> full = ctx.broadcastTo(ctx.convert(input, element), shape);
    if (failed(full))
      return failure();
    product = product ? ctx.create<MulOp>(product, *full) : *full;
  }
  SmallVector<int64_t> dims(*sumdim);
  llvm::sort(dims);
  Value y = dims.empty() ? product
                         : ctx.create<SumOp>(product, dims, /*keepdim=*/false);
  return ctx.setResult(y);
}

} // namespace

void ::thunder::import::detail::registerLinalgConversions(ConversionTable &table) {
  table["aten.mm.default"] = convertMatmul;
  table["aten.bmm.default"] = convertMatmul;
  table["aten.addmm.default"] = convertAddmm;
  table["aten.linear.default"] = convertLinear;
  for (const char *op : {"aten.convolution.default", "aten.conv1d.default",
                         "aten.conv2d.default", "aten.conv3d.default"})
    table[op] = convertConvolution;
  table["aten.matmul.default"] = convertTorchMatmul;
  table["aten._trilinear.default"] = convertTrilinear;
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
  for (const char *op : {"aten.adaptive_max_pool1d.default",
                         "aten.adaptive_max_pool2d.default",
                         "aten.adaptive_max_pool3d.default"})
    table[op] = convertAdaptiveMaxPool;
}
