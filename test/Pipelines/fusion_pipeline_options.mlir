// The fusion pipeline's decompose pass keeps the op list it is given.
// Regression: the list was a braced list assigned to the pass's ArrayRef option,
// which died at the end of that statement before the pass copied it (ASan:
// stack-use-after-scope under tools/dev.sh test --sanitize; elsewhere the
// destroyed strings were read by luck).
// RUN: thunder-opt %s -thunder-fusion-pipeline --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s
// RUN: thunder-opt %s -thunder-kernel-pipeline --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s

// CHECK: thunder-decompose-composites{ops=softmax,log_softmax,layer_norm,rms_norm,batch_norm}
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
