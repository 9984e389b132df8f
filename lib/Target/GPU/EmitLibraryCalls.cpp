//===- EmitLibraryCalls.cpp - A GPU library call or header kernel per op --===//
//
// Ops that are not generated per element call the support headers (the
// shared table of Common/LibraryCalls.h): GEMMs and convolutions through the
// vendor libraries (GpuLibraries) or the header's own kernels, attention,
// normalizations, pooling, gathers and the data movement ops.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"
#include "thunder/Dialect/Thunder/IR/CustomOps.h"
#include "thunder/Target/Common/CustomKernels.h"
#include "thunder/Target/Common/LibraryCalls.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::thunder;

namespace thunder::gpu {

//===----------------------------------------------------------------------===//
// Library ops and data movement: calls into the support header
//===----------------------------------------------------------------------===//

/// The im2col bytes a convolution needs (0 for the convolution library's,
/// grouped, 1x1 unit-stride unpadded, or types the GEMM library lacks), as a
/// C expression.
std::string GpuEmitter::convScratch(ConvolutionOp c) {
  GpuEmitter &e = *this;
  Type t = e.typeOf(c).getElementType();
  if (dialect.libraries.convTakes(c) || c.getGroups() != 1 || !dialect.libraries.gemmTakes(t))
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

codegen::CallOperands GpuEmitter::callOperands() {
  return {[this](Value v) { return name(v); }, [this](Value v) { return shape(v); },
          [this](Value v, unsigned d) { return dimExpr(v, d); },
          [this](Value v) { return numelExpr(v); }, [this](Value v) { return elem(v); }};
}

LogicalResult GpuEmitter::emitOpCall(Operation *op, llvm::raw_ostream &os) {
  auto dims = [&](Value v) { return shape(v); };
  auto b = [](bool v) { return v ? "true" : "false"; };
  // What the host program needs to know of the library calls: which
  // libraries to load, and how many calls want a workspace.
  if (auto m = dyn_cast<MatmulOp>(op)) {
    needsLt |= dialect.libraries.gemmTakes(typeOf(m).getElementType());
    ++libraryCalls;
  } else if (auto x = dyn_cast<ConvolutionOp>(op)) {
    bool dnn = dialect.libraries.convTakes(x);
    needsDnn |= dnn;
    needsLt |= !dnn && x.getGroups() == 1 && dialect.libraries.gemmTakes(typeOf(x).getElementType());
    ++libraryCalls;
  }
  codegen::CallOperands operands = callOperands();
  static const codegen::CallStyle style{"    ", "c, ", ";\n      ", 1};
  // The convolution's last argument: whether it goes through the library.
  auto viaLibrary = [&](ConvolutionOp x) -> std::string {
    return b(dialect.libraries.convTakes(x));
  };
  if (codegen::emitLibraryCall(op, operands, style, viaLibrary, os))
    return success();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ConstantOp) { return success(); })
      .Case([&](CustomCallOp call) -> LogicalResult {
        if (StringRef(dialect.target) != "cuda")
          return call.emitError("the ") << dialect.displayName
                 << " backend does not call custom kernels yet (the cpu and cuda targets do)";
        std::string failed = "snprintf(error, error_size, \"the custom kernel " +
                             call.getCallee().str() + " of " + call.getOp().str() +
                             " failed with status %d\", status);\n      return 1;";
        codegen::emitCustomCall(os, call, [&](Value v) { return name(v); }, dims,
                                "c.stream", failed, "    ");
        return success();
      })
      .Case([&](ReshapeOp r) {
        os << "    // (a view of " << name(r.getOperand()) << ")\n";
        return success();
      })
      .Case([&](ScaledDotProductAttentionOp a) -> LogicalResult {
        Value q = a.getQuery(), v = a.getValue();
        int r = rank(q);
        const int64_t maxHead = dialect.libraries.attentionMaxHeadDim;
        if (r > kMaxRankForIndex)
          return a.emitError("the ") << dialect.displayName
                 << " backend handles attention of rank <= " << kMaxRankForIndex;
        for (Value t : {q, v}) {
          int64_t dim = typeOf(t).getDimSize(r - 1);
          if (!ShapedType::isDynamic(dim) && dim > maxHead)
            return a.emitError("the ") << dialect.displayName
                   << " attention kernel takes head dims up to " << maxHead << ", got " << dim;
        }
        int64_t e = typeOf(q).getDimSize(r - 1), ev = typeOf(v).getDimSize(r - 1);
        if ((!ShapedType::isDynamic(e) && e > maxHead) ||
            (!ShapedType::isDynamic(ev) && ev > maxHead))
          return a.emitError("the ") << dialect.displayName
                 << " attention kernel handles head dims up to " << maxHead << ", got " << e
                 << " and " << ev;
        FailureOr<std::string> args = codegen::attentionArgs(a, operands);
        if (failed(args))
          return failure();
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
        os << "      if (!sdpa(c, " << *args << ", mask))\n"
           << "        failure = kFailureAttention; // head dims above " << maxHead
           << "\n    }\n";
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitError("the ") << dialect.displayName << " backend has no kernel for this op";
      });
}

} // namespace thunder::gpu
