// Validates a torch.export.save archive and reads its PayloadConfig-indexed tensor storages.
//
// Mirrors what torch/export/pt2_archive/_package.py (load_pt2, _build_file_map,
// _load_state_dict) accepts, minus the pickled paths, and rejects up front what Thunder cannot
// compile (unsupported dtypes, tensor subclasses, custom objects) with the FQN in the message.
#include "thunder/Import/Pt2Archive.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace thunder;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using llvm::Twine;

namespace {

Error fail(StringRef file, const Twine &message) {
  return llvm::createStringError(Twine(file) + ": " + message);
}

/// `text` for a message: escaped, and cut short so a garbage record cannot flood the output.
std::string quote(StringRef text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << '\'';
  llvm::printEscapedString(text.take_front(40), os);
  if (text.size() > 40)
    os << "...";
  os << '\'';
  return out;
}

/// "[3, 4]"
std::string listString(llvm::ArrayRef<int64_t> values) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << '[';
  llvm::interleaveComma(values, os);
  os << ']';
  return out;
}

/// Whether `text` nests arrays/objects deeper than `limit` (strings are skipped correctly).
bool nestsDeeperThan(StringRef text, int limit) {
  int depth = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit)
        return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

/// Reads a SymInt ({"as_int": n}); fails for symbolic values ({"as_expr": ...}).
std::optional<int64_t> asInt(const llvm::json::Value *value) {
  const llvm::json::Object *object = value ? value->getAsObject() : nullptr;
  if (!object)
    return std::nullopt;
  return object->getInteger("as_int");
}

} // namespace

//===----------------------------------------------------------------------===//
// ScalarType
//===----------------------------------------------------------------------===//

std::optional<DType> thunder::dtypeFromScalarType(int64_t scalarType) {
  switch (scalarType) {
  case 2: return DType::Int8;
  case 4: return DType::Int32;
  case 5: return DType::Int64;
  case 6: return DType::Float16;
  case 7: return DType::Float32;
  case 8: return DType::Float64;
  case 12: return DType::Bool;
  case 13: return DType::BFloat16;
  case 29: return DType::Float8E4M3FN;
  case 30: return DType::Float8E5M2;
  default: return std::nullopt;
  }
}

const char *thunder::scalarTypeName(int64_t scalarType) {
  if (std::optional<DType> type = dtypeFromScalarType(scalarType))
    return dtypeName(*type);
  switch (scalarType) {
  case 1: return "uint8";
  case 3: return "int16";
  case 9: return "complex32";
  case 10: return "complex64";
  case 11: return "complex128";
  case 28: return "uint16";
  case 31: return "float8_e4m3fnuz";
  case 32: return "float8_e5m2fnuz";
  case 33: return "float8_e8m0fnu";
  case 34: return "uint32";
  case 35: return "uint64";
  default: return "unknown";
  }
}

Expected<llvm::json::Value> thunder::parseArchiveJson(StringRef text, const Twine &what) {
  if (nestsDeeperThan(text, kMaxArchiveJsonDepth))
    return llvm::createStringError(what + ": JSON nested more than " +
                                   Twine(kMaxArchiveJsonDepth) + " levels deep");
  Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value)
    return llvm::createStringError(what + ": invalid JSON: " +
                                   llvm::toString(value.takeError()));
  return value;
}

//===----------------------------------------------------------------------===//
// Pt2Archive
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<Pt2Archive>>
Pt2Archive::fromZip(Expected<std::unique_ptr<ZipArchive>> zip) {
  if (!zip)
    return zip.takeError();
  std::unique_ptr<Pt2Archive> archive(new Pt2Archive(std::move(*zip)));
  if (Error err = archive->validate())
    return std::move(err);
  return std::move(archive);
}

Expected<std::unique_ptr<Pt2Archive>> Pt2Archive::open(StringRef path) {
  return fromZip(ZipArchive::open(path));
}

Expected<std::unique_ptr<Pt2Archive>>
Pt2Archive::fromBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer, StringRef displayName) {
  return fromZip(ZipArchive::fromBuffer(std::move(buffer), displayName));
}

bool Pt2Archive::hasRecord(StringRef path) const {
  return zip_->find((root_ + "/" + path).str()) != nullptr;
}

Expected<StringRef> Pt2Archive::record(StringRef path) const {
  const ZipArchive::Entry *entry = zip_->find((root_ + "/" + path).str());
  if (!entry)
    return fail(displayName(), "missing record '" + path + "'");
  return zip_->read(*entry);
}

Error Pt2Archive::validate() {
  StringRef file = displayName();
  if (zip_->entries().empty())
    return fail(file, "empty zip archive; not a torch.export archive");

  // PyTorchFileWriter puts every record under one folder, and torch's reader takes the root
  // from the first entry, so do the same.
  StringRef first = zip_->entries().front().name;
  size_t slash = first.find('/');
  if (slash == StringRef::npos || slash == 0) {
    if (zip_->find("serialized_exported_program.json"))
      return fail(file, "written by torch.export.save from torch 2.7 or older "
                        "(serialized_exported_program.json); Thunder reads the layout of "
                        "torch 2.9 to 2.13: re-save the program with a newer torch");
    return fail(file, "not a torch.export archive: the first entry " + quote(first) +
                          " is not inside a root folder");
  }
  root_ = first.take_front(slash).str();

  if (!hasRecord("archive_format")) {
    if (hasRecord("data.pkl"))
      return fail(file, "a torch.save file (it has data.pkl), not a torch.export.save archive");
    return fail(file, "missing record 'archive_format': not a torch.export archive?");
  }
  Expected<StringRef> format = record("archive_format");
  if (!format)
    return format.takeError();
  if (*format != "pt2")
    return fail(file, "archive_format is " + quote(*format) +
                          ", expected 'pt2': not a torch.export archive");

  if (!hasRecord("archive_version"))
    return fail(file, "missing record 'archive_version': not a torch.export archive?");
  Expected<StringRef> version = record("archive_version");
  if (!version)
    return version.takeError();
  if (*version != "0")
    return fail(file, "archive_version is " + quote(*version) +
                          "; this Thunder reads version 0 (torch.export.save from torch 2.9 to "
                          "2.13)");

  // Storages are the saving host's memory; Thunder only runs on little-endian targets, so a
  // big-endian archive would be read as garbage rather than byte-swapped.
  if (hasRecord("byteorder")) {
    Expected<StringRef> byteorder = record("byteorder");
    if (!byteorder)
      return byteorder.takeError();
    if (*byteorder != "little")
      return fail(file, "byteorder is " + quote(*byteorder) +
                            "; Thunder reads archives saved on little-endian machines only");
  }
  return Error::success();
}

Expected<StringRef> Pt2Archive::modelJson(StringRef model) const {
  std::string path = ("models/" + model + ".json").str();
  if (!hasRecord(path)) {
    // Name the models that are there (a few): a multi-model package is the likely mistake.
    std::string present;
    std::string prefix = root_ + "/models/";
    int listed = 0;
    for (const ZipArchive::Entry &entry : zip_->entries()) {
      StringRef name = entry.name;
      if (!name.consume_front(prefix) || !name.consume_back(".json"))
        continue;
      if (listed++ == 5) {
        present += ", ...";
        break;
      }
      present += (present.empty() ? "" : ", ") + quote(name);
    }
    return fail(displayName(), "missing record '" + path + "': not a torch.export archive?" +
                                   (present.empty() ? "" : " (it has models " + present + ")"));
  }
  return record(path);
}

Expected<llvm::json::Value> Pt2Archive::parseModelJson(StringRef model) const {
  Expected<StringRef> text = modelJson(model);
  if (!text)
    return text.takeError();
  return parseArchiveJson(*text, displayName() + ": models/" + model + ".json");
}

Expected<std::vector<Payload>> Pt2Archive::weights(StringRef model) const {
  return payloads(PayloadKind::Weight, model);
}

Expected<std::vector<Payload>> Pt2Archive::constants(StringRef model) const {
  return payloads(PayloadKind::Constant, model);
}

Expected<std::vector<Payload>> Pt2Archive::payloads(PayloadKind kind, StringRef model) const {
  StringRef file = displayName();
  bool isWeight = kind == PayloadKind::Weight;
  StringRef what = isWeight ? "weight" : "constant";
  std::string dir = isWeight ? "data/weights/" : "data/constants/";

  // pt2_archive_constants.h names the configs "<model>_weights_config.json" and
  // "<model>_constants_config.json"; the docs page shows older names, accepted too.
  std::string configPath = dir + model.str() + (isWeight ? "_weights_config.json"
                                                         : "_constants_config.json");
  if (!hasRecord(configPath)) {
    std::string alternative = dir + model.str() + (isWeight ? "_model_param_config.json"
                                                            : "_model_constants_config.json");
    if (hasRecord(alternative)) {
      configPath = alternative;
    } else {
      if (hasRecord(dir + model.str() + ".pt"))
        return fail(file, Twine(what) + "s are a torch.save pickle ('" + dir + model +
                              ".pt', the torch 2.8 layout); re-save the program with torch 2.9 "
                              "or newer");
      return std::vector<Payload>();
    }
  }

  Expected<StringRef> configText = record(configPath);
  if (!configText)
    return configText.takeError();
  Expected<llvm::json::Value> json = parseArchiveJson(*configText, file + ": " + configPath);
  if (!json)
    return json.takeError();
  const llvm::json::Object *top = json->getAsObject();
  const llvm::json::Object *config = top ? top->getObject("config") : nullptr;
  if (!config)
    return fail(file, configPath + ": expected {\"config\": {...}}");

  // llvm::json::Object is a hash map; sort so callers see a stable order.
  std::vector<StringRef> fqns;
  for (const auto &kv : *config)
    fqns.push_back(kv.first);
  llvm::sort(fqns);

  std::vector<Payload> result;
  result.reserve(fqns.size());
  for (StringRef fqn : fqns) {
    // Every message about this tensor starts "weight 'fc.weight'".
    std::string subject = (what + " " + quote(fqn)).str();
    auto bad = [&](const Twine &problem) {
      return fail(file, subject + " in " + configPath + ": " + problem);
    };
    const llvm::json::Object *meta = config->getObject(fqn);
    if (!meta)
      return bad("expected an object");

    Payload payload;
    payload.fqn = fqn.str();
    std::optional<StringRef> pathName = meta->getString("path_name");
    if (!pathName || pathName->empty())
      return bad("missing 'path_name'");
    payload.pathName = pathName->str();
    payload.isParam = meta->getBoolean("is_param").value_or(false);
    if (meta->getBoolean("use_pickle").value_or(false))
      return fail(file, subject + " is stored pickled (a tensor subclass); not supported");
    if (!isWeight && pathName->starts_with("custom_obj_"))
      return fail(file, subject + " is a TorchScript custom object (" + *pathName +
                            "); not supported");

    const llvm::json::Object *tensor = meta->getObject("tensor_meta");
    if (!tensor)
      return fail(file, subject + " (" + dir + *pathName +
                            ") is not a tensor (no tensor_meta); not supported");
    std::optional<int64_t> scalarType = tensor->getInteger("dtype");
    if (!scalarType)
      return bad("tensor_meta has no integer 'dtype'");
    std::optional<DType> dtype = dtypeFromScalarType(*scalarType);
    if (!dtype) {
      std::string supported;
      for (int i = 0; i < kNumDTypes; ++i)
        supported += (i ? ", " : "") + std::string(dtypeName(DType(i)));
      return fail(file, subject + " has dtype " + scalarTypeName(*scalarType) +
                            " (ScalarType " + Twine(*scalarType) +
                            "), a dtype Thunder does not support (supported: " + supported +
                            ")");
    }
    payload.dtype = *dtype;
    // Layout 7 is Strided; sparse and mkldnn tensors do not have a flat storage we can view.
    if (std::optional<int64_t> layout = tensor->getInteger("layout"); layout && *layout != 7)
      return fail(file, subject + " has layout " + Twine(*layout) +
                            " (not strided); only dense strided tensors are supported");

    const llvm::json::Array *sizes = tensor->getArray("sizes");
    const llvm::json::Array *strides = tensor->getArray("strides");
    if (!sizes || !strides)
      return bad("tensor_meta needs 'sizes' and 'strides' lists");
    if (sizes->size() != strides->size())
      return bad("tensor_meta has " + Twine(sizes->size()) + " sizes but " +
                 Twine(strides->size()) + " strides");
    for (size_t i = 0; i < sizes->size(); ++i) {
      std::optional<int64_t> size = asInt(&(*sizes)[i]);
      std::optional<int64_t> stride = asInt(&(*strides)[i]);
      // Weights are concrete; a symbolic ({"as_expr": ...}) size here means a corrupt file.
      if (!size || !stride)
        return bad("size and stride " + Twine(i) + " must be plain integers ({\"as_int\": n})");
      if (*size < 0 || *stride < 0)
        return bad("negative size or stride in dimension " + Twine(i));
      payload.sizes.push_back(*size);
      payload.strides.push_back(*stride);
    }
    std::optional<int64_t> offset = asInt(tensor->get("storage_offset"));
    if (!offset || *offset < 0)
      return bad("storage_offset must be a non-negative integer ({\"as_int\": n})");
    payload.storageOffset = *offset;

    std::string recordPath = dir + payload.pathName;
    if (!hasRecord(recordPath))
      return fail(file, subject + ": record '" + recordPath + "' is missing");
    Expected<StringRef> storage = record(recordPath);
    if (!storage)
      return storage.takeError();

    // torch reads a 0-byte record as zeros of the tensor's shape (_build_file_map).
    payload.zeroFilled = storage->empty();
    payload.storage = *storage;
    if (!payload.zeroFilled) {
      // The view touches elements up to storage_offset + sum((size_i - 1) * stride_i); all in
      // int64 with overflow checks, since the numbers come from the file.
      bool empty = llvm::is_contained(payload.sizes, 0);
      int64_t lastElement = payload.storageOffset;
      bool overflow = false;
      for (size_t i = 0; i < payload.sizes.size() && !empty && !overflow; ++i) {
        int64_t step;
        overflow |= llvm::MulOverflow(payload.sizes[i] - 1, payload.strides[i], step) ||
                    llvm::AddOverflow(lastElement, step, lastElement);
      }
      int64_t elementSize = dtypeSizeInBytes(payload.dtype);
      int64_t neededBytes = 0;
      if (!empty && !overflow)
        overflow = llvm::AddOverflow(lastElement, int64_t(1), lastElement) ||
                   llvm::MulOverflow(lastElement, elementSize, neededBytes);
      std::string tensorDesc = std::string(dtypeName(payload.dtype)) + " tensor " +
                               listString(payload.sizes) + " with strides " +
                               listString(payload.strides);
      if (payload.storageOffset)
        tensorDesc += " and storage offset " + std::to_string(payload.storageOffset);
      if (overflow)
        return fail(file, subject + " (" + recordPath + "): the " + tensorDesc +
                              " addresses more bytes than an int64 can count");
      if (uint64_t(neededBytes) > storage->size())
        return fail(file, subject + " (" + recordPath + "): record has " +
                              Twine(storage->size()) + " bytes, the " + tensorDesc + " needs " +
                              Twine(neededBytes));
    }
    result.push_back(std::move(payload));
  }
  return result;
}
