//===- CPUBackend.h - The CPU code generator --------------------*- C++ -*-===//
#ifndef THUNDER_TARGET_CPU_CPUBACKEND_H
#define THUNDER_TARGET_CPU_CPUBACKEND_H

#include "thunder/Target/TargetBackend.h"

namespace thunder {

/// Emits C++ (OpenMP loops, CBLAS GEMMs) compiled by the system C++ compiler.
class CPUBackend final : public TargetBackend {
public:
  llvm::StringRef name() const override;
  llvm::StringRef translationName() const override { return "thunder-to-cpp"; }
  /// Tensors may live in output buffers before those are written.
  PlanNeeds planNeeds() const override;
  mlir::FailureOr<EmittedSources> emit(mlir::ModuleOp module,
                                       const TargetOptions &options) override;
  /// A unit per distinct kernel (-O<optLevel>, against a precompiled
  /// thunder_cpu.h) and the host program (-O1).
  std::vector<UnitCompile> compileUnits(const EmittedSources &sources,
                                        llvm::StringRef buildDir,
                                        const TargetOptions &options) const override;
  ToolchainCommand link(const EmittedSources &sources, llvm::StringRef buildDir,
                        llvm::StringRef output,
                        const TargetOptions &options) const override;
  /// One-architecture builds only (--cpu with one value).
  std::optional<ToolchainCommand>
  linkPartitions(llvm::ArrayRef<PartitionSources> partitions, llvm::StringRef indexUnit,
                 llvm::StringRef output, std::string &why) const override;
};

/// Registers the CPU backend as target "cpu".
void registerCPUTargetBackend();

} // namespace thunder

#endif // THUNDER_TARGET_CPU_CPUBACKEND_H
