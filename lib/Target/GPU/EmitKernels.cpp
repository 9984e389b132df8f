//===- EmitKernels.cpp - The GPU kernels generated per element ------------===//
//
// Pointwise work (elementwise ops, converts, broadcasts, transposes, slices,
// reshapes) becomes one generated kernel whose per-element body comes from
// the shared generator (Common/FusedBody.h): 16-byte vector loads and stores
// for the inputs read in the output's order, index arithmetic for the
// others, a scalar loop for the tail. A reduction region over trailing dims
// is one row kernel: a block per row, a pass and a block reduction per
// reduction, then the outputs; a row input read by several passes is kept in
// shared memory when it fits. Library calls are in EmitLibraryCalls.cpp,
// units and regions in EmitUnits.cpp.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"
#include "thunder/Target/Common/KernelCode.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::thunder;

namespace thunder::gpu {

using codegen::DeferredCode;
using codegen::doubleLiteral;
using codegen::Loop;

/// The shared vocabulary's expression of an elementwise op over operands
/// named a, b, c.
static FailureOr<std::string> elementwiseExpr(Operation *op, llvm::StringRef C) {
  std::vector<std::string> operands = {"a", "b", "c"};
  operands.resize(std::min<size_t>(3, op->getNumOperands()));
  return codegen::elementwiseExpr(op, C, operands);
}

bool GpuEmitter::isPointwise(Operation *op) {
  // (Not iota: the shared generator has no per-element iota; it is the
  // header's kernel.)
  if (isa<BroadcastOp, ExpandOp, TransposeOp, SliceOp, ReshapeOp, ConstantOp>(op))
    return true;
  return op->getNumResults() == 1 && op->getNumOperands() > 0 &&
         succeeded(elementwiseExpr(op, "C"));
}

void GpuEmitter::emitComment(Operation *op, llvm::raw_ostream &os, llvm::StringRef indent) {
  codegen::emitOpComment(os, op, indent);
}

//===----------------------------------------------------------------------===//
// Pointwise and row-reduction kernels on the shared body generator
//===----------------------------------------------------------------------===//

codegen::BodyContext GpuEmitter::bodyContext(llvm::StringRef innerVar) {
  codegen::BodyContext ctx;
  ctx.dim = [this](Value v, unsigned d) { return kernelDim(v, d); };
  // Pointwise kernels bind every value they read from memory to a pointer
  // (BodyEmitter::bindMemory), region inputs included; the row kernel spells
  // the loads of region inputs itself when it prints them (its row cache).
  ctx.load = [](unsigned arg, const std::string &offset) {
    return "in" + std::to_string(arg) + "[" + offset + "]";
  };
  ctx.storageType = [](Type t) { return *cppType(t); };
  ctx.innerVar = innerVar.str();
  return ctx;
}

LogicalResult GpuEmitter::emitPointwise(const std::string &kernel, ArrayRef<Operation *> ops,
                                     ArrayRef<Value> leaves, ArrayRef<Value> roots,
                                     ArrayRef<std::string> dests, llvm::raw_ostream &device,
                                     llvm::raw_ostream &host) {
  Value out = roots.front();
  int r = rank(out);
  // The loop's index: the flat position `i`, and per dim `idx_d` (declared
  // from `i` only when some value is read out of loop order).
  codegen::Index index;
  for (int d = 0; d < r; ++d)
    index.dims.push_back(codegen::IndexExpr::var("idx_" + std::to_string(d)));
  index.flat = codegen::IndexExpr::var("i");
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
  codegen::Statements scalar = body.takeElement();
  // The per-element code: the multi-index `indexCode` (when needed), the
  // statements, and stores to `out` at [i] (the tail) or to `y` at [j] (the
  // vector loop).
  auto element = [&](const std::string &indexCode, llvm::StringRef to,
                     const codegen::IndexExpr &at) {
    DeferredCode code;
    code << indexCode << scalar;
    for (auto [k, v] : llvm::enumerate(roots))
      code << codegen::Store{to.str() + std::to_string(k), at, vars[k], elem(v)};
    return code;
  };
  // The multi-index of `i`, when some value is read out of loop order.
  std::string indexCode;
  {
    SmallVector<codegen::IndexExpr, 4> shape;
    for (int d = 0; d < r; ++d)
      shape.push_back(codegen::IndexExpr::size(kernelDim(out, d)));
    SmallVector<codegen::IndexExpr, 4> dims = codegen::delinearize(index.flat, shape);
    for (int d = 0; d < r; ++d)
      indexCode += "      const int64_t idx_" + std::to_string(d) + " = " + dims[d].str() +
                   ";\n      (void)idx_" + std::to_string(d) + ";\n";
  }

  // Inputs read only at [i] (in loop order) are loaded 16 bytes at a time
  // when there is one; the others (broadcasts, transposes, slices) by index.
  SmallVector<int> read;
  SmallVector<const codegen::Load *> allLoads = scalar.loads();
  for (auto [k, leaf] : llvm::enumerate(leaves)) {
    auto loads = llvm::make_filter_range(
        allLoads, [&](const codegen::Load *l) { return l->value == leaf; });
    if (!loads.empty() && llvm::all_of(loads, [&](const codegen::Load *l) {
          return l->offset == index.flat;
        }))
      read.push_back(int(k));
  }
  bool vectorize = !read.empty();
  bool needsIndex = llvm::any_of(index.dims, [&](const codegen::IndexExpr &d) {
    return scalar.mentions(d.name());
  });
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
  device << dialect.syntax.kernel << " void " << dialect.syntax.launchBounds << "(kBlock) "
         << kernel << "(int64_t n, Syms S";
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
    auto vectorSpelling = [&](const codegen::Load &l) {
      for (int k : read)
        if (l.value == leaves[k])
          return "x" + std::to_string(k) + "[j]";
      return std::string();
    };
    device << "  constexpr int V = " << vec << ";\n  int64_t done = 0;\n  if (true";
    for (int k : read)
      device << " && aligned<V>(in" << k << ")";
    for (size_t k = 0; k < roots.size(); ++k)
      device << " && aligned<V>(out" << k << ")";
    device << ") {\n    const int64_t nv = n / V;\n";
    DeferredCode vectors;
    for (int k : read)
      vectors << "      " << elem(leaves[k]) << " x" << k << "[V];\n      load_vec<V>(in" << k
              << " + v * V, x" << k << ");\n";
    for (auto [k, v] : llvm::enumerate(roots))
      vectors << "      " << elem(v) << " y" << k << "[V];\n";
    vectors << Loop(Loop::Kind::Unrolled, "j", "0", "V")
                   .ofType("int")
                   .at("      ")
                   .around(element("      const int64_t i = v * V + j;\n      (void)i;\n" +
                                       indexCode,
                                   "y", codegen::IndexExpr::var("j")));
    for (size_t k = 0; k < roots.size(); ++k)
      vectors << "      store_vec<V>(out" << k << " + v * V, y" << k << ");\n";
    DeferredCode vectorLoop;
    vectorLoop << Loop(Loop::Kind::GridStride, "v", "t", "nv").by("stride").around(
        std::move(vectors));
    device << vectorLoop.print(body, vectorSpelling);
    device << "    done = nv * V;\n  }\n"
           << "  // The tail (everything, when a pointer is not aligned for vectors).\n";
  }
  DeferredCode tail;
  tail << Loop(Loop::Kind::GridStride, "i", vectorize ? "done + t" : "t", "n")
              .by("stride")
              .at("  ")
              .around(element(indexCode, "out", index.flat));
  device << tail.print(body) << "}\n\n";

  host << "    {\n      const int64_t n = " << numelExpr(out) << ";\n"
       << "      if (n > 0)\n        " << kernel << dialect.syntax.launchOpen << "grid_for(";
  if (vec > 1)
    host << "(n + " << vec - 1 << ") / " << vec;
  else
    host << "n";
  host << ", kBlock, c), kBlock, 0, c.stream" << dialect.syntax.launchClose << "(n, S";
  for (Value v : leaves)
    host << ", " << name(v);
  for (const std::string &d : dests)
    host << ", " << d;
  host << ");\n    }\n";
  return success();
}

LogicalResult GpuEmitter::emitOpKernel(const std::string &kernel, Operation *op,
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
  auto r = cast<ReductionOpInterface>(op);
  return r.reducesTrailingDims() ? static_cast<int64_t>(r.getDims().size()) : -1;
}
} // namespace

FailureOr<bool> GpuEmitter::emitRowReduction(Unit &unit, FusionOp fusion,
                                          llvm::raw_ostream &device, llvm::raw_ostream &host) {
  Block &block = fusion.getBody().front();
  auto yield = cast<YieldOp>(block.getTerminator());
  SmallVector<Operation *> reductions, ops;
  for (Operation &op : block.without_terminator()) {
    if (isa<ConstantOp>(op))
      continue;
    ops.push_back(&op);
    if (isa<ReductionOpInterface>(op))
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
  // written, so the statements stay structure until then (DeferredCode).
  using codegen::IndexExpr;
  const std::string rowFlat = "prow * inner + inner_j";
  IndexExpr prow = IndexExpr::var("prow"), innerJ = IndexExpr::var("inner_j");
  const IndexExpr rowFlatIndex = prow * IndexExpr::size("inner") + innerJ;
  codegen::BodyEmitter body(bodyContext("inner_j"));
  SmallVector<IndexExpr, 4> shape = body.shapeOf(rowInput);
  ArrayRef<IndexExpr> outerShape = ArrayRef<IndexExpr>(shape).take_front(outerRank);
  ArrayRef<IndexExpr> innerShape = ArrayRef<IndexExpr>(shape).drop_front(outerRank);
  codegen::Index full;
  full.dims = codegen::delinearize(prow, outerShape);
  llvm::append_range(full.dims, codegen::delinearize(innerJ, innerShape));
  full.flat = rowFlatIndex;
  auto rowIndex = [&](Value v) {
    codegen::Index index;
    index.dims = codegen::delinearize(prow, outerShape);
    index.dims.resize(rank(v), IndexExpr::constant(0));
    index.flat = prow;
    return index;
  };

  // Per-row statements at the row loop's depth.
  auto rowCode = [&body] {
    codegen::Statements row = body.takeRow();
    row.indent = "    ";
    return row;
  };
  // A pass over the row, its threads each from their own element.
  auto blockStride = [](DeferredCode code) {
    return Loop(Loop::Kind::BlockStride, "inner_j", "threadIdx.x", "inner")
        .by("blockDim.x")
        .around(std::move(code));
  };
  DeferredCode os;
  for (auto [k, reduction] : llvm::enumerate(reductions)) {
    FailureOr<std::string> v = body.emit(reduction->getOperand(0), full);
    if (failed(v))
      return failure();
    codegen::Statements element = body.takeElement();
    std::string S = elem(reduction->getResult(0));
    std::string A = "acc_t<" + S + ">", C = "compute_t<" + S + ">";
    const char *kind = isa<ProdOp>(reduction)  ? "Reduce::Prod"
                       : isa<MaxOp>(reduction) ? "Reduce::Max"
                       : isa<MinOp>(reduction) ? "Reduce::Min"
                                               : "Reduce::Sum";
    std::string a = "a" + std::to_string(k), acc = "acc" + std::to_string(k);
    DeferredCode pass;
    pass << std::move(element) << "      " << a << " = reduce_op<" << kind << ">(" << a
         << ", static_cast<" << A << ">(" << *v << "));\n";
    os << "    // Pass " << k << ": " << reduction->getName().stripDialect() << ".\n"
       << rowCode() << "    " << A << " " << a << " = reduce_init<" << kind << ", "
       << A << ">();\n"
       << blockStride(std::move(pass))
       << "    " << a << " = block_reduce<" << kind << ">(" << a << ", reinterpret_cast<" << A
       << " *>(scratch));\n"
       << "    const " << C << " " << acc << " = static_cast<" << C << ">("
       << (isa<MeanOp>(reduction) ? a + " / static_cast<" + A + ">(inner)" : a) << ");\n";
    body.bind(reduction->getResult(0), acc);
  }
  // Results: per-row values once per row (by thread 0), full rows in one
  // more pass.
  SmallVector<codegen::Store> fullStores;
  for (auto [i, value] : llvm::enumerate(yield.getValues())) {
    std::string store = "out" + std::to_string(i);
    std::string S = elem(fusion.getResult(i));
    if (isFull(value)) {
      FailureOr<std::string> v = body.emit(value, full);
      if (failed(v))
        return failure();
      fullStores.push_back({store, rowFlatIndex, *v, S});
      continue;
    }
    FailureOr<std::string> v = body.emit(value, rowIndex(value));
    if (failed(v))
      return failure();
    os << rowCode() << "    if (threadIdx.x == 0)\n" << codegen::Store{store, prow, *v, S};
  }
  if (!fullStores.empty()) {
    DeferredCode element;
    element << body.takeElement();
    for (codegen::Store &store : fullStores)
      element << std::move(store);
    os << "    // The full rows.\n" << rowCode() << blockStride(std::move(element));
  }

  // The inputs read more than once share the row cache, one 16-byte aligned
  // array each, in their storage type (bf16 stays 2 bytes); the others, and
  // every input when the cache does not fit, are read from global memory.
  auto atRowFlat = [&](const codegen::Load &l) {
    return isa<BlockArgument>(l.value) && l.offset == rowFlatIndex;
  };
  SmallVector<unsigned> rowReads(block.getNumArguments(), 0);
  for (const codegen::Load *l : os.loads())
    if (atRowFlat(*l))
      ++rowReads[cast<BlockArgument>(l->value).getArgNumber()];
  SmallVector<std::string> fills(block.getNumArguments()), reads(block.getNumArguments());
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
    fills[n] = fill;
    reads[n] = read;
  }
  bool cache = !cacheBytes.empty();
  // The first read of an input at the row's flat position fills the cache,
  // the later ones read it.
  SmallVector<unsigned> seen(block.getNumArguments(), 0);
  DeferredCode rows;
  rows << Loop(Loop::Kind::GridStride, "prow", "blockIdx.x", "rows")
              .by("gridDim.x")
              .at("  ")
              .around(std::move(os));
  std::string code = rows.print(body, [&](const codegen::Load &l) {
    if (!atRowFlat(l))
      return std::string();
    unsigned n = cast<BlockArgument>(l.value).getArgNumber();
    return seen[n]++ == 0 ? fills[n] : reads[n];
  });

  std::string kernel = unit.name;
  device << "/// " << kernel << ": one block per row, " << reductions.size()
         << " block reduction(s)" << (cache ? ", the inputs read again kept in shared memory" : "")
         << ":\n";
  for (Operation *op : ops)
    emitComment(op, device, "");
  device << dialect.syntax.kernel << " void " << dialect.syntax.launchBounds << "(kBlock) "
         << kernel << "(int64_t rows, int64_t inner, " << (cache ? "bool cached, " : "") << "Syms S";
  for (auto [k, v] : llvm::enumerate(fusion.getInputs()))
    device << ", const " << elem(v) << " *in" << k;
  for (auto [k, v] : llvm::enumerate(fusion.getResults()))
    device << ", " << elem(v) << " *out" << k;
  // The rows are block-uniform: every thread reaches every block_reduce
  // (which synchronizes before reusing `scratch`) and gets its result.
  // block_reduce's scratch: a partial per warp of the largest block.
  int partials = dialect.syntax.maxBlockThreads / dialect.syntax.warpSize;
  device << ") {\n  (void)S;\n  " << dialect.syntax.shared << " double scratch[" << partials
         << "]; // " << partials << " accumulators of <= 8 bytes\n";
  // The cache needs no barrier only because every pass above walks the row
  // with the same thread stride: keep it so.
  if (cache)
    device << "  // The row's inputs read in more than one pass, when `cached`: each thread\n"
           << "  // reads back only the elements it wrote (no __syncthreads needed).\n"
           << "  unsigned char *row_cache = dynamic_smem<unsigned char>();\n"
           << cacheArrays;
  device << code << "}\n\n";

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
       << dialect.syntax.launchOpen
       << "unsigned(std::min<int64_t>(rows, int64_t(c.sms) * (THUNDER_RESIDENT_THREADS / block))), block, "
       << (cache ? "cached ? size_t(cache) : 0" : "0") << ", c.stream" << dialect.syntax.launchClose
       << "(rows, inner, "
       << (cache ? "cached, " : "") << "S";
  for (Value v : fusion.getInputs())
    host << ", " << name(v);
  for (Value v : fusion.getResults())
    host << ", " << name(v);
  host << ");\n    }\n";
  return true;
}

} // namespace thunder::gpu
