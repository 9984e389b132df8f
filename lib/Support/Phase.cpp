//===- Phase.cpp - The named phases of a compile --------------------------===//
#include "thunder/Support/Phase.h"

#include "llvm/ADT/StringExtras.h"

namespace thunder {

static constexpr llvm::StringLiteral kNames[] = {"import", "graph",  "fusion",
                                                 "plan",   "source", "library"};

std::optional<Phase> parsePhase(llvm::StringRef name) {
  for (auto [i, n] : llvm::enumerate(kNames))
    if (n == name)
      return static_cast<Phase>(i);
  return std::nullopt;
}

llvm::StringRef phaseName(Phase phase) { return kNames[static_cast<int>(phase)]; }

std::string phaseNames() { return llvm::join(std::begin(kNames), std::end(kNames), ", "); }

} // namespace thunder
