//===- FusedBody.h - Per-element C code of a fusion region ------*- C++ -*-===//
//
// DESIGN.md decision 7: the backends that emit C-family source (CPU C++,
// CUDA, HIP) share this generator for the body of pointwise, reduction and
// epilogue kernels. Each backend builds the loops (KernelCode.h: OpenMP, a
// grid-stride loop, a block per row) and asks here for the statements that
// compute a region value at an index; views (broadcast, expand, transpose, slice,
// reshape) become index arithmetic (IndexExpr.h), so a fused kernel reads
// each input where it lies and writes nothing in between. The statements
// are kept as structure (each load with its index tree) until a backend
// prints them: the backend asks the structure which inputs are read in loop
// order and which loop variables an index uses, and spells loads its own
// way (vectors loaded ahead, a row cache) without scanning generated text.
//
// Generated code uses a small vocabulary that every target's support header
// defines: compute_t<T> (the arithmetic type of storage type T: float for
// f16/bf16/f8), cv(x) (storage to compute), st<T>(x) (compute to storage),
// relu, sigmoid, silu, gelu, gelu_tanh, maximum, minimum (NaN-propagating),
// power, div_floor, div_trunc, py_remainder, and std:: math.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_TARGET_COMMON_FUSEDBODY_H
#define THUNDER_TARGET_COMMON_FUSEDBODY_H

#include "thunder/Target/Common/IndexExpr.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace thunder::codegen {

/// The C expression of an elementwise op over compute-typed operands
/// `operands` (names or expressions), where `C` is the compute type of its
/// (first non-condition) operand; failure when `op` is not elementwise.
/// `math`, when not empty, is the qualifier (`thunder_math::`) of the
/// target's own vector math: exp, log, erf, tanh, sin, cos, pow, rsqrt and
/// the activations are then spelled `<math>exp(...)` instead of std:: and
/// the scalar vocabulary's.
mlir::FailureOr<std::string>
elementwiseExpr(mlir::Operation *op, llvm::StringRef C,
                llvm::ArrayRef<std::string> operands, llvm::StringRef math = "");

/// A C literal of a double (with infinities and NaN).
std::string doubleLiteral(double v);

/// Where a value is read: one index expression per dim and, when known,
/// the flat row-major position (the kernel's loop counter for values read in
/// loop order). Either may be empty (null); the other is derived when
/// needed.
struct Index {
  llvm::SmallVector<IndexExpr, 4> dims;
  IndexExpr flat;
};

/// A read from memory in per-element code: `value` (a region input, or a
/// value bound to memory with BodyEmitter::bindMemory) at element `offset`.
struct Load {
  mlir::Value value;
  IndexExpr offset;
};

/// One statement, `const <type> <name> = <init>;`, where the initializer is
/// a load (taken to the compute type with cv() when `convert`) or C text
/// over the temporaries of earlier statements.
struct Statement {
  std::string type, name;
  std::optional<Load> load;
  bool convert = false;
  std::string init;
};

/// Statements in the order they run, printed each on a line at `indent`.
struct Statements {
  std::vector<Statement> list;
  std::string indent = "      ";

  bool empty() const { return list.empty(); }
  /// The loads, in order.
  llvm::SmallVector<const Load *> loads() const;
  /// Whether some load's offset mentions the loop variable `var`.
  bool mentions(llvm::StringRef var) const;
};

/// How a kernel spells a load, where it differs from the default (a
/// vector loaded ahead, a row cache); an empty string keeps the default.
using LoadSpelling = std::function<std::string(const Load &)>;

/// What a kernel template tells the generator.
struct BodyContext {
  /// The C expression of the size of dim `d` of a region value (static
  /// sizes as literals, dynamic ones from the backend's ShapePlan).
  std::function<std::string(mlir::Value, unsigned)> dim;
  /// The C expression reading region input `argument` (its block argument
  /// number) at element `offset` (printed), in its storage type.
  std::function<std::string(unsigned argument, const std::string &offset)> load;
  /// The C storage type of an element type ("float", "bf16", "bool", ...).
  std::function<std::string(mlir::Type)> storageType;
  /// A reduction kernel's inner loop variable (IndexExpr::var): values whose
  /// index does not mention it are the same for the whole row and go to the
  /// per-row code. Empty for pointwise kernels.
  std::string innerVar;
  /// The qualifier of the target's vector math functions (elementwiseExpr's
  /// `math`); empty for std:: and the scalar vocabulary.
  std::string math;
  /// The order region input `argument`'s elements lie in, where it is not
  /// row-major: the permutation of its dims whose row-major order is its
  /// memory's (a tensor kept channels last, NHWC for NCHW: {0, 2, 3, 1}).
  /// Empty (or unset): row-major. A transpose by that permutation reads it at
  /// the transpose's own flat position.
  std::function<llvm::SmallVector<int64_t, 4>(unsigned argument)> storageOrder;
};

/// Emits statements that compute region values per element, memoized per
/// index, into two sinks: per-row statements (values the same for a whole
/// row of a reduction kernel) and per-element statements.
class BodyEmitter {
public:
  explicit BodyEmitter(BodyContext context) : ctx(std::move(context)) {}

  /// The name of a compute-typed temporary holding `value` at `index`,
  /// emitting what computes it. Fails (with a diagnostic at the op) for an
  /// op the generator cannot compute per element.
  mlir::FailureOr<std::string> emit(mlir::Value value, const Index &index);

  /// Makes every read of `value` (a reduction's result) the C variable
  /// `name`: the accumulator of the row a reduction kernel is on.
  void bind(mlir::Value value, std::string name) { bound[value] = std::move(name); }

  /// Makes `value` (computed by a library call before the kernel runs) read
  /// from memory through the C pointer `pointer`, like a region input.
  void bindMemory(mlir::Value value, std::string pointer) {
    inMemory[value] = std::move(pointer);
  }

  /// Takes the per-element statements emitted so far, and forgets the
  /// per-element memo (a new loop recomputes what it needs).
  Statements takeElement();
  /// Takes the per-row statements emitted so far (the memo is kept: the row
  /// values stay in scope for the rest of the row).
  Statements takeRow();
  /// The statements as C, each load spelled by `spelling` when it gives a
  /// spelling and as the default (`spell`) otherwise.
  std::string print(const Statements &statements,
                    const LoadSpelling &spelling = nullptr) const;
  /// The default spelling of a load: the bound pointer or the context's
  /// `load`, at the printed offset.
  std::string spell(const Load &load) const;
  /// takeElement() and takeRow(), printed.
  std::string takeElementCode() { return print(takeElement()); }
  std::string takeRowCode() { return print(takeRow()); }

  /// The compute type of an element type: "compute_t<float>".
  std::string computeType(mlir::Type element);

  /// The sizes of `value`'s dims.
  llvm::SmallVector<IndexExpr, 4> shapeOf(mlir::Value value);

private:
  mlir::FailureOr<Index> operandIndex(mlir::Operation *op, const Index &index);
  /// The storage order of `value` when it is a region input that the
  /// context says is stored permuted; else empty.
  llvm::SmallVector<int64_t, 4> storageOrderOf(mlir::Value value) const;
  std::string fresh() { return "t" + std::to_string(counter++); }

  /// A value at an index: what the memo remembers temporaries by.
  struct Key {
    mlir::Value value;
    Index index;
    bool operator==(const Key &other) const {
      return value == other.value && index.dims == other.index.dims &&
             index.flat == other.index.flat;
    }
  };
  struct KeyHash {
    size_t operator()(const Key &key) const;
  };

  BodyContext ctx;
  llvm::DenseMap<mlir::Value, std::string> bound, inMemory;
  std::unordered_map<Key, std::string, KeyHash> rowMemo, elementMemo;
  Statements rowCode, elementCode;
  unsigned counter = 0;
};

} // namespace thunder::codegen

#endif // THUNDER_TARGET_COMMON_FUSEDBODY_H
