//===- ConvertReductions.cpp - ATen reductions to thunder -----------------===//
//
// sum, mean, amax/amin, max/min over a dim (values and indices), prod,
// argmax/argmin, any/all, cumsum and its inverse diff. PyTorch reduces over every dim when the
// dim list is empty or absent; thunder lists the dims explicitly.
//
//===----------------------------------------------------------------------===//
#include "Conversion.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace ::thunder;
using namespace ::thunder::import;
using namespace ::thunder::import::detail;

namespace {

/// The normalized, sorted dims of argument `name` (all dims when absent or
/// empty).
FailureOr<SmallVector<int64_t>> reducedDims(NodeContext &ctx,
                                            llvm::StringRef name, int64_t rank) {
  FailureOr<SmallVector<int64_t>> dims = ctx.getInts(name, ArrayRef<int64_t>{});
  if (failed(dims))
    return failure();
  SmallVector<int64_t> result;
  if (dims->empty()) {
    for (int64_t d = 0; d < rank; ++d)
      result.push_back(d);
    return result;
  }
  for (int64_t d : *dims) {
    FailureOr<int64_t> n = normalizeDim(ctx, d, rank);
    if (failed(n))
      return failure();
    if (rank > 0)
      result.push_back(*n);
  }
  llvm::sort(result);
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

/// A reduction of `self` (converted to the result dtype first, which covers
/// sum's `dtype=` and PyTorch summing integers as int64) over `dimArg`.
template <typename OpTy>
LogicalResult convertReduce(NodeContext &ctx, llvm::StringRef dimArg) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<bool> keepdim = ctx.getBool("keepdim", false);
  if (failed(type) || failed(self) || failed(keepdim))
    return failure();
  auto inputType = cast<RankedTensorType>(self->getType());
  FailureOr<SmallVector<int64_t>> dims =
      reducedDims(ctx, dimArg, inputType.getRank());
  if (failed(dims))
    return failure();
  Value input = ctx.convert(*self, type->getElementType());
  if (dims->empty()) // a rank-0 input: the reduction is the identity
    return ctx.setResult(input);
  return ctx.setResult(ctx.create<OpTy>(input, *dims, *keepdim));
}

template <typename OpTy> LogicalResult convertReduceDims(NodeContext &ctx) {
  return convertReduce<OpTy>(ctx, "dim");
}

/// max.dim / min.dim: values and (when used) indices.
template <typename OpTy, typename ArgOpTy>
LogicalResult convertReduceWithIndices(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<int64_t> dim = ctx.getInt("dim");
  FailureOr<bool> keepdim = ctx.getBool("keepdim", false);
  if (failed(self) || failed(dim) || failed(keepdim))
    return failure();
  int64_t rank = cast<RankedTensorType>(self->getType()).getRank();
  FailureOr<int64_t> d = normalizeDim(ctx, *dim, rank);
  if (failed(d))
    return failure();
  SmallVector<int64_t> dims{*d};
  if (failed(ctx.setResult(ctx.create<OpTy>(*self, dims, *keepdim), 0)))
    return failure();
  if (ctx.numResults() > 1 && !ctx.resultName(1).empty())
    return ctx.setResult(ctx.create<ArgOpTy>(*self, *d, *keepdim), 1);
  return success();
}

template <typename OpTy> LogicalResult convertArgReduce(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<bool> keepdim = ctx.getBool("keepdim", false);
  if (failed(self) || failed(keepdim))
    return failure();
  if (!ctx.has("dim")) {
    // dim=None: the index into the flattened tensor.
    FailureOr<RankedTensorType> type = ctx.resultType();
    if (failed(type))
      return failure();
    auto inputType = cast<RankedTensorType>(self->getType());
    int64_t n = inputType.hasStaticShape() ? inputType.getNumElements()
                                           : ShapedType::kDynamic;
    Value flat = ctx.create<ReshapeOp>(inputType.clone({n}), *self);
    Value index = ctx.create<OpTy>(flat, 0, /*keepdim=*/false);
    return ctx.setResult(index.getType() == *type
                             ? index
                             : ctx.create<ReshapeOp>(*type, index));
  }
  FailureOr<int64_t> dim = ctx.getInt("dim");
  if (failed(dim))
    return failure();
  int64_t rank = cast<RankedTensorType>(self->getType()).getRank();
  FailureOr<int64_t> d = normalizeDim(ctx, *dim, rank);
  if (failed(d))
    return failure();
  return ctx.setResult(ctx.create<OpTy>(*self, *d, *keepdim));
}

/// any/all: over i32 (0 or 1), `any` is a max and `all` a min, then != 0.
template <typename OpTy> LogicalResult convertAnyAll(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<bool> keepdim = ctx.getBool("keepdim", false);
  if (failed(type) || failed(self) || failed(keepdim))
    return failure();
  auto inputType = cast<RankedTensorType>(self->getType());
  FailureOr<SmallVector<int64_t>> dims =
      reducedDims(ctx, ctx.arg("dims") ? "dims" : "dim", inputType.getRank());
  if (failed(dims))
    return failure();
  Value truth = ctx.convert(*self, ctx.b.getI1Type());
  if (dims->empty())
    return ctx.setResult(truth);
  Value asInt = ctx.convert(truth, ctx.b.getI32Type());
  Value reduced = ctx.create<OpTy>(asInt, *dims, *keepdim);
  return ctx.setResult(ctx.convert(reduced, ctx.b.getI1Type()));
}

LogicalResult convertCumsum(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<int64_t> dim = ctx.getInt("dim");
  if (failed(type) || failed(self) || failed(dim))
    return failure();
  FailureOr<int64_t> d = normalizeDim(ctx, *dim, type->getRank());
  if (failed(d))
    return failure();
  Value input = ctx.convert(*self, type->getElementType());
  return ctx.setResult(ctx.create<CumsumOp>(input, *d));
}

/// diff: out[i] = x[i + 1] - x[i] along `dim`, `n` times, after `prepend`
/// and `append` are concatenated on either side (bool: x[i + 1] != x[i]).
LogicalResult convertDiff(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<int64_t> n = ctx.getInt("n", 1);
  FailureOr<int64_t> dim = ctx.getInt("dim", -1);
  FailureOr<Value> prepend = ctx.optionalTensor("prepend");
  FailureOr<Value> append = ctx.optionalTensor("append");
  if (failed(type) || failed(self) || failed(n) || failed(dim) || failed(prepend) ||
      failed(append))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  if (selfType.getRank() == 0)
    return ctx.fail("diff of a 0-d tensor is not defined (PyTorch refuses it too)");
  if (*n < 0)
    return ctx.fail("diff: n must be non-negative, got " + llvm::Twine(*n));
  FailureOr<int64_t> d = normalizeDim(ctx, *dim, selfType.getRank());
  if (failed(d))
    return failure();
  Type element = type->getElementType();
  SmallVector<Value> pieces;
  for (Value piece : {*prepend, *self, *append})
    if (piece)
      pieces.push_back(ctx.convert(piece, element));
  Value x = pieces.size() == 1
                ? pieces.front()
                : ctx.create<ConcatOp>(pieces, static_cast<uint64_t>(*d));
  for (int64_t i = 0; i < *n; ++i) {
    // x[1:] - x[:-1]; on a dynamic dim both slices are sized at run time
    // (an empty dim stays empty, as in PyTorch).
    int64_t length = cast<RankedTensorType>(x.getType()).getDimSize(*d);
    if (length == 0)
      break;
    FailureOr<Value> next = ctx.sliceDim(x, *d, 1, kSliceToEnd);
    FailureOr<Value> current = ctx.sliceDim(x, *d, 0, -1);
    if (failed(next) || failed(current))
      return failure();
    x = element.isInteger(1) ? ctx.create<LogicalXorOp>(*next, *current)
                             : ctx.create<SubOp>(*next, *current);
  }
  return ctx.setResult(x);
}

} // namespace

void ::thunder::import::detail::registerReductionConversions(ConversionTable &table) {
  table["aten.sum.dim_IntList"] = convertReduceDims<SumOp>;
  table["aten.sum.default"] = convertReduceDims<SumOp>;
  table["aten.mean.dim"] = convertReduceDims<MeanOp>;
  table["aten.mean.default"] = convertReduceDims<MeanOp>;
  table["aten.amax.default"] = convertReduceDims<MaxOp>;
  table["aten.amin.default"] = convertReduceDims<MinOp>;
  table["aten.max.default"] = convertReduceDims<MaxOp>;
  table["aten.min.default"] = convertReduceDims<MinOp>;
  table["aten.prod.dim_int"] = convertReduceDims<ProdOp>;
  table["aten.prod.default"] = convertReduceDims<ProdOp>;
  table["aten.max.dim"] = convertReduceWithIndices<MaxOp, ArgMaxOp>;
  table["aten.min.dim"] = convertReduceWithIndices<MinOp, ArgMinOp>;
  table["aten.argmax.default"] = convertArgReduce<ArgMaxOp>;
  table["aten.argmin.default"] = convertArgReduce<ArgMinOp>;
  for (const char *op : {"aten.any.dim", "aten.any.dims", "aten.any.default"})
    table[op] = convertAnyAll<MaxOp>;
  for (const char *op : {"aten.all.dim", "aten.all.dims", "aten.all.default"})
    table[op] = convertAnyAll<MinOp>;
  table["aten.cumsum.default"] = convertCumsum;
  table["aten.diff.default"] = convertDiff;
}
