//===- LibraryCalls.cpp - One table from library op to support-header call ===//
#include "thunder/Target/Common/LibraryCalls.h"

#include "thunder/Target/Common/ArtifactSource.h"
#include "thunder/Target/Common/FusedBody.h"
#include "thunder/Dialect/Thunder/IR/RandomOps.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::thunder;

namespace thunder::codegen {

namespace {
/// The table's writer: one method per op family.
struct CallWriter {
  const CallOperands &v;
  const CallStyle &style;
  llvm::raw_ostream &os;

  std::string name(Value x) const { return v.name(x); }
  std::string dims(Value x) const { return v.shape(x); }
  std::string dim(Value x, unsigned d) const { return v.dim(x, d); }
  int rank(Value x) const { return cast<RankedTensorType>(x.getType()).getRank(); }
  static const char *b(bool x) { return x ? "true" : "false"; }
  /// "int64_t(1) * d0 * d1 ...": the product of x's dims [from, to).
  std::string product(Value x, int from, int to) const {
    std::string p = "int64_t(1)";
    for (int d = from; d < to; ++d)
      p += " * " + dim(x, d);
    return p;
  }
  /// `{a, b, c}` of three window entries: `entry(s)` for the op's spatial
  /// dims, `fill` beyond them. Opens with "}, {" unless first.
  template <class F> void window3(int used, F entry, const std::string &fill, bool first) {
    os << (first ? "" : "}, {");
    for (int s = 0; s < 3; ++s)
      os << (s ? ", " : "") << (s < used ? entry(s) : fill);
  }

  void broadcast(Value in, Value out, ArrayRef<int64_t> dimsList) {
    os << style.indent << "{ const int64_t dims[] = " << i64List(dimsList)
       << "; broadcast_in_dim(" << style.context << name(in) << ", " << dims(in) << ", "
       << rank(in) << ", " << name(out) << ", " << dims(out) << ", " << rank(out)
       << ", dims); }\n";
  }

  void conv(ConvolutionOp x, const std::string &last) {
    int spatial = rank(x) - 2;
    std::string step = std::to_string(style.convUnusedStep);
    os << style.indent << "{ Window w{" << spatial << ", {";
    window3(spatial, [&](int s) { return dim(x.getInput(), s + 2); }, "1", true);
    window3(spatial, [&](int s) { return dim(x, s + 2); }, "1", false);
    window3(spatial, [&](int s) { return dim(x.getWeight(), s + 2); }, "1", false);
    window3(spatial, [&](int s) { return std::to_string(x.getStride()[s]); }, step, false);
    window3(spatial, [&](int s) { return std::to_string(x.getPadding()[2 * s]); }, "0", false);
    window3(spatial, [&](int s) { return std::to_string(x.getDilation()[s]); }, step, false);
    os << "}}" << style.windowBreak << "conv(" << style.context << name(x.getInput()) << ", "
       << name(x.getWeight()) << ", "
       << (x.getBias() ? name(x.getBias()) : "(const " + v.elem(x) + " *)nullptr") << ", "
       << name(x) << ", " << dim(x.getInput(), 0) << ", " << dim(x.getInput(), 1) << ", "
       << dim(x, 1) << ", " << x.getGroups() << ", w, " << last << "); }\n";
  }

  /// `layout`: the pool's layout argument where it is not channels first
  /// (the CPU's ChannelsLast.cpp), written with its channel count; else "".
  template <class Pool> void pool(Pool p, const std::string &layout) {
    int window = p.getKernel().size();
    int first = rank(p) - window;
    SmallVector<int64_t> dilation(window, 1), padHi;
    if constexpr (std::is_same_v<Pool, MaxPoolOp>)
      dilation.assign(p.getDilation().begin(), p.getDilation().end());
    for (int s = 0; s < window; ++s)
      padHi.push_back(p.getPadding()[2 * s + 1]);
    padHi.resize(3, 0);
    auto num = [](int64_t n) { return std::to_string(n); };
    os << style.indent << "{ Window w{" << window << ", {";
    window3(window, [&](int s) { return dim(p.getInput(), first + s); }, "1", true);
    window3(window, [&](int s) { return dim(p, first + s); }, "1", false);
    window3(window, [&](int s) { return num(p.getKernel()[s]); }, "1", false);
    window3(window, [&](int s) { return num(p.getStride()[s]); }, "1", false);
    window3(window, [&](int s) { return num(p.getPadding()[2 * s]); }, "0", false);
    window3(window, [&](int s) { return num(dilation[s]); }, "1", false);
    bool includePad = false;
    if constexpr (std::is_same_v<Pool, AvgPoolOp>)
      includePad = p.getCountIncludePad();
    os << "}}" << style.windowBreak << "const int64_t pad_hi[] = " << i64List(padHi)
       << "; pool(" << style.context << name(p.getInput()) << ", " << name(p) << ", "
       << product(p, 0, first) << ", w, " << b(isa<MaxPoolOp>(p)) << ", " << b(includePad)
       << ", pad_hi";
    if (!layout.empty())
      os << ", " << layout << ", " << dim(p.getInput(), 1);
    os << "); }\n";
  }
};
} // namespace

bool emitLibraryCall(Operation *op, const CallOperands &operands, const CallStyle &style,
                     llvm::function_ref<std::string(ConvolutionOp)> convLast,
                     llvm::raw_ostream &os,
                     llvm::function_ref<std::string(Operation *)> poolLayout) {
  CallWriter w{operands, style, os};
  const char *I = style.indent, *C = style.context;
  auto name = [&](Value x) { return w.name(x); };
  auto dims = [&](Value x) { return w.dims(x); };
  auto rank = [&](Value x) { return w.rank(x); };
  auto b = CallWriter::b;
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](BroadcastOp x) {
        w.broadcast(x.getOperand(), x, x.getBroadcastDims());
        return true;
      })
      .Case([&](ExpandOp x) {
        // Expand puts the operand's dims last.
        SmallVector<int64_t> d;
        for (int64_t i = 0, offset = rank(x) - rank(x.getOperand()); i < rank(x.getOperand()); ++i)
          d.push_back(offset + i);
        w.broadcast(x.getOperand(), x, d);
        return true;
      })
      .Case([&](TransposeOp t) {
        os << I << "{ const int64_t perm[] = " << i64List(t.getPermutation()) << "; transpose("
           << C << name(t.getOperand()) << ", " << dims(t.getOperand()) << ", " << rank(t)
           << ", perm, " << name(t) << "); }\n";
        return true;
      })
      .Case([&](SliceOp s) {
        os << I << "{ const int64_t start[] = " << i64List(s.getStart())
           << "; const int64_t step[] = " << i64List(s.getStep()) << "; slice(" << C
           << name(s.getOperand()) << ", " << dims(s.getOperand()) << ", " << rank(s)
           << ", start, step, " << name(s) << ", " << dims(s) << "); }\n";
        return true;
      })
      .Case([&](ConcatOp x) {
        os << I << "{ const " << operands.elem(x) << " *ins[] = {";
        for (auto [i, v] : llvm::enumerate(x.getInputs()))
          os << (i ? ", " : "") << name(v);
        os << "}; const int64_t *shapes[] = {";
        for (auto [i, v] : llvm::enumerate(x.getInputs()))
          os << (i ? ", " : "") << dims(v);
        os << "}; concat(" << C << "ins, shapes, " << x.getInputs().size() << ", " << rank(x)
           << ", " << x.getDim() << ", " << name(x) << ", " << dims(x) << "); }\n";
        return true;
      })
      .Case([&](PadOp p) {
        os << I << "{ const int64_t low[] = " << i64List(p.getLow()) << "; pad(" << C
           << name(p.getOperand()) << ", " << dims(p.getOperand()) << ", " << rank(p)
           << ", low, st<" << operands.elem(p) << ">("
           << doubleLiteral(p.getValue().convertToDouble()) << "), " << name(p) << ", "
           << dims(p) << "); }\n";
        return true;
      })
      .Case([&](IotaOp i) {
        os << I << "iota(" << C << name(i) << ", " << dims(i) << ", " << rank(i) << ", "
           << i.getDim() << ");\n";
        return true;
      })
      .Case([&](RandomOp r) {
        // The run's key travels in the host's sym[] after the dynamic sizes
        // (kRngSeed, kRngOffset: every backend's host program defines them).
        Type element = r.getType().getElementType();
        unsigned digits = 0;
        if (auto f = dyn_cast<FloatType>(element))
          digits = llvm::APFloat::semanticsPrecision(f.getFloatSemantics());
        os << I << "draw_random(" << C << name(r) << ", " << operands.numel(r) << ", "
           << static_cast<int>(r.getDistribution()) << ", " << digits
           << ", sym[kRngSeed], sym[kRngOffset], " << r.getStream() << ");\n";
        return true;
      })
      .Case([&](GatherOp g) {
        os << I << "gather(" << C << name(g.getInput()) << ", " << dims(g.getInput()) << ", "
           << rank(g) << ", " << g.getDim() << ", " << name(g.getIndex()) << ", "
           << dims(g.getIndex()) << ", " << name(g) << ");\n";
        return true;
      })
      .Case([&](IndexSelectOp s) {
        os << I << "index_select(" << C << name(s.getInput()) << ", " << dims(s.getInput())
           << ", " << rank(s) << ", " << s.getDim() << ", " << name(s.getIndex()) << ", "
           << operands.numel(s.getIndex()) << ", " << name(s) << ");\n";
        return true;
      })
      .Case([&](EmbeddingOp x) {
        os << I << "index_select(" << C << name(x.getWeight()) << ", " << dims(x.getWeight())
           << ", 2, 0, " << name(x.getIndices()) << ", " << operands.numel(x.getIndices())
           << ", " << name(x) << ");\n";
        return true;
      })
      .Case([&](ReductionOpInterface r) {
        const char *kind = isa<SumOp>(op)    ? "Sum"
                           : isa<MeanOp>(op) ? "Mean"
                           : isa<MaxOp>(op)  ? "Max"
                           : isa<MinOp>(op)  ? "Min"
                                             : "Prod";
        SmallVector<int64_t> flags(rank(r.getInput()), 0);
        for (int64_t d : r.getDims())
          flags[d] = 1;
        os << I << "{ const int reduced[] = {";
        for (auto [i, f] : llvm::enumerate(flags))
          os << (i ? ", " : "") << f;
        os << (flags.empty() ? "0" : "") << "}; reduce(" << C << name(r.getInput()) << ", "
           << dims(r.getInput()) << ", " << rank(r.getInput()) << ", reduced, Reduce::" << kind
           << ", " << name(op->getResult(0)) << "); }\n";
        return true;
      })
      .Case<ArgMaxOp, ArgMinOp>([&](auto r) {
        os << I << "arg_reduce(" << C << name(r.getInput()) << ", " << dims(r.getInput())
           << ", " << rank(r.getInput()) << ", " << r.getDim() << ", " << b(isa<ArgMaxOp>(r))
           << ", " << name(r) << ");\n";
        return true;
      })
      .Case([&](CumsumOp x) {
        os << I << "cumsum(" << C << name(x.getInput()) << ", " << dims(x) << ", " << rank(x)
           << ", " << x.getDim() << ", " << name(x) << ");\n";
        return true;
      })
      .Case([&](ArgSortOp x) {
        os << I << "argsort(" << C << name(x.getInput()) << ", " << dims(x.getInput()) << ", "
           << rank(x) << ", " << x.getDim() << ", " << b(x.getDescending()) << ", " << name(x)
           << ");\n";
        return true;
      })
      .Case([&](ScatterOp x) {
        // Scatter's enum order is that of ScatterOp's reduce names.
        int reduce = llvm::StringSwitch<int>(x.getReduce())
                         .Case("sum", 1)
                         .Case("prod", 2)
                         .Case("amax", 3)
                         .Case("amin", 4)
                         .Case("mean", 5)
                         .Default(0);
        os << I << "scatter(" << C << name(x.getInput()) << ", " << dims(x.getInput()) << ", "
           << rank(x) << ", " << x.getDim() << ", " << name(x.getIndex()) << ", "
           << dims(x.getIndex()) << ", " << name(x.getSrc()) << ", " << dims(x.getSrc()) << ", "
           << reduce << ", " << b(x.getIncludeSelf()) << ", " << name(x) << ");\n";
        return true;
      })
      .Case([&](MatmulOp m) {
        os << I << "matmul(" << C << matmulArgs(m, operands, name(m)) << ");\n";
        return true;
      })
      .Case([&](ConvolutionOp x) {
        w.conv(x, convLast(x));
        return true;
      })
      .Case<MaxPoolOp, AvgPoolOp>([&](auto p) {
        w.pool(p, poolLayout ? poolLayout(p) : std::string());
        return true;
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto s) {
        os << I << "softmax(" << C << name(s.getInput()) << ", " << dims(s) << ", " << rank(s)
           << ", " << s.getDim() << ", " << b(isa<LogSoftmaxOp>(s)) << ", " << name(s)
           << ");\n";
        return true;
      })
      .Case<LayerNormOp, RmsNormOp>([&](auto n) {
        int64_t normalized = n.getNormalizedRank();
        std::string null = "(const " + operands.elem(n) + " *)nullptr";
        std::string bias = null;
        if constexpr (std::is_same_v<decltype(n), LayerNormOp>)
          if (n.getBias())
            bias = name(n.getBias());
        os << I << "norm(" << C << name(n.getInput()) << ", "
           << (n.getWeight() ? name(n.getWeight()) : null) << ", " << bias << ", " << name(n)
           << ", " << w.product(n, 0, rank(n) - normalized) << ", "
           << w.product(n, rank(n) - normalized, rank(n)) << ", "
           << doubleLiteral(n.getEpsilon().convertToDouble()) << ", " << b(isa<RmsNormOp>(n))
           << ");\n";
        return true;
      })
      .Case([&](BatchNormOp x) {
        std::string null = "(const " + operands.elem(x) + " *)nullptr";
        os << I << "batch_norm(" << C << name(x.getInput()) << ", " << name(x.getMean())
           << ", " << name(x.getVariance()) << ", "
           << (x.getWeight() ? name(x.getWeight()) : null) << ", "
           << (x.getBias() ? name(x.getBias()) : null) << ", " << name(x) << ", "
           << w.dim(x, 0) << ", " << w.dim(x, 1) << ", " << w.product(x, 2, rank(x)) << ", "
           << doubleLiteral(x.getEpsilon().convertToDouble()) << ");\n";
        return true;
      })
      .Default([](Operation *) { return false; });
}

std::string matmulArgs(MatmulOp m, const CallOperands &v, const std::string &out) {
  Value lhs = m.getLhs(), rhs = m.getRhs();
  int lr = cast<RankedTensorType>(lhs.getType()).getRank();
  int rr = cast<RankedTensorType>(rhs.getType()).getRank();
  auto b = [](bool x) -> std::string { return x ? "true" : "false"; };
  std::string batch = "int64_t(1)";
  for (int d = 0; d < lr - 2; ++d)
    batch += " * " + v.dim(lhs, d);
  return v.name(lhs) + ", " + v.name(rhs) + ", " + out + ", " + batch + ", " +
         v.dim(lhs, m.getTransposeLhs() ? lr - 1 : lr - 2) + ", " +
         v.dim(rhs, m.getTransposeRhs() ? rr - 2 : rr - 1) + ", " +
         v.dim(lhs, m.getTransposeLhs() ? lr - 2 : lr - 1) + ", " + b(m.getTransposeLhs()) +
         ", " + b(m.getTransposeRhs()) + ", " + b(rr == 2 && lr > 2);
}

FailureOr<std::string> attentionArgs(ScaledDotProductAttentionOp a, const CallOperands &v) {
  Value q = a.getQuery(), k = a.getKey(), val = a.getValue();
  auto type = cast<RankedTensorType>(q.getType());
  int r = type.getRank();
  if (!a.getScale() && type.isDynamicDim(r - 1))
    return a.emitError("a dynamic head dim needs an explicit scale");
  double scale = a.getScale() ? a.getScale()->convertToDouble()
                              : 1.0 / std::sqrt(double(type.getDimSize(r - 1)));
  std::string batch = "int64_t(1)";
  for (int d = 0; d < r - 2; ++d)
    batch += " * " + v.dim(q, d);
  return v.name(q) + ", " + v.name(k) + ", " + v.name(val) + ", " + v.name(a) + ", " + batch +
         ", " + v.dim(q, r - 2) + ", " + v.dim(k, r - 2) + ", " + v.dim(q, r - 1) + ", " +
         v.dim(val, r - 1) + ", " + doubleLiteral(scale) + ", " + (a.getCausal() ? "true" : "false");
}

} // namespace thunder::codegen
