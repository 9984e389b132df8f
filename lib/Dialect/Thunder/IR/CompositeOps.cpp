//===- CompositeOps.cpp - Softmax, normalizations, attention --------------===//
//
// Verifiers of the composite ops. Their decompositions live in
// lib/Dialect/Thunder/Transforms/DecomposeComposites.cpp.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"

#include "OpUtils.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::detail;

#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/CompositeOps.cpp.inc"

template <typename OpTy> static LogicalResult verifySoftmaxLike(OpTy op) {
  int64_t rank = op.getType().getRank();
  // softmax_c1
  if (static_cast<int64_t>(op.getDim()) < 0 || static_cast<int64_t>(op.getDim()) >= rank)
    return op.emitOpError("expects dim in [0, ")
           << rank << "), got " << static_cast<int64_t>(op.getDim());
  return success();
}

LogicalResult SoftmaxOp::verify() { return verifySoftmaxLike(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifySoftmaxLike(*this); }

/// norm_c1..norm_c3 for layer_norm and rms_norm: `params` (weight, bias) have
/// the trailing `normalizedRank` dims of the input.
static LogicalResult verifyNorm(Operation *op, RankedTensorType input,
                                int64_t normalizedRank, double epsilon,
                                ArrayRef<std::pair<StringRef, Value>> params) {
  // norm_c1
  if (normalizedRank < 1 || normalizedRank > input.getRank())
    return op->emitOpError("expects normalized_rank in [1, ")
           << input.getRank() << "], got " << normalizedRank;
  ArrayRef<int64_t> normalized =
      input.getShape().take_back(static_cast<size_t>(normalizedRank));
  // norm_c2
  for (auto [name, value] : params) {
    if (!value)
      continue;
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getElementType() != input.getElementType() ||
        failed(verifyCompatibleShape(type.getShape(), normalized)))
      return op->emitOpError("expects ")
             << name << " of the normalized shape "
             << ::thunder::formatShape(toShape(normalized)) << " and element type "
             << input.getElementType() << ", got " << type;
  }
  // norm_c3
  if (!(epsilon >= 0))
    return op->emitOpError("expects epsilon >= 0, got ") << epsilon;
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(*this, getInput().getType(), static_cast<int64_t>(getNormalizedRank()),
                    getEpsilon().convertToDouble(),
                    {{"weight", getWeight()}, {"bias", getBias()}});
}

LogicalResult RmsNormOp::verify() {
  return verifyNorm(*this, getInput().getType(), static_cast<int64_t>(getNormalizedRank()),
                    getEpsilon().convertToDouble(), {{"weight", getWeight()}});
}

LogicalResult BatchNormOp::verify() {
  auto input = getInput().getType();
  // batch_norm_c1
  if (input.getRank() < 2)
    return emitOpError("expects an input of rank >= 2 ([N, C, ...]), got rank ")
           << input.getRank();
  int64_t channels = input.getDimSize(1);
  // batch_norm_c2
  std::pair<StringRef, Value> params[] = {{"mean", getMean()},
                                          {"variance", getVariance()},
                                          {"weight", getWeight()},
                                          {"bias", getBias()}};
  for (auto [name, value] : params) {
    if (!value)
      continue;
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() != 1 || type.getElementType() != input.getElementType() ||
        failed(verifyCompatibleShape(type.getShape(), {channels})))
      return emitOpError("expects ")
             << name << " to be 1-D of size " << ::thunder::formatDim(channels)
             << " (the input's dim 1) with element type "
             << input.getElementType() << ", got " << type;
  }
  // norm_c3
  if (!(getEpsilon().convertToDouble() >= 0))
    return emitOpError("expects epsilon >= 0, got ")
           << getEpsilon().convertToDouble();
  return success();
}

LogicalResult ScaledDotProductAttentionOp::verify() {
  auto q = getQuery().getType(), k = getKey().getType(),
       v = getValue().getType();
  // sdpa_c1
  if (q.getRank() < 2 || k.getRank() != q.getRank() ||
      v.getRank() != q.getRank())
    return emitOpError("expects query, key and value of one rank >= 2, got ")
           << q.getRank() << ", " << k.getRank() << " and " << v.getRank();
  if (k.getElementType() != q.getElementType() ||
      v.getElementType() != q.getElementType())
    return emitOpError("expects query, key and value of one element type, got ")
           << q.getElementType() << ", " << k.getElementType() << " and "
           << v.getElementType();
  int64_t rank = q.getRank();
  // sdpa_c2
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape();
  if (failed(verifyCompatibleShape(qs.drop_back(2), ks.drop_back(2))) ||
      failed(verifyCompatibleShape(qs.drop_back(2), vs.drop_back(2))))
    return emitOpError("expects equal batch dims in query, key and value, got ")
           << ::thunder::formatShape(toShape(q)) << ", "
           << ::thunder::formatShape(toShape(k)) << " and "
           << ::thunder::formatShape(toShape(v));
  if (failed(verifyCompatibleShape({ks[rank - 2]}, {vs[rank - 2]})))
    return emitOpError("expects key and value of one sequence length, got ")
           << ::thunder::formatDim(ks[rank - 2]) << " and "
           << ::thunder::formatDim(vs[rank - 2]);
  if (failed(verifyCompatibleShape({qs[rank - 1]}, {ks[rank - 1]})))
    return emitOpError("expects query and key of one head dim, got ")
           << ::thunder::formatDim(qs[rank - 1]) << " and "
           << ::thunder::formatDim(ks[rank - 1]);
  // sdpa_c3
  SmallVector<int64_t> scores(qs.drop_back(1));
  scores.push_back(ks[rank - 2]);
  if (Value mask = getMask()) {
    auto m = cast<RankedTensorType>(mask.getType());
    bool typeOk = m.getElementType().isInteger(1) ||
                  m.getElementType() == q.getElementType();
    bool shapeOk = m.getRank() == rank;
    for (int64_t d = 0; shapeOk && d < rank; ++d) {
      int64_t md = m.getDimSize(d);
      shapeOk = md == 1 || succeeded(verifyCompatibleShape({md}, {scores[d]}));
    }
    if (!typeOk || !shapeOk)
      return emitOpError("expects a mask of i1 or ")
             << q.getElementType() << " broadcastable to the scores' shape "
             << ::thunder::formatShape(toShape(scores)) << ", got " << m;
  }
  // sdpa_c4
  if (getMask() && getCausal())
    return emitOpError("expects causal or mask, not both");
  // sdpa_c5
  SmallVector<int64_t> out(qs.drop_back(1));
  out.push_back(vs[rank - 1]);
  auto expected = RankedTensorType::get(out, q.getElementType());
  if (getType() != expected)
    return emitOpError("expects result type ")
           << expected << ", got " << getType();
  return success();
}
