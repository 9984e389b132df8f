// thunder-translate registers every target's emitter; it emits a module at
// the phase the target emits from and names the pipeline to run otherwise.
// RUN: thunder-translate --help | FileCheck %s --check-prefix=HELP
// HELP-DAG: --thunder-to-cpp
// HELP-DAG: --thunder-to-cuda
// HELP-DAG: --thunder-to-stablehlo

// RUN: not thunder-translate %s --thunder-to-cpp 2>&1 | FileCheck %s --check-prefix=PHASE
// PHASE: error: the cpu target emits code for a module at phase 'plan', this one is at 'import' (run thunder-opt --thunder-cpu-pipeline first

// RUN: thunder-opt %s --thunder-cpu-pipeline | not thunder-translate --thunder-to-cpp --file=nothing.cpp 2>&1 | FileCheck %s --check-prefix=FILE
// FILE: error: --file: no generated file is named 'nothing.cpp'; the files are: model.cpp, weights.bin

// RUN: thunder-opt %s --thunder-cpu-pipeline | not thunder-translate --thunder-to-cpp --name 9lives 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: error: --name: '9lives' is not a C identifier

// thunder-compile lists the registered targets and names them on a typo.
// RUN: thunder-compile --list-targets | FileCheck %s --check-prefix=LIST
// LIST: cpu{{.*}}C++
// LIST: cuda{{.*}}nvcc
// LIST: tpu{{.*}}PJRT
// RUN: not thunder-compile %s --target=tbu --compile-to=graph 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: unknown target 'tbu'; the targets are: cpu, cuda, hip, cuda,hip, tpu
// A target that emits from the graph phase has no kernel phases.
// RUN: not thunder-compile %s --target=tpu --compile-to=plan 2>&1 | FileCheck %s --check-prefix=TPUPHASE
// TPUPHASE: error: the tpu target emits code from phase 'graph'; it has no phase 'plan' (compile to a phase up to 'graph', source or library)
// The tpu target's program, from a graph-phase module.
// RUN: thunder-opt %s --thunder-tpu-pipeline | thunder-translate --thunder-to-stablehlo --file=model.stablehlo.mlir | FileCheck %s --check-prefix=SHLO
// SHLO: func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// SHLO-NEXT: "stablehlo.exponential"(%arg0)
// SHLO-NOT: thunder
// RUN: not thunder-compile %s --start-from=source --compile-to=source 2>&1 | FileCheck %s --check-prefix=START
// START: error: a compile starts from an IR phase (import, graph, fusion, plan), not 'source'
// A target's own options are checked before any IR is read or printed.
// RUN: not thunder-compile %s --target=cuda --arch=ampere --compile-to=source 2>&1 | FileCheck %s --check-prefix=ARCH
// ARCH: error: --arch: expected a comma-separated list of sm_XY architectures (e.g. sm_80,sm_90a), got 'ampere'
// ARCH-NOT: func.func
// RUN: not thunder-compile %s --start-from=plan --compile-to=graph 2>&1 | FileCheck %s --check-prefix=BACK
// BACK: error: cannot compile from phase 'plan' to the earlier phase 'graph'

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = thunder.exp %x : tensor<4xf32>
  return %e : tensor<4xf32>
}
