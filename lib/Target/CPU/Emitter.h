//===- Emitter.h - The CPU backend's C++ emitter (private) ------*- C++ -*-===//
//
// Shared by CPUBackend.cpp (the host program, symbols, workspace, weights and
// the entry table) and EmitKernels.cpp (one kernel per op).
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_LIB_TARGET_CPU_EMITTER_H
#define THUNDER_LIB_TARGET_CPU_EMITTER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "thunder/Target/Common/ArtifactSource.h"
#include "thunder/Target/Common/WeightsBlob.h"
#include "thunder/Target/ShapePlan.h"
#include "thunder/Target/TargetBackend.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace thunder::codegen {
struct BodyContext;
class BodyEmitter;
std::string doubleLiteral(double v);
} // namespace thunder::codegen

namespace thunder::cpu {

/// `.clamping(lo, hi)` where the epilogue of `fusion`, whose library op is
/// `anchor`, is only a clamp, to mark its thunder_gemm::EpilogueRef with;
/// empty otherwise (EmitFusion.cpp).
std::string clampMark(mlir::thunder::FusionOp fusion, mlir::Operation *anchor);

namespace func = mlir::func;
using ::thunder::EmittedSources;
using ::thunder::PlanDim;
using ::thunder::ShapePlan;
using ::thunder::SymbolDef;
using ::thunder::TargetOptions;
using mlir::cast;
using mlir::dyn_cast;
using mlir::isa;
using mlir::thunder::ConstantOp;
using mlir::thunder::FusionOp;
using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Type;
using mlir::Value;
using llvm::ArrayRef;
using llvm::SmallVector;

// The C-family spellings every backend shares (lib/Target/Common).
using namespace ::thunder::codegen;

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

  void emitShapes(llvm::raw_ostream &os);
  LogicalResult emitConstant(ConstantOp op, llvm::raw_ostream &os);
  /// One op as a library call or loop; a convolution calls `convEpilogue`
  /// (the C++ expression of a thunder_gemm::EpilogueRef over a tile lambda
  /// that emitPointwiseKernel wrote) on its output, if given.
  LogicalResult emitOp(Operation *op, llvm::raw_ostream &os,
                       llvm::StringRef convEpilogue = {});
  /// One kernel (EmitFusion.cpp).
  LogicalResult emitFusion(FusionOp fusion, llvm::raw_ostream &os);
  /// The pointwise loops of a kernel; with `tileLambda`, instead a lambda of
  /// that name over the tile [tile_r0, tile_r1) x [tile_c0, tile_c1) of the
  /// [rows, columns] view of the result whose rows are its first
  /// `tileRowDims` dims (by default all but the last: a GEMM's epilogue,
  /// EmitGemm.cpp; 2 for a convolution's [batch * channels, positions]).
  /// `build`, for a pointwise kernel of its own: the AVX-512 build (true) or
  /// the others', whose tensors kept channels last it reads and writes so
  /// (ChannelsLast.cpp); unset for an epilogue, which reads channels first.
  LogicalResult emitPointwiseKernel(
      FusionOp fusion, llvm::raw_ostream &os,
      llvm::function_ref<void(codegen::BodyEmitter &)> prepare = nullptr,
      llvm::StringRef tileLambda = {}, int tileRowDims = 0,
      std::optional<bool> build = std::nullopt);
  /// An fp32 gemm kernel on Thunder's GEMM (EmitGemm.cpp); false when the
  /// kernel is not one.
  FailureOr<bool> emitGemmKernel(FusionOp fusion, llvm::raw_ostream &os);
  /// Finds the weight constants read only as the rhs of fp32 GEMMs
  /// (packedWeights), before the constants are laid out.
  void findPackedWeights();
  /// Appends such a constant to the blob in the GEMM's packed layout.
  LogicalResult emitPackedConstant(ConstantOp op, bool transposed);
  /// Constants stored packed, with the transpose_rhs of their matmuls.
  llvm::DenseMap<Value, bool> packedWeights;
  /// Decides which tensors stay channels last between oneDNN's convolutions
  /// (ChannelsLast.cpp): convLayouts, before the kernels are emitted.
  void findChannelsLast();
  /// A convolution's layout argument (thunder_cpu_conv_api.h's ConvLayout)
  /// in the kernels compiled for AVX-512 and in the others: they differ where
  /// only AVX-512 builds hand depthwise and pointwise convolutions to oneDNN
  /// channels last (ChannelsLast.cpp).
  struct ConvLayouts {
    int avx512 = 0, other = 0;
  };
  /// The layouts of each convolution, and each pooling, that reads or writes
  /// a tensor channels last in either build.
  llvm::DenseMap<Operation *, ConvLayouts> convLayouts;
  /// The tensors kept channels last in each build: [0] the others, [1] the
  /// AVX-512 one.
  llvm::DenseSet<Value> keptLast[2];
  /// The storage order of a generated loop's input `argument` in the AVX-512
  /// build or the others: {0, 2, 3, 1} where it is kept channels last
  /// (ChannelsLast.cpp saw that the loop can read it so), else empty. What
  /// bodyContext hands FusedBody as BodyContext::storageOrder.
  llvm::SmallVector<int64_t, 4> storageOrder(FusionOp fusion, unsigned argument,
                                             bool avx512) const;
  /// Whether a pointwise loop writes its output channels last (NHWC) in the
  /// AVX-512 build or the others: its loop then runs over it in that order.
  bool writesLast(FusionOp fusion, bool avx512) const;
  /// The table of an embedding lookup when it is stored packed (a tied
  /// embedding whose GEMM transposes it), else null.
  Value packedTable(mlir::thunder::EmbeddingOp lookup) const;
  /// A row-reduction kernel for `build` (emitPointwiseKernel's).
  LogicalResult emitReductionKernel(FusionOp fusion, llvm::raw_ostream &os, bool build);
  void emitKernelPointers(FusionOp fusion, llvm::raw_ostream &os);
  /// A kernel as a call of its function (KernelUnits.cpp), the function
  /// kept in kernelSources under its digest-derived name.
  LogicalResult emitKernelCall(FusionOp fusion, llvm::raw_ostream &os);
  /// The declarations of the kernel functions (in namespace thunder_cpu).
  void emitKernelDeclarations(llvm::raw_ostream &os);
  /// A unit per distinct kernel (kernels/NAME.cpp) in `out`.
  void addKernelUnits(EmittedSources &out);
  /// The support files and every unit after `units` (kernels, the GEMM
  /// driver's when the program has GEMMs, custom kernels).
  LogicalResult finishUnits(EmittedSources &out, std::vector<std::string> units);
  std::map<std::string, std::string> kernelSources;
  std::vector<std::string> kernelOrder;
  /// What a kernel's unit includes, the least that declares what it calls:
  /// thunder_cpu_base.h for the generated loops (and GEMMs, through
  /// thunder_cpu_gemm_api.h), thunder_cpu_conv_api.h for fp32 convolutions
  /// and pooling, thunder_cpu.h for the library's templates.
  enum class KernelHeader { Base, ConvApi, Full };
  std::map<std::string, KernelHeader> kernelHeaders;
  /// Set by emitOp: the header the kernel being emitted needs so far.
  KernelHeader kernelHeader = KernelHeader::Base;
  /// What FusedBody needs to emit `fusion`'s body; with `build`, the storage
  /// orders of its inputs in that build (emitPointwiseKernel's).
  codegen::BodyContext bodyContext(FusionOp fusion, llvm::StringRef innerVar,
                                   std::optional<bool> build = std::nullopt);
  void emitEntry(llvm::raw_ostream &os);
  /// kWeights, the table of thunder_model_weights_v1.
  void emitWeightsTable(llvm::raw_ostream &os);
  /// The index in blobEntries (and kWeights) of the weight at `offset`.
  unsigned weightIndex(uint64_t offset) const;
  std::string createAndRun();
  /// The safetensors header's length, once the file is made.
  int64_t weightsHeaderBytes = 0;

  func::FuncOp func;
  const ShapePlan &plan;
  const TargetOptions &options;
  llvm::DenseMap<Value, std::string> names;
  /// Where each kernel result lives (thunder-plan-memory).
  struct Placement {
    enum Kind { Arena, Runtime, Output, Borrowed } kind = Arena;
    Value value;
    int64_t offset = 0; ///< Arena, Borrowed: byte offset
    int64_t output = 0; ///< Output, Borrowed: function result
    int64_t index = 0;  ///< Runtime: index among runtimeTensors
  };
  std::vector<Placement> placements;
  /// Arena tensors packed at run time (dynamic shapes), in schedule order.
  struct RuntimeTensor {
    Value value;
    int64_t first, last, reuses;
  };
  std::vector<RuntimeTensor> runtimeTensors;
  bool dynamicArena = false;
  int64_t arenaBytes = 0;
  /// Entries of the generated offsets[] array.
  size_t numOffsets() const { return runtimeTensors.size() + splats.size() + 1; }
  LogicalResult readMemoryPlan();
  void emitLayout(llvm::raw_ostream &os);
  void emitPlacements(llvm::raw_ostream &os);
  /// Splat constants filled at the start of a run.
  std::vector<std::pair<Value, std::string>> splats;
  /// The weights blob and each constant's offset in it.
  std::shared_ptr<codegen::WeightsBlob> blob =
      std::make_shared<codegen::WeightsBlob>();
  llvm::DenseMap<Value, uint64_t> blobOffsets;
  /// The constants the caller gives at load (TargetOptions::providedWeights),
  /// not embedded: their index in blobEntries.
  llvm::DenseMap<Value, unsigned> providedEntries;
  /// Whether `op` is a weight the caller provides, as it is.
  bool isProvided(ConstantOp op) const;
  /// Every weight with its index in blobEntries (kWeights), in that order.
  std::vector<std::pair<unsigned, Value>> weightsInTableOrder();
  /// The blob's safetensors entries (--external-weights).
  std::vector<codegen::WeightEntry> blobEntries;
};

} // namespace thunder::cpu

#endif // THUNDER_LIB_TARGET_CPU_EMITTER_H
