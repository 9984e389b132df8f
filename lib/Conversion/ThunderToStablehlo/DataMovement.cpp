//===- DataMovement.cpp - Views, gathers and iota to StableHLO ------------===//
//
// reshape, broadcast, expand, transpose, slice, concat, pad, gather,
// index_select, embedding, scatter and iota. The gathers become
// `stablehlo.gather` and scatter `stablehlo.scatter`, with dimension numbers
// that reproduce PyTorch's indexing.
//
//===----------------------------------------------------------------------===//
#include "PopulatePatterns.h"

#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::stablehlo;

namespace {

/// `stablehlo.gather` of `operand` at `indices` with the given dimension
/// numbers; `slice` holds the slice sizes.
Value gather(HloBuilder &h, Value operand, Value indices, RankedTensorType result,
             ArrayRef<int64_t> offsetDims, ArrayRef<int64_t> collapsedDims,
             ArrayRef<int64_t> startIndexMap, int64_t indexVectorDim,
             ArrayRef<int64_t> sliceSizes) {
  std::string numbers = "gather<offset_dims = " + dimList(offsetDims) +
                        ", collapsed_slice_dims = " + dimList(collapsedDims) +
                        ", start_index_map = " + dimList(startIndexMap) +
                        ", index_vector_dim = " + std::to_string(indexVectorDim) +
                        ">";
  return h.op("gather", {operand, indices}, result,
              {h.attr("dimension_numbers", h.opaque(numbers)),
               h.attr("slice_sizes", h.i64Array(sliceSizes)),
               h.attr("indices_are_sorted", h.builder().getBoolAttr(false))});
}

/// torch.gather: every result element reads the input at its own
/// coordinates with `dim` replaced by the index. The full coordinates are
/// the index along `dim` and iotas along the other dims, stacked on a new
/// trailing dim; each gathers a 1x...x1 slice.
FailureOr<Value> lowerGather(GatherOp op, GatherOp::Adaptor adaptor, HloBuilder &h) {
  Value index = h.convert(adaptor.getIndex(), h.builder().getI64Type());
  ArrayRef<int64_t> shape = shapeOf(index);
  int64_t rank = shape.size();
  SmallVector<int64_t> coordShape(shape);
  coordShape.push_back(1);
  auto coordType = tensorOf(coordShape, h.builder().getI64Type());
  SmallVector<Value> coords;
  for (int64_t d = 0; d < rank; ++d) {
    Value c = d == op.getDim()
                  ? index
                  : h.iota(tensorOf(shape, h.builder().getI64Type()), d);
    coords.push_back(h.reshape(c, coordType));
  }
  SmallVector<int64_t> allShape(shape);
  allShape.push_back(rank);
  Value all = h.op("concatenate", coords,
                   tensorOf(allShape, h.builder().getI64Type()),
                   {h.attr("dimension", h.i64(rank))});
  SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  SmallVector<int64_t> ones(rank, 1);
  return gather(h, adaptor.getInput(), all,
                cast<RankedTensorType>(op.getType()), /*offsetDims=*/{}, dims,
                dims, /*indexVectorDim=*/rank, ones);
}

/// index_select: whole slices along `dim`, the index's length taking the
/// place of `dim` in the result.
FailureOr<Value> lowerIndexSelect(IndexSelectOp op, IndexSelectOp::Adaptor adaptor,
                                  HloBuilder &h) {
  int64_t dim = op.getDim();
  ArrayRef<int64_t> inputShape = shapeOf(adaptor.getInput());
  int64_t rank = inputShape.size();
  SmallVector<int64_t> offsetDims, sliceSizes(inputShape);
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      offsetDims.push_back(d);
  sliceSizes[dim] = 1;
  return gather(h, adaptor.getInput(), adaptor.getIndex(),
                cast<RankedTensorType>(op.getType()), offsetDims, {dim}, {dim},
                /*indexVectorDim=*/1, sliceSizes);
}

/// embedding: one row of the table per index, the row after the index dims.
FailureOr<Value> lowerEmbedding(EmbeddingOp op, EmbeddingOp::Adaptor adaptor,
                                HloBuilder &h) {
  int64_t indexRank = shapeOf(adaptor.getIndices()).size();
  int64_t width = shapeOf(adaptor.getWeight())[1];
  return gather(h, adaptor.getWeight(), adaptor.getIndices(),
                cast<RankedTensorType>(op.getType()), {indexRank}, {0}, {0},
                /*indexVectorDim=*/indexRank, {1, width});
}

FailureOr<Value> lowerSlice(SliceOp op, SliceOp::Adaptor adaptor, HloBuilder &h) {
  ArrayRef<int64_t> shape = shapeOf(adaptor.getOperand());
  SmallVector<int64_t> limit;
  for (auto [end, size] : llvm::zip_equal(op.getEnd(), shape))
    limit.push_back(std::min(end, size));
  SmallVector<int64_t> start;
  for (auto [begin, end] : llvm::zip_equal(op.getStart(), limit))
    start.push_back(std::min(begin, end));
  return h.op("slice", adaptor.getOperand(), op.getType(),
              {h.attr("start_indices", h.i64Array(start)),
               h.attr("limit_indices", h.i64Array(limit)),
               h.attr("strides", h.i64Array(op.getStep()))});
}

FailureOr<Value> lowerPad(PadOp op, PadOp::Adaptor adaptor, HloBuilder &h) {
  Value x = adaptor.getOperand();
  Value value = h.scalar(elementOf(x), op.getValue().convertToDouble());
  SmallVector<int64_t> interior(op.getLow().size(), 0);
  return h.op("pad", {x, value}, op.getType(),
              {h.attr("edge_padding_low", h.i64Array(op.getLow())),
               h.attr("edge_padding_high", h.i64Array(op.getHigh())),
               h.attr("interior_padding", h.i64Array(interior))});
}

/// Builds a scatter's update computation in `region`: `body` combines the
/// current value and the update ("" returns the update: overwrite).
void buildScatterBody(HloBuilder &h, Region &region, Type element, StringRef body) {
  OpBuilder &b = h.builder();
  OpBuilder::InsertionGuard guard(b);
  auto scalar = RankedTensorType::get({}, element);
  Block *block = b.createBlock(&region, {}, {scalar, scalar},
                               {h.location(), h.location()});
  Value current = block->getArgument(0), update = block->getArgument(1);
  h.create("return", body.empty() ? update : h.binary(body, current, update), {});
}

/// `stablehlo.scatter` of `updates` into `operand` at the full coordinates
/// `coords` (the index positions' shape, then one coordinate per dim),
/// combined by `body`.
Value scatterAt(HloBuilder &h, Value operand, Value coords, Value updates,
                StringRef body) {
  int64_t rank = shapeOf(operand).size();
  SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::string numbers = "scatter<update_window_dims = [], inserted_window_dims = " +
                        dimList(dims) + ", scatter_dims_to_operand_dims = " +
                        dimList(dims) + ", index_vector_dim = " + std::to_string(rank) +
                        ">";
  Operation *scatter = h.create(
      "scatter", {operand, coords, updates}, operand.getType(),
      {h.attr("scatter_dimension_numbers", h.opaque(numbers)),
       h.attr("indices_are_sorted", h.builder().getBoolAttr(false)),
       h.attr("unique_indices", h.builder().getBoolAttr(false))},
      /*regions=*/1);
  buildScatterBody(h, scatter->getRegion(0), elementOf(operand), body);
  return scatter->getResult(0);
}

/// torch.scatter_reduce along `dim`: every position of the index writes the
/// src element there into the input at its own coordinates with `dim`
/// replaced by the index (negative indices count from the end; indices out of
/// range write nothing), combined by `reduce`. Without include_self the
/// positions that receive a value start from the reduction's identity; mean
/// divides by the number of values received (plus one for the input's),
/// rounding down for integers.
FailureOr<Value> lowerScatter(ScatterOp op, ScatterOp::Adaptor adaptor, HloBuilder &h) {
  OpBuilder &b = h.builder();
  Value input = adaptor.getInput();
  auto type = cast<RankedTensorType>(input.getType());
  Type element = type.getElementType(), i64 = b.getI64Type();
  int64_t rank = type.getRank(), dim = op.getDim();
  StringRef reduce = op.getReduce();
  if (rank == 0)
    return op.emitError("thunder-convert-to-stablehlo: a rank-0 scatter is not supported");
  Value index = h.convert(adaptor.getIndex(), i64);
  ArrayRef<int64_t> shape = shapeOf(index);
  // Negative indices count from the end of `dim`.
  Value size = h.splatLike(index, static_cast<double>(type.getDimSize(dim)));
  index = h.select(h.compare("LT", index, h.splatLike(index, 0)), h.add(index, size), index);
  SmallVector<int64_t> coordShape(shape);
  coordShape.push_back(1);
  SmallVector<Value> coords;
  for (int64_t d = 0; d < rank; ++d) {
    Value c = d == dim ? index : h.iota(tensorOf(shape, i64), d);
    coords.push_back(h.reshape(c, tensorOf(coordShape, i64)));
  }
  SmallVector<int64_t> allShape(shape);
  allShape.push_back(rank);
  Value all = h.op("concatenate", coords, tensorOf(allShape, i64),
                   {h.attr("dimension", h.i64(rank))});
  // The src elements at the index's positions.
  Value src = adaptor.getSrc();
  if (shapeOf(src) != shape) {
    SmallVector<int64_t> zeros(rank, 0), ones(rank, 1);
    src = h.op("slice", src, tensorOf(shape, element),
               {h.attr("start_indices", h.i64Array(zeros)),
                h.attr("limit_indices", h.i64Array(shape)),
                h.attr("strides", h.i64Array(ones))});
  }
  if (reduce == "none")
    return scatterAt(h, input, all, src, "");

  bool isBool = element.isInteger(1);
  StringRef body = llvm::StringSwitch<StringRef>(reduce)
                       .Cases("sum", "mean", isBool ? "or" : "add")
                       .Case("prod", isBool ? "and" : "multiply")
                       .Case("amax", isBool ? "or" : "maximum")
                       .Case("amin", isBool ? "and" : "minimum")
                       .Default("");
  if (body.empty())
    return op.emitError("thunder-convert-to-stablehlo: unknown scatter reduce '")
           << reduce << "'";
  // How many values each position receives (mean, and without include_self).
  Value received;
  if (reduce == "mean" || !op.getIncludeSelf())
    received = scatterAt(h, h.splat(type.clone(i64), 0), all,
                         h.splat(tensorOf(shape, i64), 1), "add");
  Value base = input;
  if (!op.getIncludeSelf()) {
    Value identity = reduce == "prod"   ? h.splat(type, 1)
                     : reduce == "amax" ? h.broadcastInDim(h.lowest(element), type, {})
                     : reduce == "amin" ? h.broadcastInDim(h.highest(element), type, {})
                                        : h.splat(type, 0);
    Value touched = h.compare("GT", received, h.splatLike(received, 0));
    base = h.select(touched, identity, input);
  }
  Value result = scatterAt(h, base, all, src, body);
  if (reduce != "mean")
    return result;
  Value touched = h.compare("GT", received, h.splatLike(received, 0));
  Value count = op.getIncludeSelf() ? h.add(received, h.splatLike(received, 1)) : received;
  // Untouched positions divide by one (and keep the input).
  count = h.select(touched, count, h.splatLike(count, 1));
  Value mean;
  if (isa<FloatType>(element)) {
    Type acc = accumulatorType(element);
    mean = h.convert(h.div(h.convert(result, acc), h.convert(count, acc)), element);
  } else {
    // Floor division (the count is positive): truncation, one less when a
    // negative sum leaves a remainder.
    Value c = h.convert(count, element);
    Value q = h.div(result, c);
    Value r = h.binary("remainder", result, c);
    Value fix = h.binary("and", h.compare("NE", r, h.splatLike(r, 0)),
                         h.compare("LT", result, h.splatLike(result, 0)));
    mean = h.select(fix, h.sub(q, h.splatLike(q, 1)), q);
  }
  return h.select(touched, mean, input);
}

} // namespace

void mlir::thunder::stablehlo::populateDataMovementPatterns(
    RewritePatternSet &patterns) {
  addLowering<ReshapeOp>(patterns, [](ReshapeOp op, ReshapeOp::Adaptor adaptor,
                                      HloBuilder &h) -> FailureOr<Value> {
    return h.op("reshape", adaptor.getOperand(), op.getType());
  });
  addLowering<BroadcastOp>(patterns, [](BroadcastOp op, BroadcastOp::Adaptor adaptor,
                                        HloBuilder &h) -> FailureOr<Value> {
    return h.op("broadcast_in_dim", adaptor.getOperand(), op.getType(),
                {h.attr("broadcast_dimensions",
                        h.i64Array(op.getBroadcastDims()))});
  });
  addLowering<ExpandOp>(patterns, [](ExpandOp op, ExpandOp::Adaptor adaptor,
                                     HloBuilder &h) -> FailureOr<Value> {
    int64_t rank = cast<RankedTensorType>(op.getType()).getRank();
    int64_t operandRank = shapeOf(adaptor.getOperand()).size();
    auto dims = llvm::to_vector(llvm::seq<int64_t>(rank - operandRank, rank));
    return h.op("broadcast_in_dim", adaptor.getOperand(), op.getType(),
                {h.attr("broadcast_dimensions", h.i64Array(dims))});
  });
  addLowering<TransposeOp>(patterns, [](TransposeOp op, TransposeOp::Adaptor adaptor,
                                        HloBuilder &h) -> FailureOr<Value> {
    return h.op("transpose", adaptor.getOperand(), op.getType(),
                {h.attr("permutation", h.i64Array(op.getPermutation()))});
  });
  addLowering<ConcatOp>(patterns, [](ConcatOp op, ConcatOp::Adaptor adaptor,
                                     HloBuilder &h) -> FailureOr<Value> {
    return h.op("concatenate", adaptor.getInputs(), op.getType(),
                {h.attr("dimension", h.i64(op.getDim()))});
  });
  addLowering<IotaOp>(patterns, [](IotaOp op, IotaOp::Adaptor,
                                   HloBuilder &h) -> FailureOr<Value> {
    return h.iota(cast<RankedTensorType>(op.getType()), op.getDim());
  });
  addLowering<SliceOp>(patterns, lowerSlice);
  addLowering<PadOp>(patterns, lowerPad);
  addLowering<GatherOp>(patterns, lowerGather);
  addLowering<IndexSelectOp>(patterns, lowerIndexSelect);
  addLowering<EmbeddingOp>(patterns, lowerEmbedding);
  addLowering<ScatterOp>(patterns, lowerScatter);
}
