//===- EmitGemm.cpp - fp32 GEMM kernels on Thunder's own GEMM -------------===//
//
// A `gemm` kernel whose matmul is fp32 becomes one call of
// thunder_gemm::matmul_f32 (Support/thunder_cpu_gemm.h) with the kernel's
// epilogue (bias, activation, residual add: the pointwise body of the
// fusion) as a lambda the GEMM runs on each finished register tile, while
// it is in L1. A weight constant that only fp32 matmuls read as their rhs
// (and, for a token table tied to an LM head, embedding lookups, which then
// read the panels) is packed at compile time into the GEMM's panel layout
// and stored in the weights blob in place of its plain copy -- but for an
// [n, k] weight that only ever meets up to 3 rows, which the GEMM reads
// faster as it is.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include "thunder/Target/Common/FusedBody.h"
#include "thunder/Target/Common/LibraryCalls.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/X86TargetParser.h"

#include <cstring>

using namespace mlir;
using namespace mlir::thunder;

namespace thunder::cpu {

namespace {

/// The panel width of packed B: thunder_gemm::kNR in thunder_cpu_gemm.h.
constexpr int64_t kPanel = 32;
/// Up to this many rows, an [n, k] weight is not packed (findPackedWeights).
constexpr int64_t kInPlaceDotRows = 3;

bool isF32(Value v) { return cast<RankedTensorType>(v.getType()).getElementType().isF32(); }

/// The first op of a kernel that is not a constant: its anchor.
Operation *anchorOf(FusionOp fusion) {
  for (Operation &op : fusion.getBody().front().without_terminator())
    if (!isa<ConstantOp>(op))
      return &op;
  return nullptr;
}

/// The fp32 matmul a gemm kernel is built around, or null.
MatmulOp f32Matmul(FusionOp fusion) {
  if (fusion.getKind() != FusionKind::Gemm)
    return nullptr;
  auto m = dyn_cast_or_null<MatmulOp>(anchorOf(fusion));
  if (!m || !isF32(m.getLhs()) || !isF32(m.getRhs()) || !isF32(m.getResult()))
    return nullptr;
  return m;
}

/// The value outside kernels that `v` (inside one) reads, through block
/// arguments.
Value outside(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (auto fusion = dyn_cast_or_null<FusionOp>(arg.getOwner()->getParentOp()))
      return fusion.getInputs()[arg.getArgNumber()];
  return v;
}

/// Writes op(B) of a [K, N] (or [N, K] when `tb`) fp32 matrix in the packed
/// panel layout, one panel at a time.
void writePanels(llvm::ArrayRef<char> bytes, int64_t k, int64_t n, bool tb,
                 llvm::raw_ostream &os) {
  std::vector<float> panel(static_cast<size_t>(k * kPanel));
  auto at = [&](int64_t p, int64_t j) {
    float f;
    int64_t index = tb ? j * k + p : p * n + j;
    std::memcpy(&f, bytes.data() + index * 4, 4);
    return f;
  };
  for (int64_t q0 = 0; q0 < n; q0 += kPanel) {
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < kPanel; ++j)
        panel[p * kPanel + j] = q0 + j < n ? at(p, q0 + j) : 0.0f;
    os.write(reinterpret_cast<const char *>(panel.data()), panel.size() * 4);
  }
}

/// Whether `v` is computed from `gemm` element for element, by reshapes and
/// elementwise ops only (each keeps the number of elements and their order,
/// so `v` holds the GEMM output's elements however its dims are split).
/// `seen` memoizes the answer per value (an activation reads its input
/// several times).
bool keepsElements(Value v, Value gemm, llvm::DenseMap<Value, bool> &seen) {
  if (v == gemm)
    return true;
  if (auto it = seen.find(v); it != seen.end())
    return it->second;
  bool result = false;
  Operation *op = v.getDefiningOp();
  if (auto reshape = dyn_cast_or_null<ReshapeOp>(op))
    result = keepsElements(reshape.getOperand(), gemm, seen);
  else if (op && op->hasTrait<OpTrait::Elementwise>())
    // Elementwise operands have the result's shape: one of them coming from
    // the GEMM is enough (the others are bias views, constants, inputs).
    result = llvm::any_of(op->getOperands(),
                          [&](Value operand) { return keepsElements(operand, gemm, seen); });
  seen[v] = result;
  return result;
}

/// Whether every instruction set in `cpus` (thunder-compile's --cpu: one
/// -march, or several for a multi-architecture library) has AVX2 and FMA,
/// which the GEMM's dot-product path needs (THUNDER_GEMM_HAS_DOT in
/// thunder_cpu_gemm.h): without it a weight left unpacked is packed again on
/// every call.
bool everyVariantHasDotPath(llvm::StringRef cpus) {
  llvm::SmallVector<llvm::StringRef> variants;
  cpus.split(variants, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef arch : variants) {
    arch = arch.trim();
    bool avx2 = false, fma = false;
    if (arch == "native") {
      llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
      avx2 = host.lookup("avx2");
      fma = host.lookup("fma");
    } else {
      llvm::SmallVector<llvm::StringRef> features;
      llvm::X86::getFeaturesForCPU(arch, features);
      avx2 = llvm::is_contained(features, "avx2");
      fma = llvm::is_contained(features, "fma");
    }
    if (!avx2 || !fma)
      return false;
  }
  return !variants.empty();
}

/// Whether `fusion` is an embedding lookup alone, of the table it reads as
/// input `index` (a kernel that EmitKernels emits as one library call, which
/// can read the table from the GEMM's packed panels).
bool isEmbeddingOf(FusionOp fusion, unsigned index) {
  if (fusion.getKind() != FusionKind::DataMovement)
    return false;
  Block &block = fusion.getBody().front();
  EmbeddingOp lookup;
  for (Operation &op : block.without_terminator()) {
    if (isa<ConstantOp>(op))
      continue;
    if (lookup || !isa<EmbeddingOp>(op))
      return false;
    lookup = cast<EmbeddingOp>(op);
  }
  BlockArgument arg = block.getArgument(index);
  return lookup && lookup.getWeight() == arg && arg.hasOneUse();
}

} // namespace

Value Emitter::packedTable(EmbeddingOp lookup) const {
  Value table = outside(lookup.getWeight());
  return packedWeights.count(table) ? table : Value();
}

void Emitter::findPackedWeights() {
  if (!options.packWeights)
    return;
  const bool dotPath = everyVariantHasDotPath(options.cpu);
  for (auto constant : func.getBody().front().getOps<ConstantOp>()) {
    Value value = constant.getResult();
    auto type = cast<RankedTensorType>(value.getType());
    if (!type.getElementType().isF32() || type.getRank() != 2 || !type.hasStaticShape() ||
        isa<SplatElementsAttr>(constant.getValue()) || value.use_empty())
      continue;
    std::optional<bool> tb;
    bool ok = true;
    // The most rows any of its GEMMs multiplies it with (-1: not static).
    int64_t rows = 0;
    // Whether an embedding lookup reads it too (a tied embedding, as GPT-2's
    // token table is its LM head): that lookup then reads rows of the table
    // from the packed panels, so the LM head's GEMM need not pack 25-150 MB
    // of weights on every call.
    bool lookups = false;
    for (OpOperand &use : value.getUses()) {
      auto fusion = dyn_cast<FusionOp>(use.getOwner());
      if (fusion && isEmbeddingOf(fusion, use.getOperandNumber())) {
        lookups = true;
        continue;
      }
      MatmulOp anchor = fusion ? f32Matmul(fusion) : nullptr;
      if (!anchor) {
        ok = false;
        break;
      }
      BlockArgument arg = fusion.getBody().front().getArgument(use.getOperandNumber());
      for (OpOperand &inner : arg.getUses()) {
        auto m = dyn_cast<MatmulOp>(inner.getOwner());
        // Only the kernel's own matmul, and only as its rhs.
        if (m != anchor || inner.getOperandNumber() != 1 || m.getLhs() == arg ||
            (tb && *tb != m.getTransposeRhs())) {
          ok = false;
          break;
        }
        tb = m.getTransposeRhs();
        // Rows: every dim of the lhs but its last (the contraction).
        auto lhs = cast<RankedTensorType>(m.getLhs().getType());
        if (rows >= 0)
          rows = m.getTransposeLhs() || !lhs.hasStaticShape()
                     ? -1
                     : std::max(rows, mlir::ShapedType::getNumElements(
                                          lhs.getShape().drop_back()));
      }
      if (!ok)
        break;
    }
    // An [n, k] weight that only ever meets a few rows stays as it is: the
    // GEMM then reads it in place as dot products, each row once and in
    // order, 1.0-1.5x the packed kernel's speed up to 3 rows from memory
    // (tools/bench/gemm_ab.py --cold, packed against --b=nt; equal at 4).
    // Only where every variant has that path (AVX2 + FMA, AVX-512).
    if (ok && tb && *tb && rows >= 0 && rows <= kInPlaceDotRows && dotPath)
      continue;
    // A lookup reads rows of the table: rows of [n, k], columns of the
    // packed op(B) when the GEMM transposes it.
    if (ok && tb && (!lookups || *tb))
      packedWeights[value] = *tb;
  }
}

LogicalResult Emitter::emitPackedConstant(ConstantOp op, bool tb) {
  Value value = op.getResult();
  auto type = cast<RankedTensorType>(value.getType());
  llvm::ArrayRef<char> bytes;
  std::string entryName = "constant_" + name(value);
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(op.getValue())) {
    AsmResourceBlob *data = resource.getRawHandle().getBlob();
    if (!data)
      return op.emitError("weight '") << resource.getRawHandle().getKey()
                                       << "' has no data (was its IR printed with elided "
                                          "weights?)";
    bytes = data->getData();
    entryName = resource.getRawHandle().getKey().str();
  } else if (auto dense = dyn_cast<DenseElementsAttr>(op.getValue())) {
    bytes = dense.getRawData();
  } else {
    return op.emitError("unsupported constant attribute");
  }
  if (static_cast<int64_t>(bytes.size()) != type.getNumElements() * 4)
    return op.emitError("constant has ") << bytes.size() << " bytes, expected "
                                         << type.getNumElements() * 4;
  int64_t k = type.getDimSize(tb ? 1 : 0), n = type.getDimSize(tb ? 0 : 1);
  int64_t panels = (n + kPanel - 1) / kPanel;
  uint64_t size = static_cast<uint64_t>(panels * kPanel * k * 4);
  uint64_t offset = blob->appendGenerated(size, 64, [bytes, k, n, tb](llvm::raw_ostream &os) {
    writePanels(bytes, k, n, tb, os);
  });
  // Named apart from the plain weight: the data is op(B) in 32-column panels.
  blobEntries.push_back({entryName + "@gemm_panels32", "F32", {panels, k, kPanel}, offset,
                         offset + size});
  blobOffsets[value] = offset;
  return success();
}

FailureOr<bool> Emitter::emitGemmKernel(FusionOp fusion, llvm::raw_ostream &os) {
  MatmulOp m = f32Matmul(fusion);
  if (!m)
    return false;
  Block &block = fusion.getBody().front();
  size_t computeOps = 0;
  for (Operation &op : block.without_terminator())
    computeOps += !isa<ConstantOp>(op);
  // The epilogue runs per tile when every result is an element of the
  // GEMM's output: the same type, or a view of it of rank 2 or more with the
  // same static last dim that FuseEpilogues let the chain pass (a reshape,
  // then elementwise ops: the same elements, as many, in the same order,
  // dynamic dims included). Its element code then reads rows x columns of the
  // [rows, N] view.
  auto resultType = m.getResult().getType();
  auto yield = cast<YieldOp>(block.getTerminator());
  auto sameRows = [&](Value r) {
    auto t = cast<RankedTensorType>(r.getType());
    if (t == resultType)
      return true;
    if (t.getElementType() != resultType.getElementType() || t.getRank() < 2 ||
        resultType.getRank() < 2 || t.isDynamicDim(t.getRank() - 1) ||
        t.getShape().back() != resultType.getShape().back())
      return false;
    Value v = yield.getValues()[cast<OpResult>(r).getResultNumber()];
    llvm::DenseMap<Value, bool> seen;
    return keepsElements(v, m.getResult(), seen);
  };
  bool tiled = computeOps > 1 && llvm::all_of(fusion.getResults(), sameRows);
  Value rhs = outside(m.getRhs());
  bool packed = packedWeights.count(rhs);
  // The GEMM writes the kernel's first result; the epilogue reads it there.
  names[m.getResult()] = name(fusion.getResult(0));
  codegen::emitOpComment(os, m, "  ");
  codegen::CallOperands operands{
      [&](Value v) { return name(v); }, [&](Value v) { return shape(v); },
      [&](Value v, unsigned d) { return dimExpr(v, d); },
      [&](Value v) { return numelExpr(v); }, [&](Value v) { return elem(v); }};
  // matmulArgs: lhs, rhs, out, batch, m, n, k, ta, tb, rhs_shared.
  std::string args = codegen::matmulArgs(m, operands, name(m.getResult()));
  std::string lhsName = name(m.getLhs()), rhsName = name(m.getRhs());
  std::string rest = args.substr(lhsName.size() + 2 + rhsName.size() + 2);
  std::string pointers = lhsName + ", " + (packed ? "nullptr, " + rhsName : rhsName + ", nullptr");
  os << "  {\n";
  if (packed)
    os << "    // " << rhsName << ": packed at compile time (32-column panels).\n";
  if (computeOps == 1) {
    os << "    thunder_gemm::matmul_f32(" << pointers << ", " << rest
       << ", thunder_gemm::NoEpilogue{});\n  }\n";
    return true;
  }
  emitKernelPointers(fusion, os);
  os << "    const float *library = out0;\n";
  auto bind = [&](codegen::BodyEmitter &body) {
    body.bindMemory(m.getResult(), "library");
  };
  if (tiled) {
    if (failed(emitPointwiseKernel(fusion, os, bind, "epilogue")))
      return failure();
    // (An unmarked lambda as it is: matmul_f32 takes any epilogue.)
    std::string mark = clampMark(fusion, m);
    os << "    thunder_gemm::matmul_f32(" << pointers << ", " << rest << ", "
       << (mark.empty() ? "epilogue" : "thunder_gemm::EpilogueRef(epilogue)" + mark)
       << ");\n  }\n";
    return true;
  }
  // Results of other shapes: the GEMM, then the epilogue as its own pass.
  os << "    thunder_gemm::matmul_f32(" << pointers << ", " << rest
     << ", thunder_gemm::NoEpilogue{});\n";
  if (failed(emitPointwiseKernel(fusion, os, bind)))
    return failure();
  os << "  }\n";
  return true;
}

} // namespace thunder::cpu
