//===- IndexExpr.cpp - Index arithmetic of fused kernels as a tree --------===//
#include "thunder/Target/Common/IndexExpr.h"

#include "llvm/ADT/StringExtras.h"

#include <cassert>
#include <utility>

namespace thunder::codegen {

struct IndexExpr::Node {
  Kind kind;
  int64_t value = 0;
  std::string name;
  IndexExpr lhs, rhs;
  /// The structural hash, computed once when the node is built.
  llvm::hash_code hash;
};

IndexExpr IndexExpr::constant(int64_t value) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Constant;
  n->value = value;
  n->hash = llvm::hash_combine(int(Kind::Constant), value);
  return IndexExpr(std::move(n));
}

IndexExpr IndexExpr::var(llvm::StringRef name) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Var;
  n->name = name.str();
  n->hash = llvm::hash_combine(int(Kind::Var), name);
  return IndexExpr(std::move(n));
}

IndexExpr IndexExpr::size(llvm::StringRef text) {
  llvm::StringRef digits = text;
  digits.consume_back("LL");
  int64_t value;
  if (!digits.empty() && llvm::all_of(digits, llvm::isDigit) &&
      !digits.getAsInteger(10, value))
    return constant(value);
  auto n = std::make_shared<Node>();
  n->kind = Kind::Size;
  n->name = text.str();
  n->hash = llvm::hash_combine(int(Kind::Size), text);
  return IndexExpr(std::move(n));
}

IndexExpr IndexExpr::make(Kind kind, IndexExpr lhs, IndexExpr rhs) {
  assert(lhs && rhs && "an operand of an index expression is null");
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->hash = llvm::hash_combine(int(kind), lhs.node->hash, rhs.node->hash);
  n->lhs = std::move(lhs);
  n->rhs = std::move(rhs);
  return IndexExpr(std::move(n));
}

IndexExpr::Kind IndexExpr::kind() const { return node->kind; }
int64_t IndexExpr::value() const { return node->value; }
llvm::StringRef IndexExpr::name() const { return node->name; }
IndexExpr IndexExpr::lhs() const { return node->lhs; }
IndexExpr IndexExpr::rhs() const { return node->rhs; }

bool IndexExpr::isConstant(int64_t v) const {
  return node->kind == Kind::Constant && node->value == v;
}

bool IndexExpr::mentions(llvm::StringRef var) const {
  switch (node->kind) {
  case Kind::Constant:
  case Kind::Size:
    return false;
  case Kind::Var:
    return node->name == var;
  default:
    return node->lhs.mentions(var) || node->rhs.mentions(var);
  }
}

namespace {

/// How tightly an expression binds in C: sums, then products and
/// quotients, then leaves.
int precedence(IndexExpr::Kind kind) {
  switch (kind) {
  case IndexExpr::Kind::Add:
    return 1;
  case IndexExpr::Kind::Mul:
  case IndexExpr::Kind::Div:
  case IndexExpr::Kind::Mod:
    return 2;
  default:
    return 3;
  }
}

/// Whether operand `child` of `parent` (its left one when `left`) needs
/// parentheses: when C would bind it otherwise, and between a product,
/// quotient or remainder and another of them unless it is the same
/// operation chained left to right ("i / 8 / 4", "a * b * c"), which
/// reads as it computes.
bool needsParens(const IndexExpr &child, IndexExpr::Kind parent, bool left) {
  if (child.kind() == IndexExpr::Kind::Constant)
    return child.value() < 0 && precedence(parent) < 3;
  int c = precedence(child.kind()), p = precedence(parent);
  if (c != p)
    return c < p;
  if (parent == IndexExpr::Kind::Add || parent == IndexExpr::Kind::Mul)
    return child.kind() != parent; // + and * associate
  return !left || child.kind() != parent;
}

} // namespace

std::string IndexExpr::str() const {
  auto operand = [&](const IndexExpr &e, bool left) {
    std::string text = e.str();
    return needsParens(e, node->kind, left) ? "(" + text + ")" : text;
  };
  auto infix = [&](const char *op) {
    return operand(node->lhs, true) + op + operand(node->rhs, false);
  };
  switch (node->kind) {
  case Kind::Constant:
    return std::to_string(node->value);
  case Kind::Var:
  case Kind::Size:
    return node->name;
  case Kind::Add:
    return infix(" + ");
  case Kind::Mul:
    return infix(" * ");
  case Kind::Div:
    return infix(" / ");
  case Kind::Mod:
    return infix(" % ");
  }
  return "";
}

bool operator==(const IndexExpr &a, const IndexExpr &b) {
  if (a.node == b.node)
    return true;
  if (!a.node || !b.node || a.node->hash != b.node->hash || a.node->kind != b.node->kind)
    return false;
  const IndexExpr::Node &x = *a.node, &y = *b.node;
  return x.value == y.value && x.name == y.name && x.lhs == y.lhs && x.rhs == y.rhs;
}

llvm::hash_code hash_value(const IndexExpr &e) {
  return e.node ? e.node->hash : llvm::hash_code(0);
}

/// Whether `a` + `b` is (x / d) * d + x % d, in either order: x itself
/// (the row-major position of a dim split in two and joined again).
static IndexExpr recombined(const IndexExpr &a, const IndexExpr &b) {
  using Kind = IndexExpr::Kind;
  for (auto [scaled, rest] : {std::pair{a, b}, std::pair{b, a}})
    if (scaled.kind() == Kind::Mul && rest.kind() == Kind::Mod &&
        scaled.lhs().kind() == Kind::Div && scaled.lhs().lhs() == rest.lhs() &&
        scaled.lhs().rhs() == rest.rhs() && scaled.rhs() == rest.rhs())
      return rest.lhs();
  return IndexExpr();
}

IndexExpr operator+(const IndexExpr &a, const IndexExpr &b) {
  if (a.isConstant(0))
    return b;
  if (b.isConstant(0))
    return a;
  if (IndexExpr x = recombined(a, b))
    return x;
  if (a.kind() == IndexExpr::Kind::Constant && b.kind() == IndexExpr::Kind::Constant)
    return IndexExpr::constant(a.value() + b.value());
  return IndexExpr::make(IndexExpr::Kind::Add, a, b);
}

IndexExpr operator*(const IndexExpr &a, const IndexExpr &b) {
  if (a.isConstant(0) || b.isConstant(0))
    return IndexExpr::constant(0);
  if (a.isConstant(1))
    return b;
  if (b.isConstant(1))
    return a;
  if (a.kind() == IndexExpr::Kind::Constant && b.kind() == IndexExpr::Kind::Constant)
    return IndexExpr::constant(a.value() * b.value());
  return IndexExpr::make(IndexExpr::Kind::Mul, a, b);
}

/// Both operands constant, the divisor positive: the quotient or remainder
/// is a constant (of the non-negative values indices are, C's truncation
/// is the floor).
static bool foldable(const IndexExpr &a, const IndexExpr &b) {
  return a.kind() == IndexExpr::Kind::Constant && b.kind() == IndexExpr::Kind::Constant &&
         b.value() > 0;
}

IndexExpr floorDiv(const IndexExpr &a, const IndexExpr &b) {
  if (b.isConstant(1) || a.isConstant(0))
    return a;
  if (foldable(a, b))
    return IndexExpr::constant(a.value() / b.value());
  return IndexExpr::make(IndexExpr::Kind::Div, a, b);
}

IndexExpr mod(const IndexExpr &a, const IndexExpr &b) {
  if (b.isConstant(1) || a.isConstant(0))
    return IndexExpr::constant(0);
  if (foldable(a, b))
    return IndexExpr::constant(a.value() % b.value());
  return IndexExpr::make(IndexExpr::Kind::Mod, a, b);
}

llvm::SmallVector<IndexExpr, 4> delinearize(const IndexExpr &flat,
                                            llvm::ArrayRef<IndexExpr> shape) {
  llvm::SmallVector<IndexExpr, 4> index(shape.size());
  IndexExpr stride = IndexExpr::constant(1);
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    // The rows of `stride` elements before this one, then (but for the
    // outermost dim) the position among the dim's `shape[d]`.
    IndexExpr q = floorDiv(flat, stride);
    index[d] = d == 0 ? q : mod(q, shape[d]);
    if (shape[d].isConstant(1))
      index[d] = IndexExpr::constant(0);
    stride = stride * shape[d];
  }
  return index;
}

IndexExpr linearize(llvm::ArrayRef<IndexExpr> index, llvm::ArrayRef<IndexExpr> shape) {
  IndexExpr flat = IndexExpr::constant(0);
  for (auto [i, s] : llvm::zip(index, shape))
    flat = flat * s + i;
  return flat;
}

} // namespace thunder::codegen
