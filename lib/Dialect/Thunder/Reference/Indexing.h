//===- Indexing.h - Index iteration over reference tensors ------*- C++ -*-===//
//
// Private to lib/Dialect/Thunder/Reference: strides, a row-major walk over
// an index box, and element copies, shared by the data movement and the
// reductions.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_LIB_DIALECT_THUNDER_REFERENCE_INDEXING_H
#define THUNDER_LIB_DIALECT_THUNDER_REFERENCE_INDEXING_H

#include "thunder/Dialect/Thunder/Reference/Tensor.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::thunder::reference {

/// Row-major strides (in elements) of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape);

/// Strides of a value: its row-major strides, or zeros for a splat (every
/// index reads its one element).
SmallVector<int64_t> stridesOf(const Tensor &value);

/// Calls fn(dst, src) for every index of `box` in row-major order, with
/// dst = dstBase + sum(index[d] * dstStrides[d]) and src likewise.
void forEachIndex(ArrayRef<int64_t> box, int64_t dstBase,
                  ArrayRef<int64_t> dstStrides, int64_t srcBase,
                  ArrayRef<int64_t> srcStrides,
                  llvm::function_ref<void(int64_t, int64_t)> fn);

/// Copies element `src` of `from` to element `dst` of `to` (same type).
void copyElement(Tensor &to, int64_t dst, const Tensor &from, int64_t src);

} // namespace mlir::thunder::reference

#endif // THUNDER_LIB_DIALECT_THUNDER_REFERENCE_INDEXING_H
