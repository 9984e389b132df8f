// Unit tests for thunder/Import/Pt2Archive.h: a real torch.export.save archive, then one
// broken archive per check, each with the message a user would see.
//
// Inputs/linear.pt2 comes from Inputs/make_fixtures.py (torch 2.13):
//
//   torch.manual_seed(0)
//   class LinearWithBuffers(torch.nn.Module):      # fc = Linear(4, 3),
//       ...                                        # scale: persistent float32 buffer,
//       def forward(self, x):                      # shift: non-persistent int64 buffer
//           return self.fc(x) * self.scale + self.shift
//   ep = torch.export.export(m, (torch.randn(2, 4),)).run_decompositions()
//   torch.export.save(ep, "linear.pt2")
//
// The expected values below are what that script prints.
#include "thunder/Import/Pt2Archive.h"

#include "TestZipWriter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace thunder;
using namespace thunder::test;

namespace {

const std::vector<float> kFcWeight = {
    -0.003743410110473633f, 0.26822179555892944f,  -0.4115225672721863f,
    -0.3679695129394531f,   -0.19257718324661255f, 0.13407868146896362f,
    -0.009906589984893799f, 0.39644473791122437f,  -0.04437202215194702f,
    0.1323062777519226f,    -0.15110653638839722f, -0.09828269481658936f};
const std::vector<float> kFcBias = {-0.4776742458343506f, -0.33114105463027954f,
                                    -0.20611155033111572f};
const std::vector<float> kScale = {0.5f, 2.0f, -1.0f};
const std::vector<int64_t> kShift = {0, 1, 2};

std::string fixturePath() {
  llvm::SmallString<256> path(THUNDER_UNIT_SOURCE_DIR);
  llvm::sys::path::append(path, "Import", "Inputs", "linear.pt2");
  return std::string(path);
}

std::string readFixture() {
  auto buffer = llvm::MemoryBuffer::getFile(fixturePath(), /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    ADD_FAILURE() << "cannot read " << fixturePath();
    return "";
  }
  return (*buffer)->getBuffer().str();
}

template <typename T> std::vector<T> elementsOf(llvm::StringRef bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

llvm::Expected<std::unique_ptr<Pt2Archive>> openBytes(const std::string &bytes) {
  return Pt2Archive::fromBuffer(llvm::MemoryBuffer::getMemBufferCopy(bytes, "t.pt2"), "t.pt2");
}

/// The message of an Expected that must hold an error ("" and a test failure otherwise).
template <typename T> std::string errorOf(llvm::Expected<T> value) {
  if (value) {
    ADD_FAILURE() << "expected an error";
    return "";
  }
  return llvm::toString(value.takeError());
}

/// Whether `text` contains `part`, printing both when it does not.
::testing::AssertionResult contains(const std::string &text, const std::string &part) {
  if (text.find(part) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

/// A PayloadConfig entry; `dtype` is a ScalarType number (7 = float32).
std::string payloadJson(const std::string &fqn, const std::string &path, int dtype,
                        const std::vector<int64_t> &sizes, const std::vector<int64_t> &strides,
                        int64_t offset = 0, bool pickled = false) {
  auto ints = [](const std::vector<int64_t> &values) {
    std::string out = "[";
    for (size_t i = 0; i < values.size(); ++i)
      out += (i ? ", " : "") + ("{\"as_int\": " + std::to_string(values[i]) + "}");
    return out + "]";
  };
  return "\"" + fqn + "\": {\"path_name\": \"" + path +
         "\", \"is_param\": true, \"use_pickle\": " + (pickled ? "true" : "false") +
         ", \"tensor_meta\": {\"dtype\": " + std::to_string(dtype) +
         ", \"sizes\": " + ints(sizes) + ", \"requires_grad\": true, \"device\": {\"type\": "
         "\"cpu\", \"index\": null}, \"strides\": " + ints(strides) +
         ", \"storage_offset\": {\"as_int\": " + std::to_string(offset) + "}, \"layout\": 7}}";
}

std::string configJson(const std::vector<std::string> &entries) {
  std::string out = "{\"config\": {";
  for (size_t i = 0; i < entries.size(); ++i)
    out += (i ? ", " : "") + entries[i];
  return out + "}}";
}

/// The records of a small valid archive under root "t": fc.weight float32 [3, 4] in
/// weight_0. Tests change one record to break it in one way.
struct Records {
  std::vector<TestZipRecord> list;

  Records() {
    set("archive_format", "pt2");
    set("archive_version", "0");
    set("byteorder", "little");
    set("models/model.json", "{\"graph_module\": {}}");
    set("data/weights/model_weights_config.json",
        configJson({payloadJson("fc.weight", "weight_0", 7, {3, 4}, {4, 1})}));
    set("data/weights/weight_0", std::string(48, '\0'));
    set("data/constants/model_constants_config.json", configJson({}));
  }
  void set(const std::string &path, const std::string &data) {
    for (TestZipRecord &record : list)
      if (record.name == "t/" + path) {
        record.data = data;
        return;
      }
    list.push_back({"t/" + path, data});
  }
  void remove(const std::string &path) {
    llvm::erase_if(list, [&](const TestZipRecord &r) { return r.name == "t/" + path; });
  }
  std::string zip() const { return writeTestZip(list); }
};

//===----------------------------------------------------------------------===//
// A real archive
//===----------------------------------------------------------------------===//

TEST(Pt2ArchiveTest, ReadsTorchFixture) {
  auto archive = Pt2Archive::open(fixturePath());
  ASSERT_TRUE(!!archive) << llvm::toString(archive.takeError());
  EXPECT_EQ((*archive)->root(), "linear");

  auto json = (*archive)->modelJson();
  ASSERT_TRUE(!!json) << llvm::toString(json.takeError());
  EXPECT_TRUE(json->starts_with("{"));
  auto program = (*archive)->parseModelJson();
  ASSERT_TRUE(!!program) << llvm::toString(program.takeError());
  ASSERT_NE(program->getAsObject(), nullptr);
  EXPECT_NE(program->getAsObject()->getObject("graph_module"), nullptr);

  auto weights = (*archive)->weights();
  ASSERT_TRUE(!!weights) << llvm::toString(weights.takeError());
  ASSERT_EQ(weights->size(), 3u); // sorted by FQN
  const Payload &bias = (*weights)[0], &weight = (*weights)[1], &scale = (*weights)[2];

  EXPECT_EQ(weight.fqn, "fc.weight");
  EXPECT_EQ(weight.pathName, "weight_0");
  EXPECT_TRUE(weight.isParam);
  EXPECT_EQ(weight.dtype, DType::Float32);
  EXPECT_EQ(weight.sizes, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(weight.strides, (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(weight.storageOffset, 0);
  EXPECT_FALSE(weight.zeroFilled);
  EXPECT_EQ(elementsOf<float>(weight.storage), kFcWeight);

  EXPECT_EQ(bias.fqn, "fc.bias");
  EXPECT_EQ(bias.sizes, (std::vector<int64_t>{3}));
  EXPECT_EQ(elementsOf<float>(bias.storage), kFcBias);

  // A persistent buffer is a weight that is not a parameter.
  EXPECT_EQ(scale.fqn, "scale");
  EXPECT_FALSE(scale.isParam);
  EXPECT_EQ(elementsOf<float>(scale.storage), kScale);

  // A non-persistent buffer is a constant.
  auto constants = (*archive)->constants();
  ASSERT_TRUE(!!constants) << llvm::toString(constants.takeError());
  ASSERT_EQ(constants->size(), 1u);
  EXPECT_EQ((*constants)[0].fqn, "shift");
  EXPECT_EQ((*constants)[0].pathName, "tensor_0");
  EXPECT_EQ((*constants)[0].dtype, DType::Int64);
  EXPECT_EQ(elementsOf<int64_t>((*constants)[0].storage), kShift);
}

TEST(Pt2ArchiveTest, ScalarTypeNumbers) {
  EXPECT_EQ(dtypeFromScalarType(7), DType::Float32);
  EXPECT_EQ(dtypeFromScalarType(13), DType::BFloat16);
  EXPECT_EQ(dtypeFromScalarType(29), DType::Float8E4M3FN);
  EXPECT_EQ(dtypeFromScalarType(10), std::nullopt);
  EXPECT_STREQ(scalarTypeName(10), "complex64");
  EXPECT_STREQ(scalarTypeName(1), "uint8");
  EXPECT_STREQ(scalarTypeName(12), "bool");
  EXPECT_STREQ(scalarTypeName(-3), "unknown");
  // Every Thunder dtype is reachable from exactly one ScalarType.
  int reachable = 0;
  for (int i = 0; i < 64; ++i)
    reachable += dtypeFromScalarType(i).has_value();
  EXPECT_EQ(reachable, kNumDTypes);
}

TEST(Pt2ArchiveTest, SharedStorageOffsetsAndZeroFilledRecords) {
  Records records;
  // Two FQNs view one 6-element storage (the second from element 2), a third is all zeros.
  records.set("data/weights/model_weights_config.json",
              configJson({payloadJson("base", "weight_0", 2, {6}, {1}),
                          payloadJson("tail", "weight_0", 2, {2, 2}, {2, 1}, 2),
                          payloadJson("zeros", "weight_1", 7, {5, 7}, {7, 1})}));
  records.set("data/weights/weight_0", "\x01\x02\x03\x04\x05\x06");
  records.set("data/weights/weight_1", "");
  auto archive = openBytes(records.zip());
  ASSERT_TRUE(!!archive) << llvm::toString(archive.takeError());
  auto weights = (*archive)->weights();
  ASSERT_TRUE(!!weights) << llvm::toString(weights.takeError());
  ASSERT_EQ(weights->size(), 3u);
  EXPECT_EQ((*weights)[0].storage.data(), (*weights)[1].storage.data());
  EXPECT_EQ((*weights)[1].storageOffset, 2);
  EXPECT_EQ((*weights)[1].dtype, DType::Int8);
  EXPECT_TRUE((*weights)[2].zeroFilled);
  EXPECT_TRUE((*weights)[2].storage.empty());
}

TEST(Pt2ArchiveTest, MissingConfigsMeanNoPayloads) {
  Records records;
  records.remove("data/weights/model_weights_config.json");
  records.remove("data/constants/model_constants_config.json");
  auto archive = openBytes(records.zip());
  ASSERT_TRUE(!!archive) << llvm::toString(archive.takeError());
  auto weights = (*archive)->weights();
  ASSERT_TRUE(!!weights);
  EXPECT_TRUE(weights->empty());
  auto constants = (*archive)->constants();
  ASSERT_TRUE(!!constants);
  EXPECT_TRUE(constants->empty());
}

//===----------------------------------------------------------------------===//
// Not an archive at all
//===----------------------------------------------------------------------===//

TEST(Pt2ArchiveTest, RejectsNonZip) {
  EXPECT_EQ(errorOf(openBytes("def forward(self, x): return x  # a Python file")),
            "t.pt2: not a zip archive (no end-of-central-directory record)");
}

TEST(Pt2ArchiveTest, RejectsEmptyFile) {
  EXPECT_EQ(errorOf(openBytes("")), "t.pt2: empty file (0 bytes); not a zip archive");
}

TEST(Pt2ArchiveTest, RejectsNonexistentPath) {
  EXPECT_EQ(errorOf(Pt2Archive::open("/nonexistent/model.pt2")),
            "/nonexistent/model.pt2: cannot open: No such file or directory");
}

TEST(Pt2ArchiveTest, RejectsEveryTruncationOfTheFixture) {
  std::string bytes = readFixture();
  ASSERT_GT(bytes.size(), 1000u);
  // Cutting the tail loses the end records; cutting the head shifts every offset. Either way
  // the reader must fail cleanly (run under ASan/UBSan by the fuzz build).
  for (size_t length = 0; length < bytes.size(); length += 97) {
    SCOPED_TRACE("length " + std::to_string(length));
    std::string message = errorOf(openBytes(bytes.substr(0, length)));
    EXPECT_TRUE(contains(message, "t.pt2: "));
    message = errorOf(openBytes(bytes.substr(bytes.size() - length)));
    EXPECT_TRUE(contains(message, "t.pt2: "));
  }
  EXPECT_EQ(errorOf(openBytes(bytes.substr(0, bytes.size() - 1000))),
            "t.pt2: truncated zip archive (no end-of-central-directory record; the file was "
            "probably cut short)");
}

TEST(Pt2ArchiveTest, RejectsTruncatedWeightRecord) {
  // The end records survive but the weight's bytes run past the end of the file.
  TestZipRecord weight{"t/data/weights/weight_0", std::string(48, '\0')};
  weight.claimedSize = 4800;
  Records records;
  records.remove("data/weights/weight_0");
  records.list.push_back(weight);
  std::string bytes = records.zip();
  EXPECT_TRUE(contains(errorOf(openBytes(bytes)),
                       "t.pt2: truncated: entry 't/data/weights/weight_0' needs bytes up to "));
  EXPECT_TRUE(contains(errorOf(openBytes(bytes)),
                       " but the file has " + std::to_string(bytes.size())));
}

TEST(Pt2ArchiveTest, RejectsLegacyTorch27Layout) {
  std::string bytes = writeTestZip({{"serialized_exported_program.json", "{}"},
                                    {"serialized_state_dict.pt", ""}, {"version", "8.0"}});
  EXPECT_TRUE(contains(errorOf(openBytes(bytes)),
                       "t.pt2: written by torch.export.save from torch 2.7 or older"));
}

TEST(Pt2ArchiveTest, RejectsZipsWithoutRootFolder) {
  EXPECT_EQ(errorOf(openBytes(writeTestZip({}))),
            "t.pt2: empty zip archive; not a torch.export archive");
  EXPECT_EQ(errorOf(openBytes(writeTestZip({{"README", "hi"}, {"a/b", ""}}))),
            "t.pt2: not a torch.export archive: the first entry 'README' is not inside a root "
            "folder");
}

TEST(Pt2ArchiveTest, RejectsTorchSaveCheckpoint) {
  std::string bytes = writeTestZip({{"archive/data.pkl", "\x80\x02}q\x00."}});
  EXPECT_EQ(errorOf(openBytes(bytes)),
            "t.pt2: a torch.save file (it has data.pkl), not a torch.export.save archive");
}

//===----------------------------------------------------------------------===//
// Container records
//===----------------------------------------------------------------------===//

TEST(Pt2ArchiveTest, RejectsWrongArchiveFormat) {
  Records records;
  records.set("archive_format", "pt3");
  EXPECT_EQ(errorOf(openBytes(records.zip())),
            "t.pt2: archive_format is 'pt3', expected 'pt2': not a torch.export archive");
}

TEST(Pt2ArchiveTest, RejectsMissingArchiveFormat) {
  Records records;
  records.remove("archive_format");
  EXPECT_EQ(errorOf(openBytes(records.zip())),
            "t.pt2: missing record 'archive_format': not a torch.export archive?");
}

TEST(Pt2ArchiveTest, RejectsWrongArchiveVersion) {
  Records records;
  records.set("archive_version", "1");
  EXPECT_EQ(errorOf(openBytes(records.zip())),
            "t.pt2: archive_version is '1'; this Thunder reads version 0 (torch.export.save "
            "from torch 2.9 to 2.13)");
}

TEST(Pt2ArchiveTest, RejectsBigEndianArchive) {
  Records records;
  records.set("byteorder", "big");
  EXPECT_EQ(errorOf(openBytes(records.zip())),
            "t.pt2: byteorder is 'big'; Thunder reads archives saved on little-endian machines "
            "only");
}

TEST(Pt2ArchiveTest, RejectsMissingModelJson) {
  Records records;
  records.remove("models/model.json");
  records.set("models/encoder.json", "{}");
  auto archive = openBytes(records.zip());
  ASSERT_TRUE(!!archive) << llvm::toString(archive.takeError());
  EXPECT_EQ(errorOf((*archive)->modelJson()),
            "t.pt2: missing record 'models/model.json': not a torch.export archive? (it has "
            "models 'encoder')");
  EXPECT_TRUE(!!(*archive)->modelJson("encoder"));
}

TEST(Pt2ArchiveTest, RejectsDeeplyNestedModelJson) {
  // 64K levels overflow llvm::json::parse's recursion; the limit turns that into an error.
  Records records;
  records.set("models/model.json", std::string(65536, '[') + std::string(65536, ']'));
  auto archive = openBytes(records.zip());
  ASSERT_TRUE(!!archive) << llvm::toString(archive.takeError());
  EXPECT_EQ(errorOf((*archive)->parseModelJson()),
            "t.pt2: models/model.json: JSON nested more than 1000 levels deep");
  // Brackets inside strings do not count.
  records.set("models/model.json", "{\"a\": \"" + std::string(5000, '[') + "\\\"\"}");
  archive = openBytes(records.zip());
  ASSERT_TRUE(!!archive);
  EXPECT_TRUE(!!(*archive)->parseModelJson());
}

TEST(Pt2ArchiveTest, RejectsCompressedEntry) {
  Records records;
  for (TestZipRecord &record : records.list)
    if (record.name == "t/models/model.json")
      record.method = ZipArchive::Deflate;
  auto archive = openBytes(records.zip());
  ASSERT_TRUE(!!archive) << llvm::toString(archive.takeError());
  EXPECT_EQ(errorOf((*archive)->modelJson()),
            "t.pt2: entry 't/models/model.json' is compressed (method 8); torch.export.save "
            "writes uncompressed archives");
}

//===----------------------------------------------------------------------===//
// Payloads
//===----------------------------------------------------------------------===//

/// The error of weights() on `records`, which must open.
std::string weightsError(const Records &records) {
  auto archive = openBytes(records.zip());
  if (!archive) {
    ADD_FAILURE() << llvm::toString(archive.takeError());
    return "";
  }
  return errorOf((*archive)->weights());
}

TEST(Pt2ArchiveTest, RejectsMissingWeightRecord) {
  Records records;
  records.remove("data/weights/weight_0");
  EXPECT_EQ(weightsError(records),
            "t.pt2: weight 'fc.weight': record 'data/weights/weight_0' is missing");
}

TEST(Pt2ArchiveTest, RejectsWeightRecordOfWrongSize) {
  Records records;
  records.set("data/weights/weight_0", std::string(12, '\0'));
  EXPECT_EQ(weightsError(records),
            "t.pt2: weight 'fc.weight' (data/weights/weight_0): record has 12 bytes, the "
            "float32 tensor [3, 4] with strides [4, 1] needs 48");
}

TEST(Pt2ArchiveTest, ChecksTheStridedViewNotTheElementCount) {
  // A [2, 2] view with stride 3 from offset 1 reaches element 1 + 3 + 1 = 5: 6 elements.
  Records records;
  records.set("data/weights/model_weights_config.json",
              configJson({payloadJson("v", "weight_0", 5, {2, 2}, {3, 1}, 1)}));
  records.set("data/weights/weight_0", std::string(40, '\0'));
  EXPECT_EQ(weightsError(records),
            "t.pt2: weight 'v' (data/weights/weight_0): record has 40 bytes, the int64 tensor "
            "[2, 2] with strides [3, 1] and storage offset 1 needs 48");
  records.set("data/weights/weight_0", std::string(48, '\0'));
  auto archive = openBytes(records.zip());
  ASSERT_TRUE(!!archive);
  EXPECT_TRUE(!!(*archive)->weights());
}

TEST(Pt2ArchiveTest, RejectsOverflowingStrides) {
  Records records;
  records.set("data/weights/model_weights_config.json",
              configJson({payloadJson("w", "weight_0", 7, {1 << 20, 1 << 20},
                                      {int64_t(1) << 42, 1})}));
  EXPECT_TRUE(contains(weightsError(records), "addresses more bytes than an int64 can count"));
}

TEST(Pt2ArchiveTest, RejectsComplex64Weight) {
  Records records;
  records.set("data/weights/model_weights_config.json",
              configJson({payloadJson("fc.weight", "weight_0", 10, {3, 4}, {4, 1})}));
  EXPECT_EQ(weightsError(records),
            "t.pt2: weight 'fc.weight' has dtype complex64 (ScalarType 10), a dtype Thunder "
            "does not support (supported: bool, int8, int32, int64, float8_e4m3fn, "
            "float8_e5m2, float16, bfloat16, float32, float64)");
}

TEST(Pt2ArchiveTest, RejectsUint8Constant) {
  Records records;
  records.set("data/constants/model_constants_config.json",
              configJson({payloadJson("mask", "tensor_0", 1, {4}, {1})}));
  records.set("data/constants/tensor_0", "abcd");
  auto archive = openBytes(records.zip());
  ASSERT_TRUE(!!archive);
  EXPECT_TRUE(contains(errorOf((*archive)->constants()),
                       "t.pt2: constant 'mask' has dtype uint8 (ScalarType 1), a dtype Thunder "
                       "does not support"));
}

TEST(Pt2ArchiveTest, RejectsPickledPayload) {
  Records records;
  records.set("data/weights/model_weights_config.json",
              configJson({payloadJson("x", "weight_0", 7, {3, 4}, {4, 1}, 0, true)}));
  EXPECT_EQ(weightsError(records),
            "t.pt2: weight 'x' is stored pickled (a tensor subclass); not supported");
}

TEST(Pt2ArchiveTest, RejectsCustomObjectConstant) {
  Records records;
  records.set("data/constants/model_constants_config.json",
              "{\"config\": {\"obj\": {\"path_name\": \"custom_obj_0\", \"is_param\": false, "
              "\"use_pickle\": false, \"tensor_meta\": null}}}");
  records.set("data/constants/custom_obj_0", "pickle");
  auto archive = openBytes(records.zip());
  ASSERT_TRUE(!!archive);
  EXPECT_EQ(errorOf((*archive)->constants()),
            "t.pt2: constant 'obj' is a TorchScript custom object (custom_obj_0); not supported");
}

TEST(Pt2ArchiveTest, RejectsSymbolicSize) {
  Records records;
  std::string config = configJson({payloadJson("fc.weight", "weight_0", 7, {3, 4}, {4, 1})});
  size_t at = config.find("{\"as_int\": 3}");
  config.replace(at, 13, "{\"as_expr\": {\"expr_str\": \"s0\", \"hint\": null}}");
  records.set("data/weights/model_weights_config.json", config);
  EXPECT_EQ(weightsError(records),
            "t.pt2: weight 'fc.weight' in data/weights/model_weights_config.json: size and "
            "stride 0 must be plain integers ({\"as_int\": n})");
}

TEST(Pt2ArchiveTest, RejectsMalformedConfig) {
  Records records;
  records.set("data/weights/model_weights_config.json", "{\"config\": [1, 2");
  EXPECT_TRUE(contains(weightsError(records),
                       "t.pt2: data/weights/model_weights_config.json: invalid JSON: "));
  records.set("data/weights/model_weights_config.json", "{\"configs\": {}}");
  EXPECT_EQ(weightsError(records),
            "t.pt2: data/weights/model_weights_config.json: expected {\"config\": {...}}");
  // Deep nesting is refused before the recursive JSON parser could overflow the stack.
  records.set("data/weights/model_weights_config.json", std::string(100000, '['));
  EXPECT_EQ(weightsError(records), "t.pt2: data/weights/model_weights_config.json: JSON nested "
                                   "more than 1000 levels deep");
}

} // namespace
