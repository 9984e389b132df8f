//===- RegisterTargets.cpp - Every target Thunder compiles for ------------===//
//
// The one place a new target is added to the compiler: the driver, the CLI,
// the Python binding, thunder-opt and thunder-translate find it here through
// the registry (docs/architecture.md, "Adding a target").
//
//===----------------------------------------------------------------------===//
#include "thunder/Target/CPU/CPUBackend.h"
#include "thunder/Target/CUDA/CUDABackend.h"
#include "thunder/Target/HIP/HIPBackend.h"
#include "thunder/Target/TPU/TPUBackend.h"
#include "thunder/Target/TargetBackend.h"

void thunder::registerAllTargetBackends() {
  registerCPUTargetBackend();
  registerCUDATargetBackend();
  registerHIPTargetBackend();
  registerCudaHipTargetBackend();
  registerTPUTargetBackend();
}
