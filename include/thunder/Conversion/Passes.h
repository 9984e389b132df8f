//===- Passes.h - Conversions out of the `thunder` dialect ------*- C++ -*-===//
#ifndef THUNDER_CONVERSION_PASSES_H
#define THUNDER_CONVERSION_PASSES_H

#include "thunder/Conversion/ThunderToStablehlo/ThunderToStablehlo.h"

namespace mlir::thunder {

#define GEN_PASS_REGISTRATION
#include "thunder/Conversion/Passes.h.inc"

} // namespace mlir::thunder

#endif // THUNDER_CONVERSION_PASSES_H
