// Tests of the C++ wrapper (thunder/Runtime/Model.h) on the fake add_one model.
#include "thunder/Runtime/Model.h"

#include "Contains.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

std::string addOnePath() { return std::string(THUNDER_TEST_MODELS_DIR) + "/libadd_one.so"; }

TEST(RuntimeModel, DescribesTheModel) {
  thunder::Model model(addOnePath());
  EXPECT_EQ(model.name(), "add_one");
  EXPECT_EQ(model.target(), "cpu");
  EXPECT_EQ(model.device(), THUNDER_DEVICE_CPU);
  ASSERT_EQ(model.numInputs(), 2);
  std::vector<thunder::TensorDesc> inputs = model.inputs();
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].name, "x");
  EXPECT_EQ(inputs[0].dtype, THUNDER_DTYPE_FLOAT32);
  EXPECT_EQ(inputs[0].shape, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(inputs[0].dimMin, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(inputs[0].dimMax, (std::vector<int64_t>{64, 4}));
  EXPECT_EQ(inputs[0].dimSymbols, (std::vector<std::string>{"s0", ""}));
  EXPECT_TRUE(inputs[0].isDynamic(0));
  EXPECT_FALSE(inputs[0].isDynamic(1));
  EXPECT_EQ(model.output(1).name, "y_times_two");
  EXPECT_THROW(model.input(2), std::out_of_range);
}

TEST(RuntimeModel, RunsAndReusesAContext) {
  thunder::Model model(addOnePath());
  thunder::Context context(model);
  for (int64_t n : {2, 7}) {
    std::vector<float> x(4 * n, 0.25f);
    std::vector<int64_t> y(n, 21);
    std::vector<thunder::TensorView> inputs = {thunder::TensorView(x.data(), {n, 4}),
                                               thunder::TensorView(y.data(), {n})};
    EXPECT_EQ(inputs[1].dtype, THUNDER_DTYPE_INT64); // deduced from the element type
    std::vector<std::vector<int64_t>> shapes = model.outputShapes(inputs);
    ASSERT_EQ(shapes, (std::vector<std::vector<int64_t>>{{n, 4}, {n}}));

    std::vector<float> a(4 * n);
    std::vector<int64_t> b(n);
    std::vector<thunder::TensorView> outputs = {thunder::TensorView(a.data(), shapes[0]),
                                                thunder::TensorView(b.data(), shapes[1])};
    EXPECT_EQ(outputs[0].numBytes(), sizeof(float) * 4 * n);
    model.run(inputs, outputs);
    EXPECT_EQ(a, std::vector<float>(4 * n, 1.25f));
    EXPECT_EQ(b, std::vector<int64_t>(n, 42));

    std::fill(a.begin(), a.end(), 0.0f);
    context.run(inputs, outputs);
    EXPECT_EQ(a, std::vector<float>(4 * n, 1.25f));
  }
}

TEST(RuntimeModel, ErrorsCarryStatusAndMessage) {
  try {
    thunder::Model model(std::string(THUNDER_TEST_MODELS_DIR) + "/libabi999.so");
    FAIL() << "loaded a model of ABI version 999";
  } catch (const thunder::Error &error) {
    EXPECT_EQ(error.status(), THUNDER_ERROR_VERSION);
    EXPECT_TRUE(contains(error.what(), "ABI version 999"));
  }

  thunder::Model model(addOnePath());
  std::vector<float> x(8);
  std::vector<int32_t> y(2);
  std::vector<thunder::TensorView> inputs = {thunder::TensorView(x.data(), {2, 4}),
                                             thunder::TensorView(y.data(), {2})};
  try {
    model.outputShapes(inputs);
    FAIL() << "accepted an int32 input for int64";
  } catch (const thunder::Error &error) {
    EXPECT_EQ(error.status(), THUNDER_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(error.what(), "input 1 ('y'): expected dtype int64, got int32");
  }
}

TEST(RuntimeModel, Moves) {
  thunder::Model model(addOnePath());
  thunder_model *handle = model.get();
  thunder::Model moved(std::move(model));
  EXPECT_EQ(moved.get(), handle);
  EXPECT_EQ(model.get(), nullptr); // NOLINT(bugprone-use-after-move): documented state
  thunder::Model other(addOnePath());
  other = std::move(moved);
  EXPECT_EQ(other.get(), handle);
  EXPECT_EQ(other.name(), "add_one");
}

} // namespace
