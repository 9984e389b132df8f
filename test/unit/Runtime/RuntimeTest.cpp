// Tests of the runtime's C API on fake compiled models (test/unit/Runtime/Inputs): loading and
// its errors, every validation message, output shapes, workspaces, devices, threads.
#include "thunder-c/runtime.h"
#include "thunder/Support/TypePromotion.h"

#include "Contains.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <stdlib.h>

#include <atomic>
#include <regex>
#include <string>
#include <thread>
#include <vector>


namespace {

std::string modelPath(const std::string &name) {
  return std::string(THUNDER_TEST_MODELS_DIR) + "/lib" + name + ".so";
}

std::string realPath(const std::string &path) {
  char *real = realpath(path.c_str(), nullptr);
  std::string result = real ? real : path;
  free(real);
  return result;
}

/// Loads a model or fails the test.
thunder_model *load(const std::string &name) {
  thunder_model *model = nullptr;
  thunder_status status = thunder_model_load(modelPath(name).c_str(), &model);
  EXPECT_EQ(status, THUNDER_OK) << thunder_last_error();
  return model;
}

/// The status and message of loading a model that must fail.
std::pair<thunder_status, std::string> loadError(const std::string &path) {
  thunder_model *model = reinterpret_cast<thunder_model *>(0x1);
  thunder_status status = thunder_model_load(path.c_str(), &model);
  EXPECT_EQ(model, nullptr);
  return {status, thunder_last_error()};
}

/// Inputs and outputs of add_one for a batch of n, with distinct values per `seed`. Holds the
/// thunder_tensor views of its own vectors, so it is neither copied nor moved.
struct AddOne {
  int64_t n;
  std::vector<float> x, outX;
  std::vector<int64_t> y, outY;
  int64_t xShape[2], yShape[1], outXShape[2], outYShape[1];
  thunder_tensor inputs[2], outputs[2];

  explicit AddOne(int64_t n, int seed = 0)
      : n(n), x(4 * n), outX(4 * n, -1.0f), y(n), outY(n, -1), xShape{n, 4}, yShape{n},
        outXShape{n, 4}, outYShape{n} {
    for (int64_t i = 0; i < 4 * n; ++i)
      x[i] = static_cast<float>(seed) * 1000.0f + static_cast<float>(i) * 0.5f;
    for (int64_t i = 0; i < n; ++i)
      y[i] = seed * 100 + i;
    inputs[0] = {x.data(), THUNDER_DTYPE_FLOAT32, 2, xShape};
    inputs[1] = {y.data(), THUNDER_DTYPE_INT64, 1, yShape};
    outputs[0] = {outX.data(), THUNDER_DTYPE_FLOAT32, 2, outXShape};
    outputs[1] = {outY.data(), THUNDER_DTYPE_INT64, 1, outYShape};
  }
  AddOne(const AddOne &) = delete;
  AddOne &operator=(const AddOne &) = delete;

  thunder_status run(const thunder_model *model) {
    return thunder_model_run(model, inputs, 2, outputs, 2, nullptr);
  }
  thunder_status run(thunder_context *context) {
    return thunder_context_run(context, inputs, 2, outputs, 2, nullptr);
  }
  /// Whether the outputs are exactly x + offset and y * 2.
  bool correct(float offset = 1.0f) const {
    for (int64_t i = 0; i < 4 * n; ++i)
      if (outX[i] != x[i] + offset)
        return false;
    for (int64_t i = 0; i < n; ++i)
      if (outY[i] != y[i] * 2)
        return false;
    return true;
  }
};

/// A loaded add_one, freed at the end of the test.
class RuntimeAddOne : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_NE(model = load("add_one"), nullptr); }
  void TearDown() override { thunder_model_free(model); }

  /// The message of a run that must fail with THUNDER_ERROR_INVALID_ARGUMENT.
  std::string invalid(AddOne &data) {
    EXPECT_EQ(data.run(model), THUNDER_ERROR_INVALID_ARGUMENT);
    return thunder_last_error();
  }

  thunder_model *model = nullptr;
};

//===----------------------------------------------------------------------===//
// Weights a caller provides (thunder_model_load_with_weights)
//===----------------------------------------------------------------------===//

/// A provider of one float per weight name, counting its calls.
struct Offered {
  std::string name;
  float value;
  int calls = 0;
  static const void *provide(void *user, const thunder_program_weight_v1 *weight) {
    auto *self = static_cast<Offered *>(user);
    ++self->calls;
    return self->name == weight->name ? &self->value : nullptr;
  }
};

TEST(RuntimeProvidedWeights, ReadFromTheCallersMemory) {
  Offered offered{"offset", 3.5f};
  thunder_model *model = nullptr;
  ASSERT_EQ(thunder_model_load_with_weights(modelPath("add_one_provided").c_str(),
                                            Offered::provide, &offered, &model),
            THUNDER_OK)
      << thunder_last_error();
  EXPECT_EQ(offered.calls, 1);
  EXPECT_EQ(thunder_model_num_provided_weights(model), 1);
  // Its one weight: every weight read in place.
  EXPECT_EQ(thunder_model_num_weights(model), 1);
  AddOne data(3);
  ASSERT_EQ(data.run(model), THUNDER_OK) << thunder_last_error();
  EXPECT_TRUE(data.correct(3.5f));
  thunder_model_free(model);
}

TEST(RuntimeProvidedWeights, NoneProvidedOrNoTable) {
  // The provider gives nothing: the library's own copy (offset 1).
  Offered other{"another", 3.5f};
  thunder_model *model = nullptr;
  ASSERT_EQ(thunder_model_load_with_weights(modelPath("add_one_provided").c_str(),
                                            Offered::provide, &other, &model),
            THUNDER_OK);
  EXPECT_EQ(thunder_model_num_provided_weights(model), 0);
  EXPECT_EQ(thunder_model_num_weights(model), 1);
  AddOne data(2);
  ASSERT_EQ(data.run(model), THUNDER_OK);
  EXPECT_TRUE(data.correct(1.0f));
  thunder_model_free(model);
  // A library without the weights entry loads as with thunder_model_load.
  Offered offered{"offset", 3.5f};
  ASSERT_EQ(thunder_model_load_with_weights(modelPath("add_one").c_str(), Offered::provide,
                                            &offered, &model),
            THUNDER_OK);
  EXPECT_EQ(offered.calls, 0);
  EXPECT_EQ(thunder_model_num_provided_weights(model), 0);
  EXPECT_EQ(thunder_model_num_weights(model), -1);
  AddOne again(2);
  ASSERT_EQ(again.run(model), THUNDER_OK);
  EXPECT_TRUE(again.correct(1.0f));
  thunder_model_free(model);
  // A NULL provider and NULL arguments.
  ASSERT_EQ(thunder_model_load_with_weights(modelPath("add_one_provided").c_str(), nullptr,
                                            nullptr, &model),
            THUNDER_OK);
  EXPECT_EQ(thunder_model_num_weights(model), 1); // the table, all its own copies
  thunder_model_free(model);
  EXPECT_EQ(thunder_model_load_with_weights(nullptr, nullptr, nullptr, &model),
            THUNDER_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(model, nullptr);
  EXPECT_EQ(thunder_model_num_provided_weights(nullptr), -1);
  EXPECT_EQ(thunder_model_num_weights(nullptr), -1);
}

//===----------------------------------------------------------------------===//
// Names and sizes
//===----------------------------------------------------------------------===//

TEST(RuntimeNames, DTypesAgreeWithSupport) {
  for (int i = 0; i < thunder::kNumDTypes; ++i) {
    auto type = static_cast<thunder::DType>(i);
    EXPECT_STREQ(thunder_dtype_name(i), thunder::dtypeName(type));
    EXPECT_EQ(static_cast<int64_t>(thunder_dtype_size(i)), thunder::dtypeSizeInBytes(type));
  }
  EXPECT_EQ(THUNDER_DTYPE_FLOAT64 + 1, thunder::kNumDTypes);
  EXPECT_STREQ(thunder_dtype_name(thunder::kNumDTypes), "unknown");
  EXPECT_STREQ(thunder_dtype_name(-1), "unknown");
  EXPECT_EQ(thunder_dtype_size(42), 0u);
}

TEST(RuntimeNames, StatusesDevicesVersion) {
  EXPECT_STREQ(thunder_status_name(THUNDER_ERROR_VERSION), "THUNDER_ERROR_VERSION");
  EXPECT_STREQ(thunder_status_name(99), "unknown");
  EXPECT_STREQ(thunder_device_name(THUNDER_DEVICE_CUDA), "cuda");
  EXPECT_STREQ(thunder_device_name(7), "unknown");
  EXPECT_TRUE(std::regex_match(thunder_runtime_version(), std::regex("[0-9]+\\.[0-9]+\\.[0-9]+")))
      << thunder_runtime_version();
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

TEST_F(RuntimeAddOne, Metadata) {
  EXPECT_STREQ(thunder_model_name(model), "add_one");
  EXPECT_STREQ(thunder_model_target(model), "cpu");
  EXPECT_EQ(thunder_model_path(model), modelPath("add_one"));
  EXPECT_EQ(thunder_model_device(model), THUNDER_DEVICE_CPU);
  // The host CPU; the fake model does not say what it was built for.
  EXPECT_EQ(std::string(thunder_model_device_description(model)).rfind("cpu", 0), 0u);
  EXPECT_NE(std::string(thunder_model_device_description(model)).find(
                std::string("(") + thunder_model_device_arch(model) + ")"),
            std::string::npos);
  ASSERT_EQ(thunder_model_num_inputs(model), 2);
  ASSERT_EQ(thunder_model_num_outputs(model), 2);
  const thunder_tensor_desc *x = thunder_model_input(model, 0);
  ASSERT_NE(x, nullptr);
  EXPECT_STREQ(x->name, "x");
  EXPECT_EQ(x->dtype, THUNDER_DTYPE_FLOAT32);
  ASSERT_EQ(x->rank, 2);
  EXPECT_EQ(x->shape[0], -1);
  EXPECT_EQ(x->dim_min[0], 1);
  EXPECT_EQ(x->dim_max[0], 64);
  EXPECT_STREQ(x->dim_symbols[0], "s0");
  EXPECT_EQ(x->shape[1], 4);
  EXPECT_STREQ(thunder_model_output(model, 1)->name, "y_times_two");
  EXPECT_EQ(thunder_model_input(model, 2), nullptr);
  EXPECT_EQ(thunder_model_input(model, -1), nullptr);
  EXPECT_EQ(thunder_model_output(model, 2), nullptr);
}

TEST(RuntimeLoad, NullArgumentsAndHandles) {
  thunder_model *model = nullptr;
  EXPECT_EQ(thunder_model_load(nullptr, &model), THUNDER_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(thunder_last_error(), "thunder_model_load: path and model must not be NULL");
  EXPECT_EQ(thunder_model_load(modelPath("add_one").c_str(), nullptr),
            THUNDER_ERROR_INVALID_ARGUMENT);
  thunder_model_free(nullptr);
  thunder_context_free(nullptr);
  EXPECT_EQ(thunder_model_name(nullptr), nullptr);
  EXPECT_EQ(thunder_model_device(nullptr), -1);
  EXPECT_EQ(thunder_model_device_description(nullptr), nullptr);
  EXPECT_EQ(thunder_model_device_arch(nullptr), nullptr);
  EXPECT_EQ(thunder_model_num_inputs(nullptr), 0);
  EXPECT_EQ(thunder_model_input(nullptr, 0), nullptr);
  EXPECT_EQ(thunder_model_run(nullptr, nullptr, 0, nullptr, 0, nullptr),
            THUNDER_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(thunder_last_error(), "thunder_model_run: model is NULL");
  EXPECT_EQ(thunder_context_run(nullptr, nullptr, 0, nullptr, 0, nullptr),
            THUNDER_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(thunder_last_error(), "thunder_context_run: context is NULL");
  thunder_context *context = nullptr;
  EXPECT_EQ(thunder_context_create(nullptr, &context), THUNDER_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(context, nullptr);
}

TEST(RuntimeLoad, MissingFile) {
  std::string path = modelPath("does_not_exist");
  auto [status, message] = loadError(path);
  EXPECT_EQ(status, THUNDER_ERROR_LOAD);
  EXPECT_EQ(message, "cannot load model " + path + ": no such file");
}

TEST(RuntimeLoad, Directory) {
  auto [status, message] = loadError(THUNDER_TEST_MODELS_DIR);
  EXPECT_EQ(status, THUNDER_ERROR_LOAD);
  EXPECT_EQ(message, "cannot load model " + std::string(THUNDER_TEST_MODELS_DIR) +
                         ": it is a directory (pass the libNAME.so in it)");
}

TEST(RuntimeLoad, NotASharedLibrary) {
  std::string path = modelPath("garbage");
  auto [status, message] = loadError(path);
  EXPECT_EQ(status, THUNDER_ERROR_LOAD);
  // The rest is dlerror()'s text, which names the problem.
  EXPECT_TRUE(startsWith(message, "cannot load model " + path + ": "));
  EXPECT_TRUE(contains(message, "libgarbage.so"));
}

TEST(RuntimeLoad, NoEntrySymbol) {
  std::string path = modelPath("no_entry");
  auto [status, message] = loadError(path);
  EXPECT_EQ(status, THUNDER_ERROR_LOAD);
  EXPECT_EQ(message, path + " is not a Thunder model: no symbol thunder_model_entry_v1");
}

TEST(RuntimeLoad, AbiVersionMismatch) {
  std::string path = modelPath("abi999");
  auto [status, message] = loadError(path);
  EXPECT_EQ(status, THUNDER_ERROR_VERSION);
  EXPECT_EQ(message, path + " was compiled for Thunder model ABI version 999, but this runtime (" +
                         thunder_runtime_version() +
                         ") supports ABI version 1: recompile the model with a matching "
                         "thunder-compile, or use a matching runtime");
}

TEST(RuntimeLoad, StructSizeMismatch) {
  std::string path = modelPath("bad_size");
  auto [status, message] = loadError(path);
  EXPECT_EQ(status, THUNDER_ERROR_VERSION);
  size_t size = sizeof(thunder_model_v1);
  EXPECT_EQ(message, path + " has a model table of " + std::to_string(size + 8) +
                         " bytes, but ABI version 1 defines it as " + std::to_string(size) +
                         " bytes: it was built against a different artifact.h");
}

TEST(RuntimeLoad, MalformedTable) {
  std::string path = modelPath("bad_rank");
  auto [status, message] = loadError(path);
  EXPECT_EQ(status, THUNDER_ERROR_LOAD);
  EXPECT_EQ(message, path + " is not a valid Thunder model: input 1 ('y') has rank -1");
}

TEST(RuntimeLoad, MissingWeightsFile) {
  std::string path = modelPath("missing_weights");
  auto [status, message] = loadError(path);
  EXPECT_EQ(status, THUNDER_ERROR_LOAD);
  std::string directory = realPath(THUNDER_TEST_MODELS_DIR);
  EXPECT_EQ(message, "model 'add_one' needs its weights file " + directory +
                         "/missing.weights, which is missing (the weights file "
                         "'missing.weights' must stay beside " +
                         directory + "/libmissing_weights.so)");
}

TEST(RuntimeLoad, WeightsFileBesideTheLibrary) {
  // create() reads the offset (2.5) from weights/add_one.weights, resolved by the runtime.
  std::string path = std::string(THUNDER_TEST_MODELS_DIR) + "/weights/libadd_one_weights.so";
  thunder_model *model = nullptr;
  ASSERT_EQ(thunder_model_load(path.c_str(), &model), THUNDER_OK) << thunder_last_error();
  AddOne data(3);
  EXPECT_EQ(data.run(model), THUNDER_OK) << thunder_last_error();
  EXPECT_TRUE(data.correct(2.5f));
  thunder_model_free(model);
}

TEST(RuntimeLoad, FreeDestroysTheState) {
  // Our own handle keeps the library (and its counter) loaded between the runtime's loads.
  void *library = dlopen(modelPath("add_one").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  auto liveStates = reinterpret_cast<int (*)()>(dlsym(library, "thunder_test_live_states"));
  ASSERT_NE(liveStates, nullptr);
  int before = liveStates();
  thunder_model *a = load("add_one"), *b = load("add_one");
  EXPECT_EQ(liveStates(), before + 2);
  thunder_model_free(b);
  EXPECT_EQ(liveStates(), before + 1);
  AddOne data(2);
  EXPECT_EQ(data.run(a), THUNDER_OK) << thunder_last_error();
  EXPECT_TRUE(data.correct());
  thunder_model_free(a);
  EXPECT_EQ(liveStates(), before);
  dlclose(library);
}

//===----------------------------------------------------------------------===//
// Running, output shapes, workspaces
//===----------------------------------------------------------------------===//

TEST_F(RuntimeAddOne, Runs) {
  for (int64_t n : {1, 3, 64}) {
    AddOne data(n, static_cast<int>(n));
    ASSERT_EQ(data.run(model), THUNDER_OK) << thunder_last_error();
    EXPECT_TRUE(data.correct()) << "n = " << n;
  }
}

TEST_F(RuntimeAddOne, OutputShapes) {
  AddOne data(5);
  data.inputs[0].data = data.inputs[1].data = nullptr; // only shapes are read
  int64_t first[2] = {0, 0}, second[1] = {0};
  int64_t *shapes[2] = {first, second};
  ASSERT_EQ(thunder_model_output_shapes(model, data.inputs, 2, shapes), THUNDER_OK)
      << thunder_last_error();
  EXPECT_EQ(first[0], 5);
  EXPECT_EQ(first[1], 4);
  EXPECT_EQ(second[0], 5);

  // The inputs are validated first.
  data.yShape[0] = 6;
  EXPECT_EQ(thunder_model_output_shapes(model, data.inputs, 2, shapes),
            THUNDER_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(thunder_last_error()),
            "dim 0 of input 1 ('y') is 6, but it shares symbol s0 with dim 0 of input 0 ('x'), "
            "which is 5");
  data.yShape[0] = 5;
  int64_t *missing[2] = {first, nullptr};
  EXPECT_EQ(thunder_model_output_shapes(model, data.inputs, 2, missing),
            THUNDER_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(thunder_last_error(), "thunder_model_output_shapes: shapes[1] is NULL, but "
                                     "output 1 ('y_times_two') has rank 1");
}

TEST_F(RuntimeAddOne, WorkspaceBytes) {
  AddOne data(3);
  uint64_t bytes = 0;
  ASSERT_EQ(thunder_model_workspace_bytes(model, data.inputs, 2, &bytes), THUNDER_OK);
  EXPECT_EQ(bytes, 3u * (4 * sizeof(float) + sizeof(int64_t)));
}

TEST_F(RuntimeAddOne, ModelErrorIsARunError) {
  AddOne data(3);
  data.y[1] = -5;
  EXPECT_EQ(data.run(model), THUNDER_ERROR_RUN);
  EXPECT_STREQ(thunder_last_error(),
               "model 'add_one' failed to run: y must be non-negative, but y[1] is -5");
}

TEST(RuntimeRun, OutputShapesThatContradictTheDescriptors) {
  thunder_model *model = load("bad_output");
  ASSERT_NE(model, nullptr);
  AddOne data(3);
  EXPECT_EQ(data.run(model), THUNDER_ERROR_RUN);
  EXPECT_STREQ(thunder_last_error(),
               "model 'add_one' computed shape [3, 5] for output 0 ('x_plus_one'), which "
               "contradicts its declared shape [s0, 4] (a bug in the compiled model)");
  thunder_model_free(model);
}

TEST_F(RuntimeAddOne, ContextGrowsItsWorkspace) {
  thunder_context *context = nullptr;
  ASSERT_EQ(thunder_context_create(model, &context), THUNDER_OK);
  for (int64_t n : {1, 8, 3, 64, 2, 64}) {
    AddOne data(n, static_cast<int>(n) + 7);
    ASSERT_EQ(data.run(context), THUNDER_OK) << thunder_last_error();
    EXPECT_TRUE(data.correct()) << "n = " << n;
  }
  // Validation applies to contexts too.
  AddOne bad(3);
  bad.inputs[1].dtype = THUNDER_DTYPE_INT32;
  EXPECT_EQ(bad.run(context), THUNDER_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(thunder_last_error(), "input 1 ('y'): expected dtype int64, got int32");
  thunder_context_free(context);
}

TEST_F(RuntimeAddOne, ModelRunKeepsAWorkspaceBetweenRuns) {
  // A CPU model's runs without a context take a workspace the model keeps, grown when a
  // run needs more (ManyThreadsRunAtOnce: a run that finds it taken gets its own).
  void *handle = dlopen(modelPath("add_one").c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  auto *last = static_cast<void **>(dlsym(handle, "thunder_test_last_workspace"));
  ASSERT_NE(last, nullptr);
  auto lastWorkspace = [&] { return __atomic_load_n(last, __ATOMIC_RELAXED); };
  AddOne small(8);
  ASSERT_EQ(small.run(model), THUNDER_OK) << thunder_last_error();
  EXPECT_TRUE(small.correct());
  AddOne first(64); // grows it
  ASSERT_EQ(first.run(model), THUNDER_OK) << thunder_last_error();
  EXPECT_TRUE(first.correct());
  void *kept = lastWorkspace();
  uint64_t bytes = 0;
  ASSERT_EQ(thunder_model_workspace_bytes(model, first.inputs, 2, &bytes), THUNDER_OK);
  // Blocks of the workspace's size held between runs: a workspace freed after each run
  // would be handed to them, and the next run's would lie elsewhere.
  std::vector<void *> held;
  for (int64_t n : {64, 1, 64, 3, 17, 64}) {
    void *block = nullptr;
    ASSERT_EQ(posix_memalign(&block, 64, bytes), 0);
    held.push_back(block);
    AddOne data(n, static_cast<int>(n) + 3);
    ASSERT_EQ(data.run(model), THUNDER_OK) << thunder_last_error();
    EXPECT_TRUE(data.correct()) << "n = " << n;
    EXPECT_EQ(lastWorkspace(), kept) << "n = " << n;
  }
  for (void *block : held)
    free(block);
  dlclose(handle);
}

TEST_F(RuntimeAddOne, LastErrorIsPerThread) {
  AddOne bad(3);
  bad.inputs[0].dtype = THUNDER_DTYPE_INT8;
  EXPECT_EQ(bad.run(model), THUNDER_ERROR_INVALID_ARGUMENT);
  std::string mine = thunder_last_error();
  std::string theirs = "unset";
  std::thread([&] {
    theirs = thunder_last_error(); // nothing failed on this thread
    AddOne other(2);
    other.inputs[1].dtype = THUNDER_DTYPE_BOOL;
    EXPECT_EQ(other.run(model), THUNDER_ERROR_INVALID_ARGUMENT);
  }).join();
  EXPECT_EQ(theirs, "");
  EXPECT_EQ(thunder_last_error(), mine);
  // A successful call leaves the message of the last failure.
  AddOne good(2);
  EXPECT_EQ(good.run(model), THUNDER_OK);
  EXPECT_EQ(thunder_last_error(), mine);
}

//===----------------------------------------------------------------------===//
// Validation: one test per message
//===----------------------------------------------------------------------===//

TEST_F(RuntimeAddOne, WrongInputCount) {
  AddOne data(3);
  EXPECT_EQ(thunder_model_run(model, data.inputs, 1, data.outputs, 2, nullptr),
            THUNDER_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(thunder_last_error(), "model 'add_one' takes 2 inputs (x, y), got 1");
  EXPECT_EQ(thunder_model_run(model, nullptr, 2, data.outputs, 2, nullptr),
            THUNDER_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(thunder_last_error(), "inputs is NULL, but model 'add_one' takes 2 inputs");
}

TEST_F(RuntimeAddOne, WrongOutputCount) {
  AddOne data(3);
  EXPECT_EQ(thunder_model_run(model, data.inputs, 2, data.outputs, 3, nullptr),
            THUNDER_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(thunder_last_error(),
               "model 'add_one' has 2 outputs (x_plus_one, y_times_two), got 3");
  EXPECT_EQ(thunder_model_run(model, data.inputs, 2, nullptr, 2, nullptr),
            THUNDER_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(thunder_last_error(), "outputs is NULL, but model 'add_one' has 2 outputs");
}

TEST_F(RuntimeAddOne, WrongDType) {
  AddOne data(3);
  data.inputs[1].dtype = THUNDER_DTYPE_FLOAT32;
  EXPECT_EQ(invalid(data), "input 1 ('y'): expected dtype int64, got float32");
  data.inputs[1].dtype = 42;
  EXPECT_EQ(invalid(data), "input 1 ('y'): expected dtype int64, got unknown dtype 42");
}

TEST_F(RuntimeAddOne, WrongRank) {
  AddOne data(3);
  int64_t shape[3] = {3, 4, 1};
  data.inputs[0].rank = 3;
  data.inputs[0].shape = shape;
  EXPECT_EQ(invalid(data),
            "input 0 ('x'): expected rank 2 (shape [s0, 4]), got rank 3 (shape [3, 4, 1])");
}

TEST_F(RuntimeAddOne, NullShape) {
  AddOne data(3);
  data.inputs[0].shape = nullptr;
  EXPECT_EQ(invalid(data), "input 0 ('x'): shape is NULL, but rank is 2");
}

TEST_F(RuntimeAddOne, WrongStaticDim) {
  AddOne data(3);
  data.xShape[1] = 5;
  EXPECT_EQ(invalid(data), "input 0 ('x'): dim 1 is 5, but the model expects 4 (shape [s0, 4])");
}

TEST_F(RuntimeAddOne, NegativeDim) {
  AddOne data(3);
  data.xShape[0] = -1;
  EXPECT_EQ(invalid(data), "input 0 ('x'): dim 0 is -1; dims must be non-negative");
}

TEST_F(RuntimeAddOne, DynamicDimOutOfRange) {
  AddOne data(3);
  data.xShape[0] = data.yShape[0] = 65;
  // Every problem is reported, one per line.
  EXPECT_EQ(invalid(data), "input 0 ('x'): dim 0 (symbol s0) is 65, outside its range [1, 64]\n"
                           "input 1 ('y'): dim 0 (symbol s0) is 65, outside its range [1, 64]");
  data.xShape[0] = data.yShape[0] = 0;
  EXPECT_EQ(invalid(data), "input 0 ('x'): dim 0 (symbol s0) is 0, outside its range [1, 64]\n"
                           "input 1 ('y'): dim 0 (symbol s0) is 0, outside its range [1, 64]");
}

TEST_F(RuntimeAddOne, SharedSymbolMismatch) {
  AddOne data(4);
  data.yShape[0] = 3;
  EXPECT_EQ(invalid(data), "dim 0 of input 1 ('y') is 3, but it shares symbol s0 with dim 0 of "
                           "input 0 ('x'), which is 4");
}

TEST_F(RuntimeAddOne, NullData) {
  AddOne data(3);
  data.inputs[0].data = nullptr;
  EXPECT_EQ(invalid(data), "input 0 ('x'): data is NULL, but the tensor has 12 elements");
  AddOne output(3);
  output.outputs[1].data = nullptr;
  EXPECT_EQ(invalid(output), "output 1 ('y_times_two'): data is NULL, but the tensor has 3 "
                             "elements");
}

TEST_F(RuntimeAddOne, WrongOutputShape) {
  AddOne data(3);
  data.outXShape[1] = 3;
  EXPECT_EQ(invalid(data), "output 0 ('x_plus_one'): expected shape [3, 4], got [3, 3]");
  data.outXShape[1] = 4;
  data.outputs[0].rank = 1;
  EXPECT_EQ(invalid(data), "output 0 ('x_plus_one'): expected shape [3, 4], got [3]");
}

TEST_F(RuntimeAddOne, WrongOutputDType) {
  AddOne data(3);
  data.outputs[1].dtype = THUNDER_DTYPE_INT32;
  EXPECT_EQ(invalid(data), "output 1 ('y_times_two'): expected dtype int64, got int32");
}

TEST_F(RuntimeAddOne, SeveralProblemsAtOnce) {
  AddOne data(3);
  data.inputs[0].dtype = THUNDER_DTYPE_FLOAT16;
  data.inputs[1].data = nullptr;
  EXPECT_EQ(invalid(data), "input 0 ('x'): expected dtype float32, got float16\n"
                           "input 1 ('y'): data is NULL, but the tensor has 3 elements");
}

TEST_F(RuntimeAddOne, NothingRunsAfterAFailedValidation) {
  AddOne data(3);
  data.outXShape[0] = 2;
  EXPECT_EQ(data.run(model), THUNDER_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(data.outY[0], -1); // untouched
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

TEST_F(RuntimeAddOne, ManyThreadsRunAtOnce) {
  constexpr int kThreads = 8, kRuns = 200, kRepeats = 3;
  for (int repeat = 0; repeat < kRepeats; ++repeat) {
    std::atomic<int> failures{0};
    std::atomic<bool> go{false};
    std::string firstFailure;
    std::atomic<bool> recorded{false};
    auto worker = [&](int t) {
      thunder_context *context = nullptr;
      if (thunder_context_create(model, &context) != THUNDER_OK) {
        ++failures;
        return;
      }
      while (!go.load())
        std::this_thread::yield();
      for (int r = 0; r < kRuns; ++r) {
        // Batch sizes differ between threads and runs, so workspace sizes do too.
        int64_t n = 1 + (t * 37 + r * 11 + repeat * 5) % 64;
        AddOne data(n, t * kRuns + r);
        // Alternate: a private workspace per call, and this thread's context.
        thunder_status status = r % 2 ? data.run(context) : data.run(model);
        if (status != THUNDER_OK || !data.correct()) {
          if (++failures == 1 && !recorded.exchange(true))
            firstFailure = "thread " + std::to_string(t) + " run " + std::to_string(r) +
                           " (n = " + std::to_string(n) + "): " +
                           (status ? thunder_last_error() : "wrong result");
        }
      }
      thunder_context_free(context);
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back(worker, t);
    go = true;
    for (std::thread &thread : threads)
      thread.join();
    EXPECT_EQ(failures.load(), 0) << "repeat " << repeat << ": " << firstFailure;
  }
}

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

/// Whether a library can be loaded (a driver exists, or the fake one is loaded already).
bool loadable(const char *name) {
  void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (handle)
    dlclose(handle);
  return handle != nullptr;
}

TEST(RuntimeDevice, CudaModelWithoutDriver) {
  if (loadable("libcuda.so.1"))
    GTEST_SKIP() << "this machine (or process) has a CUDA driver";
  auto [status, message] = loadError(modelPath("add_one_cuda"));
  EXPECT_EQ(status, THUNDER_ERROR_DEVICE);
  EXPECT_EQ(message, "model 'add_one_cuda' was compiled for CUDA, but this machine has no CUDA "
                     "driver (libcuda.so.1 not found)");
}

TEST(RuntimeDevice, HipModelWithoutRuntime) {
  for (const char *name :
       {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"})
    if (loadable(name))
      GTEST_SKIP() << "this machine has a HIP runtime";
  auto [status, message] = loadError(modelPath("add_one_hip"));
  EXPECT_EQ(status, THUNDER_ERROR_DEVICE);
  EXPECT_EQ(message, "model 'add_one_hip' was compiled for HIP, but this machine has no HIP "
                     "runtime (libamdhip64.so not found)");
}

/// The fake driver's counters (see Inputs/fake_cuda.c).
struct CudaStats {
  long allocs, asyncAllocs, frees, live, ctxSyncs, streamSyncs;
};

TEST(RuntimeDevice, CudaModelWithFakeDriver) {
  // Loaded by path, the fake (SONAME libcuda.so.1) is what dlopen("libcuda.so.1") finds: unless
  // a real driver was loaded into this process first.
  std::string fakePath = std::string(THUNDER_TEST_MODELS_DIR) + "/driver/libfake_cuda.so";
  void *fake = dlopen(fakePath.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(fake, nullptr) << dlerror();
  void *bySoname = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (bySoname)
    dlclose(bySoname);
  if (bySoname != fake) {
    dlclose(fake);
    GTEST_SKIP() << "a real CUDA driver is loaded in this process";
  }
  auto configure = reinterpret_cast<void (*)(int, int, int)>(dlsym(fake, "fake_cuda_configure"));
  auto readStats = reinterpret_cast<void (*)(long *)>(dlsym(fake, "fake_cuda_stats"));
  ASSERT_TRUE(configure && readStats);
  auto stats = [&] {
    long values[6];
    readStats(values);
    return CudaStats{values[0], values[1], values[2], values[3], values[4], values[5]};
  };
  std::string path = modelPath("add_one_cuda");

  // No device: cuInit fails, or finds none. (The runtime caches only a usable driver, so these
  // come first.)
  configure(100, 0, 1);
  auto [status, message] = loadError(path);
  EXPECT_EQ(status, THUNDER_ERROR_DEVICE);
  EXPECT_EQ(message, "model 'add_one_cuda' was compiled for CUDA, but this machine has no CUDA "
                     "device (cuInit: CUDA_ERROR_NO_DEVICE, no CUDA-capable device is detected)");
  configure(0, 0, 1);
  std::tie(status, message) = loadError(path);
  EXPECT_EQ(status, THUNDER_ERROR_DEVICE);
  EXPECT_EQ(message, "model 'add_one_cuda' was compiled for CUDA, but this machine has no CUDA "
                     "device (the driver reports 0 devices)");

  // One device: per-run workspaces are stream-ordered allocations, freed after the run.
  configure(0, 1, 1);
  thunder_model *model = nullptr;
  ASSERT_EQ(thunder_model_load(path.c_str(), &model), THUNDER_OK) << thunder_last_error();
  EXPECT_EQ(thunder_model_device(model), THUNDER_DEVICE_CUDA);
  EXPECT_STREQ(thunder_model_device_description(model), "CUDA device 0: Fake NVIDIA GPU 0 (sm_90)");
  EXPECT_STREQ(thunder_model_device_arch(model), "sm_90");
  CudaStats before = stats();
  {
    AddOne data(5);
    ASSERT_EQ(data.run(model), THUNDER_OK) << thunder_last_error();
    EXPECT_TRUE(data.correct());
  }
  CudaStats after = stats();
  EXPECT_EQ(after.asyncAllocs - before.asyncAllocs, 1);
  EXPECT_EQ(after.frees - before.frees, 1);
  EXPECT_EQ(after.live, before.live);

  // Without memory pools: a synchronous allocation, freed after synchronizing the stream.
  configure(0, 1, 0);
  before = stats();
  {
    AddOne data(2);
    ASSERT_EQ(data.run(model), THUNDER_OK) << thunder_last_error();
    EXPECT_TRUE(data.correct());
  }
  after = stats();
  EXPECT_EQ(after.allocs - before.allocs, 1);
  EXPECT_EQ(after.asyncAllocs, before.asyncAllocs);
  EXPECT_EQ(after.streamSyncs - before.streamSyncs, 1);
  EXPECT_EQ(after.live, before.live);

  // A context keeps one workspace, reallocated (after a synchronize) only when it grows.
  thunder_context *context = nullptr;
  ASSERT_EQ(thunder_context_create(model, &context), THUNDER_OK);
  before = stats();
  for (int64_t n : {4, 2, 4, 9, 1}) {
    AddOne data(n);
    ASSERT_EQ(data.run(context), THUNDER_OK) << thunder_last_error();
    EXPECT_TRUE(data.correct());
  }
  after = stats();
  EXPECT_EQ(after.allocs - before.allocs, 2); // for 4, then for 9
  EXPECT_EQ(after.live - before.live, 1);
  EXPECT_EQ(after.ctxSyncs - before.ctxSyncs, 1);
  thunder_context_free(context);
  EXPECT_EQ(stats().live, before.live);
  thunder_model_free(model);
  // The fake stays loaded: the runtime keeps drivers for the life of the process.
}

} // namespace
