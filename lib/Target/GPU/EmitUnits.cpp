//===- EmitUnits.cpp - A GPU unit: a fusion region or a top-level op ------===//
//
// A region around one library op runs the op, then its pointwise epilogue as
// one generated kernel (or in cuBLASLt's epilogue when the chain is bias
// (+ReLU | tanh-GELU)); a pointwise or row-reduction region is one generated
// kernel (EmitKernels.cpp); any other region runs op by op, with its
// intermediates in the stream's scratch memory. Each unit is enqueued on its
// stream after the events it waits for.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::thunder;

namespace thunder::gpu {

//===----------------------------------------------------------------------===//
// Units and regions
//===----------------------------------------------------------------------===//

/// matmul (+ bias broadcast along the last dim) (+ relu | tanh-gelu) as one
/// cuBLASLt call with an epilogue.
bool GpuEmitter::tryGemmEpilogue(Unit &unit, FusionOp fusion, llvm::raw_ostream &host) {
  SmallVector<Operation *> ops;
  for (Operation &op : fusion.getBody().front().without_terminator())
    if (!isa<ConstantOp>(op))
      ops.push_back(&op);
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  if (ops.empty() || yield.getValues().size() != 1)
    return false;
  auto mm = dyn_cast<MatmulOp>(ops.front());
  if (!mm || !isLtType(typeOf(mm).getElementType()))
    return false;
  Value current = mm.getResult(), bias;
  size_t at = 1;
  bool relu = false, gelu = false;
  auto singleUse = [](Value v) { return v.hasOneUse(); };
  // The bias: a [N] leaf broadcast along the last dim.
  auto biasOf = [&](Value v) -> Value {
    Value src;
    if (auto b = v.getDefiningOp<BroadcastOp>()) {
      if (b.getBroadcastDims().size() == 1 && b.getBroadcastDims()[0] == rank(b) - 1)
        src = b.getOperand();
    } else if (auto x = v.getDefiningOp<ExpandOp>()) {
      if (rank(x.getOperand()) == 1)
        src = x.getOperand();
    }
    if (!src || !isa<BlockArgument>(src) || !v.hasOneUse())
      return {};
    auto d = plan.dims(src)[0], n = plan.dims(mm)[rank(mm) - 1];
    return d.size == n.size && d.symbol == n.symbol && !(d.size == 1 && n.size != 1) ? src
                                                                                      : Value();
  };
  Operation *broadcast = nullptr;
  if (at < ops.size() && isa<BroadcastOp, ExpandOp>(ops[at]))
    broadcast = ops[at++]; // the bias's broadcast, checked with the add below
  if (at < ops.size())
    if (auto add = dyn_cast<AddOp>(ops[at])) {
      Value other = add.getLhs() == current ? add.getRhs() : add.getLhs();
      if (!singleUse(current) || (add.getLhs() != current && add.getRhs() != current))
        return false;
      bias = biasOf(other);
      if (!bias || other.getDefiningOp() != broadcast)
        return false;
      current = add.getResult();
      ++at;
    }
  if (at < ops.size() && singleUse(current)) {
    if (auto r = dyn_cast<ReluOp>(ops[at]); r && r.getOperand() == current) {
      relu = true;
      current = r.getResult();
      ++at;
    } else if (auto g = dyn_cast<GeluOp>(ops[at]);
               g && g.getOperand() == current && g.getApproximate() == GeluApproximation::Tanh) {
      gelu = true;
      current = g.getResult();
      ++at;
    }
  }
  if (at != ops.size() || yield.getValues()[0] != current)
    return false;
  // The ops before the add must be the matmul and (only) the bias broadcast.
  if (!bias && ops.size() > size_t(1 + (relu || gelu)))
    return false;
  const char *epi = bias ? (relu ? "ReluBias" : gelu ? "GeluTanhBias" : "Bias")
                         : (relu ? "Relu" : gelu ? "GeluTanh" : "None");
  Value lhs = mm.getLhs(), rhs = mm.getRhs();
  int lr = rank(lhs), rr = rank(rhs);
  std::string batch = "int64_t(1)";
  for (int d = 0; d < lr - 2; ++d)
    batch += " * " + dimExpr(lhs, d);
  needsLt = true;
  ++libraryCalls;
  auto b = [](bool v) { return v ? "true" : "false"; };
  host << "    // cuBLASLt with the epilogue " << epi << ".\n"
       << "    matmul(c, " << name(lhs) << ", " << name(rhs) << ", "
       << name(fusion.getResult(0)) << ", " << batch << ", "
       << dimExpr(lhs, mm.getTransposeLhs() ? lr - 1 : lr - 2) << ", "
       << dimExpr(rhs, mm.getTransposeRhs() ? rr - 2 : rr - 1) << ", "
       << dimExpr(lhs, mm.getTransposeLhs() ? lr - 2 : lr - 1) << ", "
       << b(mm.getTransposeLhs()) << ", " << b(mm.getTransposeRhs()) << ", "
       << b(rr == 2 && lr > 2) << ", Epilogue::" << epi << ", "
       << (bias ? name(bias) : "(const " + elem(mm) + " *)nullptr") << ");\n";
  (void)unit;
  return true;
}

LogicalResult GpuEmitter::emitRegion(Unit &unit, FusionOp fusion, llvm::raw_ostream &device,
                                  llvm::raw_ostream &host) {
  Block &body = fusion.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<Operation *> ops, heavy;
  for (Operation &op : body.without_terminator()) {
    if (isa<ConstantOp>(op))
      continue;
    ops.push_back(&op);
    if (!isPointwise(&op))
      heavy.push_back(&op);
  }
  SmallVector<Value> roots(yield.getValues().begin(), yield.getValues().end());
  std::vector<std::string> dests;
  for (Value r : fusion.getResults())
    dests.push_back(name(r));
  auto sameShape = [&](ArrayRef<Value> values) {
    for (Value v : values) {
      auto a = plan.dims(v), b = plan.dims(values.front());
      if (a.size() != b.size())
        return false;
      for (auto [x, y] : llvm::zip(a, b))
        if (x.size != y.size || x.symbol != y.symbol)
          return false;
    }
    return true;
  };

  // A row reduction region: one kernel, a block per row.
  if (fusion.getKind() == FusionKind::Reduction) {
    FailureOr<bool> done = emitRowReduction(unit, fusion, device, host);
    if (failed(done))
      return failure();
    if (*done)
      return success();
  }

  // One pointwise kernel for the whole region.
  SmallVector<Value> args(body.getArguments().begin(), body.getArguments().end());
  if (heavy.empty() && !roots.empty() && sameShape(roots))
    return emitPointwise(unit.name, ops, args, roots, dests, device, host);

  // A library op and its epilogue.
  if (heavy.size() == 1) {
    Operation *h = heavy.front();
    bool prologue = llvm::any_of(h->getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && def->getBlock() == &body && !isa<ConstantOp>(def);
    });
    if (!prologue && h->getNumResults() == 1) {
      if (isa<MatmulOp>(h) && tryGemmEpilogue(unit, fusion, host))
        return success();
      Value hr = h->getResult(0);
      SmallVector<Value> rest;
      std::vector<std::string> restDests;
      bool heavyYielded = false;
      for (auto [r, d] : llvm::zip(roots, dests)) {
        if (r == hr && !heavyYielded) {
          heavyYielded = true; // written in place (named so in GpuEmitter::run)
          continue;
        }
        rest.push_back(r);
        restDests.push_back(d);
      }
      if (rest.empty() || sameShape(rest)) {
        std::string temps = "0";
        if (!heavyYielded) {
          // The library op's result lives in scratch, before its own scratch.
          names[hr] = "tmp" + std::to_string(unit.index);
          host << "    " << elem(hr) << " *" << name(hr) << " = reinterpret_cast<" << elem(hr)
               << " *>(c.scratch);\n";
          temps = "((" + bytesExpr(hr) + " + 255) & ~255ULL)";
          host << "    c.scratch = static_cast<char *>(c.scratch) + " << temps << ";\n"
               << "    c.scratch_bytes -= std::min<size_t>(c.scratch_bytes, " << temps << ");\n";
        }
        std::string own = "0";
        if (auto conv = dyn_cast<ConvolutionOp>(h))
          own = convScratch(*this, conv);
        unit.scratch = temps + " + " + own;
        emitComment(h, host, "    ");
        if (failed(emitOpCall(h, host)))
          return failure();
        SmallVector<Operation *> epilogue;
        for (Operation *op : ops)
          if (op != h)
            epilogue.push_back(op);
        if (rest.empty())
          return success();
        // The epilogue reads the library op's result from memory.
        SmallVector<Value> leaves = args;
        leaves.push_back(hr);
        return emitPointwise(unit.name + "_epilogue", epilogue, leaves, rest, restDests, device,
                             host);
      }
    }
  }

  // Op by op: intermediates in scratch, yielded values in place.
  llvm::DenseSet<Value> inPlace;
  for (auto [r, res] : llvm::zip(roots, fusion.getResults()))
    if (name(r) == name(res))
      inPlace.insert(r);
  // Temporaries one after another from the scratch's start: `at` runs over
  // them in the code, `sizes` sums them for the layout.
  std::vector<std::string> sizes;
  std::string own = "uint64_t(0)";
  int k = 0;
  host << "    char *scr = static_cast<char *>(c.scratch);\n    uint64_t at = 0;\n"
       << "    (void)scr;\n    (void)at;\n";
  std::string decls, calls;
  llvm::raw_string_ostream callOs(calls);
  for (Operation *op : ops) {
    for (Value r : op->getResults()) {
      if (inPlace.count(r) || isa<ReshapeOp>(op))
        continue;
      names[r] = "tmp" + std::to_string(unit.index) + "_" + std::to_string(k++);
      std::string size = "((" + bytesExpr(r) + " + 255) & ~255ULL)";
      decls += "    " + elem(r) + " *" + name(r) + " = reinterpret_cast<" + elem(r) +
               " *>(scr + at);\n    at += " + size + ";\n";
      sizes.push_back(size);
    }
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      if (inPlace.count(reshape.getResult()))
        callOs << "    " << dialect.memcpyAsync << "(" << name(reshape) << ", "
               << name(reshape.getOperand()) << ", " << bytesExpr(reshape) << ", "
               << dialect.deviceToDevice << ", c.stream);\n";
      else
        names[reshape.getResult()] = name(reshape.getOperand());
      continue;
    }
    emitComment(op, callOs, "    ");
    if (auto conv = dyn_cast<ConvolutionOp>(op))
      own = "std::max<uint64_t>(" + own + ", " + convScratch(*this, conv) + ")";
    if (isPointwise(op) && !isa<BroadcastOp, ExpandOp, TransposeOp, SliceOp, IotaOp>(op)) {
      if (failed(emitOpKernel(unit.name + "_" + std::to_string(k++), op, device, callOs)))
        return failure();
    } else if (failed(emitOpCall(op, callOs))) {
      return failure();
    }
  }
  host << decls
       << "    c.scratch = scr + at;\n"
          "    c.scratch_bytes -= std::min<size_t>(c.scratch_bytes, at);\n"
       << calls;
  // Yielded values not computed in place: arguments, constants, repeats.
  for (auto [r, res] : llvm::zip(roots, fusion.getResults()))
    if (name(r) != name(res))
      host << "    " << dialect.memcpyAsync << "(" << name(res) << ", " << name(r) << ", "
           << bytesExpr(res) << ", " << dialect.deviceToDevice << ", c.stream);\n";
  unit.scratch = (sizes.empty() ? "uint64_t(0)" : llvm::join(sizes, " + ")) + " + " + own;
  return success();
}

LogicalResult GpuEmitter::emitUnit(Unit &unit, llvm::raw_ostream &device, llvm::raw_ostream &host) {
  Operation *op = unit.op;
  bool tooDeep = false;
  op->walk([&](Operation *inner) {
    auto check = [&](Value v) {
      if (auto t = dyn_cast<RankedTensorType>(v.getType()); t && t.getRank() > kMaxRankForIndex)
        tooDeep = true;
    };
    llvm::for_each(inner->getOperands(), check);
    llvm::for_each(inner->getResults(), check);
  });
  if (tooDeep)
    return op->emitError("the CUDA backend handles tensors of rank <= ") << kMaxRankForIndex;

  host << "  // Kernel " << unit.index << ": " << unit.name;
  if (auto fusion = dyn_cast<FusionOp>(op))
    host << " (" << stringifyFusionKind(fusion.getKind()) << ")";
  host << (numStreams > 1 ? " on stream " + std::to_string(unit.stream) : "") << ".\n";
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    for (Operation &inner : fusion.getBody().front().without_terminator())
      emitComment(&inner, host, "  ");
  } else {
    emitComment(op, host, "  ");
  }
  host << "  {\n    Ctx c = ctx(" << unit.stream << ");\n";
  // The library workspace the memory plan gave this kernel in the arena.
  const bool plannedWorkspace = plannedArena && unit.workspace >= 0;
  if (plannedWorkspace)
    host << "    c.lib_workspace = ws + " << unit.workspace << "ULL; // thunder.workspace\n";
  const int callsBefore = libraryCalls;
  for (int64_t w : unit.waits)
    if (units[w].stream != unit.stream)
      host << "    " << dialect.streamWaitEvent << "(c.stream, rt.events[" << units[w].event
           << "], 0);\n";
  LogicalResult result = success();
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    result = emitRegion(unit, fusion, device, host);
  } else if (isPointwise(op) && !isa<BroadcastOp, ExpandOp, TransposeOp, SliceOp, IotaOp>(op)) {
    result = emitOpKernel(unit.name, op, device, host);
  } else {
    if (auto conv = dyn_cast<ConvolutionOp>(op))
      unit.scratch = convScratch(*this, conv);
    result = emitOpCall(op, host);
  }
  if (libraryCalls > callsBefore && !plannedWorkspace)
    streamWorkspaces = true;
  if (unit.recorded)
    host << "    " << dialect.eventRecord << "(rt.events[" << unit.event << "], c.stream);\n";
  host << "  }\n";
  return result;
}

std::string GpuEmitter::unitScratch(Unit &unit) { return unit.scratch; }

} // namespace thunder::gpu
