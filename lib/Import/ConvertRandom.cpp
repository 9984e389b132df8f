//===- ConvertRandom.cpp - ATen random factories to thunder.random --------===//
//
// rand, randn (and their _like forms) are thunder.random draws of the
// recorded type; randint is 64 random bits reduced into [low, high);
// randperm(n) is the argsort of n random 64-bit keys (a uniformly random
// permutation, up to key collisions, which the stable sort still resolves
// into a permutation). Each draw gets the next stream id of its function, so
// the draws of a program are independent (docs/dialect.md, thunder.random).
//
//===----------------------------------------------------------------------===//
#include "Conversion.h"

#include "thunder/Dialect/Thunder/IR/RandomOps.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace ::thunder;
using namespace ::thunder::import;
using namespace ::thunder::import::detail;

namespace {

/// A thunder.random of `type` with the function's next stream id.
Value draw(NodeContext &ctx, RankedTensorType type, RandomDistribution distribution) {
  int64_t next = 0;
  if (Operation *parent = ctx.b.getInsertionBlock()->getParentOp())
    parent->walk([&](RandomOp r) {
      next = std::max<int64_t>(next, r.getStreamAttr().getInt() + 1);
    });
  return ctx.create<RandomOp>(type, distribution, uint64_t(next));
}

template <RandomDistribution kDistribution>
LogicalResult convertFloatDraw(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  if (!isa<FloatType>(type->getElementType()))
    return ctx.fail("draws floats; the recorded dtype is not a floating-point type");
  return ctx.setResult(draw(ctx, *type, kDistribution));
}

/// randint(low=0, high, size) and randint_like(self, low=0, high): bits
/// reduced by Python's remainder into [0, high - low), plus low. The bias of
/// the reduction is below range / 2^64.
LogicalResult convertRandint(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  std::optional<Scalar> lowArg = ctx.has("low") ? ctx.scalar("low") : Scalar(int64_t(0));
  std::optional<Scalar> highArg = ctx.scalar("high");
  auto asInt = [](const std::optional<Scalar> &s) -> std::optional<int64_t> {
    if (!s)
      return std::nullopt;
    if (auto *i = std::get_if<int64_t>(&*s))
      return *i;
    return std::nullopt;
  };
  std::optional<int64_t> low = asInt(lowArg), high = asInt(highArg);
  if (!low || !high)
    return ctx.fail("randint with a symbolic or non-integer low/high is not supported");
  if (*high <= *low)
    return ctx.fail("randint expects low < high, got low = " + std::to_string(*low) +
                    " and high = " + std::to_string(*high));
  if (*low < 0 && *high > INT64_MAX + *low)
    return ctx.fail("randint's range high - low does not fit in 64 bits");
  auto bitsType = type->clone(ctx.b.getI64Type());
  Value value = draw(ctx, bitsType, RandomDistribution::Bits);
  value = ctx.create<RemainderOp>(value, ctx.splat(bitsType, *high - *low));
  if (*low != 0)
    value = ctx.create<AddOp>(value, ctx.splat(bitsType, *low));
  return ctx.setResult(ctx.convert(value, type->getElementType()));
}

/// randperm(n): the order that sorts n random 64-bit keys.
LogicalResult convertRandperm(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  if (type->getRank() != 1)
    return ctx.fail("randperm must produce a 1-D tensor");
  auto keysType = type->clone(ctx.b.getI64Type());
  Value keys = draw(ctx, keysType, RandomDistribution::Bits);
  Value order = ctx.create<ArgSortOp>(keysType, keys, int64_t(0), false);
  return ctx.setResult(ctx.convert(order, type->getElementType()));
}

} // namespace

namespace thunder::import::detail {

/// (Declared in Importer.cpp, its one caller.)
void registerRandomConversions(ConversionTable &table) {
  for (const char *op : {"aten.rand.default", "aten.rand_like.default"})
    table[op] = convertFloatDraw<RandomDistribution::Uniform>;
  for (const char *op : {"aten.randn.default", "aten.randn_like.default"})
    table[op] = convertFloatDraw<RandomDistribution::Normal>;
  for (const char *op : {"aten.randint.default", "aten.randint.low", "aten.randint_like.default",
                         "aten.randint_like.low_dtype"})
    table[op] = convertRandint;
  table["aten.randperm.default"] = convertRandperm;
}

} // namespace thunder::import::detail
