// Unit tests for thunder/Dialect/Thunder/Reference/Ops.h and Tensor.h: each
// tensor op on small tensors, splats and empty tensors, and evaluate()'s
// dispatch from parsed IR. Elementwise semantics is ScalarTest's; here the
// mapping, the shapes and the reductions are checked. Expected values follow
// PyTorch (torch 2.13, CPU) as noted.
#include "ReferenceTestUtils.h"

#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "thunder/Dialect/Thunder/Reference/Ops.h"
#include "thunder/Dialect/Thunder/Reference/Scalar.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <vector>

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::reference;
using namespace thunder_test;

namespace {

class OpsTest : public ReferenceTest {
protected:
  OpsTest() { context.loadDialect<func::FuncDialect>(); }

  RankedTensorType tensorType(ArrayRef<int64_t> shape, Type element) {
    return RankedTensorType::get(shape, element);
  }
  /// A tensor of `shape` holding `values` (exact in `element`) row-major.
  Tensor make(ArrayRef<int64_t> shape, Type element, ArrayRef<double> values) {
    Tensor t = Tensor::allocate(tensorType(shape, element), /*splat=*/false);
    EXPECT_EQ(static_cast<int64_t>(values.size()), t.getNumElements());
    for (auto [i, v] : llvm::enumerate(values))
      t.set(i, isa<FloatType>(element) ? exact(element, v)
                                       : Int(element, static_cast<int64_t>(v)));
    return t;
  }
  /// A splat of `shape` with the value `v`.
  Tensor splat(ArrayRef<int64_t> shape, Type element, double v) {
    Tensor t = Tensor::allocate(tensorType(shape, element), /*splat=*/true);
    t.set(0, isa<FloatType>(element) ? exact(element, v)
                                     : Int(element, static_cast<int64_t>(v)));
    return t;
  }
  /// Every element of `t`, as doubles.
  static std::vector<double> values(const Tensor &t) {
    std::vector<double> out;
    for (int64_t i = 0; i < t.getNumElements(); ++i)
      out.push_back(t.getDouble(i));
    return out;
  }
};

using Doubles = std::vector<double>;

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST_F(OpsTest, Transpose) {
  Tensor x = make({2, 3}, f32, {1, 2, 3, 4, 5, 6});
  Tensor t = evalTransposeOp(x, {1, 0}, tensorType({3, 2}, f32));
  EXPECT_EQ(values(t), (Doubles{1, 4, 2, 5, 3, 6}));
}

TEST_F(OpsTest, BroadcastAndExpand) {
  Tensor x = make({2, 1}, i32, {7, -7});
  Tensor b = evalBroadcastOp(x, {0, 1}, tensorType({2, 3}, i32));
  EXPECT_EQ(values(b), (Doubles{7, 7, 7, -7, -7, -7}));
  Tensor row = make({3}, bf16, {1, 2, 3});
  Tensor e = evalExpandOp(row, tensorType({2, 3}, bf16));
  EXPECT_EQ(values(e), (Doubles{1, 2, 3, 1, 2, 3}));
  // A splat stays a splat.
  EXPECT_TRUE(evalExpandOp(splat({1}, f32, 4), tensorType({5, 6}, f32)).isSplat());
}

TEST_F(OpsTest, SliceWithSteps) {
  Tensor x = make({6}, i64, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(values(evalSliceOp(x, {1}, {2}, tensorType({3}, i64))),
            (Doubles{1, 3, 5}));
  // An empty slice.
  EXPECT_EQ(evalSliceOp(x, {2}, {1}, tensorType({0}, i64)).getNumElements(), 0);
}

TEST_F(OpsTest, ConcatAndPad) {
  Tensor a = make({1, 2}, f16, {1, 2}), b = make({2, 2}, f16, {3, 4, 5, 6});
  Tensor c = evalConcatOp({&a, &b}, 0, tensorType({3, 2}, f16));
  EXPECT_EQ(values(c), (Doubles{1, 2, 3, 4, 5, 6}));
  // Pad one before in both dims with 9; a negative low crops.
  Tensor v = make({2, 1}, f32, {1, 2});
  EXPECT_EQ(values(evalPadOp(v, {1, 1}, 9, tensorType({3, 2}, f32))),
            (Doubles{9, 9, 9, 1, 9, 2}));
  EXPECT_EQ(values(evalPadOp(v, {-1, 0}, 0, tensorType({1, 1}, f32))),
            (Doubles{2}));
  // The fill value rounds into the element type: 0.1 in bf16.
  Tensor vb = make({2, 1}, bf16, {1, 2});
  EXPECT_EQ(values(evalPadOp(vb, {0, 0}, 0.1, tensorType({2, 2}, bf16))),
            (Doubles{1, 0.10009765625, 2, 0.10009765625}));
}

TEST_F(OpsTest, GathersCheckTheirIndices) {
  Tensor table = make({3, 2}, f32, {0, 1, 10, 11, 20, 21});
  Tensor ids = make({2, 1}, i64, {2, 0});
  FailureOr<Tensor> rows = evalEmbeddingOp(table, ids, tensorType({2, 1, 2}, f32));
  ASSERT_TRUE(succeeded(rows));
  EXPECT_EQ(values(*rows), (Doubles{20, 21, 0, 1}));
  FailureOr<Tensor> cols =
      evalIndexSelectOp(table, make({1}, i32, {1}), 1, tensorType({3, 1}, f32));
  ASSERT_TRUE(succeeded(cols));
  EXPECT_EQ(values(*cols), (Doubles{1, 11, 21}));
  // torch.gather(table, 1, [[1], [0], [1]]) -> [[1], [10], [21]]
  FailureOr<Tensor> g = evalGatherOp(table, make({3, 1}, i64, {1, 0, 1}), 1,
                                     tensorType({3, 1}, f32));
  ASSERT_TRUE(succeeded(g));
  EXPECT_EQ(values(*g), (Doubles{1, 10, 21}));
  // PyTorch raises on an index out of range (negative ones are the
  // importer's to wrap).
  EXPECT_TRUE(failed(evalEmbeddingOp(table, make({1}, i64, {3}),
                                     tensorType({1, 2}, f32))));
  EXPECT_TRUE(failed(evalIndexSelectOp(table, make({1}, i64, {-1}), 0,
                                       tensorType({1, 2}, f32))));
}

//===----------------------------------------------------------------------===//
// Elementwise mapping
//===----------------------------------------------------------------------===//

TEST_F(OpsTest, ElementwiseMapsEveryElement) {
  Tensor a = make({4}, f32, {1, -2, 0, 8}), b = make({4}, f32, {3, 3, 0, -3});
  FailureOr<Tensor> q = evalDivOp(a, b, RoundingMode::Floor, tensorType({4}, f32));
  ASSERT_TRUE(succeeded(q));
  std::vector<double> got = values(*q);
  EXPECT_EQ(got[0], 0);
  EXPECT_EQ(got[1], -1);
  EXPECT_TRUE(std::isnan(got[2])); // 0 // 0
  EXPECT_EQ(got[3], -3);
  FailureOr<Tensor> m = evalMaximumOp(a, b, tensorType({4}, f32));
  EXPECT_EQ(values(*m), (Doubles{3, 3, 0, 8}));
  FailureOr<Tensor> r = evalReluOp(a, tensorType({4}, f32));
  EXPECT_EQ(values(*r), (Doubles{1, 0, 0, 8}));
}

TEST_F(OpsTest, OneUndefinedElementFailsTheOp) {
  // Integer division by zero in any element: PyTorch raises, no value.
  Tensor a = make({3}, i32, {4, 5, 6}), b = make({3}, i32, {2, 0, 3});
  EXPECT_TRUE(failed(evalDivOp(a, b, RoundingMode::Trunc, tensorType({3}, i32))));
  EXPECT_TRUE(failed(evalRemainderOp(a, b, tensorType({3}, i32))));
  EXPECT_TRUE(failed(evalConvertOp(make({2}, f32, {1, nan}), tensorType({2}, i32))));
}

TEST_F(OpsTest, SplatsStaySplats) {
  FailureOr<Tensor> s = evalAddOp(splat({64, 64}, bf16, 1), splat({64, 64}, bf16, 0x1p-8),
                                  tensorType({64, 64}, bf16));
  ASSERT_TRUE(succeeded(s));
  EXPECT_TRUE(s->isSplat());
  EXPECT_EQ(s->getDouble(4095), 1.0); // the bf16 tie rounds to even
  // A splat with a dense operand is dense.
  Tensor mixed = *evalMulOp(splat({2}, f32, 2), make({2}, f32, {1, 3}),
                            tensorType({2}, f32));
  EXPECT_FALSE(mixed.isSplat());
  EXPECT_EQ(values(mixed), (Doubles{2, 6}));
}

TEST_F(OpsTest, EmptyTensors) {
  Tensor e = make({0, 3}, f32, {});
  FailureOr<Tensor> n = evalNegOp(e, tensorType({0, 3}, f32));
  ASSERT_TRUE(succeeded(n));
  EXPECT_EQ(n->getNumElements(), 0);
  EXPECT_EQ(evalTransposeOp(e, {1, 0}, tensorType({3, 0}, f32)).getNumElements(), 0);
}

TEST_F(OpsTest, CompareWhereClampConvert) {
  Tensor a = make({3}, f32, {1, nan, 3}), b = make({3}, f32, {2, 2, 3});
  Tensor lt = evalCompareOp(a, b, ComparisonDirection::LT, tensorType({3}, i1));
  EXPECT_EQ(values(lt), (Doubles{1, 0, 0}));
  Tensor w = evalWhereOp(lt, a, b, tensorType({3}, f32));
  EXPECT_EQ(values(w), (Doubles{1, 2, 3}));
  FailureOr<Tensor> c = evalClampOp(b, 2.5, std::nullopt, tensorType({3}, f32));
  EXPECT_EQ(values(*c), (Doubles{2.5, 2.5, 3}));
  FailureOr<Tensor> h = evalConvertOp(make({2}, f32, {0.1f, 65520}), tensorType({2}, f16));
  EXPECT_EQ(values(*h), (Doubles{0.0999755859375, inf}));
}

/// Mismatches between evalConvertOp (whose float-to-float conversions take a
/// host fast path) and the scalar convert() applied to each element.
static std::string convertMismatches(const Tensor &x, RankedTensorType type) {
  FailureOr<Tensor> converted = evalConvertOp(x, type);
  if (failed(converted))
    return "failed";
  int64_t count = 0;
  std::string first;
  for (int64_t i = 0; i < x.getNumElements(); ++i) {
    FailureOr<Element> expected = convert(x.get(i), type.getElementType());
    Element actual = converted->get(i);
    if (succeeded(expected) && actual.isBitwiseEqual(*expected))
      continue;
    if (count++ == 0)
      first = x.get(i).toString() + " -> " + actual.toString() + ", expected " +
              (succeeded(expected) ? expected->toString() : "failure");
  }
  return count ? std::to_string(count) + " differ, e.g. " + first : "";
}

TEST_F(OpsTest, HostFloatConversionsAreTheReferences) {
  std::vector<Type> floats = {f64, f32, f16, bf16};
  // Every 16-bit pattern of f16 and bf16, NaNs and subnormals included.
  for (Type from : {f16, bf16}) {
    Tensor x = Tensor::allocate(tensorType({65536}, from), /*splat=*/false);
    for (uint32_t bits = 0; bits < 65536; ++bits)
      x.set(bits, Element(from, llvm::APFloat(cast<FloatType>(from).getFloatSemantics(),
                                              llvm::APInt(16, bits))));
    for (Type to : floats)
      EXPECT_EQ(convertMismatches(x, tensorType({65536}, to)), "")
          << "from " << Element::fromInt(from, 0).toString() << " to "
          << Element::fromInt(to, 0).toString();
  }
  // f32: every exponent and sign with mantissas at f16's and bf16's rounding
  // points (ties, one below, one above), and random patterns.
  std::vector<uint32_t> f32Bits;
  const uint32_t mantissas[] = {0,      1,      0x0fff, 0x1000, 0x1001, 0x2fff,
                                0x3000, 0x3001, 0x7fff, 0x8000, 0x8001, 0x17fff,
                                0x18000, 0x18001, 0x7fffff, 0x400000, 0x7ff000};
  for (uint32_t sign = 0; sign < 2; ++sign)
    for (uint32_t exponent = 0; exponent < 256; ++exponent)
      for (uint32_t mantissa : mantissas)
        f32Bits.push_back(sign << 31 | exponent << 23 | mantissa);
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state;
  };
  for (int i = 0; i < 100000; ++i)
    f32Bits.push_back(static_cast<uint32_t>(next() >> 32));
  Tensor x32 = Tensor::allocate(tensorType({int64_t(f32Bits.size())}, f32), false);
  for (auto [i, bits] : llvm::enumerate(f32Bits))
    x32.set(i, Element(f32, llvm::APFloat(llvm::APFloat::IEEEsingle(), llvm::APInt(32, bits))));
  for (Type to : floats)
    EXPECT_EQ(convertMismatches(x32, tensorType({int64_t(f32Bits.size())}, to)), "");
  // f64: values at f32's rounding points (which f16 and bf16 round through:
  // the double rounding must be the same) and random patterns.
  std::vector<uint64_t> f64Bits;
  for (int i = 0; i < 100000; ++i) {
    uint64_t random = next();
    f64Bits.push_back(random);
    // An exponent in f16's range, low 29 bits at an f32 tie or beside it.
    uint64_t exponent = 1023 - 30 + (random >> 58);
    uint64_t low[] = {0x10000000, 0x0fffffff, 0x10000001};
    f64Bits.push_back((random & (1ull << 63)) | exponent << 52 |
                      (random & 0xfffffe0000000ull) | low[i % 3]);
  }
  Tensor x64 = Tensor::allocate(tensorType({int64_t(f64Bits.size())}, f64), false);
  for (auto [i, bits] : llvm::enumerate(f64Bits))
    x64.set(i, Element(f64, llvm::APFloat(llvm::APFloat::IEEEdouble(), llvm::APInt(64, bits))));
  for (Type to : floats)
    EXPECT_EQ(convertMismatches(x64, tensorType({int64_t(f64Bits.size())}, to)), "");
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

TEST_F(OpsTest, ReduceOverDims) {
  Tensor x = make({2, 3}, f32, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(values(*evalSumOp(x, {1}, tensorType({2}, f32))), (Doubles{6, 15}));
  EXPECT_EQ(values(*evalSumOp(x, {0}, tensorType({1, 3}, f32))), (Doubles{5, 7, 9}));
  EXPECT_EQ(values(*evalMaxOp(x, {0, 1}, tensorType({}, f32))), (Doubles{6}));
  EXPECT_EQ(values(*evalMinOp(x, {1}, tensorType({2}, f32))), (Doubles{1, 4}));
  EXPECT_EQ(values(*evalProdOp(x, {1}, tensorType({2}, f32))), (Doubles{6, 120}));
  EXPECT_EQ(values(*evalMeanOp(x, {1}, tensorType({2}, f32))), (Doubles{2, 5}));
}

TEST_F(OpsTest, ReductionRoundingAndNaN) {
  // torch.mean(f16 [1, 2, 4]) -> 2.333984375 (7/3 rounded once).
  Tensor h = make({3}, f16, {1, 2, 4});
  EXPECT_EQ(values(*evalMeanOp(h, {0}, tensorType({}, f16))), (Doubles{2.333984375}));
  // torch.amax([1, nan, 3]) -> nan; min too.
  Tensor n = make({3}, f32, {1, nan, 3});
  EXPECT_TRUE(std::isnan(evalMaxOp(n, {0}, tensorType({}, f32))->getDouble(0)));
  EXPECT_TRUE(std::isnan(evalMinOp(n, {0}, tensorType({}, f32))->getDouble(0)));
  // The sum is exact, rounded once: 1 + 2**-24 + 2**-24 is 1 + 2**-23 (torch's
  // f32 left-to-right sum gives 1.0 here; the reference is the exact value).
  Tensor s = make({3}, f32, {1, 0x1p-24, 0x1p-24});
  EXPECT_EQ(values(*evalSumOp(s, {0}, tensorType({}, f32))), (Doubles{1 + 0x1p-23}));
}

TEST_F(OpsTest, IntegerReductionsWrap) {
  // torch.sum(int8 [100, 100]) -> 200 (as int64); with dtype=int8 -> -56.
  Tensor x = make({2}, i8, {100, 100});
  EXPECT_EQ(values(*evalSumOp(x, {0}, tensorType({}, i64))), (Doubles{200}));
  EXPECT_EQ(values(*evalSumOp(x, {0}, tensorType({}, i8))), (Doubles{-56}));
  EXPECT_EQ(values(*evalProdOp(x, {0}, tensorType({}, i8))), (Doubles{16})); // 10000 mod 256
  // torch.mean of integers raises.
  EXPECT_TRUE(failed(evalMeanOp(x, {0}, tensorType({}, i64))));
}

TEST_F(OpsTest, EmptyReductions) {
  // torch.sum([]) -> 0., prod([]) -> 1., mean([]) -> nan; max raises.
  Tensor e = make({0}, f32, {});
  EXPECT_EQ(values(*evalSumOp(e, {0}, tensorType({}, f32))), (Doubles{0}));
  EXPECT_EQ(values(*evalProdOp(e, {0}, tensorType({}, f32))), (Doubles{1}));
  EXPECT_TRUE(std::isnan(evalMeanOp(e, {0}, tensorType({}, f32))->getDouble(0)));
  EXPECT_TRUE(failed(evalMaxOp(e, {0}, tensorType({}, f32))));
  EXPECT_TRUE(failed(evalMinOp(make({0}, i32, {}), {0}, tensorType({}, i32))));
  // A splat reduced over an empty dim is empty too: sum 0 even of inf.
  Tensor se = splat({3, 0}, f32, inf);
  EXPECT_EQ(values(*evalSumOp(se, {1}, tensorType({3}, f32))), (Doubles{0, 0, 0}));
}

TEST_F(OpsTest, SplatReductionsUseClosedForms) {
  Tensor s = splat({1000, 1000}, f32, 0.5);
  FailureOr<Tensor> sum = evalSumOp(s, {0, 1}, tensorType({}, f32));
  EXPECT_EQ(values(*sum), (Doubles{500000}));
  // i8 splat 3, 1000 copies: the sum wraps (3000 mod 256 = 184 -> -72),
  // the product is 3**1000 mod 256.
  Tensor si = splat({1000}, i8, 3);
  EXPECT_EQ(values(*evalSumOp(si, {0}, tensorType({}, i8))), (Doubles{-72}));
  uint8_t p = 1;
  for (int i = 0; i < 1000; ++i)
    p = static_cast<uint8_t>(p * 3);
  EXPECT_EQ(values(*evalProdOp(si, {0}, tensorType({}, i8))),
            (Doubles{static_cast<double>(static_cast<int8_t>(p))}));
}

//===----------------------------------------------------------------------===//
// Tensors from attributes, and dispatch
//===----------------------------------------------------------------------===//

TEST_F(OpsTest, BoolLiteralsUnpackToBytes) {
  auto type = tensorType({3}, i1);
  auto attr = DenseElementsAttr::get(type, ArrayRef<bool>{true, false, true});
  std::optional<Tensor> t = Tensor::fromAttr(cast<ElementsAttr>(attr));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(values(*t), (Doubles{1, 0, 1}));
  ElementsAttr back = t->toAttr("b", /*literal=*/true);
  EXPECT_EQ(back, cast<ElementsAttr>(attr));
}

TEST_F(OpsTest, EvaluateDispatchesParsedOps) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    func.func @f(%a: tensor<3xi64>, %b: tensor<3xi64>, %x: tensor<2x3xf32>) {
      %q = thunder.div %a, %b rounding_mode = floor : tensor<3xi64>
      %s = thunder.sum %x dims = [1] : tensor<2x3xf32> -> tensor<2xf32>
      %lt = thunder.compare lt, %a, %b : tensor<3xi64>
      return
    }
  )mlir", &context);
  ASSERT_TRUE(module);
  auto fn = cast<func::FuncOp>(module->getBody()->front());
  SmallVector<Operation *> ops;
  for (Operation &op : fn.getBody().front().without_terminator())
    ops.push_back(&op);
  ASSERT_EQ(ops.size(), 3u);
  Tensor a = make({3}, i64, {7, -7, 6}), b = make({3}, i64, {2, 2, -4});
  Tensor x = make({2, 3}, f32, {1, 2, 3, 4, 5, 6});
  for (Operation *op : ops)
    EXPECT_TRUE(isEvaluable(op)) << op->getName().getStringRef().str();
  // torch.div([7, -7, 6], [2, 2, -4], rounding_mode='floor') -> [3, -4, -2]
  EXPECT_EQ(values(*evaluate(ops[0], {&a, &b})), (Doubles{3, -4, -2}));
  EXPECT_EQ(values(*evaluate(ops[1], {&x})), (Doubles{6, 15}));
  EXPECT_EQ(values(*evaluate(ops[2], {&a, &b})), (Doubles{0, 1, 0}));
  // A wrong operand count fails instead of reading past the list.
  EXPECT_TRUE(failed(evaluate(ops[0], {&a})));
  EXPECT_FALSE(isEvaluable(fn.getBody().front().getTerminator()));
}

} // namespace
