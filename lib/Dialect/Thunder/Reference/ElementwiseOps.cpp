//===- ElementwiseOps.cpp - Reference semantics of elementwise ops --------===//
//
// Each elementwise op maps its scalar function (Scalar.h) over the elements
// of its operands, which have the result's shape; all the semantics is in
// the scalar functions.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/Reference/Ops.h"
#include "thunder/Dialect/Thunder/Reference/Scalar.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::reference;

/// A result of `type` that is a splat when every operand is.
static Tensor allocateLike(RankedTensorType type,
                           ArrayRef<const Tensor *> operands) {
  bool splat = llvm::all_of(
      operands, [](const Tensor *operand) { return operand->isSplat(); });
  return Tensor::allocate(type, splat);
}

/// result[i] = fn(x[i]) for every element; fails when one does.
template <typename Fn>
static FailureOr<Tensor> mapUnary(const Tensor &x, RankedTensorType type,
                                  Fn fn) {
  Tensor result = allocateLike(type, {&x});
  for (int64_t i = 0, n = result.getNumStored(); i < n; ++i) {
    FailureOr<Element> value = fn(x.get(i));
    if (failed(value))
      return failure();
    result.set(i, *value);
  }
  return result;
}

/// result[i] = fn(lhs[i], rhs[i]) for every element; fails when one does.
template <typename Fn>
static FailureOr<Tensor> mapBinary(const Tensor &lhs, const Tensor &rhs,
                                   RankedTensorType type, Fn fn) {
  Tensor result = allocateLike(type, {&lhs, &rhs});
  for (int64_t i = 0, n = result.getNumStored(); i < n; ++i) {
    FailureOr<Element> value = fn(lhs.get(i), rhs.get(i));
    if (failed(value))
      return failure();
    result.set(i, *value);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

FailureOr<Tensor> reference::evalNegOp(const Tensor &x, RankedTensorType type) {
  return mapUnary(x, type, reference::negate);
}

FailureOr<Tensor> reference::evalAbsOp(const Tensor &x, RankedTensorType type) {
  return mapUnary(x, type, reference::abs);
}

FailureOr<Tensor> reference::evalReluOp(const Tensor &x, RankedTensorType type) {
  return mapUnary(x, type, reference::relu);
}

FailureOr<Tensor> reference::evalExpOp(const Tensor &x, RankedTensorType type) {
  return mapUnary(x, type, reference::exp);
}

FailureOr<Tensor> reference::evalLogOp(const Tensor &x, RankedTensorType type) {
  return mapUnary(x, type, reference::log);
}

FailureOr<Tensor> reference::evalLog1pOp(const Tensor &x,
                                         RankedTensorType type) {
  return mapUnary(x, type, reference::log1p);
}

FailureOr<Tensor> reference::evalSqrtOp(const Tensor &x, RankedTensorType type) {
  return mapUnary(x, type, reference::sqrt);
}

FailureOr<Tensor> reference::evalRsqrtOp(const Tensor &x,
                                         RankedTensorType type) {
  return mapUnary(x, type, reference::rsqrt);
}

FailureOr<Tensor> reference::evalReciprocalOp(const Tensor &x,
                                              RankedTensorType type) {
  return mapUnary(x, type, reference::reciprocal);
}

FailureOr<Tensor> reference::evalTanhOp(const Tensor &x, RankedTensorType type) {
  return mapUnary(x, type, reference::tanh);
}

FailureOr<Tensor> reference::evalSigmoidOp(const Tensor &x,
                                           RankedTensorType type) {
  return mapUnary(x, type, reference::sigmoid);
}

FailureOr<Tensor> reference::evalErfOp(const Tensor &x, RankedTensorType type) {
  return mapUnary(x, type, reference::erf);
}

FailureOr<Tensor> reference::evalSinOp(const Tensor &x, RankedTensorType type) {
  return mapUnary(x, type, reference::sin);
}

FailureOr<Tensor> reference::evalCosOp(const Tensor &x, RankedTensorType type) {
  return mapUnary(x, type, reference::cos);
}

FailureOr<Tensor> reference::evalFloorOp(const Tensor &x,
                                         RankedTensorType type) {
  return mapUnary(x, type, reference::floor);
}

FailureOr<Tensor> reference::evalCeilOp(const Tensor &x, RankedTensorType type) {
  return mapUnary(x, type, reference::ceil);
}

FailureOr<Tensor> reference::evalSiluOp(const Tensor &x, RankedTensorType type) {
  return mapUnary(x, type, reference::silu);
}

FailureOr<Tensor> reference::evalGeluOp(const Tensor &x,
                                        GeluApproximation approximation,
                                        RankedTensorType type) {
  return mapUnary(x, type,
                  [=](const Element &e) { return gelu(e, approximation); });
}

FailureOr<Tensor> reference::evalLogicalNotOp(const Tensor &x,
                                              RankedTensorType type) {
  return mapUnary(x, type, reference::logicalNot);
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

FailureOr<Tensor> reference::evalAddOp(const Tensor &lhs, const Tensor &rhs,
                                       RankedTensorType type) {
  return mapBinary(lhs, rhs, type, reference::add);
}

FailureOr<Tensor> reference::evalSubOp(const Tensor &lhs, const Tensor &rhs,
                                       RankedTensorType type) {
  return mapBinary(lhs, rhs, type, reference::subtract);
}

FailureOr<Tensor> reference::evalMulOp(const Tensor &lhs, const Tensor &rhs,
                                       RankedTensorType type) {
  return mapBinary(lhs, rhs, type, reference::multiply);
}

FailureOr<Tensor> reference::evalDivOp(const Tensor &lhs, const Tensor &rhs,
                                       RoundingMode mode,
                                       RankedTensorType type) {
  return mapBinary(lhs, rhs, type, [=](const Element &a, const Element &b) {
    return divide(a, b, mode);
  });
}

FailureOr<Tensor> reference::evalMaximumOp(const Tensor &lhs, const Tensor &rhs,
                                           RankedTensorType type) {
  return mapBinary(lhs, rhs, type, reference::maximum);
}

FailureOr<Tensor> reference::evalMinimumOp(const Tensor &lhs, const Tensor &rhs,
                                           RankedTensorType type) {
  return mapBinary(lhs, rhs, type, reference::minimum);
}

FailureOr<Tensor> reference::evalRemainderOp(const Tensor &lhs,
                                             const Tensor &rhs,
                                             RankedTensorType type) {
  return mapBinary(lhs, rhs, type, reference::remainder);
}

FailureOr<Tensor> reference::evalPowOp(const Tensor &lhs, const Tensor &rhs,
                                       RankedTensorType type) {
  return mapBinary(lhs, rhs, type, reference::power);
}

FailureOr<Tensor> reference::evalLogicalAndOp(const Tensor &lhs,
                                              const Tensor &rhs,
                                              RankedTensorType type) {
  return mapBinary(lhs, rhs, type, reference::logicalAnd);
}

FailureOr<Tensor> reference::evalLogicalOrOp(const Tensor &lhs,
                                             const Tensor &rhs,
                                             RankedTensorType type) {
  return mapBinary(lhs, rhs, type, reference::logicalOr);
}

FailureOr<Tensor> reference::evalLogicalXorOp(const Tensor &lhs,
                                              const Tensor &rhs,
                                              RankedTensorType type) {
  return mapBinary(lhs, rhs, type, reference::logicalXor);
}

//===----------------------------------------------------------------------===//
// Compare, where, clamp, convert
//===----------------------------------------------------------------------===//

Tensor reference::evalCompareOp(const Tensor &lhs, const Tensor &rhs,
                                ComparisonDirection direction,
                                RankedTensorType type) {
  return *mapBinary(lhs, rhs, type, [=](const Element &a, const Element &b) {
    return FailureOr<Element>(compare(direction, a, b));
  });
}

Tensor reference::evalWhereOp(const Tensor &condition, const Tensor &onTrue,
                              const Tensor &onFalse, RankedTensorType type) {
  Tensor result = allocateLike(type, {&condition, &onTrue, &onFalse});
  for (int64_t i = 0, n = result.getNumStored(); i < n; ++i)
    result.set(i, select(condition.get(i), onTrue.get(i), onFalse.get(i)));
  return result;
}

FailureOr<Tensor> reference::evalClampOp(const Tensor &x,
                                         std::optional<double> lo,
                                         std::optional<double> hi,
                                         RankedTensorType type) {
  return mapUnary(x, type,
                  [=](const Element &e) { return clamp(e, lo, hi); });
}

FailureOr<Tensor> reference::evalConvertOp(const Tensor &x,
                                           RankedTensorType type) {
  Type to = type.getElementType();
  return mapUnary(x, type, [=](const Element &e) { return convert(e, to); });
}
