// RUN: thunder-opt %s -thunder-plan-memory -split-input-file | FileCheck %s
// RUN: thunder-opt %s -thunder-schedule -thunder-plan-memory -split-input-file | FileCheck %s --check-prefix=STREAMS
// RUN: thunder-opt %s -thunder-schedule -thunder-plan-memory=borrow-outputs=true -split-input-file | FileCheck %s --check-prefix=BORROW

// A chain of kernels that cannot work in place: "a" dies when "b" has read
// it, so "c" takes its bytes; "d" is the function's result and is written
// into the caller's buffer (-1 - 0). The arena holds two 1 KiB tensors.
// CHECK-LABEL: func.func @chain
// CHECK-SAME:  thunder.arena = {alignment = 64 : i64, bytes = 2048 : i64, lower_bound = 2048 : i64, naive = 3072 : i64}
// CHECK:       "a"
// CHECK-SAME:    thunder.live = array<i64: 0, 1>, thunder.offsets = array<i64: [[A:[0-9]+]]>
// CHECK:       "b"
// CHECK-SAME:    thunder.live = array<i64: 1, 2>, thunder.offsets = array<i64: [[B:[0-9]+]]>
// CHECK:       "c"
// CHECK-SAME:    thunder.live = array<i64: 2, 3>, thunder.offsets = array<i64: [[A]]>
// CHECK:       "d"
// CHECK-SAME:    thunder.inplace = array<i64: -1>, thunder.live = array<i64: 3, 3>, thunder.offsets = array<i64: -1>
func.func @chain(%x: tensor<256xf32>) -> tensor<f32> {
  %a = thunder.fusion pointwise "a" (%x) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%i: tensor<256xf32>):
    %r = thunder.exp %i : tensor<256xf32>
    thunder.yield %r : tensor<256xf32>
  }
  %b = thunder.fusion data_movement "b" (%a) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%i: tensor<256xf32>):
    %r = thunder.neg %i : tensor<256xf32>
    thunder.yield %r : tensor<256xf32>
  }
  %c = thunder.fusion data_movement "c" (%b) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%i: tensor<256xf32>):
    %r = thunder.neg %i : tensor<256xf32>
    thunder.yield %r : tensor<256xf32>
  }
  %d = thunder.fusion reduction "d" (%c) : (tensor<256xf32>) -> tensor<f32> {
  ^bb0(%i: tensor<256xf32>):
    %s = thunder.sum %i dims = [0] : tensor<256xf32> -> tensor<f32>
    thunder.yield %s : tensor<f32>
  }
  return %d : tensor<f32>
}

// -----

// Results returned through a view, and twice: each is written directly
// into the first function result it is returned as. Weights and arguments
// are not in the arena; a view's reader keeps its operand alive ("v" is
// read through %view by "late", so it lives to position 2).
// CHECK-LABEL: func.func @outputs_and_views
// CHECK-SAME:  thunder.arena = {alignment = 64 : i64, bytes = 64 : i64, lower_bound = 64 : i64, naive = 64 : i64}
// CHECK:       "v"
// CHECK-SAME:    thunder.live = array<i64: 0, 2>, thunder.offsets = array<i64: 0>
// CHECK:       "out"
// CHECK-SAME:    thunder.live = array<i64: 1, 1>, thunder.offsets = array<i64: -2>
// CHECK:       "late"
// CHECK-SAME:    thunder.live = array<i64: 2, 2>, thunder.offsets = array<i64: -1>
func.func @outputs_and_views(%x: tensor<2x8xf32>) -> (tensor<4x4xf32>, tensor<16xf32>, tensor<2x8xf32>) {
  %w = thunder.constant dense<2.0> : tensor<2x8xf32>
  %v = thunder.fusion pointwise "v" (%x, %w) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%i: tensor<2x8xf32>, %j: tensor<2x8xf32>):
    %r = thunder.mul %i, %j : tensor<2x8xf32>
    thunder.yield %r : tensor<2x8xf32>
  }
  %out = thunder.fusion pointwise "out" (%x) : (tensor<2x8xf32>) -> tensor<16xf32> {
  ^bb0(%i: tensor<2x8xf32>):
    %r = thunder.reshape %i : tensor<2x8xf32> -> tensor<16xf32>
    thunder.yield %r : tensor<16xf32>
  }
  %view = thunder.reshape %v : tensor<2x8xf32> -> tensor<4x4xf32>
  %late = thunder.fusion pointwise "late" (%view) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%i: tensor<4x4xf32>):
    %r = thunder.neg %i : tensor<4x4xf32>
    thunder.yield %r : tensor<4x4xf32>
  }
  %late_view = thunder.reshape %late : tensor<4x4xf32> -> tensor<2x8xf32>
  %late_again = thunder.reshape %late_view : tensor<2x8xf32> -> tensor<4x4xf32>
  return %late_again, %out, %late_view : tensor<4x4xf32>, tensor<16xf32>, tensor<2x8xf32>
}

// -----

// In place: "b" is pointwise, the last reader of "a" (an arena tensor of
// the same size) and reads it element for element, also through a view of
// the result's shape: it takes operand 0's bytes. "c" takes "b"'s bytes in
// turn. The three form one buffer.
// CHECK-LABEL: func.func @inplace_taken
// CHECK-SAME:  bytes = 1024 : i64, lower_bound = 1024 : i64, naive = 3072 : i64
// CHECK:       "a"
// CHECK-SAME:    thunder.inplace = array<i64: -1>, thunder.live = array<i64: 0, 1>, thunder.offsets = array<i64: 0>
// CHECK:       "b"
// CHECK-SAME:    thunder.inplace = array<i64: 0>, thunder.live = array<i64: 1, 2>, thunder.offsets = array<i64: 0>
// CHECK:       "c"
// CHECK-SAME:    thunder.inplace = array<i64: 1>, thunder.live = array<i64: 2, 3>, thunder.offsets = array<i64: 0>
func.func @inplace_taken(%x: tensor<256xf32>, %y: tensor<16x16xf32>) -> tensor<f32> {
  %a = thunder.fusion pointwise "a" (%x) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%i: tensor<256xf32>):
    %r = thunder.exp %i : tensor<256xf32>
    thunder.yield %r : tensor<256xf32>
  }
  %av = thunder.reshape %a : tensor<256xf32> -> tensor<16x16xf32>
  %b = thunder.fusion pointwise "b" (%av, %y) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%i: tensor<16x16xf32>, %j: tensor<16x16xf32>):
    %n = thunder.neg %i : tensor<16x16xf32>
    %r = thunder.add %n, %j : tensor<16x16xf32>
    thunder.yield %r : tensor<16x16xf32>
  }
  %c = thunder.fusion pointwise "c" (%y, %b) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xi32> {
  ^bb0(%i: tensor<16x16xf32>, %j: tensor<16x16xf32>):
    %r = thunder.mul %j, %i : tensor<16x16xf32>
    %k = thunder.convert %r : tensor<16x16xf32> -> tensor<16x16xi32>
    thunder.yield %k : tensor<16x16xi32>
  }
  %d = thunder.fusion reduction "d" (%c) : (tensor<16x16xi32>) -> tensor<f32> {
  ^bb0(%i: tensor<16x16xi32>):
    %f = thunder.convert %i : tensor<16x16xi32> -> tensor<16x16xf32>
    %s = thunder.sum %f dims = [0, 1] : tensor<16x16xf32> -> tensor<f32>
    thunder.yield %s : tensor<f32>
  }
  return %d : tensor<f32>
}

// -----

// In place refused: the input is not read element for element. "b" reads
// it transposed and "c" broadcasts its first row over all rows: writing the
// result over the input would clobber elements still to be read.
// CHECK-LABEL: func.func @inplace_refused_not_elementwise
// CHECK:       "b"
// CHECK-SAME:    thunder.inplace = array<i64: -1>
// CHECK:       "c"
// CHECK-SAME:    thunder.inplace = array<i64: -1>
func.func @inplace_refused_not_elementwise(%x: tensor<16x16xf32>) -> tensor<f32> {
  %a = thunder.fusion pointwise "a" (%x) : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%i: tensor<16x16xf32>):
    %r = thunder.exp %i : tensor<16x16xf32>
    thunder.yield %r : tensor<16x16xf32>
  }
  %b = thunder.fusion pointwise "b" (%a) : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%i: tensor<16x16xf32>):
    %t = thunder.transpose %i, permutation = [1, 0] : tensor<16x16xf32> -> tensor<16x16xf32>
    %r = thunder.add %t, %i : tensor<16x16xf32>
    thunder.yield %r : tensor<16x16xf32>
  }
  %c = thunder.fusion pointwise "c" (%b) : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%i: tensor<16x16xf32>):
    %s = thunder.slice %i, start = [0, 0], end = [1, 16], step = [1, 1] : tensor<16x16xf32> -> tensor<1x16xf32>
    %t = thunder.broadcast %s, dims = [0, 1] : tensor<1x16xf32> -> tensor<16x16xf32>
    %r = thunder.mul %t, %i : tensor<16x16xf32>
    thunder.yield %r : tensor<16x16xf32>
  }
  %d = thunder.fusion reduction "d" (%c) : (tensor<16x16xf32>) -> tensor<f32> {
  ^bb0(%i: tensor<16x16xf32>):
    %s = thunder.sum %i dims = [0, 1] : tensor<16x16xf32> -> tensor<f32>
    thunder.yield %s : tensor<f32>
  }
  return %d : tensor<f32>
}

// -----

// In place refused where a value computed from the input elementwise is then
// read at other positions: "b" broadcasts the first row of (x + 1), so writing
// over x would read row 0 after overwriting it. "c" reads its input only
// element for element (through an add and an exp) and takes its bytes.
// CHECK-LABEL: func.func @inplace_refused_derived
// CHECK:       "b"
// CHECK-SAME:    thunder.inplace = array<i64: -1>
// CHECK:       "c"
// CHECK-SAME:    thunder.inplace = array<i64: 0>
func.func @inplace_refused_derived(%x: tensor<16x16xf32>) -> tensor<f32> {
  %a = thunder.fusion pointwise "a" (%x) : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%i: tensor<16x16xf32>):
    %r = thunder.exp %i : tensor<16x16xf32>
    thunder.yield %r : tensor<16x16xf32>
  }
  %b = thunder.fusion pointwise "b" (%a) : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%i: tensor<16x16xf32>):
    %e = thunder.exp %i : tensor<16x16xf32>
    %s = thunder.slice %e, start = [0, 0], end = [1, 16], step = [1, 1] : tensor<16x16xf32> -> tensor<1x16xf32>
    %t = thunder.broadcast %s, dims = [0, 1] : tensor<1x16xf32> -> tensor<16x16xf32>
    %r = thunder.add %i, %t : tensor<16x16xf32>
    thunder.yield %r : tensor<16x16xf32>
  }
  %c = thunder.fusion pointwise "c" (%b) : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%i: tensor<16x16xf32>):
    %e = thunder.exp %i : tensor<16x16xf32>
    %r = thunder.add %e, %i : tensor<16x16xf32>
    thunder.yield %r : tensor<16x16xf32>
  }
  %d = thunder.fusion reduction "d" (%c) : (tensor<16x16xf32>) -> tensor<f32> {
  ^bb0(%i: tensor<16x16xf32>):
    %s = thunder.sum %i dims = [0, 1] : tensor<16x16xf32> -> tensor<f32>
    thunder.yield %s : tensor<f32>
  }
  return %d : tensor<f32>
}

// -----

// In place refused: "a" is read again later ("b" is not its last reader),
// and a weight's or an argument's bytes are never written. "c", the last
// reader of "a", takes its bytes.
// CHECK-LABEL: func.func @inplace_refused_live_later
// CHECK:       "a"
// CHECK-SAME:    thunder.offsets = array<i64: [[A:[0-9]+]]>
// CHECK:       "b"
// CHECK-SAME:    thunder.inplace = array<i64: -1>
// CHECK:       "c"
// CHECK-SAME:    thunder.inplace = array<i64: 1>, thunder.live = array<i64: 2, 3>, thunder.offsets = array<i64: [[A]]>
func.func @inplace_refused_live_later(%x: tensor<256xf32>) -> tensor<f32> {
  %w = thunder.constant dense<3.0> : tensor<256xf32>
  %a = thunder.fusion pointwise "a" (%x) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%i: tensor<256xf32>):
    %r = thunder.exp %i : tensor<256xf32>
    thunder.yield %r : tensor<256xf32>
  }
  %b = thunder.fusion pointwise "b" (%w, %x, %a) : (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%i: tensor<256xf32>, %j: tensor<256xf32>, %k: tensor<256xf32>):
    %s = thunder.add %i, %j : tensor<256xf32>
    %r = thunder.add %s, %k : tensor<256xf32>
    thunder.yield %r : tensor<256xf32>
  }
  %c = thunder.fusion pointwise "c" (%w, %a, %b) : (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%i: tensor<256xf32>, %j: tensor<256xf32>, %k: tensor<256xf32>):
    %s = thunder.add %i, %j : tensor<256xf32>
    %r = thunder.add %s, %k : tensor<256xf32>
    thunder.yield %r : tensor<256xf32>
  }
  %d = thunder.fusion reduction "d" (%c) : (tensor<256xf32>) -> tensor<f32> {
  ^bb0(%i: tensor<256xf32>):
    %s = thunder.sum %i dims = [0] : tensor<256xf32> -> tensor<f32>
    thunder.yield %s : tensor<f32>
  }
  return %d : tensor<f32>
}

// -----

// In place refused: other sizes (f32 into f16), a function result as input
// (its bytes are the caller's), and a kernel that is not pointwise.
// CHECK-LABEL: func.func @inplace_refused_other
// CHECK:       "half"
// CHECK-SAME:    thunder.inplace = array<i64: -1>
// CHECK:       "from_output"
// CHECK-SAME:    thunder.inplace = array<i64: -1>
// CHECK:       "gemm"
// CHECK-SAME:    thunder.inplace = array<i64: -1>
func.func @inplace_refused_other(%x: tensor<256xf32>, %m: tensor<16x16xf32>) -> (tensor<256xf32>, tensor<f16>, tensor<16x16xf32>, tensor<256xf32>) {
  %a = thunder.fusion pointwise "a" (%x) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%i: tensor<256xf32>):
    %r = thunder.exp %i : tensor<256xf32>
    thunder.yield %r : tensor<256xf32>
  }
  %half = thunder.fusion pointwise "half" (%a) : (tensor<256xf32>) -> tensor<256xf16> {
  ^bb0(%i: tensor<256xf32>):
    %r = thunder.convert %i : tensor<256xf32> -> tensor<256xf16>
    thunder.yield %r : tensor<256xf16>
  }
  %s = thunder.fusion reduction "s" (%half) : (tensor<256xf16>) -> tensor<f16> {
  ^bb0(%i: tensor<256xf16>):
    %r = thunder.sum %i dims = [0] : tensor<256xf16> -> tensor<f16>
    thunder.yield %r : tensor<f16>
  }
  %from_output = thunder.fusion pointwise "from_output" (%x) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%i: tensor<256xf32>):
    %r = thunder.neg %i : tensor<256xf32>
    thunder.yield %r : tensor<256xf32>
  }
  %e = thunder.fusion pointwise "e" (%from_output) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%i: tensor<256xf32>):
    %r = thunder.neg %i : tensor<256xf32>
    thunder.yield %r : tensor<256xf32>
  }
  %p = thunder.fusion pointwise "p" (%m) : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%i: tensor<16x16xf32>):
    %r = thunder.neg %i : tensor<16x16xf32>
    thunder.yield %r : tensor<16x16xf32>
  }
  %gemm = thunder.fusion gemm "gemm" (%p) : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%i: tensor<16x16xf32>):
    %r = thunder.matmul %i, %i : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    thunder.yield %r : tensor<16x16xf32>
  }
  return %from_output, %s, %gemm, %e : tensor<256xf32>, tensor<f16>, tensor<16x16xf32>, tensor<256xf32>
}

// -----

// Dynamic shapes: sizes are known only at run time, so the arena is packed
// then; offsets say so, intervals and in-place pairs are recorded. "b" is
// all elementwise and computed from "a": it may take its bytes. "c" has a
// broadcast in its region: the sizes are not provably equal.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME:  thunder.arena = {alignment = 64 : i64, bytes = -1 : i64, dynamic, lower_bound = -1 : i64, naive = -1 : i64}
// CHECK:       "a"
// CHECK-SAME:    thunder.inplace = array<i64: -1>, thunder.live = array<i64: 0, 1>, thunder.offsets = array<i64: -9223372036854775807>
// CHECK:       "b"
// CHECK-SAME:    thunder.inplace = array<i64: 0>, thunder.live = array<i64: 1, 2>, thunder.offsets = array<i64: -9223372036854775807>
// CHECK:       "c"
// CHECK-SAME:    thunder.inplace = array<i64: -1>, thunder.live = array<i64: 2, 3>, thunder.offsets = array<i64: -9223372036854775807>
// CHECK:       "d"
// CHECK-SAME:    thunder.offsets = array<i64: -1>
func.func @dynamic(%x: tensor<?x8xf32>, %y: tensor<?x1xf32>) -> tensor<?x8xf32> {
  %a = thunder.fusion pointwise "a" (%x) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
  ^bb0(%i: tensor<?x8xf32>):
    %r = thunder.exp %i : tensor<?x8xf32>
    thunder.yield %r : tensor<?x8xf32>
  }
  %b = thunder.fusion pointwise "b" (%a) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
  ^bb0(%i: tensor<?x8xf32>):
    %r = thunder.neg %i : tensor<?x8xf32>
    thunder.yield %r : tensor<?x8xf32>
  }
  %c = thunder.fusion pointwise "c" (%b, %y) : (tensor<?x8xf32>, tensor<?x1xf32>) -> tensor<?x8xf32> {
  ^bb0(%i: tensor<?x8xf32>, %j: tensor<?x1xf32>):
    %t = thunder.broadcast %j, dims = [0, 1] : tensor<?x1xf32> -> tensor<?x8xf32>
    %r = thunder.add %i, %t : tensor<?x8xf32>
    thunder.yield %r : tensor<?x8xf32>
  }
  %d = thunder.fusion pointwise "d" (%c) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
  ^bb0(%i: tensor<?x8xf32>):
    %r = thunder.neg %i : tensor<?x8xf32>
    thunder.yield %r : tensor<?x8xf32>
  }
  return %d : tensor<?x8xf32>
}

// -----

// Sizes round up to 64 bytes (12 and 4 bytes here), offsets are multiples
// of 64; unfused ops are planned as kernels of their own.
// CHECK-LABEL: func.func @alignment_unfused
// CHECK-SAME:  bytes = 128 : i64, lower_bound = 128 : i64, naive = 128 : i64
// CHECK:       thunder.neg
// CHECK-SAME:    thunder.offsets = array<i64: 0>
// CHECK:       thunder.exp
// CHECK-SAME:    thunder.offsets = array<i64: 64>
// CHECK:       thunder.add
// CHECK-SAME:    thunder.offsets = array<i64: -1>
func.func @alignment_unfused(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = thunder.neg %x : tensor<3xf32>
  %1 = thunder.exp %0 : tensor<3xf32>
  %2 = thunder.add %0, %1 : tensor<3xf32>
  return %2 : tensor<3xf32>
}

// -----

// Streams: "b1" runs on stream 1 and reuses the bytes of "a1", which "a2"
// reads on stream 0: it must also wait for "a2" (position 1).
// STREAMS-LABEL: func.func @reuse_across_streams
// STREAMS:       "a1"
// STREAMS-SAME:    thunder.offsets = array<i64: [[A1:[0-9]+]]>, thunder.stream = 0 : i64}
// STREAMS:       "a2"
// STREAMS-SAME:    thunder.stream = 0 : i64}
// STREAMS:       "b1"
// STREAMS-SAME:    thunder.offsets = array<i64: [[A1]]>, thunder.stream = 1 : i64, thunder.wait = array<i64: 1>}
// STREAMS:       "b2"
// STREAMS-SAME:    thunder.stream = 1 : i64}
// STREAMS:       "c"
// STREAMS-SAME:    thunder.stream = 1 : i64, thunder.wait = array<i64: 1>}
func.func @reuse_across_streams(%x: tensor<1024xf32>) -> tensor<f32> {
  %a1 = thunder.fusion pointwise "a1" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> {
  ^bb0(%i: tensor<1024xf32>):
    %r = thunder.neg %i : tensor<1024xf32>
    thunder.yield %r : tensor<1024xf32>
  }
  %a2 = thunder.fusion reduction "a2" (%a1) : (tensor<1024xf32>) -> tensor<f32> {
  ^bb0(%i: tensor<1024xf32>):
    %s = thunder.sum %i dims = [0] : tensor<1024xf32> -> tensor<f32>
    thunder.yield %s : tensor<f32>
  }
  %b1 = thunder.fusion pointwise "b1" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> {
  ^bb0(%i: tensor<1024xf32>):
    %r = thunder.exp %i : tensor<1024xf32>
    thunder.yield %r : tensor<1024xf32>
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

// Nothing to plan: an empty arena.
// CHECK-LABEL: func.func @no_kernels
// CHECK-SAME:  thunder.arena = {alignment = 64 : i64, bytes = 0 : i64, lower_bound = 0 : i64, naive = 0 : i64}
func.func @no_kernels(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  %r = thunder.reshape %x : tensor<4xf32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// Borrowing (off by default): "a" dies before "head" writes the function's
// result, so it may live in that result's buffer; "h", which "head" reads,
// may not. Without borrowing "a" is in the arena and no kernel says
// thunder.borrowed.
// CHECK-LABEL: func.func @lm_head
// CHECK-SAME:  bytes = 1280 : i64
// CHECK-NOT:   thunder.borrowed
// CHECK:       return
// BORROW-LABEL: func.func @lm_head
// BORROW-SAME:  thunder.arena = {alignment = 64 : i64, borrowed = 1024 : i64, bytes = 256 : i64, lower_bound = 256 : i64, naive = 1280 : i64}
// BORROW:       "a"
// BORROW-SAME:    thunder.borrowed = array<i64: 0>, {{.*}}thunder.offsets = array<i64: 0>
// BORROW:       "h"
// BORROW-NOT:     thunder.borrowed
// BORROW-SAME:    thunder.offsets = array<i64: 0>
// BORROW:       "head"
// BORROW-NOT:     thunder.borrowed
// BORROW-SAME:    thunder.offsets = array<i64: -1>
func.func @lm_head(%x: tensor<256xf32>, %w: tensor<4096x64xf32>) -> tensor<4096xf32> {
  %a = thunder.fusion pointwise "a" (%x) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%i: tensor<256xf32>):
    %r = thunder.exp %i : tensor<256xf32>
    thunder.yield %r : tensor<256xf32>
  }
  %h = thunder.fusion data_movement "h" (%a) : (tensor<256xf32>) -> tensor<64xf32> {
  ^bb0(%i: tensor<256xf32>):
    %r = thunder.slice %i, start = [0], end = [64], step = [1] : tensor<256xf32> -> tensor<64xf32>
    thunder.yield %r : tensor<64xf32>
  }
  %hm = thunder.reshape %h : tensor<64xf32> -> tensor<64x1xf32>
  %l = thunder.fusion gemm "head" (%w, %hm) : (tensor<4096x64xf32>, tensor<64x1xf32>) -> tensor<4096x1xf32> {
  ^bb0(%i: tensor<4096x64xf32>, %j: tensor<64x1xf32>):
    %r = thunder.matmul %i, %j : (tensor<4096x64xf32>, tensor<64x1xf32>) -> tensor<4096x1xf32>
    thunder.yield %r : tensor<4096x1xf32>
  }
  %lv = thunder.reshape %l : tensor<4096x1xf32> -> tensor<4096xf32>
  return %lv : tensor<4096xf32>
}

// -----

// Borrowing across streams: "u" lives in result 0's buffer and "r" reads it
// on stream 0; "out" writes result 0 on stream 1, so it waits for "r"
// (position 1) although it reads nothing "r" made.
// BORROW-LABEL: func.func @borrowed_across_streams
// BORROW:       "u"
// BORROW-SAME:    thunder.borrowed = array<i64: 0>
// BORROW:       "r"
// BORROW-SAME:    thunder.stream = 0 : i64}
// BORROW:       "out"
// BORROW-SAME:    thunder.stream = 1 : i64, thunder.wait = array<i64: 1>}
func.func @borrowed_across_streams(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<f32>) {
  %u = thunder.fusion pointwise "u" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> {
  ^bb0(%i: tensor<1024xf32>):
    %r = thunder.exp %i : tensor<1024xf32>
    thunder.yield %r : tensor<1024xf32>
  }
  %r = thunder.fusion reduction "r" (%u) : (tensor<1024xf32>) -> tensor<f32> {
  ^bb0(%i: tensor<1024xf32>):
    %s = thunder.sum %i dims = [0] : tensor<1024xf32> -> tensor<f32>
    thunder.yield %s : tensor<f32>
  }
  %out = thunder.fusion pointwise "out" (%y) : (tensor<1024xf32>) -> tensor<1024xf32> {
  ^bb0(%i: tensor<1024xf32>):
    %s = thunder.tanh %i : tensor<1024xf32>
    thunder.yield %s : tensor<1024xf32>
  }
  return %out, %r : tensor<1024xf32>, tensor<f32>
}
