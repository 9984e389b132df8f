//===- Linalg.cpp - Contractions and windows to StableHLO -----------------===//
//
// matmul (`stablehlo.dot_general`), convolution (`stablehlo.convolution`
// plus a broadcast bias), max_pool and avg_pool (`stablehlo.reduce_window`).
// f32/f64 contractions ask for HIGHEST precision so that a TPU does not
// compute them in bf16 passes; f16/bf16 ones produce f32 (PyTorch
// accumulates them in f32) and round once.
//
//===----------------------------------------------------------------------===//
#include "PopulatePatterns.h"

#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::stablehlo;

namespace {

/// The precision_config of a contraction over `element`, or none.
std::optional<NamedAttribute> precision(HloBuilder &h, Type element) {
  auto f = dyn_cast<FloatType>(element);
  if (!f || f.getWidth() < 32)
    return std::nullopt;
  Attribute highest = h.opaque("precision HIGHEST");
  return h.attr("precision_config",
                h.builder().getArrayAttr({highest, highest}));
}

FailureOr<Value> lowerMatmul(MatmulOp op, MatmulOp::Adaptor adaptor, HloBuilder &h) {
  Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
  int64_t lhsRank = shapeOf(lhs).size(), rhsRank = shapeOf(rhs).size();
  bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();
  int64_t lhsContract = tl ? lhsRank - 2 : lhsRank - 1;
  int64_t rhsContract;
  SmallVector<int64_t> batch;
  if (rhsRank == 2) {
    // One matrix shared by every batch: the lhs batch dims stay free dims
    // (they come first in the result, before M).
    rhsContract = tr ? 1 : 0;
  } else {
    rhsContract = tr ? rhsRank - 1 : rhsRank - 2;
    batch = llvm::to_vector(llvm::seq<int64_t>(0, lhsRank - 2));
  }
  std::string numbers = "dot<";
  if (!batch.empty())
    numbers += "lhs_batching_dimensions = " + dimList(batch) +
               ", rhs_batching_dimensions = " + dimList(batch) + ", ";
  numbers += "lhs_contracting_dimensions = " + dimList({lhsContract}) +
             ", rhs_contracting_dimensions = " + dimList({rhsContract}) + ">";
  auto resultType = cast<RankedTensorType>(op.getType());
  Type element = resultType.getElementType();
  SmallVector<NamedAttribute> attrs{
      h.attr("dot_dimension_numbers", h.opaque(numbers))};
  if (auto p = precision(h, element))
    attrs.push_back(*p);
  Value r = h.op("dot_general", {lhs, rhs},
                 resultType.clone(accumulatorType(element)), attrs);
  return h.convert(r, element);
}

FailureOr<Value> lowerConvolution(ConvolutionOp op,
                                  ConvolutionOp::Adaptor adaptor, HloBuilder &h) {
  auto resultType = cast<RankedTensorType>(op.getType());
  int64_t spatial = resultType.getRank() - 2;
  SmallVector<int64_t> spatialDims =
      llvm::to_vector(llvm::seq<int64_t>(0, spatial));
  std::string dims;
  llvm::raw_string_ostream os(dims);
  auto layout = [&](StringRef batch, StringRef feature) {
    os << "[" << batch << ", " << feature;
    for (int64_t d : spatialDims)
      os << ", " << d;
    os << "]";
  };
  os << "conv<";
  layout("b", "f");
  os << "x";
  layout("o", "i");
  os << "->";
  layout("b", "f");
  os << ">";

  ArrayRef<int64_t> pad = op.getPadding();
  SmallVector<int64_t> low, high;
  for (int64_t i = 0; i < spatial; ++i) {
    low.push_back(pad[2 * i]);
    high.push_back(pad[2 * i + 1]);
  }
  Type element = resultType.getElementType();
  SmallVector<NamedAttribute> attrs{
      h.attr("window_strides", h.i64Array(op.getStride())),
      h.attr("padding", h.padding(low, high)),
      h.attr("lhs_dilation", h.i64Array(SmallVector<int64_t>(spatial, 1))),
      h.attr("rhs_dilation", h.i64Array(op.getDilation())),
      h.attr("dimension_numbers", h.opaque(dims)),
      h.attr("feature_group_count", h.i64(op.getGroups())),
      h.attr("batch_group_count", h.i64(1))};
  if (auto p = precision(h, element))
    attrs.push_back(*p);
  Type acc = accumulatorType(element);
  Value r = h.op("convolution", {adaptor.getInput(), adaptor.getWeight()},
                 resultType.clone(acc), attrs);
  if (Value bias = adaptor.getBias())
    r = h.add(r, h.broadcastInDim(h.convert(bias, acc), resultType.clone(acc), {1}));
  return h.convert(r, element);
}

/// The window of a pooling op over the trailing `kernel.size()` dims of
/// `input`, extended with size-1 windows over the leading dims. The high
/// padding is what makes the window count equal the result's dims (so
/// ceil_mode needs nothing else), never below zero.
struct PoolWindow {
  SmallVector<int64_t> window, strides, dilations, low, high;
  /// The padding the op asked for, per dim (zero on leading dims).
  SmallVector<int64_t> declaredHigh;
};

PoolWindow poolWindow(ArrayRef<int64_t> inputShape, ArrayRef<int64_t> resultShape,
                      ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                      ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation) {
  PoolWindow w;
  int64_t rank = inputShape.size(), lead = rank - kernel.size();
  for (int64_t d = 0; d < rank; ++d) {
    if (d < lead) {
      w.window.push_back(1);
      w.strides.push_back(1);
      w.dilations.push_back(1);
      w.low.push_back(0);
      w.high.push_back(0);
      w.declaredHigh.push_back(0);
      continue;
    }
    int64_t i = d - lead;
    int64_t dil = dilation.empty() ? 1 : dilation[i];
    int64_t extent = dil * (kernel[i] - 1) + 1;
    int64_t lo = padding[2 * i];
    int64_t needed = (resultShape[d] - 1) * stride[i] + extent - inputShape[d] - lo;
    w.window.push_back(kernel[i]);
    w.strides.push_back(stride[i]);
    w.dilations.push_back(dil);
    w.low.push_back(lo);
    w.high.push_back(std::max<int64_t>(needed, 0));
    w.declaredHigh.push_back(padding[2 * i + 1]);
  }
  return w;
}

FailureOr<Value> lowerMaxPool(MaxPoolOp op, MaxPoolOp::Adaptor adaptor,
                              HloBuilder &h) {
  // reduce_window pads with its init value, -inf: PyTorch's max_pool padding.
  Value x = adaptor.getInput();
  auto resultType = cast<RankedTensorType>(op.getType());
  PoolWindow w = poolWindow(shapeOf(x), resultType.getShape(), op.getKernel(),
                            op.getStride(), op.getPadding(), op.getDilation());
  return h.reduceWindow(x, h.lowest(elementOf(x)), resultType, w.window,
                        w.strides, w.dilations, w.low, w.high, "maximum");
}

/// avg_pool: a window sum divided by a window count. The count is the same
/// window sum over ones that are padded with ones where the declared padding
/// counts (count_include_pad) and with zeros beyond, so a ceil_mode window
/// that runs past the padding divides by what PyTorch divides by.
FailureOr<Value> lowerAvgPool(AvgPoolOp op, AvgPoolOp::Adaptor adaptor,
                              HloBuilder &h) {
  Value x = adaptor.getInput();
  auto resultType = cast<RankedTensorType>(op.getType());
  Type element = resultType.getElementType();
  Type acc = accumulatorType(element);
  x = h.convert(x, acc);
  auto inputType = cast<RankedTensorType>(x.getType());
  PoolWindow w = poolWindow(inputType.getShape(), resultType.getShape(),
                            op.getKernel(), op.getStride(), op.getPadding(), {});
  auto accResult = resultType.clone(acc);
  Value sum = h.reduceWindow(x, h.scalar(acc, 0), accResult, w.window,
                             w.strides, w.dilations, w.low, w.high, "add");
  // The count: ones padded explicitly by the declared padding, then the
  // extra ceil_mode padding (or a crop) as zeros.
  int64_t rank = inputType.getRank();
  SmallVector<int64_t> paddedShape, zeros(rank, 0), extraHigh;
  for (int64_t d = 0; d < rank; ++d) {
    paddedShape.push_back(inputType.getDimSize(d) + w.low[d] + w.declaredHigh[d]);
    extraHigh.push_back(std::max<int64_t>(w.high[d] - w.declaredHigh[d], 0));
  }
  Value paddedOnes = h.splat(inputType, 1);
  if (llvm::any_of(w.low, [](int64_t p) { return p != 0; }) ||
      llvm::any_of(w.declaredHigh, [](int64_t p) { return p != 0; })) {
    Value padValue = h.scalar(acc, op.getCountIncludePad() ? 1 : 0);
    paddedOnes =
        h.op("pad", {paddedOnes, padValue}, tensorOf(paddedShape, acc),
             {h.attr("edge_padding_low", h.i64Array(w.low)),
              h.attr("edge_padding_high", h.i64Array(w.declaredHigh)),
              h.attr("interior_padding", h.i64Array(zeros))});
  }
  Value count = h.reduceWindow(paddedOnes, h.scalar(acc, 0), accResult,
                               w.window, w.strides, w.dilations, zeros,
                               extraHigh, "add");
  return h.convert(h.div(sum, count), element);
}

} // namespace

void mlir::thunder::stablehlo::populateLinalgPatterns(RewritePatternSet &patterns) {
  addLowering<MatmulOp>(patterns, lowerMatmul);
  addLowering<ConvolutionOp>(patterns, lowerConvolution);
  addLowering<MaxPoolOp>(patterns, lowerMaxPool);
  addLowering<AvgPoolOp>(patterns, lowerAvgPool);
}
