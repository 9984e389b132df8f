//===- Pipelines.h - Thunder's compilation pipelines ------------*- C++ -*-===//
//
// The pass pipelines of the compiler, as C++ functions. thunder-opt, the
// thunder-compile CLI and the Python binding all build their pass managers
// from these, so any run can be reproduced with thunder-opt.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_PIPELINES_PIPELINES_H
#define THUNDER_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"
#include "thunder/Support/Phase.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace thunder {

/// Options of the graph-level pipeline.
struct GraphPipelineOptions
    : public mlir::PassPipelineOptions<GraphPipelineOptions> {
  Option<bool> decomposeComposites{
      *this, "decompose-composites",
      llvm::cl::desc("Rewrite softmax, normalizations and attention into "
                     "primitives (for targets without fused kernels)"),
      llvm::cl::init(false)};
};

/// Graph-level cleanup on imported IR: canonicalize and fold, optionally
/// decompose composites, then clean up again.
void buildThunderGraphPipeline(mlir::OpPassManager &pm,
                               const GraphPipelineOptions &options);

/// Options of the kernel pipelines (fusion, then scheduling and planning).
struct KernelPipelineOptions
    : public mlir::PassPipelineOptions<KernelPipelineOptions> {
  Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Fuse ops into kernels (off: one kernel per op, the "
                     "unfused baseline)"),
      llvm::cl::init(true)};
  Option<bool> borrowOutputs{
      *this, "borrow-outputs",
      llvm::cl::desc("Let tensors that die before a function result is "
                     "written live in that result's buffer "
                     "(thunder-plan-memory's borrow-outputs)"),
      llvm::cl::init(false)};
  Option<int64_t> libraryWorkspace{
      *this, "library-workspace",
      llvm::cl::desc("Bytes of library workspace each gemm/conv kernel gets "
                     "in the arena (thunder-plan-memory's library-workspace)"),
      llvm::cl::init(0)};
};

/// Graph IR to kernels: fold weight-only subgraphs, decompose normalizations
/// and softmax (static shapes) so the generic rules can fuse them, fuse
/// epilogues, reductions and pointwise chains, then give every remaining op
/// a kernel of its own. With `fuse` off only the last step runs (after the
/// weight folding).
void buildThunderFusionPipeline(mlir::OpPassManager &pm,
                                const KernelPipelineOptions &options);

/// Kernels to a planned program: order the kernels for low peak memory,
/// mark concurrent streams, and place every intermediate in one arena.
void buildThunderPlanPipeline(mlir::OpPassManager &pm);
/// The same, with the kernel pipelines' options (borrow-outputs).
void buildThunderPlanPipeline(mlir::OpPassManager &pm,
                              const KernelPipelineOptions &options);

/// Both kernel pipelines: what a backend expects as input.
void buildThunderKernelPipeline(mlir::OpPassManager &pm,
                                const KernelPipelineOptions &options);

/// Registers the dialects every Thunder tool needs.
void registerThunderDialects(mlir::DialectRegistry &registry);

/// Registers Thunder's passes and pipelines with the global registry (for
/// thunder-opt's command line).
void registerThunderPassesAndPipelines();

} // namespace thunder

#endif // THUNDER_PIPELINES_PIPELINES_H
