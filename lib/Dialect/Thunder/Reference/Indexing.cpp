//===- Indexing.cpp - Index iteration over reference tensors --------------===//
//
// The strided walk every data movement op and reduction is written with.
//
//===----------------------------------------------------------------------===//
#include "Indexing.h"

#include "llvm/ADT/STLExtras.h"

#include <cstring>

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::reference;

SmallVector<int64_t> reference::stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

SmallVector<int64_t> reference::stridesOf(const Tensor &value) {
  if (value.isSplat())
    return SmallVector<int64_t>(value.getType().getRank(), 0);
  return stridesOf(value.getType().getShape());
}

void reference::forEachIndex(ArrayRef<int64_t> box, int64_t dstBase,
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

void reference::copyElement(Tensor &to, int64_t dst,
                        const Tensor &from, int64_t src) {
  int64_t size = to.getElementBytes();
  std::memcpy(to.getMutableBytes().data() + dst * size,
              from.getBytes().data() + (from.isSplat() ? 0 : src) * size, size);
}
