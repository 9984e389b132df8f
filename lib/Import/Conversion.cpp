//===- Conversion.cpp - Argument access and helpers for converters --------===//
#include "Conversion.h"

#include "thunder/Import/Pt2Archive.h"
#include "thunder/Support/ShapeMath.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::thunder;
using namespace ::thunder::import;
using namespace ::thunder::import::detail;
using llvm::json::Array;
using llvm::json::Object;

namespace thunder::import::detail {

Type elementTypeOf(MLIRContext *context, DType dtype) {
  Builder b(context);
  switch (dtype) {
  case DType::Bool: return b.getI1Type();
  case DType::Int8: return b.getI8Type();
  case DType::Int32: return b.getI32Type();
  case DType::Int64: return b.getI64Type();
  case DType::Float8E4M3FN: return b.getFloat8E4M3FNType();
  case DType::Float8E5M2: return b.getFloat8E5M2Type();
  case DType::Float16: return b.getF16Type();
  case DType::BFloat16: return b.getBF16Type();
  case DType::Float32: return b.getF32Type();
  case DType::Float64: return b.getF64Type();
  }
  return {};
}

std::optional<llvm::StringRef> symbolicName(const Object &argument) {
  for (const char *key : {"as_sym_int", "as_sym_float", "as_sym_bool"})
    if (const Object *sym = argument.getObject(key))
      if (std::optional<llvm::StringRef> name = sym->getString("as_name"))
        return name;
  return std::nullopt;
}

std::string dataDependentReason(const llvm::Twine &what, const llvm::Twine &use) {
  return (what + " is a value read from tensor data (.item()), which " +
          "Thunder keeps on the device as a 0-d tensor; " + use +
          " it would have to be known on the host, a data-dependent value the " +
          "host would have to wait for; compiled programs never read device data")
      .str();
}

FailureOr<int64_t> normalizeDim(NodeContext &ctx, int64_t dim,
                                        int64_t rank) {
  // A rank-0 tensor accepts dim 0 and -1, as in PyTorch.
  int64_t d = ::thunder::normalizeDim(dim, std::max<int64_t>(rank, 1));
  if (d < 0)
    return ctx.fail("dim " + llvm::Twine(dim) + " is out of range for rank " +
                    llvm::Twine(rank));
  return d;
}

Value indexConstant(NodeContext &ctx, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    ctx.b.getI64Type());
  return ctx.create<ConstantOp>(DenseElementsAttr::get(type, values));
}

Value selectAlong(NodeContext &ctx, Value value, int64_t dim, ArrayRef<int64_t> index) {
  return ctx.create<IndexSelectOp>(value, indexConstant(ctx, index), dim);
}

} // namespace thunder::import::detail

LogicalResult NodeContext::fail(const llvm::Twine &message) const {
  emitError(loc) << node.op() << ": " << message;
  return failure();
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

const Object *NodeContext::arg(llvm::StringRef name) const {
  for (const NamedArgument &input : node.inputs)
    if (input.name == name)
      return input.value;
  return nullptr;
}

bool NodeContext::has(llvm::StringRef name) const {
  const Object *a = arg(name);
  return a && !a->get("as_none");
}

/// The name of a tensor reference ({"name": "x"}).
static std::optional<llvm::StringRef> tensorName(const llvm::json::Value *v) {
  const Object *object = v ? v->getAsObject() : nullptr;
  if (!object)
    return std::nullopt;
  return object->getString("name");
}

FailureOr<Value> NodeContext::tensor(llvm::StringRef name) const {
  const Object *a = arg(name);
  if (!a)
    return fail("missing tensor argument '" + name + "'");
  std::optional<llvm::StringRef> ref = tensorName(a->get("as_tensor"));
  if (!ref)
    return fail("argument '" + name + "' is not a tensor");
  Value value = scope.lookup(*ref);
  if (!value)
    return fail("argument '" + name + "' refers to '" + *ref +
                "', which has no value (an earlier error?)");
  return value;
}

FailureOr<Value> NodeContext::optionalTensor(llvm::StringRef name) const {
  if (!has(name))
    return Value();
  return tensor(name);
}

FailureOr<SmallVector<Value>>
NodeContext::tensorList(llvm::StringRef name) const {
  const Object *a = arg(name);
  const Array *list = a ? a->getArray("as_tensors") : nullptr;
  if (!list)
    return fail("argument '" + name + "' is not a list of tensors");
  SmallVector<Value> values;
  for (const llvm::json::Value &entry : *list) {
    std::optional<llvm::StringRef> ref = tensorName(&entry);
    Value value = ref ? scope.lookup(*ref) : Value();
    if (!value)
      return fail("argument '" + name + "' has an entry with no value");
    values.push_back(value);
  }
  return values;
}

FailureOr<SmallVector<Value>>
NodeContext::optionalTensorList(llvm::StringRef name) const {
  const Object *a = arg(name);
  const Array *list = a ? a->getArray("as_optional_tensors") : nullptr;
  if (!list) {
    if (a && a->getArray("as_tensors"))
      return tensorList(name);
    return fail("argument '" + name + "' is not a list of optional tensors");
  }
  SmallVector<Value> values;
  for (const llvm::json::Value &entry : *list) {
    const Object *object = entry.getAsObject();
    if (object && object->get("as_none")) {
      values.push_back(Value());
      continue;
    }
    std::optional<llvm::StringRef> ref =
        object ? tensorName(object->get("as_tensor")) : std::nullopt;
    Value value = ref ? scope.lookup(*ref) : Value();
    if (!value)
      return fail("argument '" + name + "' has an entry with no value");
    values.push_back(value);
  }
  return values;
}

/// A JSON float: a number, or torch's "Infinity"/"-Infinity"/"NaN" strings.
static std::optional<double> jsonFloat(const llvm::json::Value *v) {
  if (!v)
    return std::nullopt;
  if (std::optional<double> number = v->getAsNumber())
    return number;
  if (std::optional<llvm::StringRef> text = v->getAsString()) {
    if (*text == "Infinity")
      return std::numeric_limits<double>::infinity();
    if (*text == "-Infinity")
      return -std::numeric_limits<double>::infinity();
    if (*text == "NaN")
      return std::numeric_limits<double>::quiet_NaN();
  }
  return std::nullopt;
}

FailureOr<int64_t> NodeContext::getInt(llvm::StringRef name,
                                       std::optional<int64_t> dflt) const {
  const Object *a = arg(name);
  if (!a || a->get("as_none")) {
    if (dflt)
      return *dflt;
    return fail("missing int argument '" + name + "'");
  }
  if (std::optional<int64_t> v = a->getInteger("as_int"))
    return *v;
  if (const Object *sym = a->getObject("as_sym_int"))
    if (std::optional<int64_t> v = sym->getInteger("as_int"))
      return *v;
  if (dataRef(name))
    return failDataDependent(name, "as this op's int argument");
  return fail("argument '" + name + "' is not a constant int");
}

FailureOr<SmallVector<int64_t>>
NodeContext::getInts(llvm::StringRef name,
                     std::optional<ArrayRef<int64_t>> dflt) const {
  const Object *a = arg(name);
  if (!a || a->get("as_none")) {
    if (dflt)
      return SmallVector<int64_t>(dflt->begin(), dflt->end());
    return fail("missing int list argument '" + name + "'");
  }
  if (std::optional<int64_t> single = a->getInteger("as_int"))
    return SmallVector<int64_t>{*single};
  SmallVector<int64_t> values;
  if (const Array *list = a->getArray("as_ints")) {
    for (const llvm::json::Value &v : *list) {
      std::optional<int64_t> i = v.getAsInteger();
      if (!i)
        return fail("argument '" + name + "' has a non-integer entry");
      values.push_back(*i);
    }
    return values;
  }
  if (const Array *list = a->getArray("as_sym_ints")) {
    // Symbolic entries (a dynamic size) read as kDynamic.
    for (const llvm::json::Value &v : *list) {
      const Object *entry = v.getAsObject();
      std::optional<llvm::StringRef> ref =
          entry ? entry->getString("as_name") : std::nullopt;
      if (ref && scope.lookup(*ref))
        return fail(dataDependentReason("argument '" + name + "' has an entry, '" +
                                            *ref + "', that",
                                        "used as a size or index,"));
      std::optional<int64_t> i = entry ? entry->getInteger("as_int") : std::nullopt;
      values.push_back(i ? *i : ShapedType::kDynamic);
    }
    return values;
  }
  return fail("argument '" + name + "' is not an int list");
}

FailureOr<double> NodeContext::getFloat(llvm::StringRef name,
                                        std::optional<double> dflt) const {
  const Object *a = arg(name);
  if (!a || a->get("as_none")) {
    if (dflt)
      return *dflt;
    return fail("missing float argument '" + name + "'");
  }
  if (std::optional<double> v = jsonFloat(a->get("as_float")))
    return *v;
  if (std::optional<int64_t> v = a->getInteger("as_int"))
    return static_cast<double>(*v);
  if (dataRef(name))
    return failDataDependent(name, "as this op's constant argument");
  return fail("argument '" + name + "' is not a constant number");
}

FailureOr<bool> NodeContext::getBool(llvm::StringRef name,
                                     std::optional<bool> dflt) const {
  const Object *a = arg(name);
  if (!a || a->get("as_none")) {
    if (dflt)
      return *dflt;
    return fail("missing bool argument '" + name + "'");
  }
  if (std::optional<bool> v = a->getBoolean("as_bool"))
    return *v;
  if (dataRef(name))
    return failDataDependent(name, "as this op's bool option");
  return fail("argument '" + name + "' is not a constant bool");
}

FailureOr<std::string>
NodeContext::getString(llvm::StringRef name,
                       std::optional<llvm::StringRef> dflt) const {
  const Object *a = arg(name);
  if (!a || a->get("as_none")) {
    if (dflt)
      return dflt->str();
    return fail("missing string argument '" + name + "'");
  }
  if (std::optional<llvm::StringRef> v = a->getString("as_string"))
    return v->str();
  return fail("argument '" + name + "' is not a string");
}

std::optional<Scalar> NodeContext::scalar(llvm::StringRef name) const {
  const Object *a = arg(name);
  if (!a)
    return std::nullopt;
  if (std::optional<bool> v = a->getBoolean("as_bool"))
    return Scalar(*v);
  if (std::optional<int64_t> v = a->getInteger("as_int"))
    return Scalar(*v);
  if (std::optional<double> v = jsonFloat(a->get("as_float")))
    return Scalar(*v);
  return std::nullopt;
}

FailureOr<Type> NodeContext::dtype(llvm::StringRef name) const {
  const Object *a = arg(name);
  if (!a || a->get("as_none"))
    return Type();
  std::optional<int64_t> scalarType = a->getInteger("as_scalar_type");
  if (!scalarType)
    return fail("argument '" + name + "' is not a dtype");
  std::optional<DType> dt = dtypeFromScalarType(*scalarType);
  if (!dt)
    return fail("dtype " + llvm::Twine(scalarTypeName(*scalarType)) +
                " is not supported");
  return elementTypeOf(b.getContext(), *dt);
}

std::optional<std::string> NodeContext::dataRef(llvm::StringRef name) const {
  const Object *a = arg(name);
  std::optional<llvm::StringRef> ref = a ? symbolicName(*a) : std::nullopt;
  if (!ref || !scope.lookup(*ref))
    return std::nullopt;
  return ref->str();
}

Value NodeContext::dataValue(llvm::StringRef name) {
  std::optional<std::string> ref = dataRef(name);
  if (!ref)
    return Value();
  consumedData.push_back(name.str());
  return scope.lookup(*ref);
}

LogicalResult NodeContext::failDataDependent(llvm::StringRef name,
                                             const llvm::Twine &use) const {
  std::string ref = dataRef(name).value_or("?");
  return fail(dataDependentReason("argument '" + name + "' ('" + ref + "')",
                                  "used " + use + ",") );
}

FailureOr<Value> NodeContext::operandAs(llvm::StringRef name,
                                        RankedTensorType type) {
  if (std::optional<Scalar> number = scalar(name))
    return splat(type, *number);
  if (Value data = dataValue(name))
    return coerce(data, type);
  if (isSize(name)) {
    FailureOr<Value> size = sizeValue(name);
    if (failed(size))
      return failure();
    return coerce(*size, type);
  }
  FailureOr<Value> value = tensor(name);
  if (failed(value))
    return failure();
  return coerce(*value, type);
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

/// The node's results, flattened (an `as_tensors` output counts each entry; a
/// symbolic number counts by its name).
static SmallVector<std::string> resultNames(const Node &node) {
  SmallVector<std::string> names;
  for (const llvm::json::Value &output : *node.outputs) {
    const Object *object = output.getAsObject();
    if (!object)
      continue;
    if (std::optional<llvm::StringRef> name = tensorName(object->get("as_tensor")))
      names.push_back(name->str());
    else if (const Array *list = object->getArray("as_tensors"))
      for (const llvm::json::Value &entry : *list)
        names.push_back(tensorName(&entry).value_or("").str());
    else if (std::optional<llvm::StringRef> sym = symbolicName(*object))
      names.push_back(sym->str());
    else
      names.push_back("");
  }
  return names;
}

unsigned NodeContext::numResults() const { return resultNames(node).size(); }

std::string NodeContext::resultName(unsigned i) const {
  SmallVector<std::string> names = resultNames(node);
  return i < names.size() ? names[i] : "";
}

FailureOr<RankedTensorType> NodeContext::resultType(unsigned i) const {
  std::string name = resultName(i);
  if (name.empty())
    return fail("result #" + llvm::Twine(i) + " is not a tensor");
  return scope.typeOf(name, loc);
}

bool NodeContext::resultUsed(unsigned i) const {
  std::string name = resultName(i);
  return !name.empty() && scope.isUsed(name);
}

LogicalResult NodeContext::setResult(Value value, unsigned i) {
  FailureOr<RankedTensorType> expected = resultType(i);
  if (failed(expected))
    return failure();
  if (value.getType() != *expected && builtStandIn) {
    // An op's type inference failed (see create): its verifier, which runs
    // next (verifyConverted), says why.
    scope.define(resultName(i), value);
    return success();
  }
  if (value.getType() != *expected) {
    // An importer bug, not a user error: say so plainly.
    std::string got;
    llvm::raw_string_ostream os(got);
    os << value.getType() << ", but torch.export recorded " << *expected;
    return fail("internal error: the conversion produced " + got);
  }
  nameDimsAsResult(value, i);
  scope.define(resultName(i), value);
  return success();
}

void NodeContext::nameDimsAsResult(Value value, unsigned i) {
  // Dynamic dims carry the symbol torch.export gave them, so a backend can
  // tell which run-time size each one is (ShapePlan).
  auto type = cast<RankedTensorType>(value.getType());
  Operation *producer = value.getDefiningOp();
  if (!producer || type.hasStaticShape() || producer->getNumResults() != 1)
    return;
  std::vector<std::string> symbols = scope.dimSymbols(resultName(i));
  if (symbols.size() != static_cast<size_t>(type.getRank()) ||
      llvm::none_of(symbols, [](const std::string &s) { return !s.empty(); }))
    return;
  // Names the producer already has (another node's result it is) stay.
  auto existing = producer->getAttrOfType<ArrayAttr>("thunder.dim_symbols");
  SmallVector<Attribute> attrs;
  for (auto [d, s] : llvm::enumerate(symbols)) {
    auto name = existing && d < existing.size() ? dyn_cast<StringAttr>(existing[d]) : nullptr;
    attrs.push_back(name && !name.empty() ? name : b.getStringAttr(s));
  }
  producer->setAttr("thunder.dim_symbols", b.getArrayAttr(attrs));
}

LogicalResult NodeContext::setDataResult(Value value) {
  const Object *first = node.outputs && node.outputs->size() == 1
                            ? node.outputs->front().getAsObject()
                            : nullptr;
  std::optional<llvm::StringRef> name = first ? symbolicName(*first) : std::nullopt;
  if (!name)
    return fail("internal error: the node has no symbolic number result");
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() != 0)
    return fail("internal error: a value read from tensor data must be 0-d");
  scope.define(*name, value);
  return success();
}

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

Type NodeContext::standInType(ValueRange operands) const {
  if (!operands.empty() && isa<RankedTensorType>(operands[0].getType()))
    return operands[0].getType();
  return RankedTensorType::get({}, b.getF32Type());
}

Value NodeContext::splat(RankedTensorType type, Scalar value) {
  Type element = type.getElementType();
  auto asDouble = [&] {
    return std::visit([](auto v) { return static_cast<double>(v); }, value);
  };
  Attribute attr;
  if (auto floatType = dyn_cast<FloatType>(element)) {
    attr = b.getFloatAttr(floatType, asDouble());
  } else if (element.isInteger(1)) {
    attr = b.getBoolAttr(asDouble() != 0);
  } else {
    int64_t v = std::visit(
        [](auto x) -> int64_t {
          if constexpr (std::is_same_v<decltype(x), double>)
            return static_cast<int64_t>(std::trunc(x));
          else
            return static_cast<int64_t>(x);
        },
        value);
    attr = b.getIntegerAttr(element, v);
  }
  if (type.hasStaticShape())
    return create<ConstantOp>(SplatElementsAttr::get(type, attr));
  auto scalarType = RankedTensorType::get({}, element);
  Value scalar = create<ConstantOp>(SplatElementsAttr::get(scalarType, attr));
  return create<BroadcastOp>(type, scalar, ArrayRef<int64_t>{});
}

Value NodeContext::convert(Value value, Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == elementType)
    return value;
  return create<ConvertOp>(type.clone(elementType), value);
}

FailureOr<Value> NodeContext::broadcastTo(Value value, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  int64_t rank = type.getRank(), targetRank = shape.size();
  if (rank > targetRank)
    return fail("cannot broadcast a rank-" + llvm::Twine(rank) +
                " tensor to rank " + llvm::Twine(targetRank));
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t from = type.getDimSize(d), to = shape[targetRank - rank + d];
    if (from != 1 && !ShapedType::isDynamic(from) &&
        !ShapedType::isDynamic(to) && from != to)
      return fail("cannot broadcast " + ::thunder::formatShape(
                                            {type.getShape().begin(),
                                             type.getShape().end()}) +
                  " to " + ::thunder::formatShape({shape.begin(), shape.end()}));
    dims.push_back(targetRank - rank + d);
  }
  return create<BroadcastOp>(type.clone(shape), value, dims);
}

FailureOr<Value> NodeContext::coerce(Value value, RankedTensorType type) {
  FailureOr<Value> broadcast = broadcastTo(value, type.getShape());
  if (failed(broadcast))
    return failure();
  return convert(*broadcast, type.getElementType());
}

/// A full-range slice spec for `type`, to narrow one dim of.
namespace {
struct SliceSpec {
  SmallVector<int64_t> start, end, step;
  explicit SliceSpec(RankedTensorType type) {
    for (int64_t size : type.getShape()) {
      start.push_back(0);
      end.push_back(ShapedType::isDynamic(size) ? kSliceToEnd : size);
      step.push_back(1);
    }
  }
};
} // namespace

/// Slices dim `dim` of `value` to [start, end) by `step`, with PyTorch's
/// negative and out-of-range indices normalized.
FailureOr<Value> NodeContext::sliceDim(Value value, int64_t dim, int64_t start,
                                        int64_t end, int64_t step) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t size = type.getDimSize(dim);
  if (step < 1)
    return fail("slice step must be positive, got " + llvm::Twine(step));
  SliceSpec spec(type);
  if (ShapedType::isDynamic(size)) {
    // Start and end stay as PyTorch gave them (negative: from the size, the
    // start clamped at 0; an end past the size: clamped) and are resolved at
    // run time, with the result's size (SliceOp, ShapePlan). `x[:, -1]` and
    // `x[-3:]` on a dynamic sequence: the last positions, whatever its size.
    spec.start[dim] = start;
    // Counted from the same side, an end before the start is the start (an
    // empty slice, x[-1:-3]); from different sides, only the run time knows.
    spec.end[dim] = (start < 0) != (end < 0) ? end : std::max(start, end);
    spec.step[dim] = step;
  } else {
    auto clamp = [size](int64_t i) {
      if (i < 0)
        i += size;
      return std::clamp<int64_t>(i, 0, size);
    };
    spec.start[dim] = clamp(start);
    spec.end[dim] = std::max(spec.start[dim], clamp(end));
    spec.step[dim] = step;
  }
  return create<SliceOp>(value, spec.start, spec.end, spec.step);
}

namespace thunder::import::detail {

/// The run-time size of dim `d` of `x`, as a 0-d i64 tensor: the count of one
/// line of `x` along `d` (every other dim sliced to its first element; the
/// comparison `v == v or v != v` is true for every value, NaN included).
FailureOr<Value> runtimeSize(NodeContext &ctx, Value x, int64_t d) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  // A line exists where every other dim has an element: torch.export's ranges
  // keep dynamic dims at 1 or more (0 and 1 specialize); an empty static dim
  // leaves nothing to count.
  for (int64_t other = 0; other < rank; ++other)
    if (other != d && type.getDimSize(other) == 0)
      return ctx.fail("the run-time size of dynamic dim " + llvm::Twine(d) +
                      " of a tensor with an empty dim " + llvm::Twine(other) +
                      " cannot be counted");
  Value line = x;
  for (int64_t other = 0; other < rank; ++other) {
    if (other == d)
      continue;
    FailureOr<Value> sliced = ctx.sliceDim(line, other, 0, 1);
    if (failed(sliced))
      return failure();
    line = *sliced;
  }
  Value always = ctx.create<LogicalOrOp>(
      ctx.create<CompareOp>(ComparisonDirection::EQ, line, line),
      ctx.create<CompareOp>(ComparisonDirection::NE, line, line));
  return ctx.create<SumOp>(ctx.convert(always, ctx.b.getI64Type()),
                           llvm::to_vector(llvm::seq<int64_t>(0, rank)), false);
}

} // namespace thunder::import::detail
