//===- ConvertDataMovement.cpp - ATen views, copies, slices and gathers ---===//
//
// Views (view, reshape, permute, expand, squeeze/unsqueeze, slice, select)
// take their result shape from what torch.export recorded, which resolves
// PyTorch's -1 sizes and symbolic sizes. Copies that only change memory
// layout (clone, contiguous, alias) are the identity on values.
//
//===----------------------------------------------------------------------===//
#include "Conversion.h"

#include "mlir/IR/TypeUtilities.h"

#include <limits>

using namespace mlir;
using namespace mlir::thunder;
using namespace ::thunder;
using namespace ::thunder::import;
using namespace ::thunder::import::detail;

namespace {

/// Ops whose result has the recorded shape and the input's elements in
/// row-major order.
LogicalResult convertReshape(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  if (failed(type) || failed(self))
    return failure();
  if (self->getType() == *type)
    return ctx.setResult(*self);
  return ctx.setResult(ctx.create<ReshapeOp>(*type, *self));
}

/// clone, alias, contiguous, detach: the same value.
LogicalResult convertIdentity(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  if (failed(self))
    return failure();
  return ctx.setResult(*self);
}

/// _to_copy / to.dtype / to.device: a dtype conversion (device and layout are ignored:
/// the compiled program decides where tensors live).
LogicalResult convertToCopy(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  if (failed(type) || failed(self))
    return failure();
  return ctx.setResult(ctx.convert(*self, type->getElementType()));
}

LogicalResult convertPermute(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<SmallVector<int64_t>> dims = ctx.getInts("dims");
  if (failed(self) || failed(dims))
    return failure();
  int64_t rank = cast<RankedTensorType>(self->getType()).getRank();
  SmallVector<int64_t> perm;
  for (int64_t d : *dims) {
    FailureOr<int64_t> n = normalizeDim(ctx, d, rank);
    if (failed(n))
      return failure();
    perm.push_back(*n);
  }
  return ctx.setResult(ctx.create<TransposeOp>(*self, perm));
}

LogicalResult convertTranspose(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  if (failed(self))
    return failure();
  int64_t rank = cast<RankedTensorType>(self->getType()).getRank();
  FailureOr<int64_t> d0 = ctx.getInt("dim0", 0);
  FailureOr<int64_t> d1 = ctx.getInt("dim1", 1);
  if (failed(d0) || failed(d1))
    return failure();
  FailureOr<int64_t> a = normalizeDim(ctx, *d0, rank);
  FailureOr<int64_t> b = normalizeDim(ctx, *d1, rank);
  if (failed(a) || failed(b))
    return failure();
  if (rank < 2)
    return ctx.setResult(*self);
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[*a], perm[*b]);
  return ctx.setResult(ctx.create<TransposeOp>(*self, perm));
}

LogicalResult convertExpand(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  if (failed(type) || failed(self))
    return failure();
  if (self->getType() == *type)
    return ctx.setResult(*self);
  return ctx.setResult(ctx.create<ExpandOp>(*type, *self));
}

/// Whether argument `name` is a size torch.export named with a symbol
/// (`x.size(1)`): neither a constant nor a value read from tensor data.
bool isSymbolicSize(NodeContext &ctx, llvm::StringRef name) {
  const llvm::json::Object *a = ctx.arg(name);
  return a && symbolicName(*a) && !ctx.dataRef(name);
}

/// x[start:n:step] along `d` where n is a symbolic size (BERT's position ids,
/// sliced to the sequence length): torch.export's result type says how many
/// elements that is, as a symbol the run time knows. A static count is a
/// plain slice; a dynamic one, a gather of start, start + step, ... (an iota
/// as long as the result's dim).
LogicalResult convertSliceToSymbolicEnd(NodeContext &ctx, Value self, int64_t d,
                                        int64_t start, int64_t step) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  if (start < 0)
    return ctx.fail("a slice from a negative start (" + llvm::Twine(start) +
                    ") to a symbolic end is not supported");
  if (step < 1)
    return ctx.fail("slice step must be positive, got " + llvm::Twine(step));
  int64_t count = type->getDimSize(d);
  if (!ShapedType::isDynamic(count)) {
    FailureOr<Value> sliced =
        ctx.sliceDim(self, d, start, count == 0 ? start : start + (count - 1) * step + 1, step);
    if (failed(sliced))
      return failure();
    return ctx.setResult(*sliced);
  }
  std::vector<std::string> symbols = ctx.scope.dimSymbols(ctx.resultName());
  if (d >= static_cast<int64_t>(symbols.size()) || symbols[d].empty())
    return ctx.fail("a slice to a symbolic end whose length torch.export wrote as "
                    "an expression, not a symbol, is not supported");
  auto indexType = RankedTensorType::get({ShapedType::kDynamic}, ctx.b.getI64Type());
  Value index = ctx.create<IotaOp>(indexType, 0);
  if (step != 1)
    index = ctx.create<MulOp>(index, ctx.splat(indexType, step));
  if (start != 0)
    index = ctx.create<AddOp>(index, ctx.splat(indexType, start));
  return ctx.setResult(ctx.create<IndexSelectOp>(self, index, d));
}

LogicalResult convertSlice(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<int64_t> dim = ctx.getInt("dim", 0);
  FailureOr<int64_t> start = ctx.getInt("start", 0);
  bool symbolicEnd = isSymbolicSize(ctx, "end");
  FailureOr<int64_t> end = symbolicEnd ? kSliceToEnd : ctx.getInt("end", kSliceToEnd);
  FailureOr<int64_t> step = ctx.getInt("step", 1);
  if (failed(self) || failed(dim) || failed(start) || failed(end) || failed(step))
    return failure();
  int64_t rank = cast<RankedTensorType>(self->getType()).getRank();
  FailureOr<int64_t> d = normalizeDim(ctx, *dim, rank);
  if (failed(d))
    return failure();
  if (symbolicEnd)
    return convertSliceToSymbolicEnd(ctx, *self, *d, *start, *step);
  FailureOr<Value> sliced = ctx.sliceDim(*self, *d, *start, *end, *step);
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(sliced) || failed(type))
    return failure();
  // x[:5] on a dynamic dim that torch.export's guards keep >= 5: its size is
  // static for torch.export and min(5, size) for the slice; a reshape (the same
  // elements) gives it torch.export's type.
  auto slicedType = cast<RankedTensorType>(sliced->getType());
  if (slicedType != *type && slicedType.getRank() == type->getRank() &&
      llvm::all_of(llvm::seq<int64_t>(0, type->getRank()), [&](int64_t i) {
        return slicedType.isDynamicDim(i) || slicedType.getDimSize(i) == type->getDimSize(i);
      }))
    sliced = ctx.create<ReshapeOp>(*type, *sliced);
  return ctx.setResult(*sliced);
}

/// select: a slice of one element, then the dim dropped.
LogicalResult convertSelect(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<int64_t> dim = ctx.getInt("dim");
  FailureOr<int64_t> index = ctx.getInt("index");
  if (failed(type) || failed(self) || failed(dim) || failed(index))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  FailureOr<int64_t> d = normalizeDim(ctx, *dim, selfType.getRank());
  if (failed(d))
    return failure();
  int64_t size = selfType.getDimSize(*d), i = *index, end;
  if (ShapedType::isDynamic(size)) {
    // Counted from the run-time size where negative (`logits[:, -1]` on a
    // dynamic sequence): the slice [i, i + 1), whose end is the size for -1.
    end = i == -1 ? std::numeric_limits<int64_t>::max() : i + 1;
  } else {
    i = i < 0 ? i + size : i;
    if (i < 0 || i >= size)
      return ctx.fail("index " + llvm::Twine(*index) + " is out of range for dim " +
                      llvm::Twine(*d) + " of size " + llvm::Twine(size));
    end = i + 1;
  }
  FailureOr<Value> sliced = ctx.sliceDim(*self, *d, i, end, 1);
  if (failed(sliced))
    return failure();
  return ctx.setResult(ctx.create<ReshapeOp>(*type, *sliced));
}

LogicalResult convertCat(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<SmallVector<Value>> tensors = ctx.tensorList("tensors");
  FailureOr<int64_t> dim = ctx.getInt("dim", 0);
  if (failed(type) || failed(tensors) || failed(dim))
    return failure();
  FailureOr<int64_t> d = normalizeDim(ctx, *dim, type->getRank());
  if (failed(d))
    return failure();
  SmallVector<Value> inputs;
  for (Value t : *tensors) {
    auto tType = cast<RankedTensorType>(t.getType());
    // PyTorch skips legacy empty 1-D tensors in cat.
    if (tType.getRank() == 1 && tType.getDimSize(0) == 0 && type->getRank() != 1)
      continue;
    inputs.push_back(ctx.convert(t, type->getElementType()));
  }
  return ctx.setResult(ctx.create<ConcatOp>(inputs, *d));
}

/// split / split_with_sizes: consecutive slices along a dim.
LogicalResult convertSplit(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<int64_t> dim = ctx.getInt("dim", 0);
  if (failed(self) || failed(dim))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  FailureOr<int64_t> d = normalizeDim(ctx, *dim, selfType.getRank());
  if (failed(d))
    return failure();
  int64_t size = selfType.getDimSize(*d);
  if (ShapedType::isDynamic(size))
    return ctx.fail("splitting dim " + llvm::Twine(*d) +
                    ", which is dynamic, is not supported yet");
  SmallVector<int64_t> sizes;
  if (ctx.arg("split_sizes")) {
    FailureOr<SmallVector<int64_t>> given = ctx.getInts("split_sizes");
    if (failed(given))
      return failure();
    sizes = *given;
  } else {
    FailureOr<int64_t> chunk = ctx.getInt("split_size");
    if (failed(chunk) || *chunk <= 0)
      return failed(chunk) ? failure() : ctx.fail("split_size must be positive");
    for (int64_t at = 0; at < size; at += *chunk)
      sizes.push_back(std::min(*chunk, size - at));
  }
  int64_t at = 0;
  for (auto [i, n] : llvm::enumerate(sizes)) {
    FailureOr<Value> piece = ctx.sliceDim(*self, *d, at, at + n, 1);
    if (failed(piece))
      return failure();
    at += n;
    if (!ctx.resultName(i).empty() && failed(ctx.setResult(*piece, i)))
      return failure();
  }
  return success();
}

/// constant_pad_nd: `pad` lists (low, high) pairs from the last dim backwards.
LogicalResult convertPad(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<SmallVector<int64_t>> pad = ctx.getInts("pad");
  FailureOr<double> value = ctx.getFloat("value", 0.0);
  if (failed(self) || failed(pad) || failed(value))
    return failure();
  int64_t rank = cast<RankedTensorType>(self->getType()).getRank();
  if (pad->size() % 2 || static_cast<int64_t>(pad->size()) > 2 * rank)
    return ctx.fail("pad has " + llvm::Twine(pad->size()) +
                    " entries; it needs an even number, at most twice the rank");
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (size_t i = 0; i < pad->size() / 2; ++i) {
    low[rank - 1 - i] = (*pad)[2 * i];
    high[rank - 1 - i] = (*pad)[2 * i + 1];
  }
  return ctx.setResult(ctx.create<PadOp>(*self, low, high, llvm::APFloat(*value)));
}

LogicalResult convertEmbedding(NodeContext &ctx) {
  FailureOr<Value> weight = ctx.tensor("weight");
  FailureOr<Value> indices = ctx.tensor("indices");
  if (failed(weight) || failed(indices))
    return failure();
  return ctx.setResult(ctx.create<EmbeddingOp>(*weight, *indices));
}

LogicalResult convertGather(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<Value> index = ctx.tensor("index");
  FailureOr<int64_t> dim = ctx.getInt("dim");
  if (failed(self) || failed(index) || failed(dim))
    return failure();
  int64_t rank = cast<RankedTensorType>(self->getType()).getRank();
  FailureOr<int64_t> d = normalizeDim(ctx, *dim, rank);
  if (failed(d))
    return failure();
  return ctx.setResult(ctx.create<GatherOp>(*self, *index, *d));
}

LogicalResult convertIndexSelect(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<Value> index = ctx.tensor("index");
  FailureOr<int64_t> dim = ctx.getInt("dim");
  if (failed(self) || failed(index) || failed(dim))
    return failure();
  int64_t rank = cast<RankedTensorType>(self->getType()).getRank();
  FailureOr<int64_t> d = normalizeDim(ctx, *dim, rank);
  if (failed(d))
    return failure();
  Value idx = *index;
  if (cast<RankedTensorType>(idx.getType()).getRank() == 0)
    idx = ctx.create<ReshapeOp>(
        RankedTensorType::get({1}, getElementTypeOrSelf(idx.getType())), idx);
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  Value y = ctx.create<IndexSelectOp>(*self, idx, *d);
  if (y.getType() != *type)
    y = ctx.create<ReshapeOp>(*type, y);
  return ctx.setResult(y);
}

/// `index` with PyTorch's negative indices counted from the end of a dim
/// (idx < 0 ? idx + size : idx): of `size`, or, where that is dynamic, of
/// `count` (its run-time size, 0-d).
FailureOr<Value> wrapIndex(NodeContext &ctx, Value index, int64_t size, Value count) {
  auto type = cast<RankedTensorType>(index.getType());
  FailureOr<Value> sizes = ShapedType::isDynamic(size)
                               ? ctx.broadcastTo(count, type.getShape())
                               : FailureOr<Value>(ctx.splat(type, size));
  if (failed(sizes))
    return failure();
  Value isNegative = ctx.create<CompareOp>(ComparisonDirection::LT, index,
                                           ctx.splat(type, int64_t(0)));
  return ctx.create<WhereOp>(isNegative, ctx.create<AddOp>(index, *sizes), index);
}

/// aten.index.Tensor (advanced indexing `x[i, j]`) in the two forms models
/// produce: one index tensor at dim d (an index_select), or index tensors
/// for every dim (a gather from the flattened tensor, at a linear index whose
/// strides count dynamic sizes at run time).
LogicalResult convertIndex(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<SmallVector<Value>> indices = ctx.optionalTensorList("indices");
  if (failed(type) || failed(self) || failed(indices))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  SmallVector<unsigned> given;
  for (auto [i, index] : llvm::enumerate(*indices)) {
    if (!index)
      continue;
    Type element = getElementTypeOrSelf(index.getType());
    if (!element.isInteger(64) && !element.isInteger(32))
      return ctx.fail("indexing with a boolean mask is not supported");
    given.push_back(i);
  }
  Type i64 = ctx.b.getI64Type();
  auto flatten = [&](Value index) -> Value {
    auto t = cast<RankedTensorType>(index.getType());
    int64_t n = t.hasStaticShape() ? t.getNumElements() : ShapedType::kDynamic;
    return ctx.create<ReshapeOp>(RankedTensorType::get({n}, i64),
                                 ctx.convert(index, i64));
  };

  if (given.size() == 1) {
    unsigned d = given.front();
    int64_t size = selfType.getDimSize(d);
    FailureOr<Value> count = ShapedType::isDynamic(size) ? runtimeSize(ctx, *self, d)
                                                         : FailureOr<Value>(Value());
    if (failed(count))
      return failure();
    FailureOr<Value> index = wrapIndex(ctx, ctx.convert((*indices)[d], i64), size, *count);
    if (failed(index))
      return failure();
    Value selected = ctx.create<IndexSelectOp>(*self, flatten(*index), d);
    return ctx.setResult(ctx.create<ReshapeOp>(*type, selected));
  }

  if (given.size() == static_cast<size_t>(selfType.getRank()) &&
      selfType.getRank() > 0) {
    // linear = sum_d index_d * stride_d over the broadcast index shape, which
    // is the result shape; a dynamic dim's size (in the strides, and for
    // negative indices) is counted at run time.
    ArrayRef<int64_t> shape = selfType.getShape();
    auto indexType = type->clone(i64);
    Value linear, dynamicStride;
    int64_t stride = 1;
    for (int64_t d = selfType.getRank() - 1; d >= 0; --d) {
      FailureOr<Value> count = ShapedType::isDynamic(shape[d])
                                   ? runtimeSize(ctx, *self, d)
                                   : FailureOr<Value>(Value());
      if (failed(count))
        return failure();
      FailureOr<Value> index =
          wrapIndex(ctx, ctx.convert((*indices)[d], i64), shape[d], *count);
      if (failed(index))
        return failure();
      FailureOr<Value> term = ctx.broadcastTo(*index, indexType.getShape());
      if (failed(term))
        return failure();
      if (stride != 1)
        term = ctx.create<MulOp>(*term, ctx.splat(indexType, stride));
      if (dynamicStride) {
        FailureOr<Value> strides = ctx.broadcastTo(dynamicStride, indexType.getShape());
        if (failed(strides))
          return failure();
        term = ctx.create<MulOp>(*term, *strides);
      }
      linear = linear ? ctx.create<AddOp>(linear, *term) : *term;
      if (d == 0)
        break; // no stride after the outermost dim
      if (*count)
        dynamicStride = dynamicStride ? ctx.create<MulOp>(dynamicStride, *count) : *count;
      else
        stride *= shape[d];
    }
    int64_t numElements = selfType.hasStaticShape() ? selfType.getNumElements()
                                                    : ShapedType::kDynamic;
    Value flat = ctx.create<ReshapeOp>(
        RankedTensorType::get({numElements}, selfType.getElementType()), *self);
    Value gathered = ctx.create<IndexSelectOp>(flat, flatten(linear), 0);
    return ctx.setResult(ctx.create<ReshapeOp>(*type, gathered));
  }
  return ctx.fail("advanced indexing with " + llvm::Twine(given.size()) +
                  " index tensors over a rank-" +
                  llvm::Twine(selfType.getRank()) +
                  " tensor is not supported (one index tensor, or one per "
                  "dim, are)");
}

/// Tensor.unfold(dim, size, step): the windows of `size` elements every `step`
/// along `dim` as a new last dim. One gather of the windows' elements, in
/// order, then a reshape to [.., windows, size, ..] and a transpose of `size`
/// to the end.
LogicalResult convertUnfold(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<int64_t> dimension = ctx.getInt("dimension");
  FailureOr<int64_t> size = ctx.getInt("size");
  FailureOr<int64_t> step = ctx.getInt("step");
  if (failed(type) || failed(self) || failed(dimension) || failed(size) || failed(step))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  if (selfType.getRank() == 0)
    return ctx.fail("unfold of a rank-0 tensor is not supported");
  FailureOr<int64_t> dim = normalizeDim(ctx, *dimension, selfType.getRank());
  if (failed(dim))
    return failure();
  int64_t length = selfType.getDimSize(*dim);
  if (ShapedType::isDynamic(length))
    return ctx.fail("unfold along a dynamic dim is not supported");
  if (*step < 1 || *size < 0 || *size > length)
    return ctx.fail("unfold: size " + llvm::Twine(*size) + " and step " +
                    llvm::Twine(*step) + " do not fit a dim of " + llvm::Twine(length));
  int64_t windows = (length - *size) / *step + 1;
  SmallVector<int64_t> index;
  for (int64_t w = 0; w < windows; ++w)
    for (int64_t j = 0; j < *size; ++j)
      index.push_back(w * *step + j);
  Value x = selectAlong(ctx, *self, *dim, index);
  SmallVector<int64_t> split(selfType.getShape());
  split[*dim] = *size;
  split.insert(split.begin() + *dim, windows);
  x = ctx.create<ReshapeOp>(selfType.clone(split), x);
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < static_cast<int64_t>(split.size()); ++i)
    if (i != *dim + 1)
      perm.push_back(i);
  perm.push_back(*dim + 1);
  return ctx.setResult(ctx.create<TransposeOp>(x, perm));
}

} // namespace

void ::thunder::import::detail::registerDataMovementConversions(ConversionTable &table) {
  table["aten.unfold.default"] = convertUnfold;
  for (const char *op :
       {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default",
        "aten.unsqueeze.default", "aten.squeeze.dim", "aten.squeeze.dims",
        "aten.squeeze.default", "aten.flatten.using_ints"})
    table[op] = convertReshape;
  for (const char *op : {"aten.clone.default", "aten.alias.default",
                         "aten.contiguous.default", "aten.detach.default",
                         "aten.lift_fresh_copy.default"})
    table[op] = convertIdentity;
  for (const char *op : {"aten._to_copy.default", "aten.to.dtype",
                         "aten.to.dtype_layout", "aten.to.device"})
    table[op] = convertToCopy;
  table["aten.permute.default"] = convertPermute;
  table["aten.transpose.int"] = convertTranspose;
  table["aten.t.default"] = convertTranspose;
  table["aten.expand.default"] = convertExpand;
  table["aten.slice.Tensor"] = convertSlice;
  table["aten.select.int"] = convertSelect;
  table["aten.cat.default"] = convertCat;
  table["aten.split_with_sizes.default"] = convertSplit;
  table["aten.split.Tensor"] = convertSplit;
  table["aten.constant_pad_nd.default"] = convertPad;
  table["aten.embedding.default"] = convertEmbedding;
  table["aten.gather.default"] = convertGather;
  table["aten.index_select.default"] = convertIndexSelect;
  table["aten.index.Tensor"] = convertIndex;
}
