//===- WeightsBlob.cpp - A model's weights, streamed to the artifact ------===//
#include "thunder/Target/Common/WeightsBlob.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "thunder/Target/Common/ArtifactSource.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>

using namespace mlir;

namespace thunder::codegen {

static uint64_t alignTo(uint64_t offset, uint64_t alignment) {
  return (offset + alignment - 1) / alignment * alignment;
}

uint64_t WeightsBlob::appendView(llvm::ArrayRef<char> bytes, uint64_t alignment) {
  uint64_t offset = alignTo(end, alignment);
  pieces.push_back({offset, bytes});
  end = offset + bytes.size();
  return offset;
}

uint64_t WeightsBlob::appendCopy(std::vector<char> bytes, uint64_t alignment) {
  owned.push_back(std::make_unique<std::vector<char>>(std::move(bytes)));
  return appendView(*owned.back(), alignment);
}

uint64_t WeightsBlob::appendGenerated(uint64_t bytes, uint64_t alignment,
                                      std::function<void(llvm::raw_ostream &)> writer) {
  uint64_t offset = alignTo(end, alignment);
  pieces.push_back({offset, {}, bytes, std::move(writer)});
  end = offset + bytes;
  return offset;
}

void WeightsBlob::write(llvm::raw_ostream &os) const {
  static const char zeros[256] = {};
  uint64_t at = 0;
  for (const Piece &piece : pieces) {
    for (uint64_t gap = piece.offset - at; gap;) {
      uint64_t n = std::min<uint64_t>(gap, sizeof(zeros));
      os.write(zeros, n);
      gap -= n;
    }
    if (piece.writer) {
      uint64_t before = os.tell();
      piece.writer(os);
      // A writer that wrote another size would shift every later piece.
      assert(os.tell() - before == piece.generatedBytes && "generated piece size");
      (void)before;
    } else {
      os.write(piece.bytes.data(), piece.bytes.size());
    }
    at = piece.offset + piece.size();
  }
}

FailureOr<uint64_t> appendConstant(Operation *constant, uint64_t alignment,
                                   llvm::StringRef fallbackName, WeightsBlob &blob,
                                   std::vector<WeightEntry> &entries) {
  auto op = cast<mlir::thunder::ConstantOp>(constant);
  return appendElements(op.getValue(), op.getLoc(), alignment, fallbackName, blob, entries);
}

FailureOr<uint64_t> appendElements(Attribute value, Location loc, uint64_t alignment,
                                   llvm::StringRef fallbackName, WeightsBlob &blob,
                                   std::vector<WeightEntry> &entries) {
  auto typed = dyn_cast<TypedAttr>(value);
  auto type = typed ? dyn_cast<RankedTensorType>(typed.getType()) : RankedTensorType();
  if (!type)
    return emitError(loc, "a constant without a ranked tensor type");
  Type element = type.getElementType();
  ArrayRef<char> bytes;
  std::vector<char> converted;
  std::string entryName = fallbackName.str();
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *data = resource.getRawHandle().getBlob();
    if (!data)
      return emitError(loc, "weight '")
             << resource.getRawHandle().getKey()
             << "' has no data (was its IR printed with elided weights?)";
    bytes = data->getData();
    entryName = resource.getRawHandle().getKey().str();
  } else if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (element.isInteger(1)) {
      // Stored bit-packed in the attribute; one byte each in the blob.
      for (bool b : dense.getValues<bool>())
        converted.push_back(b ? 1 : 0);
      bytes = converted;
    } else {
      bytes = dense.getRawData();
    }
  } else {
    return emitError(loc, "unsupported constant attribute");
  }
  int64_t expected = type.getNumElements() * elementBytes(element);
  if (static_cast<int64_t>(bytes.size()) != expected)
    return emitError(loc, "constant has ") << bytes.size() << " bytes, expected " << expected;
  uint64_t offset = converted.empty() ? blob.appendView(bytes, alignment)
                                      : blob.appendCopy(std::move(converted), alignment);
  entries.push_back({entryName, safetensorsDtype(element),
                     llvm::SmallVector<int64_t>(type.getShape()), offset,
                     offset + static_cast<uint64_t>(expected)});
  return offset;
}

WeightEntry absentEntry(llvm::StringRef name, RankedTensorType type) {
  uint64_t bytes = type.getNumElements() * elementBytes(type.getElementType());
  return {name.str(), safetensorsDtype(type.getElementType()),
          llvm::SmallVector<int64_t>(type.getShape()), 0, bytes, /*embedded=*/false};
}

std::string safetensorsHeader(llvm::StringRef modelName,
                              llvm::ArrayRef<WeightEntry> entries, int64_t *headerBytes) {
  std::string header;
  llvm::raw_string_ostream os(header);
  os << "{\"__metadata__\":{\"format\":\"thunder\",\"model\":" << cppString(modelName) << "}";
  for (const WeightEntry &e : entries) {
    os << "," << cppString(e.name) << ":{\"dtype\":\"" << e.dtype << "\",\"shape\":[";
    for (auto [i, d] : llvm::enumerate(e.shape))
      os << (i ? "," : "") << d;
    os << "],\"data_offsets\":[" << e.begin << "," << e.end << "]}";
  }
  os << "}";
  while ((8 + header.size()) % 64)
    header.push_back(' ');
  *headerBytes = header.size();
  std::string file(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    file[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return file + header;
}

} // namespace thunder::codegen
