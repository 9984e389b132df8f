// RUN: thunder-opt %s -thunder-schedule -split-input-file | FileCheck %s
// RUN: thunder-opt %s -thunder-schedule=max-streams=2 -split-input-file | FileCheck %s --check-prefix=TWO
// RUN: thunder-opt %s -thunder-schedule=max-streams=1 -split-input-file | FileCheck %s --check-prefix=ONE
// RUN: not thunder-opt %s -thunder-schedule=max-streams=0 -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: max-streams must be at least 1, got 0

// Two branches that each make a large tensor and reduce it. As given, both
// large tensors are live at once; the schedule finishes one branch before
// starting the other. The second branch opens stream 1; the join continues
// it and waits for the first branch's last kernel (position 1).
// CHECK-LABEL: func.func @one_branch_at_a_time
// CHECK:      thunder.fusion pointwise "a1"
// CHECK-SAME:   thunder.stream = 0 : i64
// CHECK:      thunder.fusion reduction "a2"
// CHECK-SAME:   thunder.stream = 0 : i64
// CHECK:      thunder.fusion pointwise "b1"
// CHECK-SAME:   thunder.stream = 1 : i64
// CHECK-NOT:    thunder.wait
// CHECK:      thunder.fusion reduction "b2"
// CHECK-SAME:   thunder.stream = 1 : i64
// CHECK:      thunder.fusion pointwise "c"
// CHECK-SAME:   thunder.stream = 1 : i64, thunder.wait = array<i64: 1>
// ONE-LABEL:  func.func @one_branch_at_a_time
// ONE-NOT:    thunder.stream = 1
// ONE-NOT:    thunder.wait
// ONE:        return
func.func @one_branch_at_a_time(%x: tensor<1024xf32>) -> tensor<f32> {
  %a1 = thunder.fusion pointwise "a1" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> {
  ^bb0(%i: tensor<1024xf32>):
    %r = thunder.neg %i : tensor<1024xf32>
    thunder.yield %r : tensor<1024xf32>
  }
  %b1 = thunder.fusion pointwise "b1" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> {
  ^bb0(%i: tensor<1024xf32>):
    %r = thunder.exp %i : tensor<1024xf32>
    thunder.yield %r : tensor<1024xf32>
  }
  %a2 = thunder.fusion reduction "a2" (%a1) : (tensor<1024xf32>) -> tensor<f32> {
  ^bb0(%i: tensor<1024xf32>):
    %s = thunder.sum %i dims = [0] : tensor<1024xf32> -> tensor<f32>
    thunder.yield %s : tensor<f32>
  }
  %b2 = thunder.fusion reduction "b2" (%b1) : (tensor<1024xf32>) -> tensor<f32> {
  ^bb0(%i: tensor<1024xf32>):
    %s = thunder.sum %i dims = [0] : tensor<1024xf32> -> tensor<f32>
    thunder.yield %s : tensor<f32>
  }
  %c = thunder.fusion pointwise "c" (%a2, %b2) : (tensor<f32>, tensor<f32>) -> tensor<f32> {
  ^bb0(%i: tensor<f32>, %j: tensor<f32>):
    %s = thunder.add %i, %j : tensor<f32>
    thunder.yield %s : tensor<f32>
  }
  return %c : tensor<f32>
}

// -----

// An order that is already best is kept. Weights move to the top, each view
// right before its first user, and a view that only the return reads right
// before the return.
// CHECK-LABEL: func.func @views_and_weights
// CHECK-SAME:  (%[[X:.+]]: tensor<2x8xf32>)
// CHECK-NEXT:  %[[W:.+]] = thunder.constant
// CHECK-NEXT:  %[[K1:.+]] = thunder.fusion pointwise "k1"(%[[X]])
// CHECK:       %[[V:.+]] = thunder.reshape %[[X]] : tensor<2x8xf32> -> tensor<16xf32>
// CHECK-NEXT:  %[[K2:.+]] = thunder.fusion pointwise "k2"(%[[V]])
// CHECK:       %[[R:.+]] = thunder.reshape %[[K1]] : tensor<2x8xf32> -> tensor<4x4xf32>
// CHECK-NEXT:  %[[K3:.+]] = thunder.fusion pointwise "k3"(%[[R]], %[[W]])
// CHECK:       %[[OUT:.+]] = thunder.reshape %[[K2]] : tensor<16xf32> -> tensor<4x4xf32>
// CHECK-NEXT:  return %[[OUT]], %[[K3]]
func.func @views_and_weights(%x: tensor<2x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %v = thunder.reshape %x : tensor<2x8xf32> -> tensor<16xf32>
  %k1 = thunder.fusion pointwise "k1" (%x) : (tensor<2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%i: tensor<2x8xf32>):
    %r = thunder.neg %i : tensor<2x8xf32>
    thunder.yield %r : tensor<2x8xf32>
  }
  %w = thunder.constant dense<1.0> : tensor<4x4xf32>
  %k2 = thunder.fusion pointwise "k2" (%v) : (tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%i: tensor<16xf32>):
    %r = thunder.exp %i : tensor<16xf32>
    thunder.yield %r : tensor<16xf32>
  }
  %out = thunder.reshape %k2 : tensor<16xf32> -> tensor<4x4xf32>
  %r = thunder.reshape %k1 : tensor<2x8xf32> -> tensor<4x4xf32>
  %k3 = thunder.fusion pointwise "k3" (%r, %w) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%i: tensor<4x4xf32>, %j: tensor<4x4xf32>):
    %s = thunder.add %i, %j : tensor<4x4xf32>
    thunder.yield %s : tensor<4x4xf32>
  }
  return %out, %k3 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A diamond: "c" cannot continue stream 0 ("b" did), so it opens stream 1
// and waits for "a"; "d" continues stream 1 and waits for "b". "e" reads
// "a" too, but "a" is known complete on stream 1 already (through "c"'s
// wait): no wait is recorded for it.
// CHECK-LABEL: func.func @diamond
// CHECK:      "a"
// CHECK-SAME:   {thunder.stream = 0 : i64}
// CHECK:      "b"
// CHECK-SAME:   {thunder.stream = 0 : i64}
// CHECK:      "c"
// CHECK-SAME:   {thunder.stream = 1 : i64, thunder.wait = array<i64: 0>}
// CHECK:      "d"
// CHECK-SAME:   {thunder.stream = 1 : i64, thunder.wait = array<i64: 1>}
// CHECK:      "e"
// CHECK-SAME:   {thunder.stream = 1 : i64}
func.func @diamond(%x: tensor<64xf32>) -> tensor<64xf32> {
  %a = thunder.fusion pointwise "a" (%x) : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%i: tensor<64xf32>):
    %r = thunder.neg %i : tensor<64xf32>
    thunder.yield %r : tensor<64xf32>
  }
  %b = thunder.fusion pointwise "b" (%a) : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%i: tensor<64xf32>):
    %r = thunder.exp %i : tensor<64xf32>
    thunder.yield %r : tensor<64xf32>
  }
  %c = thunder.fusion pointwise "c" (%a) : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%i: tensor<64xf32>):
    %r = thunder.tanh %i : tensor<64xf32>
    thunder.yield %r : tensor<64xf32>
  }
  %d = thunder.fusion pointwise "d" (%b, %c) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%i: tensor<64xf32>, %j: tensor<64xf32>):
    %r = thunder.add %i, %j : tensor<64xf32>
    thunder.yield %r : tensor<64xf32>
  }
  %e = thunder.fusion pointwise "e" (%d, %a) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%i: tensor<64xf32>, %j: tensor<64xf32>):
    %r = thunder.mul %i, %j : tensor<64xf32>
    thunder.yield %r : tensor<64xf32>
  }
  return %e : tensor<64xf32>
}

// -----

// Three independent kernels: each opens a stream while there are streams
// left; with two, the third joins the least recently used one.
// CHECK-LABEL: func.func @independent
// CHECK:      "p"
// CHECK-SAME:   thunder.stream = 0 : i64
// CHECK:      "q"
// CHECK-SAME:   thunder.stream = 1 : i64
// CHECK:      "r"
// CHECK-SAME:   thunder.stream = 2 : i64
// TWO-LABEL:  func.func @independent
// TWO:        "p"
// TWO-SAME:     thunder.stream = 0 : i64
// TWO:        "q"
// TWO-SAME:     thunder.stream = 1 : i64
// TWO:        "r"
// TWO-SAME:     thunder.stream = 0 : i64
func.func @independent(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %p = thunder.fusion pointwise "p" (%x) : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%i: tensor<64xf32>):
    %r = thunder.neg %i : tensor<64xf32>
    thunder.yield %r : tensor<64xf32>
  }
  %q = thunder.fusion pointwise "q" (%x) : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%i: tensor<64xf32>):
    %r = thunder.exp %i : tensor<64xf32>
    thunder.yield %r : tensor<64xf32>
  }
  %r = thunder.fusion pointwise "r" (%x) : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%i: tensor<64xf32>):
    %r = thunder.tanh %i : tensor<64xf32>
    thunder.yield %r : tensor<64xf32>
  }
  return %p, %q, %r : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// The list schedule frees early: the producer of a large tensor runs right
// before its only reader, not at the start where the exporter put it.
// CHECK-LABEL: func.func @late_producer
// CHECK:      "small"
// CHECK:      "big"
// CHECK:      "use_big"
func.func @late_producer(%x: tensor<4096xf32>, %y: tensor<16xf32>) -> (tensor<f32>, tensor<16xf32>) {
  %big = thunder.fusion pointwise "big" (%x) : (tensor<4096xf32>) -> tensor<4096xf32> {
  ^bb0(%i: tensor<4096xf32>):
    %r = thunder.neg %i : tensor<4096xf32>
    thunder.yield %r : tensor<4096xf32>
  }
  %small = thunder.fusion pointwise "small" (%y) : (tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%i: tensor<16xf32>):
    %r = thunder.exp %i : tensor<16xf32>
    thunder.yield %r : tensor<16xf32>
  }
  %small2 = thunder.fusion pointwise "small2" (%small) : (tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%i: tensor<16xf32>):
    %r = thunder.exp %i : tensor<16xf32>
    thunder.yield %r : tensor<16xf32>
  }
  %use = thunder.fusion reduction "use_big" (%big) : (tensor<4096xf32>) -> tensor<f32> {
  ^bb0(%i: tensor<4096xf32>):
    %s = thunder.sum %i dims = [0] : tensor<4096xf32> -> tensor<f32>
    thunder.yield %s : tensor<f32>
  }
  return %use, %small2 : tensor<f32>, tensor<16xf32>
}

// -----

// The depth-first order wins: each branch widens a small tensor twice and
// narrows it again. As given (both branches in lockstep) both wide tensors
// are live at once; the list schedule starts the second branch early (its
// first kernel allocates less than the first branch's second); finishing
// one branch before starting the other is best.
// CHECK-LABEL: func.func @depth_first
// CHECK:      "p1"
// CHECK:      "p2"
// CHECK:      "p3"
// CHECK:      "q1"
// CHECK:      "q2"
// CHECK:      "q3"
// CHECK:      "join"
func.func @depth_first(%x: tensor<1x64xf32>, %y: tensor<1x64xf32>) -> tensor<1x64xf32> {
  %p1 = thunder.fusion data_movement "p1" (%x) : (tensor<1x64xf32>) -> tensor<10x64xf32> {
  ^bb0(%i: tensor<1x64xf32>):
    %r = thunder.broadcast %i, dims = [0, 1] : tensor<1x64xf32> -> tensor<10x64xf32>
    thunder.yield %r : tensor<10x64xf32>
  }
  %q1 = thunder.fusion data_movement "q1" (%y) : (tensor<1x64xf32>) -> tensor<10x64xf32> {
  ^bb0(%i: tensor<1x64xf32>):
    %r = thunder.broadcast %i, dims = [0, 1] : tensor<1x64xf32> -> tensor<10x64xf32>
    thunder.yield %r : tensor<10x64xf32>
  }
  %p2 = thunder.fusion data_movement "p2" (%p1) : (tensor<10x64xf32>) -> tensor<100x64xf32> {
  ^bb0(%i: tensor<10x64xf32>):
    %s = thunder.slice %i, start = [0, 0], end = [1, 64], step = [1, 1] : tensor<10x64xf32> -> tensor<1x64xf32>
    %r = thunder.broadcast %s, dims = [0, 1] : tensor<1x64xf32> -> tensor<100x64xf32>
    thunder.yield %r : tensor<100x64xf32>
  }
  %q2 = thunder.fusion data_movement "q2" (%q1) : (tensor<10x64xf32>) -> tensor<100x64xf32> {
  ^bb0(%i: tensor<10x64xf32>):
    %s = thunder.slice %i, start = [0, 0], end = [1, 64], step = [1, 1] : tensor<10x64xf32> -> tensor<1x64xf32>
    %r = thunder.broadcast %s, dims = [0, 1] : tensor<1x64xf32> -> tensor<100x64xf32>
    thunder.yield %r : tensor<100x64xf32>
  }
  %p3 = thunder.fusion data_movement "p3" (%p2) : (tensor<100x64xf32>) -> tensor<1x64xf32> {
  ^bb0(%i: tensor<100x64xf32>):
    %s = thunder.slice %i, start = [0, 0], end = [1, 64], step = [1, 1] : tensor<100x64xf32> -> tensor<1x64xf32>
    thunder.yield %s : tensor<1x64xf32>
  }
  %q3 = thunder.fusion data_movement "q3" (%q2) : (tensor<100x64xf32>) -> tensor<1x64xf32> {
  ^bb0(%i: tensor<100x64xf32>):
    %s = thunder.slice %i, start = [0, 0], end = [1, 64], step = [1, 1] : tensor<100x64xf32> -> tensor<1x64xf32>
    thunder.yield %s : tensor<1x64xf32>
  }
  %join = thunder.fusion pointwise "join" (%p3, %q3) : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32> {
  ^bb0(%i: tensor<1x64xf32>, %k: tensor<1x64xf32>):
    %r = thunder.add %i, %k : tensor<1x64xf32>
    thunder.yield %r : tensor<1x64xf32>
  }
  return %join : tensor<1x64xf32>
}

// -----

// Before fusion every op is a kernel of its own: the pass runs on unfused
// IR too.
// CHECK-LABEL: func.func @unfused
// CHECK:      thunder.neg %{{.+}} {thunder.stream = 0 : i64}
// CHECK:      thunder.exp %{{.+}} {thunder.stream = 0 : i64}
func.func @unfused(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = thunder.neg %x : tensor<8xf32>
  %1 = thunder.exp %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
