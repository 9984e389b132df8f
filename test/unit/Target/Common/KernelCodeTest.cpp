// Unit tests for the kernel structure of thunder/Target/Common/KernelCode.h: stores and loops
// printed as the backends' kernels spell them, and the questions asked through nested loops.
#include "thunder/Target/Common/KernelCode.h"

#include <gtest/gtest.h>

#include <string>

using namespace thunder::codegen;

namespace {

/// `const float <name> = cv(<load>);` reading at `offset`.
Statement load(const char *name, IndexExpr offset) {
  return {"float", name, Load{mlir::Value(), std::move(offset)}, true, ""};
}

Loop loop(Loop::Kind kind, const char *var, const char *begin, const char *end,
          const char *step = "") {
  return Loop(kind, var, begin, end).by(step);
}

TEST(KernelCode, StorePrintsItsOffsetTree) {
  IndexExpr prow = IndexExpr::var("prow");
  Store s{"out0", prow * IndexExpr::size("inner") + IndexExpr::var("inner_j"), "t3", "bf16"};
  EXPECT_EQ(s.str(), "      out0[prow * inner + inner_j] = st<bf16>(t3);\n");
  s.offset = prow;
  s.indent = "  ";
  EXPECT_EQ(s.str(), "  out0[prow] = st<bf16>(t3);\n");
}

TEST(KernelCode, LoopKindsAreSpelled) {
  Loop l = loop(Loop::Kind::ParallelSimd, "flat_i", "0", "n");
  l.clause = "if (n > 32768)";
  EXPECT_EQ(l.header(), "#pragma omp parallel for simd if (n > 32768)\n"
                        "    for (int64_t flat_i = 0; flat_i < n; ++flat_i) {\n");
  l.kind = Loop::Kind::Parallel;
  EXPECT_EQ(l.header(), "#pragma omp parallel for if (n > 32768)\n"
                        "    for (int64_t flat_i = 0; flat_i < n; ++flat_i) {\n");
  l = loop(Loop::Kind::Simd, "inner_j", "0", "inner");
  EXPECT_EQ(l.header(), "#pragma omp simd\n"
                        "    for (int64_t inner_j = 0; inner_j < inner; ++inner_j) {\n");
  l.clause = "reduction(+:acc0)";
  l.indent = "      ";
  EXPECT_EQ(l.header(), "#pragma omp simd reduction(+:acc0)\n"
                        "      for (int64_t inner_j = 0; inner_j < inner; ++inner_j) {\n");
  l.kind = Loop::Kind::Plain;
  EXPECT_EQ(l.header(), "      for (int64_t inner_j = 0; inner_j < inner; ++inner_j) {\n");
  l = loop(Loop::Kind::Unrolled, "j", "0", "V");
  l.type = "int";
  EXPECT_EQ(l.header(), "#pragma unroll\n    for (int j = 0; j < V; ++j) {\n");
  l = loop(Loop::Kind::GridStride, "i", "done + t", "n", "stride");
  EXPECT_EQ(l.header(), "    for (int64_t i = done + t; i < n; i += stride) {\n");
  l = loop(Loop::Kind::BlockStride, "inner_j", "threadIdx.x", "inner", "blockDim.x");
  EXPECT_EQ(l.header(),
            "    for (int64_t inner_j = threadIdx.x; inner_j < inner; inner_j += blockDim.x) {\n");
}

TEST(KernelCode, NestedLoopsPrintInOrderAndSpellLoadsLast) {
  BodyEmitter body{BodyContext()};
  IndexExpr prow = IndexExpr::var("prow"), pcol = IndexExpr::var("pcol");
  Statements element;
  element.list = {load("t0", prow * IndexExpr::constant(17) + pcol)};
  Loop inner = loop(Loop::Kind::Simd, "pcol", "0", "cols");
  inner.body << "      const int64_t flat_i = prow * cols + pcol;\n" << element
             << Store{"out0", IndexExpr::var("flat_i"), "t0", "float"};
  Loop outer = loop(Loop::Kind::Parallel, "prow", "0", "rows");
  outer.clause = "if (n > 32768)";
  outer.body << std::move(inner);
  DeferredCode code;
  code << "    const int64_t cols = 17;\n" << std::move(outer);

  EXPECT_EQ(code.loads().size(), 1u);
  ASSERT_EQ(code.stores().size(), 1u);
  EXPECT_EQ(code.stores().front()->pointer, "out0");
  EXPECT_EQ(code.print(body, [](const Load &l) { return "in0[" + l.offset.str() + "]"; }),
            "    const int64_t cols = 17;\n"
            "#pragma omp parallel for if (n > 32768)\n"
            "    for (int64_t prow = 0; prow < rows; ++prow) {\n"
            "#pragma omp simd\n"
            "    for (int64_t pcol = 0; pcol < cols; ++pcol) {\n"
            "      const int64_t flat_i = prow * cols + pcol;\n"
            "      const float t0 = cv(in0[prow * 17 + pcol]);\n"
            "      out0[flat_i] = st<float>(t0);\n"
            "    }\n"
            "    }\n");
}

TEST(KernelCode, CodeBuiltApartIsAppendedInPlace) {
  BodyEmitter body{BodyContext()};
  DeferredCode a, b;
  a << "a;\n" << Store{"y0", IndexExpr::var("j"), "t1", "half", "  "};
  b << "b;\n";
  b << std::move(a) << "c;\n";
  EXPECT_EQ(b.stores().size(), 1u);
  EXPECT_EQ(b.print(body), "b;\na;\n  y0[j] = st<half>(t1);\nc;\n");
}

} // namespace
