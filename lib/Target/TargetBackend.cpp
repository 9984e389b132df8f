//===- TargetBackend.cpp - The target backend interface -------------------===//
#include "thunder/Target/TargetBackend.h"

namespace thunder {

TargetBackend::~TargetBackend() = default;

} // namespace thunder
