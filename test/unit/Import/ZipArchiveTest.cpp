// Unit tests for thunder/Import/ZipArchive.h: the torch-written fixture (ZIP64 end records,
// aligned data) and one forged archive per structural check, each with its message.
#include "thunder/Import/ZipArchive.h"

#include "TestZipWriter.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <string>

using namespace thunder;
using namespace thunder::test;

namespace {

std::string fixturePath() {
  llvm::SmallString<256> path(THUNDER_UNIT_SOURCE_DIR);
  llvm::sys::path::append(path, "Import", "Inputs", "linear.pt2");
  return std::string(path);
}

llvm::Expected<std::unique_ptr<ZipArchive>> parse(const std::string &bytes) {
  return ZipArchive::fromBuffer(llvm::MemoryBuffer::getMemBufferCopy(bytes, "z.zip"), "z.zip");
}

/// The error message of a parse that must fail ("" and a test failure if it succeeds).
std::string parseError(const std::string &bytes) {
  auto zip = parse(bytes);
  if (zip) {
    ADD_FAILURE() << "expected the archive to be rejected";
    return "";
  }
  return llvm::toString(zip.takeError());
}

/// Offset of the central directory of an archive from writeTestZip (no comment).
size_t centralDirectoryOffset(const std::string &bytes) {
  return get32(bytes, bytes.size() - 22 + 16);
}

TEST(ZipArchiveTest, ReadsTorchFixture) {
  auto zip = ZipArchive::open(fixturePath());
  ASSERT_TRUE(!!zip) << llvm::toString(zip.takeError());
  // torch.export.save writes 13 records for this module, the weights first.
  ASSERT_EQ((*zip)->entries().size(), 13u);
  EXPECT_EQ((*zip)->entries().front().name, "linear/data/weights/weight_0");
  for (const ZipArchive::Entry &entry : (*zip)->entries()) {
    EXPECT_EQ(entry.method, ZipArchive::Stored) << entry.name;
    // PyTorchFileWriter pads local headers so that data is 64-byte aligned.
    EXPECT_EQ(entry.dataOffset % 64, 0u) << entry.name;
  }
  auto format = (*zip)->read("linear/archive_format");
  ASSERT_TRUE(!!format) << llvm::toString(format.takeError());
  EXPECT_EQ(*format, "pt2");
}

TEST(ZipArchiveTest, ReadReturnsViewIntoBuffer) {
  std::string bytes = writeTestZip({{"a/x", "hello"}, {"a/y", ""}});
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(bytes, "z.zip");
  const char *start = buffer->getBufferStart();
  auto zip = ZipArchive::fromBuffer(std::move(buffer), "z.zip");
  ASSERT_TRUE(!!zip) << llvm::toString(zip.takeError());
  auto x = (*zip)->read("a/x");
  ASSERT_TRUE(!!x);
  EXPECT_EQ(*x, "hello");
  EXPECT_EQ(x->data(), start + 30 + 3); // no copy: right after the local header and name
  auto y = (*zip)->read("a/y");
  ASSERT_TRUE(!!y);
  EXPECT_TRUE(y->empty());
  EXPECT_EQ((*zip)->find("a/z"), nullptr);
  EXPECT_EQ(llvm::toString((*zip)->read("a/z").takeError()), "z.zip: no entry 'a/z'");
}

TEST(ZipArchiveTest, AcceptsCommentAndZip64ExtraField) {
  TestZipRecord record{"a/x", "data"};
  record.zip64Extra = true;
  // A false end-record signature inside the comment must not be taken for the real one.
  std::string comment = std::string("PK\x05\x06") + " and a comment that runs past the end";
  auto zip = parse(writeTestZip({record}, comment));
  ASSERT_TRUE(!!zip) << llvm::toString(zip.takeError());
  auto x = (*zip)->read("a/x");
  ASSERT_TRUE(!!x);
  EXPECT_EQ(*x, "data");
}

TEST(ZipArchiveTest, RejectsEmptyFile) {
  EXPECT_EQ(parseError(""), "z.zip: empty file (0 bytes); not a zip archive");
}

TEST(ZipArchiveTest, RejectsNonZip) {
  EXPECT_EQ(parseError("{\"this is\": \"JSON, not a zip archive at all\"}"),
            "z.zip: not a zip archive (no end-of-central-directory record)");
}

TEST(ZipArchiveTest, RejectsCutOffTail) {
  std::string bytes = writeTestZip({{"a/x", "hello"}});
  EXPECT_EQ(parseError(bytes.substr(0, bytes.size() - 5)),
            "z.zip: truncated zip archive (no end-of-central-directory record; the file was "
            "probably cut short)");
}

TEST(ZipArchiveTest, RejectsDataPastEndOfFile) {
  TestZipRecord record{"m/data/weights/weight_0", "0123456789"};
  record.claimedSize = 100000;
  std::string bytes = writeTestZip({record});
  EXPECT_EQ(parseError(bytes), "z.zip: truncated: entry 'm/data/weights/weight_0' needs bytes "
                               "up to " + std::to_string(30 + 23 + 100000) +
                                   " but the file has " + std::to_string(bytes.size()));
}

TEST(ZipArchiveTest, RejectsDataOverlappingCentralDirectory) {
  TestZipRecord record{"a/x", "0123456789"};
  record.claimedSize = 20;
  std::string bytes = writeTestZip({record});
  EXPECT_EQ(parseError(bytes),
            "z.zip: entry 'a/x' (bytes 0 to 53) overlaps the central directory at 43");
}

TEST(ZipArchiveTest, RejectsOverlappingEntries) {
  // a/x claims its own 4 bytes plus all of a/y's local header and data.
  TestZipRecord x{"a/x", "xxxx"};
  x.claimedSize = 4 + 30 + 3 + 4;
  std::string bytes = writeTestZip({x, {"a/y", "yyyy"}});
  EXPECT_EQ(parseError(bytes), "z.zip: entries 'a/x' and 'a/y' overlap (bytes 37 to 74)");
}

TEST(ZipArchiveTest, RejectsDuplicateNames) {
  EXPECT_EQ(parseError(writeTestZip({{"a/x", "1"}, {"a/x", "2"}})),
            "z.zip: duplicate entry 'a/x'");
}

TEST(ZipArchiveTest, RejectsAbsurdEntryCount) {
  std::string bytes = writeTestZip({{"a/x", "1"}});
  patch16(bytes, bytes.size() - 22 + 8, 0xfffe);
  patch16(bytes, bytes.size() - 22 + 10, 0xfffe);
  EXPECT_EQ(parseError(bytes),
            "z.zip: the central directory claims 65534 entries but its 49 bytes hold at most 1");
}

TEST(ZipArchiveTest, RejectsCentralDirectoryOutOfRange) {
  std::string bytes = writeTestZip({{"a/x", "1"}});
  patch32(bytes, bytes.size() - 22 + 16, 0x7fffffff);
  EXPECT_EQ(parseError(bytes), "z.zip: truncated: the central directory needs bytes up to " +
                                   std::to_string(0x7fffffffull + 49) + " but the file has " +
                                   std::to_string(bytes.size()));
}

TEST(ZipArchiveTest, RejectsSaturatedFieldsWithoutZip64) {
  std::string bytes = writeTestZip({{"a/x", "1"}});
  patch32(bytes, bytes.size() - 22 + 16, 0xffffffffu);
  EXPECT_EQ(parseError(bytes), "z.zip: the end-of-central-directory record refers to ZIP64 "
                               "records that are missing");
}

TEST(ZipArchiveTest, RejectsMissingZip64ExtraField) {
  std::string bytes = writeTestZip({{"a/x", "1"}});
  patch32(bytes, centralDirectoryOffset(bytes) + 20, 0xffffffffu);
  EXPECT_EQ(parseError(bytes), "z.zip: entry 'a/x' has 32-bit fields marked as ZIP64 but no "
                               "ZIP64 extra field");
}

TEST(ZipArchiveTest, RejectsBadLocalHeader) {
  std::string bytes = writeTestZip({{"a/x", "1"}});
  bytes[0] = 'X';
  EXPECT_EQ(parseError(bytes), "z.zip: no local header for entry 'a/x' at offset 0 (bad "
                               "signature)");
}

TEST(ZipArchiveTest, RejectsBadCentralHeader) {
  std::string bytes = writeTestZip({{"a/x", "1"}});
  bytes[centralDirectoryOffset(bytes)] = 'X';
  EXPECT_EQ(parseError(bytes), "z.zip: central directory entry 0 at offset 34 has a bad "
                               "signature");
}

TEST(ZipArchiveTest, RejectsEncryptedEntry) {
  TestZipRecord record{"a/x", "1"};
  record.flags = 1;
  EXPECT_EQ(parseError(writeTestZip({record})), "z.zip: entry 'a/x' is encrypted");
}

TEST(ZipArchiveTest, RefusesToReadCompressedEntries) {
  TestZipRecord deflated{"a/x", "not really deflated"};
  deflated.method = ZipArchive::Deflate;
  TestZipRecord bzip2{"a/y", "nor bzip2"};
  bzip2.method = 12;
  auto zip = parse(writeTestZip({deflated, bzip2}));
  ASSERT_TRUE(!!zip) << llvm::toString(zip.takeError());
  EXPECT_EQ(llvm::toString((*zip)->read("a/x").takeError()),
            "z.zip: entry 'a/x' is compressed (method 8); torch.export.save writes "
            "uncompressed archives");
  EXPECT_EQ(llvm::toString((*zip)->read("a/y").takeError()),
            "z.zip: entry 'a/y' uses compression method 12, which Thunder does not read; "
            "torch.export.save writes uncompressed archives");
}

TEST(ZipArchiveTest, RejectsNonexistentPath) {
  auto zip = ZipArchive::open("/nonexistent/dir/model.pt2");
  ASSERT_FALSE(!!zip);
  EXPECT_EQ(llvm::toString(zip.takeError()),
            "/nonexistent/dir/model.pt2: cannot open: No such file or directory");
}

} // namespace
