//===- ShapePlan.cpp - Run-time sizes of dynamic dims ---------------------===//
#include "thunder/Target/ShapePlan.h"
#include "thunder/Dialect/Thunder/IR/RandomOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::thunder;
using ::thunder::PlanDim;
using ::thunder::ShapePlan;
using ::thunder::SymbolDef;

using DimRef = std::pair<Value, unsigned>;

namespace thunder {

/// Unifies dynamic dims and collects candidate definitions.
class ShapePlanBuilder {
public:
  /// A node per dynamic (value, dim).
  int node(Value v, unsigned d) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || d >= type.getRank() || !type.isDynamicDim(d))
      return -1;
    auto [it, inserted] = ids.try_emplace({v, d}, (int)refs.size());
    if (inserted) {
      refs.push_back({v, d});
      classes.insert(it->second);
    }
    return it->second;
  }
  void unify(Value a, unsigned da, Value b, unsigned db) {
    int x = node(a, da), y = node(b, db);
    if (x >= 0 && y >= 0)
      classes.unionSets(x, y);
  }
  void unifyAll(Value a, Value b) {
    auto ta = cast<RankedTensorType>(a.getType());
    auto tb = cast<RankedTensorType>(b.getType());
    if (ta.getRank() != tb.getRank())
      return;
    for (unsigned d = 0; d < ta.getRank(); ++d)
      unify(a, d, b, d);
  }
  void define(Value v, unsigned d, SymbolDef def) {
    int n = node(v, d);
    if (n >= 0)
      candidates.push_back({n, std::move(def)});
  }

  LogicalResult visit(Operation *op);
  FailureOr<ShapePlan> finish(func::FuncOp func);

  llvm::DenseMap<DimRef, int> ids;
  std::vector<DimRef> refs;
  llvm::EquivalenceClasses<int> classes;
  std::vector<std::pair<int, SymbolDef>> candidates;
};

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

LogicalResult ShapePlanBuilder::visit(Operation *op) {
  // A kernel: its block arguments are its inputs, its results what it
  // yields.
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    Block &body = fusion.getBody().front();
    for (auto [input, arg] : llvm::zip(fusion.getInputs(), body.getArguments()))
      unifyAll(input, arg);
    for (auto [yielded, result] :
         llvm::zip(body.getTerminator()->getOperands(), fusion.getResults()))
      unifyAll(yielded, result);
    return success();
  }
  if (op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResult(0).getType()))
    return success();
  Value result = op->getResult(0);
  auto type = tensorType(result);
  if (type.hasStaticShape())
    return success();

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<BroadcastOp>([&](BroadcastOp b) {
        for (auto [i, d] : llvm::enumerate(b.getBroadcastDims()))
          unify(b.getOperand(), i, result, d);
        return success();
      })
      .Case<ExpandOp>([&](ExpandOp e) {
        int64_t offset = type.getRank() - e.getOperand().getType().getRank();
        for (int64_t i = 0; i < e.getOperand().getType().getRank(); ++i)
          unify(e.getOperand(), i, result, offset + i);
        return success();
      })
      .Case<ReshapeOp>([&](ReshapeOp r) -> LogicalResult {
        auto in = r.getOperand().getType();
        auto staticProduct = [](RankedTensorType t) {
          int64_t p = 1;
          for (int64_t s : t.getShape())
            if (!ShapedType::isDynamic(s))
              p *= s;
          return p;
        };
        SmallVector<unsigned> inDyn, outDyn;
        for (unsigned d = 0; d < in.getRank(); ++d)
          if (in.isDynamicDim(d))
            inDyn.push_back(d);
        for (unsigned d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            outDyn.push_back(d);
        if (inDyn.size() == outDyn.size() &&
            staticProduct(in) == staticProduct(type)) {
          for (auto [a, b] : llvm::zip(inDyn, outDyn))
            unify(r.getOperand(), a, result, b);
          return success();
        }
        if (outDyn.size() == 1) {
          SymbolDef def{SymbolDef::Kind::NumelQuotient};
          def.value = r.getOperand();
          def.divisor = staticProduct(type);
          define(result, outDyn[0], def);
          return success();
        }
        // Several dynamic dims: the importer's symbols name them (unified
        // in finish()); without them there is no way to split the count.
        auto names = op->getAttrOfType<ArrayAttr>("thunder.dim_symbols");
        bool named = names && llvm::all_of(outDyn, [&](unsigned d) {
          auto name = d < names.size() ? dyn_cast<StringAttr>(names[d]) : nullptr;
          return name && !name.empty();
        });
        if (named)
          return success();
        return op->emitError("cannot determine the run-time sizes of a reshape "
                             "to several dynamic dims");
      })
      .Case<TransposeOp>([&](TransposeOp t) {
        for (auto [i, p] : llvm::enumerate(t.getPermutation()))
          unify(t.getOperand(), p, result, i);
        return success();
      })
      .Case<SliceOp>([&](SliceOp s) {
        for (unsigned d = 0; d < type.getRank(); ++d) {
          if (!type.isDynamicDim(d))
            continue;
          bool whole = s.getStart()[d] == 0 && s.getStep()[d] == 1 &&
                       s.getEnd()[d] == std::numeric_limits<int64_t>::max();
          if (whole) {
            unify(s.getOperand(), d, result, d);
          } else {
            SymbolDef def{SymbolDef::Kind::Slice};
            def.value = s.getOperand();
            def.dim = d;
            def.start = s.getStart()[d];
            def.step = s.getStep()[d];
            def.end = s.getEnd()[d];
            define(result, d, def);
          }
        }
        return success();
      })
      .Case<ConcatOp>([&](ConcatOp c) {
        unsigned axis = static_cast<unsigned>(c.getDim());
        SymbolDef sum{SymbolDef::Kind::Sum};
        for (Value input : c.getInputs()) {
          for (unsigned d = 0; d < type.getRank(); ++d)
            if (d != axis)
              unify(input, d, result, d);
          if (tensorType(input).isDynamicDim(axis))
            sum.terms.push_back({input, axis});
          else
            sum.constant += tensorType(input).getDimSize(axis);
        }
        if (type.isDynamicDim(axis))
          define(result, axis, sum);
        return success();
      })
      .Case<PadOp>([&](PadOp p) {
        for (unsigned d = 0; d < type.getRank(); ++d) {
          if (!type.isDynamicDim(d))
            continue;
          int64_t extra = p.getLow()[d] + p.getHigh()[d];
          if (extra == 0) {
            unify(p.getOperand(), d, result, d);
          } else {
            SymbolDef def{SymbolDef::Kind::Sum};
            def.terms.push_back({p.getOperand(), d});
            def.constant = extra;
            define(result, d, def);
          }
        }
        return success();
      })
      .Case([&](ReductionOpInterface r) {
        auto in = tensorType(r.getInput());
        llvm::SmallDenseSet<int64_t> reduced(r.getDims().begin(), r.getDims().end());
        unsigned out = 0;
        for (unsigned d = 0; d < in.getRank(); ++d) {
          if (reduced.contains(d)) {
            if (r.getKeepdim())
              ++out;
            continue;
          }
          unify(r.getInput(), d, result, out++);
        }
        return success();
      })
      .Case<ArgMaxOp, ArgMinOp>([&](auto r) {
        auto in = tensorType(r.getInput());
        unsigned out = 0;
        for (unsigned d = 0; d < in.getRank(); ++d) {
          if (d == r.getDim()) {
            if (r.getKeepdim())
              ++out;
            continue;
          }
          unify(r.getInput(), d, result, out++);
        }
        return success();
      })
      .Case<MatmulOp>([&](MatmulOp m) {
        auto lhs = tensorType(m.getLhs()), rhs = tensorType(m.getRhs());
        unsigned r = type.getRank();
        for (unsigned d = 0; d + 2 < r; ++d) {
          unify(m.getLhs(), d, result, d);
          if (rhs.getRank() == lhs.getRank())
            unify(m.getRhs(), d, result, d);
        }
        unsigned lr = lhs.getRank(), rr = rhs.getRank();
        unsigned mDim = m.getTransposeLhs() ? lr - 1 : lr - 2;
        unsigned kLhs = m.getTransposeLhs() ? lr - 2 : lr - 1;
        unsigned nDim = m.getTransposeRhs() ? rr - 2 : rr - 1;
        unsigned kRhs = m.getTransposeRhs() ? rr - 1 : rr - 2;
        unify(m.getLhs(), mDim, result, r - 2);
        unify(m.getRhs(), nDim, result, r - 1);
        unify(m.getLhs(), kLhs, m.getRhs(), kRhs);
        return success();
      })
      .Case<ConvolutionOp>([&](ConvolutionOp c) {
        unify(c.getInput(), 0, result, 0);
        unify(c.getWeight(), 0, result, 1);
        for (unsigned i = 0; i + 2 < type.getRank(); ++i) {
          SymbolDef def{SymbolDef::Kind::Window};
          def.value = c.getInput();
          def.dim = i + 2;
          def.kernel = tensorType(c.getWeight()).getDimSize(i + 2);
          def.stride = c.getStride()[i];
          def.padLo = c.getPadding()[2 * i];
          def.padHi = c.getPadding()[2 * i + 1];
          def.dilation = c.getDilation()[i];
          define(result, i + 2, def);
        }
        return success();
      })
      .Case<MaxPoolOp, AvgPoolOp>([&](auto p) {
        unsigned window = p.getKernel().size();
        unsigned first = type.getRank() - window;
        for (unsigned d = 0; d < first; ++d)
          unify(p.getInput(), d, result, d);
        for (unsigned i = 0; i < window; ++i) {
          SymbolDef def{SymbolDef::Kind::Window};
          def.value = p.getInput();
          def.dim = first + i;
          def.kernel = p.getKernel()[i];
          def.stride = p.getStride()[i];
          def.padLo = p.getPadding()[2 * i];
          def.padHi = p.getPadding()[2 * i + 1];
          if constexpr (std::is_same_v<decltype(p), MaxPoolOp>)
            def.dilation = p.getDilation()[i];
          def.ceilMode = p.getCeilMode();
          define(result, first + i, def);
        }
        return success();
      })
      .Case<GatherOp>([&](GatherOp g) {
        unifyAll(g.getIndex(), result);
        return success();
      })
      .Case<IndexSelectOp>([&](IndexSelectOp s) {
        unsigned axis = static_cast<unsigned>(s.getDim());
        for (unsigned d = 0; d < type.getRank(); ++d)
          if (d != axis)
            unify(s.getInput(), d, result, d);
        unify(s.getIndex(), 0, result, axis);
        return success();
      })
      .Case<EmbeddingOp>([&](EmbeddingOp e) {
        auto indices = tensorType(e.getIndices());
        for (unsigned d = 0; d < indices.getRank(); ++d)
          unify(e.getIndices(), d, result, d);
        unify(e.getWeight(), 1, result, indices.getRank());
        return success();
      })
      .Case<ScaledDotProductAttentionOp>([&](ScaledDotProductAttentionOp a) {
        unsigned r = type.getRank();
        for (unsigned d = 0; d + 1 < r; ++d)
          unify(a.getQuery(), d, result, d);
        unify(a.getValue(), r - 1, result, r - 1);
        return success();
      })
      .Case<IotaOp, RandomOp, ConstantOp, WeightOp>([&](Operation *) {
        // Sizes come from the users (unification) alone.
        return success();
      })
      .Default([&](Operation *other) {
        // Ops whose result has the shape of each same-rank operand:
        // elementwise ops, composites, cumsum.
        for (Value operand : other->getOperands())
          if (auto t = dyn_cast<RankedTensorType>(operand.getType());
              t && t.getRank() == type.getRank())
            unifyAll(operand, result);
        return success();
      });
}

FailureOr<ShapePlan> ShapePlanBuilder::finish(func::FuncOp func) {
  // Arguments: their dims define symbols; dims named by one symbol
  // (thunder.dim_symbols) are one.
  llvm::StringMap<std::pair<Value, unsigned>> bySymbol;
  std::vector<std::pair<int, SymbolDef>> argDefs;
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    auto names = func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(),
                                                  "thunder.dim_symbols");
    for (unsigned d = 0; d < type.getRank(); ++d) {
      int n = node(arg, d);
      if (n < 0)
        continue;
      SymbolDef def{SymbolDef::Kind::ArgDim};
      def.arg = arg.getArgNumber();
      def.dim = d;
      argDefs.push_back({n, def});
      if (names && d < names.size())
        if (auto name = dyn_cast<StringAttr>(names[d]); name && !name.empty()) {
          auto [it, inserted] = bySymbol.try_emplace(name.getValue(), arg, d);
          if (!inserted)
            unify(it->second.first, it->second.second, arg, d);
        }
    }
  }

  // Ops the importer annotated with the symbols of their dynamic dims.
  func.walk([&](Operation *op) {
    auto names = op->getAttrOfType<ArrayAttr>("thunder.dim_symbols");
    if (!names || op->getNumResults() != 1)
      return;
    Value result = op->getResult(0);
    for (auto [d, attr] : llvm::enumerate(names)) {
      auto name = dyn_cast<StringAttr>(attr);
      if (!name || name.empty() || node(result, d) < 0)
        continue;
      auto [it, inserted] = bySymbol.try_emplace(name.getValue(), result, d);
      if (!inserted)
        unify(it->second.first, it->second.second, result, d);
    }
  });

  // One definition per class: an argument's dim first, else the first
  // formula in program order.
  llvm::DenseMap<int, SymbolDef> chosen;
  for (auto &[n, def] : argDefs)
    chosen.try_emplace(classes.getLeaderValue(n), def);
  for (auto &[n, def] : candidates)
    chosen.try_emplace(classes.getLeaderValue(n), def);

  // Every class needs a definition. (The dims are visited in the order they
  // were met, not in `ids`' hash order: the symbols' numbering is part of
  // the generated code, which must not change from run to run.)
  for (size_t n = 0; n < refs.size(); ++n) {
    if (chosen.count(classes.getLeaderValue(n)))
      continue;
    const DimRef &ref = refs[n];
    Operation *owner = ref.first.getDefiningOp();
    InFlightDiagnostic diag =
        owner ? owner->emitError() : func.emitError();
    diag << "cannot determine the run-time size of dynamic dim " << ref.second
         << " of " << ref.first.getType();
    return failure();
  }

  // Order the definitions so each refers only to earlier ones.
  ShapePlan plan;
  llvm::DenseMap<int, int> symbolOf; // leader -> index in plan.defs
  llvm::DenseSet<int> visiting;
  std::function<LogicalResult(int)> emit = [&](int leader) -> LogicalResult {
    if (symbolOf.count(leader))
      return success();
    if (!visiting.insert(leader).second)
      return func.emitError("dynamic dims depend on each other in a cycle");
    const SymbolDef &def = chosen[leader];
    auto needValue = [&](Value v) -> LogicalResult {
      auto t = tensorType(v);
      for (unsigned d = 0; d < t.getRank(); ++d)
        if (int n = node(v, d); n >= 0)
          if (failed(emit(classes.getLeaderValue(n))))
            return failure();
      return success();
    };
    auto needDim = [&](Value v, unsigned d) -> LogicalResult {
      int n = node(v, d);
      return n < 0 ? success() : emit(classes.getLeaderValue(n));
    };
    LogicalResult ok = success();
    switch (def.kind) {
    case SymbolDef::Kind::ArgDim:
      break;
    case SymbolDef::Kind::NumelQuotient:
      ok = needValue(def.value);
      break;
    case SymbolDef::Kind::Sum:
      for (auto &[v, d] : def.terms)
        if (failed(needDim(v, d)))
          ok = failure();
      break;
    case SymbolDef::Kind::Window:
    case SymbolDef::Kind::Slice:
      ok = needDim(def.value, def.dim);
      break;
    }
    if (failed(ok))
      return failure();
    visiting.erase(leader);
    symbolOf[leader] = plan.defs.size();
    plan.defs.push_back(def);
    return success();
  };
  for (size_t n = 0; n < refs.size(); ++n)
    if (failed(emit(classes.getLeaderValue(n))))
      return failure();

  auto record = [&](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return;
    SmallVector<PlanDim, 4> dims;
    for (unsigned d = 0; d < type.getRank(); ++d) {
      int n = node(v, d);
      dims.push_back(n < 0 ? PlanDim{type.getDimSize(d), -1}
                           : PlanDim{0, symbolOf[classes.getLeaderValue(n)]});
    }
    plan.valueDims[v] = std::move(dims);
  };
  for (BlockArgument arg : func.getArguments())
    record(arg);
  func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      record(result);
    if (auto fusion = dyn_cast<FusionOp>(op))
      for (BlockArgument arg : fusion.getBody().front().getArguments())
        record(arg);
  });
  return plan;
}

} // namespace thunder

FailureOr<ShapePlan> ShapePlan::build(func::FuncOp func) {
  ::thunder::ShapePlanBuilder planner;
  auto addNodes = [&](Value v) {
    if (auto type = dyn_cast<RankedTensorType>(v.getType()))
      for (unsigned d = 0; d < type.getRank(); ++d)
        planner.node(v, d);
  };
  for (BlockArgument arg : func.getArguments())
    addNodes(arg);
  func.walk([&](FusionOp fusion) {
    for (BlockArgument arg : fusion.getBody().front().getArguments())
      addNodes(arg);
  });
  WalkResult walk = func.walk([&](Operation *op) {
    return failed(planner.visit(op)) ? WalkResult::interrupt()
                                     : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return planner.finish(func);
}

llvm::ArrayRef<PlanDim> ShapePlan::dims(Value value) const {
  auto it = valueDims.find(value);
  assert(it != valueDims.end() && "value not planned");
  return it->second;
}
