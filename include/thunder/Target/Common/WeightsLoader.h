//===- WeightsLoader.h - The generated code that maps a weights file -*- C++ -*-===//
//
// With --external-weights a model's create() maps NAME.safetensors and
// checks that it is the file written with this library (its size and its
// header's length). Every C-family target generates that code; it is
// written once here.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_TARGET_COMMON_WEIGHTSLOADER_H
#define THUNDER_TARGET_COMMON_WEIGHTSLOADER_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace thunder::codegen {

/// How a target's create() names and wraps the loader's code.
struct WeightsLoaderStyle {
  /// The name of the `struct stat` local (the CPU's "st"; the GPU's create()
  /// holds its state in `st`, so "info").
  llvm::StringRef statVar;
  /// Whether the size mismatch message is on a line of its own.
  bool wrapSizeMessage;
};

/// The body of create() that opens and maps the weights file at `path` (a
/// parameter of create()), checks it has `fileBytes` bytes, and reads its
/// 8-byte header length into `uint64_t header`; `map` is the mapping, of
/// `<statVar>.st_size` bytes. On failure it writes `error` (of `error_size`
/// bytes) and returns 1 from create().
std::string mapWeightsFile(uint64_t fileBytes, const WeightsLoaderStyle &style);

} // namespace thunder::codegen

#endif // THUNDER_TARGET_COMMON_WEIGHTSLOADER_H
