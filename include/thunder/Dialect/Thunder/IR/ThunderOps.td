// All ops of the `thunder` dialect, for tools that want one file (docs).
#ifndef THUNDER_DIALECT_THUNDER_IR_THUNDEROPS_TD
#define THUNDER_DIALECT_THUNDER_IR_THUNDEROPS_TD

include "thunder/Dialect/Thunder/IR/ElementwiseOps.td"
include "thunder/Dialect/Thunder/IR/TensorOps.td"
include "thunder/Dialect/Thunder/IR/ReductionOps.td"
include "thunder/Dialect/Thunder/IR/LinalgOps.td"
include "thunder/Dialect/Thunder/IR/CompositeOps.td"
include "thunder/Dialect/Thunder/IR/FusionOps.td"
include "thunder/Dialect/Thunder/IR/CustomOps.td"
include "thunder/Dialect/Thunder/IR/RandomOps.td"

#endif // THUNDER_DIALECT_THUNDER_IR_THUNDEROPS_TD
