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
  Value result = ctx.create<IotaOp>(*type, 0);
  // start + step * iota; a symbolic start or step (a cache's position ids
  // from its length on) is a size computed on the device (sizeValue).
  for (auto [name, combine] : {std::pair{"step", 1}, std::pair{"start", 0}}) {
    if (std::optional<Scalar> number = ctx.scalar(name)) {
      if (std::visit([&](auto x) { return double(x) == double(combine); }, *number))
        continue;
    } else if (!ctx.has(name)) {
      continue;
    } else if (!ctx.isSize(name)) {
      return ctx.fail("arange's " + llvm::Twine(name) +
                      " is neither a number nor a size Thunder can compute");
    }
    FailureOr<Value> operand = ctx.operandAs(name, *type);
    if (failed(operand))
      return failure();
    result = combine == 1 ? ctx.create<MulOp>(result, *operand)
                          : ctx.create<AddOp>(result, *operand);
  }
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

/// The Python-level symbolic ops by node op name.
constexpr std::pair<const char *, SymOp> kSymOps[] = {
    {"_operator.add", SymOp::Add},     {"_operator.sub", SymOp::Sub},
    {"_operator.mul", SymOp::Mul},     {"_operator.truediv", SymOp::TrueDiv},
    {"_operator.floordiv", SymOp::FloorDiv}, {"_operator.mod", SymOp::Mod},
    {"_operator.neg", SymOp::Neg},     {"_operator.eq", SymOp::EQ},
    {"_operator.ne", SymOp::NE},       {"_operator.lt", SymOp::LT},
    {"_operator.le", SymOp::LE},       {"_operator.gt", SymOp::GT},
    {"_operator.ge", SymOp::GE},       {"torch.sym_ite", SymOp::Ite},
    {"torch.sym_float", SymOp::ToFloat}, {"torch.sym_not", SymOp::Not}};

std::optional<SymOp> symOpOf(llvm::StringRef op) {
  for (auto [name, kind] : kSymOps)
    if (op == name)
      return kind;
  return std::nullopt;
}

SmallVector<llvm::StringRef, 3> symOperandNames(SymOp kind) {
  switch (kind) {
  case SymOp::Ite: return {"b", "t", "f"};
  case SymOp::Neg: case SymOp::Not: case SymOp::ToFloat: return {"a"};
  default: return {"a", "b"};
  }
}

/// `kind` applied to its operands on the device, on 0-d tensors, with
/// Python's types: bools and ints are int64, floats f64.
FailureOr<Value> applySymOp(NodeContext &ctx, SymOp kind, ArrayRef<SymOperand> operands) {
  Builder &b = ctx.b;
  Type i1 = b.getI1Type(), i64 = b.getI64Type(), f64 = b.getF64Type();
  auto isFloat = [&](const SymOperand &o) { return pythonType(ctx, o) == f64; };
  switch (kind) {
  case SymOp::Not:
    return ctx.create<LogicalNotOp>(symTensor(ctx, operands[0], i1));
  case SymOp::ToFloat:
    return symTensor(ctx, operands[0], f64);
  case SymOp::Neg:
    return ctx.create<NegOp>(symTensor(ctx, operands[0], isFloat(operands[0]) ? f64 : i64));
  case SymOp::Ite: {
    Type t = isFloat(operands[1]) || isFloat(operands[2]) ? f64
             : pythonType(ctx, operands[1]) == i1 && pythonType(ctx, operands[2]) == i1
                 ? i1
                 : i64;
    return ctx.create<WhereOp>(symTensor(ctx, operands[0], i1),
                               symTensor(ctx, operands[1], t),
                               symTensor(ctx, operands[2], t));
  }
  default:
    break;
  }
  bool anyFloat = isFloat(operands[0]) || isFloat(operands[1]);
  Type t = anyFloat || kind == SymOp::TrueDiv ? f64 : i64;
  Value lhs = symTensor(ctx, operands[0], t), rhs = symTensor(ctx, operands[1], t);
  auto compare = [&](ComparisonDirection direction) -> Value {
    return ctx.create<CompareOp>(direction, lhs, rhs);
  };
  switch (kind) {
  case SymOp::Add: return ctx.create<AddOp>(lhs, rhs);
  case SymOp::Sub: return ctx.create<SubOp>(lhs, rhs);
  case SymOp::Mul: return ctx.create<MulOp>(lhs, rhs);
  case SymOp::TrueDiv: return ctx.create<DivOp>(lhs, rhs, RoundingMode::None);
  case SymOp::FloorDiv: return ctx.create<DivOp>(lhs, rhs, RoundingMode::Floor);
  case SymOp::Mod: return ctx.create<RemainderOp>(lhs, rhs);
  case SymOp::EQ: return compare(ComparisonDirection::EQ);
  case SymOp::NE: return compare(ComparisonDirection::NE);
  case SymOp::LT: return compare(ComparisonDirection::LT);
  case SymOp::LE: return compare(ComparisonDirection::LE);
  case SymOp::GT: return compare(ComparisonDirection::GT);
  case SymOp::GE: return compare(ComparisonDirection::GE);
  default: break;
  }
  return ctx.fail("internal error: unhandled symbolic op");
}

/// Python-level arithmetic on symbolic numbers (_operator.mul, torch.sym_ite,
/// ...). On sizes it is bookkeeping (the sizes are in the recorded types; the
/// node is remembered, for a use as a tensor operand: sizeValue); on a value
/// read from tensor data it is computed on the device (applySymOp).
LogicalResult convertSymbolic(NodeContext &ctx) {
  SymOp kind = *symOpOf(ctx.node.op());
  bool onData = llvm::any_of(ctx.node.inputs, [&](const NamedArgument &input) {
    return ctx.dataRef(input.name).has_value();
  });
  if (!onData) {
    if (std::string result = ctx.resultName(); !result.empty())
      ctx.scope.defineSize(result, &ctx.node);
    return success();
  }
  SmallVector<SymOperand> operands;
  for (llvm::StringRef name : symOperandNames(kind)) {
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
  FailureOr<Value> value = applySymOp(ctx, kind, operands);
  if (failed(value))
    return failure();
  return ctx.setDataResult(*value);
}

/// aten.sym_size.int, aten.sym_numel: bookkeeping (the size is in the
/// recorded types), the node remembered for a use of the size as a tensor
/// operand (sizeValue).
LogicalResult convertSymSize(NodeContext &ctx) {
  if (std::string result = ctx.resultName(); !result.empty())
    ctx.scope.defineSize(result, &ctx.node);
  return success();
}

} // namespace

bool NodeContext::isSize(llvm::StringRef name) const {
  const llvm::json::Object *a = arg(name);
  std::optional<llvm::StringRef> ref = a ? symbolicName(*a) : std::nullopt;
  return ref && !scope.lookup(*ref) && scope.sizeDefinition(*ref);
}

FailureOr<Value> NodeContext::sizeValue(llvm::StringRef name) {
  const llvm::json::Object *a = arg(name);
  std::optional<llvm::StringRef> ref = a ? symbolicName(*a) : std::nullopt;
  const Node *definition = ref ? scope.sizeDefinition(*ref) : nullptr;
  if (!definition)
    return fail("argument '" + name + "' is not a size Thunder can compute");
  // The defining node's arguments, read where this node uses its result.
  NodeContext at(b, loc, *definition, scope);
  if (definition->op() == "aten.sym_numel.default") {
    // The static dims' product times each dynamic dim counted at run time.
    FailureOr<Value> self = at.tensor("self");
    if (failed(self))
      return failure();
    auto type = cast<RankedTensorType>(self->getType());
    auto scalar = RankedTensorType::get({}, b.getI64Type());
    int64_t product = 1;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (!type.isDynamicDim(d))
        product *= type.getDimSize(d);
    Value count;
    for (int64_t d = 0; d < type.getRank() && product != 0; ++d) {
      if (!type.isDynamicDim(d))
        continue;
      FailureOr<Value> size = runtimeSize(*this, *self, d);
      if (failed(size))
        return failure();
      count = count ? create<MulOp>(count, *size) : *size;
    }
    Value constant = splat(scalar, product);
    return count ? create<MulOp>(count, constant) : constant;
  }
  if (definition->op() == "aten.sym_size.int") {
    FailureOr<Value> self = at.tensor("self");
    FailureOr<int64_t> dim = at.getInt("dim");
    if (failed(self) || failed(dim))
      return failure();
    auto type = cast<RankedTensorType>(self->getType());
    FailureOr<int64_t> d = normalizeDim(*this, *dim, type.getRank());
    if (failed(d))
      return failure();
    if (!type.isDynamicDim(*d))
      return splat(RankedTensorType::get({}, b.getI64Type()), type.getDimSize(*d));
    return runtimeSize(*this, *self, *d);
  }
  std::optional<SymOp> kind = symOpOf(definition->op());
  if (!kind)
    return fail("argument '" + name + "' is computed by " + definition->op() +
                ", which Thunder does not compute on the device");
  SmallVector<SymOperand> operands;
  for (llvm::StringRef operand : symOperandNames(*kind)) {
    if (std::optional<Scalar> number = at.scalar(operand)) {
      operands.push_back(SymOperand{Value(), number});
      continue;
    }
    FailureOr<Value> size = at.sizeValue(operand);
    if (failed(size))
      return failure();
    operands.push_back(SymOperand{*size, std::nullopt});
  }
  return applySymOp(*this, *kind, operands);
}

namespace {

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
  table["aten.sym_size.int"] = convertSymSize;
  table["aten.sym_numel.default"] = convertSymSize;
  for (const char *op :
       {"aten.sym_stride.int",
        "aten.sym_storage_offset.default", "aten._assert_tensor_metadata.default",
        "aten._assert_async.msg"})
    table[op] = convertNothing;
  for (const char *op : {"aten._assert_scalar.default",
                         "aten.sym_constrain_range_for_size.default",
                         "aten.sym_constrain_range.default"})
    table[op] = convertAssertion;
  table["aten._local_scalar_dense.default"] = convertLocalScalarDense;
  for (const auto &entry : kSymOps)
    table[entry.first] = convertSymbolic;
}
