// Tests of the ExportedProgram importer on bad and edge-case programs: each
// failure is one clear message naming the problem, never a crash.
#include "thunder/Import/Importer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "thunder/Pipelines/Pipelines.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace thunder::import;

namespace {

/// A program `y = op(x)` on a float32 [2, 3] input, in torch 2.13's JSON,
/// with pieces to override.
std::string program(const std::string &target = "torch.ops.aten.relu.default",
                    int schemaMajor = 8, int xDtype = 7,
                    const std::string &verifier = "ATEN",
                    const std::string &extraNodes = "",
                    const std::string &inputSpecs = "",
                    const std::string &graphInputs = "",
                    const std::string &extraValues = "") {
  std::string meta = [&](int dtype) {
    return "{\"dtype\": " + std::to_string(dtype) +
           ", \"sizes\": [{\"as_int\": 2}, {\"as_int\": 3}], \"requires_grad\": "
           "false, \"device\": {\"type\": \"cpu\", \"index\": null}, "
           "\"strides\": [{\"as_int\": 3}, {\"as_int\": 1}], \"storage_offset\": "
           "{\"as_int\": 0}, \"layout\": 7}";
  }(xDtype);
  std::string yMeta = meta;
  return R"({"graph_module": {"graph": {"inputs": [)" + graphInputs +
         R"({"as_tensor": {"name": "x"}}], "outputs": [{"as_tensor": {"name": "y"}}],
    "nodes": [)" + extraNodes + R"({"target": ")" + target + R"(", "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1}],
      "outputs": [{"as_tensor": {"name": "y"}}],
      "metadata": {"stack_trace": "File \"/home/user/model.py\", line 12, in forward\n    return torch.relu(x)\n"},
      "is_hop_single_tensor_return": null, "name": "y"}],
    "tensor_values": {"x": )" + meta + R"(, "y": )" + yMeta + extraValues + R"(},
    "sym_int_values": {}, "sym_bool_values": {}, "is_single_tensor_return": true,
    "custom_obj_values": {}, "sym_float_values": {}},
   "signature": {"input_specs": [)" + inputSpecs + R"({"user_input": {"arg": {"as_tensor": {"name": "x"}}}}],
     "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "y"}}}}]},
   "module_call_graph": [], "metadata": {}, "treespec_namedtuple_fields": {}},
  "opset_version": {"aten": 10}, "range_constraints": {},
  "schema_version": {"major": )" + std::to_string(schemaMajor) + R"(, "minor": 20},
  "verifiers": [")" + verifier + R"("], "torch_version": "2.13.0+cpu", "guards_code": []})";
}

/// Imports `json`, collecting every diagnostic's text.
struct Result {
  bool ok = false;
  std::vector<std::string> errors;
  std::string all() const {
    std::string text;
    for (const std::string &e : errors)
      text += e + "\n";
    return text;
  }
};

Result import(const std::string &json, const WeightMap &weights = {}) {
  mlir::DialectRegistry registry;
  thunder::registerThunderDialects(registry);
  mlir::MLIRContext context(registry);
  Result result;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << d.getLocation() << ": " << d.str();
    result.errors.push_back(text);
    return mlir::success();
  });
  ImportOptions options;
  options.sourceName = "model.pt2";
  result.ok = static_cast<bool>(
      importExportedProgram(context, json, weights, options));
  return result;
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(ImporterTest, ImportsAValidProgram) {
  Result r = import(program());
  EXPECT_TRUE(r.ok) << r.all();
  EXPECT_TRUE(r.errors.empty()) << r.all();
}

TEST(ImporterTest, RejectsAnUnknownSchemaMajorVersion) {
  Result r = import(program("torch.ops.aten.relu.default", /*schemaMajor=*/9));
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.errors.size(), 1u) << r.all();
  EXPECT_TRUE(contains(r.errors[0], "model.pt2: schema version 9.20 is not "
                                    "supported; Thunder reads schema 8.x"))
      << r.all();
}

TEST(ImporterTest, ImportsTheTrainingDialect) {
  Result r = import(program("torch.ops.aten.relu.default", 8, 7, "TRAINING"));
  EXPECT_TRUE(r.ok) << r.all();
}

TEST(ImporterTest, TrainingDialectWithAnUnsupportedOpSuggestsDecomposing) {
  Result r = import(program("torch.ops.aten.cumprod.default", 8, 7, "TRAINING"));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.all(), "unsupported op aten.cumprod.default")) << r.all();
  EXPECT_TRUE(contains(r.all(), "TRAINING dialect: ep.run_decompositions()")) << r.all();
}

TEST(ImporterTest, AtenDialectWithAnUnsupportedOpDoesNotMentionTraining) {
  Result r = import(program("torch.ops.aten.cumprod.default"));
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(contains(r.all(), "TRAINING")) << r.all();
}

TEST(ImporterTest, RejectsAnUnsupportedDtypeNamingTheTensor) {
  // ScalarType 10 is complex64.
  Result r = import(program("torch.ops.aten.relu.default", 8, /*xDtype=*/10));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.all(), "tensor 'x' has dtype complex64, which Thunder "
                                "does not support"))
      << r.all();
}

/// program() with x's sizes replaced by `sizes` (y keeps [2, 3]).
std::string programWithXSizes(const std::string &sizes) {
  std::string json = program();
  const std::string original = R"("sizes": [{"as_int": 2}, {"as_int": 3}])";
  size_t at = json.find(R"("x": {"dtype")");
  at = json.find(original, at);
  EXPECT_NE(at, std::string::npos);
  return json.replace(at, original.size(), R"("sizes": [)" + sizes + "]");
}

// Found by thunder-fuzz-import: a size product past int64 overflowed the
// element counts computed from the type (UBSan: var's divisor), and a
// negative size reached the upsampling tables as a huge count.
TEST(ImporterTest, RejectsSizesWhoseElementCountOverflows) {
  Result r = import(programWithXSizes(
      R"({"as_int": 2}, {"as_int": 4611686018427387904})"));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.all(), "tensor value 'x' has more elements than an "
                                "int64_t counts"))
      << r.all();
}

TEST(ImporterTest, RejectsANegativeSize) {
  Result r = import(programWithXSizes(R"({"as_int": 2}, {"as_int": -3})"));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.all(), "tensor value 'x' has a negative size (-3)"))
      << r.all();
}

TEST(ImporterTest, ReportsEveryUnsupportedOpAtOnceWithSourceLines) {
  std::string other =
      R"({"target": "torch.ops.aten.cumprod.default", "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1}],
      "outputs": [{"as_tensor": {"name": "s"}}, {"as_tensor": {"name": "s_unused_1"}}],
      "metadata": {"stack_trace": "File \"/home/user/model.py\", line 11, in forward"}, "name": "s"},)";
  Result r = import(program("torch.ops.aten.cummax.default", 8, 7, "ATEN", other));
  EXPECT_FALSE(r.ok);
  std::string all = r.all();
  EXPECT_TRUE(contains(all, "unsupported op aten.cumprod.default (1 use) at "
                            "/home/user/model.py:11"))
      << all;
  EXPECT_TRUE(contains(all, "unsupported op aten.cummax.default (1 use) at "
                            "/home/user/model.py:12"))
      << all;
  EXPECT_TRUE(contains(all, "2 ops are not supported by Thunder: "
                            "aten.cumprod.default, aten.cummax.default"))
      << all;
  // The location is the user's line.
  EXPECT_TRUE(contains(all, "/home/user/model.py\":11")) << all;
}

/// A program whose relu reads a parameter `w` [2, 3] instead of the input.
std::string programWithWeight() {
  std::string json = program(
      "torch.ops.aten.relu.default", 8, 7, "ATEN", "",
      R"({"parameter": {"arg": {"name": "p_w"}, "parameter_name": "w"}},)",
      R"({"as_tensor": {"name": "p_w"}},)",
      R"(, "p_w": {"dtype": 7, "sizes": [{"as_int": 2}, {"as_int": 3}], "requires_grad": true, "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 3}, {"as_int": 1}], "storage_offset": {"as_int": 0}, "layout": 7})");
  // Make relu read p_w.
  size_t at = json.find(R"("arg": {"as_tensor": {"name": "x"}}, "kind": 1)");
  json.replace(at, std::string(R"("arg": {"as_tensor": {"name": "x"}})").size(),
               R"("arg": {"as_tensor": {"name": "p_w"}})");
  return json;
}

TEST(ImporterTest, ImportsAWeightWithoutCopyingIt) {
  std::vector<float> w(6, 0.5f);
  WeightMap weights;
  weights["w"] = WeightData{thunder::DType::Float32, {2, 3},
                            llvm::ArrayRef<char>(reinterpret_cast<char *>(w.data()),
                                                 w.size() * sizeof(float))};
  Result r = import(programWithWeight(), weights);
  EXPECT_TRUE(r.ok) << r.all();
}

TEST(ImporterTest, RejectsAMissingWeight) {
  Result r = import(programWithWeight());
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.all(), "weight 'w' is used by the program but was not "
                                "provided"))
      << r.all();
}

TEST(ImporterTest, RejectsAWeightOfTheWrongSize) {
  std::vector<float> w(5, 0.5f);
  WeightMap weights;
  weights["w"] = WeightData{thunder::DType::Float32, {2, 3},
                            llvm::ArrayRef<char>(reinterpret_cast<char *>(w.data()),
                                                 w.size() * sizeof(float))};
  Result r = import(programWithWeight(), weights);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.all(), "weight 'w' has 20 bytes, expected 24")) << r.all();
}

TEST(ImporterTest, RejectsAWeightOfTheWrongShape) {
  std::vector<float> w(6, 0.5f);
  WeightMap weights;
  weights["w"] = WeightData{thunder::DType::Float32, {3, 2},
                            llvm::ArrayRef<char>(reinterpret_cast<char *>(w.data()),
                                                 w.size() * sizeof(float))};
  Result r = import(programWithWeight(), weights);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.all(), "weight 'w' is float32 [3, 2], but the program "
                                "expects 'tensor<2x3xf32>'"))
      << r.all();
}

TEST(ImporterTest, RejectsMalformedJson) {
  Result r = import("{\"graph_module\": ");
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.all(), "model.pt2: the program: invalid JSON"))
      << r.all();
  Result notProgram = import("[1, 2, 3]");
  EXPECT_FALSE(notProgram.ok);
  EXPECT_TRUE(contains(notProgram.all(), "not an object")) << notProgram.all();
  Result noVersion = import("{}");
  EXPECT_FALSE(noVersion.ok);
  EXPECT_TRUE(contains(noVersion.all(), "no schema_version")) << noVersion.all();
}

TEST(ImporterTest, DeeplyNestedJsonIsAnErrorNotAStackOverflow) {
  Result r = import(std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.all(), "nested more than")) << r.all();
}

TEST(ImporterTest, TruncatedJsonNeverCrashes) {
  std::string json = program();
  for (size_t length = 0; length < json.size(); length += 13) {
    Result r = import(json.substr(0, length));
    EXPECT_FALSE(r.ok) << "prefix of " << length << " bytes imported";
    EXPECT_FALSE(r.errors.empty());
  }
}

// Found by test/fuzz/ImportFuzzer.cpp: an op whose result type the dialect
// infers was built with ODS's inferring builder, which aborts the process
// (report_fatal_error "Failed to infer result type(s)") when the operands or
// attributes make inference fail; here a negative convolution stride.
TEST(ImporterTest, AnOpWhoseTypeCannotBeInferredIsAnErrorNotAnAbort) {
  const std::string a4 =
      R"({"dtype": 7, "sizes": [{"as_int": 1}, {"as_int": 1}, {"as_int": 4}, {"as_int": 4}], "requires_grad": false, "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 16}, {"as_int": 16}, {"as_int": 4}, {"as_int": 1}], "storage_offset": {"as_int": 0}, "layout": 7})";
  for (const char *stride : {"-1, 1", "0, 1"}) {
    std::string json = program("torch.ops.aten.convolution.default", 8, 7, "ATEN", "",
                               R"({"user_input": {"arg": {"as_tensor": {"name": "a"}}}},)",
                               R"({"as_tensor": {"name": "a"}},)", ", \"a\": " + a4);
    std::string self = R"([{"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1}])";
    json.replace(json.find(self), self.size(),
                 R"([{"name": "input", "arg": {"as_tensor": {"name": "a"}}, "kind": 1},
                     {"name": "weight", "arg": {"as_tensor": {"name": "a"}}, "kind": 1},
                     {"name": "bias", "arg": {"as_none": true}, "kind": 1},
                     {"name": "stride", "arg": {"as_ints": [)" +
                     std::string(stride) + R"(]}, "kind": 1},
                     {"name": "padding", "arg": {"as_ints": [0, 0]}, "kind": 1},
                     {"name": "dilation", "arg": {"as_ints": [1, 1]}, "kind": 1},
                     {"name": "transposed", "arg": {"as_bool": false}, "kind": 1},
                     {"name": "output_padding", "arg": {"as_ints": [0, 0]}, "kind": 1},
                     {"name": "groups", "arg": {"as_int": 1}, "kind": 1}])");
    Result r = import(json);
    EXPECT_FALSE(r.ok) << "stride " << stride;
    EXPECT_TRUE(contains(r.all(), "thunder.convolution")) << r.all();
  }
}

TEST(ImporterTest, ExamineCountsOpsAndLines) {
  auto report = examineExportedProgram(
      program("torch.ops.aten.cummax.default"), "model.pt2");
  ASSERT_TRUE(static_cast<bool>(report)) << llvm::toString(report.takeError());
  ASSERT_EQ(report->ops.size(), 1u);
  EXPECT_EQ(report->ops[0].name, "aten.cummax.default");
  EXPECT_FALSE(report->ops[0].supported);
  EXPECT_EQ(report->ops[0].sourceLines,
            std::vector<std::string>{"/home/user/model.py:12"});
  EXPECT_EQ(report->numUnsupported(), 1);
  std::string text = formatExamineReport(*report);
  EXPECT_TRUE(contains(text, "1 unsupported (1 nodes)")) << text;
  EXPECT_TRUE(contains(text, "at /home/user/model.py:12")) << text;
}

TEST(ImporterTest, SupportedOpsAreSorted) {
  std::vector<std::string> ops = supportedOps();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  EXPECT_TRUE(isSupportedOp("aten.add.Tensor"));
  EXPECT_FALSE(isSupportedOp("aten.cumprod.default"));
}

} // namespace
