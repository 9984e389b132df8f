//===- Tensor.cpp - A tensor value of the reference interpreter -----------===//
//
// Tensors over borrowed or owned bytes, and the encoding of elements in them:
// the bits of the element type, little-endian as the host (i1 one byte).
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/Reference/Tensor.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;
using namespace mlir::thunder::reference;
using llvm::APFloat;
using llvm::APInt;

int64_t mlir::thunder::reference::getElementBytes(Type type) {
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

std::optional<Tensor> Tensor::fromAttr(ElementsAttr attr) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  Tensor value;
  value.type = type;
  value.elementBytes = reference::getElementBytes(type.getElementType());
  value.setElementType(type.getElementType());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    value.bytes = blob->getData();
    if (static_cast<int64_t>(value.bytes.size()) !=
        type.getNumElements() * value.elementBytes)
      return std::nullopt;
    return value;
  }
  auto dense = dyn_cast<DenseIntOrFPElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  value.splat = dense.isSplat();
  if (type.getElementType().isInteger(1)) {
    // Dense literals pack i1 into bits; blobs and the evaluator use bytes.
    value.owned = std::make_shared<AsmResourceBlob>(
        HeapAsmResourceBlob::allocate(value.getNumStored(), 1));
    MutableArrayRef<char> out = value.owned->getMutableData();
    if (value.splat)
      out[0] = dense.getSplatValue<bool>();
    else
      for (auto [i, b] : llvm::enumerate(dense.getValues<bool>()))
        out[i] = b;
    value.bytes = out;
    return value;
  }
  value.bytes = dense.getRawData();
  return value;
}

Tensor Tensor::allocate(RankedTensorType type, bool splat) {
  Tensor value;
  value.type = type;
  value.splat = splat;
  value.elementBytes = reference::getElementBytes(type.getElementType());
  value.setElementType(type.getElementType());
  int64_t size = value.getNumStored() * value.elementBytes;
  value.owned = std::make_shared<AsmResourceBlob>(HeapAsmResourceBlob::allocate(
      size, static_cast<size_t>(value.elementBytes)));
  MutableArrayRef<char> data = value.owned->getMutableData();
  std::memset(data.data(), 0, data.size());
  value.bytes = data;
  return value;
}

MutableArrayRef<char> Tensor::getMutableBytes() {
  assert(owned && "only an allocated tensor is written");
  return MutableArrayRef<char>(const_cast<char *>(bytes.data()), bytes.size());
}

void Tensor::setElementType(Type element) {
  bitWidth = element.getIntOrFloatBitWidth();
  if (auto floatType = dyn_cast<FloatType>(element))
    semantics = &floatType.getFloatSemantics();
}

Element Tensor::get(int64_t i) const {
  const char *p = bytes.data() + (splat ? 0 : i) * elementBytes;
  Type element = getElementType();
  if (bitWidth == 1)
    return Element(element, APInt(1, *p != 0));
  uint64_t raw = 0;
  std::memcpy(&raw, p, static_cast<size_t>(elementBytes));
  APInt bits(bitWidth, raw);
  if (semantics)
    return Element(element, APFloat(*semantics, bits));
  return Element(element, bits);
}

void Tensor::set(int64_t i, const Element &value) {
  assert(value.getType() == getElementType() && "an element of another type");
  char *p = getMutableBytes().data() + i * elementBytes;
  if (bitWidth == 1) {
    *p = !value.getInt().isZero();
    return;
  }
  APInt bits = value.isFloat() ? value.getFloat().bitcastToAPInt() : value.getInt();
  uint64_t raw = bits.getZExtValue();
  std::memcpy(p, &raw, static_cast<size_t>(elementBytes));
}

Tensor Tensor::withType(RankedTensorType newType) const {
  Tensor value = *this;
  value.type = newType;
  return value;
}

Tensor Tensor::materialize() const {
  if (!splat)
    return *this;
  Tensor value = allocate(type, /*splat=*/false);
  char *out = const_cast<char *>(value.bytes.data());
  for (int64_t i = 0, n = getNumElements(); i < n; ++i)
    std::memcpy(out + i * elementBytes, bytes.data(), elementBytes);
  return value;
}

ElementsAttr Tensor::toAttr(StringRef blobName, bool literal) const {
  Type element = getElementType();
  if (element.isInteger(1) && (splat || literal)) {
    SmallVector<bool> values;
    for (char b : bytes)
      values.push_back(b != 0);
    return DenseElementsAttr::get(type, values);
  }
  // A raw buffer of one element is read as a splat.
  if (splat || literal)
    return DenseElementsAttr::getFromRawBuffer(type, bytes);
  size_t align = static_cast<size_t>(elementBytes);
  AsmResourceBlob blob;
  if (!owned)
    // Borrowed from an attribute that lives as long as the context.
    blob = UnmanagedAsmResourceBlob::allocateWithAlign(bytes, align);
  else if (owned.use_count() == 1 && bytes.data() == owned->getData().data())
    blob = std::move(*owned);
  else
    blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, align);
  return DenseResourceElementsAttr::get(type, blobName, std::move(blob));
}

