//===- EmitKernels.cpp - A CUDA kernel or library call per unit -----------===//
//
// A unit is a fusion region or a top-level op. Pointwise work (elementwise
// ops, converts, broadcasts, transposes, slices, reshapes, iota) becomes one
// generated kernel that computes every yielded value per element: 16-byte
// vector loads and stores for the operands read in the output's order, index
// arithmetic for the others, a scalar loop for the tail. A region around one
// library op (GEMM, convolution, attention, a reduction, a normalization...)
// calls the support header for it and runs its pointwise epilogue as one
// generated kernel after it, or in cuBLASLt's epilogue when the chain is
// bias (+ReLU | tanh-GELU). Any other region runs op by op, with its
// intermediates in the stream's scratch memory.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"
#include "../CPU/Emitter.h" // the C-family helpers shared with the CPU backend
#include "thunder/Target/Common/FusedBody.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::thunder;

namespace thunder::gpu {

using codegen::doubleLiteral;
using cpu::elementBytes;
using cpu::sourceOf;

/// The shared vocabulary's expression of an elementwise op over operands
/// named a, b, c.
static FailureOr<std::string> elementwiseExpr(Operation *op, llvm::StringRef C) {
  std::vector<std::string> operands = {"a", "b", "c"};
  operands.resize(std::min<size_t>(3, op->getNumOperands()));
  return codegen::elementwiseExpr(op, C, operands);
}

bool Emitter::isPointwise(Operation *op) {
  if (isa<BroadcastOp, ExpandOp, TransposeOp, SliceOp, ReshapeOp, IotaOp, ConstantOp>(op))
    return true;
  return op->getNumResults() == 1 && op->getNumOperands() > 0 &&
         succeeded(elementwiseExpr(op, "C"));
}

void Emitter::emitComment(Operation *op, llvm::raw_ostream &os, llvm::StringRef indent) {
  std::string text;
  llvm::raw_string_ostream line(text);
  OpPrintingFlags flags;
  flags.elideLargeElementsAttrs(8).elideLargeResourceString(8);
  op->print(line, flags);
  std::string where = sourceOf(op->getLoc());
  os << indent << "// " << llvm::StringRef(text).split('\n').first;
  if (!where.empty())
    os << "\n" << indent << "//   at " << where;
  os << "\n";
}

//===----------------------------------------------------------------------===//
// Pointwise kernels
//===----------------------------------------------------------------------===//

/// Writes the per-element body of a pointwise kernel: each value a variable
/// of its compute type (rounded through its storage type, so a fused chain
/// computes what the unfused ops would), indexed from the output's
/// multi-index through broadcasts, transposes, slices and reshapes.
class PointwiseGen {
public:
  PointwiseGen(Emitter &e, ArrayRef<Operation *> ops, Value out) : e(e), out(out) {
    for (Operation *op : ops)
      inKernel.insert(op);
    for (int d = 0; d < e.rank(out); ++d)
      outIdx.push_back("o" + std::to_string(d));
  }

  /// Generates the body for one mode; returns the roots' variables.
  std::vector<std::string> generate(ArrayRef<Value> roots, bool vector) {
    vectorMode = vector;
    memo.clear();
    text.clear();
    tmp = 0;
    needOutIdx = false;
    std::vector<std::string> vars;
    for (Value r : roots)
      vars.push_back(get(r, outIdx));
    return vars;
  }

  /// The body generated last, preceded by the output's multi-index when a
  /// value needs it.
  std::string body(llvm::StringRef indent) {
    std::string s;
    if (needOutIdx && !outIdx.empty()) {
      s += indent.str() + "int64_t rem = i;\n";
      for (int d = e.rank(out) - 1; d >= 0; --d) {
        std::string dim = e.kernelDim(out, d);
        s += indent.str() + "const int64_t o" + std::to_string(d) + " = " +
             (d == 0 ? std::string("rem") : "rem % " + dim) + ";\n";
        s += indent.str() + "(void)o" + std::to_string(d) + ";\n";
        if (d > 0)
          s += indent.str() + "rem /= " + dim + ";\n";
      }
    }
    for (llvm::StringRef line : llvm::split(text, '\n'))
      if (!line.empty())
        s += indent.str() + line.str() + "\n";
    return s;
  }

  Emitter &e;
  Value out;
  llvm::DenseSet<Operation *> inKernel;
  std::vector<Value> leaves;
  llvm::DenseMap<Value, int> leafIndex;
  /// Leaves read in the output's order (vector loads in the vector loop).
  llvm::SetVector<int> direct;
  std::vector<std::string> outIdx;
  bool needOutIdx = false;
  LogicalResult status = success();

private:
  std::string fresh(const char *prefix) { return prefix + std::to_string(tmp++); }
  void stmt(const std::string &s) { text += s + "\n"; }

  bool sameDims(Value a, Value b) {
    auto da = e.plan.dims(a), db = e.plan.dims(b);
    if (da.size() != db.size())
      return false;
    for (auto [x, y] : llvm::zip(da, db))
      if (x.size != y.size || x.symbol != y.symbol)
        return false;
    return true;
  }

  /// Row-major offset of `idx` in `v`.
  std::string linearize(Value v, ArrayRef<std::string> idx) {
    if (idx.empty())
      return "0";
    std::string s = idx[0];
    for (size_t d = 1; d < idx.size(); ++d)
      s = "(" + s + ") * " + e.kernelDim(v, d) + " + " + idx[d];
    return s;
  }

  std::string index(const std::string &expr) {
    std::string var = fresh("ix");
    stmt("const int64_t " + var + " = " + expr + ";");
    return var;
  }

  std::string get(Value v, ArrayRef<std::string> idx) {
    std::string key = std::to_string(reinterpret_cast<uintptr_t>(v.getAsOpaquePointer())) + "@" +
                      llvm::join(idx, ",");
    if (auto it = memo.find(key); it != memo.end())
      return it->second;
    std::string var = compute(v, idx);
    memo[key] = var;
    return var;
  }

  std::string compute(Value v, ArrayRef<std::string> idx) {
    Operation *op = v.getDefiningOp();
    std::string E = e.elem(v);
    std::string var = fresh("t");
    if (!op || !inKernel.count(op)) {
      auto [it, added] = leafIndex.try_emplace(v, int(leaves.size()));
      if (added)
        leaves.push_back(v);
      int k = it->second;
      bool isDirect = std::equal(idx.begin(), idx.end(), outIdx.begin(), outIdx.end()) &&
                      sameDims(v, out);
      std::string read;
      if (isDirect) {
        direct.insert(k);
        read = vectorMode ? "x" + std::to_string(k) + "[j]" : "p" + std::to_string(k) + "[i]";
      } else {
        needOutIdx = true;
        read = "p" + std::to_string(k) + "[" + linearize(v, idx) + "]";
      }
      stmt("const auto " + var + " = cv(" + read + ");");
      return var;
    }
    if (auto b = dyn_cast<BroadcastOp>(op)) {
      Value in = b.getOperand();
      std::vector<std::string> inIdx;
      for (auto [j, d] : llvm::enumerate(b.getBroadcastDims())) {
        const PlanDim &pd = e.plan.dims(in)[j];
        inIdx.push_back(!pd.isDynamic() && pd.size == 1 ? "0" : idx[d]);
      }
      needOutIdx = true;
      return get(in, inIdx);
    }
    if (auto x = dyn_cast<ExpandOp>(op)) {
      Value in = x.getOperand();
      int offset = e.rank(x) - e.rank(in);
      std::vector<std::string> inIdx;
      for (int j = 0; j < e.rank(in); ++j) {
        const PlanDim &pd = e.plan.dims(in)[j];
        inIdx.push_back(!pd.isDynamic() && pd.size == 1 ? "0" : idx[offset + j]);
      }
      needOutIdx = true;
      return get(in, inIdx);
    }
    if (auto t = dyn_cast<TransposeOp>(op)) {
      std::vector<std::string> inIdx(idx.size());
      for (auto [i, p] : llvm::enumerate(t.getPermutation()))
        inIdx[p] = idx[i];
      needOutIdx = true;
      return get(t.getOperand(), inIdx);
    }
    if (auto s = dyn_cast<SliceOp>(op)) {
      std::vector<std::string> inIdx;
      for (size_t d = 0; d < idx.size(); ++d) {
        int64_t start = s.getStart()[d], step = s.getStep()[d];
        if (start == 0 && step == 1)
          inIdx.push_back(idx[d]);
        else
          inIdx.push_back(index(std::to_string(start) + "LL + (" + idx[d] + ") * " +
                                std::to_string(step) + "LL"));
      }
      needOutIdx = true;
      return get(s.getOperand(), inIdx);
    }
    if (auto r = dyn_cast<ReshapeOp>(op)) {
      Value in = r.getOperand();
      std::string flat = index(linearize(r, idx));
      std::vector<std::string> inIdx(e.rank(in));
      std::string rest = flat;
      for (int d = e.rank(in) - 1; d >= 0; --d) {
        if (d == 0) {
          inIdx[d] = rest;
        } else {
          inIdx[d] = index(rest + " % " + e.kernelDim(in, d));
          rest = index(rest + " / " + e.kernelDim(in, d));
        }
      }
      if (e.rank(in) > 0)
        needOutIdx = true;
      return get(in, inIdx);
    }
    if (auto i = dyn_cast<IotaOp>(op)) {
      needOutIdx = true;
      stmt("const auto " + var + " = cv(st<" + E + ">(compute_t<" + E + ">(" +
           idx[i.getDim()] + ")));");
      return var;
    }
    // Elementwise: operands at the same index.
    Value typed = isa<WhereOp>(op) ? op->getOperand(1) : op->getOperand(0);
    FailureOr<std::string> expr = elementwiseExpr(op, "compute_t<" + e.elem(typed) + ">");
    if (failed(expr)) {
      status = op->emitError("the CUDA backend cannot fuse this op into a pointwise kernel");
      return "0";
    }
    std::vector<std::string> operands;
    for (Value operand : op->getOperands())
      operands.push_back(get(operand, idx));
    const char *letters[] = {"a", "b", "c"};
    std::string s = "compute_t<" + E + "> " + var + ";\n{\n";
    for (auto [i, o] : llvm::enumerate(operands))
      s += "  const auto " + std::string(letters[i]) + " = " + o + ";\n";
    s += "  " + var + " = cv(st<" + E + ">(" + *expr + "));\n}";
    stmt(s);
    return var;
  }

  bool vectorMode = false;
  std::map<std::string, std::string> memo;
  std::string text;
  int tmp = 0;
};

LogicalResult Emitter::emitPointwise(const std::string &kernel, ArrayRef<Operation *> ops,
                                     ArrayRef<Value> roots, ArrayRef<std::string> dests,
                                     llvm::raw_ostream &device, llvm::raw_ostream &host) {
  Value out = roots.front();
  PointwiseGen gen(*this, ops, out);
  std::vector<std::string> scalarVars = gen.generate(roots, /*vector=*/false);
  std::string scalarBody = gen.body("    ");
  std::vector<std::string> vectorVars = gen.generate(roots, /*vector=*/true);
  std::string vectorBody = gen.body("        ");
  if (failed(gen.status))
    return failure();

  // Vector width: 16 bytes of the widest type read or written in order.
  int64_t widest = 1;
  for (int k : gen.direct)
    widest = std::max(widest, elementBytes(typeOf(gen.leaves[k]).getElementType()));
  for (Value r : roots)
    widest = std::max(widest, elementBytes(typeOf(r).getElementType()));
  int vec = int(16 / widest);

  // No __restrict__: the memory plan may write a result over the input it
  // reads element for element (each element is read before it is written).
  device << "/// " << kernel << ": " << ops.size() << " op(s) per element";
  if (!ops.empty()) {
    device << ":\n";
    for (Operation *op : ops)
      emitComment(op, device, "");
  } else {
    device << "\n";
  }
  device << "__global__ void __launch_bounds__(kBlock) " << kernel << "(int64_t n, Syms S";
  for (auto [k, v] : llvm::enumerate(gen.leaves))
    device << ", const " << elem(v) << " *p" << k;
  for (auto [r, v] : llvm::enumerate(roots))
    device << ", " << elem(v) << " *q" << r;
  device << ") {\n  (void)S;\n  constexpr int V = " << vec << ";\n"
         << "  const int64_t stride = grid_size(), t = thread_index();\n"
         << "  int64_t done = 0;\n  if (true";
  for (int k : gen.direct)
    device << " && aligned<V>(p" << k << ")";
  for (size_t r = 0; r < roots.size(); ++r)
    device << " && aligned<V>(q" << r << ")";
  device << ") {\n    const int64_t nv = n / V;\n"
         << "    for (int64_t v = t; v < nv; v += stride) {\n";
  for (int k : gen.direct)
    device << "      " << elem(gen.leaves[k]) << " x" << k << "[V];\n      load_vec<V>(p" << k
           << " + v * V, x" << k << ");\n";
  for (auto [r, v] : llvm::enumerate(roots))
    device << "      " << elem(v) << " y" << r << "[V];\n";
  device << "#pragma unroll\n      for (int j = 0; j < V; ++j) {\n"
         << "        const int64_t i = v * V + j;\n        (void)i;\n"
         << vectorBody;
  for (auto [r, v] : llvm::enumerate(roots))
    device << "        y" << r << "[j] = st<" << elem(v) << ">(" << vectorVars[r] << ");\n";
  device << "      }\n";
  for (size_t r = 0; r < roots.size(); ++r)
    device << "      store_vec<V>(q" << r << " + v * V, y" << r << ");\n";
  device << "    }\n    done = nv * V;\n  }\n"
         << "  // The tail (everything, when a pointer is not aligned for vectors).\n"
         << "  for (int64_t i = done + t; i < n; i += stride) {\n"
         << scalarBody;
  for (auto [r, v] : llvm::enumerate(roots))
    device << "    q" << r << "[i] = st<" << elem(v) << ">(" << scalarVars[r] << ");\n";
  device << "  }\n}\n\n";

  host << "    {\n      const int64_t n = " << numelExpr(out) << ";\n"
       << "      if (n > 0)\n        " << kernel
       << "<<<grid_for((n + " << vec - 1 << ") / " << vec << ", kBlock, c), kBlock, 0, c.stream>>>(n, S";
  for (Value v : gen.leaves)
    host << ", " << name(v);
  for (const std::string &d : dests)
    host << ", " << d;
  host << ");\n    }\n";
  return success();
}


//===----------------------------------------------------------------------===//
// Library ops and data movement: calls into the support header
//===----------------------------------------------------------------------===//

static bool isLtType(Type t) { return t.isF32() || t.isF64() || t.isF16() || t.isBF16(); }

/// The im2col bytes a convolution needs (0 for grouped, 1x1 unit-stride
/// unpadded, or non-cuBLASLt types), as a C expression.
static std::string convScratch(Emitter &e, ConvolutionOp c) {
  Type t = e.typeOf(c).getElementType();
  if (c.getGroups() != 1 || !isLtType(t))
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

LogicalResult Emitter::emitOpCall(Operation *op, llvm::raw_ostream &os) {
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
        os << "    matmul(c, " << name(lhs) << ", " << name(rhs) << ", " << name(m) << ", "
           << batch << ", " << mDim << ", " << nDim << ", " << kDim << ", "
           << b(m.getTransposeLhs()) << ", " << b(m.getTransposeRhs()) << ", "
           << b(rr == 2 && lr > 2) << ");\n";
        return success();
      })
      .Case([&](ConvolutionOp x) {
        int spatial = rank(x) - 2;
        needsLt |= x.getGroups() == 1 && isLtType(typeOf(x).getElementType());
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
           << ", " << dimExpr(x, 1) << ", " << x.getGroups() << ", w); }\n";
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
           << "        failure = 2; // head dims above 256\n    }\n";
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitError("the CUDA backend has no kernel for this op");
      });
}

//===----------------------------------------------------------------------===//
// Units and regions
//===----------------------------------------------------------------------===//

/// matmul (+ bias broadcast along the last dim) (+ relu | tanh-gelu) as one
/// cuBLASLt call with an epilogue.
bool Emitter::tryGemmEpilogue(Unit &unit, FusionOp fusion, llvm::raw_ostream &host) {
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
  if (!bias && ops.size() > 1 + (relu || gelu))
    return false;
  const char *epi = bias ? (relu ? "ReluBias" : gelu ? "GeluTanhBias" : "Bias")
                         : (relu ? "Relu" : gelu ? "GeluTanh" : "None");
  Value lhs = mm.getLhs(), rhs = mm.getRhs();
  int lr = rank(lhs), rr = rank(rhs);
  std::string batch = "int64_t(1)";
  for (int d = 0; d < lr - 2; ++d)
    batch += " * " + dimExpr(lhs, d);
  needsLt = true;
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

LogicalResult Emitter::emitRegion(Unit &unit, FusionOp fusion, llvm::raw_ostream &device,
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

  // One pointwise kernel for the whole region.
  if (heavy.empty() && !roots.empty() && sameShape(roots))
    return emitPointwise(unit.name, ops, roots, dests, device, host);

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
          heavyYielded = true; // written in place (named so in Emitter::run)
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
          host << "    c.scratch = static_cast<char *>(c.scratch) + " << temps << ";\n";
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
        return emitPointwise(unit.name + "_epilogue", epilogue, rest, restDests, device, host);
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
        callOs << "    " << spell.memcpyAsync << "(" << name(reshape) << ", "
               << name(reshape.getOperand()) << ", " << bytesExpr(reshape) << ", "
               << spell.deviceToDevice << ", c.stream);\n";
      else
        names[reshape.getResult()] = name(reshape.getOperand());
      continue;
    }
    emitComment(op, callOs, "    ");
    if (auto conv = dyn_cast<ConvolutionOp>(op))
      own = "std::max<uint64_t>(" + own + ", " + convScratch(*this, conv) + ")";
    if (isPointwise(op) && !isa<BroadcastOp, ExpandOp, TransposeOp, SliceOp, IotaOp>(op)) {
      Value r = op->getResult(0);
      if (failed(emitPointwise(unit.name + "_" + std::to_string(k++), {op}, {r}, {name(r)},
                               device, callOs)))
        return failure();
    } else if (failed(emitOpCall(op, callOs))) {
      return failure();
    }
  }
  host << decls << "    c.scratch = scr + at;\n" << calls;
  // Yielded values not computed in place: arguments, constants, repeats.
  for (auto [r, res] : llvm::zip(roots, fusion.getResults()))
    if (name(r) != name(res))
      host << "    " << spell.memcpyAsync << "(" << name(res) << ", " << name(r) << ", "
           << bytesExpr(res) << ", " << spell.deviceToDevice << ", c.stream);\n";
  unit.scratch = (sizes.empty() ? "uint64_t(0)" : llvm::join(sizes, " + ")) + " + " + own;
  return success();
}

LogicalResult Emitter::emitUnit(Unit &unit, llvm::raw_ostream &device, llvm::raw_ostream &host) {
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
  for (int64_t w : unit.waits)
    if (units[w].stream != unit.stream)
      host << "    " << spell.streamWaitEvent << "(c.stream, rt.events[" << units[w].event
           << "], 0);\n";
  LogicalResult result = success();
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    result = emitRegion(unit, fusion, device, host);
  } else if (isPointwise(op) && !isa<BroadcastOp, ExpandOp, TransposeOp, SliceOp, IotaOp>(op)) {
    Value r = op->getResult(0);
    result = emitPointwise(unit.name, {op}, {r}, {name(r)}, device, host);
  } else {
    if (auto conv = dyn_cast<ConvolutionOp>(op))
      unit.scratch = convScratch(*this, conv);
    result = emitOpCall(op, host);
  }
  if (unit.recorded)
    host << "    " << spell.eventRecord << "(rt.events[" << unit.event << "], c.stream);\n";
  host << "  }\n";
  return result;
}

std::string Emitter::unitScratch(Unit &unit) { return unit.scratch; }

} // namespace thunder::gpu
