//===- CPUBackend.cpp - C++ code generation for the CPU -------------------===//
//
// Emits one C++ translation unit per model: a kernel per op (elementwise ops
// as loops written out here, structured ops as calls into the shipped
// thunder_cpu.h), a host program that computes dynamic sizes (ShapePlan),
// lays out the workspace and runs the kernels in order, and the
// thunder_model_v1 table of thunder-c/artifact.h. Weights are embedded with
// the assembler's .incbin, so large models do not go through the C++
// compiler. Until the fusion passes land, each op is its own kernel.
//
//===----------------------------------------------------------------------===//
#include "thunder/Target/CPU/CPUBackend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "thunder/Target/ShapePlan.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::thunder;
using ::thunder::EmittedSources;
using ::thunder::PlanDim;
using ::thunder::ShapePlan;
using ::thunder::SymbolDef;
using ::thunder::TargetOptions;
using ::thunder::ToolchainCommand;

namespace {

#include "CPUSupportSources.inc"

/// The C++ storage type of an element type.
FailureOr<std::string> cppType(Type t) {
  if (t.isF32()) return std::string("float");
  if (t.isF64()) return std::string("double");
  if (t.isF16()) return std::string("f16");
  if (t.isBF16()) return std::string("bf16");
  if (t.isFloat8E4M3FN()) return std::string("f8e4m3fn");
  if (t.isFloat8E5M2()) return std::string("f8e5m2");
  if (t.isInteger(1)) return std::string("bool");
  if (t.isInteger(8)) return std::string("int8_t");
  if (t.isInteger(32)) return std::string("int32_t");
  if (t.isInteger(64)) return std::string("int64_t");
  return failure();
}

/// thunder_dtype of thunder-c/artifact.h.
int dtypeCode(Type t) {
  if (t.isInteger(1)) return 0;
  if (t.isInteger(8)) return 1;
  if (t.isInteger(32)) return 2;
  if (t.isInteger(64)) return 3;
  if (t.isFloat8E4M3FN()) return 4;
  if (t.isFloat8E5M2()) return 5;
  if (t.isF16()) return 6;
  if (t.isBF16()) return 7;
  if (t.isF32()) return 8;
  return 9;
}

/// The safetensors dtype name.
std::string safetensorsDtype(Type t) {
  if (t.isInteger(1)) return "BOOL";
  if (t.isInteger(8)) return "I8";
  if (t.isInteger(32)) return "I32";
  if (t.isInteger(64)) return "I64";
  if (t.isFloat8E4M3FN()) return "F8_E4M3";
  if (t.isFloat8E5M2()) return "F8_E5M2";
  if (t.isF16()) return "F16";
  if (t.isBF16()) return "BF16";
  if (t.isF32()) return "F32";
  return "F64";
}

int64_t elementBytes(Type t) {
  return t.isInteger(1) ? 1 : (t.getIntOrFloatBitWidth() + 7) / 8;
}

std::string cppString(llvm::StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string doubleLiteral(double v) {
  if (std::isnan(v))
    return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(v))
    return v > 0 ? "std::numeric_limits<double>::infinity()"
                 : "-std::numeric_limits<double>::infinity()";
  return llvm::formatv("{0:e17}", v).str();
}

/// The user's source line of an op, for comments.
std::string sourceOf(Location loc) {
  std::string text;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = (file.getFilename().getValue() + ":" + llvm::Twine(file.getLine())).str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

class Emitter {
public:
  Emitter(func::FuncOp func, const ShapePlan &plan, const TargetOptions &options)
      : func(func), plan(plan), options(options) {}

  LogicalResult run(EmittedSources &out);

private:
  /// The C++ name of a value's data pointer.
  std::string name(Value v) { return names.lookup(v); }
  /// "n0_shape": the value's shape array.
  std::string shape(Value v) { return name(v) + "_shape"; }
  RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }
  std::string elem(Value v) { return *cppType(typeOf(v).getElementType()); }
  int rank(Value v) { return typeOf(v).getRank(); }
  /// numel as a C++ expression.
  std::string numelExpr(Value v) {
    std::string e = "int64_t(1)";
    for (const PlanDim &d : plan.dims(v))
      e += " * " + (d.isDynamic() ? "sym[" + std::to_string(d.symbol) + "]"
                                  : std::to_string(d.size));
    return e;
  }
  std::string dimExpr(Value v, unsigned d) {
    const PlanDim &dim = plan.dims(v)[d];
    return dim.isDynamic() ? "sym[" + std::to_string(dim.symbol) + "]"
                           : std::to_string(dim.size) + "LL";
  }
  std::string i64List(ArrayRef<int64_t> values) {
    std::string s = "{";
    for (auto [i, v] : llvm::enumerate(values))
      s += (i ? ", " : "") + std::to_string(v) + "LL";
    return s + (values.empty() ? "0}" : "}");
  }

  void emitSymbols(llvm::raw_ostream &os);
  void emitShapes(llvm::raw_ostream &os);
  LogicalResult emitConstant(ConstantOp op, llvm::raw_ostream &os);
  LogicalResult emitOp(Operation *op, llvm::raw_ostream &os);
  LogicalResult emitElementwise(Operation *op, llvm::raw_ostream &os);
  void emitEntry(llvm::raw_ostream &os);
  std::string createAndRun();
  /// The safetensors header's length, once the file is made.
  int64_t weightsHeaderBytes = 0;

  func::FuncOp func;
  const ShapePlan &plan;
  const TargetOptions &options;
  llvm::DenseMap<Value, std::string> names;
  /// Values computed into the workspace, in slot order.
  std::vector<Value> slots;
  /// Splat constants filled at the start of a run.
  std::vector<std::pair<Value, std::string>> splats;
  /// The weights blob and each constant's offset in it.
  std::string blob;
  llvm::DenseMap<Value, uint64_t> blobOffsets;
  /// safetensors entries: name, dtype, shape, begin, end.
  struct BlobEntry {
    std::string name, dtype;
    SmallVector<int64_t> shape;
    uint64_t begin, end;
  };
  std::vector<BlobEntry> blobEntries;
  std::string safetensorsFile(int64_t *headerBytes);
};

void Emitter::emitSymbols(llvm::raw_ostream &os) {
  os << "/// Sizes of the dynamic dims (ShapePlan), from the inputs' shapes.\n"
        "static void compute_symbols(const thunder_tensor *inputs, int64_t *sym) {\n"
        "  (void)inputs; (void)sym;\n";
  auto dimOf = [&](Value v, unsigned d) { return dimExpr(v, d); };
  for (auto [i, def] : llvm::enumerate(plan.symbols())) {
    os << "  sym[" << i << "] = ";
    switch (def.kind) {
    case SymbolDef::Kind::ArgDim:
      os << "inputs[" << def.arg << "].shape[" << def.dim << "]";
      break;
    case SymbolDef::Kind::NumelQuotient: {
      os << "(int64_t(1)";
      for (unsigned d = 0; d < typeOf(def.value).getRank(); ++d)
        os << " * " << dimOf(def.value, d);
      os << ") / " << def.divisor << "LL";
      break;
    }
    case SymbolDef::Kind::Sum:
      os << def.constant << "LL";
      for (auto &[v, d] : def.terms)
        os << " + " << dimOf(v, d);
      break;
    case SymbolDef::Kind::Window:
      os << "window_size(" << dimOf(def.value, def.dim) << ", " << def.kernel
         << ", " << def.stride << ", " << def.padLo << ", " << def.padHi << ", "
         << def.dilation << ", " << (def.ceilMode ? "true" : "false") << ")";
      break;
    case SymbolDef::Kind::Slice:
      os << "std::max<int64_t>(0, (" << dimOf(def.value, def.dim) << " - "
         << def.start << " + " << def.step - 1 << ") / " << def.step << ")";
      break;
    }
    os << ";\n";
  }
  os << "}\n\n";
}

LogicalResult Emitter::emitConstant(ConstantOp op, llvm::raw_ostream &os) {
  auto type = cast<RankedTensorType>(op.getType());
  Type element = type.getElementType();
  Attribute value = op.getValue();
  if (auto splat = dyn_cast<SplatElementsAttr>(value)) {
    std::string literal;
    if (isa<FloatType>(element))
      literal = doubleLiteral(splat.getSplatValue<APFloat>().convertToDouble());
    else if (element.isInteger(1))
      literal = splat.getSplatValue<bool>() ? "true" : "false";
    else
      literal = std::to_string(splat.getSplatValue<APInt>().getSExtValue()) + "LL";
    splats.push_back({op.getResult(), literal});
    slots.push_back(op.getResult());
    return success();
  }
  // Dense data (a small literal or a resource blob) goes into the blob.
  ArrayRef<char> bytes;
  std::vector<char> owned;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *data = resource.getRawHandle().getBlob();
    if (!data)
      return op.emitError("weight '")
             << resource.getRawHandle().getKey()
             << "' has no data (was its IR printed with elided weights?)";
    bytes = data->getData();
  } else if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (element.isInteger(1)) {
      for (bool b : dense.getValues<bool>())
        owned.push_back(b ? 1 : 0);
    } else {
      ArrayRef<char> raw = dense.getRawData();
      owned.assign(raw.begin(), raw.end());
    }
    bytes = owned;
  } else {
    return op.emitError("unsupported constant attribute");
  }
  int64_t expected = type.getNumElements() * elementBytes(element);
  if (static_cast<int64_t>(bytes.size()) != expected)
    return op.emitError("constant has ") << bytes.size() << " bytes, expected "
                                         << expected;
  while (blob.size() % 64)
    blob.push_back(0);
  blobOffsets[op.getResult()] = blob.size();
  std::string entryName = "constant_" + name(op.getResult());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    entryName = resource.getRawHandle().getKey().str();
  blobEntries.push_back({entryName, safetensorsDtype(element),
                         SmallVector<int64_t>(type.getShape()), blob.size(),
                         blob.size() + bytes.size()});
  blob.append(bytes.begin(), bytes.end());
  return success();
}

/// The weights as a .safetensors file: an 8-byte header length, the JSON
/// header (padded so the data starts 64-byte aligned), then the blob.
std::string Emitter::safetensorsFile(int64_t *headerBytes) {
  std::string header;
  llvm::raw_string_ostream os(header);
  os << "{\"__metadata__\":{\"format\":\"thunder\",\"model\":"
     << cppString(options.modelName) << "}";
  for (const BlobEntry &e : blobEntries) {
    os << "," << cppString(e.name) << ":{\"dtype\":\"" << e.dtype
       << "\",\"shape\":[";
    for (auto [i, d] : llvm::enumerate(e.shape))
      os << (i ? "," : "") << d;
    os << "],\"data_offsets\":[" << e.begin << "," << e.end << "]}";
  }
  os << "}";
  while ((8 + header.size()) % 64)
    header.push_back(' ');
  *headerBytes = header.size();
  std::string file(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    file[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return file + header + blob;
}

/// The C++ expression of an elementwise op over compute-typed `a`, `b`, `c`.
FailureOr<std::string> elementwiseExpr(Operation *op, llvm::StringRef C) {
  std::string c = C.str();
  return llvm::TypeSwitch<Operation *, FailureOr<std::string>>(op)
      .Case([](AddOp) { return std::string("a + b"); })
      .Case([](SubOp) { return std::string("a - b"); })
      .Case([](MulOp) { return std::string("a * b"); })
      .Case([](DivOp d) {
        switch (d.getRoundingMode()) {
        case RoundingMode::Floor: return std::string("div_floor(a, b)");
        case RoundingMode::Trunc: return std::string("div_trunc(a, b)");
        default: return std::string("a / b");
        }
      })
      .Case([](RemainderOp) { return std::string("remainder(a, b)"); })
      .Case([](PowOp) { return std::string("power(a, b)"); })
      .Case([](MaximumOp) { return std::string("maximum(a, b)"); })
      .Case([](MinimumOp) { return std::string("minimum(a, b)"); })
      .Case([](LogicalAndOp) { return std::string("a && b"); })
      .Case([](LogicalOrOp) { return std::string("a || b"); })
      .Case([](LogicalXorOp) { return std::string("a != b"); })
      .Case([](LogicalNotOp) { return std::string("!a"); })
      .Case([](NegOp) { return std::string("-a"); })
      .Case([](AbsOp) { return std::string("std::abs(a)"); })
      .Case([](ReluOp) { return std::string("relu(a)"); })
      .Case([](ExpOp) { return std::string("std::exp(a)"); })
      .Case([](LogOp) { return std::string("std::log(a)"); })
      .Case([](Log1pOp) { return std::string("std::log1p(a)"); })
      .Case([](SqrtOp) { return std::string("std::sqrt(a)"); })
      .Case([&](RsqrtOp) { return c + "(1) / std::sqrt(a)"; })
      .Case([&](ReciprocalOp) { return c + "(1) / a"; })
      .Case([](TanhOp) { return std::string("std::tanh(a)"); })
      .Case([](SigmoidOp) { return std::string("sigmoid(a)"); })
      .Case([](ErfOp) { return std::string("std::erf(a)"); })
      .Case([](SinOp) { return std::string("std::sin(a)"); })
      .Case([](CosOp) { return std::string("std::cos(a)"); })
      .Case([](FloorOp) { return std::string("std::floor(a)"); })
      .Case([](CeilOp) { return std::string("std::ceil(a)"); })
      .Case([](SiluOp) { return std::string("silu(a)"); })
      .Case([](GeluOp g) {
        return std::string(g.getApproximate() == GeluApproximation::Tanh
                               ? "gelu_tanh(a)"
                               : "gelu(a)");
      })
      .Case([](CompareOp cmp) {
        switch (cmp.getDirection()) {
        case ComparisonDirection::EQ: return std::string("a == b");
        case ComparisonDirection::NE: return std::string("a != b");
        case ComparisonDirection::LT: return std::string("a < b");
        case ComparisonDirection::LE: return std::string("a <= b");
        case ComparisonDirection::GT: return std::string("a > b");
        case ComparisonDirection::GE: return std::string("a >= b");
        }
        return std::string();
      })
      .Case([](WhereOp) { return std::string("a ? b : c"); })
      .Case([&](ClampOp cl) {
        std::string e = "a";
        if (auto lo = cl.getMin())
          e = "maximum(" + e + ", " + c + "(" + doubleLiteral(lo->convertToDouble()) + "))";
        if (auto hi = cl.getMax())
          e = "minimum(" + e + ", " + c + "(" + doubleLiteral(hi->convertToDouble()) + "))";
        return e;
      })
      .Case([](ConvertOp) { return std::string("a"); })
      .Default([](Operation *) -> FailureOr<std::string> { return failure(); });
}

LogicalResult Emitter::emitElementwise(Operation *op, llvm::raw_ostream &os) {
  if (op->getNumOperands() == 0 || op->getNumResults() != 1 ||
      failed(elementwiseExpr(op, "C")))
    return failure();
  Value result = op->getResult(0);
  // The compute type: of the (first non-condition) operand.
  Value typed = isa<WhereOp>(op) ? op->getOperand(1) : op->getOperand(0);
  std::string C = "compute_t<" + elem(typed) + ">";
  FailureOr<std::string> expr = elementwiseExpr(op, C);
  os << "  {\n    const int64_t n = " << numelExpr(result) << ";\n";
  const char *letters[] = {"a", "b", "c"};
  for (auto [i, operand] : llvm::enumerate(op->getOperands()))
    os << "    const " << elem(operand) << " *in" << i << " = " << name(operand)
       << ";\n";
  os << "    " << elem(result) << " *out = " << name(result) << ";\n"
     << "#pragma omp parallel for simd if (n > 65536)\n"
     << "    for (int64_t i = 0; i < n; ++i) {\n";
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    os << "      const auto " << letters[i] << " = cv(in" << i << "[i]);\n";
  os << "      out[i] = st<" << elem(result) << ">(" << *expr << ");\n"
     << "    }\n  }\n";
  return success();
}

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
  if (succeeded(emitElementwise(op, os)))
    return success();

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
           << c.getGroups() << ", w); }\n";
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

void Emitter::emitShapes(llvm::raw_ostream &os) {
  auto emitShape = [&](Value v) {
    auto dimsOf = plan.dims(v);
    os << "  const int64_t " << shape(v) << "[" << std::max<size_t>(1, dimsOf.size())
       << "] = {";
    for (auto [i, d] : llvm::enumerate(dimsOf))
      os << (i ? ", " : "")
         << (d.isDynamic() ? "sym[" + std::to_string(d.symbol) + "]"
                           : std::to_string(d.size) + "LL");
    os << (dimsOf.empty() ? "1" : "") << "};\n";
  };
  for (BlockArgument arg : func.getArguments())
    emitShape(arg);
  func.walk([&](Operation *op) {
    for (Value r : op->getResults())
      if (isa<RankedTensorType>(r.getType()))
        emitShape(r);
  });
}

LogicalResult Emitter::run(EmittedSources &out) {
  // Names and storage.
  for (BlockArgument arg : func.getArguments())
    names[arg] = "a" + std::to_string(arg.getArgNumber());
  unsigned counter = 0;
  bool ok = true;
  func.walk([&](Operation *op) {
    if (op->getNumResults() != 1)
      return;
    Value result = op->getResult(0);
    names[result] = "v" + std::to_string(counter++);
    if (failed(cppType(typeOf(result).getElementType()))) {
      op->emitError("unsupported element type");
      ok = false;
      return;
    }
    if (auto c = dyn_cast<ConstantOp>(op)) {
      ok &= succeeded(emitConstant(c, llvm::nulls()));
    } else if (!isa<ReshapeOp>(op)) {
      slots.push_back(result);
    }
  });
  if (!ok)
    return failure();

  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// Generated by Thunder for model '" << options.modelName
     << "' (target cpu). Do not edit.\n"
     << "// One kernel per op; each is preceded by the op and its source line.\n"
     << "#include \"thunder_cpu.h\"\n#include \"thunder-c/artifact.h\"\n\n"
     << "#include <cstdio>\n\n"
     << "using namespace thunder_cpu;\n\n"
     << (options.externalWeights
             ? "#include <fcntl.h>\n#include <sys/mman.h>\n#include <sys/stat.h>\n"
               "#include <unistd.h>\n\n"
             : "extern \"C\" const unsigned char thunder_weights_blob[];\n\n")
     << "namespace {\n\n"
     << "constexpr int kNumSymbols = " << plan.symbols().size() << ";\n\n"
     << "inline int64_t window_size(int64_t in, int64_t k, int64_t s, int64_t lo,\n"
     << "                           int64_t hi, int64_t d, bool ceil_mode) {\n"
     << "  int64_t span = in + lo + hi - d * (k - 1) - 1;\n"
     << "  int64_t out = (span + (ceil_mode ? s - 1 : 0)) / s + 1;\n"
     << "  if (ceil_mode && (out - 1) * s >= in + lo) --out;\n"
     << "  return out;\n}\n\n";
  emitSymbols(os);

  // Workspace layout: one 64-byte aligned slot per computed value.
  os << "/// Workspace offsets of every computed value; returns the total bytes.\n"
        "static uint64_t layout(const int64_t *sym, uint64_t *offsets) {\n"
        "  (void)sym;\n  uint64_t at = 0;\n";
  for (auto [i, v] : llvm::enumerate(slots))
    os << "  offsets[" << i << "] = at; at += ((" << numelExpr(v) << ") * "
       << elementBytes(typeOf(v).getElementType()) << "ULL + 63) & ~63ULL;\n";
  os << "  return at;\n}\n\n";

  os << "int run_model(const unsigned char *weights, const thunder_tensor *inputs,\n"
        "              const thunder_tensor *outputs, void *workspace) {\n"
        "  (void)weights;\n"
        "  int64_t sym[kNumSymbols + 1];\n  compute_symbols(inputs, sym);\n"
        "  uint64_t offsets[" << slots.size() + 1 << "];\n"
        "  layout(sym, offsets);\n"
        "  char *ws = static_cast<char *>(workspace);\n  (void)ws;\n";
  emitShapes(os);
  for (BlockArgument arg : func.getArguments())
    os << "  const " << elem(arg) << " *" << name(arg) << " = static_cast<const "
       << elem(arg) << " *>(inputs[" << arg.getArgNumber() << "].data);\n";
  for (auto [i, v] : llvm::enumerate(slots))
    os << "  " << elem(v) << " *" << name(v) << " = reinterpret_cast<" << elem(v)
       << " *>(ws + offsets[" << i << "]);\n";
  for (auto &[v, b] : blobOffsets)
    os << "  const " << elem(v) << " *" << name(v) << " = reinterpret_cast<const "
       << elem(v) << " *>(weights + " << b << ");\n";
  func.walk([&](ReshapeOp r) {
    os << "  const " << elem(r) << " *" << name(r) << " = " << name(r.getOperand())
       << ";\n";
  });
  for (auto &[v, literal] : splats)
    os << "  std::fill(" << name(v) << ", " << name(v) << " + (" << numelExpr(v)
       << "), st<" << elem(v) << ">(" << literal << "));\n";
  os << "\n";

  WalkResult walk = func.walk([&](Operation *op) {
    if (isa<func::FuncOp, func::ReturnOp>(op))
      return WalkResult::advance();
    return failed(emitOp(op, os)) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  os << "  // Results.\n";
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    os << "  std::memcpy(outputs[" << i << "].data, " << name(v) << ", ("
       << numelExpr(v) << ") * " << elementBytes(typeOf(v).getElementType())
       << "ULL);\n";
  os << "  return 0;\n}\n\n";

  // Output shapes and workspace size from the inputs.
  os << "int output_shapes(const void *, const thunder_tensor *inputs,\n"
        "                  int64_t *const *shapes, char *, size_t) {\n"
        "  int64_t sym[kNumSymbols + 1];\n  compute_symbols(inputs, sym);\n";
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    for (unsigned d = 0; d < typeOf(v).getRank(); ++d)
      os << "  shapes[" << i << "][" << d << "] = " << dimExpr(v, d) << ";\n";
  os << "  return 0;\n}\n\n"
     << "uint64_t workspace_bytes(const void *, const thunder_tensor *inputs) {\n"
        "  int64_t sym[kNumSymbols + 1];\n  compute_symbols(inputs, sym);\n"
        "  uint64_t offsets[" << slots.size() + 1 << "];\n"
        "  return layout(sym, offsets);\n}\n\n";
  emitEntry(os);

  out.files.push_back({"model.cpp", text});
  if (options.externalWeights) {
    out.files.push_back({options.modelName + ".safetensors",
                         safetensorsFile(&weightsHeaderBytes)});
    out.artifacts.push_back(options.modelName + ".safetensors");
    out.files.push_back({"thunder_cpu.h", kThunderCpuHeader});
    out.files.push_back({"thunder-c/artifact.h", kArtifactHeader});
    out.compileUnits = {"model.cpp"};
    return success();
  }
  out.files.push_back({"weights.bin", blob});
  out.files.push_back(
      {"weights.S", "# The model's weights, embedded at link time.\n"
                    "\t.section .rodata\n\t.balign 64\n"
                    "\t.globl thunder_weights_blob\n"
                    "\t.type thunder_weights_blob, @object\n"
                    "thunder_weights_blob:\n"
                    "\t.incbin \"weights.bin\"\n\t.byte 0\n"
                    "\t.section .note.GNU-stack,\"\",@progbits\n"});
  out.files.push_back({"thunder_cpu.h", kThunderCpuHeader});
  out.files.push_back({"thunder-c/artifact.h", kArtifactHeader});
  out.compileUnits = {"model.cpp", "weights.S"};
  return success();
}

/// The model state: the embedded blob, or the memory-mapped weights file
/// (checked to be the one this library was compiled with).
std::string Emitter::createAndRun() {
  if (!options.externalWeights)
    return "int create(const char *, void **state, char *, size_t) {\n"
           "  *state = const_cast<unsigned char *>(thunder_weights_blob);\n"
           "  return 0;\n}\n"
           "void destroy(void *) {}\n"
           "int run(const void *state, const thunder_tensor *inputs,\n"
           "        const thunder_tensor *outputs, void *workspace, void *,\n"
           "        char *, size_t) {\n"
           "  return run_model(static_cast<const unsigned char *>(state), inputs,\n"
           "                   outputs, workspace);\n}\n\n";
  uint64_t dataStart = 8 + weightsHeaderBytes;
  return llvm::formatv(R"cpp(struct Weights {{ void *map; size_t size; };
int create(const char *path, void **state, char *error, size_t error_size) {{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {{
    snprintf(error, error_size, "cannot open the weights file %s", path);
    return 1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || uint64_t(st.st_size) != {0}ULL) {{
    close(fd);
    snprintf(error, error_size,
             "the weights file %s has %lld bytes; this model's has {0}",
             path, (long long)st.st_size);
    return 1;
  }
  void *map = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {{
    snprintf(error, error_size, "cannot map the weights file %s", path);
    return 1;
  }
  uint64_t header = 0;
  for (int i = 0; i < 8; ++i)
    header |= uint64_t(static_cast<const unsigned char *>(map)[i]) << (8 * i);
  if (header != {1}ULL) {{
    munmap(map, st.st_size);
    snprintf(error, error_size,
             "the weights file %s was not written for this model", path);
    return 1;
  }
  *state = new Weights{{map, size_t(st.st_size)};
  return 0;
}
void destroy(void *state) {{
  auto *w = static_cast<Weights *>(state);
  munmap(w->map, w->size);
  delete w;
}
int run(const void *state, const thunder_tensor *inputs,
        const thunder_tensor *outputs, void *workspace, void *, char *, size_t) {{
  const auto *w = static_cast<const Weights *>(state);
  return run_model(static_cast<const unsigned char *>(w->map) + {2}, inputs,
                   outputs, workspace);
}

)cpp",
                       dataStart + blob.size(), weightsHeaderBytes, dataStart)
      .str();
}

void Emitter::emitEntry(llvm::raw_ostream &os) {
  auto ranges = func->getAttrOfType<DictionaryAttr>("thunder.symbol_ranges");
  auto describe = [&](llvm::StringRef prefix, unsigned i, Value v,
                      std::string tensorName, ArrayAttr symbols) {
    auto type = typeOf(v);
    std::string p = prefix.str() + std::to_string(i);
    SmallVector<int64_t> shapeV, minV, maxV;
    std::vector<std::string> syms;
    for (unsigned d = 0; d < type.getRank(); ++d) {
      std::string sym;
      if (symbols && d < symbols.size())
        if (auto s = dyn_cast<StringAttr>(symbols[d]))
          sym = s.getValue().str();
      int64_t lo = type.getDimSize(d), hi = type.getDimSize(d);
      if (type.isDynamicDim(d)) {
        lo = 0;
        hi = -1;
        if (ranges && !sym.empty())
          if (auto r = ranges.getAs<DenseI64ArrayAttr>(sym); r && r.size() == 2) {
            lo = std::max<int64_t>(0, r[0]);
            hi = r[1];
          }
      }
      shapeV.push_back(type.isDynamicDim(d) ? -1 : type.getDimSize(d));
      minV.push_back(lo);
      maxV.push_back(hi);
      syms.push_back(sym);
    }
    os << "const int64_t " << p << "_shape[] = " << i64List(shapeV) << ";\n"
       << "const int64_t " << p << "_min[] = " << i64List(minV) << ";\n"
       << "const int64_t " << p << "_max[] = " << i64List(maxV) << ";\n"
       << "const char *const " << p << "_syms[] = {";
    for (auto [k, s] : llvm::enumerate(syms))
      os << (k ? ", " : "") << cppString(s);
    os << (syms.empty() ? "\"\"" : "") << "};\n";
    return llvm::formatv("{{{0}, {1}, {2}, {3}_shape, {3}_min, {3}_max, {3}_syms}",
                         cppString(tensorName), dtypeCode(type.getElementType()),
                         type.getRank(), p)
        .str();
  };
  std::vector<std::string> inputs, outputs;
  for (BlockArgument arg : func.getArguments()) {
    std::string argName = "input_" + std::to_string(arg.getArgNumber());
    if (auto n = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "thunder.name"))
      argName = n.getValue().str();
    inputs.push_back(describe("in", arg.getArgNumber(), arg, argName,
                              func.getArgAttrOfType<ArrayAttr>(
                                  arg.getArgNumber(), "thunder.dim_symbols")));
  }
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    // The importer names the symbols of the outputs' dynamic dims on their
    // producers.
    ArrayAttr symbols;
    if (Operation *producer = v.getDefiningOp())
      symbols = producer->getAttrOfType<ArrayAttr>("thunder.dim_symbols");
    if (auto arg = dyn_cast<BlockArgument>(v))
      symbols = func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(),
                                                 "thunder.dim_symbols");
    outputs.push_back(
        describe("out", i, v, "output_" + std::to_string(i), symbols));
  }
  os << "const thunder_tensor_desc kInputs[] = {" << llvm::join(inputs, ", ")
     << (inputs.empty() ? "{}" : "") << "};\n"
     << "const thunder_tensor_desc kOutputs[] = {" << llvm::join(outputs, ", ")
     << "};\n\n"
     << createAndRun()
     << "} // namespace\n\n"
        "extern \"C\" __attribute__((visibility(\"default\")))\n"
        "const thunder_model_v1 *thunder_model_entry_v1(void) {\n"
        "  static const thunder_model_v1 table = {\n"
        "      THUNDER_ABI_VERSION, sizeof(thunder_model_v1), "
     << cppString(options.modelName) << ", \"cpu\", THUNDER_DEVICE_CPU,\n      "
     << inputs.size() << ", " << outputs.size()
     << ", kInputs, kOutputs, "
     << cppString(options.externalWeights ? options.modelName + ".safetensors" : "")
     << ",\n"
        "      create, destroy, output_shapes, workspace_bytes, run};\n"
        "  return &table;\n}\n";
}

} // namespace

namespace thunder {

llvm::StringRef CPUBackend::name() const { return "cpu"; }

FailureOr<EmittedSources> CPUBackend::emit(ModuleOp module,
                                           const TargetOptions &options) {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  if (funcs.size() != 1)
    return module.emitError("expects one function to compile, found ")
           << funcs.size();
  FailureOr<ShapePlan> plan = ShapePlan::build(funcs.front());
  if (failed(plan))
    return failure();
  EmittedSources sources;
  if (failed(Emitter(funcs.front(), *plan, options).run(sources)))
    return failure();
  return sources;
}

ToolchainCommand CPUBackend::link(const EmittedSources &sources,
                                  llvm::StringRef buildDir,
                                  llvm::StringRef output,
                                  const TargetOptions &options) const {
  ToolchainCommand cmd;
  std::string dir = buildDir.str();
  cmd.argv = {"c++", "-std=c++17", "-O" + std::to_string(options.optLevel),
              "-march=" + options.cpu, "-fopenmp", "-fPIC", "-shared",
              "-fvisibility=hidden", "-I" + dir,
              // .incbin "weights.bin" is looked up in the build directory.
              "-Wa,-I," + dir};
  for (const std::string &unit : sources.compileUnits)
    cmd.argv.push_back(dir + "/" + unit);
  cmd.argv.insert(cmd.argv.end(),
                  {"-o", output.str(), "-lopenblas", "-Wl,--no-undefined"});
  return cmd;
}

} // namespace thunder
