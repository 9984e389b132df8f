//===- Phase.h - The named phases of a compile ------------------*- C++ -*-===//
//
// DESIGN.md decision 6: a compile goes through named phases, and
// `--compile-to=<phase>` stops after any of them. The phase a module has
// reached is recorded on it (the `thunder.phase` module attribute, set by
// thunder-set-phase at the end of each phase's pipeline), so a module written
// at one phase enters the next compile where it left off.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_SUPPORT_PHASE_H
#define THUNDER_SUPPORT_PHASE_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace thunder {

/// The phases of a compile, in order: the program as imported, after the
/// graph pipeline, after fusion (kernels), scheduled and memory-planned, the
/// generated sources, the linked library. The first four are IR (recorded on
/// the module); the last two are files.
enum class Phase { Import, Graph, Fusion, Plan, Source, Library };

/// The phase named `name` ("import", ..., "library"); std::nullopt when unknown.
std::optional<Phase> parsePhase(llvm::StringRef name);

/// The name of `phase`, as parsePhase reads it.
llvm::StringRef phaseName(Phase phase);

/// Every phase name in order, comma-separated (for error messages).
std::string phaseNames();

/// True for the phases whose result is IR (import .. plan).
inline bool isIRPhase(Phase phase) { return phase <= Phase::Plan; }

} // namespace thunder

#endif // THUNDER_SUPPORT_PHASE_H
