//===- GpuDialect.h - What one C-family GPU target spells its own way -*- C++ -*-===//
//
// The GPU code generator (lib/Target/GPU) emits one kernel or library call
// per unit and a host program that replays the run as a graph. Everything
// that differs between GPU vendors' C++ dialects (CUDA, HIP) is a field of
// GpuDialect: a target is one instance of the table plus its toolchain
// command (DESIGN.md decision 7).
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_TARGET_GPU_GPUDIALECT_H
#define THUNDER_TARGET_GPU_GPUDIALECT_H

#include "thunder/Target/TargetBackend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace thunder::gpu {

/// A file written verbatim next to each model's generated sources.
struct SupportFile {
  const char *path;
  const char *contents;
};

/// What differs between the CUDA and HIP spellings of the generated code:
/// the one place to change for another C-family GPU target.
struct GpuDialect {
  const char *target;        ///< "cuda"
  const char *deviceEnum;    ///< THUNDER_DEVICE_CUDA
  const char *supportHeader; ///< thunder_cuda.cuh
  const char *libsHeader;    ///< thunder_cuda_libs.cuh (includes supportHeader)
  const char *ns;            ///< the support header's namespace
  const char *source;        ///< model.cu
  const char *streamType;    ///< cudaStream_t
  const char *memcpyAsync;   ///< cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, s)
  const char *deviceToDevice;
  const char *eventRecord, *streamWaitEvent;
  /// Bytes of the library workspace each stream gets, shared by the vendor's
  /// GEMM and convolution libraries (both choose algorithms that fit).
  int64_t libWorkspace;
  /// The option holding the architectures to build code for.
  std::string TargetOptions::*archs;
  /// The support headers (and the ABI header) written next to the sources.
  std::vector<SupportFile> supportFiles;
};

/// Emits the sources of `func` (planned, one function) for `dialect`.
mlir::FailureOr<EmittedSources> emitSources(mlir::func::FuncOp func,
                                            const TargetOptions &options,
                                            const GpuDialect &dialect);

} // namespace thunder::gpu

#endif // THUNDER_TARGET_GPU_GPUDIALECT_H
