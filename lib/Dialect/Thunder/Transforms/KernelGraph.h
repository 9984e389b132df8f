//===- KernelGraph.h - Kernels and the tensors between them -----*- C++ -*-===//
//
// Private to the planning passes (thunder-schedule, thunder-plan-memory) and
// the memory report: a function after the fusion pipeline seen as a graph of
// kernels and the tensors they produce and read, with views (thunder.reshape)
// resolved to the tensor whose bytes they are.
//
// A top-level op is a weight (thunder.constant, thunder.weight or another
// constant-like op: its bytes are the model's, never in the arena), a view
// (thunder.reshape: same bytes as its operand, no code), the terminator, or a
// kernel: a thunder.fusion, or any other op (before fusion every op is its
// own kernel, so the passes also run on unfused IR).
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_LIB_DIALECT_THUNDER_TRANSFORMS_KERNELGRAPH_H
#define THUNDER_LIB_DIALECT_THUNDER_TRANSFORMS_KERNELGRAPH_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::thunder::planning {

/// Attribute names of the plan (the contract with the backends).
inline constexpr llvm::StringLiteral kStreamAttr = "thunder.stream";
inline constexpr llvm::StringLiteral kWaitAttr = "thunder.wait";
inline constexpr llvm::StringLiteral kOffsetsAttr = "thunder.offsets";
inline constexpr llvm::StringLiteral kInplaceAttr = "thunder.inplace";
inline constexpr llvm::StringLiteral kLiveAttr = "thunder.live";
inline constexpr llvm::StringLiteral kBorrowedAttr = "thunder.borrowed";
inline constexpr llvm::StringLiteral kWorkspaceAttr = "thunder.workspace";
inline constexpr llvm::StringLiteral kArenaAttr = "thunder.arena";

/// Arena offsets and sizes are multiples of this (vector loads, cache lines).
inline constexpr int64_t kAlignment = 64;
/// The offset of a tensor that is packed at run time (dynamic shapes).
inline constexpr int64_t kRuntimeOffset = -9223372036854775807LL;

bool isWeight(Operation *op);
bool isView(Operation *op);
/// Neither a weight, a view nor a terminator.
bool isKernel(Operation *op);

/// The value whose bytes `value` is: follows thunder.reshape views back.
Value viewRoot(Value value);

/// Bytes of one element in memory (i1 takes a byte).
int64_t elementBytes(Type elementType);
/// Bytes of a value of `type`; std::nullopt when a dim is dynamic. Values
/// that are not ranked tensors take no bytes.
std::optional<int64_t> tensorBytes(Type type);

/// A kernel's name in reports: a fusion's kernel_name, else the op's
/// mnemonic and the kernel's index in schedule order ("matmul_3").
std::string kernelName(Operation *kernel, int64_t index);

/// The kernels of a function in block order and the tensors they produce.
struct KernelGraph {
  struct Tensor {
    Value value;
    unsigned kernel = 0; ///< index of the producing kernel
    unsigned result = 0; ///< result number on that kernel
    std::optional<int64_t> bytes;
    /// The function result it is written to directly (the first one when
    /// returned several times), or -1.
    int64_t output = -1;
    /// Kernels that read it, directly or through views; distinct, ascending.
    llvm::SmallVector<unsigned, 2> readers;
  };

  llvm::SmallVector<Operation *> kernels;
  llvm::SmallVector<Tensor> tensors;
  /// Per kernel: the tensors it produces (by result number) and the
  /// distinct tensors it reads (ascending).
  llvm::SmallVector<llvm::SmallVector<unsigned, 1>> results;
  llvm::SmallVector<llvm::SmallVector<unsigned, 2>> inputs;
  llvm::DenseMap<Value, unsigned> tensorOf;

  /// The graph of `block` (a function body) as it is ordered now.
  static KernelGraph build(Block &block);

  /// The tensor that `value` (through views) is, if a kernel produced it.
  std::optional<unsigned> tensorFor(Value value) const;
  /// The distinct kernels whose results kernel `k` reads, ascending.
  llvm::SmallVector<unsigned, 2> producers(unsigned k) const;
  /// The last kernel reading tensor `t`, or its producer when none does.
  unsigned lastUse(unsigned t) const {
    return tensors[t].readers.empty() ? tensors[t].kernel
                                      : tensors[t].readers.back();
  }
};

/// Every value `op` reads: its operands and the values its regions use from
/// above (a fusion's region is isolated, another op's may not be).
llvm::SmallVector<Value> usedValues(Operation *op);

/// Happens-before between kernels on streams, in schedule order. For each
/// kernel, `clock[s]` is the latest position on stream `s` known to have
/// completed before it starts: the previous kernel on its own stream (streams
/// run in order) and every kernel it waits for, with whatever those waited
/// for in turn (events are transitive).
class StreamClocks {
public:
  explicit StreamClocks(llvm::ArrayRef<int64_t> streams);

  /// Starts kernel `pos` (positions are visited in increasing order).
  void begin(int64_t pos);
  /// Whether kernel `before` is known complete when kernel `pos` starts.
  bool ordered(int64_t before, int64_t pos) const;
  /// Kernel `pos` waits for kernel `before` (on another stream).
  void wait(int64_t before, int64_t pos);

private:
  llvm::SmallVector<int64_t> streams;
  llvm::SmallVector<llvm::SmallVector<int64_t, 4>> clocks;
  llvm::SmallVector<int64_t, 4> lastOnStream;
};

} // namespace mlir::thunder::planning

#endif // THUNDER_LIB_DIALECT_THUNDER_TRANSFORMS_KERNELGRAPH_H
