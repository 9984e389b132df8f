//===- IndexExpr.h - Index arithmetic of fused kernels as a tree -*- C++ -*-===//
//
// Where a fused kernel reads an element is integer arithmetic over the
// kernel's loop variables and the sizes of tensors: constants, loop
// variables, sizes known only at run time, +, *, division and remainder.
// The kernel generators (FusedBody.h and the backends' loops) build these
// expressions as trees, simplifying as they build (x * 1 = x, x + 0 = x,
// x * 0 = 0, x / 1 = x, x % 1 = 0, (x / d) * d + x % d = x, constants
// folded), ask their questions of the tree (does this index mention the
// inner loop's variable? is this read at the loop's own flat position?)
// and print it as C last, with the parentheses C needs and those that keep
// / and % apart for the reader.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_TARGET_COMMON_INDEXEXPR_H
#define THUNDER_TARGET_COMMON_INDEXEXPR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <string>

namespace thunder::codegen {

/// An integer expression indexing a kernel's tensors: an immutable tree,
/// shared by copies, compared by structure. A default-constructed
/// IndexExpr is null ("not known"); every operation but `operator bool`
/// expects a non-null one.
class IndexExpr {
public:
  enum class Kind {
    Constant, ///< an integer literal
    Var,      ///< a loop variable of the kernel ("prow", "inner_j", "i")
    Size,     ///< a size known at run time, spelled in C ("sym[0]", "inner")
    Add,      ///< lhs + rhs
    Mul,      ///< lhs * rhs
    Div,      ///< lhs / rhs (of non-negative values: floor division)
    Mod,      ///< lhs % rhs (of non-negative values)
  };

  IndexExpr() = default;
  static IndexExpr constant(int64_t value);
  /// A loop variable named `name`.
  static IndexExpr var(llvm::StringRef name);
  /// A size whose C expression is `text`, a name or a subscript (printed
  /// as an operand without parentheses). An integer literal (with or
  /// without the `LL` suffix) is a constant.
  static IndexExpr size(llvm::StringRef text);

  explicit operator bool() const { return node != nullptr; }
  Kind kind() const;
  /// The value of a constant.
  int64_t value() const;
  /// The name of a variable or the C text of a size.
  llvm::StringRef name() const;
  /// The operands of a binary node.
  IndexExpr lhs() const;
  IndexExpr rhs() const;

  /// Whether this is the constant `v`.
  bool isConstant(int64_t v) const;
  /// Whether the loop variable `var` occurs anywhere in the expression.
  bool mentions(llvm::StringRef var) const;
  /// The expression as C.
  std::string str() const;

  /// Structural equality (and a hash consistent with it): the same tree,
  /// whether or not it is the same object.
  friend bool operator==(const IndexExpr &a, const IndexExpr &b);
  friend bool operator!=(const IndexExpr &a, const IndexExpr &b) { return !(a == b); }
  friend llvm::hash_code hash_value(const IndexExpr &e);

  struct Node;

private:
  explicit IndexExpr(std::shared_ptr<const Node> n) : node(std::move(n)) {}
  static IndexExpr make(Kind kind, IndexExpr lhs, IndexExpr rhs);

  std::shared_ptr<const Node> node;

  friend IndexExpr operator+(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator*(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr floorDiv(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr mod(const IndexExpr &a, const IndexExpr &b);
};

/// a + b; x + 0 = 0 + x = x, (x / d) * d + x % d = x, constants folded.
IndexExpr operator+(const IndexExpr &a, const IndexExpr &b);
/// a * b; x * 1 = 1 * x = x, x * 0 = 0 * x = 0, constants folded.
IndexExpr operator*(const IndexExpr &a, const IndexExpr &b);
/// a / b of non-negative values; x / 1 = x, 0 / x = 0, constants folded.
IndexExpr floorDiv(const IndexExpr &a, const IndexExpr &b);
/// a % b of non-negative values; x % 1 = 0, 0 % x = 0, constants folded.
IndexExpr mod(const IndexExpr &a, const IndexExpr &b);

/// The index of each dim of a value of `shape` at the flat row-major
/// position `flat` (a size-1 dim's index is 0).
llvm::SmallVector<IndexExpr, 4> delinearize(const IndexExpr &flat,
                                            llvm::ArrayRef<IndexExpr> shape);
/// The flat row-major position of `index` in a value of `shape`.
IndexExpr linearize(llvm::ArrayRef<IndexExpr> index, llvm::ArrayRef<IndexExpr> shape);

} // namespace thunder::codegen

#endif // THUNDER_TARGET_COMMON_INDEXEXPR_H
