// A bounds-checked, read-only zip reader over a memory-mapped file (STORED entries only).
//
// torch.export.save writes its .pt2 archives uncompressed with 64-byte aligned data, so a
// reader never needs to inflate or copy: every record is a view into the mapping. The reader
// trusts nothing in the file: each offset, size and count is checked against the buffer, and
// every problem is an llvm::Error that names the file and what is wrong.
#ifndef THUNDER_IMPORT_ZIPARCHIVE_H
#define THUNDER_IMPORT_ZIPARCHIVE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace thunder {

/// A zip archive whose central directory has been parsed and validated. Owns the buffer it
/// reads, so the StringRefs it hands out live as long as the archive.
class ZipArchive {
public:
  /// Compression method numbers from the zip specification (APPNOTE 4.4.5).
  enum Method : uint16_t { Stored = 0, Deflate = 8 };

  /// One file in the archive, as the central directory and its local header describe it.
  struct Entry {
    std::string name;    ///< the full name, e.g. "model/data/weights/weight_0"
    uint64_t dataOffset; ///< offset of the first data byte in the file
    uint64_t size;       ///< bytes of data as stored (the compressed size)
    uint16_t method;     ///< compression method, see Method
  };

  /// Memory-maps `path` and parses it. Errors name `path`.
  static llvm::Expected<std::unique_ptr<ZipArchive>> open(llvm::StringRef path);

  /// Parses `buffer`; `displayName` (usually the path) prefixes every error message.
  static llvm::Expected<std::unique_ptr<ZipArchive>>
  fromBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::StringRef displayName);

  /// Every entry, in central-directory order (the order the writer wrote them).
  llvm::ArrayRef<Entry> entries() const { return entries_; }

  /// The entry named `name`, or null.
  const Entry *find(llvm::StringRef name) const;

  /// The bytes of `entry` as a view into the buffer. Fails for compressed entries.
  llvm::Expected<llvm::StringRef> read(const Entry &entry) const;

  /// The bytes of the entry named `name`; fails if there is none or it is compressed.
  llvm::Expected<llvm::StringRef> read(llvm::StringRef name) const;

  /// The name used in error messages (the path given to open or fromBuffer).
  llvm::StringRef displayName() const { return displayName_; }

  /// Size of the whole file in bytes.
  uint64_t fileSize() const { return buffer_->getBufferSize(); }

private:
  ZipArchive(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::StringRef displayName)
      : buffer_(std::move(buffer)), displayName_(displayName.str()) {}

  /// Reads the end-of-central-directory records and every entry; fills entries_ and index_.
  llvm::Error parse();

  std::unique_ptr<llvm::MemoryBuffer> buffer_;
  std::string displayName_;
  std::vector<Entry> entries_;
  llvm::StringMap<size_t> index_; ///< name -> position in entries_
};

} // namespace thunder

#endif // THUNDER_IMPORT_ZIPARCHIVE_H
