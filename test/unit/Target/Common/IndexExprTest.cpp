// Unit tests for thunder/Target/Common/IndexExpr.h: the simplification rules, the printed C
// (the spelling fused kernels have always had), delinearize/linearize, and the questions the
// kernel generators ask of an index (mentions, structural equality).
#include "thunder/Target/Common/IndexExpr.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace thunder::codegen;

namespace {

IndexExpr c(int64_t v) { return IndexExpr::constant(v); }
IndexExpr v(const char *name) { return IndexExpr::var(name); }
IndexExpr s(const char *text) { return IndexExpr::size(text); }

std::vector<std::string> strs(llvm::ArrayRef<IndexExpr> exprs) {
  std::vector<std::string> out;
  for (const IndexExpr &e : exprs)
    out.push_back(e.str());
  return out;
}

TEST(IndexExpr, Leaves) {
  EXPECT_EQ(c(42).str(), "42");
  EXPECT_EQ(c(-1).str(), "-1");
  EXPECT_EQ(v("prow").str(), "prow");
  EXPECT_EQ(s("sym[0]").str(), "sym[0]");
  EXPECT_EQ(s("sym[0]").kind(), IndexExpr::Kind::Size);
  // Literal sizes are constants, with or without the LL suffix.
  EXPECT_TRUE(s("64LL").isConstant(64));
  EXPECT_TRUE(s("1").isConstant(1));
  EXPECT_EQ(s("LL").kind(), IndexExpr::Kind::Size);
  EXPECT_EQ(IndexExpr::verbatim("1LL").kind(), IndexExpr::Kind::Size);
  EXPECT_EQ(scaled(IndexExpr::verbatim("1LL"), v("x")).str(), "(1LL) * (x)");
  EXPECT_FALSE(IndexExpr());
}

TEST(IndexExpr, SimplifiesZeroAndOne) {
  IndexExpr x = v("x");
  EXPECT_EQ(x + c(0), x);
  EXPECT_EQ(c(0) + x, x);
  EXPECT_EQ(x * c(1), x);
  EXPECT_EQ(c(1) * x, x);
  EXPECT_TRUE((x * c(0)).isConstant(0));
  EXPECT_TRUE((c(0) * x).isConstant(0));
  EXPECT_EQ((x * s("inner") + v("j")).str(), "x * inner + j");
  // A group is not the constant it holds.
  EXPECT_EQ((paren(c(1)) * x).str(), "(1) * x");
}

TEST(IndexExpr, ScaledPutsFactorsInParentheses) {
  EXPECT_EQ(scaled(c(3), v("d")).str(), "(3) * (d)");
  EXPECT_EQ(scaled(c(1), v("d")), v("d"));
  EXPECT_EQ(scaled(v("d"), c(1)), v("d"));
  EXPECT_TRUE(scaled(c(0), v("d")).isConstant(0));
  // A factor that is itself a product keeps its own parentheses.
  EXPECT_EQ(scaled(c(1), scaled(c(8), c(4))).str(), "(8) * (4)");
  EXPECT_EQ(scaled(scaled(c(8), c(4)), s("sym[0]")).str(), "((8) * (4)) * (sym[0])");
  // A slice's index: start + step * d.
  EXPECT_EQ((c(2) + scaled(c(3), v("d"))).str(), "2 + (3) * (d)");
  EXPECT_EQ((c(0) + scaled(c(1), v("d"))).str(), "d");
}

TEST(IndexExpr, Delinearize) {
  EXPECT_EQ(strs(delinearize(v("F"), {s("sym[0]"), c(4), c(8)})),
            (std::vector<std::string>{"((F) / ((8) * (4)))", "(((F) / (8)) % (4))",
                                      "((F) % (8))"}));
  // The outermost dim of one is the position itself.
  EXPECT_EQ(strs(delinearize(v("prow"), {s("sym[1]")})), (std::vector<std::string>{"(prow)"}));
  // Size-1 dims are at 0 and scale nothing.
  EXPECT_EQ(strs(delinearize(v("F"), {c(2), c(1), c(3)})),
            (std::vector<std::string>{"((F) / (3))", "0", "((F) % (3))"}));
  EXPECT_TRUE(delinearize(v("F"), {}).empty());
}

TEST(IndexExpr, Linearize) {
  EXPECT_EQ(linearize({paren(v("prow")), v("pcol")}, {s("sym[0]"), s("sym[1]")}).str(),
            "(((prow))) * (sym[1]) + pcol");
  // Leading zeros vanish, size-1 dims scale nothing.
  EXPECT_EQ(linearize({c(0), v("x")}, {c(4), c(8)}).str(), "x");
  EXPECT_EQ(linearize({v("x"), v("y")}, {c(4), c(1)}).str(), "(x) + y");
  EXPECT_EQ(linearize({c(1), v("x")}, {c(2), s("N")}).str(), "((1)) * (N) + x");
  EXPECT_EQ(linearize({v("x"), c(0)}, {c(4), c(8)}).str(), "((x)) * (8)");
  EXPECT_TRUE(linearize({}, {}).isConstant(0));
  // Delinearizing and linearizing again gives an expression in the same variable.
  IndexExpr round =
      linearize(delinearize(v("i"), {c(3), c(5)}), {c(3), c(5)});
  EXPECT_EQ(round.str(), "((((i) / (5)))) * (5) + ((i) % (5))");
}

TEST(IndexExpr, Mentions) {
  IndexExpr e = linearize(delinearize(v("prow"), {c(4)}), {c(4)}) + v("inner_j");
  EXPECT_TRUE(e.mentions("prow"));
  EXPECT_TRUE(e.mentions("inner_j"));
  EXPECT_FALSE(e.mentions("inner"));
  EXPECT_FALSE(e.mentions("i"));
  // A size spelled like a variable is not the variable.
  EXPECT_FALSE(s("inner_j").mentions("inner_j"));
  EXPECT_TRUE(paren(mod(v("pcol"), c(2))).mentions("pcol"));
}

TEST(IndexExpr, StructuralEquality) {
  IndexExpr a = floorDiv(paren(v("F")), paren(c(8)));
  IndexExpr b = floorDiv(paren(v("F")), paren(c(8)));
  EXPECT_EQ(a, b);
  EXPECT_EQ(hash_value(a), hash_value(b));
  EXPECT_NE(a, floorDiv(v("F"), paren(c(8))));
  EXPECT_NE(v("x"), s("x"));
  EXPECT_NE(c(1), c(2));
  EXPECT_NE(mod(v("x"), c(2)), floorDiv(v("x"), c(2)));
  EXPECT_NE(IndexExpr(), v("x"));
  EXPECT_EQ(IndexExpr(), IndexExpr());
}

} // namespace
