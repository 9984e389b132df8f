// Unit tests for the structure thunder/Target/Common/FusedBody.h keeps until a backend prints
// it: statements with their loads, the questions asked of them, and DeferredCode's order.
#include "thunder/Target/Common/KernelCode.h"

#include <gtest/gtest.h>

#include <string>

using namespace thunder::codegen;

namespace {

/// `const float <name> = cv(<load>);` reading at `offset`.
Statement load(const char *name, IndexExpr offset) {
  return {"float", name, Load{mlir::Value(), std::move(offset)}, true, ""};
}

Statement compute(const char *name, const char *init) {
  return {"float", name, std::nullopt, false, init};
}

/// Spells every load as p[offset].
std::string byOffset(const Load &l) { return "p[" + l.offset.str() + "]"; }

TEST(FusedBody, StatementsAnswerFromTheirLoads) {
  IndexExpr prow = IndexExpr::var("prow"), pcol = IndexExpr::var("pcol");
  Statements s;
  s.list = {load("t0", IndexExpr::var("flat_i")), compute("t1", "prow_scale * t0"),
            load("t2", prow * IndexExpr::constant(8))};
  EXPECT_EQ(s.loads().size(), 2u);
  EXPECT_TRUE(s.mentions("prow"));
  EXPECT_TRUE(s.mentions("flat_i"));
  // Text that is not an index is not asked.
  EXPECT_FALSE(s.mentions("prow_scale"));
  EXPECT_FALSE(s.mentions("pcol"));
  (void)pcol;
}

TEST(FusedBody, PrintsWithTheKernelsSpelling) {
  BodyEmitter body{BodyContext()};
  Statements s;
  s.list = {load("t0", IndexExpr::var("i")), compute("t1", "static_cast<float>(t0 + t0)")};
  EXPECT_EQ(body.print(s, byOffset),
            "      const float t0 = cv(p[i]);\n"
            "      const float t1 = static_cast<float>(t0 + t0);\n");
  s.indent = "  ";
  EXPECT_EQ(body.print(s, [](const Load &) { return std::string("x0[j]"); }),
            "  const float t0 = cv(x0[j]);\n"
            "  const float t1 = static_cast<float>(t0 + t0);\n");
}

TEST(FusedBody, DeferredCodeKeepsOrderAndSpellsLast) {
  BodyEmitter body{BodyContext()};
  Statements a, b;
  a.list = {load("t0", IndexExpr::var("i"))};
  b.list = {load("t1", IndexExpr::var("j"))};
  b.indent = "    ";
  DeferredCode code;
  code << "{\n" << a << Statements() << "mid " << size_t(3) << "\n" << b << b << "}\n";
  EXPECT_EQ(code.loads().size(), 3u);
  // How a load is spelled can depend on every load, known only now.
  int seen = 0;
  std::string text = code.print(body, [&](const Load &l) {
    return (seen++ == 0 ? "first[" : "again[") + l.offset.str() + "]";
  });
  EXPECT_EQ(text, "{\n"
                  "      const float t0 = cv(first[i]);\n"
                  "mid 3\n"
                  "    const float t1 = cv(again[j]);\n"
                  "    const float t1 = cv(again[j]);\n"
                  "}\n");
}

} // namespace
