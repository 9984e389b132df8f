// Shape inference rules for Thunder's ops, shared by the verifiers, the importer and the runtime.
//
// This header is deliberately framework-free (standard library only, no exceptions) so that the
// runtime can reuse it without MLIR. Every function that can fail returns its reason as text
// instead of asserting: shapes reach these functions straight from user programs.
//
// Conventions:
//  * A dim equal to kDynamic is unknown at compile time ("?" when printed). Two dims are
//    compatible when they are equal or either is dynamic; checks between a dynamic and a static
//    dim pass here and are left to runtime.
//  * Error strings are lowercase English clauses without a trailing period that name the
//    offending dim and values, e.g. "dim 1 of the operands is 3 and 4, which do not broadcast".
//    Callers prefix them (`emitOpError() << "expects ...: " << error`).
//  * Padding vectors are [lo0, hi0, lo1, hi1, ...], in dim order.
#ifndef THUNDER_SUPPORT_SHAPEMATH_H
#define THUNDER_SUPPORT_SHAPEMATH_H

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace thunder {

/// Same value as mlir::ShapedType::kDynamic: a dim whose size is not known at compile time.
inline constexpr int64_t kDynamic = std::numeric_limits<int64_t>::min();

/// A tensor shape: one size per dim, each >= 0 or kDynamic.
using Shape = std::vector<int64_t>;

/// A computed shape, or why it cannot be computed. error is a complete English clause
/// suitable to follow "expects ..."/ to be shown to a user, e.g. "dim 1 of the operands is 3
/// and 4, which do not broadcast". When error is non-empty, shape is unspecified (empty).
struct ShapeResult {
  Shape shape;
  std::string error;
  bool ok() const { return error.empty(); }
};

/// Prints a shape as "[2, ?, 4]" (dynamic dims as "?"); the rank-0 shape is "[]".
std::string formatShape(const Shape &shape);

/// Prints one dim: its size, or "?" when dynamic.
std::string formatDim(int64_t dim);

/// Whether no dim of `shape` is dynamic.
bool isStatic(const Shape &shape);

/// The product of the dims (1 for rank 0), or kDynamic if any dim is dynamic.
int64_t numElements(const Shape &shape);

/// Whether two dims can be equal at runtime: equal, or either one dynamic.
bool areCompatibleDims(int64_t a, int64_t b);

/// Whether two shapes have the same rank and pairwise compatible dims. Verifiers use this to
/// compare a computed shape with a declared result type.
bool areCompatibleShapes(const Shape &a, const Shape &b);

/// Normalize a possibly-negative dim index into [0, rank); returns -1 when out of range
/// (always for rank 0).
int64_t normalizeDim(int64_t dim, int64_t rank);

/// PyTorch/NumPy broadcasting (right-aligned). Dynamic dims: ? with 1 -> ?, ? with n (n != 1)
/// -> n, ? with ? -> ?.
ShapeResult broadcastShapes(const Shape &a, const Shape &b);

/// Whether `operand` can be broadcast into `result` by a broadcast_in_dim style mapping:
/// broadcastDims[i] is the result dim that operand dim i maps to; must be strictly increasing,
/// in range, and each operand dim is 1 or equal to (or dynamic vs) the result dim. Returns ""
/// when OK, else the reason.
std::string checkBroadcastInDim(const Shape &operand, const Shape &result,
                                const std::vector<int64_t> &broadcastDims);

/// PyTorch expand semantics (right-aligned; result rank >= operand rank; operand dim 1 may
/// expand; -1 not allowed here: the importer resolves it to the operand's size). Returns ""
/// when OK, else the reason.
std::string checkExpand(const Shape &operand, const Shape &result);

/// Reduction: dims (may be negative; empty means all dims) removed or kept as 1. Repeated dims
/// are an error. As in PyTorch, a rank-0 input accepts dim 0 or -1 and reduces to rank 0.
ShapeResult reduceShape(const Shape &input, const std::vector<int64_t> &dims, bool keepdim);

/// Batched matmul: lhs rank r >= 2; rhs rank 2 (shared across lhs batch) or rank r with batch
/// dims equal (dynamic compatible). transposeLhs/transposeRhs swap the last two dims before
/// multiplying. Contraction dims must match (dynamic compatible). Result: lhs batch dims +
/// [M, N]; a batch dim dynamic in lhs but static in rhs takes rhs's size.
ShapeResult matmulShape(const Shape &lhs, const Shape &rhs, bool transposeLhs,
                        bool transposeRhs);

/// One spatial output size of a convolution/pool: floor((in + lo + hi - dilation*(k-1) - 1)/stride)
/// + 1, or ceil-ed if ceilMode (PyTorch's pooling rule: the last window must start inside the
/// input or left padding). Returns kDynamic if in or kernel is dynamic; returns a value < 1 if the
/// window does not fit or stride/dilation/kernel are not positive (callers report it).
int64_t windowOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t padLo,
                         int64_t padHi, int64_t dilation, bool ceilMode);

/// Convolution: input [N, C, spatial...], weight [O, C/groups, k...], 1-3 spatial dims; stride,
/// dilation per spatial dim (size = #spatial), padding as [lo0, hi0, lo1, hi1, ...] (size
/// 2*#spatial). Checks C divisible by groups, O divisible by groups, weight dim 1 == C/groups,
/// positive stride/dilation, non-negative padding, output size >= 1. Result [N, O, out...].
ShapeResult convShape(const Shape &input, const Shape &weight,
                      const std::vector<int64_t> &stride,
                      const std::vector<int64_t> &padding,
                      const std::vector<int64_t> &dilation, int64_t groups);

/// Pooling over the trailing kernel.size() dims of input (input rank >= kernel rank + 1 i.e.
/// at least one leading dim); same conventions for stride/padding/dilation; PyTorch's rule that
/// padding <= kernel/2 (for lo and hi alike). Leading dims are passed through.
ShapeResult poolShape(const Shape &input, const std::vector<int64_t> &kernel,
                      const std::vector<int64_t> &stride,
                      const std::vector<int64_t> &padding,
                      const std::vector<int64_t> &dilation, bool ceilMode);

/// Reshape: element counts must agree when both static; at most one -1 in `target` is inferred
/// (result has the inferred size, or kDynamic when it cannot be known), kDynamic in target
/// allowed (means dynamic).
ShapeResult reshapeShape(const Shape &input, const Shape &target);

/// Permutation must be a permutation of [0, rank) (no negative indices). result[i] =
/// input[perm[i]].
ShapeResult permuteShape(const Shape &input, const std::vector<int64_t> &perm);

/// Slice with start/end/step per dim (all vectors rank-sized, Python semantics after
/// normalisation: a negative start/end counts from the end, then start,end clamped to
/// [0, size], step >= 1; size = max(0, ceil((end-start)/step))). Dynamic input dims give
/// dynamic results.
ShapeResult sliceShape(const Shape &input, const std::vector<int64_t> &start,
                       const std::vector<int64_t> &end, const std::vector<int64_t> &step);

/// Concatenate along dim (may be negative): at least one input, same rank >= 1, all other dims
/// equal (dynamic compatible; the result takes the static size where any input has one).
ShapeResult concatShape(const std::vector<Shape> &inputs, int64_t dim);

/// Constant pad: padding [lo0, hi0, lo1, hi1, ...] over all dims (size 2*rank), negative
/// allowed (cropping) but result dims >= 0. Dynamic dims stay dynamic.
ShapeResult padShape(const Shape &input, const std::vector<int64_t> &padding);

/// Gather rows: index_select(input, dim, index1d) -> input with dim replaced by index length.
/// As in PyTorch, a rank-0 index counts as one element.
ShapeResult indexSelectShape(const Shape &input, int64_t dim, const Shape &index);

/// embedding(weight[V, D], indices[...]) -> indices shape + [D].
ShapeResult embeddingShape(const Shape &weight, const Shape &indices);

} // namespace thunder

#endif // THUNDER_SUPPORT_SHAPEMATH_H
