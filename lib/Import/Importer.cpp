//===- Importer.cpp - torch.export programs into the thunder dialect ------===//
//
// Walks an ExportedProgram: user inputs become function arguments, weights
// become dense_resource constants that point at their bytes, each node goes
// through its converter (Conversion.h), and the user outputs are returned.
// Unsupported ops are all reported before anything is built.
//
//===----------------------------------------------------------------------===//
#include "thunder/Import/Importer.h"

#include "Conversion.h"
#include "thunder/Dialect/Thunder/IR/CustomOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "thunder/Import/Pt2Archive.h"
#include "thunder/Support/ShapeMath.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Alignment.h"

using namespace mlir;
using namespace ::thunder;
using namespace ::thunder::import;
using namespace ::thunder::import::detail;
using llvm::json::Array;
using llvm::json::Object;

namespace thunder::import {

namespace detail {
// (ConvertRandom.cpp; declared here rather than in Conversion.h, which every
// converter includes.)
void registerRandomConversions(ConversionTable &table);

const ConversionTable &conversionTable() {
  static const ConversionTable table = [] {
    ConversionTable t;
    registerElementwiseConversions(t);
    registerReductionConversions(t);
    registerLinalgConversions(t);
    registerDataMovementConversions(t);
    registerCompositeConversions(t);
    registerCreationConversions(t);
    registerMathConversions(t);
    registerIndexingConversions(t);
    registerStatisticsConversions(t);
    registerRandomConversions(t);
    return t;
  }();
  return table;
}

} // namespace detail

bool isSupportedOp(llvm::StringRef op) {
  return conversionTable().count(op);
}

std::vector<std::string> supportedOps() {
  std::vector<std::string> ops;
  for (const auto &entry : conversionTable())
    ops.push_back(entry.getKey().str());
  llvm::sort(ops);
  return ops;
}

/// Ops that Thunder does not support by design, with the reason.
static const std::vector<std::pair<std::string, std::string>> &reasonTable() {
  static const std::vector<std::pair<std::string, std::string>> table = [] {
    const std::string backward =
        "a backward (training) op; Thunder compiles inference programs";
    std::vector<std::pair<std::string, std::string>> t = {
        {"aten.nonzero.default",
         "its output's shape is the number of nonzero elements, known only from the data; "
         "compiled programs have shapes fixed by their inputs' sizes"},
        {"aten._fft_r2c.default", "produces complex tensors; Thunder has no complex dtypes"},
        {"aten._fft_c2r.default", "takes complex tensors; Thunder has no complex dtypes"},
        {"aten._adaptive_avg_pool2d_backward.default", backward},
        {"aten.avg_pool2d_backward.default", backward},
        {"aten.convolution_backward.default", backward},
        {"aten.embedding_dense_backward.default", backward},
        {"aten.max_pool2d_with_indices_backward.default", backward},
        {"aten.native_group_norm_backward.default", backward},
        {"aten.native_layer_norm_backward.default", backward},
    };
    llvm::sort(t);
    return t;
  }();
  return table;
}

std::string unsupportedReason(llvm::StringRef op) {
  for (const auto &[name, reason] : reasonTable())
    if (name == op)
      return reason;
  return "";
}

std::vector<std::pair<std::string, std::string>> unsupportedOpReasons() {
  return reasonTable();
}

void registerImportDialects(DialectRegistry &registry) {
  registry.insert<mlir::thunder::ThunderDialect, func::FuncDialect>();
}

/// Whether `symbol` is a bare symbol name ("s77"), not an expression.
static bool isPlainSymbol(llvm::StringRef symbol) {
  return !symbol.empty() && llvm::all_of(symbol, [](char c) {
    return llvm::isAlnum(c) || c == '_';
  });
}

/// "file.py:12" for a node, or "" when it has no usable stack trace.
static std::string sourceLine(const Node &node) {
  if (auto frame = userFrame(node.stackTrace))
    return frame->first + ":" + std::to_string(frame->second);
  return "";
}

/// Every tensor name an argument (a JSON union) reads, and every symbolic
/// number it names (which may be a value read from tensor data).
static void collectTensorRefs(const Object &argument,
                              SmallVectorImpl<llvm::StringRef> &names) {
  if (std::optional<llvm::StringRef> sym = symbolicName(argument))
    names.push_back(*sym);
  for (const auto &[key, inner] : argument) {
    if (key == "as_sym_ints" || key == "as_sym_floats" || key == "as_sym_bools") {
      if (const Array *list = inner.getAsArray())
        for (const llvm::json::Value &entry : *list)
          if (const Object *ref = entry.getAsObject())
            if (auto name = ref->getString("as_name"))
              names.push_back(*name);
      continue;
    }
    if (key == "as_tensor") {
      if (const Object *ref = inner.getAsObject())
        if (auto name = ref->getString("name"))
          names.push_back(*name);
      continue;
    }
    if (key != "as_tensors" && key != "as_optional_tensors")
      continue;
    const Array *list = inner.getAsArray();
    if (!list)
      continue;
    for (const llvm::json::Value &entry : *list) {
      const Object *ref = entry.getAsObject();
      if (!ref)
        continue;
      if (auto name = ref->getString("name"))
        names.push_back(*name); // as_tensors: {"name": ...}
      else
        collectTensorRefs(*ref, names); // as_optional_tensors: a union
    }
  }
}

namespace {

class ProgramImporter final : public ValueScope {
public:
  ProgramImporter(MLIRContext &context, const ExportedProgram &program,
                  const WeightMap &weights, const ImportOptions &options)
      : context(context), program(program), weights(weights), options(options) {}

  OwningOpRef<ModuleOp> run();

  Value lookup(llvm::StringRef name) const override {
    return values.lookup(name);
  }

  FailureOr<RankedTensorType> typeOf(llvm::StringRef name,
                                     Location loc) const override {
    auto it = program.tensorValues.find(name);
    if (it == program.tensorValues.end()) {
      emitError(loc) << "torch.export recorded no type for tensor '" << name
                     << "'";
      return failure();
    }
    const TensorMeta &meta = it->second;
    if (!meta.dtype) {
      emitError(loc) << "tensor '" << name << "' has dtype "
                     << scalarTypeName(meta.scalarType)
                     << ", which Thunder does not support (supported: bool, "
                        "int8, int32, int64, float8_e4m3fn, float8_e5m2, "
                        "float16, bfloat16, float32, float64)";
      return failure();
    }
    SmallVector<int64_t> shape;
    for (const Dim &dim : meta.sizes)
      shape.push_back(dim.isDynamic() ? ShapedType::kDynamic : dim.size);
    return RankedTensorType::get(shape, elementTypeOf(&context, *meta.dtype));
  }

  void define(llvm::StringRef name, Value value) override {
    values[name] = value;
  }

  bool isUsed(llvm::StringRef name) const override { return used.contains(name); }

  void defineSize(llvm::StringRef name, const Node *node) override {
    sizes[name] = node;
  }

  const Node *sizeDefinition(llvm::StringRef name) const override {
    return sizes.lookup(name);
  }

  std::vector<std::string> dimSymbols(llvm::StringRef name) const override {
    std::vector<std::string> symbols;
    auto it = program.tensorValues.find(name);
    if (it == program.tensorValues.end())
      return symbols;
    for (const Dim &dim : it->second.sizes)
      symbols.push_back(isPlainSymbol(dim.symbol) ? dim.symbol : "");
    return symbols;
  }

private:
  Location locationOf(const Node &node);
  bool reportUnsupportedOps();
  LogicalResult declareInputs(func::FuncOp func, OpBuilder &builder);
  FailureOr<Value> importWeight(const InputSpec &spec, OpBuilder &builder);
  LogicalResult importNodes(OpBuilder &builder);
  LogicalResult verifyConverted(const Node &node, Location loc, Block *block,
                                Operation *before);
  LogicalResult checkDataDependentShapes(NodeContext &ctx);
  LogicalResult checkDataConsumed(NodeContext &ctx);
  LogicalResult importOutputs(func::FuncOp func, OpBuilder &builder);
  /// The registered kernel of a custom op, or null.
  const CustomKernel *customKernel(llvm::StringRef op) const {
    for (const CustomKernel &kernel : options.customKernels)
      if (kernel.op == op)
        return &kernel;
    return nullptr;
  }
  LogicalResult importCustomCall(NodeContext &ctx, const CustomKernel &kernel);

  MLIRContext &context;
  const ExportedProgram &program;
  const WeightMap &weights;
  const ImportOptions &options;
  llvm::StringMap<Value> values;
  /// Symbolic sizes by name: the node computing each (ValueScope::defineSize).
  llvm::StringMap<const Node *> sizes;
  /// Names whose producer failed: their users are skipped, not re-reported.
  llvm::StringSet<> poisoned;
  /// Every tensor name some node or graph output reads.
  llvm::StringSet<> used;
};

} // namespace

Location ProgramImporter::locationOf(const Node &node) {
  Location loc = UnknownLoc::get(&context);
  if (auto frame = userFrame(node.stackTrace))
    loc = FileLineColLoc::get(&context, frame->first,
                              static_cast<unsigned>(frame->second), 0);
  std::string name = node.name;
  if (name.empty() && node.outputs && !node.outputs->empty())
    if (const Object *first = node.outputs->front().getAsObject())
      if (const Object *tensor = first->getObject("as_tensor"))
        name = tensor->getString("name").value_or("").str();
  if (!name.empty())
    loc = NameLoc::get(StringAttr::get(&context, name), loc);
  return loc;
}

/// Reports every unsupported op at once, one error per op with its count and
/// source lines; true when there were any.
bool ProgramImporter::reportUnsupportedOps() {
  llvm::MapVector<llvm::StringRef, SmallVector<const Node *>> unsupported;
  for (const Node &node : program.nodes)
    if (!isSupportedOp(node.op()) && !customKernel(node.op()))
      unsupported[node.op()].push_back(&node);
  if (unsupported.empty())
    return false;
  for (auto &[op, nodes] : unsupported) {
    std::vector<std::string> lines;
    llvm::StringSet<> seen;
    for (const Node *node : nodes)
      if (std::string line = sourceLine(*node);
          !line.empty() && seen.insert(line).second)
        lines.push_back(line);
    InFlightDiagnostic diag = emitError(locationOf(*nodes.front()))
                              << "unsupported op " << op << " (" << nodes.size()
                              << (nodes.size() == 1 ? " use" : " uses") << ")";
    if (!lines.empty())
      diag << " at " << llvm::join(lines, ", ");
    if (std::string reason = unsupportedReason(op); !reason.empty())
      diag << ": " << reason;
    if (!op.starts_with("aten.") && !op.starts_with("prims."))
      diag << " (a custom op without a kernel: register one with "
              "thunder.register_kernel, or with thunder-compile --custom-ops)";
  }
  SmallVector<std::string> names;
  for (auto &entry : unsupported)
    names.push_back(entry.first.str());
  emitError(UnknownLoc::get(&context))
      << options.sourceName << ": " << unsupported.size()
      << (unsupported.size() == 1 ? " op is" : " ops are")
      << " not supported by Thunder: " << llvm::join(names, ", ")
      << " (docs/core-aten-coverage.md lists what is)"
      << (program.trainingDialect
              ? "; the program is in torch.export's TRAINING dialect: "
                "ep.run_decompositions() before torch.export.save turns "
                "composite ops into core ATen ops"
              : "");
  return true;
}

FailureOr<Value> ProgramImporter::importWeight(const InputSpec &spec,
                                               OpBuilder &builder) {
  Location loc = NameLoc::get(StringAttr::get(&context, spec.target),
                              UnknownLoc::get(&context));
  FailureOr<RankedTensorType> type = typeOf(spec.name, loc);
  if (failed(type))
    return failure();
  auto it = weights.find(spec.target);
  if (it == weights.end()) {
    emitError(loc) << "weight '" << spec.target
                   << "' is used by the program but was not provided";
    return failure();
  }
  const WeightData &data = it->second;
  Type element = elementTypeOf(&context, data.dtype);
  if (element != type->getElementType() ||
      !llvm::equal(data.sizes, type->getShape())) {
    emitError(loc) << "weight '" << spec.target << "' is "
                   << dtypeName(data.dtype) << " "
                   << ::thunder::formatShape(data.sizes)
                   << ", but the program expects " << *type;
    return failure();
  }
  int64_t numElements = ::thunder::numElements(data.sizes);
  int64_t expected = numElements * dtypeSizeInBytes(data.dtype);
  if (!data.bytes.empty() && static_cast<int64_t>(data.bytes.size()) != expected) {
    emitError(loc) << "weight '" << spec.target << "' has "
                   << data.bytes.size() << " bytes, expected " << expected;
    return failure();
  }
  // The blob points at the caller's bytes when they are aligned for the
  // element type (memory-mapped records are 64-byte aligned); otherwise, and
  // for zero-filled records, it owns a copy.
  size_t align = std::max<int64_t>(1, dtypeSizeInBytes(data.dtype));
  AsmResourceBlob blob;
  if (data.bytes.empty()) {
    blob = HeapAsmResourceBlob::allocate(expected, align);
    std::memset(blob.getMutableData().data(), 0, expected);
  } else if (llvm::isAddrAligned(llvm::Align(align), data.bytes.data())) {
    blob = UnmanagedAsmResourceBlob::allocateWithAlign(data.bytes, align);
  } else {
    blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(data.bytes, align);
  }
  auto attr = DenseResourceElementsAttr::get(*type, spec.target, std::move(blob));
  return builder.create<mlir::thunder::ConstantOp>(loc, attr).getResult();
}

LogicalResult ProgramImporter::declareInputs(func::FuncOp func,
                                             OpBuilder &builder) {
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  unsigned argIndex = 0;
  bool ok = true;
  for (const InputSpec &spec : program.inputSpecs) {
    switch (spec.kind) {
    case InputSpec::Kind::UserInput: {
      BlockArgument arg = entry->getArgument(argIndex++);
      define(spec.name, arg);
      break;
    }
    case InputSpec::Kind::Parameter:
    case InputSpec::Kind::Buffer:
    case InputSpec::Kind::Constant: {
      FailureOr<Value> weight = importWeight(spec, builder);
      if (failed(weight)) {
        ok = false;
        poisoned.insert(spec.name);
      } else {
        define(spec.name, *weight);
      }
      break;
    }
    case InputSpec::Kind::ConstantInput:
      break; // baked into the graph by torch.export
    case InputSpec::Kind::Other:
      emitError(UnknownLoc::get(&context))
          << options.sourceName << ": input '" << spec.name << "' is a "
          << spec.otherKind << ", which Thunder does not support";
      ok = false;
      poisoned.insert(spec.name);
      break;
    }
  }
  return success(ok);
}

/// Verifies the ops one node's conversion made (after `before` in `block`). A
/// conversion that produced an op its verifier rejects (PyTorch accepts more
/// operand types than the thunder op it maps to) is reported as the node being
/// unsupported for these operands, at its source line, with the verifier's
/// reason, never as an invalid op.
LogicalResult ProgramImporter::verifyConverted(const Node &node, Location loc, Block *block,
                                               Operation *before) {
  auto begin = before ? std::next(before->getIterator()) : block->begin();
  for (Operation &op : llvm::make_range(begin, block->end())) {
    std::string reason;
    {
      ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diag) {
        if (reason.empty())
          reason = diag.str();
        return success();
      });
      if (succeeded(verify(&op)))
        continue;
    }
    SmallVector<std::string> operands;
    for (Type type : op.getOperandTypes())
      operands.push_back(llvm::formatv("{0}", type).str());
    emitError(loc) << "unsupported: " << node.op() << " on operands of type "
                   << llvm::join(operands, ", ") << " (it maps to " << op.getName()
                   << ", which refuses them: " << reason << ")";
    return failure();
  }
  return success();
}

/// Whether a dim's symbol (a plain name or a sympy srepr) involves an unbacked
/// symbol: torch.export's name for a value read from tensor data ("u0" for
/// an int, "zuf0" for a float).
static bool isDataDependentSymbol(llvm::StringRef symbol) {
  auto isUnbacked = [](llvm::StringRef name) {
    for (llvm::StringRef prefix : {"u", "zuf"})
      if (name.consume_front(prefix) && !name.empty() &&
          llvm::all_of(name, llvm::isDigit))
        return true;
    return false;
  };
  if (isUnbacked(symbol))
    return true;
  // A compound expression: "Mul(Integer(2), Symbol('u0', integer=True))".
  for (size_t at = symbol.find("Symbol('"); at != llvm::StringRef::npos;
       at = symbol.find("Symbol('", at + 1)) {
    llvm::StringRef name = symbol.drop_front(at + 8);
    if (isUnbacked(name.take_until([](char c) { return c == '\''; })))
      return true;
  }
  return false;
}

/// Refuses a node whose result's shape depends on a value read from tensor
/// data (`torch.zeros(n.item())`): its size would have to be known on the
/// host.
LogicalResult ProgramImporter::checkDataDependentShapes(NodeContext &ctx) {
  for (unsigned i = 0, e = ctx.numResults(); i < e; ++i) {
    auto it = program.tensorValues.find(ctx.resultName(i));
    if (it == program.tensorValues.end())
      continue;
    for (const Dim &dim : it->second.sizes)
      if (dim.isDynamic() && isDataDependentSymbol(dim.symbol))
        return ctx.fail(dataDependentReason(
            "the size of its result ('" + dim.symbol + "')",
            "to size a tensor"));
  }
  return success();
}

/// Refuses a node that names a value read from tensor data in an argument its
/// conversion did not take as a 0-d tensor (an option, a size, an index the
/// op needs on the host).
LogicalResult ProgramImporter::checkDataConsumed(NodeContext &ctx) {
  for (const NamedArgument &input : ctx.node.inputs) {
    SmallVector<llvm::StringRef> refs;
    collectTensorRefs(*input.value, refs);
    bool names = llvm::any_of(refs, [&](llvm::StringRef ref) {
      return !program.tensorValues.count(ref) && lookup(ref);
    });
    if (names && !llvm::is_contained(ctx.consumedData, input.name))
      return ctx.failDataDependent(input.name, "where this op needs a constant");
  }
  return success();
}

LogicalResult ProgramImporter::importNodes(OpBuilder &builder) {
  const ConversionTable &table = conversionTable();
  bool ok = true;
  for (const Node &node : program.nodes) {
    Location loc = locationOf(node);
    SmallVector<llvm::StringRef> refs;
    for (const NamedArgument &input : node.inputs)
      collectTensorRefs(*input.value, refs);
    bool skip = llvm::any_of(refs, [&](llvm::StringRef name) {
      return poisoned.contains(name);
    });
    NodeContext ctx(builder, loc, node, *this);
    Block *block = builder.getInsertionBlock();
    Operation *before = block->empty() ? nullptr : &block->back();
    const CustomKernel *custom = customKernel(node.op());
    if (skip || failed(checkDataDependentShapes(ctx)) ||
        failed(custom ? importCustomCall(ctx, *custom) : table.lookup(node.op())(ctx)) ||
        failed(checkDataConsumed(ctx)) ||
        failed(verifyConverted(node, loc, block, before))) {
      ok = false;
      for (unsigned i = 0, e = ctx.numResults(); i < e; ++i)
        poisoned.insert(ctx.resultName(i));
    }
  }
  return success(ok);
}

/// A node of a custom op with a registered kernel: a thunder.custom_call of
/// its tensor arguments (in schema order) with its numbers as `scalars`, and
/// the result types torch.export recorded (the op's meta kernel).
LogicalResult ProgramImporter::importCustomCall(NodeContext &ctx,
                                                const CustomKernel &kernel) {
  SmallVector<Value> inputs;
  SmallVector<double> scalars;
  for (const NamedArgument &input : ctx.node.inputs) {
    const Object &value = *input.value;
    if (value.get("as_tensor")) {
      FailureOr<Value> tensor = ctx.tensor(input.name);
      if (failed(tensor))
        return failure();
      inputs.push_back(*tensor);
    } else if (auto f = value.getNumber("as_float")) {
      scalars.push_back(*f);
    } else if (auto i = value.getInteger("as_int")) {
      scalars.push_back(static_cast<double>(*i));
    } else if (auto b = value.getBoolean("as_bool")) {
      scalars.push_back(*b ? 1.0 : 0.0);
    } else if (!value.get("as_none")) {
      return ctx.fail("argument '" + input.name +
                      "' is neither a tensor nor a number: a custom_call passes "
                      "tensors and numbers only");
    }
  }
  SmallVector<Type> resultTypes;
  for (unsigned i = 0, e = ctx.numResults(); i < e; ++i) {
    FailureOr<RankedTensorType> type = ctx.resultType(i);
    if (failed(type))
      return failure();
    resultTypes.push_back(*type);
  }
  auto call = ctx.b.create<mlir::thunder::CustomCallOp>(
      ctx.loc, resultTypes, FlatSymbolRefAttr::get(&context, kernel.symbol),
      ctx.b.getStringAttr(kernel.op), inputs, ctx.b.getF64ArrayAttr(scalars));
  for (auto [i, result] : llvm::enumerate(call.getResults()))
    if (failed(ctx.setResult(result, i)))
      return failure();
  return success();
}

LogicalResult ProgramImporter::importOutputs(func::FuncOp func,
                                             OpBuilder &builder) {
  SmallVector<Value> results;
  bool ok = true;
  for (auto [i, spec] : llvm::enumerate(program.outputSpecs)) {
    Location loc = UnknownLoc::get(&context);
    if (spec.kind != "user_output") {
      emitError(loc) << options.sourceName << ": output #" << i << " is a "
                     << spec.kind
                     << "; Thunder compiles inference programs, which return "
                        "user outputs only (is the model in eval mode?)";
      ok = false;
      continue;
    }
    const Object *tensor = spec.argument->getObject("as_tensor");
    std::optional<llvm::StringRef> name =
        tensor ? tensor->getString("name") : std::nullopt;
    if (std::optional<llvm::StringRef> sym = symbolicName(*spec.argument);
        sym && lookup(*sym)) {
      emitError(lookup(*sym).getLoc())
          << options.sourceName << ": output #" << i << " ('" << *sym << "') "
          << dataDependentReason("",
                                 "returned as a Python number,")
                 .substr(1);
      ok = false;
      continue;
    }
    if (!name) {
      emitError(loc) << options.sourceName << ": output #" << i
                     << " is not a tensor; Thunder returns tensors only";
      ok = false;
      continue;
    }
    if (poisoned.contains(*name)) {
      ok = false;
      continue;
    }
    Value value = lookup(*name);
    if (!value) {
      emitError(loc) << options.sourceName << ": output #" << i << " ('"
                     << *name << "') has no producer";
      ok = false;
      continue;
    }
    results.push_back(value);
  }
  if (!ok)
    return failure();
  builder.create<func::ReturnOp>(func.getLoc(), results);
  func.setFunctionType(FunctionType::get(
      &context, func.getFunctionType().getInputs(), ValueRange(results).getTypes()));
  return success();
}

OwningOpRef<ModuleOp> ProgramImporter::run() {
  context.loadDialect<mlir::thunder::ThunderDialect, func::FuncDialect>();
  for (const Node &node : program.nodes) {
    SmallVector<llvm::StringRef> refs;
    for (const NamedArgument &input : node.inputs)
      collectTensorRefs(*input.value, refs);
    used.insert(refs.begin(), refs.end());
  }
  for (const OutputSpec &spec : program.outputSpecs) {
    SmallVector<llvm::StringRef> refs;
    collectTensorRefs(*spec.argument, refs);
    used.insert(refs.begin(), refs.end());
  }
  if (reportUnsupportedOps())
    return nullptr;

  Location moduleLoc = FileLineColLoc::get(&context, options.sourceName, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(moduleLoc);
  OpBuilder builder(&context);
  builder.setInsertionPointToEnd(module->getBody());

  // The signature: one argument per user input, with its name and the
  // symbols of its dynamic dims.
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  bool ok = true;
  for (const InputSpec &spec : program.inputSpecs) {
    if (spec.kind != InputSpec::Kind::UserInput)
      continue;
    FailureOr<RankedTensorType> type = typeOf(spec.name, moduleLoc);
    if (failed(type)) {
      ok = false;
      continue;
    }
    argTypes.push_back(*type);
    SmallVector<NamedAttribute> attrs{
        builder.getNamedAttr("thunder.name", builder.getStringAttr(spec.name))};
    const TensorMeta &meta = program.tensorValues.find(spec.name)->second;
    if (llvm::any_of(meta.sizes, [](const Dim &d) { return d.isDynamic(); })) {
      SmallVector<Attribute> symbols;
      for (const Dim &dim : meta.sizes)
        symbols.push_back(builder.getStringAttr(
            isPlainSymbol(dim.symbol) ? dim.symbol : std::string()));
      attrs.push_back(builder.getNamedAttr("thunder.dim_symbols",
                                           builder.getArrayAttr(symbols)));
    }
    argAttrs.push_back(builder.getDictionaryAttr(attrs));
  }
  if (!ok)
    return nullptr;

  auto func = builder.create<func::FuncOp>(
      moduleLoc, options.functionName, builder.getFunctionType(argTypes, {}));
  func.setAllArgAttrs(argAttrs);
  // Ranges of the dynamic dims' symbols: [min, max], -1 when unbounded.
  if (!program.symbolRanges.empty()) {
    SmallVector<NamedAttribute> ranges;
    for (const auto &entry : program.symbolRanges) {
      // Values read from tensor data size nothing that is compiled.
      if (isDataDependentSymbol(entry.getKey()))
        continue;
      const SymbolRange &range = entry.getValue();
      ranges.push_back(builder.getNamedAttr(
          entry.getKey(), builder.getDenseI64ArrayAttr(
                              {range.min.value_or(-1), range.max.value_or(-1)})));
    }
    if (!ranges.empty())
      func->setAttr("thunder.symbol_ranges", builder.getDictionaryAttr(ranges));
  }

  ok &= succeeded(declareInputs(func, builder));
  ok &= succeeded(importNodes(builder));
  if (!ok || failed(importOutputs(func, builder)))
    return nullptr;
  // The sources of the custom kernels the program calls, for the backends.
  SmallVector<NamedAttribute> kernels;
  for (const CustomKernel &kernel : options.customKernels) {
    bool called = false;
    module->walk([&](mlir::thunder::CustomCallOp call) {
      called |= call.getCallee() == kernel.symbol;
    });
    if (!called)
      continue;
    kernels.push_back(builder.getNamedAttr(
        kernel.symbol,
        builder.getDictionaryAttr(
            {builder.getNamedAttr("op", builder.getStringAttr(kernel.op)),
             builder.getNamedAttr("cpu_source", builder.getStringAttr(kernel.cpuSource)),
             builder.getNamedAttr("cpu_library", builder.getStringAttr(kernel.cpuLibrary)),
             builder.getNamedAttr("cuda_source",
                                  builder.getStringAttr(kernel.cudaSource))})));
  }
  if (!kernels.empty())
    (*module)->setAttr(kCustomKernelsAttr, builder.getDictionaryAttr(kernels));
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

OwningOpRef<ModuleOp>
importExportedProgram(MLIRContext &context,
                                       llvm::StringRef json,
                                       const WeightMap &weights,
                                       const ImportOptions &options) {
  auto program = ExportedProgram::parse(json, options.sourceName);
  if (!program) {
    emitError(UnknownLoc::get(&context)) << llvm::toString(program.takeError());
    return nullptr;
  }
  return ProgramImporter(context, **program, weights, options).run();
}

OwningOpRef<ModuleOp>
importPt2Archive(MLIRContext &context,
                                  const Pt2Archive &archive,
                                  const ImportOptions &options) {
  auto fail = [&](llvm::Error error) -> OwningOpRef<ModuleOp> {
    emitError(UnknownLoc::get(&context)) << llvm::toString(std::move(error));
    return nullptr;
  };
  llvm::Expected<llvm::StringRef> json = archive.modelJson();
  if (!json)
    return fail(json.takeError());
  WeightMap weights;
  auto addPayloads = [&](llvm::Expected<std::vector<Payload>> payloads) -> llvm::Error {
    if (!payloads)
      return payloads.takeError();
    for (const Payload &payload : *payloads) {
      // The importer takes contiguous row-major data; torch.export.save
      // writes each storage whole, so a view into it is contiguous when its
      // strides are the row-major ones.
      std::vector<int64_t> contiguous(payload.sizes.size());
      int64_t stride = 1;
      for (size_t d = payload.sizes.size(); d-- > 0;) {
        contiguous[d] = stride;
        stride *= payload.sizes[d];
      }
      int64_t numElements = ::thunder::numElements(payload.sizes);
      bool isContiguous = numElements <= 1 || payload.strides == contiguous;
      if (!payload.zeroFilled && !isContiguous)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            archive.displayName() + ": weight '" + payload.fqn +
                "' is a non-contiguous view of its storage; not supported yet");
      int64_t elementSize = dtypeSizeInBytes(payload.dtype);
      llvm::ArrayRef<char> bytes;
      if (!payload.zeroFilled)
        bytes = llvm::ArrayRef<char>(
            payload.storage.data() + payload.storageOffset * elementSize,
            numElements * elementSize);
      weights[payload.fqn] = WeightData{payload.dtype, payload.sizes, bytes};
    }
    return llvm::Error::success();
  };
  if (llvm::Error error = addPayloads(archive.weights()))
    return fail(std::move(error));
  if (llvm::Error error = addPayloads(archive.constants()))
    return fail(std::move(error));
  ImportOptions withName = options;
  if (withName.sourceName == ImportOptions().sourceName)
    withName.sourceName = archive.displayName().str();
  return importExportedProgram(context, *json, weights, withName);
}

//===----------------------------------------------------------------------===//
// Examine
//===----------------------------------------------------------------------===//

int64_t ExamineReport::numUnsupported() const {
  int64_t n = 0;
  for (const Op &op : ops)
    n += op.supported ? 0 : op.count;
  return n;
}

llvm::Expected<ExamineReport>
examineExportedProgram(llvm::StringRef json,
                                        llvm::StringRef sourceName) {
  auto program = ExportedProgram::parse(json, sourceName);
  if (!program)
    return program.takeError();
  llvm::MapVector<llvm::StringRef, ExamineReport::Op> ops;
  llvm::StringMap<llvm::StringSet<>> seenLines;
  for (const Node &node : (*program)->nodes) {
    ExamineReport::Op &op = ops[node.op()];
    op.name = node.op().str();
    op.supported = isSupportedOp(node.op());
    ++op.count;
    if (std::string line = sourceLine(node);
        !line.empty() && seenLines[op.name].insert(line).second)
      op.sourceLines.push_back(line);
  }
  ExamineReport report;
  report.numNodes = (*program)->nodes.size();
  for (auto &entry : ops)
    report.ops.push_back(std::move(entry.second));
  llvm::stable_sort(report.ops, [](const ExamineReport::Op &a,
                                   const ExamineReport::Op &b) {
    return a.count > b.count;
  });
  return report;
}

std::string formatExamineReport(const ExamineReport &report) {
  std::string text;
  llvm::raw_string_ostream os(text);
  int64_t unsupportedOps = llvm::count_if(
      report.ops, [](const ExamineReport::Op &op) { return !op.supported; });
  os << report.numNodes << " nodes, " << report.ops.size() << " distinct ops; ";
  if (unsupportedOps == 0)
    os << "all supported\n";
  else
    os << unsupportedOps << " unsupported (" << report.numUnsupported()
       << " nodes)\n";
  if (unsupportedOps) {
    os << "\nunsupported:\n";
    for (const ExamineReport::Op &op : report.ops) {
      if (op.supported)
        continue;
      os << "  " << op.name << "  x" << op.count << "\n";
      for (const std::string &line : op.sourceLines)
        os << "      at " << line << "\n";
    }
  }
  os << "\nop histogram:\n";
  for (const ExamineReport::Op &op : report.ops)
    os << llvm::format("  %6lld  %-48s %s\n", static_cast<long long>(op.count),
                       op.name.c_str(), op.supported ? "" : "UNSUPPORTED");
  return text;
}

} // namespace thunder::import
