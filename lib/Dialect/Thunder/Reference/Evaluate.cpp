//===- Evaluate.cpp - Dispatch of thunder ops to their reference function -===//
//
// The one table from an op to the function of Ops.h that computes it, read
// both by isEvaluable() and by evaluate(), so the two cannot disagree.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/Reference/Ops.h"

#include "thunder/Dialect/Thunder/IR/ThunderOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <functional>

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::reference;

namespace {
using Operands = ArrayRef<const Tensor *>;
using EvalFn = std::function<FailureOr<Tensor>(Operands, RankedTensorType)>;

/// An EvalFn from fn(operand, type).
template <typename Fn>
EvalFn unary(Fn fn) {
  return [=](Operands operands, RankedTensorType type) -> FailureOr<Tensor> {
    return fn(*operands[0], type);
  };
}

/// An EvalFn from fn(lhs, rhs, type).
template <typename Fn>
EvalFn binary(Fn fn) {
  return [=](Operands operands, RankedTensorType type) -> FailureOr<Tensor> {
    return fn(*operands[0], *operands[1], type);
  };
}
} // namespace

static std::optional<double> toDouble(std::optional<llvm::APFloat> value) {
  if (!value)
    return std::nullopt;
  return value->convertToDouble();
}

/// The function that evaluates `op`, or null. Attributes are read here, so
/// the functions of Ops.h take plain values.
static EvalFn lookup(Operation *op) {
  using T = RankedTensorType;
  return llvm::TypeSwitch<Operation *, EvalFn>(op)
      // Data movement and gathers.
      .Case([](ReshapeOp) { return unary(evalReshapeOp); })
      .Case([](TransposeOp o) {
        ArrayRef<int64_t> permutation = o.getPermutation();
        return unary([=](const Tensor &x, T type) {
          return evalTransposeOp(x, permutation, type);
        });
      })
      .Case([](BroadcastOp o) {
        ArrayRef<int64_t> dims = o.getBroadcastDims();
        return unary([=](const Tensor &x, T type) {
          return evalBroadcastOp(x, dims, type);
        });
      })
      .Case([](ExpandOp) { return unary(evalExpandOp); })
      .Case([](SliceOp o) {
        ArrayRef<int64_t> start = o.getStart(), step = o.getStep();
        return unary([=](const Tensor &x, T type) {
          return evalSliceOp(x, start, step, type);
        });
      })
      .Case([](ConcatOp o) {
        int64_t dim = o.getDim();
        return EvalFn([=](Operands operands, T type) -> FailureOr<Tensor> {
          return evalConcatOp(operands, dim, type);
        });
      })
      .Case([](PadOp o) {
        ArrayRef<int64_t> low = o.getLow();
        double value = o.getValue().convertToDouble();
        return unary([=](const Tensor &x, T type) {
          return evalPadOp(x, low, value, type);
        });
      })
      .Case([](GatherOp o) {
        int64_t dim = o.getDim();
        return binary([=](const Tensor &x, const Tensor &index, T type) {
          return evalGatherOp(x, index, dim, type);
        });
      })
      .Case([](IndexSelectOp o) {
        int64_t dim = o.getDim();
        return binary([=](const Tensor &x, const Tensor &index, T type) {
          return evalIndexSelectOp(x, index, dim, type);
        });
      })
      .Case([](EmbeddingOp) { return binary(evalEmbeddingOp); })
      // Unary elementwise.
      .Case([](NegOp) { return unary(evalNegOp); })
      .Case([](AbsOp) { return unary(evalAbsOp); })
      .Case([](ReluOp) { return unary(evalReluOp); })
      .Case([](ExpOp) { return unary(evalExpOp); })
      .Case([](LogOp) { return unary(evalLogOp); })
      .Case([](Log1pOp) { return unary(evalLog1pOp); })
      .Case([](SqrtOp) { return unary(evalSqrtOp); })
      .Case([](RsqrtOp) { return unary(evalRsqrtOp); })
      .Case([](ReciprocalOp) { return unary(evalReciprocalOp); })
      .Case([](TanhOp) { return unary(evalTanhOp); })
      .Case([](SigmoidOp) { return unary(evalSigmoidOp); })
      .Case([](ErfOp) { return unary(evalErfOp); })
      .Case([](SinOp) { return unary(evalSinOp); })
      .Case([](CosOp) { return unary(evalCosOp); })
      .Case([](FloorOp) { return unary(evalFloorOp); })
      .Case([](CeilOp) { return unary(evalCeilOp); })
      .Case([](SiluOp) { return unary(evalSiluOp); })
      .Case([](GeluOp o) {
        GeluApproximation approximation = o.getApproximate();
        return unary([=](const Tensor &x, T type) {
          return evalGeluOp(x, approximation, type);
        });
      })
      .Case([](LogicalNotOp) { return unary(evalLogicalNotOp); })
      // Binary elementwise.
      .Case([](AddOp) { return binary(evalAddOp); })
      .Case([](SubOp) { return binary(evalSubOp); })
      .Case([](MulOp) { return binary(evalMulOp); })
      .Case([](DivOp o) {
        RoundingMode mode = o.getRoundingMode();
        return binary([=](const Tensor &a, const Tensor &b, T type) {
          return evalDivOp(a, b, mode, type);
        });
      })
      .Case([](MaximumOp) { return binary(evalMaximumOp); })
      .Case([](MinimumOp) { return binary(evalMinimumOp); })
      .Case([](RemainderOp) { return binary(evalRemainderOp); })
      .Case([](PowOp) { return binary(evalPowOp); })
      .Case([](LogicalAndOp) { return binary(evalLogicalAndOp); })
      .Case([](LogicalOrOp) { return binary(evalLogicalOrOp); })
      .Case([](LogicalXorOp) { return binary(evalLogicalXorOp); })
      // Compare, where, clamp, convert.
      .Case([](CompareOp o) {
        ComparisonDirection direction = o.getDirection();
        return binary([=](const Tensor &a, const Tensor &b, T type) {
          return evalCompareOp(a, b, direction, type);
        });
      })
      .Case([](WhereOp) {
        return EvalFn([](Operands operands, T type) -> FailureOr<Tensor> {
          return evalWhereOp(*operands[0], *operands[1], *operands[2], type);
        });
      })
      .Case([](ClampOp o) {
        std::optional<double> lo = toDouble(o.getMin()), hi = toDouble(o.getMax());
        return unary([=](const Tensor &x, T type) {
          return evalClampOp(x, lo, hi, type);
        });
      })
      .Case([](ConvertOp) { return unary(evalConvertOp); })
      // Reductions.
      .Case([](SumOp o) {
        ArrayRef<int64_t> dims = o.getDims();
        return unary([=](const Tensor &x, T type) { return evalSumOp(x, dims, type); });
      })
      .Case([](MeanOp o) {
        ArrayRef<int64_t> dims = o.getDims();
        return unary([=](const Tensor &x, T type) { return evalMeanOp(x, dims, type); });
      })
      .Case([](MaxOp o) {
        ArrayRef<int64_t> dims = o.getDims();
        return unary([=](const Tensor &x, T type) { return evalMaxOp(x, dims, type); });
      })
      .Case([](MinOp o) {
        ArrayRef<int64_t> dims = o.getDims();
        return unary([=](const Tensor &x, T type) { return evalMinOp(x, dims, type); });
      })
      .Case([](ProdOp o) {
        ArrayRef<int64_t> dims = o.getDims();
        return unary([=](const Tensor &x, T type) { return evalProdOp(x, dims, type); });
      })
      .Default([](Operation *) { return EvalFn(); });
}

bool reference::isEvaluable(Operation *op) { return static_cast<bool>(lookup(op)); }

FailureOr<Tensor> reference::evaluate(Operation *op,
                                      ArrayRef<const Tensor *> operands) {
  if (op->getNumResults() != 1 || operands.size() != op->getNumOperands() ||
      operands.empty() || llvm::is_contained(operands, nullptr))
    return failure();
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return failure();
  EvalFn fn = lookup(op);
  if (!fn)
    return failure();
  return fn(operands, type);
}
