//===- Conversion.h - Converting one torch.export node ----------*- C++ -*-===//
//
// Private to lib/Import. A converter turns one node of the exported graph
// (an ATen op call) into thunder ops. Converters are plain functions grouped
// by op family, one file each (ConvertElementwise.cpp, ...), registered by
// `register*Conversions` into one table keyed by the op name
// ("aten.add.Tensor").
//
// Arguments are read by their schema name. torch.export does not serialize
// arguments left at their defaults, so every getter that can be defaulted
// takes the schema's default.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_LIB_IMPORT_CONVERSION_H
#define THUNDER_LIB_IMPORT_CONVERSION_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "thunder/Import/ExportedProgram.h"
#include "llvm/ADT/StringMap.h"

#include <limits>
#include <variant>

namespace thunder::import::detail {

class NodeContext;

/// Converts one node; reports failures through NodeContext::fail.
using ConvertFn = mlir::LogicalResult (*)(NodeContext &);

/// Op name ("aten.add.Tensor") to converter.
using ConversionTable = llvm::StringMap<ConvertFn>;

void registerElementwiseConversions(ConversionTable &table);
void registerReductionConversions(ConversionTable &table);
void registerLinalgConversions(ConversionTable &table);
void registerDataMovementConversions(ConversionTable &table);
void registerCompositeConversions(ConversionTable &table);
void registerCreationConversions(ConversionTable &table);
void registerMathConversions(ConversionTable &table);
void registerIndexingConversions(ConversionTable &table);
void registerStatisticsConversions(ConversionTable &table);

/// Every registered conversion (built once).
const ConversionTable &conversionTable();

/// `end` of a slice that runs to the end of a dim, dynamic ones included
/// (docs/dialect.md, thunder.slice).
inline constexpr int64_t kSliceToEnd = std::numeric_limits<int64_t>::max();

/// A Python number passed where a tensor may go (`x + 1`, `x * 0.5`).
using Scalar = std::variant<bool, int64_t, double>;

/// What converters see of the importer: values by name and result types.
class ValueScope {
public:
  virtual ~ValueScope() = default;
  /// The value of a tensor named `name`, or null.
  virtual mlir::Value lookup(llvm::StringRef name) const = 0;
  /// The type torch.export recorded for the tensor `name`, or failure (after
  /// reporting an unsupported dtype) at `loc`.
  virtual mlir::FailureOr<mlir::RankedTensorType>
  typeOf(llvm::StringRef name, mlir::Location loc) const = 0;
  virtual void define(llvm::StringRef name, mlir::Value value) = 0;
  /// Whether any node or graph output reads the tensor `name`.
  virtual bool isUsed(llvm::StringRef name) const = 0;
  /// The symbol of each dim of tensor `name` when torch.export recorded it as
  /// a plain symbol ("s77"); "" for static dims and compound expressions.
  virtual std::vector<std::string> dimSymbols(llvm::StringRef name) const = 0;
  /// Symbolic sizes: the node that computes the symbolic number `name` from
  /// sizes (`aten.sym_size.int`, `_operator.add` of sizes, ...), recorded when
  /// it is imported (bookkeeping, no ops) so that a use as a tensor operand
  /// can compute it on the device (NodeContext::sizeValue); null when none.
  virtual void defineSize(llvm::StringRef name, const Node *node) = 0;
  virtual const Node *sizeDefinition(llvm::StringRef name) const = 0;
};

/// The conversion of one node.
class NodeContext {
public:
  NodeContext(mlir::OpBuilder &builder, mlir::Location loc, const Node &node,
              ValueScope &scope)
      : b(builder), loc(loc), node(node), scope(scope) {}

  mlir::OpBuilder &b;
  mlir::Location loc;
  const Node &node;

  //===--- Errors ------------------------------------------------------===//

  /// Reports "<op>: <message>" at the node's location and fails.
  mlir::LogicalResult fail(const llvm::Twine &message) const;

  //===--- Arguments, by schema name -----------------------------------===//

  /// The argument's JSON union, or null when torch.export left it out.
  const llvm::json::Object *arg(llvm::StringRef name) const;
  /// Whether the argument is present and not None.
  bool has(llvm::StringRef name) const;

  mlir::FailureOr<mlir::Value> tensor(llvm::StringRef name) const;
  /// A tensor argument that may be None or absent (null Value then).
  mlir::FailureOr<mlir::Value> optionalTensor(llvm::StringRef name) const;
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  tensorList(llvm::StringRef name) const;
  /// A list of optional tensors (aten.index's indices); None entries are null.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  optionalTensorList(llvm::StringRef name) const;

  mlir::FailureOr<int64_t>
  getInt(llvm::StringRef name, std::optional<int64_t> dflt = std::nullopt) const;
  /// An int list; a single int is accepted as a one-element list.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  getInts(llvm::StringRef name,
          std::optional<llvm::ArrayRef<int64_t>> dflt = std::nullopt) const;
  mlir::FailureOr<double>
  getFloat(llvm::StringRef name, std::optional<double> dflt = std::nullopt) const;
  mlir::FailureOr<bool>
  getBool(llvm::StringRef name, std::optional<bool> dflt = std::nullopt) const;
  mlir::FailureOr<std::string>
  getString(llvm::StringRef name,
            std::optional<llvm::StringRef> dflt = std::nullopt) const;
  /// A Python number argument; std::nullopt when it is a tensor or absent.
  std::optional<Scalar> scalar(llvm::StringRef name) const;
  /// A dtype argument (as_scalar_type) as an MLIR element type; null when
  /// absent or None.
  mlir::FailureOr<mlir::Type> dtype(llvm::StringRef name) const;

  /// The name of a value read from tensor data (.item(), a Python number
  /// torch.export could only name: {"as_sym_float": {"as_name": ...}}) that
  /// argument `name` refers to, or std::nullopt. Such values live on the
  /// device as 0-d tensors (see dataValue).
  std::optional<std::string> dataRef(llvm::StringRef name) const;
  /// The 0-d tensor of the data value argument `name` refers to, or null when
  /// it is not one; marks the argument as consumed (see consumedData).
  mlir::Value dataValue(llvm::StringRef name);
  /// Fails with why argument `name`, a value read from tensor data, cannot be
  /// used where this op needs it (`use`: "as a size", ...).
  mlir::LogicalResult failDataDependent(llvm::StringRef name,
                                        const llvm::Twine &use) const;
  /// The arguments whose data values the conversion took as tensors; any
  /// other argument naming one is refused after the conversion.
  llvm::SmallVector<std::string> consumedData;

  /// The symbolic size argument `name` refers to (a sequence length,
  /// `x.size(1) + 2`) as a 0-d tensor computed at run time in Python's types
  /// (int64; f64 after sym_float or a true division; i1 from a comparison),
  /// or failure (with why) when it is no such size.
  mlir::FailureOr<mlir::Value> sizeValue(llvm::StringRef name);
  /// Whether argument `name` is a symbolic size sizeValue can compute.
  bool isSize(llvm::StringRef name) const;

  /// A tensor-or-number argument as a tensor of `type`: numbers become splat
  /// constants, tensors (and values read from tensor data, and symbolic sizes:
  /// 0-d tensors) are broadcast (PyTorch's rules) and converted.
  mlir::FailureOr<mlir::Value> operandAs(llvm::StringRef name,
                                         mlir::RankedTensorType type);

  //===--- Results -----------------------------------------------------===//

  unsigned numResults() const;
  /// The name of result `i` (empty for None results).
  std::string resultName(unsigned i = 0) const;
  /// The type torch.export recorded for result `i`.
  mlir::FailureOr<mlir::RankedTensorType> resultType(unsigned i = 0) const;
  /// Whether result `i` is read anywhere (multi-result ops such as
  /// native_layer_norm have results that inference graphs never use).
  bool resultUsed(unsigned i) const;
  /// Binds result `i` to `value`, which must have its recorded type.
  mlir::LogicalResult setResult(mlir::Value value, unsigned i = 0);
  /// Binds the node's symbolic result (a Python number read from tensor
  /// data, {"as_sym_float": {"as_name": ...}}) to the 0-d tensor `value`.
  mlir::LogicalResult setDataResult(mlir::Value value);

  //===--- Building ----------------------------------------------------===//

  /// A splat constant of a static `type`; a rank-0 constant broadcast to
  /// `type` when it has dynamic dims.
  mlir::Value splat(mlir::RankedTensorType type, Scalar value);
  /// Converts the element type (no-op when equal).
  mlir::Value convert(mlir::Value value, mlir::Type elementType);
  /// PyTorch broadcasting of `value` to `shape` (right-aligned).
  mlir::FailureOr<mlir::Value> broadcastTo(mlir::Value value,
                                           llvm::ArrayRef<int64_t> shape);
  /// Slices dim `dim` of `value` to [start, end) by `step`, with PyTorch's
  /// negative and out-of-range indices normalized; the other dims whole.
  mlir::FailureOr<mlir::Value> sliceDim(mlir::Value value, int64_t dim,
                                        int64_t start, int64_t end,
                                        int64_t step = 1);
  /// `broadcastTo` then `convert`.
  mlir::FailureOr<mlir::Value> coerce(mlir::Value value,
                                      mlir::RankedTensorType type);

  /// Builds an op of this node. ODS's type-inferring builders abort the
  /// process (report_fatal_error) when inference fails, which a malformed
  /// program can cause (an operand of the wrong rank, a bad attribute); so an
  /// op with one inferred result is built with its explicit-type builder: the
  /// inferred type, or when inference fails a stand-in type (the first
  /// operand's), and the op then fails verification (verifyConverted), which
  /// reports why (setResult lets such a value through for that).
  template <typename OpTy, typename... Args> mlir::Value create(Args &&...args) {
    if constexpr (OpTy::template hasTrait<mlir::InferTypeOpInterface::Trait>() &&
                  OpTy::template hasTrait<mlir::OpTrait::OneResult>() &&
                  BuildsWithResultType<void, OpTy, Args...>::value) {
      mlir::OperationState state(loc, OpTy::getOperationName());
      OpTy::build(b, state, mlir::Type(), std::forward<Args>(args)...);
      llvm::SmallVector<mlir::Type, 1> inferred;
      mlir::MLIRContext *context = b.getContext();
      if (succeeded(OpTy::inferReturnTypes(
              context, std::nullopt, state.operands, state.attributes.getDictionary(context),
              state.getRawProperties(), state.regions, inferred)) &&
          inferred.size() == 1)
        state.types[0] = inferred[0];
      else {
        state.types[0] = standInType(state.operands);
        builtStandIn = true;
      }
      return b.create(state)->getResult(0);
    } else {
      return b.create<OpTy>(loc, std::forward<Args>(args)...);
    }
  }

  ValueScope &scope;

private:
  /// Whether OpTy has a builder taking the result type before `Args`.
  template <typename Void, typename OpTy, typename... Args>
  struct BuildsWithResultType : std::false_type {};
  template <typename OpTy, typename... Args>
  struct BuildsWithResultType<
      std::void_t<decltype(OpTy::build(std::declval<mlir::OpBuilder &>(),
                                       std::declval<mlir::OperationState &>(),
                                       std::declval<mlir::Type>(), std::declval<Args>()...))>,
      OpTy, Args...> : std::true_type {};

  /// The result type of an op whose type inference failed: its first
  /// operand's type, or a float32 scalar tensor.
  mlir::Type standInType(mlir::ValueRange operands) const;
  /// Whether create built an op with a stand-in result type.
  bool builtStandIn = false;
  /// Names the dynamic dims of `value`, result `i`, with the symbols
  /// torch.export gave them (`thunder.dim_symbols` on its producer; names the
  /// producer already has stay).
  void nameDimsAsResult(mlir::Value value, unsigned i);
};

/// The name a symbolic-number argument refers to ({"as_sym_int": {"as_name":
/// "u"}}, also as_sym_float and as_sym_bool), or std::nullopt.
std::optional<llvm::StringRef> symbolicName(const llvm::json::Object &argument);

/// The message that refuses a value read from tensor data (.item()) where the
/// host would need it: "<what> is a value read from tensor data (.item()) ...".
std::string dataDependentReason(const llvm::Twine &what, const llvm::Twine &use);

/// The MLIR element type of a Thunder dtype.
mlir::Type elementTypeOf(mlir::MLIRContext *context, DType dtype);

/// Normalizes a PyTorch dim (negative counts from the end) or fails.
mlir::FailureOr<int64_t> normalizeDim(NodeContext &ctx, int64_t dim,
                                      int64_t rank);

/// The run-time size of dim `d` of `x` as a 0-d i64 tensor (counted on the
/// device: a dynamic dim's size is not a value the program has otherwise).
mlir::FailureOr<mlir::Value> runtimeSize(NodeContext &ctx, mlir::Value x, int64_t d);

/// A 1-D i64 constant.
mlir::Value indexConstant(NodeContext &ctx, llvm::ArrayRef<int64_t> values);

/// `value` with dim `dim` mapped through the constant `index`
/// (out[.., i, ..] = in[.., index[i], ..]).
mlir::Value selectAlong(NodeContext &ctx, mlir::Value value, int64_t dim,
                        llvm::ArrayRef<int64_t> index);

} // namespace thunder::import::detail

#endif // THUNDER_LIB_IMPORT_CONVERSION_H
