// thunder-opt lists Thunder's dialect, passes and pipelines.
// RUN: thunder-opt --help | FileCheck %s
// CHECK: Available Dialects: {{.*}}thunder
// CHECK-DAG: --thunder-decompose-composites
// CHECK-DAG: --thunder-convert-to-stablehlo
// CHECK-DAG: --thunder-graph-pipeline
