// Unit tests for thunder/Target/Common/IndexExpr.h: the simplification rules, the printed C
// (parentheses where C or the reader needs them), delinearize/linearize, and the questions the
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
  EXPECT_FALSE(IndexExpr());
}

TEST(IndexExpr, Simplifies) {
  IndexExpr x = v("x");
  EXPECT_EQ(x + c(0), x);
  EXPECT_EQ(c(0) + x, x);
  EXPECT_EQ(x * c(1), x);
  EXPECT_EQ(c(1) * x, x);
  EXPECT_TRUE((x * c(0)).isConstant(0));
  EXPECT_TRUE((c(0) * x).isConstant(0));
  EXPECT_EQ(floorDiv(x, c(1)), x);
  EXPECT_TRUE(mod(x, c(1)).isConstant(0));
  EXPECT_TRUE(floorDiv(c(0), x).isConstant(0));
  EXPECT_TRUE(mod(c(0), x).isConstant(0));
  // Constants fold.
  EXPECT_TRUE((c(8) * c(4)).isConstant(32));
  EXPECT_TRUE((c(2) + c(3)).isConstant(5));
  EXPECT_TRUE(floorDiv(c(7), c(2)).isConstant(3));
  EXPECT_TRUE(mod(c(7), c(2)).isConstant(1));
  // Sizes known only at run time do not.
  EXPECT_EQ((s("sym[0]") * c(4)).kind(), IndexExpr::Kind::Mul);
  // A slice's index: start + step * d.
  EXPECT_EQ((c(2) + c(3) * v("d")).str(), "2 + 3 * d");
  EXPECT_EQ((c(0) + c(1) * v("d")), v("d"));
}

TEST(IndexExpr, PrintsTheParenthesesNeeded) {
  IndexExpr x = v("x"), y = v("y"), z = v("z");
  EXPECT_EQ((x * s("inner") + v("j")).str(), "x * inner + j");
  EXPECT_EQ(((x + y) * z).str(), "(x + y) * z");
  EXPECT_EQ((z * (x + y)).str(), "z * (x + y)");
  EXPECT_EQ((x + (y + z)).str(), "x + y + z");
  EXPECT_EQ((x * (y * z)).str(), "x * y * z");
  // Quotients chain left to right; anything else on their right is grouped.
  EXPECT_EQ(floorDiv(floorDiv(x, c(8)), c(4)).str(), "x / 8 / 4");
  EXPECT_EQ(floorDiv(x, floorDiv(y, z)).str(), "x / (y / z)");
  EXPECT_EQ(floorDiv(x, y * z).str(), "x / (y * z)");
  EXPECT_EQ(mod(x, y * z).str(), "x % (y * z)");
  // / and % mixed, or under *, are grouped for the reader.
  EXPECT_EQ(mod(floorDiv(x, c(8)), c(4)).str(), "(x / 8) % 4");
  EXPECT_EQ((mod(x, c(4)) * c(8)).str(), "(x % 4) * 8");
  EXPECT_EQ(floorDiv(x * y, z).str(), "(x * y) / z");
  EXPECT_EQ((x + c(-1)).str(), "x + (-1)");
}

TEST(IndexExpr, Delinearize) {
  EXPECT_EQ(strs(delinearize(v("F"), {s("sym[0]"), c(4), c(8)})),
            (std::vector<std::string>{"F / 32", "(F / 8) % 4", "F % 8"}));
  // The outermost dim of one is the position itself.
  EXPECT_EQ(strs(delinearize(v("prow"), {s("sym[1]")})), (std::vector<std::string>{"prow"}));
  // Size-1 dims are at 0 and scale nothing.
  EXPECT_EQ(strs(delinearize(v("F"), {c(2), c(1), c(3)})),
            (std::vector<std::string>{"F / 3", "0", "F % 3"}));
  // Strides of run-time sizes.
  EXPECT_EQ(strs(delinearize(v("F"), {c(2), s("sym[0]"), c(3)})),
            (std::vector<std::string>{"F / (3 * sym[0])", "(F / 3) % sym[0]", "F % 3"}));
  EXPECT_TRUE(delinearize(v("F"), {}).empty());
}

TEST(IndexExpr, Linearize) {
  EXPECT_EQ(linearize({v("prow"), v("pcol")}, {s("sym[0]"), s("sym[1]")}).str(),
            "prow * sym[1] + pcol");
  // Leading zeros vanish, size-1 dims scale nothing, constants fold.
  EXPECT_EQ(linearize({c(0), v("x")}, {c(4), c(8)}).str(), "x");
  EXPECT_EQ(linearize({v("x"), v("y")}, {c(4), c(1)}).str(), "x + y");
  EXPECT_EQ(linearize({c(1), v("x")}, {c(2), s("N")}).str(), "N + x");
  EXPECT_EQ(linearize({c(1), c(2)}, {c(2), c(8)}).str(), "10");
  EXPECT_EQ(linearize({v("x"), c(0)}, {c(4), c(8)}).str(), "x * 8");
  EXPECT_EQ(linearize({v("x"), v("y"), v("z")}, {c(2), c(3), c(4)}).str(),
            "(x * 3 + y) * 4 + z");
  EXPECT_TRUE(linearize({}, {}).isConstant(0));
  // A dim split in two and joined again is the position it came from.
  EXPECT_EQ(linearize(delinearize(v("i"), {c(3), c(5)}), {c(3), c(5)}), v("i"));
  IndexExpr d = s("sym[0]");
  EXPECT_EQ(mod(v("i"), d) + floorDiv(v("i"), d) * d, v("i"));
  // Only when the divisor, the factor and the modulus agree.
  EXPECT_EQ((floorDiv(v("i"), c(64)) * c(16) + mod(v("i"), c(16))).str(), "(i / 64) * 16 + i % 16");
  EXPECT_EQ((floorDiv(v("i"), c(16)) * c(16) + mod(v("j"), c(16))).str(), "(i / 16) * 16 + j % 16");
}

TEST(IndexExpr, Mentions) {
  IndexExpr e = linearize(delinearize(v("prow"), {c(4)}), {c(4)}) + v("inner_j");
  EXPECT_TRUE(e.mentions("prow"));
  EXPECT_TRUE(e.mentions("inner_j"));
  EXPECT_FALSE(e.mentions("inner"));
  EXPECT_FALSE(e.mentions("i"));
  // A size spelled like a variable is not the variable.
  EXPECT_FALSE(s("inner_j").mentions("inner_j"));
  EXPECT_TRUE(mod(v("pcol"), c(2)).mentions("pcol"));
  EXPECT_FALSE(mod(v("pcol"), c(1)).mentions("pcol"));
}

TEST(IndexExpr, StructuralEquality) {
  IndexExpr a = floorDiv(v("F"), c(8) * c(4));
  IndexExpr b = floorDiv(v("F"), c(32));
  EXPECT_EQ(a, b);
  EXPECT_EQ(hash_value(a), hash_value(b));
  EXPECT_NE(a, floorDiv(v("F"), c(8)));
  EXPECT_NE(a, floorDiv(c(32), v("F")));
  EXPECT_NE(v("x"), s("x"));
  EXPECT_NE(c(1), c(2));
  EXPECT_NE(mod(v("x"), c(2)), floorDiv(v("x"), c(2)));
  EXPECT_NE(IndexExpr(), v("x"));
  EXPECT_EQ(IndexExpr(), IndexExpr());
}

} // namespace
