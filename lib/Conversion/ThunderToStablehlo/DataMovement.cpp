//===- DataMovement.cpp - Views, gathers and iota to StableHLO ------------===//
//
// reshape, broadcast, expand, transpose, slice, concat, pad, gather,
// index_select, embedding and iota. The gathers become `stablehlo.gather`
// with dimension numbers that reproduce PyTorch's indexing.
//
//===----------------------------------------------------------------------===//
#include "PopulatePatterns.h"

#include "thunder/Dialect/Thunder/IR/ThunderOps.h"

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
}
