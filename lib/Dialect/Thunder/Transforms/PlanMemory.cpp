//===- PlanMemory.cpp - Liveness, in-place reuse and one arena ------------===//
//
// The thunder-plan-memory pass: every kernel result gets bytes, either in the
// caller's output buffer (function results) or at an offset in one arena
// packed by thunder/Support/ArenaPacking.h; pointwise kernels reuse a dying
// input's bytes where that is safe; gemm and conv kernels can get their
// library's workspace in the arena too; kernels on different streams wait for
// whoever used the bytes they overwrite. See the pass description in
// Passes.td for the attributes.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

#include "KernelGraph.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "thunder/Support/ArenaPacking.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERPLANMEMORY
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::planning;
namespace arena = ::thunder::arena;

namespace {

/// Ops that read their operands element for element at the position they
/// write: MLIR's Elementwise trait (every thunder elementwise op has it) and
/// thunder.convert.
bool readsElementForElement(Operation *op) {
  return op->hasTrait<OpTrait::Elementwise>() || isa<ConvertOp>(op);
}

/// Whether block argument `arg` is read only element for element at
/// positions of a tensor of `shape`: `arg` has that shape, and its users,
/// and the users of every value computed from it, are elementwise ops of that
/// shape, or the yield. (A value computed from it and then sliced, broadcast
/// or transposed reads it at other positions than the one being written: x +
/// (x + y)[:, :1] written over x would read channel 0 after overwriting it.)
bool onlyReadElementwise(BlockArgument arg, ArrayRef<int64_t> shape) {
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  if (!type || type.getShape() != shape)
    return false;
  llvm::DenseSet<Value> reached{arg};
  SmallVector<Value> work{arg};
  while (!work.empty()) {
    Value value = work.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (isa<YieldOp>(user))
        continue;
      if (!readsElementForElement(user))
        return false;
      for (Value result : user->getResults()) {
        auto resultType = dyn_cast<RankedTensorType>(result.getType());
        if (!resultType || resultType.getShape() != shape)
          return false;
        if (reached.insert(result).second)
          work.push_back(result);
      }
    }
  }
  return true;
}

/// Whether a kernel calls a library that takes a workspace (cuBLASLt for
/// GEMMs, cuDNN for convolutions).
bool callsLibrary(Operation *kernel) {
  auto fusion = dyn_cast<FusionOp>(kernel);
  return fusion &&
         (fusion.getKind() == FusionKind::Gemm || fusion.getKind() == FusionKind::Conv);
}

/// With dynamic dims, whether `arg` and result `index` of the region are
/// known to have the same run-time shape: the region is made of elementwise
/// ops only (which keep shapes) and the result is computed from `arg`.
bool provablySameShape(Block &body, BlockArgument arg, unsigned index) {
  for (Operation &op : body.without_terminator())
    if (!readsElementForElement(&op))
      return false;
  Value target = body.getTerminator()->getOperand(index);
  llvm::DenseSet<Value> reached{arg};
  SmallVector<Value> work{arg};
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (value == target)
      return true;
    for (Operation *user : value.getUsers())
      for (Value result : user->getResults())
        if (reached.insert(result).second)
          work.push_back(result);
  }
  return false;
}

struct ThunderPlanMemory
    : mlir::thunder::impl::ThunderPlanMemoryBase<ThunderPlanMemory> {
  using ThunderPlanMemoryBase::ThunderPlanMemoryBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (!llvm::hasSingleElement(func.getBody())) {
      func.emitError("thunder-plan-memory expects a function body of one block");
      return signalPassFailure();
    }
    KernelGraph graph = KernelGraph::build(func.front());
    size_t numKernels = graph.kernels.size();
    size_t numTensors = graph.tensors.size();

    // In-place decisions, kernel by kernel.
    SmallVector<int64_t> reuses(numTensors, -1); // tensor -> tensor whose bytes
    SmallVector<SmallVector<int64_t, 1>> inplace(numKernels);
    for (unsigned k = 0; k < numKernels; ++k)
      inplace[k] = decideInPlace(graph, k, reuses);

    // The arena's tensors, in schedule order.
    SmallVector<int64_t> arenaIndex(numTensors, -1);
    SmallVector<unsigned> arenaTensors;
    bool dynamic = false;
    for (auto [t, tensor] : llvm::enumerate(graph.tensors)) {
      if (tensor.output >= 0)
        continue;
      arenaIndex[t] = arenaTensors.size();
      arenaTensors.push_back(t);
      dynamic |= !tensor.bytes.has_value();
    }
    std::vector<arena::Tensor> packed;
    for (unsigned t : arenaTensors) {
      const KernelGraph::Tensor &tensor = graph.tensors[t];
      arena::Tensor entry;
      entry.bytes = static_cast<uint64_t>(tensor.bytes.value_or(0));
      entry.first = tensor.kernel;
      entry.last = graph.lastUse(t);
      entry.reuses = reuses[t] >= 0 ? arenaIndex[reuses[t]] : -1;
      packed.push_back(entry);
    }
    // Library workspaces: one more arena entry per gemm/conv kernel (static
    // shapes: a run-time arena packs tensors only).
    SmallVector<int64_t> workspaceEntry(numKernels, -1); // kernel -> packed
    if (libraryWorkspace > 0 && !dynamic) {
      SmallVector<int64_t> streams = streamsOf(graph);
      SmallVector<int64_t> lastConcurrent = concurrencyEnds(graph, streams);
      llvm::DenseMap<int64_t, unsigned> previousOnStream; // stream -> kernel
      for (unsigned k = 0; k < numKernels; ++k) {
        if (!callsLibrary(graph.kernels[k]))
          continue;
        workspaceEntry[k] = packed.size();
        arena::Tensor entry;
        entry.bytes = workspaceReservation();
        entry.first = k;
        entry.last = lastConcurrent[k];
        // The previous library kernel of this stream runs before this one:
        // when its workspace is still live here, this one takes the same
        // bytes (one buffer for the two) rather than more.
        auto previous = previousOnStream.find(streams[k]);
        if (previous != previousOnStream.end() &&
            lastConcurrent[previous->second] >= int64_t(k))
          entry.reuses = workspaceEntry[previous->second];
        previousOnStream[streams[k]] = k;
        packed.push_back(entry);
      }
    }
    // Static shapes: in-place chains become buffers; with borrow-outputs some
    // go into output buffers, the rest are packed in the arena.
    std::vector<uint64_t> offsets(packed.size(), 0);
    SmallVector<int64_t> home(packed.size(), -1); // output whose buffer, or -1
    uint64_t total = 0, bound = 0, naive = 0, borrowed = 0;
    if (!dynamic) {
      // Naive: every tensor its own buffer, and one library workspace.
      for (unsigned t : arenaTensors)
        naive += arena::alignUp(packed[arenaIndex[t]].bytes, kAlignment);
      if (llvm::any_of(workspaceEntry, [](int64_t e) { return e >= 0; }))
        naive += arena::alignUp(workspaceReservation(), kAlignment);
      std::vector<size_t> chainOf;
      std::vector<arena::Interval> chains = arena::buffersOf(packed, &chainOf);
      std::vector<int64_t> chainHome(chains.size(), -1);
      std::vector<uint64_t> chainOffset(chains.size(), 0);
      if (borrowOutputs) {
        // Workspaces stay in the arena: the backend passes arena pointers.
        std::vector<bool> arenaOnly(chains.size(), false);
        for (int64_t entry : workspaceEntry)
          if (entry >= 0)
            arenaOnly[chainOf[entry]] = true;
        borrowOutputBuffers(graph, chains, arenaOnly, chainHome, chainOffset);
      }
      std::vector<arena::Interval> rest;
      std::vector<size_t> restChain;
      for (auto [c, chain] : llvm::enumerate(chains))
        if (chainHome[c] < 0) {
          rest.push_back(chain);
          restChain.push_back(c);
        }
      std::vector<uint64_t> restOffsets = arena::pack(rest, kAlignment, &total);
      bound = arena::lowerBound(rest, kAlignment);
      for (auto [i, c] : llvm::enumerate(restChain))
        chainOffset[c] = restOffsets[i];
      for (size_t a = 0; a < packed.size(); ++a) {
        offsets[a] = chainOffset[chainOf[a]];
        home[a] = chainHome[chainOf[a]];
      }
      for (auto [c, chain] : llvm::enumerate(chains))
        if (chainHome[c] >= 0)
          borrowed += arena::alignUp(chain.bytes, kAlignment);
    }

    Builder builder(&getContext());
    for (unsigned k = 0; k < numKernels; ++k) {
      SmallVector<int64_t> kernelOffsets, live, borrowedBy;
      for (unsigned t : graph.results[k]) {
        const KernelGraph::Tensor &tensor = graph.tensors[t];
        borrowedBy.push_back(arenaIndex[t] >= 0 ? home[arenaIndex[t]] : -1);
        if (tensor.output >= 0)
          kernelOffsets.push_back(-1 - tensor.output);
        else if (dynamic)
          kernelOffsets.push_back(kRuntimeOffset);
        else
          kernelOffsets.push_back(static_cast<int64_t>(offsets[arenaIndex[t]]));
        live.push_back(tensor.kernel);
        live.push_back(graph.lastUse(t));
      }
      Operation *kernel = graph.kernels[k];
      if (workspaceEntry[k] >= 0)
        kernel->setAttr(kWorkspaceAttr, builder.getI64IntegerAttr(int64_t(
                                            arena::alignUp(offsets[workspaceEntry[k]],
                                                           kWorkspaceAlignment))));
      else
        kernel->removeAttr(kWorkspaceAttr);
      kernel->setAttr(kOffsetsAttr, builder.getDenseI64ArrayAttr(kernelOffsets));
      kernel->setAttr(kInplaceAttr, builder.getDenseI64ArrayAttr(inplace[k]));
      kernel->setAttr(kLiveAttr, builder.getDenseI64ArrayAttr(live));
      if (llvm::any_of(borrowedBy, [](int64_t b) { return b >= 0; }))
        kernel->setAttr(kBorrowedAttr, builder.getDenseI64ArrayAttr(borrowedBy));
      else
        kernel->removeAttr(kBorrowedAttr);
    }
    auto i64 = [&](int64_t value) { return builder.getI64IntegerAttr(value); };
    SmallVector<NamedAttribute> arenaInfo = {
        builder.getNamedAttr("alignment", i64(kAlignment)),
        builder.getNamedAttr("bytes", i64(dynamic ? -1 : int64_t(total))),
        builder.getNamedAttr("lower_bound", i64(dynamic ? -1 : int64_t(bound))),
        builder.getNamedAttr("naive", i64(dynamic ? -1 : int64_t(naive)))};
    if (dynamic)
      arenaInfo.push_back(builder.getNamedAttr("dynamic", builder.getUnitAttr()));
    if (borrowOutputs && !dynamic)
      arenaInfo.push_back(builder.getNamedAttr("borrowed", i64(int64_t(borrowed))));
    if (llvm::any_of(workspaceEntry, [](int64_t e) { return e >= 0; }))
      arenaInfo.push_back(builder.getNamedAttr("workspace", i64(libraryWorkspace)));
    func->setAttr(kArenaAttr, builder.getDictionaryAttr(arenaInfo));

    addReuseWaits(graph, arenaIndex, workspaceEntry, offsets, home, dynamic);
  }

  /// Library workspaces start 256-byte aligned (cuBLASLt's requirement) in
  /// an arena whose entries are `kAlignment`-aligned: each reserves the
  /// slack to round its offset up.
  static constexpr uint64_t kWorkspaceAlignment = 256;
  uint64_t workspaceReservation() const {
    return static_cast<uint64_t>(libraryWorkspace) + kWorkspaceAlignment - kAlignment;
  }

  /// Each kernel's stream (thunder.stream; 0 without one).
  static SmallVector<int64_t> streamsOf(const KernelGraph &graph) {
    SmallVector<int64_t> streams(graph.kernels.size(), 0);
    for (auto [k, kernel] : llvm::enumerate(graph.kernels))
      if (auto stream = kernel->getAttrOfType<IntegerAttr>(kStreamAttr))
        streams[k] = std::max<int64_t>(0, stream.getInt());
    return streams;
  }

  /// For each kernel, the last position of a kernel that may still run while
  /// it does: the schedule's streams and waits do not order it after this
  /// one. A workspace is live until then, so kernels that run concurrently
  /// never share workspace bytes (and the bytes go to later kernels only
  /// once they are ordered after this one: no waits, no lost concurrency).
  /// On one stream every kernel's end is itself.
  SmallVector<int64_t> concurrencyEnds(const KernelGraph &graph,
                                       ArrayRef<int64_t> streams) {
    size_t numKernels = graph.kernels.size();
    StreamClocks clocks(streams);
    for (unsigned k = 0; k < numKernels; ++k) {
      clocks.begin(k);
      if (auto waits = graph.kernels[k]->getAttrOfType<DenseI64ArrayAttr>(kWaitAttr))
        for (int64_t w : waits.asArrayRef())
          if (w >= 0 && w < int64_t(k))
            clocks.wait(w, k);
    }
    SmallVector<int64_t> ends(numKernels);
    for (unsigned k = 0; k < numKernels; ++k) {
      ends[k] = k;
      for (unsigned j = k + 1; j < numKernels; ++j)
        if (!clocks.ordered(k, j))
          ends[k] = j;
    }
    return ends;
  }

  /// Places chains that die before a function result is written into that
  /// result's buffer (see the pass description): for each output buffer,
  /// largest first, the longest run of the earliest-dying free chains that
  /// packs into its bytes.
  void borrowOutputBuffers(const KernelGraph &graph,
                           const std::vector<arena::Interval> &chains,
                           const std::vector<bool> &arenaOnly,
                           std::vector<int64_t> &chainHome,
                           std::vector<uint64_t> &chainOffset) {
    struct OutputBuffer {
      int64_t index;
      uint64_t bytes;
      int64_t writtenAt;
    };
    SmallVector<OutputBuffer> buffers;
    for (const KernelGraph::Tensor &tensor : graph.tensors)
      if (tensor.output >= 0 && tensor.bytes && *tensor.bytes > 0)
        buffers.push_back({tensor.output, static_cast<uint64_t>(*tensor.bytes),
                           static_cast<int64_t>(tensor.kernel)});
    llvm::stable_sort(buffers, [](const OutputBuffer &a, const OutputBuffer &b) {
      return std::make_pair(-static_cast<int64_t>(a.bytes), a.index) <
             std::make_pair(-static_cast<int64_t>(b.bytes), b.index);
    });
    for (const OutputBuffer &buffer : buffers) {
      SmallVector<size_t> candidates;
      for (auto [c, chain] : llvm::enumerate(chains))
        if (chainHome[c] < 0 && !arenaOnly[c] && chain.bytes > 0 &&
            chain.last < buffer.writtenAt && chain.bytes <= buffer.bytes)
          candidates.push_back(c);
      llvm::stable_sort(candidates, [&](size_t a, size_t b) {
        return chains[a].last < chains[b].last;
      });
      // The first `n` candidates, packed; empty when they do not fit.
      auto packPrefix = [&](size_t n) -> std::optional<std::vector<uint64_t>> {
        std::vector<arena::Interval> prefix;
        for (size_t i = 0; i < n; ++i)
          prefix.push_back(chains[candidates[i]]);
        uint64_t total = 0;
        std::vector<uint64_t> offsets = arena::pack(prefix, kAlignment, &total);
        for (size_t i = 0; i < n; ++i)
          if (offsets[i] + prefix[i].bytes > buffer.bytes)
            return std::nullopt;
        return offsets;
      };
      size_t lo = 0, hi = candidates.size(); // prefix `lo` fits
      std::optional<std::vector<uint64_t>> best = std::vector<uint64_t>();
      if (auto all = packPrefix(hi)) {
        lo = hi;
        best = std::move(all);
      } else {
        while (hi - lo > 1) {
          size_t mid = lo + (hi - lo) / 2;
          if (auto fit = packPrefix(mid)) {
            lo = mid;
            best = std::move(fit);
          } else {
            hi = mid;
          }
        }
      }
      for (size_t i = 0; i < lo; ++i) {
        chainHome[candidates[i]] = buffer.index;
        chainOffset[candidates[i]] = (*best)[i];
      }
    }
  }

  /// For each result of kernel `k`, the operand whose bytes it takes, or -1
  /// (see the pass description); records the choice in `reuses`.
  SmallVector<int64_t, 1> decideInPlace(const KernelGraph &graph, unsigned k,
                                        SmallVectorImpl<int64_t> &reuses) {
    Operation *kernel = graph.kernels[k];
    SmallVector<int64_t, 1> choice(kernel->getNumResults(), -1);
    auto fusion = dyn_cast<FusionOp>(kernel);
    if (!fusion || fusion.getKind() != FusionKind::Pointwise)
      return choice;
    Block &body = fusion.getBody().front();
    SmallVector<unsigned> taken;
    for (auto [j, t] : llvm::enumerate(graph.results[k])) {
      const KernelGraph::Tensor &result = graph.tensors[t];
      auto resultType = dyn_cast<RankedTensorType>(result.value.getType());
      if (result.output >= 0 || !resultType)
        continue;
      for (auto [i, operand] : llvm::enumerate(fusion.getInputs())) {
        std::optional<unsigned> v = graph.tensorFor(operand);
        if (!v || llvm::is_contained(taken, *v))
          continue;
        const KernelGraph::Tensor &input = graph.tensors[*v];
        if (input.output >= 0 || graph.lastUse(*v) != k)
          continue;
        bool sizesKnown = input.bytes && result.bytes;
        if (sizesKnown && *input.bytes != *result.bytes)
          continue;
        auto inputType = cast<RankedTensorType>(input.value.getType());
        if (!sizesKnown && elementBytes(inputType.getElementType()) !=
                               elementBytes(resultType.getElementType()))
          continue;
        // Every block argument bound to this tensor, through any view.
        bool safe = true;
        for (auto [i2, operand2] : llvm::enumerate(fusion.getInputs()))
          if (graph.tensorFor(operand2) == v)
            safe &= onlyReadElementwise(body.getArgument(i2), resultType.getShape());
        if (safe && !sizesKnown)
          safe = provablySameShape(body, body.getArgument(i), j);
        if (!safe)
          continue;
        choice[j] = static_cast<int64_t>(i);
        taken.push_back(*v);
        reuses[t] = *v;
        break;
      }
    }
    return choice;
  }

  /// When kernels run on several streams, a kernel that writes arena bytes
  /// (its results, its workspace) that an earlier tensor or workspace used
  /// must run after whoever used them: adds the waits that are not already
  /// implied.
  void addReuseWaits(const KernelGraph &graph, ArrayRef<int64_t> arenaIndex,
                     ArrayRef<int64_t> workspaceEntry, ArrayRef<uint64_t> offsets,
                     ArrayRef<int64_t> home, bool dynamic) {
    size_t numKernels = graph.kernels.size();
    SmallVector<int64_t> streams = streamsOf(graph);
    if (llvm::all_of(streams, [](int64_t s) { return s == 0; }))
      return;
    int64_t numStreams = *std::max_element(streams.begin(), streams.end()) + 1;

    // The bytes a tensor occupies, for the static overlap test: (buffer,
    // begin, end), the buffer -1 for the arena or k for function result k's
    // (which its own kernel writes whole, over whatever borrowed it).
    struct Extent {
      int64_t buffer;
      uint64_t begin, end;
    };
    auto extent = [&](unsigned t) -> Extent {
      const KernelGraph::Tensor &tensor = graph.tensors[t];
      uint64_t bytes = static_cast<uint64_t>(tensor.bytes.value_or(0));
      if (arenaIndex[t] < 0)
        return {tensor.output, 0, bytes};
      uint64_t begin = offsets[arenaIndex[t]];
      return {home[arenaIndex[t]], begin,
              begin + arena::alignUp(bytes, kAlignment)};
    };
    auto workspaceExtent = [&](unsigned k) -> Extent {
      uint64_t begin = offsets[workspaceEntry[k]];
      return {-1, begin, begin + arena::alignUp(workspaceReservation(), kAlignment)};
    };
    // Tensors by last use, for the run-time arena's dead frontier.
    SmallVector<unsigned> byLastUse;
    for (auto [t, index] : llvm::enumerate(arenaIndex))
      if (index >= 0)
        byLastUse.push_back(t);
    llvm::stable_sort(byLastUse, [&](unsigned a, unsigned b) {
      return graph.lastUse(a) < graph.lastUse(b);
    });
    size_t deadCursor = 0;
    SmallVector<int64_t> deadFrontier(numStreams, -1);

    Builder builder(&getContext());
    StreamClocks clocks(streams);
    for (unsigned k = 0; k < numKernels; ++k) {
      Operation *kernel = graph.kernels[k];
      int64_t at = k;
      clocks.begin(at);
      SmallVector<int64_t> waits;
      if (auto existing = kernel->getAttrOfType<DenseI64ArrayAttr>(kWaitAttr))
        for (int64_t w : existing.asArrayRef())
          if (w >= 0 && w < at) {
            clocks.wait(w, at);
            waits.push_back(w);
          }

      // Per stream, the latest kernel that touched bytes this one writes.
      SmallVector<int64_t> hazard(numStreams, -1);
      auto touchers = [&](unsigned u) {
        const KernelGraph::Tensor &tensor = graph.tensors[u];
        auto note = [&](int64_t x) {
          if (x != at)
            hazard[streams[x]] = std::max(hazard[streams[x]], x);
        };
        note(tensor.kernel);
        for (unsigned r : tensor.readers)
          note(r);
      };
      bool writesArena = llvm::any_of(graph.results[k], [&](unsigned t) {
        return arenaIndex[t] >= 0;
      });
      if (writesArena && dynamic) {
        // Any dead tensor's bytes may be reused: wait for all of them (the
        // latest toucher per stream stands for the rest).
        for (; deadCursor < byLastUse.size() &&
               graph.lastUse(byLastUse[deadCursor]) < k;
             ++deadCursor) {
          const KernelGraph::Tensor &tensor = graph.tensors[byLastUse[deadCursor]];
          deadFrontier[streams[tensor.kernel]] =
              std::max<int64_t>(deadFrontier[streams[tensor.kernel]], tensor.kernel);
          for (unsigned r : tensor.readers)
            deadFrontier[streams[r]] = std::max<int64_t>(deadFrontier[streams[r]], r);
        }
        hazard = deadFrontier;
        for (unsigned u : graph.inputs[k])
          if (arenaIndex[u] >= 0 && graph.lastUse(u) == k)
            touchers(u); // an in-place input's other readers
      } else if (!dynamic) {
        SmallVector<std::pair<Extent, int64_t>> writes; // extent, its tensor or -1
        for (unsigned t : graph.results[k])
          writes.push_back({extent(t), t});
        if (workspaceEntry[k] >= 0)
          writes.push_back({workspaceExtent(k), -1});
        for (auto [mine, t] : writes) {
          if (mine.begin == mine.end)
            continue;
          auto overlaps = [&](const Extent &other) {
            return other.buffer == mine.buffer && other.begin < mine.end &&
                   mine.begin < other.end;
          };
          for (auto [u, index] : llvm::enumerate(arenaIndex)) {
            if (index < 0 || int64_t(u) == t || graph.tensors[u].kernel >= k ||
                graph.lastUse(u) > k)
              continue;
            if (overlaps(extent(u)))
              touchers(u);
          }
          for (unsigned j = 0; j < k; ++j)
            if (workspaceEntry[j] >= 0 && overlaps(workspaceExtent(j)))
              hazard[streams[j]] = std::max<int64_t>(hazard[streams[j]], j);
        }
      }
      for (int64_t s = 0; s < numStreams; ++s) {
        int64_t x = hazard[s];
        if (x < 0 || x >= at || clocks.ordered(x, at))
          continue;
        clocks.wait(x, at);
        waits.push_back(x);
      }
      llvm::sort(waits);
      waits.erase(std::unique(waits.begin(), waits.end()), waits.end());
      if (waits.empty())
        kernel->removeAttr(kWaitAttr);
      else
        kernel->setAttr(kWaitAttr, builder.getDenseI64ArrayAttr(waits));
    }
  }
};

} // namespace
