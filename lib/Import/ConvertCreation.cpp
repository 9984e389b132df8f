//===- ConvertCreation.cpp - ATen factories, and symbolic-int bookkeeping -===//
//
// arange, full, zeros/ones (and their _like forms) and scalar_tensor take
// their shape and dtype from what torch.export recorded. Nodes that compute
// symbolic sizes (sym_size, _operator.mul, ...) or assert on metadata produce
// no tensors: every size they feed is already in the recorded types.
//
//===----------------------------------------------------------------------===//
#include "Conversion.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace ::thunder;
using namespace ::thunder::import;
using namespace ::thunder::import::detail;

namespace {

LogicalResult convertNothing(NodeContext &) { return success(); }

/// A tensor of the recorded type filled with the number argument `name` (or
/// `value` when the op has none).
LogicalResult convertFill(NodeContext &ctx, llvm::StringRef name, Scalar value) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  if (!name.empty()) {
    std::optional<Scalar> given = ctx.scalar(name);
    if (!given)
      return ctx.fail("argument '" + name + "' is not a number");
    value = *given;
  }
  return ctx.setResult(ctx.splat(*type, value));
}

LogicalResult convertFull(NodeContext &ctx) {
  return convertFill(ctx, "fill_value", int64_t(0));
}
LogicalResult convertScalarTensor(NodeContext &ctx) {
  return convertFill(ctx, "s", int64_t(0));
}
LogicalResult convertZeros(NodeContext &ctx) {
  return convertFill(ctx, "", int64_t(0));
}
LogicalResult convertOnes(NodeContext &ctx) {
  return convertFill(ctx, "", int64_t(1));
}

/// arange(start, end, step): start + step * iota, in the recorded dtype.
LogicalResult convertArange(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.resultType();
  if (failed(type))
    return failure();
  if (type->getRank() != 1)
    return ctx.fail("arange must produce a 1-D tensor");
  std::optional<Scalar> start = ctx.scalar("start");
  std::optional<Scalar> step = ctx.scalar("step");
  if ((ctx.has("start") && !start) || (ctx.has("step") && !step))
    return ctx.fail("arange with a symbolic start or step is not supported");
  Value result = ctx.create<IotaOp>(*type, 0);
  auto isValue = [](const std::optional<Scalar> &s, double v) {
    return !s || std::visit([v](auto x) { return double(x) == v; }, *s);
  };
  if (!isValue(step, 1))
    result = ctx.create<MulOp>(result, ctx.splat(*type, *step));
  if (!isValue(start, 0))
    result = ctx.create<AddOp>(result, ctx.splat(*type, *start));
  return ctx.setResult(result);
}

} // namespace

void ::thunder::import::detail::registerCreationConversions(ConversionTable &table) {
  for (const char *op : {"aten.full.default", "aten.full_like.default",
                         "aten.new_full.default"})
    table[op] = convertFull;
  table["aten.scalar_tensor.default"] = convertScalarTensor;
  for (const char *op : {"aten.zeros.default", "aten.zeros_like.default",
                         "aten.new_zeros.default"})
    table[op] = convertZeros;
  for (const char *op : {"aten.ones.default", "aten.ones_like.default",
                         "aten.new_ones.default"})
    table[op] = convertOnes;
  for (const char *op : {"aten.arange.default", "aten.arange.start",
                         "aten.arange.start_step"})
    table[op] = convertArange;
  for (const char *op :
       {"aten.sym_size.int", "aten.sym_numel.default", "aten.sym_stride.int",
        "aten.sym_storage_offset.default",
        "_operator.mul", "_operator.add", "_operator.sub", "_operator.floordiv",
        "_operator.mod", "_operator.truediv", "aten._assert_tensor_metadata.default",
        "aten._assert_scalar.default", "aten._assert_async.msg",
        "aten.sym_constrain_range_for_size.default"})
    table[op] = convertNothing;
}
