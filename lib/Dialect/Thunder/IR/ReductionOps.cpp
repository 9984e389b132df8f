//===- ReductionOps.cpp - Reductions of the `thunder` dialect -------------===//
//
// Shape inference for sum/mean/max/min/prod and argmax/argmin; cumsum; the
// ReductionOpInterface those five implement.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"

#include "OpUtils.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::detail;

#include "thunder/Dialect/Thunder/IR/ThunderInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/ReductionOps.cpp.inc"

bool ReductionOpInterface::reducesTrailingDims() {
  int64_t rank = cast<RankedTensorType>(getInput().getType()).getRank();
  SmallVector<int64_t> sorted(getDims());
  llvm::sort(sorted);
  for (auto [i, d] : llvm::enumerate(sorted))
    if (d != rank - static_cast<int64_t>(sorted.size()) + static_cast<int64_t>(i))
      return false;
  return true;
}

/// Checks reduce_c1..reduce_c3 and infers the reduced type.
static LogicalResult inferReduction(std::optional<Location> loc,
                                    StringRef name, Value input,
                                    ArrayRef<int64_t> dims, bool keepdim,
                                    SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(input.getType());
  // reduce_c1
  if (dims.empty())
    return inferError(loc, name, "expects at least one reduced dim");
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t d : dims) {
    // reduce_c2
    if (d < 0 || d >= type.getRank())
      return inferError(loc, name,
                        "expects reduced dims in [0, " + Twine(type.getRank()) +
                            "), got " + Twine(d));
    // reduce_c3
    if (!seen.insert(d).second)
      return inferError(loc, name,
                        "expects each reduced dim once, got " + Twine(d) +
                            " twice");
  }
  ::thunder::ShapeResult shape =
      ::thunder::reduceShape(toShape(type), toVector(dims), keepdim);
  if (!shape.ok())
    return inferError(loc, name, shape.error);
  inferred.push_back(RankedTensorType::get(shape.shape, type.getElementType()));
  return success();
}

#define THUNDER_REDUCE_INFER(OP)                                               \
  LogicalResult OP::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> loc,              \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &inferred) {        \
    return inferReduction(loc, getOperationName(), adaptor.getInput(),         \
                          adaptor.getDims(), adaptor.getKeepdim(), inferred);  \
  }
THUNDER_REDUCE_INFER(SumOp)
THUNDER_REDUCE_INFER(MeanOp)
THUNDER_REDUCE_INFER(MaxOp)
THUNDER_REDUCE_INFER(MinOp)
THUNDER_REDUCE_INFER(ProdOp)
#undef THUNDER_REDUCE_INFER

/// argreduce_c1, then the i64 result with `dim` removed or kept.
static LogicalResult inferArgReduction(std::optional<Location> loc,
                                       StringRef name, Value input, int64_t dim,
                                       bool keepdim,
                                       SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(input.getType());
  if (dim < 0 || dim >= type.getRank())
    return inferError(loc, name,
                      "expects dim in [0, " + Twine(type.getRank()) +
                          "), got " + Twine(dim));
  ::thunder::ShapeResult shape =
      ::thunder::reduceShape(toShape(type), {dim}, keepdim);
  if (!shape.ok())
    return inferError(loc, name, shape.error);
  inferred.push_back(RankedTensorType::get(
      shape.shape, IntegerType::get(input.getContext(), 64)));
  return success();
}

LogicalResult ArgMaxOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferArgReduction(loc, getOperationName(), adaptor.getInput(),
                           static_cast<int64_t>(adaptor.getDim()), adaptor.getKeepdim(), inferred);
}

LogicalResult ArgMinOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferArgReduction(loc, getOperationName(), adaptor.getInput(),
                           static_cast<int64_t>(adaptor.getDim()), adaptor.getKeepdim(), inferred);
}

LogicalResult CumsumOp::verify() {
  int64_t rank = getType().getRank();
  int64_t dim = static_cast<int64_t>(getDim());
  // cumsum_c1
  if (dim < 0 || dim >= std::max<int64_t>(rank, 1))
    return emitOpError("expects dim in [0, ") << std::max<int64_t>(rank, 1)
                                              << "), got " << dim;
  return success();
}

LogicalResult ArgSortOp::verify() {
  auto input = getInput().getType();
  int64_t rank = input.getRank(), dim = static_cast<int64_t>(getDim());
  // argsort_c1
  if (dim < 0 || dim >= std::max<int64_t>(rank, 1))
    return emitOpError("expects dim in [0, ") << std::max<int64_t>(rank, 1) << "), got "
                                              << dim;
  // argsort_c2
  if (getType().getShape() != input.getShape())
    return emitOpError("expects a result of the input's shape");
  return success();
}
