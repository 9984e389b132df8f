//===- ArtifactSource.cpp - What every C-family artifact source holds -----===//
#include "thunder/Target/Common/ArtifactSource.h"

#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "thunder/Dialect/Thunder/IR/RandomOps.h"
#include "thunder/Target/Common/RandomTable.h"
#include "thunder/Target/Common/FusedBody.h"
#include "thunder/Target/ShapePlan.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>

using namespace mlir;

namespace thunder::codegen {

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

std::string i64List(ArrayRef<int64_t> values) {
  std::string s = "{";
  for (auto [i, v] : llvm::enumerate(values))
    s += (i ? ", " : "") + std::to_string(v) + "LL";
  return s + (values.empty() ? "0}" : "}");
}

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

void emitOutputShapes(llvm::raw_ostream &os, func::FuncOp func,
                      llvm::function_ref<std::string(Value, unsigned)> dim) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  os << "int output_shapes(const void *, const thunder_tensor *inputs,\n"
        "                  int64_t *const *shapes, char *error, size_t error_size) {\n"
        "  (void)error;\n  (void)error_size;\n"
        "  int64_t sym[kNumSymbols + 1];\n  compute_symbols(inputs, sym);\n";
  // Run-time refusals of sizes the model cannot run with, before anything
  // runs (the runtime computes output shapes first): an argmax/argmin along
  // a dim that is empty in this run has no index to return (PyTorch raises).
  func.walk([&](Operation *op) {
    if (!isa<mlir::thunder::ArgMaxOp, mlir::thunder::ArgMinOp>(op))
      return;
    Value input = op->getOperand(0);
    auto type = cast<RankedTensorType>(input.getType());
    int64_t d = op->getAttrOfType<IntegerAttr>("dim").getInt();
    if (type.getRank() == 0 || !type.isDynamicDim(d))
      return;
    std::string where = sourceOf(op->getLoc());
    std::string message = (op->getName().stripDialect() + " along dim " + llvm::Twine(d) +
                           ", which is 0 in this run" +
                           (where.empty() ? "" : " (at " + where + ")") +
                           ": an empty dim has no index to return (PyTorch raises too)")
                              .str();
    os << "  if (" << dim(input, d) << " == 0) {\n"
       << "    snprintf(error, error_size, \"%s\", " << cppString(message) << ");\n"
       << "    return 1;\n  }\n";
  });
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    for (unsigned d = 0; d < cast<RankedTensorType>(v.getType()).getRank(); ++d)
      os << "  shapes[" << i << "][" << d << "] = " << dim(v, d) << ";\n";
  os << "  return 0;\n}\n\n";
}

void emitOpComment(llvm::raw_ostream &os, Operation *op, llvm::StringRef indent) {
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

std::string splatLiteral(SplatElementsAttr splat) {
  Type element = splat.getElementType();
  if (isa<FloatType>(element))
    return doubleLiteral(splat.getSplatValue<APFloat>().convertToDouble());
  if (element.isInteger(1))
    return splat.getSplatValue<bool>() ? "true" : "false";
  return std::to_string(splat.getSplatValue<APInt>().getSExtValue()) + "LL";
}

std::vector<std::pair<Value, uint64_t>>
inBlobOrder(const llvm::DenseMap<Value, uint64_t> &offsets,
            llvm::function_ref<std::string(Value)> name) {
  std::vector<std::tuple<uint64_t, std::string, Value>> sorted;
  for (auto &[v, offset] : offsets)
    sorted.emplace_back(offset, name(v), v);
  llvm::sort(sorted, [](const auto &a, const auto &b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  std::vector<std::pair<Value, uint64_t>> out;
  for (auto &[offset, n, v] : sorted)
    out.emplace_back(v, offset);
  return out;
}

void emitComputeSymbols(llvm::raw_ostream &os, const ShapePlan &plan,
                        llvm::function_ref<std::string(Value, unsigned)> dim) {
  os << "/// Sizes of the dynamic dims (ShapePlan), from the inputs' shapes.\n"
        "static void compute_symbols(const thunder_tensor *inputs, int64_t *sym) {\n"
        "  (void)inputs; (void)sym;\n";
  for (auto [i, def] : llvm::enumerate(plan.symbols())) {
    os << "  sym[" << i << "] = ";
    switch (def.kind) {
    case SymbolDef::Kind::ArgDim:
      os << "inputs[" << def.arg << "].shape[" << def.dim << "]";
      break;
    case SymbolDef::Kind::NumelQuotient:
      os << "(int64_t(1)";
      for (unsigned d = 0; d < cast<RankedTensorType>(def.value.getType()).getRank(); ++d)
        os << " * " << dim(def.value, d);
      os << ") / " << def.divisor << "LL";
      break;
    case SymbolDef::Kind::Sum:
      os << def.constant << "LL";
      for (auto &[v, d] : def.terms)
        os << " + " << dim(v, d);
      break;
    case SymbolDef::Kind::Window:
      os << "window_size(" << dim(def.value, def.dim) << ", " << def.kernel << ", "
         << def.stride << ", " << def.padLo << ", " << def.padHi << ", " << def.dilation
         << ", " << (def.ceilMode ? "true" : "false") << ")";
      break;
    case SymbolDef::Kind::Slice: {
      // The end at run time: clamped to the size, or counted from it; a
      // negative start counts from it too, clamped at 0.
      std::string size = dim(def.value, def.dim), end;
      auto fromSize = [&](int64_t i) {
        return "std::max<int64_t>(0, " + size + " - " + std::to_string(-i) + "LL)";
      };
      if (def.end == std::numeric_limits<int64_t>::max())
        end = size;
      else if (def.end < 0)
        end = fromSize(def.end);
      else
        end = "std::min<int64_t>(" + size + ", " + std::to_string(def.end) + "LL)";
      std::string start = def.start < 0 ? fromSize(def.start) : std::to_string(def.start);
      os << "std::max<int64_t>(0, (" << end << " - " << start << " + " << def.step - 1
         << ") / " << def.step << ")";
      break;
    }
    }
    os << ";\n";
  }
  os << "}\n\n";
}

/// Writes the shape, min, max and symbol arrays of one tensor and returns
/// its thunder_tensor_desc initializer.
static std::string describeTensor(llvm::raw_ostream &os, llvm::StringRef prefix, unsigned i,
                                  Value v, llvm::StringRef tensorName, ArrayAttr symbols,
                                  DictionaryAttr ranges) {
  auto type = cast<RankedTensorType>(v.getType());
  std::string p = prefix.str() + std::to_string(i);
  SmallVector<int64_t> shape, lo, hi;
  std::vector<std::string> syms;
  for (unsigned d = 0; d < type.getRank(); ++d) {
    std::string sym;
    if (symbols && d < symbols.size())
      if (auto s = dyn_cast<StringAttr>(symbols[d]))
        sym = s.getValue().str();
    int64_t min = type.getDimSize(d), max = type.getDimSize(d);
    if (type.isDynamicDim(d)) {
      min = 0;
      max = -1;
      if (ranges && !sym.empty())
        if (auto r = ranges.getAs<DenseI64ArrayAttr>(sym); r && r.size() == 2) {
          min = std::max<int64_t>(0, r[0]);
          max = r[1];
        }
    }
    shape.push_back(type.isDynamicDim(d) ? -1 : type.getDimSize(d));
    lo.push_back(min);
    hi.push_back(max);
    syms.push_back(sym);
  }
  os << "const int64_t " << p << "_shape[] = " << i64List(shape) << ";\n"
     << "const int64_t " << p << "_min[] = " << i64List(lo) << ";\n"
     << "const int64_t " << p << "_max[] = " << i64List(hi) << ";\n"
     << "const char *const " << p << "_syms[] = {";
  for (auto [k, s] : llvm::enumerate(syms))
    os << (k ? ", " : "") << cppString(s);
  os << (syms.empty() ? "\"\"" : "") << "};\n";
  return llvm::formatv("{{{0}, {1}, {2}, {3}_shape, {3}_min, {3}_max, {3}_syms}",
                       cppString(tensorName), dtypeCode(type.getElementType()),
                       type.getRank(), p)
      .str();
}

void emitTensorDescs(llvm::raw_ostream &os, func::FuncOp func) {
  auto ranges = func->getAttrOfType<DictionaryAttr>("thunder.symbol_ranges");
  std::vector<std::string> inputs, outputs;
  for (BlockArgument arg : func.getArguments()) {
    unsigned k = arg.getArgNumber();
    std::string name = "input_" + std::to_string(k);
    if (auto n = func.getArgAttrOfType<StringAttr>(k, "thunder.name"))
      name = n.getValue().str();
    inputs.push_back(describeTensor(os, "in", k, arg, name,
                                    func.getArgAttrOfType<ArrayAttr>(k, "thunder.dim_symbols"),
                                    ranges));
  }
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    // The importer names the symbols of the outputs' dynamic dims on their
    // producers.
    ArrayAttr symbols;
    if (Operation *producer = v.getDefiningOp())
      symbols = producer->getAttrOfType<ArrayAttr>("thunder.dim_symbols");
    if (auto arg = dyn_cast<BlockArgument>(v))
      symbols = func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), "thunder.dim_symbols");
    outputs.push_back(
        describeTensor(os, "out", i, v, "output_" + std::to_string(i), symbols, ranges));
  }
  os << "const thunder_tensor_desc kInputs[] = {" << llvm::join(inputs, ", ")
     << (inputs.empty() ? "{}" : "") << "};\n"
     << "const thunder_tensor_desc kOutputs[] = {" << llvm::join(outputs, ", ") << "};\n\n";
}

void emitEntryTable(llvm::raw_ostream &os, func::FuncOp func, llvm::StringRef modelName,
                    llvm::StringRef target, llvm::StringRef deviceEnum,
                    llvm::StringRef weightsFile) {
  os << "extern \"C\" __attribute__((visibility(\"default\")))\n"
        "const thunder_model_v1 *thunder_model_entry_v1(void) {\n"
        "  static const thunder_model_v1 table = {\n"
        "      THUNDER_ABI_VERSION, sizeof(thunder_model_v1), "
     << cppString(modelName) << ", " << cppString(target) << ", " << deviceEnum << ",\n      "
     << func.getNumArguments() << ", " << func.getNumResults() << ", kInputs, kOutputs, "
     << cppString(weightsFile) << ",\n"
     << "      create, destroy, output_shapes, workspace_bytes, run};\n"
        "  return &table;\n}\n";
}

bool usesRandom(func::FuncOp func) {
  return func.walk([](mlir::thunder::RandomOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

void emitRandomTable(llvm::raw_ostream &os) {
  // thunder_model_entry_v1 may be a macro (-D...=thunder_model_entry_v1_cuda):
  // the paste happens after its expansion.
  os << "\n#define THUNDER_PASTE2(a, b) a##b\n#define THUNDER_PASTE(a, b) THUNDER_PASTE2(a, b)\n"
        "extern \"C\" __attribute__((visibility(\"default\")))\n"
        "const thunder_model_random_v1 *THUNDER_PASTE(thunder_model_entry_v1, _random)(void) {\n"
        "  static const thunder_model_random_v1 table = {\n"
        "      sizeof(thunder_model_random_v1), thunder_model_entry_v1(), run_seeded};\n"
        "  return &table;\n}\n";
}

} // namespace thunder::codegen
