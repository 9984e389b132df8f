//===- CUDABackend.h - The CUDA code generator ------------------*- C++ -*-===//
#ifndef THUNDER_TARGET_CUDA_CUDABACKEND_H
#define THUNDER_TARGET_CUDA_CUDABACKEND_H

#include "thunder/Target/TargetBackend.h"

#include <string>
#include <vector>

namespace thunder {

/// Emits CUDA C++ (fused kernels, cuBLASLt GEMMs, an attention kernel, a host
/// program that replays a CUDA graph) compiled by nvcc into one library with
/// code for every architecture of TargetOptions::arch.
class CUDABackend final : public TargetBackend {
public:
  llvm::StringRef name() const override;
  llvm::StringRef translationName() const override { return "thunder-to-cuda"; }
  /// Ampere and Hopper (sm_90a: Hopper's own instructions).
  llvm::StringRef defaultArch() const override { return "sm_80,sm_90a"; }
  /// The architectures parse (parseCudaArchs).
  llvm::Error validateOptions(const TargetOptions &options) const override;
  /// cuBLASLt's and cuDNN's workspaces in the arena (borrowed output
  /// buffers are not supported yet).
  PlanNeeds planNeeds() const override;
  mlir::FailureOr<EmittedSources> emit(mlir::ModuleOp module,
                                       const TargetOptions &options) override;
  ToolchainCommand link(const EmittedSources &sources, llvm::StringRef buildDir,
                        llvm::StringRef output,
                        const TargetOptions &options) const override;
};

/// Registers the CUDA backend as target "cuda".
void registerCUDATargetBackend();

/// Parses --arch ("sm_80,sm_90a"): each entry sm_<digits>[a|f];
/// failure when the list is empty or an entry is malformed.
mlir::FailureOr<std::vector<std::string>> parseCudaArchs(llvm::StringRef list);

/// The CUDA toolkit's nvcc: $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc, or
/// nvcc on PATH.
std::string findNvcc();

} // namespace thunder

#endif // THUNDER_TARGET_CUDA_CUDABACKEND_H
