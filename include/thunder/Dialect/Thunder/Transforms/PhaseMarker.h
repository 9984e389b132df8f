//===- PhaseMarker.h - The phase a module has reached -----------*- C++ -*-===//
//
// Each phase's pipeline ends with thunder-set-phase, which records the phase
// on the module as `thunder.phase = "<name>"`. The driver reads it to know
// where a module enters a compile (`thunder-compile x.mlir`), and the
// backends check it before emitting: no op-name matching decides a phase.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_DIALECT_THUNDER_TRANSFORMS_PHASEMARKER_H
#define THUNDER_DIALECT_THUNDER_TRANSFORMS_PHASEMARKER_H

#include "mlir/IR/BuiltinOps.h"
#include "thunder/Support/Phase.h"

namespace mlir::thunder {

/// The module attribute that records the phase.
inline constexpr llvm::StringLiteral kPhaseAttrName = "thunder.phase";

/// The phase recorded on `module`: Phase::Import when it has none (the
/// importer's output). Reports a diagnostic on the module and fails when the
/// attribute is not a string naming an IR phase.
FailureOr<::thunder::Phase> readPhase(ModuleOp module);

/// Records `phase` (an IR phase) on `module`; Import removes the marker.
void writePhase(ModuleOp module, ::thunder::Phase phase);

} // namespace mlir::thunder

#endif // THUNDER_DIALECT_THUNDER_TRANSFORMS_PHASEMARKER_H
