//===- EmitKernels.cpp - The CPU kernel of each library op ----------------===//
//
// The single-op kernels (data movement, GEMM, convolution, pooling,
// reductions over any dims, composites left whole, attention) as calls into
// thunder_cpu.h. Each is preceded by the op and its source line. Pointwise
// and row-reduction kernels are generated loops (EmitFusion.cpp).
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::thunder;
using ::thunder::EmittedSources;
using ::thunder::PlanDim;
using ::thunder::ShapePlan;
using ::thunder::SymbolDef;
using ::thunder::TargetOptions;
using ::thunder::ToolchainCommand;

namespace thunder::cpu {

LogicalResult Emitter::emitOp(Operation *op, llvm::raw_ostream &os) {
  {
    std::string text;
    llvm::raw_string_ostream line(text);
    OpPrintingFlags flags;
    flags.elideLargeElementsAttrs(8).elideLargeResourceString(8);
    op->print(line, flags);
    std::string where = sourceOf(op->getLoc());
    os << "  // " << llvm::StringRef(text).split('\n').first;
    if (!where.empty())
      os << "\n  //   at " << where;
    os << "\n";
  }
  auto dims = [&](Value v) { return shape(v); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ConstantOp) { return success(); }) // laid out up front
      .Case([&](ReshapeOp r) {
        // A view: same bytes, new shape.
        os << "  // (a view of " << name(r.getOperand()) << ")\n";
        return success();
      })
      .Case([&](BroadcastOp b) {
        os << "  { const int64_t dims[] = " << i64List(b.getBroadcastDims())
           << "; broadcast_in_dim(" << name(b.getOperand()) << ", "
           << dims(b.getOperand()) << ", " << rank(b.getOperand()) << ", "
           << name(b) << ", " << dims(b) << ", " << rank(b) << ", dims); }\n";
        return success();
      })
      .Case([&](ExpandOp e) {
        int64_t offset = rank(e) - rank(e.getOperand());
        SmallVector<int64_t> d;
        for (int64_t i = 0; i < rank(e.getOperand()); ++i)
          d.push_back(offset + i);
        os << "  { const int64_t dims[] = " << i64List(d) << "; broadcast_in_dim("
           << name(e.getOperand()) << ", " << dims(e.getOperand()) << ", "
           << rank(e.getOperand()) << ", " << name(e) << ", " << dims(e) << ", "
           << rank(e) << ", dims); }\n";
        return success();
      })
      .Case([&](TransposeOp t) {
        os << "  { const int64_t perm[] = " << i64List(t.getPermutation())
           << "; transpose(" << name(t.getOperand()) << ", "
           << dims(t.getOperand()) << ", " << rank(t) << ", perm, " << name(t)
           << "); }\n";
        return success();
      })
      .Case([&](SliceOp s) {
        os << "  { const int64_t start[] = " << i64List(s.getStart())
           << "; const int64_t step[] = " << i64List(s.getStep()) << "; slice("
           << name(s.getOperand()) << ", " << dims(s.getOperand()) << ", "
           << rank(s) << ", start, step, " << name(s) << ", " << dims(s)
           << "); }\n";
        return success();
      })
      .Case([&](ConcatOp c) {
        os << "  { const " << elem(c) << " *ins[] = {";
        for (auto [i, v] : llvm::enumerate(c.getInputs()))
          os << (i ? ", " : "") << name(v);
        os << "}; const int64_t *shapes[] = {";
        for (auto [i, v] : llvm::enumerate(c.getInputs()))
          os << (i ? ", " : "") << dims(v);
        os << "}; concat(ins, shapes, " << c.getInputs().size() << ", "
           << rank(c) << ", " << c.getDim() << ", " << name(c) << ", " << dims(c)
           << "); }\n";
        return success();
      })
      .Case([&](PadOp p) {
        os << "  { const int64_t low[] = " << i64List(p.getLow()) << "; pad("
           << name(p.getOperand()) << ", " << dims(p.getOperand()) << ", "
           << rank(p) << ", low, st<" << elem(p) << ">("
           << doubleLiteral(p.getValue().convertToDouble()) << "), " << name(p)
           << ", " << dims(p) << "); }\n";
        return success();
      })
      .Case([&](IotaOp i) {
        os << "  iota(" << name(i) << ", " << dims(i) << ", " << rank(i) << ", "
           << i.getDim() << ");\n";
        return success();
      })
      .Case([&](GatherOp g) {
        os << "  gather(" << name(g.getInput()) << ", " << dims(g.getInput())
           << ", " << rank(g) << ", " << g.getDim() << ", " << name(g.getIndex())
           << ", " << dims(g.getIndex()) << ", " << name(g) << ");\n";
        return success();
      })
      .Case([&](IndexSelectOp s) {
        os << "  index_select(" << name(s.getInput()) << ", "
           << dims(s.getInput()) << ", " << rank(s) << ", " << s.getDim() << ", "
           << name(s.getIndex()) << ", " << numelExpr(s.getIndex()) << ", "
           << name(s) << ");\n";
        return success();
      })
      .Case([&](EmbeddingOp e) {
        os << "  index_select(" << name(e.getWeight()) << ", "
           << dims(e.getWeight()) << ", 2, 0, " << name(e.getIndices()) << ", "
           << numelExpr(e.getIndices()) << ", " << name(e) << ");\n";
        return success();
      })
      .Case<SumOp, MeanOp, MaxOp, MinOp, ProdOp>([&](auto r) {
        const char *kind = isa<SumOp>(r)    ? "Sum"
                           : isa<MeanOp>(r) ? "Mean"
                           : isa<MaxOp>(r)  ? "Max"
                           : isa<MinOp>(r)  ? "Min"
                                            : "Prod";
        SmallVector<int64_t> flags(rank(r.getInput()), 0);
        for (int64_t d : r.getDims())
          flags[d] = 1;
        os << "  { const int reduced[] = {";
        for (auto [i, f] : llvm::enumerate(flags))
          os << (i ? ", " : "") << f;
        os << (flags.empty() ? "0" : "") << "}; reduce(" << name(r.getInput())
           << ", " << dims(r.getInput()) << ", " << rank(r.getInput())
           << ", reduced, Reduce::" << kind << ", " << name(r) << "); }\n";
        return success();
      })
      .Case<ArgMaxOp, ArgMinOp>([&](auto r) {
        os << "  arg_reduce(" << name(r.getInput()) << ", " << dims(r.getInput())
           << ", " << rank(r.getInput()) << ", " << r.getDim() << ", "
           << (isa<ArgMaxOp>(r) ? "true" : "false") << ", " << name(r) << ");\n";
        return success();
      })
      .Case([&](CumsumOp c) {
        os << "  cumsum(" << name(c.getInput()) << ", " << dims(c) << ", "
           << rank(c) << ", " << c.getDim() << ", " << name(c) << ");\n";
        return success();
      })
      .Case([&](MatmulOp m) {
        Value lhs = m.getLhs(), rhs = m.getRhs();
        int lr = rank(lhs), rr = rank(rhs);
        std::string batch = "int64_t(1)";
        for (int d = 0; d < lr - 2; ++d)
          batch += " * " + dimExpr(lhs, d);
        std::string mDim = dimExpr(lhs, m.getTransposeLhs() ? lr - 1 : lr - 2);
        std::string kDim = dimExpr(lhs, m.getTransposeLhs() ? lr - 2 : lr - 1);
        std::string nDim = dimExpr(rhs, m.getTransposeRhs() ? rr - 2 : rr - 1);
        bool shared = rr == 2 && lr > 2;
        os << "  matmul(" << name(lhs) << ", " << name(rhs) << ", " << name(m)
           << ", " << batch << ", " << mDim << ", " << nDim << ", " << kDim
           << ", " << (m.getTransposeLhs() ? "true" : "false") << ", "
           << (m.getTransposeRhs() ? "true" : "false") << ", "
           << (shared ? "true" : "false") << ");\n";
        return success();
      })
      .Case([&](ConvolutionOp c) {
        // Whether the weights are a thunder.constant (through the kernel's
        // block arguments and views), which lives as long as the model: then
        // conv reorders them for oneDNN once and keeps the copy.
        auto isConstant = [](Value v) {
          while (true) {
            if (auto arg = dyn_cast<BlockArgument>(v)) {
              auto fusion = dyn_cast_or_null<FusionOp>(arg.getOwner()->getParentOp());
              if (!fusion)
                return false;
              v = fusion.getInputs()[arg.getArgNumber()];
            } else if (auto r = dyn_cast_or_null<ReshapeOp>(v.getDefiningOp())) {
              v = r.getOperand();
            } else {
              return isa_and_nonnull<ConstantOp>(v.getDefiningOp());
            }
          }
        };
        int spatial = rank(c) - 2;
        os << "  { Window w{" << spatial << ", {";
        for (int s = 0; s < 3; ++s)
          os << (s ? ", " : "") << (s < spatial ? dimExpr(c.getInput(), s + 2) : "1");
        os << "}, {";
        for (int s = 0; s < 3; ++s)
          os << (s ? ", " : "") << (s < spatial ? dimExpr(c, s + 2) : "1");
        os << "}, {";
        for (int s = 0; s < 3; ++s)
          os << (s ? ", " : "") << (s < spatial ? dimExpr(c.getWeight(), s + 2) : "1");
        auto list = [&](ArrayRef<int64_t> v, int stride, int at) {
          os << "}, {";
          for (int s = 0; s < 3; ++s)
            os << (s ? ", " : "") << (s < spatial ? v[s * stride + at] : 0);
        };
        list(c.getStride(), 1, 0);
        list(c.getPadding(), 2, 0);
        list(c.getDilation(), 1, 0);
        os << "}}; conv(" << name(c.getInput()) << ", " << name(c.getWeight())
           << ", " << (c.getBias() ? name(c.getBias()) : "(const " + elem(c) + " *)nullptr")
           << ", " << name(c) << ", " << dimExpr(c.getInput(), 0) << ", "
           << dimExpr(c.getInput(), 1) << ", " << dimExpr(c, 1) << ", "
           << c.getGroups() << ", w, " << (isConstant(c.getWeight()) ? "true" : "false")
           << "); }\n";
        return success();
      })
      .Case<MaxPoolOp, AvgPoolOp>([&](auto p) {
        int window = p.getKernel().size();
        int first = rank(p) - window;
        std::string planes = "int64_t(1)";
        for (int d = 0; d < first; ++d)
          planes += " * " + dimExpr(p, d);
        SmallVector<int64_t> dilation(window, 1), padHi;
        if constexpr (std::is_same_v<decltype(p), MaxPoolOp>)
          dilation.assign(p.getDilation().begin(), p.getDilation().end());
        for (int s = 0; s < window; ++s)
          padHi.push_back(p.getPadding()[2 * s + 1]);
        padHi.resize(3, 0);
        os << "  { Window w{" << window << ", {";
        for (int s = 0; s < 3; ++s)
          os << (s ? ", " : "") << (s < window ? dimExpr(p.getInput(), first + s) : "1");
        os << "}, {";
        for (int s = 0; s < 3; ++s)
          os << (s ? ", " : "") << (s < window ? dimExpr(p, first + s) : "1");
        os << "}, {";
        for (int s = 0; s < 3; ++s)
          os << (s ? ", " : "") << (s < window ? p.getKernel()[s] : 1);
        os << "}, {";
        for (int s = 0; s < 3; ++s)
          os << (s ? ", " : "") << (s < window ? p.getStride()[s] : 1);
        os << "}, {";
        for (int s = 0; s < 3; ++s)
          os << (s ? ", " : "") << (s < window ? p.getPadding()[2 * s] : 0);
        os << "}, {";
        for (int s = 0; s < 3; ++s)
          os << (s ? ", " : "") << (s < window ? dilation[s] : 1);
        bool isMax = isa<MaxPoolOp>(p);
        bool includePad = false;
        if constexpr (std::is_same_v<decltype(p), AvgPoolOp>)
          includePad = p.getCountIncludePad();
        os << "}}; const int64_t pad_hi[] = " << i64List(padHi) << "; pool("
           << name(p.getInput()) << ", " << name(p) << ", " << planes << ", w, "
           << (isMax ? "true" : "false") << ", " << (includePad ? "true" : "false")
           << ", pad_hi); }\n";
        return success();
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto s) {
        os << "  softmax(" << name(s.getInput()) << ", " << dims(s) << ", "
           << rank(s) << ", " << s.getDim() << ", "
           << (isa<LogSoftmaxOp>(s) ? "true" : "false") << ", " << name(s) << ");\n";
        return success();
      })
      .Case<LayerNormOp, RmsNormOp>([&](auto n) {
        int64_t normalized = n.getNormalizedRank();
        std::string row = "int64_t(1)", rows = "int64_t(1)";
        for (int d = 0; d < rank(n); ++d)
          (d >= rank(n) - normalized ? row : rows) += " * " + dimExpr(n, d);
        std::string null = "(const " + elem(n) + " *)nullptr";
        std::string bias = null;
        if constexpr (std::is_same_v<decltype(n), LayerNormOp>)
          if (n.getBias())
            bias = name(n.getBias());
        os << "  norm(" << name(n.getInput()) << ", "
           << (n.getWeight() ? name(n.getWeight()) : null) << ", " << bias
           << ", " << name(n) << ", " << rows << ", " << row << ", "
           << doubleLiteral(n.getEpsilon().convertToDouble()) << ", "
           << (isa<RmsNormOp>(n) ? "true" : "false") << ");\n";
        return success();
      })
      .Case([&](BatchNormOp b) {
        std::string rest = "int64_t(1)";
        for (int d = 2; d < rank(b); ++d)
          rest += " * " + dimExpr(b, d);
        std::string null = "(const " + elem(b) + " *)nullptr";
        os << "  batch_norm(" << name(b.getInput()) << ", " << name(b.getMean())
           << ", " << name(b.getVariance()) << ", "
           << (b.getWeight() ? name(b.getWeight()) : null) << ", "
           << (b.getBias() ? name(b.getBias()) : null) << ", " << name(b) << ", "
           << dimExpr(b, 0) << ", " << dimExpr(b, 1) << ", " << rest << ", "
           << doubleLiteral(b.getEpsilon().convertToDouble()) << ");\n";
        return success();
      })
      .Case([&](ScaledDotProductAttentionOp a) -> LogicalResult {
        Value q = a.getQuery(), k = a.getKey(), v = a.getValue();
        int r = rank(q);
        std::string batch = "int64_t(1)";
        for (int d = 0; d < r - 2; ++d)
          batch += " * " + dimExpr(q, d);
        double scale = a.getScale() ? a.getScale()->convertToDouble()
                                    : 1.0 / std::sqrt(double(typeOf(q).getDimSize(r - 1)));
        if (!a.getScale() && typeOf(q).isDynamicDim(r - 1))
          return a.emitError("a dynamic head dim needs an explicit scale");
        os << "  {\n";
        std::string mask = "[](double s, int64_t, int64_t, int64_t) { return s; }";
        if (Value m = a.getMask()) {
          // The mask broadcasts over [batch..., L, S]: strides are 0 where
          // its dim is 1.
          os << "    int64_t mstr[" << r << "]; strides_of(" << dims(m) << ", "
             << r << ", mstr);\n";
          for (int d = 0; d < r; ++d)
            os << "    if (" << dims(m) << "[" << d << "] == 1) mstr[" << d
               << "] = 0;\n";
          os << "    const " << elem(m) << " *mask = " << name(m) << ";\n";
          std::string batchIndex;
          os << "    auto mask_at = [&](double s, int64_t b, int64_t i, int64_t j) {\n"
             << "      int64_t off = i * mstr[" << r - 2 << "] + j * mstr[" << r - 1
             << "];\n";
          for (int d = r - 3; d >= 0; --d)
            os << "      off += (b % " << dimExpr(q, d) << ") * mstr[" << d
               << "]; b /= " << dimExpr(q, d) << ";\n";
          if (typeOf(m).getElementType().isInteger(1))
            os << "      return mask[off] ? s : -std::numeric_limits<double>::infinity();\n";
          else
            os << "      return s + static_cast<double>(cv(mask[off]));\n";
          os << "    };\n";
          mask = "mask_at";
        }
        os << "    sdpa(" << name(q) << ", " << name(k) << ", " << name(v) << ", "
           << name(a) << ", " << batch << ", " << dimExpr(q, r - 2) << ", "
           << dimExpr(k, r - 2) << ", " << dimExpr(q, r - 1) << ", "
           << dimExpr(v, r - 1) << ", " << doubleLiteral(scale) << ", "
           << (a.getCausal() ? "true" : "false") << ", " << mask << ");\n  }\n";
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitError("the CPU backend has no kernel for this op");
      });
}

} // namespace thunder::cpu
