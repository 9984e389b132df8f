//===- SetPhase.cpp - thunder-set-phase -----------------------------------===//
//
// Records the phase a pipeline has brought the module to, and refuses to
// move a module backwards: running the fusion pipeline on a planned module
// would outline kernels twice, so it is an error at the pipeline's end rather
// than a confusing failure later.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Passes.h"
#include "thunder/Dialect/Thunder/Transforms/PhaseMarker.h"

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERSETPHASE
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using ::thunder::Phase;

FailureOr<Phase> mlir::thunder::readPhase(ModuleOp module) {
  Attribute attr = module->getAttr(kPhaseAttrName);
  if (!attr)
    return Phase::Import;
  auto name = dyn_cast<StringAttr>(attr);
  std::optional<Phase> phase =
      name ? ::thunder::parsePhase(name.getValue()) : std::nullopt;
  if (!phase || !::thunder::isIRPhase(*phase))
    return module.emitError() << kPhaseAttrName << " must name a phase of the "
                              << "IR (import, graph, fusion, plan), got " << attr;
  return *phase;
}

void mlir::thunder::writePhase(ModuleOp module, Phase phase) {
  if (phase == Phase::Import) {
    module->removeAttr(kPhaseAttrName);
    return;
  }
  module->setAttr(kPhaseAttrName,
                  StringAttr::get(module.getContext(), ::thunder::phaseName(phase)));
}

namespace {
struct ThunderSetPhase : mlir::thunder::impl::ThunderSetPhaseBase<ThunderSetPhase> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<Phase> target = ::thunder::parsePhase(phase);
    if (!target || !::thunder::isIRPhase(*target) || *target == Phase::Import) {
      module.emitError() << "thunder-set-phase: '" << phase
                         << "' is not a phase a pipeline ends at (graph, "
                            "fusion, plan)";
      return signalPassFailure();
    }
    FailureOr<Phase> current = mlir::thunder::readPhase(module);
    if (failed(current))
      return signalPassFailure();
    if (*current >= *target) {
      module.emitError() << "the " << phase << " pipeline ran on a module "
                         << "already at phase '" << ::thunder::phaseName(*current)
                         << "'; run only the phases after it (thunder-compile "
                            "reads the phase from the module)";
      return signalPassFailure();
    }
    mlir::thunder::writePhase(module, *target);
    markAllAnalysesPreserved();
  }
};
} // namespace
