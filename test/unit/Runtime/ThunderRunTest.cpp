// Tests of the thunder-run tool on the fake add_one model: random and given inputs, --save,
// --check (pass, fail, by order), --bench with threads, and its errors and exit codes.
#include "Npz.h"

#include "thunder-c/artifact.h"

#include "Contains.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace thunder::npz;

namespace {

struct Result {
  int exitCode;
  std::string output; // stdout and stderr
};

/// Runs thunder-run with `args` (shell words) on the fake add_one model.
Result thunderRun(const std::string &args,
                  const std::string &model = std::string(THUNDER_TEST_MODELS_DIR) +
                                             "/libadd_one.so") {
  std::string command = std::string(THUNDER_RUN_PATH) + " '" + model + "' " + args + " 2>&1";
  Result result{-1, ""};
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe)
    return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    result.output.append(buffer, n);
  int status = pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

class RuntimeThunderRun : public ::testing::Test {
protected:
  std::string temp(const std::string &name) {
    std::string path = ::testing::TempDir() + "/thunder_run_" + std::to_string(getpid()) + "_" +
                       ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                       name;
    files.push_back(path);
    return path;
  }
  void TearDown() override {
    for (const std::string &file : files)
      unlink(file.c_str());
  }

  /// Inputs x [3, 4] = 0, 0.5, 1, ... and y [3] = 4, 5, 6, under the given names.
  std::string writeInputs(const std::string &xName = "x", const std::string &yName = "y",
                          const std::string &yDescr = "<i8") {
    NamedArray x{xName, {"<f4", {3, 4}, {}}}, y{yName, {yDescr, {3}, {}}};
    x.array.data.resize(12 * sizeof(float));
    y.array.data.resize(3 * (yDescr == "<i8" ? 8 : 4));
    for (size_t i = 0; i < 12; ++i)
      storeElement(x.array.data.data(), THUNDER_DTYPE_FLOAT32, i, 0.5 * static_cast<double>(i));
    for (size_t i = 0; i < 3; ++i)
      storeElement(y.array.data.data(),
                   yDescr == "<i8" ? THUNDER_DTYPE_INT64 : THUNDER_DTYPE_FLOAT32, i,
                   4.0 + static_cast<double>(i));
    std::string path = temp("inputs.npz"), error;
    EXPECT_TRUE(writeNpz(path, {x, y}, error)) << error;
    return path;
  }

  /// The outputs for writeInputs(), with x_plus_one off by `error` at element 5.
  std::string writeExpected(float error, const std::string &first = "x_plus_one",
                            const std::string &second = "y_times_two") {
    NamedArray a{first, {"<f4", {3, 4}, std::vector<uint8_t>(48)}},
        b{second, {"<i8", {3}, std::vector<uint8_t>(24)}};
    for (size_t i = 0; i < 12; ++i)
      storeElement(a.array.data.data(), THUNDER_DTYPE_FLOAT32, i,
                   0.5 * static_cast<double>(i) + 1.0 + (i == 5 ? error : 0.0));
    for (size_t i = 0; i < 3; ++i)
      storeElement(b.array.data.data(), THUNDER_DTYPE_INT64, i, 2.0 * (4.0 + static_cast<double>(i)));
    std::string path = temp("expected_" + first + ".npz"), message;
    EXPECT_TRUE(writeNpz(path, {a, b}, message)) << message;
    return path;
  }

  std::vector<std::string> files;
};

TEST_F(RuntimeThunderRun, RandomInputsWithDimAndSave) {
  std::string out = temp("out.npz");
  Result result = thunderRun("--dim s0=3 --seed 1 --save " + out);
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "model add_one (target cpu, device cpu; runtime "));
  EXPECT_TRUE(contains(result.output, "\n  runs on cpu")); // the host CPU
  EXPECT_TRUE(contains(result.output, "0 x: float32[s0, 4]  s0 in [1, 64]"));
  EXPECT_TRUE(contains(result.output, "1 y_times_two: int64[s0]"));
  EXPECT_TRUE(contains(result.output, "s0 = 3 (--dim)"));
  EXPECT_TRUE(contains(result.output, "output 0 x_plus_one: float32 [3, 4]"));
  EXPECT_TRUE(contains(result.output, "  min "));

  std::vector<NamedArray> arrays;
  std::string error;
  ASSERT_TRUE(readNpz(out, arrays, error)) << error;
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].name, "x_plus_one");
  EXPECT_EQ(arrays[0].array.shape, (std::vector<int64_t>{3, 4}));
  // Random floats are in [-1, 1], so x + 1 is in [0, 2]; random ints in [0, 10), so y * 2 is
  // even and below 20.
  for (size_t i = 0; i < 12; ++i) {
    double value = loadElement(arrays[0].array.data.data(), THUNDER_DTYPE_FLOAT32, i);
    EXPECT_TRUE(value >= 0 && value <= 2) << value;
  }
  for (size_t i = 0; i < 3; ++i) {
    double value = loadElement(arrays[1].array.data.data(), THUNDER_DTYPE_INT64, i);
    EXPECT_TRUE(value >= 0 && value < 20 && std::fmod(value, 2) == 0) << value;
  }
}

TEST_F(RuntimeThunderRun, DynamicDimsDefaultToTheirMinimum) {
  Result result = thunderRun("");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "s0 = 1 (its minimum, at least 1; set it with --dim s0=N)"));
  EXPECT_TRUE(contains(result.output, "output 1 y_times_two: int64 [1]"));
}

TEST_F(RuntimeThunderRun, GivenInputsAndCheck) {
  std::string inputs = writeInputs(), out = temp("out.npz");
  Result result = thunderRun("--inputs " + inputs + " --save " + out + " --check " +
                             writeExpected(0.0f));
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "check x_plus_one against x_plus_one: max abs err 0"));
  EXPECT_TRUE(contains(result.output, "check: PASS"));
  EXPECT_TRUE(contains(result.output, "values: 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, ..."));

  std::vector<NamedArray> arrays;
  std::string error;
  ASSERT_TRUE(readNpz(out, arrays, error)) << error;
  for (size_t i = 0; i < 12; ++i)
    EXPECT_EQ(loadElement(arrays[0].array.data.data(), THUNDER_DTYPE_FLOAT32, i), 0.5 * i + 1);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(loadElement(arrays[1].array.data.data(), THUNDER_DTYPE_INT64, i), 2.0 * (4 + i));
}

TEST_F(RuntimeThunderRun, CheckFailsOutsideTheTolerance) {
  std::string inputs = writeInputs();
  Result result = thunderRun("--inputs " + inputs + " --check " + writeExpected(1e-3f));
  EXPECT_EQ(result.exitCode, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "1 of 12 elements outside rtol 1e-05 atol 1e-08: FAIL"));
  EXPECT_TRUE(contains(result.output, "check: FAIL (1 of 2 outputs)"));

  // A looser tolerance passes the same difference.
  result = thunderRun("--inputs " + inputs + " --check " + writeExpected(1e-3f) +
                      " --atol 2e-3");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "check: PASS"));
}

TEST_F(RuntimeThunderRun, ArraysWithoutNamesGoInOrder) {
  Result result = thunderRun("--inputs " + writeInputs("arr_0", "arr_1") + " --check " +
                             writeExpected(0.0f, "arr_0", "arr_1"));
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "does not name every input (arr_0, arr_1); taking its "
                                       "arrays in order as (x, y)"));
  EXPECT_TRUE(contains(result.output, "check: PASS"));
}

TEST_F(RuntimeThunderRun, BenchWithThreads) {
  Result result = thunderRun("--dim s0=8 --bench 20 --warmup 2 --threads 4");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "bench: 20 runs x 4 threads after 2 warmup runs each: median "));
  EXPECT_TRUE(contains(result.output, " p90 "));
  EXPECT_TRUE(contains(result.output, "runs/s"));
}

TEST_F(RuntimeThunderRun, BenchOnOneThread) {
  // One thread runs on thunder-run's own (its OpenMP team already exists).
  Result result = thunderRun("--dim s0=8 --bench 5 --warmup 1");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "bench: 5 runs x 1 thread after 1 warmup runs each: median "));
  EXPECT_TRUE(contains(result.output, "runs/s"));
}

TEST_F(RuntimeThunderRun, Errors) {
  Result result = thunderRun("", std::string(THUNDER_TEST_MODELS_DIR) + "/libnope.so");
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_TRUE(contains(result.output, "thunder-run: error: cannot load model"));

  result = thunderRun("--dim t=3");
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_TRUE(contains(result.output, "--dim t: the model has no dynamic dim with that symbol "
                                       "(its symbols: s0)"));

  // The runtime's validation reaches the user unchanged.
  result = thunderRun("--dim s0=100");
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_TRUE(contains(result.output, "input 0 ('x'): dim 0 (symbol s0) is 100, outside its range [1, 64]"));

  result = thunderRun("--inputs " + writeInputs("x", "y", "<f4"));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_TRUE(contains(result.output, "input 1 ('y'): " + files.back() +
                                       " holds '<f4' (float32), but the model expects int64"));

  result = thunderRun("--inputs " + writeInputs("a", "b") + "x");
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_TRUE(contains(result.output, "cannot open"));

  result = thunderRun("--frobnicate 1");
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_TRUE(contains(result.output, "unknown option --frobnicate"));
  result = thunderRun("--bench 0");
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_TRUE(contains(result.output, "--bench expects an integer of at least 1, got '0'"));
}

TEST_F(RuntimeThunderRun, CompressedInputsAreRefusedClearly) {
  Result result = thunderRun("--inputs " + std::string(THUNDER_TEST_INPUTS_DIR) +
                             "/numpy_savez_compressed.npz");
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_TRUE(contains(result.output, "np.savez_compressed"));
}

} // namespace
