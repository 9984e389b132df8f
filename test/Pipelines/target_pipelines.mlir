// Each registered target has its pipeline in thunder-opt; every phase it
// runs ends by recording the phase on the module.
// RUN: thunder-opt --help | FileCheck %s --check-prefix=HELP
// HELP-DAG: --thunder-cpu-pipeline
// HELP-DAG: --thunder-cuda-pipeline

// RUN: thunder-opt %s --thunder-cpu-pipeline=to=graph | FileCheck %s --check-prefix=GRAPH
// GRAPH: module attributes {thunder.phase = "graph"}
// GRAPH-NOT: thunder.fusion

// RUN: thunder-opt %s --thunder-cpu-pipeline=to=fusion | FileCheck %s --check-prefix=FUSION
// FUSION: module attributes {thunder.phase = "fusion"}
// FUSION: thunder.fusion pointwise
// FUSION-NOT: thunder.offsets

// RUN: thunder-opt %s --thunder-cpu-pipeline | FileCheck %s --check-prefix=PLAN
// PLAN: module attributes {thunder.phase = "plan"}
// PLAN: thunder.offsets

// The CPU target plans tensors into output buffers (borrow-outputs); CUDA plans
// library workspaces: the same input, two plans.
// RUN: thunder-opt %s --thunder-cpu-pipeline=to=graph | thunder-opt --thunder-cuda-pipeline=from=graph | FileCheck %s --check-prefix=CUDA
// CUDA: module attributes {thunder.phase = "plan"}

// A phase name that is not one is an error, not an empty pipeline.
// RUN: not thunder-opt %s --thunder-cpu-pipeline=from=nowhere 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: thunder-cpu-pipeline: from='nowhere' to='' must name phases of the IR

// Running a pipeline from the wrong phase is caught at its end.
// RUN: thunder-opt %s --thunder-cpu-pipeline | not thunder-opt --thunder-cpu-pipeline=from=graph 2>&1 | FileCheck %s --check-prefix=AGAIN
// AGAIN: error: the fusion pipeline ran on a module already at phase 'plan'

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = thunder.exp %x : tensor<4x8xf32>
  %n = thunder.neg %e : tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}
