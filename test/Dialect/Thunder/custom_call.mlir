// RUN: thunder-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// thunder.custom_call: the printed form round-trips, and each constraint of its
// verifier (custom_call_c1) has a case.

// CHECK-LABEL: func.func @rms_norm
// CHECK: %[[Y:.*]] = thunder.custom_call @mylib_rms_norm "mylib.rms_norm.default"(%arg0, %arg1) scalars [9.9999999999999995E-7] : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
// CHECK: return %[[Y]]
func.func @rms_norm(%x: tensor<2x64xf32>, %w: tensor<64xf32>) -> tensor<2x64xf32> {
  %y = thunder.custom_call @mylib_rms_norm "mylib.rms_norm.default" (%x, %w)
      scalars [1.0e-06] : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

// No scalars, two results of other dtypes.
// CHECK-LABEL: func.func @two_results
// CHECK: thunder.custom_call @mylib_split "mylib.split.default"(%arg0) : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xi64>)
func.func @two_results(%x: tensor<4xf32>) -> (tensor<2xf32>, tensor<2xi64>) {
  %a, %b = thunder.custom_call @mylib_split "mylib.split.default" (%x)
      : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  return %a, %b : tensor<2xf32>, tensor<2xi64>
}

// -----

// custom_call_c1: the callee is not a C identifier.
func.func @custom_call_c1(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expects the callee to be a C identifier, got '9lives' (custom_call_c1)}}
  %y = "thunder.custom_call"(%x) <{callee = @"9lives", op = "mylib.op.default"}>
      : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A dynamic dim: the backends size it at run time from its symbol.
// CHECK-LABEL: func.func @dynamic
// CHECK: thunder.custom_call @mylib_op "mylib.op.default"(%arg0) : (tensor<?x4xf32>) -> tensor<?x4xf32>
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = thunder.custom_call @mylib_op "mylib.op.default" (%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
