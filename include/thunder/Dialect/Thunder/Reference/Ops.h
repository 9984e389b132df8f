//===- Ops.h - The reference semantics of each thunder op -------*- C++ -*-===//
//
// One function per op of the thunder dialect that the reference interpreter
// evaluates, over Tensors, with the op's attributes as plain arguments and
// the result type given (shapes are the verifier's, already checked).
// Elementwise ops map the scalar functions of Scalar.h over their operands,
// which have the result's shape (broadcasts are explicit ops); a splat in
// gives a splat out when every operand is one. A failure means a value has
// no definition in PyTorch (see Scalar.h) or an index is out of range.
//
// evaluate() dispatches an Operation to its function: the entry point of
// constant folding (thunder-fold-weights) and of tests that use the
// interpreter as an oracle.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_DIALECT_THUNDER_REFERENCE_OPS_H
#define THUNDER_DIALECT_THUNDER_REFERENCE_OPS_H

#include "thunder/Dialect/Thunder/IR/ThunderDialect.h"
#include "thunder/Dialect/Thunder/Reference/Tensor.h"

#include "mlir/IR/Operation.h"

namespace mlir::thunder::reference {

//===----------------------------------------------------------------------===//
// Data movement and gathers (TensorOps.cpp)
//===----------------------------------------------------------------------===//

/// The same elements in `type`'s shape (no copy).
Tensor evalReshapeOp(const Tensor &operand, RankedTensorType type);
/// Result dim d is operand dim permutation[d].
Tensor evalTransposeOp(const Tensor &operand, ArrayRef<int64_t> permutation,
                       RankedTensorType type);
/// Operand dim i goes to result dim dims[i]; a new or size-1 dim repeats.
Tensor evalBroadcastOp(const Tensor &operand, ArrayRef<int64_t> dims,
                       RankedTensorType type);
/// torch.expand: broadcast to the trailing dims of `type`.
Tensor evalExpandOp(const Tensor &operand, RankedTensorType type);
/// Elements start[d] + i * step[d] of each dim.
Tensor evalSliceOp(const Tensor &operand, ArrayRef<int64_t> start,
                   ArrayRef<int64_t> step, RankedTensorType type);
/// The inputs one after another along `dim`.
Tensor evalConcatOp(ArrayRef<const Tensor *> inputs, int64_t dim,
                    RankedTensorType type);
/// `low[d]` elements of `value` before the operand in each dim (negative
/// crops), the rest of `type` after it filled with `value` too.
Tensor evalPadOp(const Tensor &operand, ArrayRef<int64_t> low, double value,
                 RankedTensorType type);
/// torch.gather: result[p] = input[p with p[dim] = index[p]].
FailureOr<Tensor> evalGatherOp(const Tensor &input, const Tensor &index,
                               int64_t dim, RankedTensorType type);
/// torch.index_select: result[o, k, i] = input[o, index[k], i] around `dim`.
FailureOr<Tensor> evalIndexSelectOp(const Tensor &input, const Tensor &index,
                                    int64_t dim, RankedTensorType type);
/// Rows of a [N, D] table, shaped [indices..., D].
FailureOr<Tensor> evalEmbeddingOp(const Tensor &table, const Tensor &indices,
                                  RankedTensorType type);

//===----------------------------------------------------------------------===//
// Elementwise (ElementwiseOps.cpp), one per op of Scalar.h
//===----------------------------------------------------------------------===//

FailureOr<Tensor> evalNegOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalAbsOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalReluOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalExpOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalLogOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalLog1pOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalSqrtOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalRsqrtOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalReciprocalOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalTanhOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalSigmoidOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalErfOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalSinOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalCosOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalFloorOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalCeilOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalSiluOp(const Tensor &x, RankedTensorType type);
FailureOr<Tensor> evalGeluOp(const Tensor &x, GeluApproximation approximation,
                             RankedTensorType type);
FailureOr<Tensor> evalLogicalNotOp(const Tensor &x, RankedTensorType type);

FailureOr<Tensor> evalAddOp(const Tensor &lhs, const Tensor &rhs,
                            RankedTensorType type);
FailureOr<Tensor> evalSubOp(const Tensor &lhs, const Tensor &rhs,
                            RankedTensorType type);
FailureOr<Tensor> evalMulOp(const Tensor &lhs, const Tensor &rhs,
                            RankedTensorType type);
FailureOr<Tensor> evalDivOp(const Tensor &lhs, const Tensor &rhs,
                            RoundingMode mode, RankedTensorType type);
FailureOr<Tensor> evalMaximumOp(const Tensor &lhs, const Tensor &rhs,
                                RankedTensorType type);
FailureOr<Tensor> evalMinimumOp(const Tensor &lhs, const Tensor &rhs,
                                RankedTensorType type);
FailureOr<Tensor> evalRemainderOp(const Tensor &lhs, const Tensor &rhs,
                                  RankedTensorType type);
FailureOr<Tensor> evalPowOp(const Tensor &lhs, const Tensor &rhs,
                            RankedTensorType type);
FailureOr<Tensor> evalLogicalAndOp(const Tensor &lhs, const Tensor &rhs,
                                   RankedTensorType type);
FailureOr<Tensor> evalLogicalOrOp(const Tensor &lhs, const Tensor &rhs,
                                  RankedTensorType type);
FailureOr<Tensor> evalLogicalXorOp(const Tensor &lhs, const Tensor &rhs,
                                   RankedTensorType type);

Tensor evalCompareOp(const Tensor &lhs, const Tensor &rhs,
                     ComparisonDirection direction, RankedTensorType type);
Tensor evalWhereOp(const Tensor &condition, const Tensor &onTrue,
                   const Tensor &onFalse, RankedTensorType type);
FailureOr<Tensor> evalClampOp(const Tensor &x, std::optional<double> lo,
                              std::optional<double> hi, RankedTensorType type);
FailureOr<Tensor> evalConvertOp(const Tensor &x, RankedTensorType type);

//===----------------------------------------------------------------------===//
// Reductions (ReductionOps.cpp) over `dims`, kept or not as `type` says
//===----------------------------------------------------------------------===//

/// Float sums accumulate in double and round once (PyTorch's order of
/// summation differs between its kernels); integers wrap. Empty: 0.
FailureOr<Tensor> evalSumOp(const Tensor &input, ArrayRef<int64_t> dims,
                            RankedTensorType type);
/// The double sum divided by the count (empty: NaN); floats only.
FailureOr<Tensor> evalMeanOp(const Tensor &input, ArrayRef<int64_t> dims,
                             RankedTensorType type);
/// NaN wins; an empty max fails, as PyTorch raises.
FailureOr<Tensor> evalMaxOp(const Tensor &input, ArrayRef<int64_t> dims,
                            RankedTensorType type);
FailureOr<Tensor> evalMinOp(const Tensor &input, ArrayRef<int64_t> dims,
                            RankedTensorType type);
/// The product in double (floats) or wrapping (integers). Empty: 1.
FailureOr<Tensor> evalProdOp(const Tensor &input, ArrayRef<int64_t> dims,
                             RankedTensorType type);

//===----------------------------------------------------------------------===//
// Dispatch (Evaluate.cpp)
//===----------------------------------------------------------------------===//

/// Whether evaluate() computes `op` (whatever its operands' values).
bool isEvaluable(Operation *op);

/// The single result of `op` from its operands' values (one per operand, in
/// order). Fails when `op` is not evaluable, its result type is not a static
/// tensor of integers or floats, or the op's function fails.
FailureOr<Tensor> evaluate(Operation *op, ArrayRef<const Tensor *> operands);

} // namespace mlir::thunder::reference

#endif // THUNDER_DIALECT_THUNDER_REFERENCE_OPS_H
