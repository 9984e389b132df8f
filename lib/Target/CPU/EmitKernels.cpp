//===- EmitKernels.cpp - The CPU kernel of each library op ----------------===//
//
// The single-op kernels (data movement, GEMM, convolution, pooling,
// reductions over any dims, composites left whole: the shared table of
// Common/LibraryCalls.h; attention with its mask, fp32 through the flash
// kernel of thunder_cpu_attention.h) as calls into thunder_cpu.h. Each is
// preceded by the op and its source line. Pointwise and row-reduction
// kernels are generated loops (EmitFusion.cpp).
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include "thunder/Dialect/Thunder/IR/CustomOps.h"
#include "thunder/Target/Common/CustomKernels.h"
#include "thunder/Target/Common/LibraryCalls.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::thunder;

namespace thunder::cpu {

LogicalResult Emitter::emitOp(Operation *op, llvm::raw_ostream &os,
                              llvm::StringRef convEpilogue) {
  // fp32 convolutions and pooling call the driver compiled once per library
  // (thunder_cpu_conv_api.h); everything else here, thunder_cpu.h's templates.
  bool convApi = isa<ConvolutionOp, MaxPoolOp, AvgPoolOp>(op) &&
                 cast<ShapedType>(op->getResult(0).getType()).getElementType().isF32();
  kernelHeader = std::max(kernelHeader, convApi ? KernelHeader::ConvApi : KernelHeader::Full);
  codegen::emitOpComment(os, op, "  ");
  codegen::CallOperands operands{
      [&](Value v) { return name(v); }, [&](Value v) { return shape(v); },
      [&](Value v, unsigned d) { return dimExpr(v, d); },
      [&](Value v) { return numelExpr(v); }, [&](Value v) { return elem(v); }};
  static const codegen::CallStyle style{"  ", "", "; ", 0};
  // The convolution's last arguments: whether the weights are a
  // thunder.constant (through the kernel's block arguments and views),
  // which lives as long as the model: then conv reorders or packs them
  // once and keeps the copy; then the kernel's epilogue, if it has one.
  auto constantWeights = [](ConvolutionOp c) -> std::string {
    Value v = c.getWeight();
    while (true) {
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        auto fusion = dyn_cast_or_null<FusionOp>(arg.getOwner()->getParentOp());
        if (!fusion)
          return "false";
        v = fusion.getInputs()[arg.getArgNumber()];
      } else if (auto r = dyn_cast_or_null<ReshapeOp>(v.getDefiningOp())) {
        v = r.getOperand();
      } else {
        return isa_and_nonnull<ConstantOp>(v.getDefiningOp()) ? "true" : "false";
      }
    }
  };
  // The layout argument of a convolution or pooling where a tensor it reads
  // or writes is channels last (ChannelsLast.cpp), per build where the two
  // differ; "" where it is channels first in both.
  auto layoutArg = [&](Operation *op) -> std::string {
    ConvLayouts layout = convLayouts.lookup(op);
    if (!layout.avx512 && !layout.other)
      return "";
    if (layout.avx512 == layout.other)
      return std::to_string(layout.avx512);
    return "THUNDER_CONV_LAYOUT(" + std::to_string(layout.avx512) + ", " +
           std::to_string(layout.other) + ")";
  };
  // Then the layout, after an empty EpilogueRef when it has no epilogue.
  auto convLast = [&](ConvolutionOp c) -> std::string {
    std::string last = constantWeights(c), layout = layoutArg(c);
    if (convEpilogue.empty() && layout.empty())
      return last;
    last += ", " + (convEpilogue.empty() ? std::string("thunder_gemm::EpilogueRef()")
                                         : convEpilogue.str());
    return layout.empty() ? last : last + ", " + layout;
  };
  if (auto lookup = dyn_cast<EmbeddingOp>(op))
    if (Value table = packedTable(lookup)) {
      // The table is stored as the GEMM's packed panels of its transpose
      // (EmitGemm.cpp): a row is a column of its panel.
      auto type = cast<RankedTensorType>(table.getType());
      os << "  embedding_from_panels(" << name(lookup.getWeight()) << ", "
         << type.getDimSize(0) << "LL, " << type.getDimSize(1) << "LL, "
         << name(lookup.getIndices()) << ", " << numelExpr(lookup.getIndices()) << ", "
         << name(lookup) << ");\n";
      return success();
    }
  if (codegen::emitLibraryCall(op, operands, style, convLast, os, layoutArg))
    return success();
  auto dims = [&](Value v) { return shape(v); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ConstantOp) { return success(); }) // laid out up front
      .Case([&](CustomCallOp call) {
        // run_model returns the kernel's status; the runtime names the model.
        codegen::emitCustomCall(os, call, [&](Value v) { return name(v); }, dims,
                                "nullptr", "return status;", "  ");
        return success();
      })
      .Case([&](ReshapeOp r) {
        // A view: same bytes, new shape.
        os << "  // (a view of " << name(r.getOperand()) << ")\n";
        return success();
      })
      .Case([&](ScaledDotProductAttentionOp a) -> LogicalResult {
        Value q = a.getQuery();
        int r = rank(q);
        FailureOr<std::string> args = codegen::attentionArgs(a, operands);
        if (failed(args))
          return failure();
        os << "  {\n";
        Value m = a.getMask();
        if (m) {
          // The mask broadcasts over [batch..., L, S]: strides are 0 where
          // its dim is 1.
          os << "    int64_t mstr[" << r << "]; strides_of(" << dims(m) << ", "
             << r << ", mstr);\n";
          for (int d = 0; d < r; ++d)
            os << "    if (" << dims(m) << "[" << d << "] == 1) mstr[" << d
               << "] = 0;\n";
          os << "    const " << elem(m) << " *mask = " << name(m) << ";\n";
          // The offset of batch b's [L, S] slice, b flat over q's batch dims.
          os << "    auto mask_offset = [&](int64_t b) {\n      int64_t off = 0;\n";
          for (int d = r - 3; d >= 0; --d)
            os << "      off += (b % " << dimExpr(q, d) << ") * mstr[" << d
               << "]; b /= " << dimExpr(q, d) << ";\n";
          os << "      return off;\n    };\n";
        }
        if (typeOf(q).getElementType().isF32()) {
          // fp32: the blocked flash kernel (thunder_cpu_attention.h); key and
          // value share the query's batch here (kv group 1).
          std::string maskArgs = "nullptr, nullptr, 0, 0, [](int64_t) { return int64_t(0); }";
          if (m)
            maskArgs = std::string(typeOf(m).getElementType().isInteger(1)
                                       ? "nullptr, mask"
                                       : "mask, nullptr") +
                       ", mstr[" + std::to_string(r - 2) + "], mstr[" +
                       std::to_string(r - 1) + "], mask_offset";
          os << "    flash_attention(" << *args << ", int64_t(1), " << maskArgs
             << ");\n  }\n";
          return success();
        }
        std::string mask = "[](double s, int64_t, int64_t, int64_t) { return s; }";
        if (m) {
          os << "    auto mask_at = [&](double s, int64_t b, int64_t i, int64_t j) {\n"
             << "      int64_t off = mask_offset(b) + i * mstr[" << r - 2
             << "] + j * mstr[" << r - 1 << "];\n";
          if (typeOf(m).getElementType().isInteger(1))
            os << "      return mask[off] ? s : -std::numeric_limits<double>::infinity();\n";
          else
            os << "      return s + static_cast<double>(cv(mask[off]));\n";
          os << "    };\n";
          mask = "mask_at";
        }
        os << "    sdpa(" << *args << ", " << mask << ");\n  }\n";
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitError("the CPU backend has no kernel for this op");
      });
}

} // namespace thunder::cpu
