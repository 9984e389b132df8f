// Passes over the `thunder` dialect.
#ifndef THUNDER_DIALECT_THUNDER_TRANSFORMS_PASSES_TD
#define THUNDER_DIALECT_THUNDER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ThunderDecomposeComposites : Pass<"thunder-decompose-composites",
                                      "func::FuncOp"> {
  let summary = "Rewrite composite ops into thunder primitives";
  let description = [{
    Replaces softmax, log_softmax, layer_norm, rms_norm, batch_norm and sdpa by
    reductions, elementwise ops and matmuls, for targets that have no fused
    kernel for them. `ops` restricts the rewrite to the named composites
    (mnemonics without the `thunder.` prefix); by default all are decomposed.

    Before:
    ```mlir
    %p = thunder.softmax %x dim = 1 : tensor<4x8xf32>
    ```
    After:
    ```mlir
    %m  = thunder.max %x dims = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
    %mb = thunder.broadcast %m, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
    %d  = thunder.sub %x, %mb : tensor<4x8xf32>
    %e  = thunder.exp %d : tensor<4x8xf32>
    %s  = thunder.sum %e dims = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
    %sb = thunder.broadcast %s, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
    %p  = thunder.div %e, %sb : tensor<4x8xf32>
    ```

    Rationale: a composite keeps its meaning (and its fast path) through the
    graph passes; only the backend knows whether a fused kernel exists. The
    decompositions follow PyTorch's reference decompositions (max-subtracted
    softmax, biased variance) so results match eager. Shapes must be static:
    a dynamic dim is reported with `notifyMatchFailure` and the op is left
    alone.
  }];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "Composites to decompose (default: all)">,
  ];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

//===----------------------------------------------------------------------===//
// Weight folding
//===----------------------------------------------------------------------===//

def ThunderFoldWeights : Pass<"thunder-fold-weights", "func::FuncOp"> {
  let summary = "Evaluate weight-only subgraphs at compile time";
  let description = [{
    Evaluates every op whose operands are all known at compile time and
    replaces it by a new `thunder.constant`, so that nothing that depends only
    on weights runs per inference. Known values are constants (resource
    blobs, dense literals, splats) and broadcasts of them. Evaluated ops:
    views and data movement (reshape, transpose, broadcast, expand, slice,
    concat, pad), gathers (gather, index_select, embedding), convert,
    elementwise arithmetic, comparisons, where, clamp, and the
    sum/mean/max/min/prod reductions. Ops are visited in program
    order, so chains (a transpose of a reshape of a convert of a weight) fold
    link by link.

    The result is a `dense_resource` blob named after the weight it comes
    from and the op (`fc.weight.T`, `w.to_bf16`), keeping the op's location;
    a splat stays a splat, and a small result of literals alone stays a dense
    literal. Values are computed by the reference interpreter
    (`lib/Dialect/Thunder/Reference`) with PyTorch's semantics: ops IEEE
    defines exactly in PyTorch's opmath type (f32 for f32, f16 and bf16; f64
    for f64), transcendental functions and reductions in double, each rounded
    once to nearest even into the result type; integers wrap.

    A `thunder.batch_norm` whose input is a `thunder.convolution` with a
    constant weight (and constant bias, if any), whose statistics and affine
    parameters are constants, and whose convolution has no other user, is
    folded into one convolution with
    `W' = W * s`, `b' = (b - mean) * s + beta`, `s = gamma / sqrt(var + eps)`
    per output channel (blobs `<conv>.weight.bn_folded`,
    `<conv>.bias.bn_folded`).

    Before:
    ```mlir
    %w  = thunder.constant dense_resource<fc.weight> : tensor<8x4xf32>
    %wt = thunder.transpose %w, permutation = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
    %y  = thunder.convolution %x, %k stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1
        : (tensor<1x3x8x8xf32>, tensor<16x3x1x1xf32>) -> tensor<1x16x8x8xf32>
    %z  = thunder.batch_norm %y, %mean, %var weight %g bias %b epsilon = 1.0e-05
        : (tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
    ```
    After:
    ```mlir
    %wt = thunder.constant dense_resource<fc.weight.T> : tensor<4x8xf32>
    %k2 = thunder.constant dense_resource<conv.weight.bn_folded> : tensor<16x3x1x1xf32>
    %b2 = thunder.constant dense_resource<conv.bias.bn_folded> : tensor<16xf32>
    %z  = thunder.convolution %x, %k2, %b2 stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1
        : (tensor<1x3x8x8xf32>, tensor<16x3x1x1xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
    ```

    Rationale: a result that would be much larger than the constants it is
    computed from (over 64 KiB and more than twice their elements, e.g. a
    bias broadcast to an activation's shape) is left as an op: a fused
    kernel reads a broadcast for free, while a folded one costs its bytes in
    the weights and in memory traffic. Such a broadcast still counts as known
    for its consumers, so `w * scale[:, None]` folds to one weight. Values
    with no compile-time meaning (integer division by zero, a float out of
    an integer type's range, an index out of range) are left to run, and so
    is rounding into an f8 type: the reference rounds as PyTorch does, but a
    kernel's f8 conversion is its target's (thunder_cpu.h saturates both f8
    types), so the op runs as the unfolded program would; f8 values are only
    moved or converted to wider types. Blobs elided from
    printed IR have no bytes and are not folded.
  }];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def ThunderFuseEpilogues : Pass<"thunder-fuse-epilogues", "func::FuncOp"> {
  let summary = "Fuse pointwise consumers into GEMM and convolution kernels";
  let description = [{
    Wraps each `thunder.matmul` and `thunder.convolution` into a
    `thunder.fusion` of kind `gemm` or `conv` together with the chain of
    pointwise consumers (bias add, activation, residual add, dtype convert)
    that reads its result element by element, so a backend can apply them
    in the library call's epilogue or in one pass right after it.
  }];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

def ThunderFuseReductions : Pass<"thunder-fuse-reductions", "func::FuncOp"> {
  let summary = "Fuse reductions with their pointwise producers and consumers";
  let description = [{
    Groups reductions over the same trailing dims of the same row shape with
    the pointwise ops that feed them and the pointwise ops that consume their
    results (broadcast back over the row), into one `thunder.fusion` of kind
    `reduction`: a row-wise kernel. softmax, log_softmax, layer_norm,
    rms_norm and mean/variance patterns, once decomposed, each become one
    kernel through this generic rule; no op names are matched.
  }];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

def ThunderFusePointwise : Pass<"thunder-fuse-pointwise", "func::FuncOp"> {
  let summary = "Fuse chains of pointwise ops into one kernel";
  let description = [{
    Merges elementwise ops, broadcasts, converts and view-like ops (reshape,
    transpose, slice) that are not yet in a kernel into `thunder.fusion`
    regions of kind `pointwise`, one loop over the output. A producer with
    several consumers is duplicated into each only when it is cheap (the
    cost model in FusionRules.h); it is never recomputed when it is
    expensive or when fusing would create a cycle.
  }];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

def ThunderOutlineKernels : Pass<"thunder-outline-kernels", "func::FuncOp"> {
  let summary = "Put every remaining op in a kernel of its own";
  let description = [{
    After the fusion passes, wraps each op that still runs outside a
    `thunder.fusion` (data movement, library calls, attention, reductions
    that could not be fused) into a single-op region, so that a backend sees
    only constants, views (`thunder.reshape`) and kernels. Run alone, it is
    the unfused pipeline: one kernel per op; `unfused` then marks the
    function (`thunder.unfused`) so the fusion report says why.
  }];
  let options = [
    Option<"unfused", "unfused", "bool", /*default=*/"false",
           "Mark the function as compiled without fusion">,
  ];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

//===----------------------------------------------------------------------===//
// Scheduling and memory planning
//===----------------------------------------------------------------------===//

def ThunderSchedule : Pass<"thunder-schedule", "func::FuncOp"> {
  let summary = "Order kernels to lower peak memory; mark concurrent branches";
  let description = [{
    Reorders the kernels of a function (a topological order) to lower the
    most bytes live at once, and assigns each kernel a stream, so that GPU
    backends may run independent branches concurrently.

    Input: a function after the fusion pipeline. Weights (`thunder.constant`,
    `thunder.weight`) move to the top in their order, each view
    (`thunder.reshape`) right before its first user, and every other op is a
    kernel (a `thunder.fusion`, or any op on IR that is not fused yet).

    Order: three candidate orders are compared by the peak of arena bytes
    they need (every kernel result that is not a function result, live from
    its kernel to its last reader, views included; sizes with a dynamic dim
    are estimated with 16 for each `?`): the order as given; a list
    schedule that among the ready kernels runs the one that frees the most
    bytes net of what it allocates (ties: the earliest in the given order),
    and a depth-first post-order from the results that visits the larger
    operand first. The lowest peak wins (ties: in that order). O(n log n).

    Streams (`thunder.stream`, i64, on every kernel): in schedule order a
    kernel continues the stream of its latest producer whose stream ends
    with that producer; else it opens a new stream while there are fewer
    than `max-streams`, or else joins its latest producer's stream (the
    least recently used stream when it has no producer). Kernels on one
    stream run in schedule order. `thunder.wait = array<i64: ...>` on a
    kernel lists the kernels (by position in schedule order, counting from
    0 among kernels) on other streams whose results it reads and that are
    not already known complete (through its stream's earlier kernels or
    earlier waits: events are transitive); the attribute is absent when
    there are none. thunder-plan-memory adds the waits that reusing arena
    bytes across streams needs. A backend records an event after every
    kernel that is waited for, makes every stream wait for the caller's
    stream before the first kernel, and the caller's stream wait for every
    stream's last kernel at the end.

    Before:
    ```mlir
    %a = thunder.fusion pointwise "a" (%x) : (tensor<64xf32>) -> tensor<64xf32> {...}
    %b = thunder.fusion pointwise "b" (%x) : (tensor<64xf32>) -> tensor<64xf32> {...}
    %c = thunder.fusion pointwise "c" (%a, %b) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> {...}
    ```
    After:
    ```mlir
    %a = thunder.fusion pointwise "a" (%x) {thunder.stream = 0 : i64} ...
    %b = thunder.fusion pointwise "b" (%x) {thunder.stream = 1 : i64} ...
    %c = thunder.fusion pointwise "c" (%a, %b) {thunder.stream = 0 : i64, thunder.wait = array<i64: 1>} ...
    ```

    Rationale: the list schedule and the depth-first order are the two
    heuristics XLA's memory scheduler chooses between; either can lose to
    the other (and to the exporter's own order), and computing a peak is
    linear, so all three are tried. Greedy chain decomposition is simple and
    sound; its waits are exact.
  }];
  let options = [
    Option<"maxStreams", "max-streams", "int64_t", /*default=*/"4",
           "The most streams to use (1: every kernel on stream 0)">,
  ];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

def ThunderPlanMemory : Pass<"thunder-plan-memory", "func::FuncOp"> {
  let summary = "Place every intermediate tensor in one arena";
  let description = [{
    Computes the liveness of every kernel result in schedule order and gives
    it bytes: function results are written straight into the caller's
    output buffers, every other result gets a 64-byte aligned offset in one
    arena (weights and arguments are not in the arena; a view is its
    operand's bytes).

    Liveness: a tensor is live from the position of its kernel (counting
    from 0 among kernels) to the last kernel that reads it, directly or
    through views. Two tensors live at one position never share a byte.

    In-place: a result of a `pointwise` fusion takes the bytes of one of its
    inputs when that input is an arena tensor (not a weight, argument or
    function result), this kernel is its last reader, it has the same byte
    size, and every block argument bound to it (through any view) has the
    result's shape and is only read element for element: its users are
    elementwise ops (or converts) of the result's shape, or the yield. With
    dynamic dims the sizes must also be provably equal: the region holds
    only elementwise ops and the result is computed from that input. A
    backend must read each element of such an input before it writes the
    same element of the result (what a pointwise loop does).

    Packing: greedy by size with best fit and a repair search
    (`thunder/Support/ArenaPacking.h`, `thunder::arena::packTensors`), on
    the buffers that in-place chains form.

    Recorded on every kernel, one entry per result:
    * `thunder.offsets = array<i64: ...>`: the byte offset in the arena;
      `-1 - k` for a result written into function result `k` (the first if
      returned more than once); `-9223372036854775807` when the arena is
      packed at run time;
    * `thunder.inplace = array<i64: ...>`: the operand index whose bytes
      the result takes, or -1;
    * `thunder.live = array<i64: first0, last0, first1, last1, ...>`: the
      live interval of each result (outputs included).
    On the function: `thunder.arena = {alignment = 64, bytes = N,
    lower_bound = L, naive = S}`: the arena size, the most bytes live at
    once (in-place pairs counted once, sizes rounded up to the alignment:
    no packing is smaller), and the sum of every arena tensor's size.

    Dynamic shapes: when an arena tensor has a dynamic dim, every arena
    offset is `-9223372036854775807` and `thunder.arena` is `{alignment =
    64, bytes = -1, lower_bound = -1, naive = -1, dynamic}`. The backend
    computes the sizes at run time and calls `thunder::arena::packTensors`
    with every arena tensor in schedule order (kernel by kernel, result by
    result, outputs skipped), `first`/`last` from `thunder.live` and
    `reuses` = the index in that list of the tensor `thunder.inplace`
    names: the same plan the compiler would have made.

    Streams: when kernels are on several streams (thunder-schedule), a
    kernel that writes bytes that an earlier tensor on another stream used
    waits for that tensor's producer and readers (added to `thunder.wait`
    unless already known complete). With a run-time arena any arena bytes
    may be reused, so every kernel waits for the kernels of the tensors
    dead before it.

    Borrowing output buffers (option `borrow-outputs`, off by default: a
    backend must read `thunder.borrowed` before it is turned on): a function
    result's buffer is the caller's memory, but it holds nothing until the
    result's kernel writes it, so tensors that die before then may live in
    it. For each function result (largest first) the arena tensors (in-place
    chains whole) whose last reader runs before that result's kernel are
    packed into its buffer, as many of the earliest-dying as fit. Their
    `thunder.offsets` entries are then offsets into that result's buffer,
    and `thunder.borrowed = array<i64: ...>` on the kernel gives, for each
    result, the function result whose buffer holds it, or -1 (the arena).
    `thunder.arena` gains `borrowed = B` (their bytes); `lower_bound` is
    then the bound of the tensors left in the arena. Static shapes only. For
    an LM whose logits are the largest tensor, every intermediate before the
    head fits in the logits' buffer and the peak (arena + outputs) drops to
    eager's.

    Library workspaces (option `library-workspace = W`, bytes; 0, the
    default, plans none): every `gemm` and `conv` kernel gets W bytes of
    workspace for the library it calls (cuBLASLt, cuDNN), packed in the
    arena with the tensors, so it takes bytes that are free while the kernel
    runs rather than memory of its own. A workspace is live from its kernel
    to the last kernel that the schedule's streams and waits do not order
    after it (concurrent library calls never share bytes); a kernel whose
    previous library kernel on the same stream still has a live workspace
    takes the same bytes. `thunder.workspace = <offset>` on the kernel,
    256-byte aligned (each workspace reserves W + 192 bytes to round its
    offset up); `thunder.arena` gains `workspace = W`; `bytes` and
    `lower_bound` count the workspaces, `naive` one of them. Kernels on
    other streams that reuse those bytes wait as for a tensor. Static shapes
    only: with a run-time arena no kernel gets `thunder.workspace` (the
    backend provides the workspace itself).

    Before:
    ```mlir
    %a = thunder.fusion pointwise "a" (%x) {thunder.stream = 0 : i64} : (tensor<256xf32>) -> tensor<256xf32> {...}
    %b = thunder.fusion pointwise "b" (%a) {thunder.stream = 0 : i64} : (tensor<256xf32>) -> tensor<256xf32> {...}
    return %b : tensor<256xf32>
    ```
    After:
    ```mlir
    func.func @f(...) attributes {thunder.arena = {alignment = 64 : i64, bytes = 1024 : i64, lower_bound = 1024 : i64, naive = 1024 : i64}} {
      %a = thunder.fusion pointwise "a" (%x) {thunder.inplace = array<i64: -1>, thunder.live = array<i64: 0, 1>, thunder.offsets = array<i64: 0>, ...}
      %b = thunder.fusion pointwise "b" (%a) {thunder.inplace = array<i64: -1>, thunder.live = array<i64: 1, 1>, thunder.offsets = array<i64: -1>, ...}
    ```
  }];
  let options = [
    Option<"borrowOutputs", "borrow-outputs", "bool", /*default=*/"false",
           "Place tensors that die before a function result is written in "
           "that result's buffer (recorded in thunder.borrowed)">,
    Option<"libraryWorkspace", "library-workspace", "int64_t", /*default=*/"0",
           "Bytes of library workspace each gemm and conv kernel gets in the "
           "arena (thunder.workspace); 0: none">,
  ];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

def ThunderPrintMemoryReport : Pass<"thunder-print-memory-report", "ModuleOp"> {
  let summary = "Print the memory plan (the --report=memory text)";
  let description = [{
    Prints `thunder::formatMemoryReport` of the module to standard output
    and leaves the IR unchanged: what `thunder-compile --report=memory`
    prints, for thunder-opt and its tests.
  }];
}

def ThunderSetPhase : Pass<"thunder-set-phase", "ModuleOp"> {
  let summary = "Record the phase a pipeline brought the module to";
  let description = [{
    Sets the module attribute `thunder.phase` to `phase` (graph, fusion or
    plan). Every phase's pipeline ends with it, so a module printed at any
    phase carries where it stands, and `thunder-compile x.mlir` continues from
    there. A module already at that phase or a later one is an error: its
    pipeline would run twice.

    ```mlir
    module attributes {thunder.phase = "graph"} { ... }
    ```
    after `thunder-set-phase{phase=fusion}`:
    ```mlir
    module attributes {thunder.phase = "fusion"} { ... }
    ```

    Rationale: deciding a module's phase by looking for ops (a
    `thunder.fusion` means fused, an offset attribute means planned) breaks as
    soon as a phase adds no recognisable op (the StableHLO target's pipeline
    stops at the graph), and hand-written IR can look like any phase.
  }];
  let options = [
    Option<"phase", "phase", "std::string", /*default=*/"\"graph\"",
           "The phase reached: graph, fusion or plan">,
  ];
}

#endif // THUNDER_DIALECT_THUNDER_TRANSFORMS_PASSES_TD
