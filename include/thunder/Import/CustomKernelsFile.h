//===- CustomKernelsFile.h - Custom kernels registered in a file -*- C++ -*-===//
//
// `thunder-compile --custom-ops ops.yaml` (YAML or JSON, which is YAML too):
//
//   kernels:
//     - op: mylib::rms_norm          # or mylib.rms_norm.default
//       symbol: mylib_rms_norm       # the C function (default: from op)
//       cpu: rms_norm.cpp            # C++ source, relative to this file
//       cpu_library: librms.so       # or a shared library defining symbol
//       cuda: rms_norm.cu            # CUDA source
//       shape: same as input 0       # the result shape rule (documentation:
//                                    # the program records the shapes)
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_IMPORT_CUSTOMKERNELSFILE_H
#define THUNDER_IMPORT_CUSTOMKERNELSFILE_H

#include "thunder/Import/Importer.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace thunder::import {

/// "mylib.rms_norm.default" for "mylib::rms_norm" (the overload defaults to
/// "default"); a name already in that form is kept.
std::string customOpName(llvm::StringRef op);

/// "mylib_rms_norm": the C symbol a kernel of `op` gets when none is named.
std::string defaultCustomSymbol(llvm::StringRef op);

/// Reads a custom-kernels file (the sources it names are read too, relative
/// to the file's directory).
llvm::Expected<std::vector<CustomKernel>> readCustomKernelsFile(llvm::StringRef path);

} // namespace thunder::import

#endif // THUNDER_IMPORT_CUSTOMKERNELSFILE_H
