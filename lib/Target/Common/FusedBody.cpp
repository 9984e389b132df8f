//===- FusedBody.cpp - Per-element C code of a fusion region --------------===//
#include "thunder/Target/Common/FusedBody.h"

#include "thunder/Target/Common/ArtifactSource.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <array>
#include <cmath>

using namespace mlir;
using namespace mlir::thunder;

namespace thunder::codegen {

std::string doubleLiteral(double v) {
  if (std::isnan(v))
    return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(v))
    return v > 0 ? "std::numeric_limits<double>::infinity()"
                 : "-std::numeric_limits<double>::infinity()";
  return llvm::formatv("{0:e17}", v).str();
}

FailureOr<std::string> elementwiseExpr(Operation *op, llvm::StringRef C,
                                       ArrayRef<std::string> operands,
                                       llvm::StringRef math) {
  auto x = [&](unsigned i) { return i < operands.size() ? operands[i] : std::string("?"); };
  std::string a = x(0), b = x(1), c = x(2), ct = C.str();
  auto call = [&](llvm::StringRef fn) { return (fn + "(" + a + ")").str(); };
  auto call2 = [&](llvm::StringRef fn) { return (fn + "(" + a + ", " + b + ")").str(); };
  // A function the target's vector math provides, else `fallback`.
  auto mathCall = [&](llvm::StringRef fn, llvm::StringRef fallback) {
    return math.empty() ? call(fallback) : call((math + fn).str());
  };
  return llvm::TypeSwitch<Operation *, FailureOr<std::string>>(op)
      .Case([&](AddOp) { return a + " + " + b; })
      .Case([&](SubOp) { return a + " - " + b; })
      .Case([&](MulOp) { return a + " * " + b; })
      .Case([&](DivOp d) {
        switch (d.getRoundingMode()) {
        case RoundingMode::Floor: return call2("div_floor");
        case RoundingMode::Trunc: return call2("div_trunc");
        default: return a + " / " + b;
        }
      })
      .Case([&](RemainderOp) { return call2("py_remainder"); })
      .Case([&](PowOp) { return call2(math.empty() ? "power" : (math + "pow").str()); })
      .Case([&](MaximumOp) { return call2("maximum"); })
      .Case([&](MinimumOp) { return call2("minimum"); })
      .Case([&](LogicalAndOp) { return a + " && " + b; })
      .Case([&](LogicalOrOp) { return a + " || " + b; })
      .Case([&](LogicalXorOp) { return a + " != " + b; })
      .Case([&](LogicalNotOp) { return "!" + a; })
      .Case([&](NegOp) { return "-" + a; })
      .Case([&](AbsOp) { return call("std::abs"); })
      .Case([&](ReluOp) { return call("relu"); })
      .Case([&](ExpOp) { return mathCall("exp", "std::exp"); })
      .Case([&](LogOp) { return mathCall("log", "std::log"); })
      .Case([&](Log1pOp) { return call("std::log1p"); })
      .Case([&](SqrtOp) { return call("std::sqrt"); })
      .Case([&](RsqrtOp) {
        return math.empty() ? ct + "(1) / std::sqrt(" + a + ")" : call((math + "rsqrt").str());
      })
      .Case([&](ReciprocalOp) { return ct + "(1) / " + a; })
      .Case([&](TanhOp) { return mathCall("tanh", "std::tanh"); })
      .Case([&](SigmoidOp) { return mathCall("sigmoid", "sigmoid"); })
      .Case([&](ErfOp) { return mathCall("erf", "std::erf"); })
      .Case([&](SinOp) { return mathCall("sin", "std::sin"); })
      .Case([&](CosOp) { return mathCall("cos", "std::cos"); })
      .Case([&](FloorOp) { return call("std::floor"); })
      .Case([&](CeilOp) { return call("std::ceil"); })
      .Case([&](SiluOp) { return mathCall("silu", "silu"); })
      .Case([&](TanOp) { return call("std::tan"); })
      .Case([&](AsinOp) { return call("std::asin"); })
      .Case([&](AcosOp) { return call("std::acos"); })
      .Case([&](AtanOp) { return call("std::atan"); })
      .Case([&](SinhOp) { return call("std::sinh"); })
      .Case([&](CoshOp) { return call("std::cosh"); })
      .Case([&](AsinhOp) { return call("std::asinh"); })
      .Case([&](AcoshOp) { return call("std::acosh"); })
      .Case([&](AtanhOp) { return call("std::atanh"); })
      .Case([&](Expm1Op) { return call("std::expm1"); })
      .Case([&](Log2Op) { return call("std::log2"); })
      .Case([&](Log10Op) { return call("std::log10"); })
      .Case([&](TruncOp) { return call("std::trunc"); })
      // rint rounds in the current mode, which is to nearest, ties to even.
      .Case([&](RoundOp) { return call("std::rint"); })
      .Case([&](Atan2Op) { return call2("std::atan2"); })
      .Case([&](FmodOp) { return call2("c_fmod"); })
      .Case([&](BitwiseAndOp) { return "(" + a + " & " + b + ")"; })
      .Case([&](BitwiseOrOp) { return "(" + a + " | " + b + ")"; })
      .Case([&](BitwiseXorOp) { return "(" + a + " ^ " + b + ")"; })
      .Case([&](BitwiseNotOp) { return "(~" + a + ")"; })
      .Case([&](GeluOp g) {
        llvm::StringRef fn =
            g.getApproximate() == GeluApproximation::Tanh ? "gelu_tanh" : "gelu";
        return mathCall(fn, fn);
      })
      .Case([&](CompareOp cmp) -> FailureOr<std::string> {
        const char *sym = "==";
        switch (cmp.getDirection()) {
        case ComparisonDirection::EQ: sym = "=="; break;
        case ComparisonDirection::NE: sym = "!="; break;
        case ComparisonDirection::LT: sym = "<"; break;
        case ComparisonDirection::LE: sym = "<="; break;
        case ComparisonDirection::GT: sym = ">"; break;
        case ComparisonDirection::GE: sym = ">="; break;
        }
        return a + " " + sym + " " + b;
      })
      .Case([&](WhereOp) { return a + " ? " + b + " : " + c; })
      .Case([&](ClampOp cl) {
        std::string e = a;
        if (auto lo = cl.getMin())
          e = "maximum(" + e + ", " + ct + "(" + doubleLiteral(lo->convertToDouble()) + "))";
        if (auto hi = cl.getMax())
          e = "minimum(" + e + ", " + ct + "(" + doubleLiteral(hi->convertToDouble()) + "))";
        return e;
      })
      .Case([&](ConvertOp) { return a; })
      .Default([](Operation *) -> FailureOr<std::string> { return failure(); });
}

//===----------------------------------------------------------------------===//
// BodyEmitter
//===----------------------------------------------------------------------===//

SmallVector<const Load *> Statements::loads() const {
  SmallVector<const Load *> result;
  for (const Statement &s : list)
    if (s.load)
      result.push_back(&*s.load);
  return result;
}

bool Statements::mentions(llvm::StringRef var) const {
  return llvm::any_of(loads(), [&](const Load *l) { return l->offset.mentions(var); });
}

size_t BodyEmitter::KeyHash::operator()(const Key &key) const {
  return llvm::hash_combine(key.value.getAsOpaquePointer(),
                            llvm::hash_combine_range(key.index.dims.begin(),
                                                     key.index.dims.end()),
                            key.index.flat);
}

SmallVector<IndexExpr, 4> BodyEmitter::shapeOf(Value value) {
  SmallVector<IndexExpr, 4> shape;
  auto type = cast<RankedTensorType>(value.getType());
  for (unsigned d = 0; d < type.getRank(); ++d)
    shape.push_back(IndexExpr::size(ctx.dim(value, d)));
  return shape;
}

std::string BodyEmitter::computeType(Type element) {
  if (element.isInteger(1))
    return "bool";
  return "compute_t<" + ctx.storageType(element) + ">";
}

/// The flat row-major position of `index` in a value of `shape`.
static IndexExpr flatOf(const Index &index, ArrayRef<IndexExpr> shape) {
  return index.flat ? index.flat : linearize(index.dims, shape);
}

/// The index of each dim of `index` in a value of `shape`.
static SmallVector<IndexExpr, 4> dimsOf(const Index &index, ArrayRef<IndexExpr> shape) {
  return index.dims.empty() && !shape.empty() ? delinearize(index.flat, shape) : index.dims;
}

/// Splits a reshape from `in` to `out` into groups of consecutive dims with
/// the same number of elements ({in begin, in end, out begin, out end}),
/// matched from the last dims: constant dims grouped by their products, a
/// size known only at run time matched with the same size, size-1 dims
/// alone. Where that stops (sizes known only at run time that differ: a
/// GEMM's [tokens, n] viewed as [batch, seq, n]), the leading dims left on
/// both sides form one group, which holds as many elements as the reshape's
/// total over the groups matched. False when nothing can be matched.
static bool reshapeGroups(ArrayRef<IndexExpr> in, ArrayRef<IndexExpr> out,
                          SmallVectorImpl<std::array<size_t, 4>> &groups) {
  auto constant = [](const IndexExpr &e) { return e.kind() == IndexExpr::Kind::Constant; };
  size_t i = in.size(), o = out.size(); // dims [0, i) and [0, o) are left
  SmallVector<std::array<size_t, 4>> reversed;
  while (i > 0 || o > 0) {
    size_t i1 = i, o1 = o;
    if (o > 0 && out[o - 1].isConstant(1)) {
      --o;
    } else if (i > 0 && in[i - 1].isConstant(1)) {
      --i;
    } else if (i == 0 || o == 0) {
      break;
    } else if (!constant(in[i - 1]) || !constant(out[o - 1])) {
      if (in[i - 1] != out[o - 1])
        break;
      --i, --o;
    } else {
      int64_t pin = in[--i].value(), pout = out[--o].value();
      bool matched = true;
      while (matched && pin != pout) {
        if (pin < pout && i > 0 && constant(in[i - 1]) && pin != 0)
          pin *= in[--i].value();
        else if (pout < pin && o > 0 && constant(out[o - 1]) && pout != 0)
          pout *= out[--o].value();
        else
          matched = false;
      }
      if (!matched) {
        i = i1, o = o1;
        break;
      }
    }
    reversed.push_back({i, i1, o, o1});
  }
  if (i > 0 || o > 0) {
    // The rest, as one group: both sides hold the same number of elements.
    // (Not with a size-0 dim among several: its index would divide by 0.)
    auto zero = [](const IndexExpr &e) { return e.isConstant(0); };
    if (i == 0 || o == 0 || llvm::any_of(in.take_front(i), zero) ||
        llvm::any_of(out.take_front(o), zero))
      return false;
    reversed.push_back({0, i, 0, o});
  }
  if (reversed.empty())
    return false;
  groups.assign(reversed.rbegin(), reversed.rend());
  return true;
}

FailureOr<Index> BodyEmitter::operandIndex(Operation *op, const Index &index) {
  Value operand = op->getOperand(0);
  SmallVector<IndexExpr, 4> in = shapeOf(operand), out = shapeOf(op->getResult(0));
  Index result;
  return llvm::TypeSwitch<Operation *, FailureOr<Index>>(op)
      .Case<BroadcastOp, ExpandOp>([&](auto b) -> FailureOr<Index> {
        SmallVector<int64_t> mapping;
        if constexpr (std::is_same_v<decltype(b), BroadcastOp>) {
          mapping.assign(b.getBroadcastDims().begin(), b.getBroadcastDims().end());
        } else {
          for (size_t k = 0; k < in.size(); ++k)
            mapping.push_back(out.size() - in.size() + k);
        }
        SmallVector<IndexExpr, 4> dims = dimsOf(index, out);
        for (auto [k, d] : llvm::enumerate(mapping))
          result.dims.push_back(in[k].isConstant(1) ? IndexExpr::constant(0) : dims[d]);
        if (in == ArrayRef<IndexExpr>(out).take_back(in.size()) && in.size() == out.size())
          result.flat = index.flat;
        return result;
      })
      .Case([&](TransposeOp t) -> FailureOr<Index> {
        SmallVector<IndexExpr, 4> dims = dimsOf(index, out);
        result.dims.assign(in.size(), IndexExpr::constant(0));
        for (auto [i, p] : llvm::enumerate(t.getPermutation()))
          result.dims[p] = dims[i];
        return result;
      })
      .Case([&](SliceOp s) -> FailureOr<Index> {
        SmallVector<IndexExpr, 4> dims = dimsOf(index, out);
        for (auto [d, size, start, step] : llvm::zip(dims, in, s.getStart(), s.getStep())) {
          // A negative start (on a dynamic dim) counts from the run-time
          // size, clamped at 0.
          IndexExpr first = IndexExpr::constant(start);
          if (start < 0) {
            std::string n = size.str(), k = std::to_string(-start) + "LL";
            first = IndexExpr::size("(" + n + " > " + k + " ? " + n + " - " + k + " : 0LL)");
          }
          result.dims.push_back(first + IndexExpr::constant(step) * d);
        }
        return result;
      })
      .Case([&](ReshapeOp) -> FailureOr<Index> {
        // Same elements in the same order: the flat position carries over.
        result.flat = flatOf(index, out);
        // Where the reshape splits or merges groups of dims (a GEMM's output
        // viewed as [batch, seq, n], a hidden dim split into heads), each
        // group's index is recomputed from its own dims, not from the flat
        // position: a bias read after the reshape is read at the column,
        // not at flat % n.
        SmallVector<std::array<size_t, 4>> groups;
        if (index.dims.size() != out.size() || !reshapeGroups(in, out, groups))
          return result;
        ArrayRef<IndexExpr> dims(index.dims);
        for (auto [i0, i1, o0, o1] : groups) {
          IndexExpr within = linearize(dims.slice(o0, o1 - o0),
                                       ArrayRef<IndexExpr>(out).slice(o0, o1 - o0));
          llvm::append_range(result.dims,
                             delinearize(within, ArrayRef<IndexExpr>(in).slice(i0, i1 - i0)));
        }
        return result;
      })
      .Default([&](Operation *) -> FailureOr<Index> { return index; });
}

FailureOr<std::string> BodyEmitter::emit(Value value, const Index &index) {
  if (auto it = bound.find(value); it != bound.end())
    return it->second;
  auto type = cast<RankedTensorType>(value.getType());
  Key key{value, index};
  auto mentionsInner = [&](const IndexExpr &e) { return e && e.mentions(ctx.innerVar); };
  bool rowOnly = !ctx.innerVar.empty() && !llvm::any_of(index.dims, mentionsInner) &&
                 !mentionsInner(index.flat);
  auto &memo = rowOnly ? rowMemo : elementMemo;
  if (auto it = memo.find(key); it != memo.end())
    return it->second;
  Statements &code = rowOnly ? rowCode : elementCode;
  std::string C = computeType(type.getElementType());
  std::string name = fresh();
  auto define = [&](std::string init) {
    code.list.push_back({C, name, std::nullopt, false, std::move(init)});
    memo[key] = name;
    return name;
  };

  auto load = [&](Value from, IndexExpr offset) {
    code.list.push_back({C, name, Load{from, offset},
                         !type.getElementType().isInteger(1), ""});
    memo[key] = name;
    return name;
  };
  auto memory = inMemory.find(value);
  if (isa<BlockArgument>(value) || memory != inMemory.end()) {
    if (type.getRank() == 0)
      return load(value, IndexExpr::constant(0));
    SmallVector<IndexExpr, 4> shape = shapeOf(value);
    SmallVector<int64_t, 4> order = storageOrderOf(value);
    if (!order.empty()) {
      // Stored permuted: the position of the permuted index in the
      // permuted shape.
      SmallVector<IndexExpr, 4> dims = dimsOf(index, shape);
      SmallVector<IndexExpr, 4> storedDims, storedShape;
      for (int64_t d : order) {
        storedDims.push_back(dims[d]);
        storedShape.push_back(shape[d]);
      }
      return load(value, linearize(storedDims, storedShape));
    }
    return load(value, flatOf(index, shape));
  }

  Operation *op = value.getDefiningOp();
  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    // A transpose of an input stored in its permuted order reads it where
    // the transpose's own element lies: in order (a tensor kept channels
    // last read through permute(0, 2, 3, 1)). index.flat, where set, is
    // always that element's own row-major position.
    Value operand = transpose.getOperand();
    SmallVector<int64_t, 4> order = storageOrderOf(operand);
    if (!order.empty() && llvm::equal(order, transpose.getPermutation()))
      return load(operand, flatOf(index, shapeOf(value)));
  }
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
    if (!splat)
      return op->emitError("a fused kernel reads only splat constants inline");
    return define(C + "(" + splatLiteral(splat) + ")");
  }

  if (isa<BroadcastOp, ExpandOp, TransposeOp, SliceOp, ReshapeOp>(op)) {
    FailureOr<Index> in = operandIndex(op, index);
    if (failed(in))
      return failure();
    // A view of a row value can still depend only on the row.
    FailureOr<std::string> operand = emit(op->getOperand(0), *in);
    if (failed(operand))
      return failure();
    memo[key] = *operand;
    return *operand;
  }

  SmallVector<std::string> operands;
  for (Value operand : op->getOperands()) {
    FailureOr<std::string> v = emit(operand, index);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  Value typed = isa<WhereOp>(op) ? op->getOperand(1) : op->getOperand(0);
  std::string operandC =
      computeType(cast<RankedTensorType>(typed.getType()).getElementType());
  FailureOr<std::string> expr = elementwiseExpr(op, operandC, operands, ctx.math);
  if (failed(expr))
    return op->emitError("a fused kernel cannot compute this op per element");
  // PyTorch rounds every op's result to its dtype: a result stored in a
  // narrower type than it is computed in (f16, bf16, f8) is rounded here
  // too, so a fused kernel computes what the ops did one by one.
  Type element = type.getElementType();
  if (isa<FloatType>(element) && element.getIntOrFloatBitWidth() < 32)
    *expr = "cv(st<" + ctx.storageType(element) + ">(" + *expr + "))";
  return define("static_cast<" + C + ">(" + *expr + ")");
}

Statements BodyEmitter::takeElement() {
  elementMemo.clear();
  return std::exchange(elementCode, Statements());
}

Statements BodyEmitter::takeRow() { return std::exchange(rowCode, Statements()); }

SmallVector<int64_t, 4> BodyEmitter::storageOrderOf(Value value) const {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || !ctx.storageOrder || inMemory.count(value))
    return {};
  return ctx.storageOrder(arg.getArgNumber());
}

std::string BodyEmitter::spell(const Load &load) const {
  std::string offset = load.offset.str();
  if (auto memory = inMemory.find(load.value); memory != inMemory.end())
    return memory->second + "[" + offset + "]";
  return ctx.load(cast<BlockArgument>(load.value).getArgNumber(), offset);
}

std::string BodyEmitter::print(const Statements &statements,
                               const LoadSpelling &spelling) const {
  std::string text;
  for (const Statement &s : statements.list) {
    std::string init = s.init;
    if (s.load) {
      init = spelling ? spelling(*s.load) : std::string();
      if (init.empty())
        init = spell(*s.load);
      if (s.convert)
        init = "cv(" + init + ")";
    }
    text += statements.indent + "const " + s.type + " " + s.name + " = " + init + ";\n";
  }
  return text;
}

} // namespace thunder::codegen
