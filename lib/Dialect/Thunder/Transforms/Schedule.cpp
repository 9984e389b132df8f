//===- Schedule.cpp - Kernel order for low peak memory, and streams -------===//
//
// The thunder-schedule pass: picks the kernel order with the lowest peak of
// live arena bytes among three candidates (the given order, a memory-aware
// list schedule, a depth-first post-order), moves the ops into it, and
// assigns streams by greedy chain decomposition with the cross-stream waits.
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

#include "KernelGraph.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <tuple>

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERSCHEDULE
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::planning;

namespace {

/// What a dynamic dim is taken to be when sizes are compared for ordering.
constexpr int64_t kDynamicDimEstimate = 16;

/// The bytes a tensor of `type` is taken to need while ordering: exact when
/// static, with every `?` taken as kDynamicDimEstimate otherwise; rounded up
/// to the arena's alignment.
int64_t estimatedBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 0;
  int64_t elements = 1;
  for (int64_t dim : tensor.getShape())
    elements *= ShapedType::isDynamic(dim) ? kDynamicDimEstimate : dim;
  int64_t bytes = elements * elementBytes(tensor.getElementType());
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

/// The graph with what ordering needs: arena sizes, consumers.
struct OrderingProblem {
  const KernelGraph &graph;
  /// Per tensor: bytes it holds in the arena (0 for function results).
  SmallVector<int64_t> arenaBytes;
  /// Per kernel: the distinct kernels that read its results, ascending.
  SmallVector<SmallVector<unsigned, 2>> consumers;

  explicit OrderingProblem(const KernelGraph &graph) : graph(graph) {
    for (const KernelGraph::Tensor &tensor : graph.tensors)
      arenaBytes.push_back(tensor.output >= 0 ? 0
                                              : estimatedBytes(tensor.value.getType()));
    consumers.resize(graph.kernels.size());
    for (unsigned k = 0; k < graph.kernels.size(); ++k)
      for (unsigned p : graph.producers(k))
        consumers[p].push_back(k);
  }

  /// The most arena bytes live at once when the kernels run in `order`.
  int64_t peak(ArrayRef<unsigned> order) const {
    size_t n = order.size();
    SmallVector<int64_t> position(n);
    for (auto [pos, k] : llvm::enumerate(order))
      position[k] = pos;
    SmallVector<int64_t> delta(n + 1, 0);
    for (auto [t, tensor] : llvm::enumerate(graph.tensors)) {
      if (!arenaBytes[t])
        continue;
      int64_t first = position[tensor.kernel], last = first;
      for (unsigned r : tensor.readers)
        last = std::max(last, position[r]);
      delta[first] += arenaBytes[t];
      delta[last + 1] -= arenaBytes[t];
    }
    int64_t live = 0, most = 0;
    for (size_t i = 0; i < n; ++i)
      most = std::max(most, live += delta[i]);
    return most;
  }

  /// List scheduling: among the kernels whose producers have run, the one
  /// that frees the most bytes net of what it allocates (a tensor is freed
  /// by its last remaining reader); ties go to the earliest in block order.
  SmallVector<unsigned> listSchedule() const {
    size_t n = graph.kernels.size();
    SmallVector<int64_t> freed(n, 0), allocated(n, 0);
    SmallVector<unsigned> pending(n, 0), remaining, version(n, 0);
    SmallVector<bool> done(n, false);
    for (auto [t, tensor] : llvm::enumerate(graph.tensors)) {
      remaining.push_back(tensor.readers.size());
      if (tensor.readers.empty())
        continue; // written and dead at once: no lasting cost
      allocated[tensor.kernel] += arenaBytes[t];
      if (tensor.readers.size() == 1)
        freed[tensor.readers.front()] += arenaBytes[t];
    }
    for (unsigned k = 0; k < n; ++k)
      pending[k] = graph.producers(k).size();

    // (net bytes, block order, version): smallest first.
    using Entry = std::tuple<int64_t, unsigned, unsigned>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
    auto push = [&](unsigned k) {
      ready.emplace(allocated[k] - freed[k], k, ++version[k]);
    };
    for (unsigned k = 0; k < n; ++k)
      if (!pending[k])
        push(k);
    SmallVector<unsigned> order;
    order.reserve(n);
    while (!ready.empty()) {
      auto [score, k, v] = ready.top();
      ready.pop();
      if (done[k] || v != version[k])
        continue; // stale entry
      done[k] = true;
      order.push_back(k);
      for (unsigned t : graph.inputs[k]) {
        if (--remaining[t] != 1 || !arenaBytes[t])
          continue;
        // One reader left: running it will free the tensor.
        for (unsigned r : graph.tensors[t].readers) {
          if (done[r])
            continue;
          freed[r] += arenaBytes[t];
          if (!pending[r])
            push(r);
        }
      }
      for (unsigned c : consumers[k])
        if (!--pending[c])
          push(c);
    }
    return order;
  }

  /// Depth-first post-order from the function's results (then from every
  /// kernel not reached, in block order), visiting the producer with the
  /// most bytes behind it first.
  SmallVector<unsigned> depthFirst() const {
    size_t n = graph.kernels.size();
    // Bytes a kernel and everything before it allocate (shared producers
    // counted along every path: an estimate, as in XLA).
    SmallVector<double> behind(n, 0);
    for (unsigned k = 0; k < n; ++k) {
      for (unsigned t : graph.results[k])
        behind[k] += arenaBytes[t];
      for (unsigned p : graph.producers(k))
        behind[k] += behind[p];
    }
    // The kernels of the function's results, in result order.
    SmallVector<std::pair<int64_t, unsigned>> outputs;
    for (const KernelGraph::Tensor &tensor : graph.tensors)
      if (tensor.output >= 0)
        outputs.emplace_back(tensor.output, tensor.kernel);
    llvm::sort(outputs);
    SmallVector<unsigned> roots;
    for (auto [output, k] : outputs)
      roots.push_back(k);
    for (unsigned k = 0; k < n; ++k)
      roots.push_back(k);

    SmallVector<unsigned> order;
    order.reserve(n);
    SmallVector<bool> visited(n, false);
    // (kernel, its producers left to visit): an explicit stack, since a
    // chain of thousands of kernels is as deep.
    SmallVector<std::pair<unsigned, SmallVector<unsigned, 2>>> stack;
    auto enter = [&](unsigned k) {
      visited[k] = true;
      SmallVector<unsigned, 2> producers = graph.producers(k);
      // Visited last-to-first: the largest is popped first.
      llvm::stable_sort(producers, [&](unsigned a, unsigned b) {
        return std::make_pair(behind[a], -static_cast<int64_t>(a)) <
               std::make_pair(behind[b], -static_cast<int64_t>(b));
      });
      stack.emplace_back(k, std::move(producers));
    };
    for (unsigned root : roots) {
      if (visited[root])
        continue;
      enter(root);
      while (!stack.empty()) {
        auto &[k, producers] = stack.back();
        if (producers.empty()) {
          order.push_back(k);
          stack.pop_back();
          continue;
        }
        unsigned p = producers.pop_back_val();
        if (!visited[p])
          enter(p);
      }
    }
    return order;
  }
};

struct ThunderSchedule
    : mlir::thunder::impl::ThunderScheduleBase<ThunderSchedule> {
  using ThunderScheduleBase::ThunderScheduleBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (!llvm::hasSingleElement(func.getBody())) {
      func.emitError("thunder-schedule expects a function body of one block");
      return signalPassFailure();
    }
    if (maxStreams < 1) {
      func.emitError("thunder-schedule: max-streams must be at least 1, got ")
          << static_cast<int64_t>(maxStreams);
      return signalPassFailure();
    }
    Block &block = func.front();
    KernelGraph graph = KernelGraph::build(block);
    if (graph.kernels.empty())
      return;

    OrderingProblem problem(graph);
    SmallVector<unsigned> given = llvm::to_vector(
        llvm::seq<unsigned>(0, static_cast<unsigned>(graph.kernels.size())));
    SmallVector<unsigned> order = given;
    int64_t best = problem.peak(given);
    for (SmallVector<unsigned> candidate :
         {problem.listSchedule(), problem.depthFirst()}) {
      if (candidate.size() != given.size())
        continue; // not a full order (a cycle, impossible in SSA)
      if (int64_t peak = problem.peak(candidate); peak < best) {
        best = peak;
        order = std::move(candidate);
      }
    }
    reorder(block, graph, order);
    assignStreams(graph, order);
  }

  /// Moves the ops of `block` into `order`: weights first (as they were),
  /// each view right before its first user, views that no kernel reads just
  /// before the terminator.
  void reorder(Block &block, const KernelGraph &graph, ArrayRef<unsigned> order) {
    Operation *terminator = block.mightHaveTerminator() ? block.getTerminator() : nullptr;
    SmallVector<Operation *> weights, views;
    for (Operation &op : block) {
      if (&op == terminator)
        continue;
      if (isWeight(&op))
        weights.push_back(&op);
      else if (isView(&op))
        views.push_back(&op);
    }
    SmallVector<Operation *> sequence(weights);
    llvm::DenseSet<Operation *> placed;
    // A view's operand chain of views comes first.
    std::function<void(Operation *)> placeView = [&](Operation *view) {
      if (!placed.insert(view).second)
        return;
      for (Value operand : view->getOperands())
        if (Operation *def = operand.getDefiningOp(); def && isView(def))
          placeView(def);
      sequence.push_back(view);
    };
    for (unsigned k : order) {
      Operation *kernel = graph.kernels[k];
      for (Value value : usedValues(kernel))
        if (Operation *def = value.getDefiningOp(); def && isView(def))
          placeView(def);
      sequence.push_back(kernel);
    }
    for (Operation *view : views)
      placeView(view);
    for (Operation *op : sequence) {
      if (terminator)
        op->moveBefore(terminator);
      else
        op->moveBefore(&block, block.end());
    }
  }

  /// Greedy chain decomposition (see the pass description), and the waits.
  void assignStreams(const KernelGraph &graph, ArrayRef<unsigned> order) {
    size_t n = order.size();
    SmallVector<int64_t> position(n);
    for (auto [pos, k] : llvm::enumerate(order))
      position[k] = pos;
    SmallVector<int64_t> streams(n, 0); // by position
    SmallVector<int64_t> tail;          // per stream: position of its last kernel
    SmallVector<SmallVector<int64_t, 2>> producersAt(n);
    for (auto [pos, k] : llvm::enumerate(order)) {
      SmallVector<int64_t, 2> &producers = producersAt[pos];
      for (unsigned p : graph.producers(k))
        producers.push_back(position[p]);
      llvm::sort(producers, std::greater<int64_t>()); // latest first
      int64_t stream = -1;
      for (int64_t p : producers)
        if (tail[streams[p]] == p) {
          stream = streams[p];
          break;
        }
      if (stream < 0 && static_cast<int64_t>(tail.size()) < maxStreams) {
        stream = tail.size();
        tail.push_back(-1);
      }
      if (stream < 0) {
        if (!producers.empty())
          stream = streams[producers.front()];
        else
          stream = std::min_element(tail.begin(), tail.end()) - tail.begin();
      }
      streams[pos] = stream;
      tail[stream] = pos;
    }

    Builder builder(&getContext());
    StreamClocks clocks(streams);
    for (auto [pos, k] : llvm::enumerate(order)) {
      int64_t at = static_cast<int64_t>(pos);
      clocks.begin(at);
      SmallVector<int64_t> waits;
      for (int64_t p : producersAt[pos]) {
        if (clocks.ordered(p, at))
          continue;
        clocks.wait(p, at);
        waits.push_back(p);
      }
      llvm::sort(waits);
      Operation *kernel = graph.kernels[k];
      kernel->setAttr(kStreamAttr, builder.getI64IntegerAttr(streams[pos]));
      if (waits.empty())
        kernel->removeAttr(kWaitAttr);
      else
        kernel->setAttr(kWaitAttr, builder.getDenseI64ArrayAttr(waits));
    }
  }
};

} // namespace
