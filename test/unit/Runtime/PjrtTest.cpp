// Tests of PJRT models (artifact.h's program entry) through the runtime's C API, run on XLA's
// CPU plugin (xla-cpu-pjrt): outputs checked numerically, concurrent runs, and every error of
// the executor (malformed program, missing plugin, no GetPjrtApi, too old an API version,
// wrong input shapes, no plugin and no TPU).
#include "thunder-c/runtime.h"

#include "Contains.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string modelPath(const std::string &name, const std::string &dir = "") {
  return std::string(THUNDER_TEST_MODELS_DIR) + "/" + (dir.empty() ? "" : dir + "/") + "lib" +
         name + ".so";
}

std::string fakePlugin(const std::string &name) { return modelPath(name, "pjrt_plugins"); }

/// Sets THUNDER_PJRT_PLUGIN (unset for "") for the object's life, restoring what was there.
class PluginEnv {
public:
  explicit PluginEnv(const std::string &plugin) {
    if (const char *old = getenv("THUNDER_PJRT_PLUGIN")) {
      had = true;
      previous = old;
    }
    if (plugin.empty())
      unsetenv("THUNDER_PJRT_PLUGIN");
    else
      setenv("THUNDER_PJRT_PLUGIN", plugin.c_str(), 1);
  }
  ~PluginEnv() {
    if (had)
      setenv("THUNDER_PJRT_PLUGIN", previous.c_str(), 1);
    else
      unsetenv("THUNDER_PJRT_PLUGIN");
  }

private:
  bool had = false;
  std::string previous;
};

/// The status and message of loading a model that must fail.
std::pair<thunder_status, std::string> loadError(const std::string &path) {
  thunder_model *model = reinterpret_cast<thunder_model *>(0x1);
  thunder_status status = thunder_model_load(path.c_str(), &model);
  EXPECT_EQ(model, nullptr);
  return {status, thunder_last_error()};
}

/// Random non-zero values in [-2, -0.25] and [0.25, 2].
std::vector<float> randomValues(size_t n, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> magnitude(0.25f, 2.0f);
  std::vector<float> values(n);
  for (float &value : values)
    value = magnitude(generator) * (generator() % 2 ? 1.0f : -1.0f);
  return values;
}

/// The weights the fake models carry (Inputs/pjrt_model.c).
const float kW[6] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
const float kV[6] = {-1.0f, -2.0f, -3.0f, -4.0f, -5.0f, -6.0f};

/// Skips the test where the runtime or the machine lacks what it needs.
#define REQUIRE_CPU_PLUGIN()                                                                   \
  do {                                                                                         \
    if (!THUNDER_TEST_PJRT_ENABLED)                                                            \
      GTEST_SKIP() << "the runtime was built without PJRT support (no pjrt_c_api.h)";          \
    if (std::string(THUNDER_TEST_PJRT_CPU_PLUGIN).empty() ||                                   \
        access(THUNDER_TEST_PJRT_CPU_PLUGIN, R_OK) != 0)                                       \
      GTEST_SKIP() << "XLA's CPU PJRT plugin is not installed (pip install xla-cpu-pjrt)";     \
  } while (0)

/// Runs pjrt_add_mul-like models (y = (w + x) * x) and checks y.
void expectAddMul(const thunder_model *model, unsigned seed, bool useContext = false) {
  std::vector<float> x = randomValues(6, seed), y(6, 0.0f);
  int64_t shape[] = {2, 3};
  thunder_tensor in = {x.data(), THUNDER_DTYPE_FLOAT32, 2, shape};
  thunder_tensor out = {y.data(), THUNDER_DTYPE_FLOAT32, 2, shape};
  if (useContext) {
    thunder_context *context = nullptr;
    ASSERT_EQ(thunder_context_create(model, &context), THUNDER_OK) << thunder_last_error();
    ASSERT_EQ(thunder_context_run(context, &in, 1, &out, 1, nullptr), THUNDER_OK)
        << thunder_last_error();
    thunder_context_free(context);
  } else {
    ASSERT_EQ(thunder_model_run(model, &in, 1, &out, 1, nullptr), THUNDER_OK)
        << thunder_last_error();
  }
  for (int i = 0; i < 6; ++i)
    EXPECT_FLOAT_EQ(y[i], (kW[i] + x[i]) * x[i]) << "element " << i << ", seed " << seed;
}

class PjrtCpu : public ::testing::Test {
protected:
  void SetUp() override { REQUIRE_CPU_PLUGIN(); }
  PluginEnv env{THUNDER_TEST_PJRT_CPU_PLUGIN};
};

//===----------------------------------------------------------------------===//
// Runs on XLA's CPU plugin
//===----------------------------------------------------------------------===//

TEST_F(PjrtCpu, EmbeddedWeight) {
  thunder_model *model = nullptr;
  ASSERT_EQ(thunder_model_load(modelPath("pjrt_add_mul").c_str(), &model), THUNDER_OK)
      << thunder_last_error();
  EXPECT_STREQ(thunder_model_target(model), "tpu");
  EXPECT_EQ(thunder_model_device(model), THUNDER_DEVICE_CPU);
  // The plugin's platform and device kind, and the plugin's file.
  std::string plugin = THUNDER_TEST_PJRT_CPU_PLUGIN;
  std::string description = thunder_model_device_description(model);
  EXPECT_EQ(description.rfind("PJRT cpu device", 0), 0u) << description;
  EXPECT_NE(description.find("(" + plugin.substr(plugin.rfind('/') + 1) + ")"),
            std::string::npos)
      << description;
  EXPECT_STRNE(thunder_model_device_arch(model), "") << description;
  expectAddMul(model, 1);
  expectAddMul(model, 2, /*useContext=*/true);
  expectAddMul(model, 3); // runs leave nothing behind that changes the next
  thunder_model_free(model);
}

TEST_F(PjrtCpu, TwoWeightsTwoOutputs) {
  thunder_model *model = nullptr;
  ASSERT_EQ(thunder_model_load(modelPath("pjrt_two_outputs").c_str(), &model), THUNDER_OK)
      << thunder_last_error();
  std::vector<float> x = randomValues(6, 7), sum(6, 0.0f), prod(6, 0.0f);
  int64_t s23[] = {2, 3}, s32[] = {3, 2};
  thunder_tensor in = {x.data(), THUNDER_DTYPE_FLOAT32, 2, s23};
  thunder_tensor out[] = {{sum.data(), THUNDER_DTYPE_FLOAT32, 2, s23},
                          {prod.data(), THUNDER_DTYPE_FLOAT32, 2, s32}};
  ASSERT_EQ(thunder_model_run(model, &in, 1, out, 2, nullptr), THUNDER_OK)
      << thunder_last_error();
  for (int i = 0; i < 6; ++i)
    EXPECT_FLOAT_EQ(sum[i], kW[i] + x[i]) << "sum element " << i;
  // prod[r][c] = x[c][r] * v[r][c], row-major [3, 2].
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 2; ++c)
      EXPECT_FLOAT_EQ(prod[r * 2 + c], x[c * 3 + r] * kV[r * 2 + c]) << "prod " << r << "," << c;
  thunder_model_free(model);
}

/// bfloat16 bits of a float that bfloat16 holds exactly.
uint16_t bfloat16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return static_cast<uint16_t>(bits >> 16);
}

TEST_F(PjrtCpu, DTypes) {
  // int32 weight, int64 and bfloat16 inputs, int64, float32 and bool outputs: each dtype's
  // PJRT element type, both directions.
  thunder_model *model = nullptr;
  ASSERT_EQ(thunder_model_load(modelPath("pjrt_dtypes").c_str(), &model), THUNDER_OK)
      << thunder_last_error();
  const int32_t w[4] = {3, -1, 0, 7};
  std::vector<int64_t> a = {5, -4, 9, (int64_t(1) << 40) + 3}, c(4, 0);
  const float bValues[4] = {1.5f, -2.25f, 0.0f, 1024.0f};
  std::vector<uint16_t> b(4);
  for (int i = 0; i < 4; ++i)
    b[i] = bfloat16Bits(bValues[i]);
  std::vector<float> d(4, -1.0f);
  std::vector<uint8_t> e(4, 7);
  int64_t shape[] = {4};
  thunder_tensor in[] = {{a.data(), THUNDER_DTYPE_INT64, 1, shape},
                         {b.data(), THUNDER_DTYPE_BFLOAT16, 1, shape}};
  thunder_tensor out[] = {{c.data(), THUNDER_DTYPE_INT64, 1, shape},
                          {d.data(), THUNDER_DTYPE_FLOAT32, 1, shape},
                          {e.data(), THUNDER_DTYPE_BOOL, 1, shape}};
  ASSERT_EQ(thunder_model_run(model, in, 2, out, 3, nullptr), THUNDER_OK)
      << thunder_last_error();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(c[i], a[i] * w[i]) << "c element " << i;
    EXPECT_EQ(d[i], bValues[i]) << "d element " << i;
    EXPECT_EQ(e[i], a[i] < a[i] * w[i] ? 1 : 0) << "e element " << i;
  }
  thunder_model_free(model);
}

/// Writes the external variant's weights file: 16 bytes of padding, then w.
void writeExternalWeights(size_t keepBytes = 16 + sizeof(kW)) {
  std::string path = std::string(THUNDER_TEST_MODELS_DIR) + "/pjrt_external/pjrt_external.weights";
  std::vector<char> bytes(16 + sizeof(kW), 'x');
  std::memcpy(bytes.data() + 16, kW, sizeof(kW));
  bytes.resize(keepBytes);
  FILE *file = std::fopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), file), bytes.size());
  ASSERT_EQ(std::fclose(file), 0);
}

TEST_F(PjrtCpu, ExternalWeights) {
  writeExternalWeights();
  thunder_model *model = nullptr;
  ASSERT_EQ(thunder_model_load(modelPath("pjrt_external", "pjrt_external").c_str(), &model),
            THUNDER_OK)
      << thunder_last_error();
  expectAddMul(model, 11);
  thunder_model_free(model);
}

TEST_F(PjrtCpu, TruncatedWeightsFile) {
  writeExternalWeights(16 + 8);
  auto [status, message] = loadError(modelPath("pjrt_external", "pjrt_external"));
  EXPECT_EQ(status, THUNDER_ERROR_LOAD);
  EXPECT_TRUE(contains(message, "weight 0 ('w') lies at bytes [16, 40) of the weights file"));
  EXPECT_TRUE(contains(message, "which has only 24 bytes"));
  writeExternalWeights();
}

TEST_F(PjrtCpu, ConcurrentRuns) {
  thunder_model *model = nullptr;
  ASSERT_EQ(thunder_model_load(modelPath("pjrt_add_mul").c_str(), &model), THUNDER_OK)
      << thunder_last_error();
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t)
    threads.emplace_back([model, t] {
      for (unsigned i = 0; i < 20; ++i)
        expectAddMul(model, 100 * t + i, /*useContext=*/i % 2 == 1);
    });
  for (std::thread &thread : threads)
    thread.join();
  thunder_model_free(model);
}

TEST_F(PjrtCpu, TwoModelsShareThePlugin) {
  thunder_model *a = nullptr, *b = nullptr;
  ASSERT_EQ(thunder_model_load(modelPath("pjrt_add_mul").c_str(), &a), THUNDER_OK)
      << thunder_last_error();
  ASSERT_EQ(thunder_model_load(modelPath("pjrt_two_outputs").c_str(), &b), THUNDER_OK)
      << thunder_last_error();
  thunder_model_free(b);
  expectAddMul(a, 5); // the client outlives the other model
  thunder_model_free(a);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(PjrtCpu, WrongInputShape) {
  thunder_model *model = nullptr;
  ASSERT_EQ(thunder_model_load(modelPath("pjrt_add_mul").c_str(), &model), THUNDER_OK)
      << thunder_last_error();
  std::vector<float> x(6), y(6);
  int64_t wrong[] = {3, 2}, right[] = {2, 3};
  thunder_tensor in = {x.data(), THUNDER_DTYPE_FLOAT32, 2, wrong};
  thunder_tensor out = {y.data(), THUNDER_DTYPE_FLOAT32, 2, right};
  EXPECT_EQ(thunder_model_run(model, &in, 1, &out, 1, nullptr), THUNDER_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(thunder_last_error(), "input 0 ('x')")) << thunder_last_error();
  EXPECT_TRUE(contains(thunder_last_error(), "dim 0 is 3, but the model expects 2"))
      << thunder_last_error();
  thunder_model_free(model);
}

TEST_F(PjrtCpu, MalformedProgram) {
  auto [status, message] = loadError(modelPath("pjrt_malformed"));
  EXPECT_EQ(status, THUNDER_ERROR_LOAD);
  EXPECT_TRUE(contains(message, "model 'pjrt_malformed'"));
  EXPECT_TRUE(contains(message, "compiling the program failed: "));
  // XLA's own diagnostic: the operand types the program gives do not fit its operands.
  EXPECT_TRUE(contains(message, "operand")) << message;
}

TEST_F(PjrtCpu, ProgramDisagreesWithTable) {
  auto [status, message] = loadError(modelPath("pjrt_wrong_output"));
  EXPECT_EQ(status, THUNDER_ERROR_LOAD);
  EXPECT_TRUE(contains(message, "the compiled program does not match the model: the program's "
                                "result 0 has shape [2, 3], but output 0 ('y') has shape "
                                "[3, 2]"));
}

class PjrtPlugin : public ::testing::Test {
protected:
  void SetUp() override {
    if (!THUNDER_TEST_PJRT_ENABLED)
      GTEST_SKIP() << "the runtime was built without PJRT support (no pjrt_c_api.h)";
  }
};

TEST_F(PjrtPlugin, MissingPluginFile) {
  PluginEnv env("/nonexistent/xla_cpu_pjrt.so");
  auto [status, message] = loadError(modelPath("pjrt_add_mul"));
  EXPECT_EQ(status, THUNDER_ERROR_DEVICE);
  EXPECT_TRUE(contains(message, "the PJRT plugin /nonexistent/xla_cpu_pjrt.so (named by "
                                "THUNDER_PJRT_PLUGIN) does not exist"));
  EXPECT_TRUE(contains(message, "model 'pjrt_add_mul'"));
}

TEST_F(PjrtPlugin, NotAPlugin) {
  std::string plugin = fakePlugin("fake_pjrt_no_entry");
  PluginEnv env(plugin);
  auto [status, message] = loadError(modelPath("pjrt_add_mul"));
  EXPECT_EQ(status, THUNDER_ERROR_DEVICE);
  EXPECT_TRUE(contains(message, "the PJRT plugin " + plugin +
                                    " (named by THUNDER_PJRT_PLUGIN) exports no GetPjrtApi: it "
                                    "is not a PJRT plugin"));
}

TEST_F(PjrtPlugin, TooOldApiVersion) {
  std::string plugin = fakePlugin("fake_pjrt_0_40");
  PluginEnv env(plugin);
  auto [status, message] = loadError(modelPath("pjrt_add_mul"));
  EXPECT_EQ(status, THUNDER_ERROR_VERSION);
  EXPECT_TRUE(contains(message, plugin + " (named by THUNDER_PJRT_PLUGIN) implements PJRT C API "
                                         "version 0.40, which is too old"));
  EXPECT_TRUE(contains(message, "needs version 0.57 or newer"));
}

TEST_F(PjrtPlugin, OtherMajorApiVersion) {
  PluginEnv env(fakePlugin("fake_pjrt_1_0"));
  auto [status, message] = loadError(modelPath("pjrt_add_mul"));
  EXPECT_EQ(status, THUNDER_ERROR_VERSION);
  EXPECT_TRUE(contains(message, "implements PJRT C API version 1.0, but this runtime was built "
                                "against version 0."));
  EXPECT_TRUE(contains(message, "(the major versions must match)"));
}

TEST_F(PjrtPlugin, PluginWithoutFunctions) {
  PluginEnv env(fakePlugin("fake_pjrt_0_81"));
  auto [status, message] = loadError(modelPath("pjrt_add_mul"));
  EXPECT_EQ(status, THUNDER_ERROR_VERSION);
  EXPECT_TRUE(contains(message, "(PJRT C API version 0.81) does not provide PJRT_Error_Destroy, "
                                "PJRT_Error_Message, PJRT_Plugin_Initialize"));
}

TEST_F(PjrtPlugin, NoPluginAndNoTpu) {
  if (access("/dev/accel0", F_OK) == 0 || access("/dev/vfio/0", F_OK) == 0)
    GTEST_SKIP() << "this machine may have a TPU";
  PluginEnv env("");
  auto [status, message] = loadError(modelPath("pjrt_add_mul"));
  EXPECT_EQ(status, THUNDER_ERROR_DEVICE);
  EXPECT_TRUE(contains(message, "THUNDER_PJRT_PLUGIN is not set and this machine has no TPU"));
  EXPECT_TRUE(contains(message, "so libtpu was not loaded"));
}

TEST_F(PjrtPlugin, LibtpuWithoutTpuStaysOffTheNetwork) {
  if (access("/dev/accel0", F_OK) == 0 || access("/dev/vfio/0", F_OK) == 0)
    GTEST_SKIP() << "this machine may have a TPU";
  // libtpu named by the user on a machine without a TPU would look for a cloud metadata
  // server; the runtime tells it not to (as JAX does) before loading it.
  unsetenv("TPU_SKIP_MDS_QUERY");
  PluginEnv env(fakePlugin("tpu_fake"));
  auto [status, message] = loadError(modelPath("pjrt_add_mul"));
  EXPECT_EQ(status, THUNDER_ERROR_VERSION) << message; // the fake is too old, after the check
  const char *skip = getenv("TPU_SKIP_MDS_QUERY");
  EXPECT_STREQ(skip ? skip : "(unset)", "1");
  unsetenv("TPU_SKIP_MDS_QUERY");
}

} // namespace
