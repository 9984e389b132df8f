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

#include "Emitter.h"

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
} // namespace

namespace thunder::cpu {


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
  // Values inside kernels share the arrays of the values outside.
  for (Operation &op : func.getBody().front())
    for (Value r : op.getResults())
      if (isa<RankedTensorType>(r.getType()))
        emitShape(r);
}

LogicalResult Emitter::run(EmittedSources &out) {
  // Names and storage.
  for (BlockArgument arg : func.getArguments())
    names[arg] = "a" + std::to_string(arg.getArgNumber());
  unsigned counter = 0;
  bool ok = true;
  for (Operation &top : func.getBody().front().without_terminator()) {
    Operation *op = &top;
    if (!isa<FusionOp, ConstantOp, ReshapeOp>(op)) {
      op->emitError("the CPU backend expects kernels (thunder.fusion), "
                    "constants and views at the top level; run the kernel "
                    "pipeline (thunder-kernel-pipeline) first");
      ok = false;
      continue;
    }
    for (Value result : op->getResults()) {
      names[result] = "v" + std::to_string(counter++);
      if (failed(cppType(typeOf(result).getElementType()))) {
        op->emitError("unsupported element type");
        ok = false;
        continue;
      }
      if (auto c = dyn_cast<ConstantOp>(op))
        ok &= succeeded(emitConstant(c, llvm::nulls()));
      else if (!isa<ReshapeOp>(op))
        slots.push_back(result);
    }
  }
  // Element types inside kernels.
  func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      if (auto type = dyn_cast<RankedTensorType>(result.getType());
          type && failed(cppType(type.getElementType()))) {
        op->emitError("unsupported element type");
        ok = false;
      }
  });
  if (!ok)
    return failure();

  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// Generated by Thunder for model '" << options.modelName
     << "' (target cpu). Do not edit.\n"
     << "// One block per kernel, in launch order; each names its ops and source lines.\n"
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
  for (auto r : func.getBody().front().getOps<ReshapeOp>())
    os << "  const " << elem(r) << " *" << name(r) << " = " << name(r.getOperand())
       << ";\n";
  for (auto &[v, literal] : splats)
    os << "  std::fill(" << name(v) << ", " << name(v) << " + (" << numelExpr(v)
       << "), st<" << elem(v) << ">(" << literal << "));\n";
  os << "\n";

  for (auto fusion : func.getBody().front().getOps<FusionOp>())
    if (failed(emitFusion(fusion, os)))
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
  // The weights file first: the entry's create() checks its exact size.
  std::string weightsFile;
  if (options.externalWeights)
    weightsFile = safetensorsFile(&weightsHeaderBytes);
  emitEntry(os);

  out.files.push_back({"model.cpp", text});
  if (options.externalWeights) {
    out.files.push_back({options.modelName + ".safetensors",
                         std::move(weightsFile)});
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
           "  thunder_cpu_init();\n"
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
  thunder_cpu_init();
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

} // namespace thunder::cpu

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
  if (failed(cpu::Emitter(funcs.front(), *plan, options).run(sources)))
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
                  {"-o", output.str(), "-ldnnl", "-lopenblas", "-Wl,--no-undefined"});
  return cmd;
}

} // namespace thunder
