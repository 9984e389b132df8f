//===- EmitFusion.cpp - C++ loops for the CPU's fused kernels -------------===//
//
// One C++ block per `thunder.fusion`: pointwise kernels as one OpenMP loop
// (flat when every read is in loop order, rows x last dim otherwise),
// reduction kernels as one parallel loop over rows with a pass per
// reduction and a final pass for the outputs, fp32 GEMM and convolution
// kernels as the call with the epilogue as a lambda it runs on the pieces of
// the output it finishes (other GEMM kernels: the call, then the epilogue in
// place). The
// per-element code comes from the shared generator (Common/FusedBody.h);
// single-op kernels of the other kinds use the op's own kernel
// (EmitKernels.cpp).
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include "thunder/Target/Common/KernelCode.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <limits>
#include <set>

using namespace mlir;
using namespace mlir::thunder;
using ::thunder::codegen::BodyContext;
using ::thunder::codegen::BodyEmitter;
using ::thunder::codegen::DeferredCode;
using ::thunder::codegen::Index;
using ::thunder::codegen::IndexExpr;
using ::thunder::codegen::Loop;
using ::thunder::codegen::Statements;
using ::thunder::codegen::Store;

namespace thunder::cpu {

namespace {

bool isRowOp(Operation *op) { return isa<ReductionOpInterface>(op); }

} // namespace

/// `.clamping(lo, hi)`, the mark of an EpilogueRef (thunder_cpu_gemm_api.h)
/// whose kernel is `anchor`, an fp32 result, then only a chain of clamps of
/// it: thunder.clamp, thunder.relu, thunder.maximum / minimum with a splat
/// constant (ReLU6 after a convolution, clamp_min after a matmul), and
/// reshapes; empty
/// otherwise. The GEMM and depthwise kernels then clamp their registers
/// before they store them instead of calling the lambda on each finished
/// tile.
std::string clampMark(FusionOp fusion, Operation *anchor) {
  Block &body = fusion.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  Value v = anchor->getResult(0);
  if (yield.getValues().size() != 1 ||
      !cast<ShapedType>(v.getType()).getElementType().isF32())
    return {};
  // The chain as one clamp to [lo, hi]: after max(., c), [max(lo, c),
  // max(hi, c)]; after min(., c), [min(lo, c), min(hi, c)]. A NaN bound
  // makes every result NaN: that stays the lambda's job (false).
  const double inf = std::numeric_limits<double>::infinity();
  double lo = -inf, hi = inf;
  auto with = [&](double c, bool isMax) {
    if (std::isnan(c))
      return false;
    lo = isMax ? std::max(lo, c) : std::min(lo, c);
    hi = isMax ? std::max(hi, c) : std::min(hi, c);
    return true;
  };
  auto splat = [&](Value c) -> std::optional<double> {
    auto constant = c.getDefiningOp<ConstantOp>();
    auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
    if (!dense || !dense.isSplat() || !dense.getElementType().isF32())
      return std::nullopt;
    return dense.getSplatValue<APFloat>().convertToDouble();
  };
  unsigned links = 0, clamps = 0;
  while (v != yield.getValues()[0]) {
    if (!v.hasOneUse())
      return {};
    Operation *user = *v.getUsers().begin();
    if (auto clamp = dyn_cast<ClampOp>(user)) {
      auto min = clamp.getMin(), max = clamp.getMax();
      if ((min && !with(static_cast<float>(min->convertToDouble()), true)) ||
          (max && !with(static_cast<float>(max->convertToDouble()), false)))
        return {};
    } else if (isa<ReluOp>(user)) {
      with(0.0, true);
    } else if (isa<MaximumOp, MinimumOp>(user)) {
      Value other = user->getOperand(user->getOperand(0) == v ? 1 : 0);
      std::optional<double> c = splat(other);
      if (!c || other == v || !with(*c, isa<MaximumOp>(user)))
        return {};
    } else if (!isa<ReshapeOp>(user)) {
      // (A reshape is a view, a batched matmul's result back to the model's
      // shape: the clamp is elementwise, the elements' order the same.)
      return {};
    }
    v = user->getResult(0);
    ++links;
    clamps += !isa<ReshapeOp>(user);
  }
  // Nothing else computed in the kernel (its constants aside).
  auto computed = llvm::make_filter_range(body.without_terminator(),
                                          [](Operation &op) { return !isa<ConstantOp>(op); });
  if (!clamps || llvm::range_size(computed) != links + 1)
    return {};
  auto bound = [&](double b) -> std::string {
    if (std::isinf(b))
      return b < 0 ? "-__builtin_inff()" : "__builtin_inff()";
    return "static_cast<float>(" + doubleLiteral(b) + ")";
  };
  return ".clamping(" + bound(lo) + ", " + bound(hi) + ")";
}

namespace {

/// The trailing dims a reduction reduces (how many).
int64_t reducedCount(Operation *op) {
  return static_cast<int64_t>(cast<ReductionOpInterface>(op).getDims().size());
}

} // namespace

BodyContext Emitter::bodyContext(FusionOp fusion, llvm::StringRef innerVar,
                                 std::optional<bool> build) {
  BodyContext ctx;
  ctx.dim = [this](Value v, unsigned d) { return dimExpr(v, d); };
  ctx.load = [](unsigned arg, const std::string &offset) {
    return "in" + std::to_string(arg) + "[" + offset + "]";
  };
  ctx.storageType = [](Type t) { return *cppType(t); };
  if (build)
    ctx.storageOrder = [this, fusion, avx512 = *build](unsigned arg) {
      return storageOrder(fusion, arg, avx512);
    };
  ctx.innerVar = innerVar.str();
  // Transcendental functions from thunder_cpu_math.h, so the loops vectorize.
  ctx.math = "thunder_math::";
  return ctx;
}

void Emitter::emitKernelPointers(FusionOp fusion, llvm::raw_ostream &os) {
  for (auto [i, input] : llvm::enumerate(fusion.getInputs()))
    os << "    const " << elem(input) << " *in" << i << " = " << name(input) << ";\n";
  for (auto [i, result] : llvm::enumerate(fusion.getResults()))
    os << "    " << elem(result) << " *out" << i << " = " << name(result) << ";\n";
}

LogicalResult Emitter::emitPointwiseKernel(
    FusionOp fusion, llvm::raw_ostream &os,
    llvm::function_ref<void(BodyEmitter &)> prepare, llvm::StringRef tileLambda,
    int tileRowDims, std::optional<bool> build) {
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  Value loop = fusion.getResult(0);
  BodyEmitter body(bodyContext(fusion, "", build));
  if (prepare)
    prepare(body);
  SmallVector<IndexExpr, 4> shape = body.shapeOf(loop);
  int rank = shape.size();
  // The loop's index: rows over the leading dims, the last dim inner (a
  // tile lambda's rows may span fewer dims: its columns are the rest).
  Index index;
  index.flat = IndexExpr::var("flat_i");
  const bool tiles = !tileLambda.empty() && rank >= 2;
  const int rowDims = tiles && tileRowDims > 0 && tileRowDims < rank ? tileRowDims : rank - 1;
  IndexExpr cols = IndexExpr::constant(1);
  // An output kept channels last (ChannelsLast.cpp) is written in memory
  // order: rows over [N, H, W], its channels inner, stored at flat_i.
  const bool last = !tiles && build && writesLast(fusion, *build);
  if (last) {
    SmallVector<IndexExpr, 4> nhw = codegen::delinearize(IndexExpr::var("prow"),
                                                         {shape[0], shape[2], shape[3]});
    index.dims = {nhw[0], IndexExpr::var("pcol"), nhw[1], nhw[2]};
    index.flat = {};
    cols = shape[1];
  } else if (rank > 0) {
    SmallVector<IndexExpr, 4> rows(shape.begin(), shape.begin() + rowDims);
    SmallVector<IndexExpr, 4> columns(shape.begin() + rowDims, shape.end());
    index.dims = codegen::delinearize(IndexExpr::var("prow"), rows);
    if (columns.size() == 1) {
      index.dims.push_back(IndexExpr::var("pcol"));
    } else {
      for (IndexExpr &d : codegen::delinearize(IndexExpr::var("pcol"), columns))
        index.dims.push_back(d);
    }
    for (const IndexExpr &d : columns)
      cols = cols * d;
  }
  SmallVector<Store> stores;
  for (auto [i, value] : llvm::enumerate(yield.getValues())) {
    FailureOr<std::string> v = body.emit(value, index);
    if (failed(v))
      return failure();
    stores.push_back({"out" + std::to_string(i), last ? IndexExpr::var("flat_i") : index.flat,
                      *v, elem(fusion.getResult(i))});
  }
  // One flat loop when no value is read by its multi-index (every read is
  // at `flat_i`, or at a position not derived from the loop).
  Statements statements = body.takeElement();
  bool flat = rank == 0 || (!statements.mentions("prow") && !statements.mentions("pcol"));
  DeferredCode element;
  element << std::move(statements);
  for (Store &store : stores)
    element << std::move(store);
  os << "    const int64_t n = " << numelExpr(loop) << ";\n";
  DeferredCode code;
  if (tiles) {
    // A GEMM's or convolution's epilogue: rows x columns of one finished
    // tile, on the thread that computed it.
    os << "    const int64_t cols = " << cols.str() << ";\n    (void)n;\n";
    DeferredCode col, row;
    col << "      const int64_t flat_i = prow * cols + pcol;\n" << std::move(element);
    row << Loop(Loop::Kind::Simd, "pcol", "tile_c0", "tile_c1").around(std::move(col));
    code << Loop(Loop::Kind::Plain, "prow", "tile_r0", "tile_r1").around(std::move(row));
    os << "    auto " << tileLambda
       << " = [&](int64_t tile_r0, int64_t tile_r1, int64_t tile_c0, int64_t tile_c1) {\n"
       << code.print(body) << "    };\n";
    return success();
  }
  if (flat) {
    code << Loop(Loop::Kind::ParallelSimd, "flat_i", "0", "n")
                .with("if (n > 32768)")
                .around(std::move(element));
  } else {
    os << "    const int64_t cols = " << (last ? cols : shape.back()).str()
       << ", rows = cols ? n / cols : 0;\n";
    DeferredCode row;
    DeferredCode col;
    col << "      const int64_t flat_i = prow * cols + pcol;\n" << std::move(element);
    row << Loop(Loop::Kind::Simd, "pcol", "0", "cols").around(std::move(col));
    code << Loop(Loop::Kind::Parallel, "prow", "0", "rows")
                .with("if (n > 32768)")
                .around(std::move(row));
  }
  os << code.print(body);
  return success();
}

LogicalResult Emitter::emitReductionKernel(FusionOp fusion, llvm::raw_ostream &os,
                                           bool build) {
  Block &block = fusion.getBody().front();
  auto yield = cast<YieldOp>(block.getTerminator());
  SmallVector<Operation *> reductions;
  for (Operation &op : block.without_terminator())
    if (isRowOp(&op))
      reductions.push_back(&op);
  if (reductions.empty())
    return fusion.emitError("a reduction kernel without a reduction");
  Value rowInput = reductions.front()->getOperand(0);
  int64_t rank = typeOf(rowInput).getRank();
  int64_t innerRank = reducedCount(reductions.front());
  BodyEmitter body(bodyContext(fusion, "inner_j", build));
  SmallVector<IndexExpr, 4> shape = body.shapeOf(rowInput);
  ArrayRef<IndexExpr> outerShape = ArrayRef<IndexExpr>(shape).take_front(rank - innerRank);
  ArrayRef<IndexExpr> innerShape = ArrayRef<IndexExpr>(shape).drop_front(rank - innerRank);
  auto product = [](ArrayRef<IndexExpr> dims) {
    std::string p = "int64_t(1)";
    for (const IndexExpr &d : dims)
      p += " * " + d.str();
    return p;
  };
  IndexExpr prow = IndexExpr::var("prow"), innerJ = IndexExpr::var("inner_j");
  Index full;
  full.dims = codegen::delinearize(prow, outerShape);
  llvm::append_range(full.dims, codegen::delinearize(innerJ, innerShape));
  full.flat = prow * IndexExpr::size("inner") + innerJ;
  auto rowIndex = [&](Value v) {
    Index index;
    index.dims = codegen::delinearize(prow, outerShape);
    index.dims.resize(typeOf(v).getRank(), IndexExpr::constant(0));
    index.flat = prow;
    return index;
  };

  os << "    const int64_t rows = " << product(outerShape)
     << ", inner = " << product(innerShape) << ";\n";
  // The body of the loop over rows.
  DeferredCode row;
  for (auto [k, reduction] : llvm::enumerate(reductions)) {
    Value input = reduction->getOperand(0);
    if (typeOf(input).getShape() != typeOf(rowInput).getShape() ||
        reducedCount(reduction) != innerRank)
      return reduction->emitError("reduces other rows than the kernel's first reduction");
    FailureOr<std::string> v = body.emit(input, full);
    if (failed(v))
      return failure();
    Statements element = body.takeElement();
    std::string acc = "acc" + std::to_string(k);
    std::string C = body.computeType(typeOf(reduction->getResult(0)).getElementType());
    std::string init = "0", update = acc + " + " + *v, clause = "reduction(+:" + acc + ")";
    if (isa<ProdOp>(reduction)) {
      init = "1";
      update = acc + " * " + *v;
      clause = "reduction(*:" + acc + ")";
    } else if (isa<MaxOp>(reduction)) {
      init = "std::numeric_limits<" + C + ">::has_infinity ? -std::numeric_limits<" + C +
             ">::infinity() : std::numeric_limits<" + C + ">::lowest()";
      update = "maximum(" + acc + ", " + *v + ")";
      clause = "";
    } else if (isa<MinOp>(reduction)) {
      init = "std::numeric_limits<" + C + ">::has_infinity ? std::numeric_limits<" + C +
             ">::infinity() : std::numeric_limits<" + C + ">::max()";
      update = "minimum(" + acc + ", " + *v + ")";
      clause = "";
    }
    row << body.takeRow() << "      " << C << " " << acc << " = " << init << ";\n";
    DeferredCode pass;
    pass << std::move(element) << "        " << acc << " = " << update << ";\n";
    row << Loop(clause.empty() ? Loop::Kind::Plain : Loop::Kind::Simd, "inner_j", "0", "inner")
               .with(clause)
               .at("      ")
               .around(std::move(pass));
    if (isa<MeanOp>(reduction))
      row << "      " << acc << " = " << acc << " / static_cast<" << C << ">(inner);\n";
    body.bind(reduction->getResult(0), acc);
  }
  // Results: per-row values once per row, full rows in one more pass.
  SmallVector<Store> fullStores;
  for (auto [i, value] : llvm::enumerate(yield.getValues())) {
    auto type = typeOf(value);
    bool isFull = type.getRank() == rank && type.getShape() == typeOf(rowInput).getShape();
    std::string store = "out" + std::to_string(i);
    if (isFull) {
      FailureOr<std::string> v = body.emit(value, full);
      if (failed(v))
        return failure();
      fullStores.push_back({store, full.flat, *v, elem(fusion.getResult(i)), "        "});
      continue;
    }
    FailureOr<std::string> v = body.emit(value, rowIndex(value));
    if (failed(v))
      return failure();
    row << body.takeRow() << Store{store, prow, *v, elem(fusion.getResult(i))};
  }
  if (!fullStores.empty()) {
    DeferredCode element;
    element << body.takeElement();
    for (Store &store : fullStores)
      element << std::move(store);
    row << body.takeRow()
        << Loop(Loop::Kind::Simd, "inner_j", "0", "inner").at("      ").around(std::move(element));
  }
  DeferredCode code;
  code << Loop(Loop::Kind::Parallel, "prow", "0", "rows")
              .with("if (rows > 1 && rows * inner > 32768)")
              .around(std::move(row));
  os << code.print(body);
  return success();
}

LogicalResult Emitter::emitFusion(FusionOp fusion, llvm::raw_ostream &os) {
  Block &block = fusion.getBody().front();
  auto ops = llvm::to_vector(llvm::map_range(block.without_terminator(),
                                             [](Operation &op) { return &op; }));
  // Comment: the kernel, its ops and their source lines.
  os << "  // kernel " << fusion.getKernelName() << " ("
     << stringifyFusionKind(fusion.getKind()) << "):";
  for (Operation *op : ops)
    if (!isa<ConstantOp>(op))
      os << " " << op->getName().stripDialect();
  os << "\n";
  std::set<std::string> lines;
  for (Operation *op : ops)
    if (std::string where = sourceOf(op->getLoc()); !where.empty() && lines.insert(where).second)
      os << "  //   at " << where << "\n";

  // Names inside the region alias the values outside it.
  for (auto [input, arg] : llvm::zip(fusion.getInputs(), block.getArguments()))
    names[arg] = name(input);
  auto yield = cast<YieldOp>(block.getTerminator());
  for (auto [value, result] : llvm::zip(yield.getValues(), fusion.getResults()))
    if (!names.count(value))
      names[value] = name(result);

  FusionKind kind = fusion.getKind();
  auto nonConstant = llvm::make_filter_range(ops, [](Operation *op) {
    return !isa<ConstantOp>(op);
  });
  size_t computeOps = llvm::range_size(nonConstant);
  if (kind == FusionKind::Pointwise || kind == FusionKind::Reduction) {
    // A generated loop. Where it reads a tensor kept channels last in one
    // build only (ChannelsLast.cpp), it is written for each build.
    auto loop = [&](bool avx512) -> LogicalResult {
      os << "  {\n";
      emitKernelPointers(fusion, os);
      LogicalResult emitted =
          kind == FusionKind::Pointwise
              ? emitPointwiseKernel(fusion, os, nullptr, {}, 0, avx512)
              : emitReductionKernel(fusion, os, avx512);
      os << "  }\n";
      return emitted;
    };
    bool differs = writesLast(fusion, true) != writesLast(fusion, false) ||
                   llvm::any_of(llvm::seq<unsigned>(0, fusion.getInputs().size()),
                                [&](unsigned arg) {
                                  return storageOrder(fusion, arg, true) !=
                                         storageOrder(fusion, arg, false);
                                });
    if (!differs)
      return loop(false);
    os << "#if defined(__AVX512F__)\n";
    if (failed(loop(true)))
      return failure();
    os << "#else\n";
    if (failed(loop(false)))
      return failure();
    os << "#endif\n";
    return success();
  }
  if (kind == FusionKind::Gemm) {
    // fp32: Thunder's GEMM with the epilogue per tile (EmitGemm.cpp).
    FailureOr<bool> done = emitGemmKernel(fusion, os);
    if (failed(done))
      return failure();
    if (*done)
      return success();
  }
  auto convs = fusion.getBody().front().getOps<ConvolutionOp>();
  if (kind == FusionKind::Conv && computeOps > 1 && llvm::hasSingleElement(convs) &&
      llvm::all_of(fusion.getResults(), [&](Value r) {
        return r.getType() == (*convs.begin()).getResult().getType();
      })) {
    // The convolution calls the epilogue on the pieces of its output it
    // finishes (a GEMM tile, a depthwise plane), while they are in cache,
    // in the [batch * channels, positions] view (thunder_cpu_conv.h).
    Operation *anchor = *convs.begin();
    names[anchor->getResult(0)] = name(fusion.getResult(0));
    os << "  {\n";
    emitKernelPointers(fusion, os);
    os << "    const " << elem(fusion.getResult(0)) << " *library = out0;\n";
    if (failed(emitPointwiseKernel(
            fusion, os,
            [&](BodyEmitter &body) { body.bindMemory(anchor->getResult(0), "library"); },
            "epilogue", /*tileRowDims=*/2)))
      return failure();
    if (failed(emitOp(anchor, os,
                      "thunder_gemm::EpilogueRef(epilogue)" + clampMark(fusion, anchor))))
      return failure();
    os << "  }\n";
    return success();
  }
  if ((kind == FusionKind::Gemm || kind == FusionKind::Conv) && computeOps > 1) {
    // The library call writes the kernel's output; the epilogue then runs
    // over it in place.
    Operation *anchor = *nonConstant.begin();
    names[anchor->getResult(0)] = name(fusion.getResult(0));
    if (failed(emitOp(anchor, os)))
      return failure();
    os << "  {\n";
    emitKernelPointers(fusion, os);
    os << "    const " << elem(fusion.getResult(0)) << " *library = out0;\n";
    if (failed(emitPointwiseKernel(fusion, os, [&](BodyEmitter &body) {
          body.bindMemory(anchor->getResult(0), "library");
        })))
      return failure();
    os << "  }\n";
    return success();
  }
  if (computeOps != 1)
    return fusion.emitError("the CPU backend emits a ")
           << stringifyFusionKind(kind) << " kernel of one op, this one has "
           << computeOps;
  return emitOp(*nonConstant.begin(), os);
}

} // namespace thunder::cpu
