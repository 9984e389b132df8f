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
  if (!name.empty() && ctx.dataRef(name)) {
    // A fill value read from tensor data (.item()): the 0-d tensor, broadcast.
    FailureOr<Value> filled = ctx.operandAs(name, *type);
    if (failed(filled))
      return failure();
    return ctx.setResult(*filled);
  }
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

/// aten._local_scalar_dense (.item()): the one element of `self` as a 0-d
/// tensor of its dtype, which stays on the device. Ops that take the Python
/// number take the tensor instead (NodeContext::operandAs); uses that need it
/// on the host are refused where they occur.
LogicalResult convertLocalScalarDense(NodeContext &ctx) {
  FailureOr<Value> self = ctx.tensor("self");
  if (failed(self))
    return failure();
  auto type = cast<RankedTensorType>(self->getType());
  if (!type.hasStaticShape())
    return ctx.fail(".item() of a tensor with dynamic dims is not supported: it "
                    "must have exactly one element, which only a static shape "
                    "guarantees");
  if (type.getNumElements() != 1)
    return ctx.fail(".item() of a tensor of " + llvm::Twine(type.getNumElements()) +
                    " elements: it must have exactly one (PyTorch raises)");
  Value scalar = *self;
  if (type.getRank() != 0)
    scalar = ctx.create<ReshapeOp>(type.clone(ArrayRef<int64_t>{}), scalar);
  return ctx.setDataResult(scalar);
}

/// What a Python-level number operand (`_operator.mul(a, b)`) is: a value
/// read from tensor data, or a constant; std::nullopt for anything else (a
/// symbolic size).
struct SymOperand {
  Value data;
  std::optional<Scalar> constant;
};

std::optional<SymOperand> symOperand(NodeContext &ctx, llvm::StringRef name) {
  if (Value data = ctx.dataValue(name))
    return SymOperand{data, std::nullopt};
  if (std::optional<Scalar> number = ctx.scalar(name))
    return SymOperand{Value(), number};
  return std::nullopt;
}

/// The Python type of a number operand as an element type: bool, int64
/// (Python int) or f64 (Python float).
Type pythonType(NodeContext &ctx, const SymOperand &operand) {
  Builder &b = ctx.b;
  if (operand.data) {
    Type element = cast<RankedTensorType>(operand.data.getType()).getElementType();
    if (element.isInteger(1))
      return b.getI1Type();
    return isa<IntegerType>(element) ? Type(b.getI64Type()) : Type(b.getF64Type());
  }
  if (std::holds_alternative<bool>(*operand.constant))
    return b.getI1Type();
  return std::holds_alternative<int64_t>(*operand.constant) ? Type(b.getI64Type())
                                                            : Type(b.getF64Type());
}

Value symTensor(NodeContext &ctx, const SymOperand &operand, Type element) {
  auto type = RankedTensorType::get({}, element);
  if (operand.data)
    return ctx.convert(operand.data, element);
  return ctx.splat(type, *operand.constant);
}

enum class SymOp { Add, Sub, Mul, TrueDiv, FloorDiv, Mod, Neg,
                   EQ, NE, LT, LE, GT, GE, Ite, ToFloat, Not };

/// Python-level arithmetic on symbolic numbers (_operator.mul, torch.sym_ite,
/// ...). On sizes it is bookkeeping (the sizes are in the recorded types);
/// on a value read from tensor data it is computed on the device, on 0-d
/// tensors, with Python's types: bools and ints are int64, floats f64.
template <SymOp kind>
LogicalResult convertSymbolic(NodeContext &ctx) {
  bool onData = llvm::any_of(ctx.node.inputs, [&](const NamedArgument &input) {
    return ctx.dataRef(input.name).has_value();
  });
  if (!onData)
    return success();
  SmallVector<llvm::StringRef> names;
  if constexpr (kind == SymOp::Ite)
    names = {"b", "t", "f"};
  else if constexpr (kind == SymOp::Neg || kind == SymOp::Not)
    names = {"a"};
  else if constexpr (kind == SymOp::ToFloat)
    names = {"a"};
  else
    names = {"a", "b"};
  SmallVector<SymOperand> operands;
  for (llvm::StringRef name : names) {
    std::optional<SymOperand> operand = symOperand(ctx, name);
    if (!operand) {
      if (!ctx.arg(name))
        return ctx.fail("missing argument '" + name + "'");
      return ctx.fail("argument '" + name + "' is a symbolic size (or another "
                      "host value), combined here with a value read from tensor "
                      "data (.item()), which stays on the device: not supported");
    }
    operands.push_back(*operand);
  }
  Builder &b = ctx.b;
  Type i1 = b.getI1Type(), i64 = b.getI64Type(), f64 = b.getF64Type();
  auto isFloat = [&](const SymOperand &o) { return pythonType(ctx, o) == f64; };
  if constexpr (kind == SymOp::Not) {
    return ctx.setDataResult(
        ctx.create<LogicalNotOp>(symTensor(ctx, operands[0], i1)));
  } else if constexpr (kind == SymOp::ToFloat) {
    return ctx.setDataResult(symTensor(ctx, operands[0], f64));
  } else if constexpr (kind == SymOp::Neg) {
    Type t = isFloat(operands[0]) ? f64 : i64;
    return ctx.setDataResult(ctx.create<NegOp>(symTensor(ctx, operands[0], t)));
  } else if constexpr (kind == SymOp::Ite) {
    Type t = isFloat(operands[1]) || isFloat(operands[2]) ? f64
             : pythonType(ctx, operands[1]) == i1 && pythonType(ctx, operands[2]) == i1
                 ? i1
                 : i64;
    return ctx.setDataResult(ctx.create<WhereOp>(symTensor(ctx, operands[0], i1),
                                                 symTensor(ctx, operands[1], t),
                                                 symTensor(ctx, operands[2], t)));
  } else {
    bool anyFloat = isFloat(operands[0]) || isFloat(operands[1]);
    Type t = anyFloat || kind == SymOp::TrueDiv ? f64 : i64;
    Value lhs = symTensor(ctx, operands[0], t), rhs = symTensor(ctx, operands[1], t);
    switch (kind) {
    case SymOp::Add: return ctx.setDataResult(ctx.create<AddOp>(lhs, rhs));
    case SymOp::Sub: return ctx.setDataResult(ctx.create<SubOp>(lhs, rhs));
    case SymOp::Mul: return ctx.setDataResult(ctx.create<MulOp>(lhs, rhs));
    case SymOp::TrueDiv:
      return ctx.setDataResult(ctx.create<DivOp>(lhs, rhs, RoundingMode::None));
    case SymOp::FloorDiv:
      return ctx.setDataResult(ctx.create<DivOp>(lhs, rhs, RoundingMode::Floor));
    case SymOp::Mod: return ctx.setDataResult(ctx.create<RemainderOp>(lhs, rhs));
    case SymOp::EQ:
      return ctx.setDataResult(ctx.create<CompareOp>(ComparisonDirection::EQ, lhs, rhs));
    case SymOp::NE:
      return ctx.setDataResult(ctx.create<CompareOp>(ComparisonDirection::NE, lhs, rhs));
    case SymOp::LT:
      return ctx.setDataResult(ctx.create<CompareOp>(ComparisonDirection::LT, lhs, rhs));
    case SymOp::LE:
      return ctx.setDataResult(ctx.create<CompareOp>(ComparisonDirection::LE, lhs, rhs));
    case SymOp::GT:
      return ctx.setDataResult(ctx.create<CompareOp>(ComparisonDirection::GT, lhs, rhs));
    case SymOp::GE:
      return ctx.setDataResult(ctx.create<CompareOp>(ComparisonDirection::GE, lhs, rhs));
    default: break;
    }
    return ctx.fail("internal error: unhandled symbolic op");
  }
}

/// torch.export's run-time assertions (`_assert_scalar`, range constraints):
/// on sizes, bookkeeping; on a value read from tensor data they would need a
/// host read, so they are taken as given (the value stays on the device).
LogicalResult convertAssertion(NodeContext &ctx) {
  for (const NamedArgument &input : ctx.node.inputs)
    (void)ctx.dataValue(input.name);
  return success();
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
        "aten.sym_storage_offset.default", "aten._assert_tensor_metadata.default",
        "aten._assert_async.msg"})
    table[op] = convertNothing;
  for (const char *op : {"aten._assert_scalar.default",
                         "aten.sym_constrain_range_for_size.default",
                         "aten.sym_constrain_range.default"})
    table[op] = convertAssertion;
  table["aten._local_scalar_dense.default"] = convertLocalScalarDense;
  table["_operator.add"] = convertSymbolic<SymOp::Add>;
  table["_operator.sub"] = convertSymbolic<SymOp::Sub>;
  table["_operator.mul"] = convertSymbolic<SymOp::Mul>;
  table["_operator.truediv"] = convertSymbolic<SymOp::TrueDiv>;
  table["_operator.floordiv"] = convertSymbolic<SymOp::FloorDiv>;
  table["_operator.mod"] = convertSymbolic<SymOp::Mod>;
  table["_operator.neg"] = convertSymbolic<SymOp::Neg>;
  table["_operator.eq"] = convertSymbolic<SymOp::EQ>;
  table["_operator.ne"] = convertSymbolic<SymOp::NE>;
  table["_operator.lt"] = convertSymbolic<SymOp::LT>;
  table["_operator.le"] = convertSymbolic<SymOp::LE>;
  table["_operator.gt"] = convertSymbolic<SymOp::GT>;
  table["_operator.ge"] = convertSymbolic<SymOp::GE>;
  table["torch.sym_ite"] = convertSymbolic<SymOp::Ite>;
  table["torch.sym_float"] = convertSymbolic<SymOp::ToFloat>;
  table["torch.sym_not"] = convertSymbolic<SymOp::Not>;
}
