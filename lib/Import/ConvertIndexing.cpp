//===- ConvertIndexing.cpp - ATen sorts, scatters and index maps to thunder ===//
//
// sort/topk/kthvalue (an argsort and a gather), the scatters and index_put
// (thunder.scatter), and the ops whose element map is known when the program
// is compiled: flip, repeat, reflection and replication padding, diagonal,
// as_strided, slice_scatter/select_scatter and nearest/bilinear upsampling
// become index_select (or a gather from the flattened tensor) with constant
// indices. Those need static sizes in the dims they map.
//
//===----------------------------------------------------------------------===//
#include "Conversion.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::thunder;
using namespace ::thunder;
using namespace ::thunder::import;
using namespace ::thunder::import::detail;

namespace {

FailureOr<int64_t> staticDim(NodeContext &ctx, Value value, int64_t dim) {
  int64_t size = cast<RankedTensorType>(value.getType()).getDimSize(dim);
  if (ShapedType::isDynamic(size))
    return ctx.fail("dim " + llvm::Twine(dim) + " is dynamic; this op needs its size "
                    "when the program is compiled");
  return size;
}

//===----------------------------------------------------------------------===//
// Sorting
//===----------------------------------------------------------------------===//

/// sort / sort.stable: values and indices (always stable).
LogicalResult convertSort(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<int64_t> dim = ctx.getInt("dim", -1);
  FailureOr<bool> descending = ctx.getBool("descending", false);
  if (failed(self) || failed(dim) || failed(descending))
    return failure();
  auto type = cast<RankedTensorType>(self->getType());
  FailureOr<int64_t> d = normalizeDim(ctx, *dim, type.getRank());
  if (failed(d))
    return failure();
  if (type.getElementType().isInteger(1))
    return ctx.fail("sorting bool tensors is not supported");
  if (type.getRank() == 0) {
    if (failed(ctx.setResult(*self, 0)))
      return failure();
    return ctx.setResult(ctx.splat(type.clone(ctx.b.getI64Type()), int64_t(0)), 1);
  }
  Value order = ctx.create<ArgSortOp>(type.clone(ctx.b.getI64Type()), *self, *d, *descending);
  if (failed(ctx.setResult(ctx.create<GatherOp>(*self, order, *d), 0)))
    return failure();
  if (ctx.numResults() > 1 && !ctx.resultName(1).empty())
    return ctx.setResult(order, 1);
  return success();
}

/// topk (largest or smallest k, in order) and kthvalue (the k-th smallest).
template <bool isKth>
LogicalResult convertTopk(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<int64_t> k = ctx.getInt("k");
  FailureOr<int64_t> dim = ctx.getInt("dim", -1);
  FailureOr<bool> largest = ctx.getBool("largest", true);
  FailureOr<bool> keepdim = ctx.getBool("keepdim", false);
  FailureOr<RankedTensorType> valuesType = ctx.resultType(0);
  if (failed(self) || failed(k) || failed(dim) || failed(largest) || failed(keepdim) ||
      failed(valuesType))
    return failure();
  auto type = cast<RankedTensorType>(self->getType());
  FailureOr<int64_t> d = normalizeDim(ctx, *dim, type.getRank());
  if (failed(d))
    return failure();
  if (type.getElementType().isInteger(1))
    return ctx.fail("sorting bool tensors is not supported");
  Value values, indices;
  if (type.getRank() == 0) {
    values = *self;
    indices = ctx.splat(type.clone(ctx.b.getI64Type()), int64_t(0));
  } else {
    bool descending = isKth ? false : *largest;
    Value order =
        ctx.create<ArgSortOp>(type.clone(ctx.b.getI64Type()), *self, *d, descending);
    int64_t start = isKth ? *k - 1 : 0, end = isKth ? *k : *k;
    FailureOr<Value> first = ctx.sliceDim(order, *d, start, end, 1);
    if (failed(first))
      return failure();
    indices = *first;
    values = ctx.create<GatherOp>(*self, indices, *d);
  }
  if (values.getType() != *valuesType) {
    values = ctx.create<ReshapeOp>(*valuesType, values);
    indices = ctx.create<ReshapeOp>(valuesType->clone(ctx.b.getI64Type()), indices);
  }
  if (failed(ctx.setResult(values, 0)))
    return failure();
  if (ctx.numResults() > 1 && !ctx.resultName(1).empty())
    return ctx.setResult(indices, 1);
  return success();
}

//===----------------------------------------------------------------------===//
// Scatter
//===----------------------------------------------------------------------===//

/// thunder.scatter on any dtype: bool goes through i8.
Value scatter(NodeContext &ctx, Value input, Value index, Value src, int64_t dim,
              llvm::StringRef reduce, bool includeSelf) {
  Type element = getElementTypeOrSelf(input.getType());
  bool isBool = element.isInteger(1);
  if (isBool) {
    input = ctx.convert(input, ctx.b.getI8Type());
    src = ctx.convert(src, ctx.b.getI8Type());
  }
  src = ctx.convert(src, getElementTypeOrSelf(input.getType()));
  Value result = ctx.create<ScatterOp>(input.getType(), input, index, src,
                                       ctx.b.getI64IntegerAttr(dim),
                                       ctx.b.getStringAttr(reduce),
                                       ctx.b.getBoolAttr(includeSelf));
  return isBool ? ctx.convert(result, element) : result;
}

/// scatter.src / scatter.value / scatter.reduce / scatter.value_reduce /
/// scatter_add / scatter_reduce.two.
LogicalResult convertScatter(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<Value> index = ctx.tensor("index");
  FailureOr<int64_t> dim = ctx.getInt("dim");
  FailureOr<bool> includeSelf = ctx.getBool("include_self", true);
  if (failed(self) || failed(index) || failed(dim) || failed(includeSelf))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  FailureOr<int64_t> d = normalizeDim(ctx, *dim, selfType.getRank());
  if (failed(d))
    return failure();
  std::string reduce = "none";
  if (ctx.has("reduce")) {
    FailureOr<std::string> given = ctx.getString("reduce");
    if (failed(given))
      return failure();
    reduce = *given == "add" ? "sum" : *given == "multiply" ? "prod" : *given;
    if (!llvm::is_contained({"sum", "prod", "mean", "amax", "amin"}, reduce))
      return ctx.fail("unknown reduce '" + *given + "'");
  }
  if (ctx.node.op() == "aten.scatter_add.default")
    reduce = "sum";
  auto indexType = cast<RankedTensorType>(index->getType());
  Value src;
  if (ctx.has("src")) {
    FailureOr<Value> given = ctx.tensor("src");
    if (failed(given))
      return failure();
    src = *given;
  } else {
    std::optional<Scalar> value = ctx.scalar("value");
    if (!value)
      return ctx.fail("expects a src tensor or a number value");
    src = ctx.splat(indexType.clone(selfType.getElementType()), *value);
  }
  if (selfType.getRank() == 0) {
    // A rank-0 scatter writes the one element (index 0).
    auto one = RankedTensorType::get({1}, selfType.getElementType());
    Value result = scatter(ctx, ctx.create<ReshapeOp>(one, *self),
                           ctx.create<ReshapeOp>(one.clone(indexType.getElementType()), *index),
                           ctx.create<ReshapeOp>(one.clone(getElementTypeOrSelf(src.getType())), src),
                           0, reduce, *includeSelf);
    return ctx.setResult(ctx.create<ReshapeOp>(selfType, result));
  }
  return ctx.setResult(scatter(ctx, *self, *index, src, *d, reduce, *includeSelf));
}

/// index_put on the leading dims: `indices` (integer tensors, broadcast
/// together to B) index dims 0..k of `self`; `values` broadcasts to
/// [B..., rest...]. The indexed dims flattened are one linear index, and the
/// values are scattered along it.
FailureOr<Value> indexPutLeading(NodeContext &ctx, Value self, ArrayRef<Value> indices,
                                 Value values, bool accumulate) {
  auto selfType = cast<RankedTensorType>(self.getType());
  Type element = selfType.getElementType();
  int64_t k = indices.size();
  SmallVector<int64_t> bshape;
  for (Value index : indices) {
    auto t = cast<RankedTensorType>(index.getType());
    if (!t.hasStaticShape())
      return ctx.fail("index_put with dynamic index shapes is not supported");
    ArrayRef<int64_t> s = t.getShape();
    if (s.size() > bshape.size())
      bshape.insert(bshape.begin(), s.size() - bshape.size(), 1);
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &b = bshape[bshape.size() - s.size() + i];
      b = b == 1 ? s[i] : b;
    }
  }
  int64_t n = 1;
  for (int64_t b : bshape)
    n *= b;
  ArrayRef<int64_t> shape = selfType.getShape();
  SmallVector<int64_t> rest(shape.begin() + k, shape.end());
  int64_t leading = 1;
  for (int64_t d = 0; d < k; ++d)
    leading *= shape[d];
  Type i64 = ctx.b.getI64Type();
  auto bType = RankedTensorType::get(bshape, i64);
  Value linear;
  int64_t stride = 1;
  for (int64_t d = k - 1; d >= 0; --d) {
    FailureOr<Value> b = ctx.broadcastTo(ctx.convert(indices[d], i64), bshape);
    if (failed(b))
      return failure();
    // Negative indices count from the end.
    Value isNegative = ctx.create<CompareOp>(ComparisonDirection::LT, *b,
                                             ctx.splat(bType, int64_t(0)));
    Value wrapped = ctx.create<WhereOp>(
        isNegative, ctx.create<AddOp>(*b, ctx.splat(bType, shape[d])), *b);
    Value term = stride == 1 ? wrapped : ctx.create<MulOp>(wrapped, ctx.splat(bType, stride));
    linear = linear ? ctx.create<AddOp>(linear, term) : term;
    stride *= shape[d];
  }
  // self as [leading, rest...], values as [n, rest...], the index expanded.
  SmallVector<int64_t> flatShape{leading}, updShape{n};
  flatShape.append(rest);
  updShape.append(rest);
  Value flat = ctx.create<ReshapeOp>(RankedTensorType::get(flatShape, element), self);
  SmallVector<int64_t> fullValues(bshape);
  fullValues.append(rest);
  FailureOr<Value> v = ctx.broadcastTo(ctx.convert(values, element), fullValues);
  if (failed(v))
    return failure();
  Value upd = ctx.create<ReshapeOp>(RankedTensorType::get(updShape, element), *v);
  SmallVector<int64_t> columnShape{n};
  columnShape.append(rest.size(), 1);
  Value column = ctx.create<ReshapeOp>(RankedTensorType::get(columnShape, i64), linear);
  Value index = ctx.create<ExpandOp>(RankedTensorType::get(updShape, i64), column);
  Value result = scatter(ctx, flat, index, upd, 0, accumulate ? "sum" : "none", true);
  return ctx.create<ReshapeOp>(selfType, result);
}

/// index_put (`x[i, j] = v`, `x[:, i] += v`): index tensors for a block of
/// adjacent dims (the indexed dims moved first when they are not leading); a
/// bool mask with one value is a where.
LogicalResult convertIndexPut(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<SmallVector<Value>> indices = ctx.optionalTensorList("indices");
  FailureOr<Value> values = ctx.tensor("values");
  FailureOr<bool> accumulate = ctx.getBool("accumulate", false);
  if (failed(type) || failed(self) || failed(indices) || failed(values) ||
      failed(accumulate))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  Type element = selfType.getElementType();
  auto valuesType = cast<RankedTensorType>(values->getType());
  if (indices->size() == 1 && (*indices)[0] &&
      getElementTypeOrSelf((*indices)[0].getType()).isInteger(1)) {
    auto maskType = cast<RankedTensorType>((*indices)[0].getType());
    if (maskType.getShape() != selfType.getShape() ||
        !valuesType.hasStaticShape() || valuesType.getNumElements() != 1)
      return ctx.fail("index_put with a bool mask is supported with a mask of the "
                      "tensor's shape and one value (masked_fill); other masks "
                      "give data-dependent shapes");
    Value v = ctx.convert(ctx.create<ReshapeOp>(RankedTensorType::get({}, valuesType.getElementType()), *values), element);
    FailureOr<Value> broadcast = ctx.broadcastTo(v, selfType.getShape());
    if (failed(broadcast))
      return failure();
    Value update = *accumulate ? ctx.create<AddOp>(*self, *broadcast) : *broadcast;
    return ctx.setResult(ctx.create<WhereOp>((*indices)[0], update, *self));
  }
  SmallVector<Value> given;
  int64_t first = -1, rank = selfType.getRank();
  for (auto [d, index] : llvm::enumerate(*indices)) {
    if (!index)
      continue;
    if (first < 0)
      first = d;
    else if (static_cast<int64_t>(d) != first + static_cast<int64_t>(given.size()))
      return ctx.fail("index_put with index tensors on dims that are not adjacent is not "
                      "supported");
    Type e = getElementTypeOrSelf(index.getType());
    if (!isa<IntegerType>(e) || e.isInteger(1))
      return ctx.fail("index_put mixes bool masks and index tensors; not supported");
    given.push_back(index);
  }
  int64_t k = given.size();
  if (k == 0 || first + k > rank)
    return ctx.fail("index_put needs 1 to rank index tensors");
  if (!selfType.hasStaticShape())
    return ctx.fail("index_put on a tensor with dynamic dims is not supported");
  if (first == 0) {
    FailureOr<Value> result = indexPutLeading(ctx, *self, given, *values, *accumulate);
    return failed(result) ? failure() : ctx.setResult(*result);
  }
  // Indexed dims [first, first + k) moved first; the values, whose indexed
  // part (the indices' broadcast rank) sits at `first`, likewise.
  int64_t bRank = 0;
  for (Value index : given)
    bRank = std::max<int64_t>(bRank, cast<RankedTensorType>(index.getType()).getRank());
  SmallVector<int64_t> perm, valueShape;
  for (int64_t d = first; d < first + k; ++d)
    perm.push_back(d);
  for (int64_t d = 0; d < rank; ++d)
    if (d < first || d >= first + k)
      perm.push_back(d);
  Value moved = ctx.create<TransposeOp>(*self, perm);
  // The values broadcast to [pre..., B..., rest...] first.
  SmallVector<int64_t> bshape(bRank, 1);
  for (Value index : given) {
    ArrayRef<int64_t> s = cast<RankedTensorType>(index.getType()).getShape();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &b = bshape[bRank - s.size() + i];
      b = b == 1 ? s[i] : b;
    }
  }
  ArrayRef<int64_t> shape = selfType.getShape();
  valueShape.append(shape.begin(), shape.begin() + first);
  valueShape.append(bshape);
  valueShape.append(shape.begin() + first + k, shape.end());
  FailureOr<Value> v = ctx.broadcastTo(ctx.convert(*values, element), valueShape);
  if (failed(v))
    return failure();
  SmallVector<int64_t> vperm;
  for (int64_t d = first; d < first + bRank; ++d)
    vperm.push_back(d);
  for (int64_t d = 0; d < static_cast<int64_t>(valueShape.size()); ++d)
    if (d < first || d >= first + bRank)
      vperm.push_back(d);
  Value movedValues = ctx.create<TransposeOp>(*v, vperm);
  FailureOr<Value> result = indexPutLeading(ctx, moved, given, movedValues, *accumulate);
  if (failed(result))
    return failure();
  SmallVector<int64_t> inverse(rank);
  for (int64_t i = 0; i < rank; ++i)
    inverse[perm[i]] = i;
  return ctx.setResult(ctx.create<TransposeOp>(*result, inverse));
}

//===----------------------------------------------------------------------===//
// Constant index maps
//===----------------------------------------------------------------------===//

LogicalResult convertFlip(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<SmallVector<int64_t>> dims = ctx.getInts("dims");
  if (failed(self) || failed(dims))
    return failure();
  int64_t rank = cast<RankedTensorType>(self->getType()).getRank();
  Value result = *self;
  for (int64_t dim : *dims) {
    FailureOr<int64_t> d = normalizeDim(ctx, dim, rank);
    if (failed(d))
      return failure();
    if (rank == 0)
      continue;
    FailureOr<int64_t> size = staticDim(ctx, result, *d);
    if (failed(size))
      return failure();
    SmallVector<int64_t> index;
    for (int64_t i = *size - 1; i >= 0; --i)
      index.push_back(i);
    result = selectAlong(ctx, result, *d, index);
  }
  return ctx.setResult(result);
}

/// repeat: [1, s0, 1, s1, ...] expanded to [r0, s0, r1, s1, ...], then merged.
LogicalResult convertRepeat(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<SmallVector<int64_t>> repeats = ctx.getInts("repeats");
  if (failed(type) || failed(self) || failed(repeats))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  int64_t rank = repeats->size(), offset = rank - selfType.getRank();
  if (offset < 0)
    return ctx.fail("repeat needs at least as many repeats as dims");
  if (!selfType.hasStaticShape())
    return ctx.fail("repeat of a tensor with dynamic dims is not supported");
  SmallVector<int64_t> split, expanded;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t s = d < offset ? 1 : selfType.getDimSize(d - offset);
    split.append({1, s});
    expanded.append({(*repeats)[d], s});
  }
  Type element = selfType.getElementType();
  Value x = ctx.create<ReshapeOp>(RankedTensorType::get(split, element), *self);
  x = ctx.create<ExpandOp>(RankedTensorType::get(expanded, element), x);
  return ctx.setResult(ctx.create<ReshapeOp>(*type, x));
}

/// reflection_pad{1,2,3}d / replication_pad{1,2,3}d: each padded dim through
/// its index map (padding may be negative, which crops).
template <bool reflect>
LogicalResult convertIndexPad(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<SmallVector<int64_t>> padding = ctx.getInts("padding");
  if (failed(self) || failed(padding))
    return failure();
  int64_t rank = cast<RankedTensorType>(self->getType()).getRank();
  int64_t n = padding->size() / 2;
  if (padding->size() % 2 || n > rank)
    return ctx.fail("padding needs an even number of entries, at most twice the rank");
  Value result = *self;
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = rank - 1 - i, lo = (*padding)[2 * i], hi = (*padding)[2 * i + 1];
    FailureOr<int64_t> size = staticDim(ctx, result, d);
    if (failed(size))
      return failure();
    if (reflect && (lo >= *size || hi >= *size))
      return ctx.fail("reflection padding must be smaller than the dim it pads");
    if (*size == 0 && (lo > 0 || hi > 0))
      return ctx.fail("padding an empty dim");
    SmallVector<int64_t> index;
    for (int64_t j = -lo; j < *size + hi; ++j) {
      int64_t src = j;
      if (reflect) {
        if (src < 0)
          src = -src;
        if (src >= *size)
          src = 2 * (*size - 1) - src;
      } else {
        src = std::clamp<int64_t>(src, 0, *size - 1);
      }
      index.push_back(src);
    }
    result = selectAlong(ctx, result, d, index);
  }
  return ctx.setResult(result);
}

/// diagonal: dim1 and dim2 moved last and flattened, then every (m+1)-th
/// element from the offset's start.
LogicalResult convertDiagonal(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<int64_t> offset = ctx.getInt("offset", 0);
  FailureOr<int64_t> dim1 = ctx.getInt("dim1", 0);
  FailureOr<int64_t> dim2 = ctx.getInt("dim2", 1);
  if (failed(type) || failed(self) || failed(offset) || failed(dim1) || failed(dim2))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  int64_t rank = selfType.getRank();
  FailureOr<int64_t> a = normalizeDim(ctx, *dim1, rank);
  FailureOr<int64_t> b = normalizeDim(ctx, *dim2, rank);
  if (failed(a) || failed(b))
    return failure();
  if (*a == *b)
    return ctx.fail("diagonal dims must differ");
  if (!selfType.hasStaticShape())
    return ctx.fail("diagonal of a tensor with dynamic dims is not supported");
  SmallVector<int64_t> perm, shape;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *a && d != *b) {
      perm.push_back(d);
      shape.push_back(selfType.getDimSize(d));
    }
  perm.append({*a, *b});
  int64_t n = selfType.getDimSize(*a), m = selfType.getDimSize(*b);
  Value x = ctx.create<TransposeOp>(*self, perm);
  shape.push_back(n * m);
  x = ctx.create<ReshapeOp>(RankedTensorType::get(shape, selfType.getElementType()), x);
  SmallVector<int64_t> index;
  int64_t row = *offset >= 0 ? 0 : -*offset, col = *offset >= 0 ? *offset : 0;
  for (; row < n && col < m; ++row, ++col)
    index.push_back(row * m + col);
  x = selectAlong(ctx, x, shape.size() - 1, index);
  if (x.getType() != *type)
    x = ctx.create<ReshapeOp>(*type, x);
  return ctx.setResult(x);
}

/// as_strided: a gather from the row-major storage of `self` (the compiled
/// program's tensors are contiguous).
LogicalResult convertAsStrided(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<SmallVector<int64_t>> size = ctx.getInts("size");
  FailureOr<SmallVector<int64_t>> stride = ctx.getInts("stride");
  FailureOr<int64_t> offset = ctx.getInt("storage_offset", 0);
  if (failed(type) || failed(self) || failed(size) || failed(stride) || failed(offset))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  if (!selfType.hasStaticShape())
    return ctx.fail("as_strided of a tensor with dynamic dims is not supported");
  if (size->size() != stride->size())
    return ctx.fail("as_strided needs one stride per size");
  int64_t numel = selfType.getNumElements(), count = 1;
  for (int64_t s : *size)
    count *= s;
  SmallVector<int64_t> index;
  index.reserve(count);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat, at = *offset;
    for (int64_t d = size->size() - 1; d >= 0; --d) {
      at += (rest % (*size)[d]) * (*stride)[d];
      rest /= (*size)[d];
    }
    if (at < 0 || at >= numel)
      return ctx.fail("as_strided reads outside the tensor's " + llvm::Twine(numel) +
                      " elements");
    index.push_back(at);
  }
  Value flat = ctx.create<ReshapeOp>(
      RankedTensorType::get({numel}, selfType.getElementType()), *self);
  return ctx.setResult(ctx.create<ReshapeOp>(*type, selectAlong(ctx, flat, 0, index)));
}

/// slice_scatter / select_scatter: `self` and `src` concatenated along dim,
/// then each position taken from one or the other.
LogicalResult convertSliceScatter(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<Value> src = ctx.tensor("src");
  FailureOr<int64_t> dim = ctx.getInt("dim", 0);
  if (failed(type) || failed(self) || failed(src) || failed(dim))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  FailureOr<int64_t> d = normalizeDim(ctx, *dim, selfType.getRank());
  if (failed(d))
    return failure();
  FailureOr<int64_t> size = staticDim(ctx, *self, *d);
  if (failed(size))
    return failure();
  int64_t start, end, step = 1;
  Value srcValue = ctx.convert(*src, selfType.getElementType());
  if (ctx.has("index")) { // select_scatter
    FailureOr<int64_t> index = ctx.getInt("index");
    if (failed(index))
      return failure();
    start = *index < 0 ? *index + *size : *index;
    end = start + 1;
    SmallVector<int64_t> shape(selfType.getShape());
    shape[*d] = 1;
    srcValue = ctx.create<ReshapeOp>(selfType.clone(shape), srcValue);
  } else {
    FailureOr<int64_t> s = ctx.getInt("start", 0);
    FailureOr<int64_t> e = ctx.getInt("end", *size);
    FailureOr<int64_t> st = ctx.getInt("step", 1);
    if (failed(s) || failed(e) || failed(st))
      return failure();
    auto clampIndex = [&](int64_t i) {
      if (i < 0)
        i += *size;
      return std::clamp<int64_t>(i, 0, *size);
    };
    start = clampIndex(*s);
    end = std::max(start, clampIndex(*e));
    step = *st;
  }
  if (step <= 0)
    return ctx.fail("slice_scatter needs a positive step");
  SmallVector<int64_t> index;
  int64_t next = 0;
  for (int64_t i = 0; i < *size; ++i) {
    bool inSlice = i >= start && i < end && (i - start) % step == 0;
    index.push_back(inSlice ? *size + next++ : i);
  }
  Value both = ctx.create<ConcatOp>(ValueRange{*self, srcValue}, *d);
  return ctx.setResult(selectAlong(ctx, both, *d, index));
}

/// masked_scatter: the i-th true position of the mask takes source's i-th
/// element (a cumulative count of the mask indexes the flattened source).
LogicalResult convertMaskedScatter(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<Value> mask = ctx.tensor("mask");
  FailureOr<Value> source = ctx.tensor("source");
  if (failed(type) || failed(self) || failed(mask) || failed(source))
    return failure();
  if (!type->hasStaticShape())
    return ctx.fail("masked_scatter with dynamic dims is not supported");
  FailureOr<Value> m = ctx.broadcastTo(*mask, type->getShape());
  if (failed(m))
    return failure();
  int64_t n = type->getNumElements();
  auto sourceType = cast<RankedTensorType>(source->getType());
  if (!sourceType.hasStaticShape())
    return ctx.fail("masked_scatter with a dynamic source is not supported");
  Type i64 = ctx.b.getI64Type();
  auto flatBool = RankedTensorType::get({n}, ctx.b.getI1Type());
  auto flatIndex = RankedTensorType::get({n}, i64);
  Value flatMask = ctx.create<ReshapeOp>(flatBool, *m);
  Value position = ctx.create<CumsumOp>(ctx.convert(flatMask, i64), int64_t(0));
  position = ctx.create<SubOp>(position, ctx.splat(flatIndex, int64_t(1)));
  position = ctx.create<MaximumOp>(position, ctx.splat(flatIndex, int64_t(0)));
  Type element = type->getElementType();
  Value flatSource = ctx.create<ReshapeOp>(
      RankedTensorType::get({sourceType.getNumElements()}, sourceType.getElementType()),
      *source);
  Value picked =
      ctx.convert(ctx.create<IndexSelectOp>(flatSource, position, 0), element);
  Value flatSelf = ctx.create<ReshapeOp>(RankedTensorType::get({n}, element),
                                         ctx.convert(*self, element));
  return ctx.setResult(
      ctx.create<ReshapeOp>(*type, ctx.create<WhereOp>(flatMask, picked, flatSelf)));
}

/// PyTorch's source index scale of an upsampling axis: 1 / scale_factor when
/// one was given, else in / out.
double upsampleScale(int64_t in, int64_t out, std::optional<double> factor) {
  if (factor && *factor > 0)
    return 1.0 / *factor;
  return out > 0 ? static_cast<double>(in) / static_cast<double>(out) : 0.0;
}

/// The `scale_factors` list of an upsampling op (empty when None).
SmallVector<double> scaleFactors(NodeContext &ctx) {
  SmallVector<double> factors;
  const llvm::json::Object *a = ctx.arg("scale_factors");
  if (const llvm::json::Array *list = a ? a->getArray("as_floats") : nullptr)
    for (const llvm::json::Value &v : *list)
      factors.push_back(v.getAsNumber().value_or(0.0));
  return factors;
}

/// The spatial dims an upsampling op maps: the input and the recorded result
/// have `rank` (or, when `rank` is 0, the same rank of at least 3) and equal
/// batch and channel sizes; every input dim is nonzero.
LogicalResult checkUpsampleShapes(NodeContext &ctx, RankedTensorType selfType,
                                  RankedTensorType type, int64_t rank = 0) {
  if (selfType.getRank() != type.getRank() || selfType.getRank() < 3 ||
      (rank && selfType.getRank() != rank))
    return ctx.fail("upsampling needs an input of rank " +
                    (rank ? llvm::Twine(rank) : llvm::Twine("3 to 5")) +
                    " and a result of the same rank, got " +
                    llvm::Twine(selfType.getRank()) + " and " + llvm::Twine(type.getRank()));
  if (!selfType.hasStaticShape() || !type.hasStaticShape())
    return ctx.fail("upsampling with dynamic dims is not supported");
  for (int64_t d = 0; d < selfType.getRank(); ++d)
    if (selfType.getDimSize(d) == 0 || (d < 2 && selfType.getDimSize(d) != type.getDimSize(d)))
      return ctx.fail("upsampling of a " + llvm::Twine(selfType.getRank()) +
                      "-d input whose dim " + llvm::Twine(d) +
                      " is empty or differs from the result's");
  // Each spatial dim becomes constant tables of source indices and weights, one
  // entry per output position: 2^24 positions (far past any image) keeps them
  // to a few hundred MB.
  constexpr int64_t kMaxUpsampledDim = int64_t(1) << 24;
  for (int64_t d = 2; d < type.getRank(); ++d)
    if (type.getDimSize(d) > kMaxUpsampledDim)
      return ctx.fail("upsampling to " + llvm::Twine(type.getDimSize(d)) +
                      " elements along a dim is not supported (at most " +
                      llvm::Twine(kMaxUpsampledDim) + ")");
  return success();
}

/// upsample_nearest{1,2,3}d(.vec): src = min(floor(dst * scale), in - 1), in
/// float as PyTorch computes it.
LogicalResult convertUpsampleNearest(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("input");
  if (failed(type) || failed(self))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  if (failed(checkUpsampleShapes(ctx, selfType, *type)))
    return failure();
  int64_t spatial = selfType.getRank() - 2;
  SmallVector<double> factors = scaleFactors(ctx);
  Value result = *self;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t d = 2 + i, in = selfType.getDimSize(d), out = type->getDimSize(d);
    std::optional<double> factor;
    if (static_cast<size_t>(i) < factors.size())
      factor = factors[i];
    float scale = static_cast<float>(upsampleScale(in, out, factor));
    SmallVector<int64_t> index;
    for (int64_t j = 0; j < out; ++j)
      index.push_back(std::min<int64_t>(
          static_cast<int64_t>(std::floor(static_cast<float>(j) * scale)), in - 1));
    result = selectAlong(ctx, result, d, index);
  }
  return ctx.setResult(result);
}

/// upsample_bilinear2d(.vec): separable, each axis a weighted sum of two
/// index_selects with PyTorch's source coordinates.
LogicalResult convertUpsampleBilinear(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("input");
  FailureOr<bool> alignCorners = ctx.getBool("align_corners", false);
  if (failed(type) || failed(self) || failed(alignCorners))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  if (failed(checkUpsampleShapes(ctx, selfType, *type, /*rank=*/4)))
    return failure();
  if (!isa<FloatType>(selfType.getElementType()))
    return ctx.fail("bilinear upsampling needs a floating-point input");
  SmallVector<double> factors = scaleFactors(ctx);
  Value result = *self;
  for (int64_t i = 0; i < 2; ++i) {
    int64_t d = 2 + i, in = selfType.getDimSize(d), out = type->getDimSize(d);
    std::optional<double> factor;
    if (static_cast<size_t>(i) < factors.size())
      factor = factors[i];
    SmallVector<int64_t> i0, i1;
    SmallVector<double> w0, w1;
    for (int64_t j = 0; j < out; ++j) {
      double src;
      if (*alignCorners)
        src = out > 1 ? static_cast<double>(in - 1) / (out - 1) * j : 0.0;
      else
        src = std::max(0.0, (j + 0.5) * upsampleScale(in, out, factor) - 0.5);
      int64_t lo = std::min<int64_t>(static_cast<int64_t>(src), in - 1);
      int64_t hi = lo < in - 1 ? lo + 1 : lo;
      double l = std::min(1.0, std::max(0.0, src - lo));
      i0.push_back(lo);
      i1.push_back(hi);
      w0.push_back(1.0 - l);
      w1.push_back(l);
    }
    SmallVector<int64_t> wshape(selfType.getRank() - d, 1);
    wshape[0] = out;
    auto weights = [&](ArrayRef<double> w) -> FailureOr<Value> {
      auto t = RankedTensorType::get(wshape, selfType.getElementType());
      SmallVector<APFloat> values;
      for (double v : w) {
        APFloat f(v);
        bool lost;
        f.convert(cast<FloatType>(t.getElementType()).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &lost);
        values.push_back(f);
      }
      Value c = ctx.create<ConstantOp>(DenseElementsAttr::get(t, values));
      SmallVector<int64_t> shape(cast<RankedTensorType>(result.getType()).getShape());
      shape[d] = out;
      return ctx.broadcastTo(c, shape);
    };
    FailureOr<Value> a = weights(w0), b = weights(w1);
    if (failed(a) || failed(b))
      return failure();
    Value lo = selectAlong(ctx, result, d, i0), hi = selectAlong(ctx, result, d, i1);
    result = ctx.create<AddOp>(ctx.create<MulOp>(lo, *a), ctx.create<MulOp>(hi, *b));
  }
  return ctx.setResult(result);
}

//===----------------------------------------------------------------------===//
// Bags, folds and grid sampling: scatters and gathers with computed indices
//===----------------------------------------------------------------------===//

/// _embedding_bag (sum, mean, max): each index's bag is the number of
/// offsets at or before its position, minus one; the rows are scattered
/// into their bags (empty bags stay 0, as PyTorch's do).
LogicalResult convertEmbeddingBag(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType(0);
  FailureOr<Value> weight = ctx.tensor("weight");
  FailureOr<Value> indices = ctx.tensor("indices");
  FailureOr<Value> offsets = ctx.tensor("offsets");
  FailureOr<int64_t> mode = ctx.getInt("mode", 0);
  FailureOr<Value> perSample = ctx.optionalTensor("per_sample_weights");
  FailureOr<bool> includeLast = ctx.getBool("include_last_offset", false);
  FailureOr<int64_t> paddingIdx = ctx.getInt("padding_idx", -1);
  if (failed(type) || failed(weight) || failed(indices) || failed(offsets) || failed(mode) ||
      failed(perSample) || failed(includeLast) || failed(paddingIdx))
    return failure();
  for (unsigned i = 1; i < ctx.numResults(); ++i)
    if (ctx.resultUsed(i))
      return ctx.fail("the bookkeeping outputs of _embedding_bag (offset2bag, bag_size, "
                      "max_indices) are training-only and not supported");
  auto indicesType = cast<RankedTensorType>(indices->getType());
  auto offsetsType = cast<RankedTensorType>(offsets->getType());
  if (indicesType.getRank() != 1 || offsetsType.getRank() != 1 ||
      !indicesType.hasStaticShape() || !offsetsType.hasStaticShape() ||
      !type->hasStaticShape())
    return ctx.fail("_embedding_bag needs static 1-D indices and offsets");
  int64_t n = indicesType.getDimSize(0), bags = type->getDimSize(0), d = type->getDimSize(1);
  Type i64 = ctx.b.getI64Type();
  Type element = type->getElementType();
  // bag[i] = #{b < bags : offsets[b] <= i} - 1.
  FailureOr<Value> firstOffsets = ctx.sliceDim(ctx.convert(*offsets, i64), 0, 0, bags, 1);
  if (failed(firstOffsets))
    return failure();
  auto square = RankedTensorType::get({n, bags}, i64);
  Value positions = ctx.create<IotaOp>(square, 0);
  Value starts = ctx.create<ExpandOp>(
      square, ctx.create<ReshapeOp>(RankedTensorType::get({1, bags}, i64), *firstOffsets));
  Value started = ctx.convert(
      ctx.create<CompareOp>(ComparisonDirection::GE, positions, starts), i64);
  auto column = RankedTensorType::get({n}, i64);
  Value bag = ctx.create<SubOp>(ctx.create<SumOp>(started, SmallVector<int64_t>{1}, false),
                                ctx.splat(column, int64_t(1)));
  Value idx = ctx.convert(*indices, i64);
  if (*paddingIdx >= 0) {
    // Padding entries go to bag `bags`, out of range: the scatter skips them.
    Value isPadding =
        ctx.create<CompareOp>(ComparisonDirection::EQ, idx, ctx.splat(column, *paddingIdx));
    bag = ctx.create<WhereOp>(isPadding, ctx.splat(column, bags), bag);
  }
  Value rows = ctx.convert(ctx.create<EmbeddingOp>(*weight, idx), element);
  auto rowsType = RankedTensorType::get({n, d}, element);
  if (*perSample) {
    if (*mode != 0)
      return ctx.fail("per_sample_weights are only defined for mode='sum'");
    Value w = ctx.create<ReshapeOp>(RankedTensorType::get({n, 1}, element),
                                    ctx.convert(*perSample, element));
    rows = ctx.create<MulOp>(rows, ctx.create<ExpandOp>(rowsType, w));
  }
  const char *reduce = *mode == 0 ? "sum" : *mode == 1 ? "mean" : "amax";
  if (*mode < 0 || *mode > 2)
    return ctx.fail("unknown _embedding_bag mode " + llvm::Twine(*mode));
  Value index = ctx.create<ExpandOp>(
      RankedTensorType::get({n, d}, i64),
      ctx.create<ReshapeOp>(RankedTensorType::get({n, 1}, i64), bag));
  Value zeros = ctx.splat(*type, int64_t(0));
  return ctx.setResult(scatter(ctx, zeros, index, rows, 0, reduce, false), 0);
}

/// col2im (fold): every column element added at its window position of the
/// padded image (a scatter-add with constant indices), then the padding cut.
LogicalResult convertCol2im(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> self = ctx.tensor("self");
  FailureOr<SmallVector<int64_t>> outSize = ctx.getInts("output_size");
  FailureOr<SmallVector<int64_t>> kernel = ctx.getInts("kernel_size");
  FailureOr<SmallVector<int64_t>> dilation = ctx.getInts("dilation");
  FailureOr<SmallVector<int64_t>> padding = ctx.getInts("padding");
  FailureOr<SmallVector<int64_t>> stride = ctx.getInts("stride");
  if (failed(type) || failed(self) || failed(outSize) || failed(kernel) || failed(dilation) ||
      failed(padding) || failed(stride))
    return failure();
  auto selfType = cast<RankedTensorType>(self->getType());
  if (!selfType.hasStaticShape() || outSize->size() != 2 || kernel->size() != 2)
    return ctx.fail("col2im needs static shapes and 2-D sizes");
  bool batched = selfType.getRank() == 3;
  int64_t n = batched ? selfType.getDimSize(0) : 1;
  int64_t rows = selfType.getDimSize(batched ? 1 : 0), l = selfType.getDimSize(batched ? 2 : 1);
  int64_t kh = (*kernel)[0], kw = (*kernel)[1], h = (*outSize)[0], w = (*outSize)[1];
  int64_t ph = (*padding)[0], pw = (*padding)[1], hp = h + 2 * ph, wp = w + 2 * pw;
  int64_t blocksW = (wp - (*dilation)[1] * (kw - 1) - 1) / (*stride)[1] + 1;
  if (kh * kw == 0 || rows % (kh * kw) || blocksW <= 0)
    return ctx.fail("col2im's input does not match its kernel and sizes");
  int64_t c = rows / (kh * kw), k = kh * kw * l;
  SmallVector<int64_t> positions;
  for (int64_t ki = 0; ki < kh; ++ki)
    for (int64_t kj = 0; kj < kw; ++kj)
      for (int64_t b = 0; b < l; ++b) {
        int64_t y = (b / blocksW) * (*stride)[0] + ki * (*dilation)[0];
        int64_t x = (b % blocksW) * (*stride)[1] + kj * (*dilation)[1];
        positions.push_back(y * wp + x);
      }
  Type element = selfType.getElementType();
  Type i64 = ctx.b.getI64Type();
  Value cols = ctx.create<ReshapeOp>(RankedTensorType::get({n, c, k}, element), *self);
  Value index = ctx.create<ExpandOp>(
      RankedTensorType::get({n, c, k}, i64),
      ctx.create<ReshapeOp>(RankedTensorType::get({1, 1, k}, i64),
                            indexConstant(ctx, positions)));
  Value zeros = ctx.splat(RankedTensorType::get({n, c, hp * wp}, element), int64_t(0));
  Value image = scatter(ctx, zeros, index, cols, 2, "sum", true);
  image = ctx.create<ReshapeOp>(RankedTensorType::get({n, c, hp, wp}, element), image);
  FailureOr<Value> cut = ctx.sliceDim(image, 2, ph, ph + h, 1);
  if (failed(cut))
    return failure();
  cut = ctx.sliceDim(*cut, 3, pw, pw + w, 1);
  if (failed(cut))
    return failure();
  return ctx.setResult(ctx.create<ReshapeOp>(*type, *cut));
}

/// grid_sampler_2d, bilinear or nearest, zeros or border padding: the input
/// flattened per channel and gathered at each corner's linear index.
LogicalResult convertGridSampler(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  FailureOr<Value> input = ctx.tensor("input");
  FailureOr<Value> grid = ctx.tensor("grid");
  FailureOr<int64_t> interpolation = ctx.getInt("interpolation_mode", 0);
  FailureOr<int64_t> paddingMode = ctx.getInt("padding_mode", 0);
  FailureOr<bool> alignCorners = ctx.getBool("align_corners", false);
  if (failed(type) || failed(input) || failed(grid) || failed(interpolation) ||
      failed(paddingMode) || failed(alignCorners))
    return failure();
  if (*interpolation > 1)
    return ctx.fail("bicubic grid sampling is not supported yet (bilinear and nearest are)");
  if (*paddingMode > 1)
    return ctx.fail("reflection padding in grid sampling is not supported yet (zeros and "
                    "border are)");
  auto inType = cast<RankedTensorType>(input->getType());
  if (!inType.hasStaticShape() || !type->hasStaticShape())
    return ctx.fail("grid sampling needs static shapes");
  int64_t n = inType.getDimSize(0), c = inType.getDimSize(1), h = inType.getDimSize(2),
          w = inType.getDimSize(3);
  int64_t p = type->getDimSize(2) * type->getDimSize(3);
  Type element = inType.getElementType();
  Type i64 = ctx.b.getI64Type();
  auto coordType = RankedTensorType::get({n, p}, element);
  auto flatGrid = ctx.create<ReshapeOp>(RankedTensorType::get({n, p, 2}, element),
                                        ctx.convert(*grid, element));
  auto coordinate = [&](int64_t which, int64_t size) -> FailureOr<Value> {
    FailureOr<Value> g = ctx.sliceDim(flatGrid, 2, which, which + 1, 1);
    if (failed(g))
      return failure();
    Value v = ctx.create<ReshapeOp>(coordType, *g);
    Value one = ctx.splat(coordType, 1.0);
    // align_corners: -1 and 1 are the centres of the corner pixels, else their edges.
    Value r = *alignCorners
                  ? ctx.create<MulOp>(ctx.create<AddOp>(v, one),
                                      ctx.splat(coordType, (size - 1) / 2.0))
                  : ctx.create<DivOp>(
                        ctx.create<SubOp>(ctx.create<MulOp>(ctx.create<AddOp>(v, one),
                                                            ctx.splat(coordType, double(size))),
                                          one),
                        ctx.splat(coordType, 2.0), RoundingMode::None);
    if (*paddingMode == 1)
      r = ctx.create<ClampOp>(r, ctx.b.getF64FloatAttr(0.0),
                              ctx.b.getF64FloatAttr(double(size - 1)));
    return r;
  };
  FailureOr<Value> ix = coordinate(0, w), iy = coordinate(1, h);
  if (failed(ix) || failed(iy))
    return failure();
  Value flatInput =
      ctx.create<ReshapeOp>(RankedTensorType::get({n, c, h * w}, element), *input);
  auto gathered = RankedTensorType::get({n, c, p}, element);
  // The input at integer coordinates (x, y) times `weight`, 0 outside.
  auto corner = [&](Value x, Value y, Value weight) -> Value {
    auto inside = [&](Value v, int64_t size) {
      return ctx.create<LogicalAndOp>(
          ctx.create<CompareOp>(ComparisonDirection::GE, v, ctx.splat(coordType, 0.0)),
          ctx.create<CompareOp>(ComparisonDirection::LE, v,
                                ctx.splat(coordType, double(size - 1))));
    };
    Value valid = ctx.create<LogicalAndOp>(inside(x, w), inside(y, h));
    auto clampTo = [&](Value v, int64_t size) {
      return ctx.create<ClampOp>(v, ctx.b.getF64FloatAttr(0.0),
                                 ctx.b.getF64FloatAttr(double(size - 1)));
    };
    Value linear = ctx.convert(
        ctx.create<AddOp>(ctx.create<MulOp>(clampTo(y, h), ctx.splat(coordType, double(w))),
                          clampTo(x, w)),
        i64);
    Value index = ctx.create<ExpandOp>(
        RankedTensorType::get({n, c, p}, i64),
        ctx.create<ReshapeOp>(RankedTensorType::get({n, 1, p}, i64), linear));
    Value wv = ctx.create<WhereOp>(valid, weight, ctx.splat(coordType, 0.0));
    Value wb = ctx.create<ExpandOp>(
        gathered, ctx.create<ReshapeOp>(RankedTensorType::get({n, 1, p}, element), wv));
    return ctx.create<MulOp>(ctx.create<GatherOp>(flatInput, index, 2), wb);
  };
  Value result;
  if (*interpolation == 1) {
    result = corner(ctx.create<RoundOp>(*ix), ctx.create<RoundOp>(*iy), ctx.splat(coordType, 1.0));
  } else {
    Value x0 = ctx.create<FloorOp>(*ix), y0 = ctx.create<FloorOp>(*iy);
    Value one = ctx.splat(coordType, 1.0);
    Value x1 = ctx.create<AddOp>(x0, one), y1 = ctx.create<AddOp>(y0, one);
    Value wx1 = ctx.create<SubOp>(*ix, x0), wy1 = ctx.create<SubOp>(*iy, y0);
    Value wx0 = ctx.create<SubOp>(one, wx1), wy0 = ctx.create<SubOp>(one, wy1);
    result = ctx.create<AddOp>(
        ctx.create<AddOp>(corner(x0, y0, ctx.create<MulOp>(wx0, wy0)),
                          corner(x1, y0, ctx.create<MulOp>(wx1, wy0))),
        ctx.create<AddOp>(corner(x0, y1, ctx.create<MulOp>(wx0, wy1)),
                          corner(x1, y1, ctx.create<MulOp>(wx1, wy1))));
  }
  return ctx.setResult(ctx.create<ReshapeOp>(*type, result));
}

} // namespace

void ::thunder::import::detail::registerIndexingConversions(ConversionTable &table) {
  for (const char *op : {"aten.sort.default", "aten.sort.stable"})
    table[op] = convertSort;
  table["aten.topk.default"] = convertTopk<false>;
  table["aten.kthvalue.default"] = convertTopk<true>;
  for (const char *op : {"aten.scatter.src", "aten.scatter.value", "aten.scatter.reduce",
                         "aten.scatter.value_reduce", "aten.scatter_add.default",
                         "aten.scatter_reduce.two"})
    table[op] = convertScatter;
  table["aten.index_put.default"] = convertIndexPut;
  table["aten.flip.default"] = convertFlip;
  table["aten.repeat.default"] = convertRepeat;
  for (const char *op : {"aten.reflection_pad1d.default", "aten.reflection_pad2d.default",
                         "aten.reflection_pad3d.default"})
    table[op] = convertIndexPad<true>;
  for (const char *op : {"aten.replication_pad1d.default", "aten.replication_pad2d.default",
                         "aten.replication_pad3d.default"})
    table[op] = convertIndexPad<false>;
  table["aten.diagonal.default"] = convertDiagonal;
  table["aten.as_strided.default"] = convertAsStrided;
  for (const char *op : {"aten.slice_scatter.default", "aten.select_scatter.default"})
    table[op] = convertSliceScatter;
  table["aten.masked_scatter.default"] = convertMaskedScatter;
  for (const char *op : {"aten.upsample_nearest1d.vec", "aten.upsample_nearest2d.vec",
                         "aten.upsample_nearest3d.vec"})
    table[op] = convertUpsampleNearest;
  table["aten.upsample_bilinear2d.vec"] = convertUpsampleBilinear;
  for (const char *op : {"aten._embedding_bag.default", "aten._embedding_bag_forward_only.default"})
    table[op] = convertEmbeddingBag;
  table["aten.col2im.default"] = convertCol2im;
  table["aten.grid_sampler_2d.default"] = convertGridSampler;
}
