//===- EmitKernels.cpp - A CUDA kernel or library call per unit -----------===//
//
// A unit is a fusion region or a top-level op. Pointwise work (elementwise
// ops, converts, broadcasts, transposes, slices, reshapes) becomes one
// generated kernel whose per-element body comes from the shared generator
// (Common/FusedBody.h): 16-byte vector loads and stores for the inputs read
// in the output's order, index arithmetic for the others, a scalar loop for
// the tail. A reduction region over trailing dims is one row kernel: a block
// per row, a pass and a block reduction per reduction, then the outputs; a
// row input read by several passes is kept in shared memory when it fits. A
// region around one library op (GEMM, convolution, attention, a
// normalization...) calls the support header for it and runs its pointwise
// epilogue as one generated kernel after it, or in cuBLASLt's epilogue when
// the chain is bias (+ReLU | tanh-GELU). Any other region runs op by op,
// with its intermediates in the stream's scratch memory.
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
  // (Not iota: the shared generator has no per-element iota; it is the
  // header's kernel.)
  if (isa<BroadcastOp, ExpandOp, TransposeOp, SliceOp, ReshapeOp, ConstantOp>(op))
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
// Pointwise and row-reduction kernels on the shared body generator
//===----------------------------------------------------------------------===//

codegen::BodyContext Emitter::bodyContext(llvm::StringRef innerVar) {
  codegen::BodyContext ctx;
  ctx.dim = [this](Value v, unsigned d) { return kernelDim(v, d); };
  // Pointwise kernels bind every value they read from memory to a pointer
  // (BodyEmitter::bindMemory), region inputs included; the row kernel reads
  // region inputs through its own `load` (its row cache).
  ctx.load = [](unsigned arg, const std::string &offset) {
    return "in" + std::to_string(arg) + "[" + offset + "]";
  };
  ctx.storageType = [](Type t) { return *cpu::cppType(t); };
  ctx.innerVar = innerVar.str();
  return ctx;
}

/// Whether every read of pointer `p` in `code` is at `[i]`, the loop's flat
/// position (and at least one read is).
static bool readsInLoopOrder(llvm::StringRef code, const std::string &p, bool &reads) {
  std::string open = p + "[";
  for (size_t at = code.find(open); at != llvm::StringRef::npos;
       at = code.find(open, at + 1)) {
    // "in1[" must not match the tail of another name.
    if (at > 0 && (llvm::isAlnum(code[at - 1]) || code[at - 1] == '_'))
      continue;
    reads = true;
    if (!code.substr(at + open.size()).starts_with("i]"))
      return false;
  }
  return true;
}

LogicalResult Emitter::emitPointwise(const std::string &kernel, ArrayRef<Operation *> ops,
                                     ArrayRef<Value> leaves, ArrayRef<Value> roots,
                                     ArrayRef<std::string> dests, llvm::raw_ostream &device,
                                     llvm::raw_ostream &host) {
  Value out = roots.front();
  int r = rank(out);
  // The loop's index: the flat position `i`, and per dim `idx_d` (declared
  // from `i` only when some value is read out of loop order).
  codegen::Index index;
  for (int d = 0; d < r; ++d)
    index.dims.push_back("idx_" + std::to_string(d));
  index.flat = "i";
  codegen::BodyEmitter body(bodyContext(""));
  for (auto [k, leaf] : llvm::enumerate(leaves))
    body.bindMemory(leaf, "in" + std::to_string(k));
  std::vector<std::string> vars;
  for (Value root : roots) {
    FailureOr<std::string> v = body.emit(root, index);
    if (failed(v))
      return failure();
    vars.push_back(*v);
  }
  std::string scalarCode = body.takeElementCode();
  // Stores to `out` at [i] (the tail) or to `y` at [j] (the vector loop).
  auto stores = [&](llvm::StringRef to, llvm::StringRef at) {
    std::string text;
    for (auto [k, v] : llvm::enumerate(roots))
      text += "      " + to.str() + std::to_string(k) + "[" + at.str() + "] = st<" + elem(v) +
              ">(" + vars[k] + ");\n";
    return text;
  };
  // The multi-index of `i`, when some value is read out of loop order.
  std::string indexCode;
  {
    SmallVector<std::string, 4> shape;
    for (int d = 0; d < r; ++d)
      shape.push_back(kernelDim(out, d));
    SmallVector<std::string, 4> dims = codegen::BodyEmitter::delinearize("i", shape);
    for (int d = 0; d < r; ++d)
      indexCode += "      const int64_t idx_" + std::to_string(d) + " = " + dims[d] +
                   ";\n      (void)idx_" + std::to_string(d) + ";\n";
  }

  // Inputs read only at [i] (in loop order) are loaded 16 bytes at a time
  // when there is one; the others (broadcasts, transposes, slices) by index.
  SmallVector<int> read;
  for (size_t k = 0; k < leaves.size(); ++k) {
    bool reads = false;
    if (readsInLoopOrder(scalarCode, "in" + std::to_string(k), reads) && reads)
      read.push_back(int(k));
  }
  bool vectorize = !read.empty();
  bool needsIndex = llvm::StringRef(scalarCode).contains("idx_");
  int vec = 1;
  if (vectorize) {
    // 16 bytes of the widest type read or written.
    int64_t widest = 1;
    for (int k : read)
      widest = std::max(widest, elementBytes(typeOf(leaves[k]).getElementType()));
    for (Value v : roots)
      widest = std::max(widest, elementBytes(typeOf(v).getElementType()));
    vec = int(16 / widest);
  }

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
  for (auto [k, v] : llvm::enumerate(leaves))
    device << ", const " << elem(v) << " *in" << k;
  for (auto [k, v] : llvm::enumerate(roots))
    device << ", " << elem(v) << " *out" << k;
  device << ") {\n  (void)S;\n"
         << "  const int64_t stride = grid_size(), t = thread_index();\n";
  if (!needsIndex)
    indexCode.clear();
  if (vectorize) {
    // The vector body: the scalar one at i = v * V + j, with the inputs read
    // in loop order taken from the vectors just loaded.
    std::string vectorCode;
    {
      llvm::StringRef code = scalarCode;
      llvm::SmallDenseSet<int> isRead(read.begin(), read.end());
      for (size_t at = 0; at < code.size();) {
        size_t next = code.find("in", at);
        if (next == llvm::StringRef::npos) {
          vectorCode += code.substr(at).str();
          break;
        }
        vectorCode += code.substr(at, next - at).str();
        size_t end = next + 2;
        while (end < code.size() && llvm::isDigit(code[end]))
          ++end;
        unsigned k = 0;
        bool boundary = next == 0 || !(llvm::isAlnum(code[next - 1]) || code[next - 1] == '_');
        if (boundary && end > next + 2 && !code.substr(next + 2, end - next - 2).getAsInteger(10, k) &&
            isRead.count(int(k)) && code.substr(end).starts_with("[i]")) {
          vectorCode += "x" + std::to_string(k) + "[j]";
          at = end + 3;
        } else {
          vectorCode += code.substr(next, end - next).str();
          at = end;
        }
      }
    }
    device << "  constexpr int V = " << vec << ";\n  int64_t done = 0;\n  if (true";
    for (int k : read)
      device << " && aligned<V>(in" << k << ")";
    for (size_t k = 0; k < roots.size(); ++k)
      device << " && aligned<V>(out" << k << ")";
    device << ") {\n    const int64_t nv = n / V;\n"
           << "    for (int64_t v = t; v < nv; v += stride) {\n";
    for (int k : read)
      device << "      " << elem(leaves[k]) << " x" << k << "[V];\n      load_vec<V>(in" << k
             << " + v * V, x" << k << ");\n";
    for (auto [k, v] : llvm::enumerate(roots))
      device << "      " << elem(v) << " y" << k << "[V];\n";
    device << "#pragma unroll\n      for (int j = 0; j < V; ++j) {\n"
           << "      const int64_t i = v * V + j;\n      (void)i;\n"
           << indexCode << vectorCode << stores("y", "j") << "      }\n";
    for (size_t k = 0; k < roots.size(); ++k)
      device << "      store_vec<V>(out" << k << " + v * V, y" << k << ");\n";
    device << "    }\n    done = nv * V;\n  }\n"
           << "  // The tail (everything, when a pointer is not aligned for vectors).\n"
           << "  for (int64_t i = done + t; i < n; i += stride) {\n"
           << indexCode << scalarCode << stores("out", "i") << "  }\n}\n\n";
  } else {
    device << "  for (int64_t i = t; i < n; i += stride) {\n"
           << indexCode << scalarCode << stores("out", "i") << "  }\n}\n\n";
  }

  host << "    {\n      const int64_t n = " << numelExpr(out) << ";\n"
       << "      if (n > 0)\n        " << kernel << "<<<grid_for(";
  if (vec > 1)
    host << "(n + " << vec - 1 << ") / " << vec;
  else
    host << "n";
  host << ", kBlock, c), kBlock, 0, c.stream>>>(n, S";
  for (Value v : leaves)
    host << ", " << name(v);
  for (const std::string &d : dests)
    host << ", " << d;
  host << ");\n    }\n";
  return success();
}

LogicalResult Emitter::emitOpKernel(const std::string &kernel, Operation *op,
                                    llvm::raw_ostream &device, llvm::raw_ostream &host) {
  // The op's operands are read from memory, splat constants inline.
  llvm::SetVector<Value> leaves;
  for (Value v : op->getOperands()) {
    auto constant = v.getDefiningOp<ConstantOp>();
    if (!constant || !isa<SplatElementsAttr>(constant.getValue()))
      leaves.insert(v);
  }
  Value r = op->getResult(0);
  return emitPointwise(kernel, {op}, leaves.getArrayRef(), {r}, {name(r)}, device, host);
}

namespace {
/// The trailing dims a row reduction reduces (how many), or -1 when it
/// reduces other dims.
int64_t trailingReduced(Operation *op) {
  ArrayRef<int64_t> dims;
  int64_t rank = cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
  llvm::TypeSwitch<Operation *>(op).Case<SumOp, MeanOp, MaxOp, MinOp, ProdOp>(
      [&](auto r) { dims = r.getDims(); });
  SmallVector<int64_t> sorted(dims.begin(), dims.end());
  llvm::sort(sorted);
  for (auto [k, d] : llvm::enumerate(sorted))
    if (d != rank - int64_t(sorted.size()) + int64_t(k))
      return -1;
  return sorted.size();
}
} // namespace

FailureOr<bool> Emitter::emitRowReduction(Unit &unit, FusionOp fusion,
                                          llvm::raw_ostream &device, llvm::raw_ostream &host) {
  Block &block = fusion.getBody().front();
  auto yield = cast<YieldOp>(block.getTerminator());
  SmallVector<Operation *> reductions, ops;
  for (Operation &op : block.without_terminator()) {
    if (isa<ConstantOp>(op))
      continue;
    ops.push_back(&op);
    if (isa<SumOp, MeanOp, MaxOp, MinOp, ProdOp>(op))
      reductions.push_back(&op);
    else if (!isPointwise(&op))
      return false; // not a row kernel: run op by op
  }
  if (reductions.empty())
    return false;
  Value rowInput = reductions.front()->getOperand(0);
  int64_t fullRank = rank(rowInput), innerRank = trailingReduced(reductions.front());
  if (innerRank <= 0)
    return false;
  auto samePlanDims = [&](Value a, Value b, int64_t count) {
    auto da = plan.dims(a), db = plan.dims(b);
    if (int64_t(da.size()) < count || int64_t(db.size()) < count)
      return false;
    for (int64_t d = 0; d < count; ++d)
      if (da[d].size != db[d].size || da[d].symbol != db[d].symbol)
        return false;
    return true;
  };
  auto isFull = [&](Value v) {
    return rank(v) == fullRank && samePlanDims(v, rowInput, fullRank);
  };
  int64_t outerRank = fullRank - innerRank;
  // A per-row value: the outer dims, then (keepdim) size-1 dims.
  auto isRow = [&](Value v) {
    if (rank(v) < outerRank || !samePlanDims(v, rowInput, outerRank))
      return false;
    for (int64_t d = outerRank; d < rank(v); ++d)
      if (plan.dims(v)[d].isDynamic() || plan.dims(v)[d].size != 1)
        return false;
    return true;
  };
  for (Operation *r : reductions)
    if (!isFull(r->getOperand(0)) || trailingReduced(r) != innerRank)
      return false;
  for (Value v : yield.getValues())
    if (!isFull(v) && !isRow(v))
      return false;

  // The row cache: an input read at the row's flat position in more than
  // one pass is kept in dynamic shared memory (when it fits, decided at
  // launch) by the first pass that reads it, and read from there by the
  // later ones. The offset alone decides: every read at it is element
  // `inner_j` of this row's `inner` elements, whatever the input's shape (a
  // full-shape input, or one reshaped to it like attention's scores).
  // Whether an input is read again is known only once every pass is
  // emitted, so such reads are emitted as markers ("@fill:k@" for the
  // first, "@read:k@" for the others) and replaced at the end. Region inputs
  // are therefore read through the context's `load`, not bound to memory.
  const std::string rowFlat = "prow * inner + inner_j";
  SmallVector<unsigned> rowReads(block.getNumArguments(), 0);
  codegen::BodyContext context = bodyContext("inner_j");
  context.load = [&](unsigned arg, const std::string &offset) {
    std::string k = std::to_string(arg);
    if (offset != rowFlat)
      return "in" + k + "[" + offset + "]";
    return (rowReads[arg]++ == 0 ? "@fill:" : "@read:") + k + "@";
  };
  codegen::BodyEmitter body(context);
  SmallVector<std::string, 4> shape = body.shapeOf(rowInput);
  ArrayRef<std::string> outerShape = ArrayRef<std::string>(shape).take_front(outerRank);
  ArrayRef<std::string> innerShape = ArrayRef<std::string>(shape).drop_front(outerRank);
  codegen::Index full;
  full.dims = codegen::BodyEmitter::delinearize("prow", outerShape);
  for (const std::string &d : codegen::BodyEmitter::delinearize("inner_j", innerShape))
    full.dims.push_back(d);
  full.flat = rowFlat;
  auto rowIndex = [&](Value v) {
    codegen::Index index;
    index.dims = codegen::BodyEmitter::delinearize("prow", outerShape);
    index.dims.resize(rank(v), "0");
    index.flat = "prow";
    return index;
  };

  // Per-row statements at the row loop's depth.
  auto rowCode = [&body] {
    std::string text = body.takeRowCode(), indented;
    for (llvm::StringRef line : llvm::split(text, '\n'))
      if (!line.empty())
        indented += (line.starts_with("  ") ? line.drop_front(2) : line).str() + "\n";
    return indented;
  };
  std::string code;
  llvm::raw_string_ostream os(code);
  for (auto [k, reduction] : llvm::enumerate(reductions)) {
    FailureOr<std::string> v = body.emit(reduction->getOperand(0), full);
    if (failed(v))
      return failure();
    std::string element = body.takeElementCode();
    std::string S = elem(reduction->getResult(0));
    std::string A = "acc_t<" + S + ">", C = "compute_t<" + S + ">";
    const char *kind = isa<ProdOp>(reduction)  ? "Reduce::Prod"
                       : isa<MaxOp>(reduction) ? "Reduce::Max"
                       : isa<MinOp>(reduction) ? "Reduce::Min"
                                               : "Reduce::Sum";
    std::string a = "a" + std::to_string(k), acc = "acc" + std::to_string(k);
    os << "    // Pass " << k << ": " << reduction->getName().stripDialect() << ".\n"
       << rowCode() << "    " << A << " " << a << " = reduce_init<" << kind << ", "
       << A << ">();\n"
       << "    for (int64_t inner_j = threadIdx.x; inner_j < inner; inner_j += blockDim.x) {\n"
       << element << "      " << a << " = reduce_op<" << kind << ">(" << a << ", static_cast<"
       << A << ">(" << *v << "));\n    }\n"
       << "    " << a << " = block_reduce<" << kind << ">(" << a << ", reinterpret_cast<" << A
       << " *>(scratch));\n"
       << "    const " << C << " " << acc << " = static_cast<" << C << ">("
       << (isa<MeanOp>(reduction) ? a + " / static_cast<" + A + ">(inner)" : a) << ");\n";
    body.bind(reduction->getResult(0), acc);
  }
  // Results: per-row values once per row (by thread 0), full rows in one
  // more pass.
  std::string fullStores;
  for (auto [i, value] : llvm::enumerate(yield.getValues())) {
    std::string store = "out" + std::to_string(i);
    std::string S = elem(fusion.getResult(i));
    if (isFull(value)) {
      FailureOr<std::string> v = body.emit(value, full);
      if (failed(v))
        return failure();
      fullStores += "      " + store + "[prow * inner + inner_j] = st<" + S + ">(" + *v + ");\n";
      continue;
    }
    FailureOr<std::string> v = body.emit(value, rowIndex(value));
    if (failed(v))
      return failure();
    os << rowCode() << "    if (threadIdx.x == 0)\n      " << store
       << "[prow] = st<" << S << ">(" << *v << ");\n";
  }
  if (!fullStores.empty()) {
    std::string element = body.takeElementCode();
    os << "    // The full rows.\n"
       << rowCode()
       << "    for (int64_t inner_j = threadIdx.x; inner_j < inner; inner_j += blockDim.x) {\n"
       << element << fullStores << "    }\n";
  }

  // The inputs read more than once share the row cache, one 16-byte aligned
  // array each, in their storage type (bf16 stays 2 bytes); the others, and
  // every input when the cache does not fit, are read from global memory.
  std::string cacheBytes, cacheArrays;
  for (BlockArgument arg : block.getArguments()) {
    unsigned n = arg.getArgNumber();
    std::string k = std::to_string(n), S = elem(arg);
    std::string global = "in" + k + "[" + rowFlat + "]", shared = "row" + k + "[inner_j]";
    std::string fill = global, read = global;
    if (rowReads[n] > 1) {
      cacheArrays += "  " + S + " *row" + k + " = reinterpret_cast<" + S + " *>(row_cache" +
                     (cacheBytes.empty() ? "" : " + " + cacheBytes) + ");\n";
      int64_t bytes = elementBytes(typeOf(arg).getElementType());
      cacheBytes += (cacheBytes.empty() ? "" : " + ") + std::string("align16(inner * ") +
                    std::to_string(bytes) + ")";
      fill = "row_fill(cached, " + shared + ", " + global + ")";
      read = "(cached ? " + shared + " : " + global + ")";
    }
    for (auto [marker, text] : {std::pair{"@fill:" + k + "@", fill}, {"@read:" + k + "@", read}})
      for (size_t at = code.find(marker); at != std::string::npos;
           at = code.find(marker, at + text.size()))
        code.replace(at, marker.size(), text);
  }
  bool cache = !cacheBytes.empty();

  std::string kernel = unit.name;
  device << "/// " << kernel << ": one block per row, " << reductions.size()
         << " block reduction(s)" << (cache ? ", the inputs read again kept in shared memory" : "")
         << ":\n";
  for (Operation *op : ops)
    emitComment(op, device, "");
  device << "__global__ void __launch_bounds__(kBlock) " << kernel
         << "(int64_t rows, int64_t inner, " << (cache ? "bool cached, " : "") << "Syms S";
  for (auto [k, v] : llvm::enumerate(fusion.getInputs()))
    device << ", const " << elem(v) << " *in" << k;
  for (auto [k, v] : llvm::enumerate(fusion.getResults()))
    device << ", " << elem(v) << " *out" << k;
  // The rows are block-uniform: every thread reaches every block_reduce
  // (which synchronizes before reusing `scratch`) and gets its result.
  device << ") {\n  (void)S;\n  __shared__ double scratch[32]; // 32 accumulators of <= 8 bytes\n";
  // The cache needs no barrier only because every pass above walks the row
  // with the same thread stride: keep it so.
  if (cache)
    device << "  // The row's inputs read in more than one pass, when `cached`: each thread\n"
           << "  // reads back only the elements it wrote (no __syncthreads needed).\n"
           << "  unsigned char *row_cache = dynamic_smem<unsigned char>();\n"
           << cacheArrays;
  device << "  for (int64_t prow = blockIdx.x; prow < rows; prow += gridDim.x) {\n"
         << code << "  }\n}\n\n";

  auto product = [](ArrayRef<std::string> dims) {
    std::string p = "int64_t(1)";
    for (const std::string &d : dims)
      p += " * " + d;
    return p;
  };
  SmallVector<std::string> hostOuter, hostInner;
  for (int64_t d = 0; d < fullRank; ++d)
    (d < outerRank ? hostOuter : hostInner).push_back(dimExpr(rowInput, d));
  host << "    {\n      const int64_t rows = " << product(hostOuter)
       << ", inner = " << product(hostInner) << ";\n"
       << "      const int block = row_block(inner);\n";
  if (cache)
    host << "      const int64_t cache = " << cacheBytes << ";\n"
         << "      const bool cached = cache <= int64_t(kRowCacheBytes);\n";
  host << "      if (rows > 0)\n        " << kernel
       << "<<<unsigned(std::min<int64_t>(rows, int64_t(c.sms) * (2048 / block))), block, "
       << (cache ? "cached ? size_t(cache) : 0" : "0") << ", c.stream>>>(rows, inner, "
       << (cache ? "cached, " : "") << "S";
  for (Value v : fusion.getInputs())
    host << ", " << name(v);
  for (Value v : fusion.getResults())
    host << ", " << name(v);
  host << ");\n    }\n";
  return true;
}

//===----------------------------------------------------------------------===//
// Library ops and data movement: calls into the support header
//===----------------------------------------------------------------------===//

static bool isLtType(Type t) { return t.isF32() || t.isF64() || t.isF16() || t.isBF16(); }

/// Whether a convolution goes through cuDNN: a type cuDNN has (cuBLASLt's
/// four) and the same padding on both sides of every spatial dim (what its
/// convolution descriptor holds).
static bool usesDnn(Emitter &e, ConvolutionOp c) {
  ArrayRef<int64_t> pad = c.getPadding();
  for (size_t s = 0; s + 1 < pad.size(); s += 2)
    if (pad[s] != pad[s + 1])
      return false;
  return isLtType(e.typeOf(c).getElementType());
}

/// The im2col bytes a convolution needs (0 for cuDNN's, grouped, 1x1
/// unit-stride unpadded, or non-cuBLASLt types), as a C expression.
static std::string convScratch(Emitter &e, ConvolutionOp c) {
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
  // The library workspace the memory plan gave this kernel in the arena.
  const bool plannedWorkspace = plannedArena && unit.workspace >= 0;
  if (plannedWorkspace)
    host << "    c.lib_workspace = ws + " << unit.workspace << "ULL; // thunder.workspace\n";
  const int callsBefore = libraryCalls;
  for (int64_t w : unit.waits)
    if (units[w].stream != unit.stream)
      host << "    " << spell.streamWaitEvent << "(c.stream, rt.events[" << units[w].event
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
    host << "    " << spell.eventRecord << "(rt.events[" << unit.event << "], c.stream);\n";
  host << "  }\n";
  return result;
}

std::string Emitter::unitScratch(Unit &unit) { return unit.scratch; }

} // namespace thunder::gpu
