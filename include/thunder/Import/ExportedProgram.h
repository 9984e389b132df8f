//===- ExportedProgram.h - torch.export's program JSON, parsed --*- C++ -*-===//
//
// A checked view of the ExportedProgram JSON (schema 8.x, torch 2.9 to 2.13)
// that torch.export.save writes to models/model.json and that the Python
// binding serializes in memory. Only what the importer needs is modelled; the
// JSON document stays alive and node arguments are read from it lazily.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_IMPORT_EXPORTEDPROGRAM_H
#define THUNDER_IMPORT_EXPORTEDPROGRAM_H

#include "thunder/Support/TypePromotion.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace thunder::import {

/// The schema major version this importer reads.
inline constexpr int64_t kSupportedSchemaMajor = 8;

/// A dim of a tensor: a static size, or a symbol (`s77`) torch.export made dynamic.
struct Dim {
  int64_t size = 0;    ///< the size, or the example's size (hint) when symbolic
  std::string symbol;  ///< empty when static
  bool isDynamic() const { return !symbol.empty(); }
};

/// The type of a tensor value in the graph (`graph.tensor_values`).
struct TensorMeta {
  int64_t scalarType = 0;       ///< torch's serialized ScalarType number
  std::optional<DType> dtype;   ///< empty when Thunder has no such dtype
  std::vector<Dim> sizes;
};

/// One argument of a node: its schema name and its JSON value (a one-key object
/// such as {"as_tensor": {"name": "x"}}).
struct NamedArgument {
  std::string name;
  const llvm::json::Object *value = nullptr;
};

/// One call in the graph.
struct Node {
  std::string target;                ///< "torch.ops.aten.add.Tensor"
  std::string name;                  ///< the node's name, when the schema has it
  std::vector<NamedArgument> inputs; ///< in schema order, as written (no defaults)
  const llvm::json::Array *outputs = nullptr;
  std::string stackTrace;            ///< metadata.stack_trace, may be empty

  /// The op name without the "torch.ops." prefix: "aten.add.Tensor".
  llvm::StringRef op() const;
};

/// What a graph input is (signature.input_specs).
struct InputSpec {
  /// ConstantInput: a Python number or None argument, which torch.export
  /// bakes into the graph; it takes no argument in the imported function.
  enum class Kind { UserInput, Parameter, Buffer, Constant, ConstantInput, Other } kind;
  std::string name;    ///< the placeholder's name in the graph
  std::string target;  ///< FQN of a parameter/buffer/constant; empty for user inputs
  std::string otherKind; ///< the spec's key for Kind::Other (custom_obj, token, ...)
};

/// What a graph output is (signature.output_specs).
struct OutputSpec {
  std::string kind;   ///< "user_output", "buffer_mutation", ...
  const llvm::json::Object *argument = nullptr;
};

/// Inclusive bounds of a symbol; empty means unbounded.
struct SymbolRange {
  std::optional<int64_t> min, max;
};

/// A parsed ExportedProgram.
class ExportedProgram {
public:
  /// Parses and checks the JSON text (schema version, dialect, structure).
  /// `sourceName` names the input in error messages.
  static llvm::Expected<std::unique_ptr<ExportedProgram>>
  parse(llvm::StringRef json, llvm::StringRef sourceName);

  int64_t schemaMajor = 0, schemaMinor = 0;
  std::string torchVersion;
  /// torch.export's TRAINING dialect (not decomposed) rather than ATEN.
  bool trainingDialect = false;
  std::vector<InputSpec> inputSpecs;
  std::vector<const llvm::json::Object *> graphInputs;
  std::vector<OutputSpec> outputSpecs;
  std::vector<Node> nodes;
  llvm::StringMap<TensorMeta> tensorValues;
  llvm::StringMap<SymbolRange> symbolRanges;

private:
  llvm::json::Value document = nullptr;
};

/// Reads a SymInt JSON value ({"as_int": 3} or {"as_expr": {...}}) into a Dim.
std::optional<Dim> parseSymInt(const llvm::json::Value &value);

/// The innermost frame of `stackTrace` outside PyTorch's own sources (the
/// line of user or model-library code that produced an op), as file and line.
std::optional<std::pair<std::string, int64_t>>
userFrame(llvm::StringRef stackTrace);

} // namespace thunder::import

#endif // THUNDER_IMPORT_EXPORTEDPROGRAM_H
