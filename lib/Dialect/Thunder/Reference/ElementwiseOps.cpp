//===- ElementwiseOps.cpp - Reference semantics of elementwise ops --------===//
//
// Each elementwise op maps its scalar function (Scalar.h) over the elements
// of its operands, which have the result's shape; all the semantics is in
// the scalar functions. One exception for speed, checked against them:
// conversions between the host's float types.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/Reference/Ops.h"
#include "thunder/Dialect/Thunder/Reference/Scalar.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstring>

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

namespace {
/// The float types the host converts between exactly as convert() does.
enum class HostFloat { F64, F32, F16, BF16 };
} // namespace

static std::optional<HostFloat> hostFloatOf(Type type) {
  if (type.isF64())
    return HostFloat::F64;
  if (type.isF32())
    return HostFloat::F32;
  if (type.isF16())
    return HostFloat::F16;
  if (type.isBF16())
    return HostFloat::BF16;
  return std::nullopt;
}

/// The value at `p` (exact: every type here widens to double exactly).
static double hostLoad(HostFloat type, const char *p) {
  switch (type) {
  case HostFloat::F64: {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  case HostFloat::F32: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case HostFloat::F16: {
    _Float16 v;
    std::memcpy(&v, p, 2);
    return static_cast<double>(v);
  }
  case HostFloat::BF16: {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    uint32_t wide = static_cast<uint32_t>(bits) << 16;
    float v;
    std::memcpy(&v, &wide, 4);
    return v;
  }
  }
  return 0;
}

/// Stores `v` (not NaN) rounded to nearest even as convert() does: into f16
/// and bf16 through f32.
static void hostStore(HostFloat type, char *p, double v) {
  if (type == HostFloat::F64) {
    std::memcpy(p, &v, 8);
    return;
  }
  float f = static_cast<float>(v);
  if (type == HostFloat::F32) {
    std::memcpy(p, &f, 4);
  } else if (type == HostFloat::F16) {
    _Float16 h = static_cast<_Float16>(f);
    std::memcpy(p, &h, 2);
  } else {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u); // round to nearest even; overflow is inf
    uint16_t bits = static_cast<uint16_t>(u >> 16);
    std::memcpy(p, &bits, 2);
  }
}

/// convert() between f64, f32, f16 and bf16 at host speed, for whole weights
/// (an export under autocast converts every weight): IEEE conversions of the
/// host, which round to nearest even as APFloat does, NaN left to convert()
/// for its payload. ElementwiseOpsTest checks it against convert() on every
/// 16-bit value and on f32 ties, subnormals and overflows.
static std::optional<Tensor> convertFloatsOnHost(const Tensor &x,
                                                 RankedTensorType type) {
  std::optional<HostFloat> from = hostFloatOf(x.getElementType());
  std::optional<HostFloat> to = hostFloatOf(type.getElementType());
  if (!from || !to)
    return std::nullopt;
  Tensor result = allocateLike(type, {&x});
  const char *in = x.getBytes().data();
  char *out = result.getMutableBytes().data();
  int64_t inBytes = x.getElementBytes(), outBytes = result.getElementBytes();
  for (int64_t i = 0, n = result.getNumStored(); i < n; ++i) {
    double v = hostLoad(*from, in + i * inBytes);
    if (std::isnan(v))
      result.set(i, *convert(x.get(i), type.getElementType()));
    else
      hostStore(*to, out + i * outBytes, v);
  }
  return result;
}

FailureOr<Tensor> reference::evalConvertOp(const Tensor &x,
                                           RankedTensorType type) {
  if (std::optional<Tensor> converted = convertFloatsOnHost(x, type))
    return *converted;
  Type to = type.getElementType();
  return mapUnary(x, type, [=](const Element &e) { return convert(e, to); });
}
