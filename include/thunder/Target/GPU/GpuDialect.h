//===- GpuDialect.h - What one C-family GPU target spells its own way -*- C++ -*-===//
//
// The GPU code generator (lib/Target/GPU) emits one kernel or library call
// per unit and a host program that replays the run as a graph. Everything
// that differs between GPU vendors' C++ dialects (CUDA, HIP) is a field of
// GpuDialect: a target is one instance of the table plus its toolchain
// command (DESIGN.md decision 7). The support headers read the same facts
// from the dialect macros their vendor header defines (THUNDER_WARP_SIZE,
// THUNDER_SHFL_XOR, ...), so generated code and headers agree.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_TARGET_GPU_GPUDIALECT_H
#define THUNDER_TARGET_GPU_GPUDIALECT_H

#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
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

/// The vendor runtime's names the host program calls. Host-program text
/// refers to them as @key@ (GpuDialect::spell), key being the field's name.
struct GpuRuntime {
  const char *stream_t;              ///< cudaStream_t
  const char *error_t;               ///< cudaError_t
  const char *success;               ///< cudaSuccess
  const char *malloc;                ///< cudaMalloc
  const char *memcpy;                ///< cudaMemcpy (synchronous)
  const char *memcpyAsync;           ///< cudaMemcpyAsync(dst, src, n, kind, stream)
  const char *hostToDevice;          ///< cudaMemcpyHostToDevice
  const char *deviceToDevice;        ///< cudaMemcpyDeviceToDevice
  const char *streamCreate;          ///< cudaStreamCreate (named in messages)
  const char *streamCreateWithFlags; ///< cudaStreamCreateWithFlags
  const char *streamNonBlocking;     ///< cudaStreamNonBlocking
  const char *streamSynchronize;     ///< cudaStreamSynchronize
  const char *streamDestroy;         ///< cudaStreamDestroy
  const char *deviceSynchronize;     ///< cudaDeviceSynchronize
  const char *getLastError;          ///< cudaGetLastError
  const char *eventRecord;           ///< cudaEventRecord(event, stream)
  const char *streamWaitEvent;       ///< cudaStreamWaitEvent(stream, event)
  const char *graph;                 ///< "CUDA graph" (in comments)
};

/// How kernels are declared and launched.
struct GpuKernelSyntax {
  const char *kernel;       ///< __global__
  const char *launchBounds; ///< __launch_bounds__ (applied to kBlock)
  const char *shared;       ///< __shared__
  const char *launchOpen;   ///< <<< (grid, block, shared bytes, stream)
  const char *launchClose;  ///< >>>
  /// Threads that execute in lockstep (the shuffles' width): 32 on NVIDIA,
  /// 64 on AMD's CDNA wavefronts.
  int warpSize;
  /// The most threads per block: a block reduction's scratch holds one
  /// partial per warp, maxBlockThreads / warpSize of them.
  int maxBlockThreads;
};

/// The vendor libraries a model's GEMMs, convolutions and attention may call.
struct GpuLibraries {
  const char *gemm; ///< "cuBLASLt" (in comments and messages)
  const char *conv; ///< "cuDNN"
  /// Whether the GEMM library takes elements of type `t`.
  bool (*gemmTakes)(mlir::Type t);
  /// Whether a convolution goes through the convolution library (else the
  /// support header's im2col + GEMM or direct kernel).
  bool (*convTakes)(mlir::thunder::ConvolutionOp op);
  /// Bytes of the library workspace each call gets, shared by the GEMM and
  /// convolution libraries (both choose algorithms that fit).
  int64_t workspace;
  /// The largest head dim the attention kernel takes.
  int64_t attentionMaxHeadDim;
};

/// What differs between the CUDA and HIP spellings of the generated code:
/// the one place to fill in for another C-family GPU target.
struct GpuDialect {
  const char *target;        ///< "cuda": the artifact's target name
  const char *displayName;   ///< "CUDA": in diagnostics
  const char *deviceEnum;    ///< THUNDER_DEVICE_CUDA
  const char *supportHeader; ///< thunder_cuda.cuh
  const char *libsHeader;    ///< thunder_cuda_libs.cuh (includes supportHeader)
  const char *ns;            ///< the support headers' namespace
  const char *source;        ///< model.cu
  GpuRuntime runtime;
  GpuKernelSyntax syntax;
  GpuLibraries libraries;
  /// The option holding the architectures to build code for (the toolchain
  /// builds one binary per entry).
  std::string TargetOptions::*archs;
  /// The dialect's own support headers, written next to the sources (the
  /// GPU library adds the vendor-neutral ones: thunder_scalar.h,
  /// thunder_gpu.h, thunder_gpu_nn.h, thunder-c/artifact.h).
  std::vector<SupportFile> supportFiles;

  /// `text` with every @key@ replaced by that runtime name (GpuRuntime's
  /// fields), or by @gemm_lib@ / @conv_lib@ the libraries' names. An unknown
  /// key is a programming error (fatal).
  std::string spell(llvm::StringRef text) const;
};

/// Emits the sources of `func` (planned, one function) for `dialect`.
mlir::FailureOr<EmittedSources> emitSources(mlir::func::FuncOp func,
                                            const TargetOptions &options,
                                            const GpuDialect &dialect);

} // namespace thunder::gpu

#endif // THUNDER_TARGET_GPU_GPUDIALECT_H
