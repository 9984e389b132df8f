//===- Reductions.cpp - Reductions to StableHLO ---------------------------===//
//
// sum, mean, max, min, prod (`stablehlo.reduce` with a one-op body), argmax
// and argmin (a variadic reduce over values and indices whose body keeps the
// first extreme, NaN counting as the extreme as in PyTorch) and cumsum (a
// `stablehlo.reduce_window` over a window as long as the dim), argsort (a
// stable `stablehlo.sort` of the keys and an iota). Sums, means,
// products and cumsums of f16/bf16 accumulate in f32, as PyTorch does.
//
//===----------------------------------------------------------------------===//
#include "PopulatePatterns.h"

#include "thunder/Dialect/Thunder/IR/ThunderOps.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::stablehlo;

namespace {

/// The kind of a one-op reduction: its body op and its identity.
struct ReduceKind {
  StringRef body;
  enum { Zero, One, Lowest, Highest } init;
  /// Accumulate narrow floats in f32 (sums and products round).
  bool widen;
};

Value identity(HloBuilder &h, Type element, const ReduceKind &kind) {
  switch (kind.init) {
  case ReduceKind::Zero: return h.scalar(element, 0);
  case ReduceKind::One: return h.scalar(element, 1);
  case ReduceKind::Lowest: return h.lowest(element);
  case ReduceKind::Highest: return h.highest(element);
  }
  return {};
}

/// Reduces `input` over `dims` and reshapes to `result` (keepdim). `mean`
/// divides by the number of reduced elements before rounding back.
Value reduceTo(HloBuilder &h, Value input, ArrayRef<int64_t> dims,
               RankedTensorType result, const ReduceKind &kind,
               bool mean = false) {
  Type element = elementOf(input);
  Type acc = kind.widen ? accumulatorType(element) : element;
  Value x = h.convert(input, acc);
  Value r = h.reduce(x, identity(h, acc, kind), dims, kind.body);
  if (mean) {
    int64_t count = 1;
    for (int64_t d : dims)
      count *= shapeOf(input)[d];
    r = h.div(r, h.splatLike(r, static_cast<double>(count)));
  }
  r = h.convert(r, element);
  return h.reshape(r, result);
}

template <typename OpTy>
void addReduction(RewritePatternSet &patterns, ReduceKind kind,
                  bool mean = false) {
  addLowering<OpTy>(patterns, [kind, mean](OpTy op, typename OpTy::Adaptor adaptor,
                                           HloBuilder &h) -> FailureOr<Value> {
    return reduceTo(h, adaptor.getInput(), op.getDims(),
                    cast<RankedTensorType>(op.getType()), kind, mean);
  });
}

/// argmax (`max`) or argmin: a reduce over (value, index) pairs. The body
/// picks the candidate `b` over the accumulated `a` when b is strictly
/// better (NaN beats any number), or equally good with a smaller index, so
/// the result is the first extreme whatever order XLA reduces in.
Value argReduce(HloBuilder &h, Value input, int64_t dim, RankedTensorType result,
                bool max) {
  OpBuilder &b = h.builder();
  Type element = elementOf(input);
  Type i64 = b.getI64Type();
  auto inputType = cast<RankedTensorType>(input.getType());
  Value index = h.iota(inputType.clone(i64), dim);
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(inputType.getShape()))
    if (static_cast<int64_t>(d) != dim)
      shape.push_back(size);
  Operation *reduce = h.create(
      "reduce",
      {input, index, max ? h.lowest(element) : h.highest(element),
       h.scalar(i64, 0)},
      {tensorOf(shape, element), tensorOf(shape, i64)},
      {h.attr("dimensions", h.i64Array({dim}))}, /*regions=*/1);
  {
    OpBuilder::InsertionGuard guard(b);
    auto valueType = RankedTensorType::get({}, element);
    auto indexType = RankedTensorType::get({}, i64);
    Location loc = h.location();
    Block *block = b.createBlock(&reduce->getRegion(0), {},
                                 {valueType, indexType, valueType, indexType},
                                 {loc, loc, loc, loc});
    Value aV = block->getArgument(0), aI = block->getArgument(1);
    Value bV = block->getArgument(2), bI = block->getArgument(3);
    Value better = h.compare(max ? "GT" : "LT", bV, aV);
    Value equal = h.compare("EQ", bV, aV);
    if (isa<FloatType>(element)) {
      Value aNaN = h.compare("NE", aV, aV), bNaN = h.compare("NE", bV, bV);
      better = h.binary("or", better,
                        h.binary("and", bNaN, h.unary("not", aNaN)));
      equal = h.binary("or", equal, h.binary("and", bNaN, aNaN));
    }
    Value pick = h.binary("or", better,
                          h.binary("and", equal, h.compare("LT", bI, aI)));
    h.create("return", {h.select(pick, bV, aV), h.select(pick, bI, aI)}, {});
  }
  return h.reshape(reduce->getResult(1), result);
}

/// cumsum: a sum over a window that ends at each element and reaches back
/// over the whole dim (padding with zeros before it).
FailureOr<Value> lowerCumsum(CumsumOp op, CumsumOp::Adaptor adaptor, HloBuilder &h) {
  Value input = adaptor.getInput();
  Type element = elementOf(input);
  Type acc = accumulatorType(element);
  Value x = h.convert(input, acc);
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank(), dim = op.getDim();
  SmallVector<int64_t> window(rank, 1), ones(rank, 1), low(rank, 0),
      high(rank, 0);
  window[dim] = type.getDimSize(dim);
  low[dim] = type.getDimSize(dim) - 1;
  Value r = h.reduceWindow(x, h.scalar(acc, 0), type, window, ones, ones, low,
                           high, "add");
  return h.convert(r, element);
}

/// argsort: a stable `stablehlo.sort` of (input, iota along `dim`) whose
/// comparator orders the keys, NaN above every number (torch.sort); the
/// permuted iota is the result.
FailureOr<Value> lowerArgSort(ArgSortOp op, ArgSortOp::Adaptor adaptor,
                              HloBuilder &h) {
  OpBuilder &b = h.builder();
  Value input = adaptor.getInput();
  Type element = elementOf(input);
  auto resultType = cast<RankedTensorType>(op.getType());
  int64_t dim = op.getDim();
  if (resultType.getRank() == 0)
    return h.splat(resultType, 0);
  Value index = h.iota(resultType, dim);
  Operation *sort = h.create(
      "sort", {input, index}, {input.getType(), resultType},
      {h.attr("dimension", h.i64(dim)), h.attr("is_stable", b.getBoolAttr(true))},
      /*regions=*/1);
  {
    OpBuilder::InsertionGuard guard(b);
    auto keyType = RankedTensorType::get({}, element);
    auto indexType = RankedTensorType::get({}, b.getI64Type());
    Location loc = h.location();
    Block *block = b.createBlock(&sort->getRegion(0), {},
                                 {keyType, keyType, indexType, indexType},
                                 {loc, loc, loc, loc});
    Value lhs = block->getArgument(0), rhs = block->getArgument(1);
    bool descending = op.getDescending();
    // lhs goes first: it is smaller (larger when descending); equal keys
    // keep their order (the sort is stable).
    Value first = h.compare(descending ? "GT" : "LT", lhs, rhs);
    if (isa<FloatType>(element)) {
      Value lhsNaN = h.compare("NE", lhs, lhs), rhsNaN = h.compare("NE", rhs, rhs);
      Value nanFirst = descending ? h.binary("and", lhsNaN, h.unary("not", rhsNaN))
                                  : h.binary("and", rhsNaN, h.unary("not", lhsNaN));
      first = h.binary("or", first, nanFirst);
    }
    h.create("return", first, {});
  }
  return sort->getResult(1);
}

} // namespace

void mlir::thunder::stablehlo::populateReductionPatterns(
    RewritePatternSet &patterns) {
  addReduction<SumOp>(patterns, {"add", ReduceKind::Zero, true});
  addReduction<MeanOp>(patterns, {"add", ReduceKind::Zero, true}, /*mean=*/true);
  addReduction<ProdOp>(patterns, {"multiply", ReduceKind::One, true});
  addReduction<MaxOp>(patterns, {"maximum", ReduceKind::Lowest, false});
  addReduction<MinOp>(patterns, {"minimum", ReduceKind::Highest, false});
  addLowering<ArgMaxOp>(patterns, [](ArgMaxOp op, ArgMaxOp::Adaptor adaptor,
                                     HloBuilder &h) -> FailureOr<Value> {
    return argReduce(h, adaptor.getInput(), op.getDim(),
                     cast<RankedTensorType>(op.getType()), /*max=*/true);
  });
  addLowering<ArgMinOp>(patterns, [](ArgMinOp op, ArgMinOp::Adaptor adaptor,
                                     HloBuilder &h) -> FailureOr<Value> {
    return argReduce(h, adaptor.getInput(), op.getDim(),
                     cast<RankedTensorType>(op.getType()), /*max=*/false);
  });
  addLowering<CumsumOp>(patterns, lowerCumsum);
  addLowering<ArgSortOp>(patterns, lowerArgSort);
}
