//===- OpUtils.h - Helpers shared by the op implementations -----*- C++ -*-===//
//
// Private to lib/Dialect/Thunder/IR: shape conversions between MLIR and the
// MLIR-free ShapeMath helpers, and uniform error reporting from
// inferReturnTypes.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_LIB_DIALECT_THUNDER_IR_OPUTILS_H
#define THUNDER_LIB_DIALECT_THUNDER_IR_OPUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "thunder/Support/ShapeMath.h"

namespace mlir::thunder::detail {

inline ::thunder::Shape toShape(ArrayRef<int64_t> dims) {
  return ::thunder::Shape(dims.begin(), dims.end());
}
inline ::thunder::Shape toShape(Type type) {
  return toShape(cast<ShapedType>(type).getShape());
}
inline std::vector<int64_t> toVector(ArrayRef<int64_t> values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

/// Reports a failed inference as "'<op>' op <message>" (the same shape as
/// Operation::emitOpError) when a location is given, and fails.
inline LogicalResult inferError(std::optional<Location> loc, StringRef opName,
                                const Twine &message) {
  if (loc)
    mlir::emitError(*loc) << "'" << opName << "' op " << message;
  return failure();
}

/// Formats an MLIR shape like ShapeMath does: "[2, ?, 4]".
inline std::string shapeStr(Type type) {
  return ::thunder::formatShape(toShape(type));
}

/// Prints a type to a string, for messages built with Twine.
inline std::string typeStr(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

} // namespace mlir::thunder::detail

#endif // THUNDER_LIB_DIALECT_THUNDER_IR_OPUTILS_H
