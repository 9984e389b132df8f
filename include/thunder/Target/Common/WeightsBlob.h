//===- WeightsBlob.h - A model's weights, streamed to the artifact -*- C++ -*-===//
//
// DESIGN.md decision 3: weights never pass through IR text, and a model of
// many GB is never held twice. The backends lay the constants out in one blob
// (each at an aligned offset) that is embedded in the library or written as
// NAME.safetensors; this keeps the blob as views of the module's resource
// blobs (memory-mapped from the archive, or the caller's tensors) and writes
// it to disk piece by piece, so compiling costs no copy of the weights.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_TARGET_COMMON_WEIGHTSBLOB_H
#define THUNDER_TARGET_COMMON_WEIGHTSBLOB_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "thunder/Target/TargetBackend.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace thunder::codegen {

/// One weight in the blob: its name, safetensors dtype, shape and byte range;
/// or one the library reads only from the caller's memory (not embedded: no
/// bytes, TargetOptions::providedWeights).
struct WeightEntry {
  std::string name, dtype;
  llvm::SmallVector<int64_t> shape;
  uint64_t begin, end;
  bool embedded = true;
};

/// The weights blob: pieces at aligned offsets with zeros between them.
/// Views must outlive the blob (resource blobs and attribute storage live as
/// long as the module's context).
class WeightsBlob final : public ByteStream {
public:
  /// Places `bytes` (not copied) at the next multiple of `alignment`; returns
  /// their offset.
  uint64_t appendView(llvm::ArrayRef<char> bytes, uint64_t alignment);
  /// The same with a copy of `bytes` (for data made while emitting).
  uint64_t appendCopy(std::vector<char> bytes, uint64_t alignment);
  /// `bytes` bytes that `writer` produces when the blob is written (exactly
  /// that many), so derived data (weights repacked for a GEMM) is made piece
  /// by piece while writing, never held whole.
  uint64_t appendGenerated(uint64_t bytes, uint64_t alignment,
                           std::function<void(llvm::raw_ostream &)> writer);

  uint64_t size() const override { return end; }
  void write(llvm::raw_ostream &os) const override;

private:
  struct Piece {
    uint64_t offset;
    llvm::ArrayRef<char> bytes;
    /// A generated piece: its size and its writer (bytes is empty).
    uint64_t generatedBytes = 0;
    std::function<void(llvm::raw_ostream &)> writer;
    uint64_t size() const { return writer ? generatedBytes : bytes.size(); }
  };
  std::vector<Piece> pieces;
  std::vector<std::unique_ptr<std::vector<char>>> owned;
  uint64_t end = 0;
};

/// The entry of a weight the library holds no copy of (embedded false): its
/// name, the dtype and shape of `type`, and its byte count as [0, bytes).
WeightEntry absentEntry(llvm::StringRef name, mlir::RankedTensorType type);

/// Appends the bytes of a dense thunder.constant (a resource blob or a
/// literal, viewed where they lie; i1 as one byte each, copied) to `blob` at
/// the next multiple of `alignment`, and its safetensors entry (named by its
/// resource key, else `fallbackName`) to `entries`. Returns the offset, or
/// failure with a diagnostic at the op (no data: weights elided when the IR
/// was printed; a size that does not match the type).
mlir::FailureOr<uint64_t> appendConstant(mlir::Operation *constant, uint64_t alignment,
                                         llvm::StringRef fallbackName, WeightsBlob &blob,
                                         std::vector<WeightEntry> &entries);

/// The same for a constant's value (a DenseResourceElementsAttr or a
/// DenseElementsAttr), diagnostics at `loc`: for a backend whose constants
/// are no longer thunder.constant ops (the tpu target's program arguments).
mlir::FailureOr<uint64_t> appendElements(mlir::Attribute value, mlir::Location loc,
                                         uint64_t alignment, llvm::StringRef fallbackName,
                                         WeightsBlob &blob, std::vector<WeightEntry> &entries);

/// The start of a .safetensors file whose data is the blob: the 8-byte
/// header length and the JSON header, padded so the data starts 64-byte
/// aligned. `headerBytes` receives the JSON header's length.
std::string safetensorsHeader(llvm::StringRef modelName,
                              llvm::ArrayRef<WeightEntry> entries, int64_t *headerBytes);

} // namespace thunder::codegen

#endif // THUNDER_TARGET_COMMON_WEIGHTSBLOB_H
