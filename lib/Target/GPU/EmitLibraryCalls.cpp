//===- EmitLibraryCalls.cpp - A GPU library call or header kernel per op --===//
//
// Ops that are not generated per element call the support headers: GEMMs
// and convolutions through the vendor libraries (cuBLASLt, cuDNN) or the
// header's own kernels, attention, normalizations, pooling, gathers and the
// data movement ops.
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
// Library ops and data movement: calls into the support header
//===----------------------------------------------------------------------===//

bool isLtType(Type t) { return t.isF32() || t.isF64() || t.isF16() || t.isBF16(); }

/// Whether a convolution goes through cuDNN: a type cuDNN has (cuBLASLt's
/// four) and the same padding on both sides of every spatial dim (what its
/// convolution descriptor holds).
static bool usesDnn(GpuEmitter &e, ConvolutionOp c) {
  ArrayRef<int64_t> pad = c.getPadding();
  for (size_t s = 0; s + 1 < pad.size(); s += 2)
    if (pad[s] != pad[s + 1])
      return false;
  return isLtType(e.typeOf(c).getElementType());
}

/// The im2col bytes a convolution needs (0 for cuDNN's, grouped, 1x1
/// unit-stride unpadded, or non-cuBLASLt types), as a C expression.
std::string convScratch(GpuEmitter &e, ConvolutionOp c) {
  Type t = e.typeOf(c).getElementType();
  if (usesDnn(e, c) || c.getGroups() != 1 || !isLtType(t))
    return "0";
  bool pointwise = true;
  int spatial = e.rank(c) - 2;
  for (int s = 0; s < spatial; ++s)
    pointwise = pointwise && e.typeOf(c.getWeight()).getDimSize(s + 2) == 1 &&
                c.getStride()[s] == 1 && c.getPadding()[2 * s] == 0 &&
                c.getPadding()[2 * s + 1] == 0;
  if (pointwise)
    return "0";
  std::string bytes = "uint64_t(" + e.dimExpr(c.getInput(), 0) + " * " + e.dimExpr(c.getInput(), 1);
  for (int s = 0; s < spatial; ++s)
    bytes += " * " + e.dimExpr(c.getWeight(), s + 2) + " * " + e.dimExpr(c, s + 2);
  return "((" + bytes + ") * " + std::to_string(elementBytes(t)) + "ULL + 255) & ~255ULL)";
}

LogicalResult GpuEmitter::emitOpCall(Operation *op, llvm::raw_ostream &os) {
  auto dims = [&](Value v) { return shape(v); };
  auto b = [](bool v) { return v ? "true" : "false"; };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ConstantOp) { return success(); })
      .Case([&](ReshapeOp r) {
        os << "    // (a view of " << name(r.getOperand()) << ")\n";
        return success();
      })
      .Case([&](BroadcastOp x) {
        os << "    { const int64_t dims[] = " << i64List(x.getBroadcastDims())
           << "; broadcast_in_dim(c, " << name(x.getOperand()) << ", " << dims(x.getOperand())
           << ", " << rank(x.getOperand()) << ", " << name(x) << ", " << dims(x) << ", "
           << rank(x) << ", dims); }\n";
        return success();
      })
      .Case([&](ExpandOp x) {
        int64_t offset = rank(x) - rank(x.getOperand());
        SmallVector<int64_t> d;
        for (int64_t i = 0; i < rank(x.getOperand()); ++i)
          d.push_back(offset + i);
        os << "    { const int64_t dims[] = " << i64List(d) << "; broadcast_in_dim(c, "
           << name(x.getOperand()) << ", " << dims(x.getOperand()) << ", "
           << rank(x.getOperand()) << ", " << name(x) << ", " << dims(x) << ", " << rank(x)
           << ", dims); }\n";
        return success();
      })
      .Case([&](TransposeOp t) {
        os << "    { const int64_t perm[] = " << i64List(t.getPermutation()) << "; transpose(c, "
           << name(t.getOperand()) << ", " << dims(t.getOperand()) << ", " << rank(t)
           << ", perm, " << name(t) << "); }\n";
        return success();
      })
      .Case([&](SliceOp s) {
        os << "    { const int64_t start[] = " << i64List(s.getStart())
           << "; const int64_t step[] = " << i64List(s.getStep()) << "; slice(c, "
           << name(s.getOperand()) << ", " << dims(s.getOperand()) << ", " << rank(s)
           << ", start, step, " << name(s) << ", " << dims(s) << "); }\n";
        return success();
      })
      .Case([&](ConcatOp x) {
        os << "    { const " << elem(x) << " *ins[] = {";
        for (auto [i, v] : llvm::enumerate(x.getInputs()))
          os << (i ? ", " : "") << name(v);
        os << "}; const int64_t *shapes[] = {";
        for (auto [i, v] : llvm::enumerate(x.getInputs()))
          os << (i ? ", " : "") << dims(v);
        os << "}; concat(c, ins, shapes, " << x.getInputs().size() << ", " << rank(x) << ", "
           << x.getDim() << ", " << name(x) << ", " << dims(x) << "); }\n";
        return success();
      })
      .Case([&](PadOp p) {
        os << "    { const int64_t low[] = " << i64List(p.getLow()) << "; pad(c, "
           << name(p.getOperand()) << ", " << dims(p.getOperand()) << ", " << rank(p)
           << ", low, st<" << elem(p) << ">(" << doubleLiteral(p.getValue().convertToDouble())
           << "), " << name(p) << ", " << dims(p) << "); }\n";
        return success();
      })
      .Case([&](IotaOp i) {
        os << "    iota(c, " << name(i) << ", " << dims(i) << ", " << rank(i) << ", "
           << i.getDim() << ");\n";
        return success();
      })
      .Case([&](GatherOp g) {
        os << "    gather(c, " << name(g.getInput()) << ", " << dims(g.getInput()) << ", "
           << rank(g) << ", " << g.getDim() << ", " << name(g.getIndex()) << ", "
           << dims(g.getIndex()) << ", " << name(g) << ");\n";
        return success();
      })
      .Case([&](IndexSelectOp s) {
        os << "    index_select(c, " << name(s.getInput()) << ", " << dims(s.getInput()) << ", "
           << rank(s) << ", " << s.getDim() << ", " << name(s.getIndex()) << ", "
           << numelExpr(s.getIndex()) << ", " << name(s) << ");\n";
        return success();
      })
      .Case([&](EmbeddingOp x) {
        os << "    index_select(c, " << name(x.getWeight()) << ", " << dims(x.getWeight())
           << ", 2, 0, " << name(x.getIndices()) << ", " << numelExpr(x.getIndices()) << ", "
           << name(x) << ");\n";
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
        os << "    { const int reduced[] = {";
        for (auto [i, f] : llvm::enumerate(flags))
          os << (i ? ", " : "") << f;
        os << (flags.empty() ? "0" : "") << "}; reduce(c, " << name(r.getInput()) << ", "
           << dims(r.getInput()) << ", " << rank(r.getInput()) << ", reduced, Reduce::" << kind
           << ", " << name(r) << "); }\n";
        return success();
      })
      .Case<ArgMaxOp, ArgMinOp>([&](auto r) {
        os << "    arg_reduce(c, " << name(r.getInput()) << ", " << dims(r.getInput()) << ", "
           << rank(r.getInput()) << ", " << r.getDim() << ", " << b(isa<ArgMaxOp>(r)) << ", "
           << name(r) << ");\n";
        return success();
      })
      .Case([&](CumsumOp x) {
        os << "    cumsum(c, " << name(x.getInput()) << ", " << dims(x) << ", " << rank(x)
           << ", " << x.getDim() << ", " << name(x) << ");\n";
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
        needsLt |= isLtType(typeOf(m).getElementType());
        ++libraryCalls;
        os << "    matmul(c, " << name(lhs) << ", " << name(rhs) << ", " << name(m) << ", "
           << batch << ", " << mDim << ", " << nDim << ", " << kDim << ", "
           << b(m.getTransposeLhs()) << ", " << b(m.getTransposeRhs()) << ", "
           << b(rr == 2 && lr > 2) << ");\n";
        return success();
      })
      .Case([&](ConvolutionOp x) {
        int spatial = rank(x) - 2;
        bool dnn = usesDnn(*this, x);
        needsDnn |= dnn;
        needsLt |= !dnn && x.getGroups() == 1 && isLtType(typeOf(x).getElementType());
        ++libraryCalls;
        os << "    { Window w{" << spatial << ", {";
        for (int s = 0; s < 3; ++s)
          os << (s ? ", " : "") << (s < spatial ? dimExpr(x.getInput(), s + 2) : "1");
        os << "}, {";
        for (int s = 0; s < 3; ++s)
          os << (s ? ", " : "") << (s < spatial ? dimExpr(x, s + 2) : "1");
        os << "}, {";
        for (int s = 0; s < 3; ++s)
          os << (s ? ", " : "") << (s < spatial ? dimExpr(x.getWeight(), s + 2) : "1");
        auto list = [&](ArrayRef<int64_t> v, int stride) {
          os << "}, {";
          for (int s = 0; s < 3; ++s)
            os << (s ? ", " : "") << (s < spatial ? v[s * stride] : (stride == 2 ? 0 : 1));
        };
        list(x.getStride(), 1);
        list(x.getPadding(), 2);
        list(x.getDilation(), 1);
        os << "}};\n      conv(c, " << name(x.getInput()) << ", " << name(x.getWeight()) << ", "
           << (x.getBias() ? name(x.getBias()) : "(const " + elem(x) + " *)nullptr") << ", "
           << name(x) << ", " << dimExpr(x.getInput(), 0) << ", " << dimExpr(x.getInput(), 1)
           << ", " << dimExpr(x, 1) << ", " << x.getGroups() << ", w, " << b(dnn) << "); }\n";
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
        os << "    { Window w{" << window << ", {";
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
        bool includePad = false;
        if constexpr (std::is_same_v<decltype(p), AvgPoolOp>)
          includePad = p.getCountIncludePad();
        os << "}};\n      const int64_t pad_hi[] = " << i64List(padHi) << "; pool(c, "
           << name(p.getInput()) << ", " << name(p) << ", " << planes << ", w, "
           << b(isa<MaxPoolOp>(p)) << ", " << b(includePad) << ", pad_hi); }\n";
        return success();
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto s) {
        os << "    softmax(c, " << name(s.getInput()) << ", " << dims(s) << ", " << rank(s)
           << ", " << s.getDim() << ", " << b(isa<LogSoftmaxOp>(s)) << ", " << name(s)
           << ");\n";
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
        os << "    norm(c, " << name(n.getInput()) << ", "
           << (n.getWeight() ? name(n.getWeight()) : null) << ", " << bias << ", " << name(n)
           << ", " << rows << ", " << row << ", "
           << doubleLiteral(n.getEpsilon().convertToDouble()) << ", " << b(isa<RmsNormOp>(n))
           << ");\n";
        return success();
      })
      .Case([&](BatchNormOp x) {
        std::string rest = "int64_t(1)";
        for (int d = 2; d < rank(x); ++d)
          rest += " * " + dimExpr(x, d);
        std::string null = "(const " + elem(x) + " *)nullptr";
        os << "    batch_norm(c, " << name(x.getInput()) << ", " << name(x.getMean()) << ", "
           << name(x.getVariance()) << ", " << (x.getWeight() ? name(x.getWeight()) : null)
           << ", " << (x.getBias() ? name(x.getBias()) : null) << ", " << name(x) << ", "
           << dimExpr(x, 0) << ", " << dimExpr(x, 1) << ", " << rest << ", "
           << doubleLiteral(x.getEpsilon().convertToDouble()) << ");\n";
        return success();
      })
      .Case([&](ScaledDotProductAttentionOp a) -> LogicalResult {
        Value q = a.getQuery(), k = a.getKey(), v = a.getValue();
        int r = rank(q);
        if (r > kMaxRankForIndex)
          return a.emitError("the CUDA backend handles attention of rank <= ")
                 << kMaxRankForIndex;
        for (Value t : {q, v}) {
          int64_t dim = typeOf(t).getDimSize(r - 1);
          if (!ShapedType::isDynamic(dim) && dim > 256)
            return a.emitError("the CUDA attention kernel takes head dims up to 256, got ")
                   << dim;
        }
        std::string batch = "int64_t(1)";
        for (int d = 0; d < r - 2; ++d)
          batch += " * " + dimExpr(q, d);
        int64_t e = typeOf(q).getDimSize(r - 1), ev = typeOf(v).getDimSize(r - 1);
        if ((!ShapedType::isDynamic(e) && e > 256) || (!ShapedType::isDynamic(ev) && ev > 256))
          return a.emitError("the CUDA attention kernel handles head dims up to 256, got ")
                 << e << " and " << ev;
        if (!a.getScale() && ShapedType::isDynamic(e))
          return a.emitError("a dynamic head dim needs an explicit scale");
        double scale = a.getScale() ? a.getScale()->convertToDouble() : 1.0 / std::sqrt(double(e));
        os << "    {\n      MaskInfo mask;\n";
        if (Value m = a.getMask()) {
          // The mask broadcasts over [batch..., L, S]: stride 0 where its dim is 1.
          os << "      int64_t mstr[" << r << "];\n      strides_of(" << dims(m) << ", " << r
             << ", mstr);\n      for (int d = 0; d < " << r << "; ++d)\n        if ("
             << dims(m) << "[d] == 1) mstr[d] = 0;\n"
             << "      mask.kind = " << (typeOf(m).getElementType().isInteger(1) ? 1 : 2)
             << ";\n      mask.data = " << name(m) << ";\n      mask.lead = " << r - 2 << ";\n";
          for (int d = 0; d < r - 2; ++d)
            os << "      mask.lead_shape[" << d << "] = " << dimExpr(q, d) << "; mask.lead_stride["
               << d << "] = mstr[" << d << "];\n";
          os << "      mask.stride_l = mstr[" << r - 2 << "];\n      mask.stride_s = mstr["
             << r - 1 << "];\n";
        }
        os << "      if (!sdpa(c, " << name(q) << ", " << name(k) << ", " << name(v) << ", "
           << name(a) << ", " << batch << ", " << dimExpr(q, r - 2) << ", " << dimExpr(k, r - 2)
           << ", " << dimExpr(q, r - 1) << ", " << dimExpr(v, r - 1) << ", "
           << doubleLiteral(scale) << ", " << b(a.getCausal()) << ", mask))\n"
           << "        failure = kFailureAttention; // head dims above 256\n    }\n";
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitError("the CUDA backend has no kernel for this op");
      });
}

} // namespace thunder::gpu
