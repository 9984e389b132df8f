//===- ConstantEvaluator.cpp - Thunder ops evaluated at compile time ------===//
//
// Reads constant tensors from their attributes (resource blobs without a
// copy), computes views, data movement, gathers, elementwise ops, conversions
// and reductions over them with PyTorch's semantics, and writes the results back
// as attributes. Floating-point arithmetic runs in double and rounds once to
// the result type (f16 and bf16 through f32, as PyTorch computes them), so a
// single op gives PyTorch's f32 result exactly for +, -, *, / and sqrt.
//
//===----------------------------------------------------------------------===//
#include "ConstantEvaluator.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::thunder;

//===----------------------------------------------------------------------===//
// Element encodings
//===----------------------------------------------------------------------===//

namespace {
enum ElementKind : unsigned { F64, F32, F16, BF16, OtherFloat, I64, I32, I16, I8, I1 };
} // namespace

static ElementKind kindOf(Type type) {
  if (type.isF64())
    return F64;
  if (type.isF32())
    return F32;
  if (type.isF16())
    return F16;
  if (type.isBF16())
    return BF16;
  if (isa<FloatType>(type))
    return OtherFloat; // the f8 types, through APFloat
  switch (type.getIntOrFloatBitWidth()) {
  case 64:
    return I64;
  case 32:
    return I32;
  case 16:
    return I16;
  case 8:
    return I8;
  default:
    return I1;
  }
}

int64_t mlir::thunder::getElementBytes(Type type) {
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

static uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
static float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// f32 -> f16, round to nearest even (F. Giesen's float_to_half_fast3_rtne:
/// subnormal results are rounded by an f32 addition, normal ones by adding
/// the rounding bias to the bits).
static uint16_t floatToHalf(float f) {
  const uint32_t infinity = 255u << 23, halfOverflow = (127u + 16) << 23;
  const uint32_t denormMagic = ((127u - 15) + (23 - 10) + 1) << 23;
  uint32_t u = bitsOf(f);
  uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint16_t out;
  if (u >= halfOverflow) {
    out = u > infinity ? 0x7e00 : 0x7c00; // NaN stays NaN, the rest is inf
  } else if (u < (113u << 23)) {
    out = static_cast<uint16_t>(bitsOf(floatOf(u) + floatOf(denormMagic)) -
                                denormMagic);
  } else {
    uint32_t odd = (u >> 13) & 1;
    u += ((15u - 127u) << 23) + 0xfff;
    u += odd;
    out = static_cast<uint16_t>(u >> 13);
  }
  return out | static_cast<uint16_t>(sign >> 16);
}

/// f16 -> f32 (exact).
static float halfToFloat(uint16_t h) {
  const uint32_t magic = 113u << 23, shiftedExp = 0x7c00u << 13;
  uint32_t out = (h & 0x7fffu) << 13;
  uint32_t exp = shiftedExp & out;
  out += (127u - 15) << 23;
  if (exp == shiftedExp) {
    out += (128u - 16) << 23; // inf, NaN
  } else if (exp == 0) {
    out += 1u << 23; // zero, subnormal: renormalize
    out = bitsOf(floatOf(out) - floatOf(magic));
  }
  return floatOf(out | (static_cast<uint32_t>(h & 0x8000u) << 16));
}

/// f32 -> bf16, round to nearest even (c10::round_to_nearest_even).
static uint16_t floatToBFloat(float f) {
  uint32_t u = bitsOf(f);
  if (std::isnan(f))
    return static_cast<uint16_t>((u >> 16) | 0x40); // a quiet NaN
  u += 0x7fffu + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

static float bfloatToFloat(uint16_t b) {
  return floatOf(static_cast<uint32_t>(b) << 16);
}

template <typename T>
static T load(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
static void store(char *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

//===----------------------------------------------------------------------===//
// ConstantTensor
//===----------------------------------------------------------------------===//

std::optional<ConstantTensor> ConstantTensor::fromAttr(ElementsAttr attr) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  ConstantTensor value;
  value.type = type;
  value.elementBytes = mlir::thunder::getElementBytes(type.getElementType());
  value.kind = kindOf(type.getElementType());
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

ConstantTensor ConstantTensor::allocate(RankedTensorType type, bool splat) {
  ConstantTensor value;
  value.type = type;
  value.splat = splat;
  value.elementBytes = mlir::thunder::getElementBytes(type.getElementType());
  value.kind = kindOf(type.getElementType());
  int64_t size = value.getNumStored() * value.elementBytes;
  value.owned = std::make_shared<AsmResourceBlob>(HeapAsmResourceBlob::allocate(
      size, static_cast<size_t>(value.elementBytes)));
  MutableArrayRef<char> data = value.owned->getMutableData();
  std::memset(data.data(), 0, data.size());
  value.bytes = data;
  return value;
}

MutableArrayRef<char> ConstantTensor::getMutableBytes() {
  assert(owned && "only an allocated tensor is written");
  return MutableArrayRef<char>(const_cast<char *>(bytes.data()), bytes.size());
}

double ConstantTensor::getFloat(int64_t i) const {
  const char *p = bytes.data() + (splat ? 0 : i) * elementBytes;
  switch (kind) {
  case F64:
    return load<double>(p);
  case F32:
    return load<float>(p);
  case F16:
    return halfToFloat(load<uint16_t>(p));
  case BF16:
    return bfloatToFloat(load<uint16_t>(p));
  default: {
    const llvm::fltSemantics &semantics =
        cast<FloatType>(getElementType()).getFloatSemantics();
    APFloat value(semantics, APInt(8 * elementBytes, load<uint8_t>(p)));
    bool losesInfo;
    value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
    return value.convertToDouble();
  }
  }
}

int64_t ConstantTensor::getInt(int64_t i) const {
  const char *p = bytes.data() + (splat ? 0 : i) * elementBytes;
  switch (kind) {
  case I64:
    return load<int64_t>(p);
  case I32:
    return load<int32_t>(p);
  case I16:
    return load<int16_t>(p);
  case I8:
    return load<int8_t>(p);
  default:
    return *p != 0;
  }
}

void ConstantTensor::setFloat(int64_t i, double value) {
  char *p = const_cast<char *>(bytes.data()) + i * elementBytes;
  switch (kind) {
  case F64:
    return store<double>(p, value);
  case F32:
    return store<float>(p, static_cast<float>(value));
  case F16:
    return store<uint16_t>(p, floatToHalf(static_cast<float>(value)));
  case BF16:
    return store<uint16_t>(p, floatToBFloat(static_cast<float>(value)));
  default: {
    APFloat converted(static_cast<float>(value));
    bool losesInfo;
    converted.convert(cast<FloatType>(getElementType()).getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &losesInfo);
    return store<uint8_t>(
        p, static_cast<uint8_t>(converted.bitcastToAPInt().getZExtValue()));
  }
  }
}

void ConstantTensor::setInt(int64_t i, int64_t value) {
  char *p = const_cast<char *>(bytes.data()) + i * elementBytes;
  switch (kind) {
  case I64:
    return store<int64_t>(p, value);
  case I32:
    return store<int32_t>(p, static_cast<int32_t>(value));
  case I16:
    return store<int16_t>(p, static_cast<int16_t>(value));
  case I8:
    return store<int8_t>(p, static_cast<int8_t>(value));
  default:
    *p = value != 0;
  }
}

ConstantTensor ConstantTensor::withType(RankedTensorType newType) const {
  ConstantTensor value = *this;
  value.type = newType;
  return value;
}

ConstantTensor ConstantTensor::materialize() const {
  if (!splat)
    return *this;
  ConstantTensor value = allocate(type, /*splat=*/false);
  char *out = const_cast<char *>(value.bytes.data());
  for (int64_t i = 0, n = getNumElements(); i < n; ++i)
    std::memcpy(out + i * elementBytes, bytes.data(), elementBytes);
  return value;
}

ElementsAttr ConstantTensor::toAttr(StringRef blobName, bool literal) const {
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

//===----------------------------------------------------------------------===//
// Index iteration
//===----------------------------------------------------------------------===//

/// Row-major strides (in elements) of `shape`.
static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Strides of a value: its row-major strides, or zeros for a splat (every
/// index reads its one element).
static SmallVector<int64_t> stridesOf(const ConstantTensor &value) {
  if (value.isSplat())
    return SmallVector<int64_t>(value.getType().getRank(), 0);
  return stridesOf(value.getType().getShape());
}

/// Calls fn(dst, src) for every index of `box` in row-major order, with
/// dst = dstBase + sum(index[d] * dstStrides[d]) and src likewise.
static void forEachIndex(ArrayRef<int64_t> box, int64_t dstBase,
                         ArrayRef<int64_t> dstStrides, int64_t srcBase,
                         ArrayRef<int64_t> srcStrides,
                         llvm::function_ref<void(int64_t, int64_t)> fn) {
  int64_t rank = box.size();
  if (llvm::is_contained(box, 0))
    return;
  if (rank == 0)
    return fn(dstBase, srcBase);
  SmallVector<int64_t> index(rank, 0);
  int64_t inner = box.back(), dstInner = dstStrides.back(),
          srcInner = srcStrides.back();
  int64_t dst = dstBase, src = srcBase;
  while (true) {
    for (int64_t i = 0; i < inner; ++i)
      fn(dst + i * dstInner, src + i * srcInner);
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      ++index[d];
      dst += dstStrides[d];
      src += srcStrides[d];
      if (index[d] < box[d])
        break;
      dst -= index[d] * dstStrides[d];
      src -= index[d] * srcStrides[d];
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/// Copies element `src` of `from` to element `dst` of `to` (same type).
static void copyElement(ConstantTensor &to, int64_t dst,
                        const ConstantTensor &from, int64_t src) {
  int64_t size = to.getElementBytes();
  std::memcpy(to.getMutableBytes().data() + dst * size,
              from.getBytes().data() + (from.isSplat() ? 0 : src) * size, size);
}

/// A result of `type` whose element at each index is the operand's element at
/// `base + sum(index[d] * strides[d])`: transpose, broadcast, slice.
static ConstantTensor gather(RankedTensorType type, const ConstantTensor &operand,
                             int64_t base, ArrayRef<int64_t> strides) {
  if (operand.isSplat()) {
    ConstantTensor result = ConstantTensor::allocate(type, /*splat=*/true);
    copyElement(result, 0, operand, 0);
    return result;
  }
  ConstantTensor result = ConstantTensor::allocate(type, /*splat=*/false);
  SmallVector<int64_t> dstStrides = stridesOf(type.getShape());
  forEachIndex(type.getShape(), 0, dstStrides, base, strides,
               [&](int64_t dst, int64_t src) {
                 copyElement(result, dst, operand, src);
               });
  return result;
}

//===----------------------------------------------------------------------===//
// Views and data movement
//===----------------------------------------------------------------------===//

static ConstantTensor evalTranspose(TransposeOp op, RankedTensorType type,
                                    const ConstantTensor &operand) {
  SmallVector<int64_t> operandStrides = stridesOf(operand);
  SmallVector<int64_t> strides;
  for (int64_t d : op.getPermutation())
    strides.push_back(operandStrides[d]);
  return gather(type, operand, 0, strides);
}

/// Operand dim i goes to result dim dims[i]; a new or size-1 dim repeats.
static ConstantTensor evalBroadcast(ArrayRef<int64_t> dims, RankedTensorType type,
                                    const ConstantTensor &operand) {
  SmallVector<int64_t> operandStrides = stridesOf(operand);
  SmallVector<int64_t> strides(type.getRank(), 0);
  for (auto [i, d] : llvm::enumerate(dims))
    if (operand.getType().getDimSize(i) != 1)
      strides[d] = operandStrides[i];
  return gather(type, operand, 0, strides);
}

static ConstantTensor evalSlice(SliceOp op, RankedTensorType type,
                                const ConstantTensor &operand) {
  SmallVector<int64_t> operandStrides = stridesOf(operand);
  SmallVector<int64_t> strides;
  int64_t base = 0;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    base += op.getStart()[d] * operandStrides[d];
    strides.push_back(operandStrides[d] * op.getStep()[d]);
  }
  return gather(type, operand, base, strides);
}

static ConstantTensor evalConcat(ConcatOp op, RankedTensorType type,
                                 ArrayRef<const ConstantTensor *> inputs) {
  bool sameSplat = llvm::all_of(inputs, [&](const ConstantTensor *input) {
    return input->isSplat() && input->getBytes() == inputs[0]->getBytes();
  });
  if (sameSplat)
    return inputs[0]->withType(type);
  ConstantTensor result = ConstantTensor::allocate(type, /*splat=*/false);
  SmallVector<int64_t> dstStrides = stridesOf(type.getShape());
  int64_t dim = op.getDim(), offset = 0;
  for (const ConstantTensor *input : inputs) {
    ArrayRef<int64_t> shape = input->getType().getShape();
    forEachIndex(shape, offset * dstStrides[dim], dstStrides, 0,
                 stridesOf(*input), [&](int64_t dst, int64_t src) {
                   copyElement(result, dst, *input, src);
                 });
    offset += shape[dim];
  }
  return result;
}

static ConstantTensor evalPad(PadOp op, RankedTensorType type,
                              const ConstantTensor &operand) {
  // Fill with the padding value, then copy the operand's part that lands
  // inside the result (negative padding crops).
  ConstantTensor result = ConstantTensor::allocate(type, /*splat=*/false);
  bool isFloat = isa<FloatType>(type.getElementType());
  double value = op.getValue().convertToDouble();
  for (int64_t i = 0, n = result.getNumElements(); i < n; ++i) {
    if (isFloat)
      result.setFloat(i, value);
    else
      result.setInt(i, static_cast<int64_t>(value));
  }
  SmallVector<int64_t> dstStrides = stridesOf(type.getShape());
  SmallVector<int64_t> srcStrides = stridesOf(operand);
  SmallVector<int64_t> box;
  int64_t dstBase = 0, srcBase = 0;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t low = op.getLow()[d], size = operand.getType().getDimSize(d);
    int64_t begin = std::max<int64_t>(0, low);
    int64_t end = std::min<int64_t>(type.getDimSize(d), low + size);
    if (end <= begin)
      return result;
    box.push_back(end - begin);
    dstBase += begin * dstStrides[d];
    srcBase += (begin - low) * srcStrides[d];
  }
  forEachIndex(box, dstBase, dstStrides, srcBase, srcStrides,
               [&](int64_t dst, int64_t src) {
                 copyElement(result, dst, operand, src);
               });
  return result;
}

//===----------------------------------------------------------------------===//
// Gathers
//===----------------------------------------------------------------------===//

/// Index `i` of `index`, or std::nullopt when it is outside [0, size):
/// PyTorch raises on such an index, so the op is left to run.
static std::optional<int64_t> indexAt(const ConstantTensor &index, int64_t i,
                                      int64_t size) {
  int64_t value = index.getInt(i);
  if (value < 0 || value >= size)
    return std::nullopt;
  return value;
}

/// torch.gather: result[p] = input[p with p[dim] = index[p]].
static FailureOr<ConstantTensor> evalGather(int64_t dim, RankedTensorType type,
                                            const ConstantTensor &input,
                                            const ConstantTensor &index) {
  SmallVector<int64_t> inputStrides = stridesOf(input);
  int64_t dimSize = input.getType().getDimSize(dim), dimStride = inputStrides[dim];
  inputStrides[dim] = 0;
  ConstantTensor result = ConstantTensor::allocate(type, /*splat=*/false);
  bool inRange = true;
  forEachIndex(type.getShape(), 0, stridesOf(type.getShape()), 0, inputStrides,
               [&](int64_t dst, int64_t src) {
                 std::optional<int64_t> i = indexAt(index, dst, dimSize);
                 if (!i) {
                   inRange = false;
                   return;
                 }
                 copyElement(result, dst, input, src + *i * dimStride);
               });
  if (!inRange)
    return failure();
  return result;
}

/// torch.index_select: result[o, k, i] = input[o, index[k], i] around `dim`;
/// embedding is index_select of rows, shaped like the indices.
static FailureOr<ConstantTensor> evalIndexSelect(int64_t dim,
                                                 RankedTensorType type,
                                                 const ConstantTensor &input,
                                                 const ConstantTensor &index) {
  ArrayRef<int64_t> shape = input.getType().getShape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (int64_t d = dim + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= shape[d];
  int64_t count = index.getNumElements(), dimSize = shape[dim];
  ConstantTensor result = ConstantTensor::allocate(type, /*splat=*/false);
  for (int64_t k = 0; k < count; ++k) {
    std::optional<int64_t> row = indexAt(index, k, dimSize);
    if (!row)
      return failure();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        copyElement(result, (o * count + k) * inner + i, input,
                    (o * dimSize + *row) * inner + i);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// A result of `type` that is a splat when every operand is.
static ConstantTensor allocateLike(RankedTensorType type,
                                   ArrayRef<const ConstantTensor *> operands) {
  bool splat = llvm::all_of(operands, [](const ConstantTensor *operand) {
    return operand->isSplat();
  });
  return ConstantTensor::allocate(type, splat);
}

/// Evaluates a float op elementwise: fn(operand values) for every element.
template <typename Fn>
static ConstantTensor mapFloat(RankedTensorType type,
                               ArrayRef<const ConstantTensor *> operands, Fn fn) {
  ConstantTensor result = allocateLike(type, operands);
  for (int64_t i = 0, n = result.getNumStored(); i < n; ++i) {
    if (operands.size() == 1)
      result.setFloat(i, fn(operands[0]->getFloat(i), 0.0));
    else
      result.setFloat(i, fn(operands[0]->getFloat(i), operands[1]->getFloat(i)));
  }
  return result;
}

/// Evaluates an integer op elementwise; fn returns std::nullopt for a value
/// with no compile-time meaning (division by zero), which fails the fold.
template <typename Fn>
static FailureOr<ConstantTensor> mapInt(RankedTensorType type,
                                        ArrayRef<const ConstantTensor *> operands,
                                        Fn fn) {
  ConstantTensor result = allocateLike(type, operands);
  for (int64_t i = 0, n = result.getNumStored(); i < n; ++i) {
    std::optional<int64_t> value =
        fn(operands[0]->getInt(i),
           operands.size() > 1 ? operands[1]->getInt(i) : int64_t(0));
    if (!value)
      return failure();
    result.setInt(i, *value);
  }
  return result;
}

/// Wrapping integer arithmetic (PyTorch's integers wrap; the result is then
/// truncated to the element width).
static int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
static int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
static int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

/// torch.remainder: the sign follows the divisor.
static double floatRemainder(double a, double b) {
  double mod = std::fmod(a, b);
  if (mod != 0 && ((b < 0) != (mod < 0)))
    mod += b;
  return mod;
}

/// PyTorch's floor division of floats (div_floor_floating), exact where
/// floor(a / b) is not.
static double floatFloorDiv(double a, double b) {
  if (b == 0)
    return a / b;
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0)))
    div -= 1;
  if (div == 0)
    return std::copysign(0.0, a / b);
  double floored = std::floor(div);
  if (div - floored > 0.5)
    floored += 1;
  return floored;
}

/// Integer division and remainder; std::nullopt on division by zero or on
/// the one overflowing quotient (INT64_MIN / -1).
static std::optional<int64_t> intDiv(int64_t a, int64_t b, RoundingMode mode) {
  if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1))
    return std::nullopt;
  int64_t q = a / b;
  if (mode == RoundingMode::Floor && (a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}
static std::optional<int64_t> intRemainder(int64_t a, int64_t b) {
  if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1))
    return std::nullopt;
  int64_t mod = a % b;
  if (mod != 0 && ((b < 0) != (mod < 0)))
    mod += b;
  return mod;
}
/// Integer power by squaring, wrapping; negative exponents are an error in
/// PyTorch, so they do not fold.
static std::optional<int64_t> intPow(int64_t base, int64_t exponent) {
  if (exponent < 0)
    return std::nullopt;
  int64_t result = 1;
  while (exponent) {
    if (exponent & 1)
      result = wrapMul(result, base);
    base = wrapMul(base, base);
    exponent >>= 1;
  }
  return result;
}

static double gelu(double x, GeluApproximation approximation) {
  if (approximation == GeluApproximation::Tanh) {
    const double k = 0.7978845608028654; // sqrt(2 / pi)
    return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
  }
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}

/// The function of a unary float op, or null.
static std::function<double(double)> unaryFloatFn(Operation *op) {
  using Fn = std::function<double(double)>;
  return llvm::TypeSwitch<Operation *, Fn>(op)
      .Case([](NegOp) { return Fn([](double x) { return -x; }); })
      .Case([](AbsOp) { return Fn([](double x) { return std::fabs(x); }); })
      .Case([](ReluOp) {
        return Fn([](double x) { return std::isnan(x) || x > 0 ? x : 0.0; });
      })
      .Case([](ExpOp) { return Fn([](double x) { return std::exp(x); }); })
      .Case([](LogOp) { return Fn([](double x) { return std::log(x); }); })
      .Case([](Log1pOp) { return Fn([](double x) { return std::log1p(x); }); })
      .Case([](SqrtOp) { return Fn([](double x) { return std::sqrt(x); }); })
      .Case([](RsqrtOp) { return Fn([](double x) { return 1 / std::sqrt(x); }); })
      .Case([](ReciprocalOp) { return Fn([](double x) { return 1 / x; }); })
      .Case([](TanhOp) { return Fn([](double x) { return std::tanh(x); }); })
      .Case([](SigmoidOp) {
        return Fn([](double x) { return 1 / (1 + std::exp(-x)); });
      })
      .Case([](ErfOp) { return Fn([](double x) { return std::erf(x); }); })
      .Case([](SinOp) { return Fn([](double x) { return std::sin(x); }); })
      .Case([](CosOp) { return Fn([](double x) { return std::cos(x); }); })
      .Case([](FloorOp) { return Fn([](double x) { return std::floor(x); }); })
      .Case([](CeilOp) { return Fn([](double x) { return std::ceil(x); }); })
      .Case([](SiluOp) {
        return Fn([](double x) { return x / (1 + std::exp(-x)); });
      })
      .Case([](GeluOp gelu_) {
        GeluApproximation approximation = gelu_.getApproximate();
        return Fn([=](double x) { return gelu(x, approximation); });
      })
      .Default([](Operation *) { return Fn(); });
}

/// The function of a binary float op, or null.
static std::function<double(double, double)> binaryFloatFn(Operation *op) {
  using Fn = std::function<double(double, double)>;
  return llvm::TypeSwitch<Operation *, Fn>(op)
      .Case([](AddOp) { return Fn([](double a, double b) { return a + b; }); })
      .Case([](SubOp) { return Fn([](double a, double b) { return a - b; }); })
      .Case([](MulOp) { return Fn([](double a, double b) { return a * b; }); })
      .Case([](DivOp div) {
        switch (div.getRoundingMode()) {
        case RoundingMode::Trunc:
          return Fn([](double a, double b) { return std::trunc(a / b); });
        case RoundingMode::Floor:
          return Fn(floatFloorDiv);
        default:
          return Fn([](double a, double b) { return a / b; });
        }
      })
      .Case([](MaximumOp) {
        return Fn([](double a, double b) {
          return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
        });
      })
      .Case([](MinimumOp) {
        return Fn([](double a, double b) {
          return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
        });
      })
      .Case([](RemainderOp) { return Fn(floatRemainder); })
      .Case([](PowOp) {
        return Fn([](double a, double b) { return std::pow(a, b); });
      })
      .Default([](Operation *) { return Fn(); });
}

/// The function of an integer (or i1) elementwise op, or null.
static std::function<std::optional<int64_t>(int64_t, int64_t)>
intFn(Operation *op) {
  using Result = std::optional<int64_t>;
  using Fn = std::function<Result(int64_t, int64_t)>;
  return llvm::TypeSwitch<Operation *, Fn>(op)
      .Case([](NegOp) { return Fn([](int64_t a, int64_t) -> Result { return wrapSub(0, a); }); })
      .Case([](AbsOp) {
        return Fn([](int64_t a, int64_t) -> Result { return a < 0 ? wrapSub(0, a) : a; });
      })
      .Case([](ReluOp) { return Fn([](int64_t a, int64_t) -> Result { return std::max<int64_t>(a, 0); }); })
      .Case([](AddOp) { return Fn([](int64_t a, int64_t b) -> Result { return wrapAdd(a, b); }); })
      .Case([](SubOp) { return Fn([](int64_t a, int64_t b) -> Result { return wrapSub(a, b); }); })
      .Case([](MulOp) { return Fn([](int64_t a, int64_t b) -> Result { return wrapMul(a, b); }); })
      .Case([](DivOp div) {
        RoundingMode mode = div.getRoundingMode();
        return Fn([=](int64_t a, int64_t b) { return intDiv(a, b, mode); });
      })
      .Case([](MaximumOp) { return Fn([](int64_t a, int64_t b) -> Result { return std::max(a, b); }); })
      .Case([](MinimumOp) { return Fn([](int64_t a, int64_t b) -> Result { return std::min(a, b); }); })
      .Case([](RemainderOp) { return Fn(intRemainder); })
      .Case([](PowOp) { return Fn(intPow); })
      .Case([](LogicalNotOp) { return Fn([](int64_t a, int64_t) -> Result { return !a; }); })
      .Case([](LogicalAndOp) { return Fn([](int64_t a, int64_t b) -> Result { return a && b; }); })
      .Case([](LogicalOrOp) { return Fn([](int64_t a, int64_t b) -> Result { return a || b; }); })
      .Case([](LogicalXorOp) { return Fn([](int64_t a, int64_t b) -> Result { return !a != !b; }); })
      .Default([](Operation *) { return Fn(); });
}

template <typename T>
static bool compare(ComparisonDirection direction, T a, T b) {
  switch (direction) {
  case ComparisonDirection::EQ:
    return a == b;
  case ComparisonDirection::NE:
    return a != b;
  case ComparisonDirection::LT:
    return a < b;
  case ComparisonDirection::LE:
    return a <= b;
  case ComparisonDirection::GT:
    return a > b;
  case ComparisonDirection::GE:
    return a >= b;
  }
  return false;
}

static ConstantTensor evalCompare(CompareOp op, RankedTensorType type,
                                  const ConstantTensor &lhs,
                                  const ConstantTensor &rhs) {
  ConstantTensor result = allocateLike(type, {&lhs, &rhs});
  bool isFloat = isa<FloatType>(lhs.getElementType());
  for (int64_t i = 0, n = result.getNumStored(); i < n; ++i)
    result.setInt(i, isFloat ? compare(op.getDirection(), lhs.getFloat(i),
                                       rhs.getFloat(i))
                             : compare(op.getDirection(), lhs.getInt(i),
                                       rhs.getInt(i)));
  return result;
}

static ConstantTensor evalWhere(RankedTensorType type,
                                const ConstantTensor &condition,
                                const ConstantTensor &onTrue,
                                const ConstantTensor &onFalse) {
  ConstantTensor result = allocateLike(type, {&condition, &onTrue, &onFalse});
  for (int64_t i = 0, n = result.getNumStored(); i < n; ++i)
    copyElement(result, i, condition.getInt(i) ? onTrue : onFalse, i);
  return result;
}

static ConstantTensor evalClamp(ClampOp op, RankedTensorType type,
                                const ConstantTensor &operand) {
  std::optional<double> lo, hi;
  if (auto min = op.getMin())
    lo = min->convertToDouble();
  if (auto max = op.getMax())
    hi = max->convertToDouble();
  ConstantTensor result = allocateLike(type, {&operand});
  bool isFloat = isa<FloatType>(type.getElementType());
  for (int64_t i = 0, n = result.getNumStored(); i < n; ++i) {
    if (isFloat) {
      // NaN stays NaN: both comparisons are false.
      double x = operand.getFloat(i);
      if (lo && x < *lo)
        x = *lo;
      if (hi && x > *hi)
        x = *hi;
      result.setFloat(i, x);
    } else {
      int64_t x = operand.getInt(i);
      if (lo && x < static_cast<int64_t>(*lo))
        x = static_cast<int64_t>(*lo);
      if (hi && x > static_cast<int64_t>(*hi))
        x = static_cast<int64_t>(*hi);
      result.setInt(i, x);
    }
  }
  return result;
}

/// PyTorch's .to(): float narrowing rounds to nearest even, float to integer
/// truncates toward zero, anything to i1 is `!= 0`. A float that does not
/// fit the integer type (or NaN) has no defined value and does not fold.
static FailureOr<ConstantTensor> evalConvert(RankedTensorType type,
                                             const ConstantTensor &operand) {
  ConstantTensor result = allocateLike(type, {&operand});
  Type from = operand.getElementType(), to = type.getElementType();
  bool fromFloat = isa<FloatType>(from), toFloat = isa<FloatType>(to);
  unsigned toWidth = to.getIntOrFloatBitWidth();
  for (int64_t i = 0, n = result.getNumStored(); i < n; ++i) {
    if (fromFloat && toFloat) {
      result.setFloat(i, operand.getFloat(i));
    } else if (fromFloat && to.isInteger(1)) {
      result.setInt(i, operand.getFloat(i) != 0);
    } else if (fromFloat) {
      double x = std::trunc(operand.getFloat(i));
      double limit = std::ldexp(1.0, toWidth - 1);
      if (!(x >= -limit && x < limit))
        return failure();
      result.setInt(i, static_cast<int64_t>(x));
    } else if (toFloat) {
      // i64 -> f32 rounds once, not through f64.
      int64_t x = operand.getInt(i);
      result.setFloat(i, to.isF32() ? static_cast<double>(static_cast<float>(x))
                                    : static_cast<double>(x));
    } else {
      result.setInt(i, operand.getInt(i));
    }
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {
enum class Reduction { Sum, Mean, Max, Min, Prod };
} // namespace

static FailureOr<ConstantTensor> evalReduction(Reduction kind,
                                               ArrayRef<int64_t> dims,
                                               RankedTensorType type,
                                               const ConstantTensor &input) {
  ArrayRef<int64_t> shape = input.getType().getShape();
  int64_t count = 1;
  for (int64_t d : dims)
    count *= shape[d];
  if (count == 0 && (kind == Reduction::Max || kind == Reduction::Min))
    return failure(); // PyTorch raises on an empty max/min
  bool isFloat = isa<FloatType>(type.getElementType());

  // Accumulators, one per result element; floats accumulate in double.
  int64_t outCount = type.getNumElements();
  SmallVector<double> facc;
  SmallVector<int64_t> iacc;
  double finit = kind == Reduction::Max   ? -INFINITY
                 : kind == Reduction::Min ? INFINITY
                 : kind == Reduction::Prod ? 1.0
                                           : 0.0;
  int64_t iinit = kind == Reduction::Max   ? std::numeric_limits<int64_t>::min()
                  : kind == Reduction::Min ? std::numeric_limits<int64_t>::max()
                  : kind == Reduction::Prod ? 1
                                            : 0;
  auto accumulate = [&](int64_t out, int64_t in) {
    if (isFloat) {
      double x = input.getFloat(in), &acc = facc[out];
      switch (kind) {
      case Reduction::Sum:
      case Reduction::Mean:
        acc += x;
        break;
      case Reduction::Prod:
        acc *= x;
        break;
      case Reduction::Max: // NaN wins: once acc is NaN no comparison holds
        if (std::isnan(x) || x > acc)
          acc = x;
        break;
      case Reduction::Min:
        if (std::isnan(x) || x < acc)
          acc = x;
        break;
      }
      return;
    }
    int64_t x = input.getInt(in), &acc = iacc[out];
    switch (kind) {
    case Reduction::Sum:
    case Reduction::Mean:
      acc = wrapAdd(acc, x);
      break;
    case Reduction::Prod:
      acc = wrapMul(acc, x);
      break;
    case Reduction::Max:
      acc = std::max(acc, x);
      break;
    case Reduction::Min:
      acc = std::min(acc, x);
      break;
    }
  };

  if (input.isSplat()) {
    // Every result element reduces `count` copies of one value.
    ConstantTensor result = ConstantTensor::allocate(type, /*splat=*/true);
    if (isFloat) {
      double x = input.getFloat(0);
      double value = kind == Reduction::Sum    ? x * count
                     : kind == Reduction::Prod ? std::pow(x, count)
                     : kind == Reduction::Mean ? (count ? x : NAN)
                                               : x;
      result.setFloat(0, value);
    } else {
      int64_t x = input.getInt(0);
      int64_t value = kind == Reduction::Sum    ? wrapMul(x, count)
                      : kind == Reduction::Prod ? *intPow(x, count)
                                                : x;
      result.setInt(0, value);
    }
    return result;
  }

  if (isFloat)
    facc.assign(outCount, finit);
  else
    iacc.assign(outCount, iinit);
  // Result strides over the kept dims; a reduced dim does not move.
  SmallVector<int64_t> outStrides(shape.size(), 0);
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (llvm::is_contained(dims, d))
      continue;
    outStrides[d] = stride;
    stride *= shape[d];
  }
  forEachIndex(shape, 0, outStrides, 0, stridesOf(shape), accumulate);

  ConstantTensor result = ConstantTensor::allocate(type, /*splat=*/false);
  for (int64_t i = 0; i < outCount; ++i) {
    if (isFloat)
      result.setFloat(i, kind == Reduction::Mean ? facc[i] / count : facc[i]);
    else
      result.setInt(i, iacc[i]);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

bool mlir::thunder::isEvaluable(Operation *op) {
  if (isa<ReshapeOp, TransposeOp, BroadcastOp, ExpandOp, SliceOp, ConcatOp,
          PadOp, GatherOp, IndexSelectOp, EmbeddingOp, ConvertOp, CompareOp, WhereOp, ClampOp, SumOp, MeanOp, MaxOp,
          MinOp, ProdOp>(op))
    return true;
  return unaryFloatFn(op) || binaryFloatFn(op) || intFn(op);
}

FailureOr<ConstantTensor>
mlir::thunder::evaluate(Operation *op, ArrayRef<const ConstantTensor *> operands) {
  if (op->getNumResults() != 1 || operands.size() != op->getNumOperands())
    return failure();
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return failure();
  const ConstantTensor *first = operands.empty() ? nullptr : operands[0];
  if (!first)
    return failure();
  // The f8 types are only moved: how a value rounds into them (saturating
  // or to NaN out of range) is the target's, as PyTorch's own differs
  // between its kernels.
  if (kindOf(type.getElementType()) == OtherFloat &&
      !isa<ReshapeOp, TransposeOp, BroadcastOp, ExpandOp, SliceOp, ConcatOp,
           GatherOp, IndexSelectOp, EmbeddingOp, WhereOp>(op))
    return failure();
  auto reduce = [&](Reduction kind, ArrayRef<int64_t> dims) {
    return evalReduction(kind, dims, type, *first);
  };

  return llvm::TypeSwitch<Operation *, FailureOr<ConstantTensor>>(op)
      .Case([&](ReshapeOp) { return first->withType(type); })
      .Case([&](TransposeOp transpose) {
        return evalTranspose(transpose, type, *first);
      })
      .Case([&](BroadcastOp broadcast) {
        return evalBroadcast(broadcast.getBroadcastDims(), type, *first);
      })
      .Case([&](ExpandOp) {
        int64_t rank = first->getType().getRank();
        int64_t offset = type.getRank() - rank;
        SmallVector<int64_t> dims =
            llvm::to_vector(llvm::seq<int64_t>(offset, offset + rank));
        return evalBroadcast(dims, type, *first);
      })
      .Case([&](SliceOp slice) { return evalSlice(slice, type, *first); })
      .Case([&](ConcatOp concat) { return evalConcat(concat, type, operands); })
      .Case([&](PadOp pad) { return evalPad(pad, type, *first); })
      .Case([&](GatherOp gather) {
        return evalGather(gather.getDim(), type, *first, *operands[1]);
      })
      .Case([&](IndexSelectOp select) {
        return evalIndexSelect(select.getDim(), type, *first, *operands[1]);
      })
      .Case([&](EmbeddingOp) {
        // Rows of the table, the result shaped [indices..., D].
        auto rows = RankedTensorType::get(
            {operands[1]->getNumElements(), first->getType().getDimSize(1)},
            type.getElementType());
        FailureOr<ConstantTensor> selected =
            evalIndexSelect(0, rows, *first, *operands[1]);
        if (failed(selected))
          return selected;
        return FailureOr<ConstantTensor>(selected->withType(type));
      })
      .Case([&](ConvertOp) { return evalConvert(type, *first); })
      .Case([&](CompareOp compare) {
        return evalCompare(compare, type, *operands[0], *operands[1]);
      })
      .Case([&](WhereOp) {
        return evalWhere(type, *operands[0], *operands[1], *operands[2]);
      })
      .Case([&](ClampOp clamp) { return evalClamp(clamp, type, *first); })
      .Case([&](SumOp sum) { return reduce(Reduction::Sum, sum.getDims()); })
      .Case([&](MeanOp mean) { return reduce(Reduction::Mean, mean.getDims()); })
      .Case([&](MaxOp max) { return reduce(Reduction::Max, max.getDims()); })
      .Case([&](MinOp min) { return reduce(Reduction::Min, min.getDims()); })
      .Case([&](ProdOp prod) { return reduce(Reduction::Prod, prod.getDims()); })
      .Default([&](Operation *) -> FailureOr<ConstantTensor> {
        if (isa<FloatType>(type.getElementType())) {
          if (operands.size() == 1)
            if (auto fn = unaryFloatFn(op))
              return mapFloat(type, operands,
                              [&](double a, double) { return fn(a); });
          if (operands.size() == 2)
            if (auto fn = binaryFloatFn(op))
              return mapFloat(type, operands, fn);
          return failure();
        }
        if (auto fn = intFn(op))
          return mapInt(type, operands, fn);
        return failure();
      });
}
