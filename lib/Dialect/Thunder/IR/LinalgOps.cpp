//===- LinalgOps.cpp - Matmul, convolution and pooling --------------------===//
//
// Shape inference and canonicalization for contraction and window ops.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"

#include "OpUtils.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::detail;

#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/LinalgOps.cpp.inc"

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  // matmul_c1
  if (lhs.getElementType() != rhs.getElementType())
    return inferError(loc, getOperationName(),
                      "expects operands of one element type, got " +
                          typeStr(lhs.getElementType()) + " and " +
                          typeStr(rhs.getElementType()));
  // matmul_c2..matmul_c4
  ::thunder::ShapeResult shape = ::thunder::matmulShape(
      toShape(lhs), toShape(rhs), adaptor.getTransposeLhs(),
      adaptor.getTransposeRhs());
  if (!shape.ok())
    return inferError(loc, getOperationName(), shape.error);
  inferred.push_back(RankedTensorType::get(shape.shape, lhs.getElementType()));
  return success();
}

/// Whether `perm` swaps the last two dims and keeps the others in place.
static bool isLastTwoSwap(ArrayRef<int64_t> perm) {
  int64_t rank = perm.size();
  if (rank < 2)
    return false;
  for (int64_t d = 0; d < rank - 2; ++d)
    if (perm[d] != d)
      return false;
  return perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2;
}

namespace {
/// matmul(transpose(a), b) -> matmul(a, b) transpose_lhs (and for rhs): the
/// GEMM reads the operand transposed instead of a copy being made.
struct FoldTransposeIntoMatmul : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    bool changed = false;
    Value lhs = op.getLhs(), rhs = op.getRhs();
    bool transposeLhs = op.getTransposeLhs(), transposeRhs = op.getTransposeRhs();
    if (auto t = lhs.getDefiningOp<TransposeOp>();
        t && isLastTwoSwap(t.getPermutation())) {
      lhs = t.getOperand();
      transposeLhs = !transposeLhs;
      changed = true;
    }
    if (auto t = rhs.getDefiningOp<TransposeOp>();
        t && isLastTwoSwap(t.getPermutation())) {
      rhs = t.getOperand();
      transposeRhs = !transposeRhs;
      changed = true;
    }
    if (!changed)
      return rewriter.notifyMatchFailure(op, "no transposed operand");
    rewriter.modifyOpInPlace(op, [&] {
      op.getLhsMutable().assign(lhs);
      op.getRhsMutable().assign(rhs);
      op.setTransposeLhs(transposeLhs);
      op.setTransposeRhs(transposeRhs);
    });
    return success();
  }
};
} // namespace

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<FoldTransposeIntoMatmul>(context);
}

//===----------------------------------------------------------------------===//
// ConvolutionOp
//===----------------------------------------------------------------------===//

LogicalResult ConvolutionOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  StringRef name = getOperationName();
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  int64_t spatial = input.getRank() - 2;
  // conv_c1
  if (spatial < 1 || spatial > 3)
    return inferError(loc, name,
                      "expects an input of rank 3 to 5 ([N, C, 1-3 spatial "
                      "dims]), got rank " +
                          Twine(input.getRank()));
  // conv_c2
  if (weight.getRank() != input.getRank())
    return inferError(loc, name,
                      "expects a weight of the input's rank (" +
                          Twine(input.getRank()) + "), got rank " +
                          Twine(weight.getRank()));
  // conv_c3
  ArrayRef<int64_t> stride = adaptor.getStride(), padding = adaptor.getPadding(),
                    dilation = adaptor.getDilation();
  if (static_cast<int64_t>(stride.size()) != spatial ||
      static_cast<int64_t>(dilation.size()) != spatial ||
      static_cast<int64_t>(padding.size()) != 2 * spatial)
    return inferError(loc, name,
                      "expects " + Twine(spatial) + " strides, " +
                          Twine(spatial) + " dilations and " +
                          Twine(2 * spatial) + " paddings for " +
                          Twine(spatial) + " spatial dims, got " +
                          Twine(stride.size()) + ", " + Twine(dilation.size()) +
                          " and " + Twine(padding.size()));
  // conv_c5
  if (Value bias = adaptor.getBias()) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    int64_t out = weight.getDimSize(0);
    if (biasType.getRank() != 1 ||
        (!ShapedType::isDynamic(out) &&
         !ShapedType::isDynamic(biasType.getDimSize(0)) &&
         biasType.getDimSize(0) != out))
      return inferError(loc, name,
                        "expects a 1-D bias of size " +
                            ::thunder::formatDim(out) + ", got " +
                            typeStr(biasType));
    // conv_c6 (bias)
    if (biasType.getElementType() != input.getElementType())
      return inferError(loc, name,
                        "expects input, weight and bias of one element type, "
                        "got bias " +
                            typeStr(biasType.getElementType()));
  }
  // conv_c6
  if (weight.getElementType() != input.getElementType())
    return inferError(loc, name,
                      "expects input, weight and bias of one element type, "
                      "got " +
                          typeStr(input.getElementType()) + " and " +
                          typeStr(weight.getElementType()));
  // conv_c4, conv_c7
  ::thunder::ShapeResult shape = ::thunder::convShape(
      toShape(input), toShape(weight), toVector(stride), toVector(padding),
      toVector(dilation), static_cast<int64_t>(adaptor.getGroups()));
  if (!shape.ok())
    return inferError(loc, name, shape.error);
  inferred.push_back(RankedTensorType::get(shape.shape, input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// MaxPoolOp, AvgPoolOp
//===----------------------------------------------------------------------===//

/// pool_c1..pool_c3.
static LogicalResult inferPool(std::optional<Location> loc, StringRef name,
                               Value input, ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> stride,
                               ArrayRef<int64_t> padding,
                               ArrayRef<int64_t> dilation, bool ceilMode,
                               SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t window = kernel.size();
  // pool_c1
  if (window < 1 || window > 3 || type.getRank() < window + 1)
    return inferError(loc, name,
                      "expects 1 to 3 window dims and at least one leading "
                      "dim, got a " +
                          Twine(window) + "-d window on rank " +
                          Twine(type.getRank()));
  // pool_c2 (avg_pool has no dilation attribute; its implied dilation of
  // ones always fits)
  if (static_cast<int64_t>(dilation.size()) != window)
    return inferError(loc, name,
                      "expects " + Twine(window) + " dilations for a " +
                          Twine(window) + "-d window, got " +
                          Twine(dilation.size()));
  if (static_cast<int64_t>(stride.size()) != window ||
      static_cast<int64_t>(padding.size()) != 2 * window)
    return inferError(loc, name,
                      "expects " + Twine(window) + " strides and " +
                          Twine(2 * window) + " paddings for a " +
                          Twine(window) + "-d window, got " +
                          Twine(stride.size()) + " and " +
                          Twine(padding.size()));
  // pool_c3
  ::thunder::ShapeResult shape = ::thunder::poolShape(
      toShape(type), toVector(kernel), toVector(stride), toVector(padding),
      toVector(dilation), ceilMode);
  if (!shape.ok())
    return inferError(loc, name, shape.error);
  inferred.push_back(RankedTensorType::get(shape.shape, type.getElementType()));
  return success();
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferPool(loc, getOperationName(), adaptor.getInput(),
                   adaptor.getKernel(), adaptor.getStride(),
                   adaptor.getPadding(), adaptor.getDilation(),
                   adaptor.getCeilMode(), inferred);
}

LogicalResult AvgPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  SmallVector<int64_t> dilation(adaptor.getKernel().size(), 1);
  return inferPool(loc, getOperationName(), adaptor.getInput(),
                   adaptor.getKernel(), adaptor.getStride(),
                   adaptor.getPadding(), dilation, adaptor.getCeilMode(),
                   inferred);
}
