//===- IndexExpr.cpp - Index arithmetic of fused kernels as a tree --------===//
#include "thunder/Target/Common/IndexExpr.h"

#include "llvm/ADT/StringExtras.h"

#include <cassert>

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
  return verbatim(text);
}

IndexExpr IndexExpr::verbatim(llvm::StringRef text) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Size;
  n->name = text.str();
  n->hash = llvm::hash_combine(int(Kind::Size), text);
  return IndexExpr(std::move(n));
}

IndexExpr IndexExpr::make(Kind kind, IndexExpr lhs, IndexExpr rhs) {
  assert(lhs && (rhs || kind == Kind::Group) && "an operand of an index expression is null");
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->hash = llvm::hash_combine(int(kind), lhs.node->hash,
                               rhs ? rhs.node->hash : llvm::hash_code(0));
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
  case Kind::Group:
    return node->lhs.mentions(var);
  default:
    return node->lhs.mentions(var) || node->rhs.mentions(var);
  }
}

std::string IndexExpr::str() const {
  auto infix = [&](const char *op) { return node->lhs.str() + op + node->rhs.str(); };
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
  case Kind::Group:
    return "(" + node->lhs.str() + ")";
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

IndexExpr operator+(const IndexExpr &a, const IndexExpr &b) {
  if (a.isConstant(0))
    return b;
  if (b.isConstant(0))
    return a;
  return IndexExpr::make(IndexExpr::Kind::Add, a, b);
}

IndexExpr operator*(const IndexExpr &a, const IndexExpr &b) {
  if (a.isConstant(0) || b.isConstant(0))
    return IndexExpr::constant(0);
  if (a.isConstant(1))
    return b;
  if (b.isConstant(1))
    return a;
  return IndexExpr::make(IndexExpr::Kind::Mul, a, b);
}

IndexExpr floorDiv(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr::make(IndexExpr::Kind::Div, a, b);
}

IndexExpr mod(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr::make(IndexExpr::Kind::Mod, a, b);
}

IndexExpr paren(const IndexExpr &a) {
  return IndexExpr::make(IndexExpr::Kind::Group, a, IndexExpr());
}

IndexExpr scaled(const IndexExpr &a, const IndexExpr &b) {
  if (a.isConstant(0) || b.isConstant(0) || a.isConstant(1) || b.isConstant(1))
    return a * b;
  return paren(a) * paren(b);
}

llvm::SmallVector<IndexExpr, 4> delinearize(const IndexExpr &flat,
                                            llvm::ArrayRef<IndexExpr> shape) {
  llvm::SmallVector<IndexExpr, 4> index(shape.size());
  IndexExpr stride = IndexExpr::constant(1);
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    // The rows of `stride` elements before this one, then (but for the
    // outermost dim) the position among the dim's `shape[d]`.
    IndexExpr q = stride.isConstant(1) ? paren(flat) : paren(floorDiv(paren(flat), paren(stride)));
    index[d] = d == 0 ? q : paren(mod(q, paren(shape[d])));
    if (shape[d].isConstant(1))
      index[d] = IndexExpr::constant(0);
    stride = scaled(stride, shape[d]);
  }
  return index;
}

IndexExpr linearize(llvm::ArrayRef<IndexExpr> index, llvm::ArrayRef<IndexExpr> shape) {
  IndexExpr flat = IndexExpr::constant(0);
  for (auto [i, s] : llvm::zip(index, shape))
    flat = scaled(flat.isConstant(0) ? flat : paren(flat), s) + i;
  return flat;
}

} // namespace thunder::codegen
