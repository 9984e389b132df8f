// Unit tests for thunder/Support/ShapeMath.h: every shape rule on normal, dynamic, negative-dim,
// size-0/size-1 and error inputs; conv/pool/slice expectations computed with PyTorch.
#include "thunder/Support/ShapeMath.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace thunder;

namespace {

constexpr int64_t D = kDynamic;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

/// Succeeds when `result` is ok and equals `expected`.
::testing::AssertionResult hasShape(const ShapeResult &result, const Shape &expected) {
  if (!result.ok())
    return ::testing::AssertionFailure()
           << "expected " << formatShape(expected) << ", got error: " << result.error;
  if (result.shape != expected)
    return ::testing::AssertionFailure()
           << "expected " << formatShape(expected) << ", got " << formatShape(result.shape);
  return ::testing::AssertionSuccess();
}

/// Succeeds when `error` is non-empty and contains every fragment.
::testing::AssertionResult errorMentions(const std::string &error,
                                         std::initializer_list<std::string> fragments) {
  if (error.empty())
    return ::testing::AssertionFailure() << "expected an error, got none";
  for (const std::string &fragment : fragments)
    if (error.find(fragment) == std::string::npos)
      return ::testing::AssertionFailure()
             << "error \"" << error << "\" does not mention \"" << fragment << "\"";
  return ::testing::AssertionSuccess();
}

/// Succeeds when `result` failed with an error mentioning every fragment.
::testing::AssertionResult failsWith(const ShapeResult &result,
                                     std::initializer_list<std::string> fragments) {
  if (result.ok())
    return ::testing::AssertionFailure()
           << "expected an error, got shape " << formatShape(result.shape);
  return errorMentions(result.error, fragments);
}

} // namespace

//===----------------------------------------------------------------------===//
// Basics
//===----------------------------------------------------------------------===//

TEST(ShapeMathTest, KDynamicMatchesMlir) {
  // mlir::ShapedType::kDynamic is std::numeric_limits<int64_t>::min() since LLVM 16.
  EXPECT_EQ(kDynamic, std::numeric_limits<int64_t>::min());
}

TEST(ShapeMathTest, FormatShape) {
  EXPECT_EQ(formatShape({}), "[]");
  EXPECT_EQ(formatShape({0}), "[0]");
  EXPECT_EQ(formatShape({2, D, 4}), "[2, ?, 4]");
  EXPECT_EQ(formatDim(D), "?");
  EXPECT_EQ(formatDim(7), "7");
}

TEST(ShapeMathTest, IsStaticAndNumElements) {
  EXPECT_TRUE(isStatic({}));
  EXPECT_TRUE(isStatic({2, 3}));
  EXPECT_FALSE(isStatic({2, D}));
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({2, 3, 4}), 24);
  EXPECT_EQ(numElements({1}), 1);
  EXPECT_EQ(numElements({3, 0, 5}), 0);
  EXPECT_EQ(numElements({D, 3}), kDynamic);
  // Documented: any dynamic dim makes the count dynamic, even next to a 0.
  EXPECT_EQ(numElements({0, D}), kDynamic);
}

TEST(ShapeMathTest, Compatibility) {
  EXPECT_TRUE(areCompatibleDims(3, 3));
  EXPECT_TRUE(areCompatibleDims(D, 3));
  EXPECT_TRUE(areCompatibleDims(3, D));
  EXPECT_FALSE(areCompatibleDims(3, 4));
  EXPECT_TRUE(areCompatibleShapes({2, D}, {D, 5}));
  EXPECT_TRUE(areCompatibleShapes({}, {}));
  EXPECT_FALSE(areCompatibleShapes({2, 3}, {2, 4}));
  EXPECT_FALSE(areCompatibleShapes({2}, {2, 1}));
}

TEST(ShapeMathTest, NormalizeDim) {
  EXPECT_EQ(normalizeDim(0, 3), 0);
  EXPECT_EQ(normalizeDim(2, 3), 2);
  EXPECT_EQ(normalizeDim(-1, 3), 2);
  EXPECT_EQ(normalizeDim(-3, 3), 0);
  EXPECT_EQ(normalizeDim(3, 3), -1);
  EXPECT_EQ(normalizeDim(-4, 3), -1);
  EXPECT_EQ(normalizeDim(0, 1), 0);
  EXPECT_EQ(normalizeDim(-1, 1), 0);
  EXPECT_EQ(normalizeDim(0, 0), -1);
  EXPECT_EQ(normalizeDim(-1, 0), -1);
  EXPECT_EQ(normalizeDim(D, 4), -1);
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

TEST(ShapeMathTest, BroadcastStatic) {
  EXPECT_TRUE(hasShape(broadcastShapes({2, 3}, {2, 3}), {2, 3}));
  EXPECT_TRUE(hasShape(broadcastShapes({2, 3}, {3}), {2, 3}));
  EXPECT_TRUE(hasShape(broadcastShapes({4, 1, 5}, {3, 1}), {4, 3, 5}));
  EXPECT_TRUE(hasShape(broadcastShapes({}, {2, 3}), {2, 3}));
  EXPECT_TRUE(hasShape(broadcastShapes({}, {}), {}));
  EXPECT_TRUE(hasShape(broadcastShapes({1, 1}, {1}), {1, 1}));
}

TEST(ShapeMathTest, BroadcastZeroSize) {
  EXPECT_TRUE(hasShape(broadcastShapes({0, 3}, {1, 3}), {0, 3}));
  EXPECT_TRUE(hasShape(broadcastShapes({0}, {1}), {0}));
  EXPECT_TRUE(hasShape(broadcastShapes({2, 0}, {0}), {2, 0}));
  EXPECT_TRUE(failsWith(broadcastShapes({0}, {3}), {"dim 0", "0 and 3"}));
}

TEST(ShapeMathTest, BroadcastDynamic) {
  EXPECT_TRUE(hasShape(broadcastShapes({D}, {1}), {D}));
  EXPECT_TRUE(hasShape(broadcastShapes({1}, {D}), {D}));
  EXPECT_TRUE(hasShape(broadcastShapes({D}, {4}), {4}));
  EXPECT_TRUE(hasShape(broadcastShapes({4}, {D}), {4}));
  EXPECT_TRUE(hasShape(broadcastShapes({D}, {D}), {D}));
  EXPECT_TRUE(hasShape(broadcastShapes({D}, {0}), {0}));
  EXPECT_TRUE(hasShape(broadcastShapes({D, 1}, {3}), {D, 3}));
  EXPECT_TRUE(hasShape(broadcastShapes({D}, {2, 5}), {2, 5}));
  EXPECT_TRUE(hasShape(broadcastShapes({D, 1, 4}, {1, D, 4}), {D, D, 4}));
}

TEST(ShapeMathTest, BroadcastErrors) {
  EXPECT_TRUE(failsWith(broadcastShapes({2, 3}, {2, 4}),
                        {"dim 1 of the operands is 3 and 4", "[2, 3]", "[2, 4]"}));
  EXPECT_TRUE(failsWith(broadcastShapes({5, 3}, {4, 3}), {"dim 0", "5 and 4"}));
  // Ranks differ: the dim is counted in the (right-aligned) result.
  EXPECT_TRUE(failsWith(broadcastShapes({2, 3, 4}, {5, 4}), {"dim 1", "3 and 5"}));
}

TEST(ShapeMathTest, BroadcastIsSymmetric) {
  const std::vector<std::pair<Shape, Shape>> pairs = {
      {{2, 3}, {3}}, {{D, 1}, {1, 4}}, {{D}, {1}}, {{0, 1}, {1, 7}}, {{}, {D, 2}}, {{2}, {3}}};
  for (const auto &[a, b] : pairs) {
    ShapeResult ab = broadcastShapes(a, b), ba = broadcastShapes(b, a);
    EXPECT_EQ(ab.ok(), ba.ok()) << formatShape(a) << " vs " << formatShape(b);
    EXPECT_EQ(ab.shape, ba.shape) << formatShape(a) << " vs " << formatShape(b);
  }
}

TEST(ShapeMathTest, BroadcastInDim) {
  EXPECT_EQ(checkBroadcastInDim({3}, {2, 3}, {1}), "");
  EXPECT_EQ(checkBroadcastInDim({1, 3}, {2, 4, 3}, {0, 2}), "");
  EXPECT_EQ(checkBroadcastInDim({}, {2, 3}, {}), "");
  EXPECT_EQ(checkBroadcastInDim({2, 3}, {2, 3}, {0, 1}), "");
  EXPECT_EQ(checkBroadcastInDim({0}, {2, 0}, {1}), "");
  EXPECT_EQ(checkBroadcastInDim({1}, {2, 0}, {1}), "");
  // Dynamic against anything passes here (checked at runtime).
  EXPECT_EQ(checkBroadcastInDim({D}, {5}, {0}), "");
  EXPECT_EQ(checkBroadcastInDim({5}, {D}, {0}), "");
  EXPECT_EQ(checkBroadcastInDim({1}, {D}, {0}), "");
}

TEST(ShapeMathTest, BroadcastInDimErrors) {
  EXPECT_TRUE(errorMentions(checkBroadcastInDim({3}, {2, 3}, {0, 1}), {"2 entries", "rank 1"}));
  EXPECT_TRUE(errorMentions(checkBroadcastInDim({3}, {3}, {1}),
                            {"operand dim 0", "result dim 1", "out of range", "rank 1"}));
  EXPECT_TRUE(errorMentions(checkBroadcastInDim({3}, {3}, {-1}), {"result dim -1"}));
  EXPECT_TRUE(errorMentions(checkBroadcastInDim({2, 3}, {3, 2}, {1, 0}),
                            {"not strictly increasing", "operand dim 1", "result dim 0"}));
  EXPECT_TRUE(
      errorMentions(checkBroadcastInDim({1, 1}, {2, 3}, {1, 1}), {"not strictly increasing"}));
  EXPECT_TRUE(errorMentions(checkBroadcastInDim({3}, {2, 4}, {1}),
                            {"operand dim 0 has size 3", "result dim 1 of size 4"}));
}

TEST(ShapeMathTest, Expand) {
  EXPECT_EQ(checkExpand({3}, {2, 3}), "");
  EXPECT_EQ(checkExpand({1, 3}, {4, 3}), "");
  EXPECT_EQ(checkExpand({1}, {0}), "");
  EXPECT_EQ(checkExpand({}, {2, 2}), "");
  EXPECT_EQ(checkExpand({1, 1}, {1, 1}), "");
  EXPECT_EQ(checkExpand({0, 2}, {3, 0, 2}), "");
  EXPECT_EQ(checkExpand({D, 3}, {5, 3}), "");
  EXPECT_EQ(checkExpand({3}, {D}), "");
  EXPECT_EQ(checkExpand({1}, {D, D}), "");
}

TEST(ShapeMathTest, ExpandErrors) {
  EXPECT_TRUE(errorMentions(checkExpand({2, 3}, {3}), {"result rank 1", "operand rank 2"}));
  EXPECT_TRUE(errorMentions(checkExpand({3}, {4}),
                            {"operand dim 0 of size 3", "size 4", "result dim 0"}));
  EXPECT_TRUE(errorMentions(checkExpand({2}, {2, 3}),
                            {"operand dim 0 of size 2", "size 3", "result dim 1"}));
  EXPECT_TRUE(errorMentions(checkExpand({0}, {2}), {"size 0", "size 2"}));
  EXPECT_TRUE(errorMentions(checkExpand({1, 3}, {4, -1}), {"result dim 1 is -1"}));
}

//===----------------------------------------------------------------------===//
// Reductions and matmul
//===----------------------------------------------------------------------===//

TEST(ShapeMathTest, Reduce) {
  EXPECT_TRUE(hasShape(reduceShape({2, 3, 4}, {1}, false), {2, 4}));
  EXPECT_TRUE(hasShape(reduceShape({2, 3, 4}, {1}, true), {2, 1, 4}));
  EXPECT_TRUE(hasShape(reduceShape({2, 3, 4}, {-1}, false), {2, 3}));
  EXPECT_TRUE(hasShape(reduceShape({2, 3, 4}, {0, 2}, false), {3}));
  EXPECT_TRUE(hasShape(reduceShape({2, 3, 4}, {2, -3}, true), {1, 3, 1}));
  EXPECT_TRUE(hasShape(reduceShape({2, 3, 4}, {}, false), {}));
  EXPECT_TRUE(hasShape(reduceShape({2, 3, 4}, {}, true), {1, 1, 1}));
  EXPECT_TRUE(hasShape(reduceShape({0, 3}, {0}, false), {3}));
  EXPECT_TRUE(hasShape(reduceShape({1}, {0}, false), {}));
}

TEST(ShapeMathTest, ReduceDynamic) {
  EXPECT_TRUE(hasShape(reduceShape({D, 3}, {1}, false), {D}));
  EXPECT_TRUE(hasShape(reduceShape({D, 3}, {0}, true), {1, 3}));
  EXPECT_TRUE(hasShape(reduceShape({D, D}, {-1}, true), {D, 1}));
}

TEST(ShapeMathTest, ReduceRankZero) {
  // torch.zeros(()).sum(0) and .sum(-1) are both rank 0; .sum(1) is an error.
  EXPECT_TRUE(hasShape(reduceShape({}, {}, false), {}));
  EXPECT_TRUE(hasShape(reduceShape({}, {0}, false), {}));
  EXPECT_TRUE(hasShape(reduceShape({}, {-1}, true), {}));
  EXPECT_TRUE(failsWith(reduceShape({}, {1}, false), {"reduction dim 1", "rank-0"}));
}

TEST(ShapeMathTest, ReduceErrors) {
  EXPECT_TRUE(failsWith(reduceShape({2, 3}, {3}, false), {"reduction dim 3", "rank 2", "[-2, 1]"}));
  EXPECT_TRUE(failsWith(reduceShape({2, 3}, {-3}, false), {"reduction dim -3", "rank 2"}));
  EXPECT_TRUE(failsWith(reduceShape({2, 3, 4}, {1, -2}, false), {"1 and -2", "dim 1"}));
  EXPECT_TRUE(failsWith(reduceShape({2, 3, 4}, {0, 0}, true), {"0 and 0", "dim 0"}));
}

TEST(ShapeMathTest, Matmul) {
  EXPECT_TRUE(hasShape(matmulShape({2, 3}, {3, 4}, false, false), {2, 4}));
  EXPECT_TRUE(hasShape(matmulShape({5, 2, 3}, {5, 3, 4}, false, false), {5, 2, 4}));
  EXPECT_TRUE(hasShape(matmulShape({5, 6, 2, 3}, {3, 4}, false, false), {5, 6, 2, 4}));
  EXPECT_TRUE(hasShape(matmulShape({3, 2}, {3, 4}, true, false), {2, 4}));
  EXPECT_TRUE(hasShape(matmulShape({2, 3}, {4, 3}, false, true), {2, 4}));
  EXPECT_TRUE(hasShape(matmulShape({7, 3, 2}, {7, 4, 3}, true, true), {7, 2, 4}));
  EXPECT_TRUE(hasShape(matmulShape({1, 1}, {1, 1}, false, false), {1, 1}));
}

TEST(ShapeMathTest, MatmulZeroSize) {
  EXPECT_TRUE(hasShape(matmulShape({0, 3}, {3, 4}, false, false), {0, 4}));
  EXPECT_TRUE(hasShape(matmulShape({2, 0}, {0, 4}, false, false), {2, 4}));
  EXPECT_TRUE(hasShape(matmulShape({0, 2, 3}, {0, 3, 4}, false, false), {0, 2, 4}));
}

TEST(ShapeMathTest, MatmulDynamic) {
  EXPECT_TRUE(hasShape(matmulShape({D, 3}, {D, 4}, false, false), {D, 4}));
  EXPECT_TRUE(hasShape(matmulShape({2, D}, {3, 4}, false, false), {2, 4}));
  EXPECT_TRUE(hasShape(matmulShape({D, 2, 3}, {D, 3, D}, false, false), {D, 2, D}));
  // A batch dim dynamic in lhs but static in rhs takes the static size.
  EXPECT_TRUE(hasShape(matmulShape({D, 2, 3}, {5, 3, 4}, false, false), {5, 2, 4}));
  EXPECT_TRUE(hasShape(matmulShape({5, 2, 3}, {D, 3, 4}, false, false), {5, 2, 4}));
}

TEST(ShapeMathTest, MatmulErrors) {
  EXPECT_TRUE(failsWith(matmulShape({3}, {3, 4}, false, false), {"lhs [3]", "rank 1"}));
  EXPECT_TRUE(failsWith(matmulShape({2, 3}, {3}, false, false), {"rhs [3]", "rank 1"}));
  EXPECT_TRUE(failsWith(matmulShape({1, 2, 2, 3}, {2, 3, 4}, false, false),
                        {"rank 3", "rank 2 or the lhs rank 4"}));
  EXPECT_TRUE(failsWith(matmulShape({5, 2, 3}, {6, 3, 4}, false, false),
                        {"batch dim 0", "5 in lhs", "6 in rhs"}));
  EXPECT_TRUE(failsWith(matmulShape({2, 3}, {4, 5}, false, false),
                        {"contraction", "3 in lhs [2, 3]", "4 in rhs [4, 5]"}));
  EXPECT_TRUE(failsWith(matmulShape({2, 3}, {3, 4}, true, false),
                        {"2 in lhs [2, 3] (transposed)", "3 in rhs"}));
  EXPECT_TRUE(failsWith(matmulShape({2, 3}, {3, 4}, false, true),
                        {"3 in lhs", "4 in rhs [3, 4] (transposed)"}));
}

//===----------------------------------------------------------------------===//
// Windows: convolution and pooling
//===----------------------------------------------------------------------===//

TEST(ShapeMathTest, WindowOutputSize) {
  EXPECT_EQ(windowOutputSize(32, 3, 1, 1, 1, 1, false), 32);
  EXPECT_EQ(windowOutputSize(7, 3, 2, 1, 1, 1, false), 4);
  EXPECT_EQ(windowOutputSize(10, 3, 1, 0, 0, 2, false), 6);
  EXPECT_EQ(windowOutputSize(3, 3, 1, 0, 0, 1, false), 1);
  EXPECT_EQ(windowOutputSize(1, 1, 5, 0, 0, 1, false), 1);
  // Ceil mode keeps a partial last window...
  EXPECT_EQ(windowOutputSize(6, 3, 2, 0, 0, 1, false), 2);
  EXPECT_EQ(windowOutputSize(6, 3, 2, 0, 0, 1, true), 3);
  // ...unless it would start in the right padding (PyTorch drops it: 2, not 3).
  EXPECT_EQ(windowOutputSize(5, 2, 3, 1, 1, 1, true), 2);
  EXPECT_EQ(windowOutputSize(D, 3, 1, 1, 1, 1, false), kDynamic);
  EXPECT_EQ(windowOutputSize(8, D, 1, 1, 1, 1, true), kDynamic);
}

TEST(ShapeMathTest, WindowOutputSizeDoesNotFit) {
  EXPECT_LT(windowOutputSize(2, 3, 1, 0, 0, 1, false), 1);
  EXPECT_LT(windowOutputSize(2, 3, 1, 0, 0, 1, true), 1);
  EXPECT_LT(windowOutputSize(0, 1, 1, 0, 0, 1, false), 1);
  EXPECT_LT(windowOutputSize(5, 3, 1, 0, 0, 3, false), 1);
  // Invalid parameters give a non-positive size instead of dividing by zero.
  EXPECT_LT(windowOutputSize(5, 3, 0, 0, 0, 1, false), 1);
  EXPECT_LT(windowOutputSize(5, 3, 1, 0, 0, 0, false), 1);
  EXPECT_LT(windowOutputSize(5, 0, 1, 0, 0, 1, false), 1);
}

/// Counts windows by placing them one by one: the definition the closed form must match.
static int64_t countWindows(int64_t in, int64_t kernel, int64_t stride, int64_t lo, int64_t hi,
                            int64_t dilation, bool ceilMode) {
  int64_t extent = dilation * (kernel - 1) + 1, padded = in + lo + hi, count = 0;
  for (int64_t start = 0; start < padded; start += stride) {
    bool fits = start + extent <= padded;
    // Ceil mode also takes a partial window, if it starts inside the input or left padding
    // and the previous window did not already reach the end.
    bool partial = ceilMode && start < in + lo && start - stride + extent < padded;
    if (fits || partial)
      ++count;
  }
  return count;
}

TEST(ShapeMathTest, WindowOutputSizeMatchesEnumeration) {
  for (int64_t in = 1; in <= 12; ++in)
    for (int64_t kernel = 1; kernel <= 4; ++kernel)
      for (int64_t stride = 1; stride <= 4; ++stride)
        for (int64_t dilation = 1; dilation <= 2; ++dilation)
          for (int64_t lo = 0; lo <= kernel / 2; ++lo)
            for (int64_t hi = 0; hi <= kernel / 2; ++hi)
              for (bool ceilMode : {false, true}) {
                int64_t expected = countWindows(in, kernel, stride, lo, hi, dilation, ceilMode);
                int64_t got = windowOutputSize(in, kernel, stride, lo, hi, dilation, ceilMode);
                if (expected == 0)
                  EXPECT_LT(got, 1);
                else
                  EXPECT_EQ(got, expected)
                      << "in=" << in << " k=" << kernel << " s=" << stride << " pad=" << lo
                      << "+" << hi << " d=" << dilation << " ceil=" << ceilMode;
              }
}

namespace {
struct ConvCase {
  Shape input, weight;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups;
  Shape expected;
};
} // namespace

TEST(ShapeMathTest, ConvMatchesPyTorch) {
  // Produced with torch 2.13 (F.conv1d/conv2d/conv3d on zeros, printing y.shape); the
  // asymmetric-padding row applies F.pad first and convolves with padding=0.
  const ConvCase cases[] = {
      {{1, 3, 32, 32}, {16, 3, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, {1, 16, 32, 32}},
      {{2, 4, 15, 17}, {8, 4, 3, 5}, {2, 3}, {1, 1, 2, 2}, {1, 2}, 1, {2, 8, 8, 5}},
      {{1, 8, 10, 10}, {8, 2, 3, 3}, {1, 1}, {0, 0, 0, 0}, {2, 2}, 4, {1, 8, 6, 6}},
      {{1, 6, 7, 7}, {12, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 6, {1, 12, 4, 4}},
      {{4, 3, 100}, {5, 3, 7}, {3}, {2, 2}, {2}, 1, {4, 5, 31}},
      {{1, 2, 8, 9, 10}, {4, 2, 3, 3, 3}, {1, 2, 3}, {1, 1, 0, 0, 2, 2}, {1, 1, 2}, 1,
       {1, 4, 8, 4, 4}},
      {{1, 3, 9, 9}, {2, 3, 3, 3}, {2, 2}, {0, 1, 2, 0}, {1, 1}, 1, {1, 2, 4, 5}},
      {{0, 3, 5, 5}, {4, 3, 5, 5}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, {0, 4, 1, 1}},
      {{3, 3, 1, 1}, {4, 3, 1, 1}, {4, 4}, {0, 0, 0, 0}, {1, 1}, 1, {3, 4, 1, 1}},
  };
  for (const ConvCase &c : cases)
    EXPECT_TRUE(hasShape(convShape(c.input, c.weight, c.stride, c.padding, c.dilation, c.groups),
                         c.expected))
        << "input " << formatShape(c.input) << " weight " << formatShape(c.weight);
}

TEST(ShapeMathTest, ConvDynamic) {
  EXPECT_TRUE(hasShape(convShape({D, 3, 8, 8}, {4, 3, 3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1),
                       {D, 4, 6, 6}));
  EXPECT_TRUE(hasShape(convShape({1, 3, D, 8}, {4, 3, 3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1),
                       {1, 4, D, 6}));
  EXPECT_TRUE(hasShape(convShape({1, D, 8}, {4, 2, 3}, {1}, {0, 0}, {1}, 2), {1, 4, 6}));
  EXPECT_TRUE(hasShape(convShape({1, 4, 8}, {D, 2, D}, {1}, {0, 0}, {1}, 2), {1, D, D}));
}

TEST(ShapeMathTest, ConvErrors) {
  const std::vector<int64_t> s1 = {1, 1}, p0 = {0, 0, 0, 0}, d1 = {1, 1};
  EXPECT_TRUE(failsWith(convShape({3, 8}, {4, 3}, {}, {}, {}, 1), {"[3, 8]", "rank 2"}));
  EXPECT_TRUE(failsWith(convShape({1, 1, 2, 2, 2, 2}, {1, 1, 1, 1, 1, 1}, {}, {}, {}, 1),
                        {"rank 6"}));
  EXPECT_TRUE(failsWith(convShape({1, 3, 8, 8}, {4, 3, 3}, s1, p0, d1, 1),
                        {"weight [4, 3, 3]", "rank 3", "input rank 4"}));
  EXPECT_TRUE(failsWith(convShape({1, 3, 8, 8}, {4, 3, 3, 3}, {1}, p0, d1, 1),
                        {"stride has 1 entry", "2 spatial dims"}));
  EXPECT_TRUE(failsWith(convShape({1, 3, 8, 8}, {4, 3, 3, 3}, s1, p0, {1, 1, 1}, 1),
                        {"dilation has 3 entries"}));
  EXPECT_TRUE(failsWith(convShape({1, 3, 8, 8}, {4, 3, 3, 3}, s1, {1, 1}, d1, 1),
                        {"padding has 2 entries", "need 4"}));
  EXPECT_TRUE(failsWith(convShape({1, 3, 8, 8}, {4, 3, 3, 3}, s1, p0, d1, 0), {"groups is 0"}));
  EXPECT_TRUE(failsWith(convShape({1, 6, 8, 8}, {4, 1, 3, 3}, s1, p0, d1, 4),
                        {"6 channels", "groups = 4"}));
  EXPECT_TRUE(failsWith(convShape({1, 4, 8, 8}, {6, 1, 3, 3}, s1, p0, d1, 4),
                        {"6 output channels", "groups = 4"}));
  EXPECT_TRUE(failsWith(convShape({1, 6, 8, 8}, {4, 4, 3, 3}, s1, p0, d1, 2),
                        {"weight dim 1 is 4", "6 / 2 = 3"}));
  EXPECT_TRUE(failsWith(convShape({1, 3, 8, 8}, {4, 3, 3, 3}, {1, 0}, p0, d1, 1),
                        {"stride is 0 for spatial dim 1"}));
  EXPECT_TRUE(failsWith(convShape({1, 3, 8, 8}, {4, 3, 3, 3}, s1, p0, {-1, 1}, 1),
                        {"dilation is -1 for spatial dim 0"}));
  EXPECT_TRUE(failsWith(convShape({1, 3, 8, 8}, {4, 3, 3, 3}, s1, {0, -1, 0, 0}, d1, 1),
                        {"padding is -1 on the high side of spatial dim 0"}));
  EXPECT_TRUE(failsWith(convShape({1, 3, 8, 8}, {4, 3, 3, 0}, s1, p0, d1, 1),
                        {"kernel size is 0 in spatial dim 1"}));
  // torch: "Kernel size can't be greater than actual input size".
  EXPECT_TRUE(failsWith(convShape({1, 3, 8, 2}, {4, 3, 3, 3}, s1, p0, d1, 1),
                        {"spatial dim 1 (input dim 3) of size 2", "kernel size 3",
                         "output size 0"}));
}

namespace {
struct PoolCase {
  Shape input;
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceilMode;
  Shape expected;
};
} // namespace

TEST(ShapeMathTest, PoolMatchesPyTorch) {
  // Produced with torch 2.13: F.max_pool{1,2,3}d(zeros(input), kernel, stride, padding,
  // dilation, ceil_mode).shape (PyTorch's padding is symmetric, so lo == hi here).
  const PoolCase cases[] = {
      {{1, 3, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, {1, 3, 4, 4}},
      {{1, 3, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true, {1, 3, 4, 4}},
      {{1, 1, 6, 6}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false, {1, 1, 2, 2}},
      {{1, 1, 6, 6}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true, {1, 1, 3, 3}},
      {{1, 1, 5, 5}, {2, 2}, {3, 3}, {1, 1, 1, 1}, {1, 1}, true, {1, 1, 2, 2}},
      {{1, 1, 5, 5}, {2, 2}, {3, 3}, {1, 1, 1, 1}, {1, 1}, false, {1, 1, 2, 2}},
      {{3, 8, 9}, {2, 3}, {2, 2}, {1, 1, 0, 0}, {2, 1}, true, {3, 5, 4}},
      {{2, 4, 10}, {3}, {3}, {1, 1}, {1}, true, {2, 4, 4}},
      {{2, 4, 10}, {3}, {3}, {0, 0}, {1}, true, {2, 4, 4}},
      {{2, 4, 10}, {3}, {3}, {0, 0}, {1}, false, {2, 4, 3}},
      {{1, 2, 5, 6, 7}, {2, 2, 3}, {2, 1, 2}, {1, 1, 0, 0, 1, 1}, {1, 1, 1}, true, {1, 2, 3, 5, 4}},
      {{1, 2, 5, 6, 7}, {2, 2, 3}, {2, 1, 2}, {1, 1, 0, 0, 1, 1}, {1, 1, 1}, false,
       {1, 2, 3, 5, 4}},
      {{1, 1, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, true, {1, 1, 1, 1}},
      // Ceil mode keeps one window even though the 3-wide kernel overhangs the 2-wide input.
      {{1, 1, 2, 2}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true, {1, 1, 1, 1}},
      {{1, 64, 112, 112}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, {1, 64, 56, 56}},
  };
  for (const PoolCase &c : cases)
    EXPECT_TRUE(hasShape(poolShape(c.input, c.kernel, c.stride, c.padding, c.dilation, c.ceilMode),
                         c.expected))
        << "input " << formatShape(c.input) << " ceil " << c.ceilMode;
}

TEST(ShapeMathTest, PoolDynamicAndZeroSize) {
  EXPECT_TRUE(hasShape(poolShape({D, 3, D, 8}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false),
                       {D, 3, D, 4}));
  EXPECT_TRUE(hasShape(poolShape({0, 3, 4, 4}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false),
                       {0, 3, 2, 2}));
  EXPECT_TRUE(hasShape(poolShape({5, 4}, {4}, {1}, {0, 0}, {1}, false), {5, 1}));
}

TEST(ShapeMathTest, PoolErrors) {
  EXPECT_TRUE(failsWith(poolShape({1, 4}, {}, {}, {}, {}, false), {"kernel is empty"}));
  EXPECT_TRUE(failsWith(poolShape({7, 7}, {3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false),
                        {"[7, 7]", "rank 2", "rank >= 3"}));
  EXPECT_TRUE(failsWith(poolShape({1, 7, 7}, {3, 3}, {1}, {0, 0, 0, 0}, {1, 1}, false),
                        {"stride has 1 entry", "2 window dims"}));
  EXPECT_TRUE(failsWith(poolShape({1, 7, 7}, {3, 3}, {1, 1}, {0, 0}, {1, 1}, false),
                        {"padding has 2 entries"}));
  EXPECT_TRUE(failsWith(poolShape({1, 7, 7}, {3, 0}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false),
                        {"kernel size is 0 in window dim 1"}));
  EXPECT_TRUE(failsWith(poolShape({1, 7, 7}, {3, 3}, {1, -2}, {0, 0, 0, 0}, {1, 1}, false),
                        {"stride is -2 for window dim 1"}));
  // torch: "pad should be smaller than or equal to half of kernel size" (dilation ignored).
  EXPECT_TRUE(failsWith(poolShape({1, 7, 7}, {3, 3}, {1, 1}, {2, 0, 0, 0}, {1, 1}, false),
                        {"padding 2 on the low side of window dim 0", "kernel size 3"}));
  EXPECT_TRUE(failsWith(poolShape({1, 9, 9}, {3, 3}, {1, 1}, {2, 2, 0, 0}, {2, 2}, false),
                        {"padding 2 on the low side of window dim 0"}));
  EXPECT_TRUE(failsWith(poolShape({1, 7, 7}, {3, 4}, {1, 1}, {0, 0, 0, 3}, {1, 1}, false),
                        {"padding 3 on the high side of window dim 1", "kernel size 4"}));
  EXPECT_TRUE(failsWith(poolShape({1, 1, 2, 2}, {3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, true),
                        {"window dim 0 (input dim 2) of size 2", "output size 0"}));
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST(ShapeMathTest, Reshape) {
  EXPECT_TRUE(hasShape(reshapeShape({2, 3}, {3, 2}), {3, 2}));
  EXPECT_TRUE(hasShape(reshapeShape({2, 3}, {6}), {6}));
  EXPECT_TRUE(hasShape(reshapeShape({2, 3, 4}, {-1, 4}), {6, 4}));
  EXPECT_TRUE(hasShape(reshapeShape({2, 3, 4}, {2, -1}), {2, 12}));
  EXPECT_TRUE(hasShape(reshapeShape({2, 3, 4}, {-1}), {24}));
  EXPECT_TRUE(hasShape(reshapeShape({}, {1, 1}), {1, 1}));
  EXPECT_TRUE(hasShape(reshapeShape({1}, {}), {}));
  EXPECT_TRUE(hasShape(reshapeShape({}, {-1}), {1}));
  EXPECT_TRUE(hasShape(reshapeShape({0, 3}, {0, 5}), {0, 5}));
  EXPECT_TRUE(hasShape(reshapeShape({0, 3}, {3, -1}), {3, 0}));
}

TEST(ShapeMathTest, ReshapeDynamic) {
  EXPECT_TRUE(hasShape(reshapeShape({D, 4}, {-1, 2}), {D, 2}));
  EXPECT_TRUE(hasShape(reshapeShape({D, 4}, {2, D}), {2, D}));
  EXPECT_TRUE(hasShape(reshapeShape({6}, {D, -1}), {D, D}));
  EXPECT_TRUE(hasShape(reshapeShape({2, 3}, {D, 3}), {D, 3}));
  // A dynamic input cannot be checked against a static target here.
  EXPECT_TRUE(hasShape(reshapeShape({D}, {7, 3}), {7, 3}));
}

TEST(ShapeMathTest, ReshapeErrors) {
  EXPECT_TRUE(failsWith(reshapeShape({2, 3}, {4, 2}), {"[2, 3]", "6 elements", "[4, 2]", "8"}));
  EXPECT_TRUE(failsWith(reshapeShape({2, 3}, {}), {"6 elements", "[]", "has 1"}));
  EXPECT_TRUE(failsWith(reshapeShape({2, 3}, {4, -1}), {"6 elements", "not a multiple of 4"}));
  EXPECT_TRUE(failsWith(reshapeShape({2, 3}, {-1, -1}), {"target dims 0 and 1", "both -1"}));
  EXPECT_TRUE(failsWith(reshapeShape({2, 3}, {2, -3}), {"target dim 1 is -3"}));
  // torch: "cannot reshape tensor of 0 elements into shape [0, -1] ... ambiguous".
  EXPECT_TRUE(failsWith(reshapeShape({0, 3}, {0, -1}), {"ambiguous", "[0, -1]"}));
  EXPECT_TRUE(failsWith(reshapeShape({2, 3}, {0, -1}), {"6 elements", "[0, -1]"}));
}

TEST(ShapeMathTest, Permute) {
  EXPECT_TRUE(hasShape(permuteShape({2, 3, 4}, {2, 0, 1}), {4, 2, 3}));
  EXPECT_TRUE(hasShape(permuteShape({2, 3, 4}, {0, 1, 2}), {2, 3, 4}));
  EXPECT_TRUE(hasShape(permuteShape({}, {}), {}));
  EXPECT_TRUE(hasShape(permuteShape({D, 3}, {1, 0}), {3, D}));
  EXPECT_TRUE(hasShape(permuteShape({0, 1}, {1, 0}), {1, 0}));
}

TEST(ShapeMathTest, PermuteErrors) {
  EXPECT_TRUE(failsWith(permuteShape({2, 3, 4}, {1, 0}), {"[1, 0]", "2 entries", "rank 3"}));
  EXPECT_TRUE(failsWith(permuteShape({2, 3, 4}, {0, 3, 1}), {"entry 1", "is 3", "[0, 3)"}));
  EXPECT_TRUE(failsWith(permuteShape({2, 3, 4}, {-1, 0, 1}), {"entry 0", "is -1"}));
  EXPECT_TRUE(failsWith(permuteShape({2, 3, 4}, {0, 2, 0}), {"entry 2", "repeats dim 0"}));
}

TEST(ShapeMathTest, SliceMatchesPython) {
  // {size, start, end, step, len(range(size)[start:end:step])}, computed with Python 3 (random
  // draws from a grid, plus a few hand-picked rows at the end).
  const int64_t cases[][5] = {
      {0, -3, -12, 10, 0}, {0, -3, 10, 10, 0},   {0, -3, kMax, 3, 0},  {0, 2, -12, 10, 0},
      {0, 2, 0, 10, 0},    {0, 2, 8, 4, 0},      {0, 4, 10, 3, 0},     {0, 12, -12, 3, 0},
      {0, 12, 8, 1, 0},    {1, -12, -12, 4, 0},  {1, -12, 8, 10, 1},   {1, -1, -12, 10, 0},
      {1, -1, 3, 2, 1},    {1, 0, 3, 1, 1},      {1, 0, 10, 10, 1},    {1, 2, -12, 4, 0},
      {1, 4, -1, 4, 0},    {1, 4, kMax, 2, 0},   {5, -12, 3, 3, 1},    {5, -3, 3, 1, 1},
      {5, -1, 10, 3, 1},   {5, 2, -12, 1, 0},    {5, 2, -12, 10, 0},   {10, -12, -1, 1, 9},
      {10, -12, kMax, 10, 1}, {10, -3, kMax, 3, 1}, {10, -1, 0, 2, 0}, {10, -1, 10, 4, 1},
      {10, 2, kMax, 4, 2}, {10, 4, 10, 1, 6},    {10, 12, 0, 4, 0},    {10, 2, 8, 3, 2},
      {10, -3, -1, 1, 2},  {5, 0, kMax, 2, 3},   {10, 0, kMax, 3, 4},
  };
  for (const auto &c : cases)
    EXPECT_TRUE(hasShape(sliceShape({c[0]}, {c[1]}, {c[2]}, {c[3]}), {c[4]}))
        << "range(" << c[0] << ")[" << c[1] << ":" << c[2] << ":" << c[3] << "]";
}

TEST(ShapeMathTest, SliceMultiDimAndDynamic) {
  EXPECT_TRUE(hasShape(sliceShape({4, 6, 8}, {0, 1, -4}, {4, 5, kMax}, {2, 1, 3}), {2, 4, 2}));
  EXPECT_TRUE(hasShape(sliceShape({D, 5}, {0, 1}, {2, 3}, {1, 1}), {D, 2}));
  EXPECT_TRUE(hasShape(sliceShape({}, {}, {}, {}), {}));
  EXPECT_TRUE(hasShape(sliceShape({0, 3}, {0, 0}, {kMax, kMax}, {1, 1}), {0, 3}));
  // A huge step must not overflow.
  EXPECT_TRUE(hasShape(sliceShape({10}, {1}, {kMax}, {kMax}), {1}));
}

TEST(ShapeMathTest, SliceErrors) {
  EXPECT_TRUE(failsWith(sliceShape({4, 5}, {0}, {1, 1}, {1, 1}), {"start has 1 entry", "rank 2"}));
  EXPECT_TRUE(failsWith(sliceShape({4, 5}, {0, 0}, {1}, {1, 1}), {"end has 1 entry"}));
  EXPECT_TRUE(
      failsWith(sliceShape({4, 5}, {0, 0}, {1, 1}, {1, 1, 1}), {"step has 3 entries", "rank 2"}));
  EXPECT_TRUE(failsWith(sliceShape({4, 5}, {0, 0}, {1, 1}, {1, 0}), {"step is 0 for dim 1"}));
  EXPECT_TRUE(failsWith(sliceShape({4, D}, {0, 0}, {1, 1}, {-1, 1}), {"step is -1 for dim 0"}));
}

TEST(ShapeMathTest, Concat) {
  EXPECT_TRUE(hasShape(concatShape({{2, 3}, {4, 3}}, 0), {6, 3}));
  EXPECT_TRUE(hasShape(concatShape({{2, 3}, {2, 5}, {2, 1}}, -1), {2, 9}));
  EXPECT_TRUE(hasShape(concatShape({{2, 3}}, 1), {2, 3}));
  EXPECT_TRUE(hasShape(concatShape({{0, 3}, {2, 3}}, 0), {2, 3}));
  EXPECT_TRUE(hasShape(concatShape({{2, D}, {4, 3}}, 0), {6, 3}));
  EXPECT_TRUE(hasShape(concatShape({{2, 3}, {D, 3}}, 0), {D, 3}));
  EXPECT_TRUE(hasShape(concatShape({{D, 3}, {2, 4}}, 1), {2, 7}));
}

TEST(ShapeMathTest, ConcatErrors) {
  EXPECT_TRUE(failsWith(concatShape({}, 0), {"no inputs"}));
  EXPECT_TRUE(failsWith(concatShape({{}, {}}, 0), {"input 0 has rank 0"}));
  EXPECT_TRUE(failsWith(concatShape({{2, 3}, {2, 3}}, 2),
                        {"concatenation dim 2", "rank 2", "[-2, 1]"}));
  EXPECT_TRUE(failsWith(concatShape({{2, 3}, {2, 3}}, -3), {"concatenation dim -3"}));
  EXPECT_TRUE(failsWith(concatShape({{2, 3}, {2, 3, 1}}, 0), {"input 1 [2, 3, 1]", "rank 3"}));
  EXPECT_TRUE(failsWith(concatShape({{2, 3}, {2, 4}}, 0),
                        {"dim 1 is 3 in input 0 and 4 in input 1", "concatenation dim 0"}));
  // The message names the input that fixed the size, not just input 0.
  EXPECT_TRUE(failsWith(concatShape({{2, D}, {2, 4}, {2, 5}}, 0),
                        {"dim 1 is 4 in input 1 and 5 in input 2"}));
}

TEST(ShapeMathTest, Pad) {
  EXPECT_TRUE(hasShape(padShape({2, 3}, {1, 1, 0, 2}), {4, 5}));
  EXPECT_TRUE(hasShape(padShape({4, 5}, {-1, 0, 0, -2}), {3, 3}));
  EXPECT_TRUE(hasShape(padShape({2}, {-1, -1}), {0}));
  EXPECT_TRUE(hasShape(padShape({0}, {2, 1}), {3}));
  EXPECT_TRUE(hasShape(padShape({D, 1}, {1, 1, 0, 0}), {D, 1}));
  EXPECT_TRUE(hasShape(padShape({}, {}), {}));
}

TEST(ShapeMathTest, PadErrors) {
  EXPECT_TRUE(failsWith(padShape({2, 3}, {1, 1, 0}), {"3 entries", "rank 2", "needs 4"}));
  EXPECT_TRUE(failsWith(padShape({2, 3}, {0, 0, -2, -2}),
                        {"dim 1 of size 3", "-2 low", "-2 high", "size -1"}));
}

TEST(ShapeMathTest, IndexSelect) {
  EXPECT_TRUE(hasShape(indexSelectShape({3, 4}, 0, {5}), {5, 4}));
  EXPECT_TRUE(hasShape(indexSelectShape({3, 4}, -1, {5}), {3, 5}));
  EXPECT_TRUE(hasShape(indexSelectShape({3, 4}, 1, {0}), {3, 0}));
  EXPECT_TRUE(hasShape(indexSelectShape({3, D}, 0, {D}), {D, D}));
  // torch.index_select(x, 0, torch.tensor(1)).shape == [1, 4].
  EXPECT_TRUE(hasShape(indexSelectShape({3, 4}, 0, {}), {1, 4}));
}

TEST(ShapeMathTest, IndexSelectErrors) {
  EXPECT_TRUE(failsWith(indexSelectShape({3, 4}, 2, {5}), {"dim 2", "rank 2", "[-2, 1]"}));
  EXPECT_TRUE(failsWith(indexSelectShape({3, 4}, -3, {5}), {"dim -3"}));
  EXPECT_TRUE(failsWith(indexSelectShape({}, 0, {5}), {"dim 0", "rank 0"}));
  EXPECT_TRUE(failsWith(indexSelectShape({3, 4}, 0, {2, 2}), {"index [2, 2]", "rank 2"}));
}

TEST(ShapeMathTest, Embedding) {
  EXPECT_TRUE(hasShape(embeddingShape({10, 4}, {2, 3}), {2, 3, 4}));
  EXPECT_TRUE(hasShape(embeddingShape({10, 4}, {}), {4}));
  EXPECT_TRUE(hasShape(embeddingShape({D, 4}, {D}), {D, 4}));
  EXPECT_TRUE(hasShape(embeddingShape({10, 4}, {0, 7}), {0, 7, 4}));
}

TEST(ShapeMathTest, EmbeddingErrors) {
  EXPECT_TRUE(failsWith(embeddingShape({10}, {2}), {"weight [10]", "rank 1"}));
  EXPECT_TRUE(failsWith(embeddingShape({10, 4, 2}, {2}), {"rank 3"}));
}

// Attributes near the int64 limits give errors, never a wrapped-around size.
TEST(ShapeMathTest, PadOverflowIsAnError) {
  constexpr int64_t big = std::numeric_limits<int64_t>::max();
  ShapeResult r = padShape({2}, {big, big});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("overflows"), std::string::npos) << r.error;
}

TEST(ShapeMathTest, WindowOverflowGivesNoWrappedSize) {
  constexpr int64_t big = std::numeric_limits<int64_t>::max();
  // A dilated kernel far larger than any input: the window does not fit.
  EXPECT_LT(windowOutputSize(8, big / 2, 1, 0, 0, 4, false), 1);
  // Padding at the limit: no wrap to a small positive size.
  EXPECT_LT(windowOutputSize(8, 2, 1, big, big, 1, false), 1);
  EXPECT_EQ(windowOutputSize(8, 2, 2, 0, 0, 1, false), 4);
}
