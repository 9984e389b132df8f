//===- TensorOps.cpp - Constants, views and data movement -----------------===//
//
// Verifiers, shape inference, folders and canonicalizations for constant,
// weight, iota, broadcast, expand, reshape, transpose, slice, concat, pad and
// the gathers.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"

#include "OpUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::detail;

#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/TensorOps.cpp.inc"

/// Builds the inferred result type, or reports `result.error`.
static LogicalResult
inferFromShape(std::optional<Location> loc, StringRef opName,
               const ::thunder::ShapeResult &result, Type elementType,
               SmallVectorImpl<Type> &inferred) {
  if (!result.ok())
    return inferError(loc, opName, result.error);
  inferred.push_back(RankedTensorType::get(result.shape, elementType));
  return success();
}

//===----------------------------------------------------------------------===//
// ConstantOp, WeightOp, IotaOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult ConstantOp::verify() {
  // constant_c1 is the AllTypesMatch trait.
  // constant_c2
  if (!cast<ShapedType>(getType()).hasStaticShape())
    return emitOpError("expects a static shape, got ") << getType();
  return success();
}

LogicalResult WeightOp::verify() {
  // weight_c1
  if (getName().empty())
    return emitOpError("expects a non-empty weight name");
  // weight_c2
  if (!getType().hasStaticShape())
    return emitOpError("expects a static shape, got ") << getType();
  return success();
}

LogicalResult IotaOp::verify() {
  auto type = getType();
  // iota_c1
  if (static_cast<int64_t>(getDim()) < 0 || static_cast<int64_t>(getDim()) >= type.getRank())
    return emitOpError("expects dim in [0, ")
           << type.getRank() << "), got " << static_cast<int64_t>(getDim());
  // iota_c2
  if (type.getElementType().isInteger(1))
    return emitOpError("expects a numeric element type, got i1");
  return success();
}

//===----------------------------------------------------------------------===//
// BroadcastOp, ExpandOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  auto operandType = getOperand().getType();
  auto resultType = getType();
  // broadcast_c1
  if (operandType.getElementType() != resultType.getElementType())
    return emitOpError("expects the operand and result element types to "
                       "match, got ")
           << operandType.getElementType() << " and "
           << resultType.getElementType();
  // broadcast_c2
  if (static_cast<int64_t>(getBroadcastDims().size()) != operandType.getRank())
    return emitOpError("expects one broadcast dim per operand dim (")
           << operandType.getRank() << "), got " << getBroadcastDims().size();
  // broadcast_c3, broadcast_c4
  std::string why = ::thunder::checkBroadcastInDim(
      toShape(operandType), toShape(resultType), toVector(getBroadcastDims()));
  if (!why.empty())
    return emitOpError(why);
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  auto resultType = getType();
  // An identity broadcast is the operand itself.
  if (getOperand().getType() == resultType &&
      llvm::equal(getBroadcastDims(),
                  llvm::seq<int64_t>(0, resultType.getRank())))
    return getOperand();
  // A broadcast splat is a bigger splat.
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getOperand()))
    if (resultType.hasStaticShape())
      return SplatElementsAttr::get(resultType,
                                    splat.getSplatValue<Attribute>());
  return {};
}

LogicalResult ExpandOp::verify() {
  auto operandType = getOperand().getType();
  auto resultType = getType();
  // expand_c1
  if (operandType.getElementType() != resultType.getElementType())
    return emitOpError("expects the operand and result element types to "
                       "match, got ")
           << operandType.getElementType() << " and "
           << resultType.getElementType();
  // expand_c2, expand_c3
  std::string why =
      ::thunder::checkExpand(toShape(operandType), toShape(resultType));
  if (!why.empty())
    return emitOpError(why);
  return success();
}

namespace {
/// expand is a broadcast whose operand dims map to the trailing result dims.
struct ExpandToBroadcast : OpRewritePattern<ExpandOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ExpandOp op,
                                PatternRewriter &rewriter) const override {
    int64_t rank = op.getOperand().getType().getRank();
    int64_t offset = op.getType().getRank() - rank;
    SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(offset, offset + rank));
    // Annotations such as thunder.dim_symbols describe the value, which is
    // unchanged. Read them before the replacement erases `op`.
    DictionaryAttr annotations = op->getDiscardableAttrDictionary();
    auto broadcast = rewriter.replaceOpWithNewOp<BroadcastOp>(
        op, op.getType(), op.getOperand(), dims);
    broadcast->setDiscardableAttrs(annotations);
    return success();
  }
};
} // namespace

void ExpandOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<ExpandToBroadcast>(context);
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto operandType = getOperand().getType();
  auto resultType = getType();
  // reshape_c1
  if (operandType.getElementType() != resultType.getElementType())
    return emitOpError("expects the operand and result element types to "
                       "match, got ")
           << operandType.getElementType() << " and "
           << resultType.getElementType();
  // reshape_c2
  if (operandType.hasStaticShape() && resultType.hasStaticShape() &&
      operandType.getNumElements() != resultType.getNumElements())
    return emitOpError("expects the same number of elements, got ")
           << operandType.getNumElements() << " in " << operandType << " and "
           << resultType.getNumElements() << " in " << resultType;
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  // reshape(reshape(x)) -> reshape(x): only the final shape matters.
  if (auto inner = getOperand().getDefiningOp<ReshapeOp>()) {
    getOperandMutable().assign(inner.getOperand());
    return getResult();
  }
  // A reshaped constant is the same data with a new type (no copy for dense
  // data: DenseElementsAttr::reshape shares the storage).
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getOperand()))
    if (getType().hasStaticShape())
      return dense.reshape(getType());
  return {};
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(adaptor.getOperand().getType());
  // transpose_c1
  return inferFromShape(loc, getOperationName(),
                        ::thunder::permuteShape(
                            toShape(type), toVector(adaptor.getPermutation())),
                        type.getElementType(), inferred);
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return getOperand();
  // transpose(transpose(x, p), q) -> transpose(x, p o q).
  if (auto inner = getOperand().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> innerPerm = inner.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t d : perm)
      composed.push_back(innerPerm[d]);
    getOperandMutable().assign(inner.getOperand());
    setPermutation(composed);
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(adaptor.getOperand().getType());
  ArrayRef<int64_t> start = adaptor.getStart(), end = adaptor.getEnd(),
                    step = adaptor.getStep();
  int64_t rank = type.getRank();
  StringRef name = getOperationName();
  // slice_c1
  if (static_cast<int64_t>(start.size()) != rank ||
      static_cast<int64_t>(end.size()) != rank ||
      static_cast<int64_t>(step.size()) != rank)
    return inferError(loc, name,
                      "expects start, end and step to have one entry per dim (" +
                          Twine(rank) + "), got " + Twine(start.size()) + ", " +
                          Twine(end.size()) + " and " + Twine(step.size()));
  for (int64_t d = 0; d < rank; ++d) {
    // slice_c2
    if (step[d] < 1)
      return inferError(loc, name,
                        "expects step >= 1, got " + Twine(step[d]) +
                            " for dim " + Twine(d));
    // slice_c3: on a dynamic dim, a negative start or end counts from the
    // size, so start <= end is known only where both count from the same
    // side.
    int64_t size = type.getDimSize(d);
    if (ShapedType::isDynamic(size)) {
      if ((start[d] < 0) == (end[d] < 0) && start[d] > end[d])
        return inferError(loc, name,
                          "expects start <= end for dim " + Twine(d) +
                              " (both counted from the same side of its dynamic size), "
                              "got start = " + Twine(start[d]) + ", end = " + Twine(end[d]));
    } else if (start[d] < 0 || start[d] > end[d] || end[d] > size) {
      return inferError(loc, name,
                        "expects 0 <= start <= end <= size for dim " +
                            Twine(d) + ", got start = " + Twine(start[d]) +
                            ", end = " + Twine(end[d]) + ", size = " +
                            ::thunder::formatDim(size));
    }
  }
  return inferFromShape(loc, name,
                        ::thunder::sliceShape(toShape(type), toVector(start),
                                              toVector(end), toVector(step)),
                        type.getElementType(), inferred);
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  // A slice that keeps everything is the operand.
  auto type = getOperand().getType();
  if (type != getType() || !type.hasStaticShape())
    return {};
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (getStart()[d] != 0 || getStep()[d] != 1 ||
        getEnd()[d] != type.getDimSize(d))
      return {};
  return getOperand();
}

//===----------------------------------------------------------------------===//
// ConcatOp, PadOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  StringRef name = getOperationName();
  ValueRange inputs = adaptor.getInputs();
  // concat_c1
  if (inputs.empty())
    return inferError(loc, name, "expects at least one input");
  Type element = cast<ShapedType>(inputs[0].getType()).getElementType();
  std::vector<::thunder::Shape> shapes;
  for (auto [i, input] : llvm::enumerate(inputs)) {
    // concat_c2 (element types; ranks are checked with concat_c4 below)
    Type inputElement = cast<ShapedType>(input.getType()).getElementType();
    if (inputElement != element)
      return inferError(loc, name,
                        "expects all inputs to have one element type, got " +
                            typeStr(element) + " (input #0) and " +
                            typeStr(inputElement) + " (input #" + Twine(i) +
                            ")");
    shapes.push_back(toShape(input.getType()));
  }
  // concat_c2 (ranks), concat_c3, concat_c4
  int64_t dim = static_cast<int64_t>(adaptor.getDim());
  int64_t rank = static_cast<int64_t>(shapes[0].size());
  if (dim < 0 || dim >= rank)
    return inferError(loc, name,
                      "expects dim in [0, " + Twine(rank) + "), got " +
                          Twine(dim));
  return inferFromShape(loc, name, ::thunder::concatShape(shapes, dim), element,
                        inferred);
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  return {};
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(adaptor.getOperand().getType());
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh();
  // pad_c1
  if (static_cast<int64_t>(low.size()) != type.getRank() ||
      static_cast<int64_t>(high.size()) != type.getRank())
    return inferError(loc, getOperationName(),
                      "expects low and high to have one entry per dim (" +
                          Twine(type.getRank()) + "), got " + Twine(low.size()) +
                          " and " + Twine(high.size()));
  std::vector<int64_t> padding;
  for (auto [lo, hi] : llvm::zip(low, high)) {
    padding.push_back(lo);
    padding.push_back(hi);
  }
  // pad_c2
  return inferFromShape(loc, getOperationName(),
                        ::thunder::padShape(toShape(type), padding),
                        type.getElementType(), inferred);
}

//===----------------------------------------------------------------------===//
// GatherOp, IndexSelectOp, EmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto index = cast<RankedTensorType>(adaptor.getIndex().getType());
  StringRef name = getOperationName();
  // gather_c1
  if (input.getRank() != index.getRank())
    return inferError(loc, name,
                      "expects input and index of the same rank, got " +
                          Twine(input.getRank()) + " and " +
                          Twine(index.getRank()));
  // gather_c2
  int64_t dim = static_cast<int64_t>(adaptor.getDim());
  if (dim < 0 || dim >= input.getRank())
    return inferError(loc, name,
                      "expects dim in [0, " + Twine(input.getRank()) +
                          "), got " + Twine(dim));
  // gather_c3
  for (int64_t d = 0; d < input.getRank(); ++d) {
    int64_t in = input.getDimSize(d), idx = index.getDimSize(d);
    if (d != dim && !ShapedType::isDynamic(in) && !ShapedType::isDynamic(idx) &&
        idx > in)
      return inferError(loc, name,
                        "expects index dim " + Twine(d) + " (" + Twine(idx) +
                            ") to be at most the input's (" + Twine(in) + ")");
  }
  inferred.push_back(
      RankedTensorType::get(index.getShape(), input.getElementType()));
  return success();
}

LogicalResult IndexSelectOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto index = cast<RankedTensorType>(adaptor.getIndex().getType());
  StringRef name = getOperationName();
  // index_select_c1
  if (index.getRank() != 1)
    return inferError(loc, name,
                      "expects a 1-D index, got rank " + Twine(index.getRank()));
  // index_select_c2
  int64_t dim = static_cast<int64_t>(adaptor.getDim());
  if (dim < 0 || dim >= input.getRank())
    return inferError(loc, name,
                      "expects dim in [0, " + Twine(input.getRank()) +
                          "), got " + Twine(dim));
  return inferFromShape(
      loc, name,
      ::thunder::indexSelectShape(toShape(input), dim, toShape(index)),
      input.getElementType(), inferred);
}

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  // embedding_c1
  if (weight.getRank() != 2)
    return inferError(loc, getOperationName(),
                      "expects a 2-D weight, got rank " +
                          Twine(weight.getRank()));
  return inferFromShape(
      loc, getOperationName(),
      ::thunder::embeddingShape(toShape(weight), toShape(indices)),
      weight.getElementType(), inferred);
}

//===----------------------------------------------------------------------===//
// ScatterOp
//===----------------------------------------------------------------------===//

LogicalResult ScatterOp::verify() {
  auto input = getInput().getType(), index = getIndex().getType(),
       src = getSrc().getType();
  // scatter_c1
  if (input.getRank() != index.getRank() || src.getRank() != index.getRank())
    return emitOpError("expects input, index and src of one rank, got ")
           << input.getRank() << ", " << index.getRank() << " and " << src.getRank();
  // scatter_c2
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim < 0 || dim >= std::max<int64_t>(input.getRank(), 1))
    return emitOpError("expects dim in [0, ") << std::max<int64_t>(input.getRank(), 1)
                                              << "), got " << dim;
  // scatter_c3
  for (int64_t d = 0; d < index.getRank(); ++d) {
    int64_t idx = index.getDimSize(d), s = src.getDimSize(d), in = input.getDimSize(d);
    auto exceeds = [&](int64_t bound) {
      return !ShapedType::isDynamic(idx) && !ShapedType::isDynamic(bound) && idx > bound;
    };
    if (exceeds(s) || (d != dim && exceeds(in)))
      return emitOpError("expects index dim ")
             << d << " (" << idx << ") to be at most src's" << (d != dim ? " and input's" : "");
  }
  // scatter_c4
  if (!llvm::is_contained({"none", "sum", "prod", "amax", "amin", "mean"}, getReduce()))
    return emitOpError("expects reduce none, sum, prod, amax, amin or mean, got '")
           << getReduce() << "'";
  return success();
}
