//===- HIPBackend.h - The HIP code generator --------------------*- C++ -*-===//
#ifndef THUNDER_TARGET_HIP_HIPBACKEND_H
#define THUNDER_TARGET_HIP_HIPBACKEND_H

#include "thunder/Target/TargetBackend.h"

#include <string>
#include <vector>

namespace thunder {

/// Emits HIP C++ for AMD Instinct GPUs (fused kernels written for 64-lane
/// wavefronts, hipBLASLt/rocBLAS GEMMs, an attention kernel, a host program
/// that launches through the HIP module API) compiled by clang alone into
/// one library holding a code object per architecture of
/// TargetOptions::arch. The library loads libamdhip64 when it runs.
class HIPBackend final : public TargetBackend {
public:
  llvm::StringRef name() const override;
  llvm::StringRef translationName() const override { return "thunder-to-hip"; }
  /// MI200, MI300 and MI350.
  llvm::StringRef defaultArch() const override { return "gfx90a,gfx942,gfx950"; }
  /// The architectures parse (parseHipArchs).
  llvm::Error validateOptions(const TargetOptions &options) const override;
  /// hipBLASLt's workspace in the arena.
  PlanNeeds planNeeds() const override;
  mlir::FailureOr<EmittedSources> emit(mlir::ModuleOp module,
                                       const TargetOptions &options) override;
  ToolchainCommand link(const EmittedSources &sources, llvm::StringRef buildDir,
                        llvm::StringRef output,
                        const TargetOptions &options) const override;
};

/// Registers the HIP backend as target "hip".
void registerHIPTargetBackend();

/// Registers target "cuda,hip": one library holding the cuda and hip
/// targets' code, the vendor picked by the runtime when it loads
/// (CudaHipBackend.cpp).
void registerCudaHipTargetBackend();

/// Parses --arch / --hip-arch ("gfx90a,gfx942"): each entry one of the
/// CDNA architectures the wave64 code is written for (gfx90a, gfx942,
/// gfx950); failure when the list is empty or holds another name.
mlir::FailureOr<std::vector<std::string>> parseHipArchs(llvm::StringRef list);

/// The LDS (shared memory) a block may use on `arch`, in bytes: 64 KiB on
/// gfx90a and gfx942, 160 KiB on gfx950; 0 for an unknown arch.
int64_t hipLdsBytes(llvm::StringRef arch);

/// The compile flag that gives the support headers the LDS a block may use
/// (THUNDER_HIP_LDS_BYTES): the smallest among `archList`'s architectures.
std::string hipLdsDefine(llvm::StringRef archList);

/// The clang++ that compiles HIP for the three architectures: $THUNDER_HIP_CLANG,
/// else the one CMake found (clang++-22), else "clang++-22" (then the
/// driver reports it missing from PATH).
std::string findHipClang();

} // namespace thunder

#endif // THUNDER_TARGET_HIP_HIPBACKEND_H
