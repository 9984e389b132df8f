//===- LibraryCalls.h - One table from library op to support-header call -*- C++ -*-===//
//
// The ops a backend runs as one call into its support header (data
// movement, reductions, GEMM, convolution, pooling, the row composites) take
// the same arguments on every target: this table writes the call once. What
// differs between targets is a CallStyle (indent, the GPU's launch context
// argument, line breaks) and the convolution's last argument; attention
// shares its argument list (attentionArgs) and each target reads its mask
// its own way.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_TARGET_COMMON_LIBRARYCALLS_H
#define THUNDER_TARGET_COMMON_LIBRARYCALLS_H

#include "thunder/Dialect/Thunder/IR/ThunderOps.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>

namespace thunder::codegen {

/// How a backend's generated code names values and sizes.
struct CallOperands {
  /// The value's data pointer.
  std::function<std::string(mlir::Value)> name;
  /// Its shape array.
  std::function<std::string(mlir::Value)> shape;
  /// Dim d as a host C expression.
  std::function<std::string(mlir::Value, unsigned)> dim;
  /// Its element count as a host C expression.
  std::function<std::string(mlir::Value)> numel;
  /// Its C element type.
  std::function<std::string(mlir::Value)> elem;
};

/// How a backend lays out a call (the spellings of one target's source).
struct CallStyle {
  /// Before each statement ("  " on the CPU, "    " inside a GPU unit).
  const char *indent;
  /// The first argument of every call ("" or the GPU's "c, ").
  const char *context;
  /// Between a Window's declaration and the call that uses it.
  const char *windowBreak;
  /// Stride and dilation written for a convolution's unused spatial dims.
  int convUnusedStep;
};

/// Writes the support-header call of `op` and returns true, or returns false
/// when `op` is not in the table (constants, views, attention, elementwise
/// ops: the backend's own). `convLast` gives a convolution's last argument;
/// `poolLayout`, where given, a pooling's layout argument ("" for channels
/// first, the default).
bool emitLibraryCall(mlir::Operation *op, const CallOperands &operands, const CallStyle &style,
                     llvm::function_ref<std::string(mlir::thunder::ConvolutionOp)> convLast,
                     llvm::raw_ostream &os,
                     llvm::function_ref<std::string(mlir::Operation *)> poolLayout = {});

/// "lhs, rhs, out, batch, M, N, K, transpose_lhs, transpose_rhs, shared_rhs":
/// the arguments of every target's matmul(), the product going to `out`.
std::string matmulArgs(mlir::thunder::MatmulOp m, const CallOperands &operands,
                       const std::string &out);

/// "q, k, v, out, batch, L, S, E, Ev, scale, causal": the arguments every
/// target's sdpa() takes before its mask; failure (diagnosed) for a dynamic
/// head dim without an explicit scale.
mlir::FailureOr<std::string> attentionArgs(mlir::thunder::ScaledDotProductAttentionOp a,
                                           const CallOperands &operands);

} // namespace thunder::codegen

#endif // THUNDER_TARGET_COMMON_LIBRARYCALLS_H
