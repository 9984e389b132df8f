// Reads a torch.export.save archive (.pt2, torch 2.9-2.13 layout): the program JSON and the
// raw weight and constant storages, validated and returned as views into the mapped file.
//
// The archive is a zip (see ZipArchive.h) whose records all sit under one root folder;
// docs/import.md describes the layout and every check. Nothing here
// depends on MLIR: the importer turns the JSON into IR, this class only guarantees that what it
// hands out is well formed and in bounds.
#ifndef THUNDER_IMPORT_PT2ARCHIVE_H
#define THUNDER_IMPORT_PT2ARCHIVE_H

#include "thunder/Import/ZipArchive.h"
#include "thunder/Support/TypePromotion.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace thunder {

/// One tensor of a PayloadConfig (a weight or a constant): its metadata and the bytes of the
/// storage it views. Several payloads may view the same storage (tied or sliced tensors).
struct Payload {
  std::string fqn;      ///< fully qualified name, e.g. "fc.weight"
  std::string pathName; ///< record name inside data/weights/ or data/constants/, e.g. "weight_0"
  bool isParam;         ///< a parameter (true) or a buffer/constant (false)
  DType dtype;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides; ///< in elements, as torch.as_strided takes them
  int64_t storageOffset;        ///< in elements
  /// The whole record's bytes (native little-endian), a view into the archive's buffer. The
  /// tensor is as_strided(storage, sizes, strides, storageOffset); the record was checked to be
  /// large enough for that view. Empty when zeroFilled.
  llvm::StringRef storage;
  /// The record has 0 bytes: torch writes that for fake or empty storages and reads it back as
  /// zeros of shape `sizes`.
  bool zeroFilled;
};

/// The Thunder dtype of a torch.export ScalarType number (schema.py's ScalarType, which is not
/// c10's numbering); empty for types Thunder does not support.
std::optional<DType> dtypeFromScalarType(int64_t scalarType);

/// PyTorch's name of a ScalarType number for messages: "float32", "complex64", "uint8", ...;
/// "unknown" for numbers the schema does not define.
const char *scalarTypeName(int64_t scalarType);

/// How deeply parseArchiveJson lets arrays and objects nest.
inline constexpr int kMaxArchiveJsonDepth = 1000;

/// llvm::json::parse with a nesting limit: LLVM's parser recurses once per level and overflows
/// the stack on some 64K levels of '[', so JSON from a file must come through here. Errors read
/// "<what>: invalid JSON: ..." or "<what>: JSON nested more than 1000 levels deep", where
/// `what` says where the text came from ("model.pt2: models/model.json").
llvm::Expected<llvm::json::Value> parseArchiveJson(llvm::StringRef text, const llvm::Twine &what);

/// An opened, validated .pt2 archive. Every StringRef it returns points into the buffer it
/// owns, so they stay valid as long as the Pt2Archive.
class Pt2Archive {
public:
  /// Memory-maps `path` and validates the container: zip structure, a root folder,
  /// archive_format "pt2", archive_version "0" and (when present) byteorder "little".
  static llvm::Expected<std::unique_ptr<Pt2Archive>> open(llvm::StringRef path);

  /// Like open, over bytes already in memory; `displayName` prefixes every error message.
  static llvm::Expected<std::unique_ptr<Pt2Archive>>
  fromBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::StringRef displayName);

  /// The ExportedProgram JSON of `model` (models/<model>.json); torch.export.save writes one
  /// model named "model".
  llvm::Expected<llvm::StringRef> modelJson(llvm::StringRef model = "model") const;

  /// modelJson(model) parsed with parseArchiveJson.
  llvm::Expected<llvm::json::Value> parseModelJson(llvm::StringRef model = "model") const;

  /// Parameters and persistent buffers of `model`, sorted by FQN. An archive without a weights
  /// config has none.
  llvm::Expected<std::vector<Payload>> weights(llvm::StringRef model = "model") const;

  /// Lifted tensor constants and non-persistent buffers of `model`, sorted by FQN.
  llvm::Expected<std::vector<Payload>> constants(llvm::StringRef model = "model") const;

  /// The bytes of the record at `path` relative to the root folder (e.g. "byteorder"); an
  /// error if there is none.
  llvm::Expected<llvm::StringRef> record(llvm::StringRef path) const;

  /// Whether a record exists at `path` relative to the root folder.
  bool hasRecord(llvm::StringRef path) const;

  /// The root folder every record sits under (the saved file's base name, or "archive").
  llvm::StringRef root() const { return root_; }

  /// The name used in error messages.
  llvm::StringRef displayName() const { return zip_->displayName(); }

  /// The underlying zip archive.
  const ZipArchive &zip() const { return *zip_; }

private:
  enum class PayloadKind { Weight, Constant };

  explicit Pt2Archive(std::unique_ptr<ZipArchive> zip) : zip_(std::move(zip)) {}

  /// The shared tail of open and fromBuffer: wraps a parsed zip and validates it.
  static llvm::Expected<std::unique_ptr<Pt2Archive>>
  fromZip(llvm::Expected<std::unique_ptr<ZipArchive>> zip);

  /// Finds the root folder and checks archive_format, archive_version and byteorder.
  llvm::Error validate();

  /// Reads and validates one PayloadConfig and the records it names.
  llvm::Expected<std::vector<Payload>> payloads(PayloadKind kind, llvm::StringRef model) const;

  std::unique_ptr<ZipArchive> zip_;
  std::string root_;
};

} // namespace thunder

#endif // THUNDER_IMPORT_PT2ARCHIVE_H
