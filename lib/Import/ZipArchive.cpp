// Parses a zip archive's (ZIP64) end-of-central-directory, central directory and local headers.
//
// Layouts follow PKWARE's APPNOTE.TXT 6.3 (sections 4.3.7 local header, 4.3.12 central
// directory header, 4.3.14-4.3.16 ZIP64 and classic end records, 4.5.3 ZIP64 extra field).
// All integers are little-endian. Every read goes through `fits`, so a hostile file can make
// the parse fail but never read outside the buffer.
#include "thunder/Import/ZipArchive.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Endian.h"

#include <algorithm>

using namespace thunder;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using llvm::Twine;

namespace {

constexpr uint32_t kLocalHeaderSig = 0x04034b50;
constexpr uint32_t kCentralHeaderSig = 0x02014b50;
constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint32_t kZip64EocdSig = 0x06064b50;

constexpr uint64_t kLocalHeaderSize = 30;
constexpr uint64_t kCentralHeaderSize = 46;
constexpr uint64_t kEocdSize = 22;
constexpr uint64_t kZip64LocatorSize = 20;
constexpr uint64_t kZip64EocdSize = 56;
constexpr uint64_t kMaxCommentSize = 0xffff;
constexpr uint16_t kZip64ExtraId = 0x0001;

/// Whether [offset, offset + length) lies inside a buffer of `size` bytes, without overflow.
bool fits(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

uint16_t read16(const char *p) { return llvm::support::endian::read16le(p); }
uint32_t read32(const char *p) { return llvm::support::endian::read32le(p); }
uint64_t read64(const char *p) { return llvm::support::endian::read64le(p); }

Error fail(StringRef file, const Twine &message) {
  return llvm::createStringError(Twine(file) + ": " + message);
}

/// What the central directory says about one entry before its local header is read.
struct CentralRecord {
  StringRef name;
  uint16_t flags;
  uint16_t method;
  uint64_t compressedSize;
  uint64_t uncompressedSize;
  uint64_t localHeaderOffset;
};

/// Replaces the saturated 32-bit fields of `record` with the 64-bit values of its ZIP64 extra
/// field (APPNOTE 4.5.3: present in this order, and only for the fields that are saturated).
Error applyZip64Extra(StringRef file, StringRef extra, CentralRecord &record,
                      bool diskSaturated) {
  bool needUncompressed = record.uncompressedSize == 0xffffffffu;
  bool needCompressed = record.compressedSize == 0xffffffffu;
  bool needOffset = record.localHeaderOffset == 0xffffffffu;
  if (!needUncompressed && !needCompressed && !needOffset && !diskSaturated)
    return Error::success();

  // Walk the (id, size, data) blocks; a block that runs past the end is corruption.
  uint64_t pos = 0;
  while (pos < extra.size()) {
    if (!fits(pos, 4, extra.size()))
      return fail(file, "entry '" + record.name + "' has a cut-off extra field");
    uint16_t id = read16(extra.data() + pos);
    uint16_t len = read16(extra.data() + pos + 2);
    if (!fits(pos + 4, len, extra.size()))
      return fail(file, "entry '" + record.name + "' has an extra field of " + Twine(len) +
                            " bytes that runs past the end of its header");
    if (id == kZip64ExtraId) {
      const char *data = extra.data() + pos + 4;
      uint64_t needed = 8 * (needUncompressed + needCompressed + needOffset);
      if (len < needed)
        return fail(file, "entry '" + record.name + "' has a ZIP64 extra field of " +
                              Twine(len) + " bytes; its header needs " + Twine(needed));
      if (needUncompressed) {
        record.uncompressedSize = read64(data);
        data += 8;
      }
      if (needCompressed) {
        record.compressedSize = read64(data);
        data += 8;
      }
      if (needOffset)
        record.localHeaderOffset = read64(data);
      return Error::success();
    }
    pos += 4 + uint64_t(len);
  }
  return fail(file, "entry '" + record.name +
                        "' has 32-bit fields marked as ZIP64 but no ZIP64 extra field");
}

} // namespace

Expected<std::unique_ptr<ZipArchive>> ZipArchive::open(StringRef path) {
  // getFile memory-maps large files; no null terminator so the mapping is exactly the file.
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail(path, "cannot open: " + buffer.getError().message());
  return fromBuffer(std::move(*buffer), path);
}

Expected<std::unique_ptr<ZipArchive>>
ZipArchive::fromBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer, StringRef displayName) {
  if (!buffer)
    return fail(displayName, "no data");
  std::unique_ptr<ZipArchive> archive(new ZipArchive(std::move(buffer), displayName));
  if (Error err = archive->parse())
    return std::move(err);
  return std::move(archive);
}

const ZipArchive::Entry *ZipArchive::find(StringRef name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

Expected<StringRef> ZipArchive::read(const Entry &entry) const {
  if (entry.method == Deflate)
    return fail(displayName_, "entry '" + entry.name +
                                  "' is compressed (method 8); torch.export.save writes "
                                  "uncompressed archives");
  if (entry.method != Stored)
    return fail(displayName_, "entry '" + entry.name + "' uses compression method " +
                                  Twine(entry.method) +
                                  ", which Thunder does not read; torch.export.save writes "
                                  "uncompressed archives");
  // parse() checked dataOffset + size against the buffer, so this view is in bounds.
  return StringRef(buffer_->getBufferStart() + entry.dataOffset, entry.size);
}

Expected<StringRef> ZipArchive::read(StringRef name) const {
  const Entry *entry = find(name);
  if (!entry)
    return fail(displayName_, "no entry '" + name + "'");
  return read(*entry);
}

Error ZipArchive::parse() {
  StringRef file = displayName_;
  const char *base = buffer_->getBufferStart();
  const uint64_t size = buffer_->getBufferSize();

  if (size == 0)
    return fail(file, "empty file (0 bytes); not a zip archive");
  // A zip whose tail is gone still starts with a local header: say "truncated", the more
  // useful diagnosis for an interrupted copy or download.
  bool startsLikeZip = size >= 4 && read32(base) == kLocalHeaderSig;
  auto noEocd = [&]() {
    return startsLikeZip
               ? fail(file, "truncated zip archive (no end-of-central-directory record; "
                            "the file was probably cut short)")
               : fail(file, "not a zip archive (no end-of-central-directory record)");
  };
  if (size < kEocdSize)
    return noEocd();

  // The end record is the last 22 bytes plus an optional comment of up to 64 KiB, so scan
  // backwards for its signature. Its comment must end exactly at the end of the file: a cut
  // .pt2 still holds the end record of the zip nested in data/sample_inputs/model.pt, and
  // taking that one would turn "truncated" into a confusing complaint about offsets.
  uint64_t eocd = 0;
  bool found = false;
  uint64_t lowest = size - kEocdSize > kMaxCommentSize ? size - kEocdSize - kMaxCommentSize : 0;
  for (uint64_t pos = size - kEocdSize + 1; pos-- > lowest;) {
    if (read32(base + pos) != kEocdSig)
      continue;
    if (pos + kEocdSize + read16(base + pos + 20) == size) {
      eocd = pos;
      found = true;
      break;
    }
  }
  if (!found)
    return noEocd();

  const char *e = base + eocd;
  uint64_t diskNumber = read16(e + 4);
  uint64_t cdDisk = read16(e + 6);
  uint64_t entriesOnDisk = read16(e + 8);
  uint64_t totalEntries = read16(e + 10);
  uint64_t cdSize = read32(e + 12);
  uint64_t cdOffset = read32(e + 16);
  // The central directory must end before the first end record (ZIP64 or classic).
  uint64_t cdLimit = eocd;

  bool hasLocator = eocd >= kZip64LocatorSize &&
                    read32(base + eocd - kZip64LocatorSize) == kZip64LocatorSig;
  if (hasLocator) {
    const char *loc = base + eocd - kZip64LocatorSize;
    uint64_t recordOffset = read64(loc + 8);
    uint64_t locatorPos = eocd - kZip64LocatorSize;
    if (!fits(recordOffset, kZip64EocdSize, locatorPos))
      return fail(file, "the ZIP64 end-of-central-directory locator points to offset " +
                            Twine(recordOffset) + ", outside the " + Twine(locatorPos) +
                            " bytes before it");
    const char *z = base + recordOffset;
    if (read32(z) != kZip64EocdSig)
      return fail(file, "no ZIP64 end-of-central-directory record at offset " +
                            Twine(recordOffset) + " (bad signature)");
    diskNumber = read32(z + 16);
    cdDisk = read32(z + 20);
    entriesOnDisk = read64(z + 24);
    totalEntries = read64(z + 32);
    cdSize = read64(z + 40);
    cdOffset = read64(z + 48);
    cdLimit = recordOffset;
  } else if (totalEntries == 0xffff || cdSize == 0xffffffffu || cdOffset == 0xffffffffu) {
    return fail(file, "the end-of-central-directory record refers to ZIP64 records that are "
                      "missing");
  }

  if (diskNumber != 0 || cdDisk != 0 || entriesOnDisk != totalEntries)
    return fail(file, "multi-disk (spanned) zip archives are not supported");
  if (!fits(cdOffset, cdSize, size))
    return fail(file, "truncated: the central directory needs bytes up to " +
                          Twine(cdOffset + cdSize < cdOffset ? UINT64_MAX : cdOffset + cdSize) +
                          " but the file has " + Twine(size));
  if (!fits(cdOffset, cdSize, cdLimit))
    return fail(file, "the central directory (bytes " + Twine(cdOffset) + " to " +
                          Twine(cdOffset + cdSize) +
                          ") overlaps the end-of-central-directory record at " + Twine(cdLimit));
  // Each entry takes at least 46 bytes, which bounds what a lying count can make us allocate.
  if (totalEntries > cdSize / kCentralHeaderSize)
    return fail(file, "the central directory claims " + Twine(totalEntries) +
                          " entries but its " + Twine(cdSize) + " bytes hold at most " +
                          Twine(cdSize / kCentralHeaderSize));

  struct Span {
    uint64_t begin, end;
    size_t entry;
  };
  std::vector<Span> spans;
  entries_.reserve(totalEntries);
  spans.reserve(totalEntries);
  const uint64_t cdEnd = cdOffset + cdSize;
  uint64_t pos = cdOffset;
  for (uint64_t i = 0; i < totalEntries; ++i) {
    if (!fits(pos, kCentralHeaderSize, cdEnd))
      return fail(file, "central directory entry " + Twine(i) + " of " + Twine(totalEntries) +
                            " runs past the end of the central directory");
    const char *h = base + pos;
    if (read32(h) != kCentralHeaderSig)
      return fail(file, "central directory entry " + Twine(i) + " at offset " + Twine(pos) +
                            " has a bad signature");
    uint64_t nameLen = read16(h + 28), extraLen = read16(h + 30), commentLen = read16(h + 32);
    if (!fits(pos + kCentralHeaderSize, nameLen + extraLen + commentLen, cdEnd))
      return fail(file, "central directory entry " + Twine(i) +
                            " has a name or extra field that runs past the central directory");
    CentralRecord rec;
    rec.name = StringRef(h + kCentralHeaderSize, nameLen);
    rec.flags = read16(h + 8);
    rec.method = read16(h + 10);
    rec.compressedSize = read32(h + 20);
    rec.uncompressedSize = read32(h + 24);
    rec.localHeaderOffset = read32(h + 42);
    StringRef extra(h + kCentralHeaderSize + nameLen, extraLen);
    if (Error err = applyZip64Extra(file, extra, rec, read16(h + 34) == 0xffff))
      return err;
    pos += kCentralHeaderSize + nameLen + extraLen + commentLen;

    std::string entry = ("entry '" + rec.name + "'").str();
    if (rec.flags & 0x1)
      return fail(file, entry + " is encrypted");
    if (rec.method == Stored && rec.compressedSize != rec.uncompressedSize)
      return fail(file, entry + " is stored uncompressed but its sizes disagree (" +
                            Twine(rec.compressedSize) + " stored, " +
                            Twine(rec.uncompressedSize) + " uncompressed)");

    // The data starts after the *local* header, whose extra field (torch's alignment padding)
    // differs from the central one, so it has to be read.
    uint64_t lho = rec.localHeaderOffset;
    if (!fits(lho, kLocalHeaderSize, size))
      return fail(file, "truncated: the local header of " + entry + " needs bytes up to " +
                            Twine(lho + kLocalHeaderSize < lho ? UINT64_MAX
                                                               : lho + kLocalHeaderSize) +
                            " but the file has " + Twine(size));
    const char *l = base + lho;
    if (read32(l) != kLocalHeaderSig)
      return fail(file, "no local header for " + entry + " at offset " + Twine(lho) +
                            " (bad signature)");
    uint64_t localNameLen = read16(l + 26), localExtraLen = read16(l + 28);
    uint64_t dataOffset = lho + kLocalHeaderSize + localNameLen + localExtraLen;
    if (!fits(lho + kLocalHeaderSize, localNameLen, size) ||
        StringRef(l + kLocalHeaderSize, localNameLen) != rec.name)
      return fail(file, "the local header of " + entry + " at offset " + Twine(lho) +
                            " names a different file");
    if (!fits(dataOffset, rec.compressedSize, size))
      return fail(file, "truncated: " + entry + " needs bytes up to " +
                            Twine(dataOffset + rec.compressedSize < dataOffset
                                      ? UINT64_MAX
                                      : dataOffset + rec.compressedSize) +
                            " but the file has " + Twine(size));
    uint64_t dataEnd = dataOffset + rec.compressedSize;
    if (dataEnd > cdOffset)
      return fail(file, entry + " (bytes " + Twine(lho) + " to " + Twine(dataEnd) +
                            ") overlaps the central directory at " + Twine(cdOffset));

    auto inserted = index_.try_emplace(rec.name, entries_.size());
    if (!inserted.second)
      return fail(file, "duplicate " + entry);
    spans.push_back({lho, dataEnd, entries_.size()});
    entries_.push_back({rec.name.str(), dataOffset, rec.compressedSize, rec.method});
  }

  // Entries may be listed in any order, but their bytes must not share storage: overlapping
  // records are a sign of a forged or corrupted file (and of zip bombs in general).
  std::sort(spans.begin(), spans.end(),
            [](const Span &a, const Span &b) { return a.begin < b.begin; });
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i - 1].end > spans[i].begin)
      return fail(file, "entries '" + entries_[spans[i - 1].entry].name + "' and '" +
                            entries_[spans[i].entry].name + "' overlap (bytes " +
                            Twine(spans[i].begin) + " to " + Twine(spans[i - 1].end) + ")");
  return Error::success();
}
