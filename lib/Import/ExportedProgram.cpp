//===- ExportedProgram.cpp - Parse and check torch.export's JSON ----------===//
#include "thunder/Import/ExportedProgram.h"

#include "thunder/Import/Pt2Archive.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Regex.h"

using namespace thunder;
using namespace thunder::import;
using llvm::json::Array;
using llvm::json::Object;

namespace {
/// Builds "<source>: <message>" errors.
class ErrorBuilder {
public:
  explicit ErrorBuilder(llvm::StringRef source) : source(source) {}
  llvm::Error operator()(const llvm::Twine &message) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   source + ": " + message);
  }

private:
  std::string source;
};
} // namespace

llvm::StringRef Node::op() const {
  llvm::StringRef t = target;
  t.consume_front("torch.ops.");
  return t;
}

std::optional<Dim> thunder::import::parseSymInt(const llvm::json::Value &value) {
  const Object *object = value.getAsObject();
  if (!object)
    return std::nullopt;
  if (std::optional<int64_t> size = object->getInteger("as_int"))
    return Dim{*size, ""};
  const Object *expr = object->getObject("as_expr");
  if (!expr)
    return std::nullopt;
  Dim dim;
  // expr_str is sympy.srepr: "Symbol('s77', positive=True, integer=True)" or a
  // compound expression; the symbol is what we name the dim by.
  std::string exprStr = expr->getString("expr_str").value_or("?").str();
  llvm::SmallVector<llvm::StringRef, 2> groups;
  if (llvm::Regex("^Symbol\\('([A-Za-z0-9_]+)'").match(exprStr, &groups))
    dim.symbol = groups[1].str();
  else
    dim.symbol = exprStr;
  if (const Object *hint = expr->getObject("hint"))
    dim.size = hint->getInteger("as_int").value_or(0);
  return dim;
}

std::optional<std::pair<std::string, int64_t>>
thunder::import::userFrame(llvm::StringRef stackTrace) {
  // Frames look like:  File "/path/model.py", line 12, in forward
  static const llvm::Regex frame("File \"([^\"]+)\", line ([0-9]+)");
  std::optional<std::pair<std::string, int64_t>> first, user;
  llvm::SmallVector<llvm::StringRef, 3> groups;
  llvm::StringRef rest = stackTrace;
  while (frame.match(rest, &groups)) {
    int64_t line = 0;
    llvm::to_integer(groups[2], line);
    std::pair<std::string, int64_t> location{groups[1].str(), line};
    if (!first)
      first = location;
    // PyTorch's own modules (torch/nn/modules/linear.py...) are not where the
    // user's op comes from; the innermost frame outside them is.
    if (!groups[1].contains("/torch/"))
      user = location;
    rest = rest.drop_front(groups[0].data() - rest.data() + groups[0].size());
  }
  return user ? user : first;
}

static llvm::Expected<TensorMeta> parseTensorMeta(const Object &meta,
                                                  llvm::StringRef name,
                                                  const ErrorBuilder &error) {
  TensorMeta result;
  std::optional<int64_t> dtype = meta.getInteger("dtype");
  const Array *sizes = meta.getArray("sizes");
  if (!dtype || !sizes)
    return error("tensor value '" + name + "' has no dtype or sizes");
  result.scalarType = *dtype;
  result.dtype = dtypeFromScalarType(*dtype);
  // PyTorch's numel is an int64_t: a size below 0, or sizes whose product does
  // not fit, describe no tensor (and would overflow every element count that
  // the importer and the passes compute from the type).
  int64_t numel = 1;
  for (const llvm::json::Value &size : *sizes) {
    std::optional<Dim> dim = parseSymInt(size);
    if (!dim)
      return error("tensor value '" + name + "' has a malformed size");
    if (dim->size < 0)
      return error("tensor value '" + name + "' has a negative size (" +
                   std::to_string(dim->size) + ")");
    if (llvm::MulOverflow(numel, dim->size, numel))
      return error("tensor value '" + name +
                   "' has more elements than an int64_t counts");
    result.sizes.push_back(*dim);
  }
  return result;
}

static llvm::Expected<InputSpec> parseInputSpec(const Object &spec,
                                                const ErrorBuilder &error) {
  if (spec.size() != 1)
    return error("an input spec is not a one-key union");
  const auto &[key, value] = *spec.begin();
  const Object *body = value.getAsObject();
  if (!body)
    return error("input spec '" + key.str() + "' is not an object");
  InputSpec result;
  auto argName = [&](const Object *arg) -> std::string {
    if (!arg)
      return "";
    if (const Object *tensor = arg->getObject("as_tensor"))
      return tensor->getString("name").value_or("").str();
    return arg->getString("name").value_or("").str();
  };
  const Object *arg = body->getObject("arg");
  result.name = argName(arg);
  if (key == "user_input") {
    result.kind = InputSpec::Kind::UserInput;
  } else if (key == "parameter") {
    result.kind = InputSpec::Kind::Parameter;
    result.target = body->getString("parameter_name").value_or("").str();
  } else if (key == "buffer") {
    result.kind = InputSpec::Kind::Buffer;
    result.target = body->getString("buffer_name").value_or("").str();
  } else if (key == "constant_input") {
    result.kind = InputSpec::Kind::ConstantInput;
    result.name = body->getString("name").value_or("").str();
  } else if (key == "tensor_constant") {
    result.kind = InputSpec::Kind::Constant;
    result.target = body->getString("tensor_constant_name").value_or("").str();
  } else {
    result.kind = InputSpec::Kind::Other;
    result.otherKind = key.str();
  }
  return result;
}

llvm::Expected<std::unique_ptr<ExportedProgram>>
ExportedProgram::parse(llvm::StringRef json, llvm::StringRef sourceName) {
  ErrorBuilder error(sourceName);
  // parseArchiveJson bounds the nesting depth first: llvm::json::parse
  // recurses per level, and a crafted file must not overflow the stack.
  llvm::Expected<llvm::json::Value> parsed =
      parseArchiveJson(json, sourceName + ": the program");
  if (!parsed)
    return parsed.takeError();
  auto program = std::make_unique<ExportedProgram>();
  program->document = std::move(*parsed);
  const Object *root = program->document.getAsObject();
  if (!root)
    return error("the program JSON is not an object");

  // Version and dialect.
  const Object *version = root->getObject("schema_version");
  if (!version || !version->getInteger("major"))
    return error("the program has no schema_version: not a torch.export "
                 "ExportedProgram?");
  program->schemaMajor = *version->getInteger("major");
  program->schemaMinor = version->getInteger("minor").value_or(0);
  if (program->schemaMajor != kSupportedSchemaMajor)
    return error("schema version " + llvm::Twine(program->schemaMajor) + "." +
                 llvm::Twine(program->schemaMinor) +
                 " is not supported; Thunder reads schema " +
                 llvm::Twine(kSupportedSchemaMajor) +
                 ".x (torch.export from torch 2.9 to 2.13)");
  program->torchVersion = root->getString("torch_version").value_or("").str();
  // The TRAINING dialect (torch.export.export's own output, before
  // run_decompositions) is read too: it is functional like the ATEN one, and
  // its ops that the importer takes need no decomposition; any other op is
  // reported as unsupported, with a hint to decompose.
  if (const Array *verifiers = root->getArray("verifiers"))
    for (const llvm::json::Value &v : *verifiers)
      if (v.getAsString() && *v.getAsString() == "TRAINING")
        program->trainingDialect = true;

  const Object *module = root->getObject("graph_module");
  const Object *graph = module ? module->getObject("graph") : nullptr;
  const Object *signature = module ? module->getObject("signature") : nullptr;
  if (!graph || !signature)
    return error("the program has no graph_module.graph or signature");

  // Symbols and their ranges.
  if (const Object *ranges = root->getObject("range_constraints"))
    for (const auto &[symbol, value] : *ranges) {
      SymbolRange range;
      if (const Object *bounds = value.getAsObject()) {
        range.min = bounds->getInteger("min_val");
        range.max = bounds->getInteger("max_val");
      }
      program->symbolRanges[symbol.str()] = range;
    }

  // Types of every tensor value.
  if (const Object *values = graph->getObject("tensor_values"))
    for (const auto &[name, meta] : *values) {
      if (!meta.getAsObject())
        return error("tensor value '" + name.str() + "' is not an object");
      auto parsedMeta = parseTensorMeta(*meta.getAsObject(), name.str(), error);
      if (!parsedMeta)
        return parsedMeta.takeError();
      program->tensorValues[name.str()] = std::move(*parsedMeta);
    }

  // Signature.
  const Array *inputSpecs = signature->getArray("input_specs");
  const Array *outputSpecs = signature->getArray("output_specs");
  const Array *inputs = graph->getArray("inputs");
  const Array *outputs = graph->getArray("outputs");
  const Array *nodes = graph->getArray("nodes");
  if (!inputSpecs || !outputSpecs || !inputs || !outputs || !nodes)
    return error("the graph lacks inputs, outputs, nodes or specs");
  if (inputSpecs->size() != inputs->size() ||
      outputSpecs->size() != outputs->size())
    return error("the graph's inputs/outputs do not match its signature");
  for (const llvm::json::Value &spec : *inputSpecs) {
    if (!spec.getAsObject())
      return error("an input spec is not an object");
    auto parsedSpec = parseInputSpec(*spec.getAsObject(), error);
    if (!parsedSpec)
      return parsedSpec.takeError();
    program->inputSpecs.push_back(std::move(*parsedSpec));
  }
  for (const llvm::json::Value &input : *inputs)
    program->graphInputs.push_back(input.getAsObject());
  for (auto [spec, output] : llvm::zip(*outputSpecs, *outputs)) {
    const Object *specObject = spec.getAsObject();
    if (!specObject || specObject->size() != 1 || !output.getAsObject())
      return error("an output spec is malformed");
    program->outputSpecs.push_back(
        {specObject->begin()->first.str(), output.getAsObject()});
  }

  // Nodes.
  for (const llvm::json::Value &value : *nodes) {
    const Object *node = value.getAsObject();
    if (!node || !node->getString("target") || !node->getArray("inputs") ||
        !node->getArray("outputs"))
      return error("a node lacks target, inputs or outputs");
    Node parsedNode;
    parsedNode.target = node->getString("target")->str();
    parsedNode.name = node->getString("name").value_or("").str();
    parsedNode.outputs = node->getArray("outputs");
    for (const llvm::json::Value &input : *node->getArray("inputs")) {
      const Object *named = input.getAsObject();
      const Object *arg = named ? named->getObject("arg") : nullptr;
      if (!arg)
        return error("node '" + parsedNode.name + "' (" + parsedNode.target +
                     ") has a malformed argument");
      parsedNode.inputs.push_back(
          {named->getString("name").value_or("").str(), arg});
    }
    if (const Object *metadata = node->getObject("metadata"))
      parsedNode.stackTrace =
          metadata->getString("stack_trace").value_or("").str();
    program->nodes.push_back(std::move(parsedNode));
  }
  return program;
}
