// Tests of the weights blob: constants at aligned offsets with zeros between
// them, written piece by piece from views of the caller's bytes (never
// copied, except what the blob converts), and the .safetensors header.
#include "thunder/Target/Common/WeightsBlob.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "thunder/Pipelines/Pipelines.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using thunder::codegen::WeightEntry;
using thunder::codegen::WeightsBlob;

namespace {

std::string written(const WeightsBlob &blob) {
  std::string text;
  llvm::raw_string_ostream os(text);
  blob.write(os);
  os.flush();
  return text;
}

TEST(WeightsBlobTest, PlacesPiecesAtAlignedOffsetsWithZerosBetween) {
  WeightsBlob blob;
  std::string a = "abc", b = "defgh";
  EXPECT_EQ(blob.appendView(llvm::ArrayRef<char>(a.data(), a.size()), 8), 0u);
  EXPECT_EQ(blob.appendView(llvm::ArrayRef<char>(b.data(), b.size()), 8), 8u);
  EXPECT_EQ(blob.appendCopy({'x'}, 4), 16u);
  EXPECT_EQ(blob.size(), 17u);
  EXPECT_EQ(written(blob), std::string("abc\0\0\0\0\0defgh\0\0\0x", 17));
}

TEST(WeightsBlobTest, ViewsAreNotCopies) {
  // A view reads the caller's bytes when written, not when appended.
  WeightsBlob blob;
  std::string data = "1234";
  blob.appendView(llvm::ArrayRef<char>(data.data(), data.size()), 1);
  data[0] = '9';
  EXPECT_EQ(written(blob), "9234");
}

TEST(WeightsBlobTest, GeneratedPiecesAreWrittenWhenTheBlobIs) {
  // A generated piece (weights repacked for a GEMM) takes its place like a
  // view, and its writer runs only when the blob is written.
  WeightsBlob blob;
  int calls = 0;
  blob.appendCopy({'a'}, 1);
  EXPECT_EQ(blob.appendGenerated(3, 8, [&](llvm::raw_ostream &os) {
              ++calls;
              os << "xyz";
            }),
            8u);
  blob.appendCopy({'b'}, 1);
  EXPECT_EQ(blob.size(), 12u);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(written(blob), std::string("a\0\0\0\0\0\0\0xyzb", 12));
  EXPECT_EQ(calls, 1);
}

TEST(WeightsBlobTest, LongGapsAreZeroFilled) {
  WeightsBlob blob;
  blob.appendCopy({'a'}, 1);
  blob.appendCopy({'b'}, 4096);
  std::string out = written(blob);
  ASSERT_EQ(out.size(), 4097u);
  EXPECT_EQ(out.front(), 'a');
  EXPECT_EQ(out.back(), 'b');
  EXPECT_EQ(out.substr(1, 4095), std::string(4095, '\0'));
}

TEST(WeightsBlobTest, AppendConstantViewsDenseDataAndConvertsBools) {
  mlir::DialectRegistry registry;
  thunder::registerThunderDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  mlir::OpBuilder builder(&context);
  mlir::Location loc = builder.getUnknownLoc();
  auto f32 = mlir::RankedTensorType::get({3}, builder.getF32Type());
  auto i1 = mlir::RankedTensorType::get({4}, builder.getI1Type());
  auto floats = mlir::DenseElementsAttr::get(f32, llvm::ArrayRef<float>{1.f, -2.f, 0.5f});
  auto bools = mlir::DenseElementsAttr::get(i1, llvm::ArrayRef<bool>{true, false, false, true});
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto c0 = builder.create<mlir::thunder::ConstantOp>(loc, floats);
  auto c1 = builder.create<mlir::thunder::ConstantOp>(loc, bools);

  WeightsBlob blob;
  std::vector<WeightEntry> entries;
  auto o0 = thunder::codegen::appendConstant(c0, 64, "w", blob, entries);
  auto o1 = thunder::codegen::appendConstant(c1, 64, "mask", blob, entries);
  ASSERT_TRUE(mlir::succeeded(o0) && mlir::succeeded(o1));
  EXPECT_EQ(*o0, 0u);
  EXPECT_EQ(*o1, 64u);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].name, "w");
  EXPECT_EQ(entries[0].dtype, "F32");
  EXPECT_EQ(entries[0].end, 12u);
  EXPECT_EQ(entries[1].dtype, "BOOL");
  EXPECT_EQ(entries[1].begin, 64u);
  EXPECT_EQ(entries[1].end, 68u);
  std::string out = written(blob);
  ASSERT_EQ(out.size(), 68u);
  float first;
  std::memcpy(&first, out.data(), 4);
  EXPECT_EQ(first, 1.f);
  EXPECT_EQ(out.substr(64), std::string("\1\0\0\1", 4));
}

TEST(WeightsBlobTest, SafetensorsHeaderAlignsTheData) {
  std::vector<WeightEntry> entries = {{"fc.weight", "F32", {2, 3}, 0, 24}};
  int64_t headerBytes = 0;
  std::string header = thunder::codegen::safetensorsHeader("m", entries, &headerBytes);
  EXPECT_EQ(header.size() % 64, 0u);
  EXPECT_EQ(static_cast<int64_t>(header.size()), 8 + headerBytes);
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i)
    length |= uint64_t(static_cast<unsigned char>(header[i])) << (8 * i);
  EXPECT_EQ(static_cast<int64_t>(length), headerBytes);
  EXPECT_NE(header.find("\"fc.weight\":{\"dtype\":\"F32\",\"shape\":[2,3],"
                        "\"data_offsets\":[0,24]}"),
            std::string::npos);
}

} // namespace
