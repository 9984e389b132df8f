//===- Emitter.h - The GPU code generator's emitter (private) ---*- C++ -*-===//
//
// Shared by GpuEmitter.cpp (storage, the host program, weights, the entry
// table) and EmitKernels.cpp (a kernel or library call per unit: a fusion
// region, or a top-level op while the fusion passes leave ops outside
// regions). The spellings that differ between CUDA and HIP come from the
// GpuDialect table (thunder/Target/GPU/GpuDialect.h).
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_LIB_TARGET_GPU_EMITTER_H
#define THUNDER_LIB_TARGET_GPU_EMITTER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "thunder/Target/Common/ArtifactSource.h"
#include "thunder/Target/Common/FusedBody.h"
#include "thunder/Target/GPU/GpuDialect.h"
#include "thunder/Target/ShapePlan.h"
#include "thunder/Target/TargetBackend.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace thunder::gpu {

namespace func = mlir::func;
using llvm::ArrayRef;
using llvm::SmallVector;
using mlir::cast;
using mlir::dyn_cast;
using mlir::FailureOr;
using mlir::isa;
using mlir::LogicalResult;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Type;
using mlir::Value;
// The C-family spellings every backend shares (ArtifactSource.h).
using ::thunder::codegen::cppString;
using ::thunder::codegen::cppType;
using ::thunder::codegen::doubleLiteral;
using ::thunder::codegen::dtypeCode;
using ::thunder::codegen::elementBytes;
using ::thunder::codegen::i64List;
using ::thunder::codegen::safetensorsDtype;
using ::thunder::codegen::sourceOf;

/// The largest rank the generated index arithmetic handles (the support
/// header's kMaxRank).
constexpr int kMaxRankForIndex = 8;


/// One unit of the program: a fusion region, or a top-level op outside one.
struct Unit {
  Operation *op;       ///< the thunder.fusion, or the op itself
  int index;           ///< position in program order
  int stream = 0;      ///< thunder.stream
  SmallVector<int64_t> waits; ///< thunder.wait: units on other streams to wait for
  bool recorded = false;      ///< another stream waits for this unit's event
  int event = -1;
  std::string name;    ///< the kernel's name
  std::string scratch = "0"; ///< scratch bytes it needs (C expression over sym)
  /// The arena offset of its library workspace (thunder.workspace), or -1.
  int64_t workspace = -1;
};

class GpuEmitter {
public:
  GpuEmitter(func::FuncOp func, const ShapePlan &plan, const TargetOptions &options,
          const GpuDialect &dialect)
      : func(func), plan(plan), options(options), dialect(dialect) {}

  LogicalResult run(EmittedSources &out);

  // Used by EmitKernels.cpp.
  std::string name(Value v) { return names.lookup(v); }
  std::string shape(Value v) { return name(v) + "_shape"; }
  RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }
  std::string elem(Value v);
  int rank(Value v) { return typeOf(v).getRank(); }
  std::string numelExpr(Value v);
  std::string bytesExpr(Value v);
  std::string dimExpr(Value v, unsigned d);
  /// The dim inside a kernel (static literal or S.s[k]).
  std::string kernelDim(Value v, unsigned d);

  /// Emits the kernel (to `device`) and the launch (to `host`) of a unit.
  LogicalResult emitUnit(Unit &unit, llvm::raw_ostream &device, llvm::raw_ostream &host);
  /// The scratch bytes a unit needs beyond its results, as a C expression.
  std::string unitScratch(Unit &unit);

private:
  /// Ops whose per-element value a pointwise kernel computes (elementwise,
  /// convert, broadcast/expand/transpose/slice/reshape, splats).
  static bool isPointwise(Operation *op);
  LogicalResult emitOpCall(Operation *op, llvm::raw_ostream &os);
  /// The shared body generator's context for a kernel (innerVar: a row
  /// kernel's inner loop variable, empty for pointwise kernels).
  codegen::BodyContext bodyContext(llvm::StringRef innerVar);
  /// One kernel computing `roots` per element (all of one shape) into
  /// `dests`: `leaves` are read from memory (in0, in1, ...), the rest is
  /// computed by the shared generator. Vector loads and stores when every
  /// read is in loop order, else a grid-stride loop with multi-indices.
  LogicalResult emitPointwise(const std::string &kernel, ArrayRef<Operation *> ops,
                              ArrayRef<Value> leaves, ArrayRef<Value> roots,
                              ArrayRef<std::string> dests, llvm::raw_ostream &device,
                              llvm::raw_ostream &host);
  /// One elementwise op (outside a region, or a region run op by op).
  LogicalResult emitOpKernel(const std::string &kernel, Operation *op,
                             llvm::raw_ostream &device, llvm::raw_ostream &host);
  /// A `reduction` region whose reductions all reduce the same trailing dims
  /// as ONE kernel: a block per row, a pass (and block reduction) per
  /// reduction, then the outputs. False when the region is not of that form.
  FailureOr<bool> emitRowReduction(Unit &unit, mlir::thunder::FusionOp fusion,
                                   llvm::raw_ostream &device, llvm::raw_ostream &host);
  LogicalResult emitRegion(Unit &unit, mlir::thunder::FusionOp fusion,
                           llvm::raw_ostream &device, llvm::raw_ostream &host);
  bool tryGemmEpilogue(Unit &unit, mlir::thunder::FusionOp fusion, llvm::raw_ostream &host);
  /// Temporaries of a region executed op by op, in order.
  std::vector<Value> regionTemps(mlir::thunder::FusionOp fusion);
  void emitComment(Operation *op, llvm::raw_ostream &os, llvm::StringRef indent);

  void emitShapes(llvm::raw_ostream &os);
  LogicalResult collectConstants();
  LogicalResult planStorage();
  void emitEntry(llvm::raw_ostream &os);
  std::string createAndRun();

  func::FuncOp func;
  const ShapePlan &plan;
  const TargetOptions &options;
  const GpuDialect &dialect;
  llvm::DenseMap<Value, std::string> names;
  std::vector<Unit> units;
  int numStreams = 1, numEvents = 0;

  /// Where each unit result lives: an arena slot (planned offset, or one of
  /// ours), or output k (-1-k).
  struct Slot {
    Value value;
    int64_t planned = -1; ///< the memory plan's offset, or -1
    int output = -1;      ///< written straight into output k
  };
  std::vector<Slot> slots;
  bool plannedArena = false;
  int64_t arenaBytes = 0;
  /// Outputs copied at the end: (output index, value).
  std::vector<std::pair<unsigned, Value>> outputCopies;

  /// The weights blob (and splat constants, filled at create) and each
  /// constant's offset in it.
  std::string blob;
  uint64_t deviceBytes = 0;
  llvm::DenseMap<Value, uint64_t> blobOffsets;
  std::vector<std::tuple<Value, uint64_t, std::string>> splats;
  std::vector<codegen::WeightEntry> blobEntries; ///< --external-weights
  int64_t weightsHeaderBytes = 0;
  unsigned counter = 0;
  bool needsLt = false;
  bool needsDnn = false; ///< a convolution goes through cuDNN
  /// Library calls emitted so far, and whether one of them has no planned
  /// workspace (its stream then gets a workspace after the arena).
  int libraryCalls = 0;
  bool streamWorkspaces = false;
};

/// Whether the vendor GEMM library (cuBLASLt) takes elements of type `t`.
bool isLtType(Type t);
/// The im2col bytes a convolution needs (0 when it needs none), as a C
/// expression (EmitLibraryCalls.cpp).
std::string convScratch(GpuEmitter &e, mlir::thunder::ConvolutionOp c);

} // namespace thunder::gpu

#endif // THUNDER_LIB_TARGET_GPU_EMITTER_H
