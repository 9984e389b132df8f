//===- TPUBackend.h - StableHLO for XLA through PJRT ------------*- C++ -*-===//
#ifndef THUNDER_TARGET_TPU_TPUBACKEND_H
#define THUNDER_TARGET_TPU_TPUBACKEND_H

#include "thunder/Target/TargetBackend.h"

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace thunder {

/// The tpu target: the graph-phase program in StableHLO (thunder-convert-to-stablehlo), which
/// XLA compiles when the library is loaded, through a PJRT plugin (libtpu on a TPU host,
/// XLA's CPU or CUDA plugin elsewhere). Fusion, scheduling and memory planning are XLA's, so
/// the pipeline stops at the graph phase. The library embeds the program and the weights
/// and exports thunder_program_entry_v1 beside the model table; the runtime's PJRT
/// executor runs it (docs/tpu.md).
class TPUBackend final : public TargetBackend {
public:
  llvm::StringRef name() const override;
  llvm::StringRef translationName() const override { return "thunder-to-stablehlo"; }
  /// The graph pipeline with every composite decomposed (XLA has no softmax or attention
  /// op); later phases are refused.
  void buildPipeline(mlir::OpPassManager &pm, Phase from, Phase to,
                     const PipelineOptions &options) const override;
  Phase emitsFrom() const override { return Phase::Graph; }
  mlir::FailureOr<EmittedSources> emit(mlir::ModuleOp module,
                                       const TargetOptions &options) override;
  ToolchainCommand link(const EmittedSources &sources, llvm::StringRef buildDir,
                        llvm::StringRef output,
                        const TargetOptions &options) const override;
};

/// Registers the tpu backend as target "tpu".
void registerTPUTargetBackend();

/// The file of the tpu target's sources that holds the program: NAME.stablehlo.mlir.
std::string stablehloProgramFile(llvm::StringRef modelName);

} // namespace thunder

#endif // THUNDER_TARGET_TPU_TPUBACKEND_H
