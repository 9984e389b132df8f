//===- TensorOps.cpp - Reference semantics of data movement and gathers ---===//
//
// Views, data movement and gathers: element copies along strided walks, the
// element type untouched, so no rounding happens here. A splat operand of a
// view gives a splat result.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/Reference/Ops.h"

#include "Indexing.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::reference;

/// A result of `type` whose element at each index is the operand's element at
/// `base + sum(index[d] * strides[d])`: transpose, broadcast, slice.
static Tensor gather(RankedTensorType type, const Tensor &operand, int64_t base,
                     ArrayRef<int64_t> strides) {
  if (operand.isSplat()) {
    Tensor result = Tensor::allocate(type, /*splat=*/true);
    copyElement(result, 0, operand, 0);
    return result;
  }
  Tensor result = Tensor::allocate(type, /*splat=*/false);
  SmallVector<int64_t> dstStrides = stridesOf(type.getShape());
  forEachIndex(type.getShape(), 0, dstStrides, base, strides,
               [&](int64_t dst, int64_t src) {
                 copyElement(result, dst, operand, src);
               });
  return result;
}

Tensor reference::evalReshapeOp(const Tensor &operand, RankedTensorType type) {
  return operand.withType(type);
}

Tensor reference::evalTransposeOp(const Tensor &operand,
                                  ArrayRef<int64_t> permutation,
                                  RankedTensorType type) {
  SmallVector<int64_t> operandStrides = stridesOf(operand);
  SmallVector<int64_t> strides;
  for (int64_t d : permutation)
    strides.push_back(operandStrides[d]);
  return gather(type, operand, 0, strides);
}

Tensor reference::evalBroadcastOp(const Tensor &operand, ArrayRef<int64_t> dims,
                                  RankedTensorType type) {
  SmallVector<int64_t> operandStrides = stridesOf(operand);
  SmallVector<int64_t> strides(type.getRank(), 0);
  for (auto [i, d] : llvm::enumerate(dims))
    if (operand.getType().getDimSize(i) != 1)
      strides[d] = operandStrides[i];
  return gather(type, operand, 0, strides);
}

Tensor reference::evalExpandOp(const Tensor &operand, RankedTensorType type) {
  int64_t rank = operand.getType().getRank();
  int64_t offset = type.getRank() - rank;
  SmallVector<int64_t> dims =
      llvm::to_vector(llvm::seq<int64_t>(offset, offset + rank));
  return evalBroadcastOp(operand, dims, type);
}

Tensor reference::evalSliceOp(const Tensor &operand, ArrayRef<int64_t> start,
                              ArrayRef<int64_t> step, RankedTensorType type) {
  SmallVector<int64_t> operandStrides = stridesOf(operand);
  SmallVector<int64_t> strides;
  int64_t base = 0;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    // (Static shapes only: a negative start, a dynamic dim's, never gets here.)
    base += start[d] * operandStrides[d];
    strides.push_back(operandStrides[d] * step[d]);
  }
  return gather(type, operand, base, strides);
}

Tensor reference::evalConcatOp(ArrayRef<const Tensor *> inputs, int64_t dim,
                               RankedTensorType type) {
  bool sameSplat = llvm::all_of(inputs, [&](const Tensor *input) {
    return input->isSplat() && input->getBytes() == inputs[0]->getBytes();
  });
  if (sameSplat)
    return inputs[0]->withType(type);
  Tensor result = Tensor::allocate(type, /*splat=*/false);
  SmallVector<int64_t> dstStrides = stridesOf(type.getShape());
  int64_t offset = 0;
  for (const Tensor *input : inputs) {
    ArrayRef<int64_t> shape = input->getType().getShape();
    forEachIndex(shape, offset * dstStrides[dim], dstStrides, 0,
                 stridesOf(*input), [&](int64_t dst, int64_t src) {
                   copyElement(result, dst, *input, src);
                 });
    offset += shape[dim];
  }
  return result;
}

Tensor reference::evalPadOp(const Tensor &operand, ArrayRef<int64_t> low,
                            double value, RankedTensorType type) {
  // Fill with the padding value, then copy the operand's part that lands
  // inside the result (negative padding crops).
  Tensor result = Tensor::allocate(type, /*splat=*/false);
  Element fill = Element::fromDouble(type.getElementType(), value);
  for (int64_t i = 0, n = result.getNumElements(); i < n; ++i)
    result.set(i, fill);
  SmallVector<int64_t> dstStrides = stridesOf(type.getShape());
  SmallVector<int64_t> srcStrides = stridesOf(operand);
  SmallVector<int64_t> box;
  int64_t dstBase = 0, srcBase = 0;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t size = operand.getType().getDimSize(d);
    int64_t begin = std::max<int64_t>(0, low[d]);
    int64_t end = std::min<int64_t>(type.getDimSize(d), low[d] + size);
    if (end <= begin)
      return result;
    box.push_back(end - begin);
    dstBase += begin * dstStrides[d];
    srcBase += (begin - low[d]) * srcStrides[d];
  }
  forEachIndex(box, dstBase, dstStrides, srcBase, srcStrides,
               [&](int64_t dst, int64_t src) {
                 copyElement(result, dst, operand, src);
               });
  return result;
}

/// Index `i` of `index`, or std::nullopt when it is outside [0, size):
/// PyTorch raises on such an index.
static std::optional<int64_t> indexAt(const Tensor &index, int64_t i,
                                      int64_t size) {
  int64_t value = index.get(i).toInt();
  if (value < 0 || value >= size)
    return std::nullopt;
  return value;
}

FailureOr<Tensor> reference::evalGatherOp(const Tensor &input,
                                          const Tensor &index, int64_t dim,
                                          RankedTensorType type) {
  SmallVector<int64_t> inputStrides = stridesOf(input);
  int64_t dimSize = input.getType().getDimSize(dim);
  int64_t dimStride = inputStrides[dim];
  inputStrides[dim] = 0;
  Tensor result = Tensor::allocate(type, /*splat=*/false);
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

FailureOr<Tensor> reference::evalIndexSelectOp(const Tensor &input,
                                               const Tensor &index, int64_t dim,
                                               RankedTensorType type) {
  ArrayRef<int64_t> shape = input.getType().getShape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (int64_t d = dim + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= shape[d];
  int64_t count = index.getNumElements(), dimSize = shape[dim];
  Tensor result = Tensor::allocate(type, /*splat=*/false);
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

FailureOr<Tensor> reference::evalEmbeddingOp(const Tensor &table,
                                             const Tensor &indices,
                                             RankedTensorType type) {
  // index_select of rows, then shaped like the indices.
  auto rows = RankedTensorType::get(
      {indices.getNumElements(), table.getType().getDimSize(1)},
      type.getElementType());
  FailureOr<Tensor> selected = evalIndexSelectOp(table, indices, 0, rows);
  if (failed(selected))
    return failure();
  return selected->withType(type);
}
