//===- ArtifactSource.h - What every C-family artifact source holds -*- C++ -*-===//
//
// The CPU and CUDA backends each emit one C-family translation unit per
// model against the same artifact ABI (thunder-c/artifact.h). What that
// source holds whatever the target lives here: the spellings of element
// types and literals, the function that computes the dynamic sizes from the
// inputs (ShapePlan), the tensor descriptors and the exported entry table of
// the ABI, and the .safetensors file of --external-weights.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_TARGET_COMMON_ARTIFACTSOURCE_H
#define THUNDER_TARGET_COMMON_ARTIFACTSOURCE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Types.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <utility>
#include <vector>

namespace thunder {
class ShapePlan;
} // namespace thunder

namespace thunder::codegen {

/// The C storage type of an element type ("float", "bf16", "int64_t", ...);
/// failure for a type no backend stores.
mlir::FailureOr<std::string> cppType(mlir::Type t);
/// thunder_dtype of thunder-c/artifact.h.
int dtypeCode(mlir::Type t);
/// The safetensors dtype name ("F32", "BF16", ...).
std::string safetensorsDtype(mlir::Type t);
/// Bytes per element (i1 is one byte).
int64_t elementBytes(mlir::Type t);
/// A C string literal of `s`.
std::string cppString(llvm::StringRef s);
/// "{1LL, 2LL}" ("{0}" when empty: C arrays need an element).
std::string i64List(llvm::ArrayRef<int64_t> values);
/// "file.py:12" of an op's location, or "".
std::string sourceOf(mlir::Location loc);
/// The comment before an op's code: `indent// <the op's first printed line,
/// large attributes elided>` and, when its location has one,
/// `indent//   at file.py:12`.
void emitOpComment(llvm::raw_ostream &os, mlir::Operation *op, llvm::StringRef indent);

/// The constants placed in the weights blob (value -> byte offset), in blob
/// order (ties by `name`): the generated source must not follow a hash
/// map's order, or identical compiles would differ.
std::vector<std::pair<mlir::Value, uint64_t>>
inBlobOrder(const llvm::DenseMap<mlir::Value, uint64_t> &offsets,
            llvm::function_ref<std::string(mlir::Value)> name);

/// The C literal of a splat constant's value: a double literal, "true" /
/// "false", or an integer with the LL suffix.
std::string splatLiteral(mlir::SplatElementsAttr splat);

/// `static void compute_symbols(const thunder_tensor *inputs, int64_t *sym)`:
/// every dynamic size of `plan` from the inputs' shapes, `dim(v, d)` being
/// the C expression of dim d of value v. Uses window_size() of the source.
void emitComputeSymbols(llvm::raw_ostream &os, const ShapePlan &plan,
                        llvm::function_ref<std::string(mlir::Value, unsigned)> dim);

/// The ABI's `int output_shapes(...)`: each result's dims from the inputs'
/// (compute_symbols of the source), `dim(v, d)` as for emitComputeSymbols.
void emitOutputShapes(llvm::raw_ostream &os, mlir::func::FuncOp func,
                      llvm::function_ref<std::string(mlir::Value, unsigned)> dim);

/// kInputs and kOutputs, the thunder_tensor_desc arrays of `func`'s inputs
/// and results: names, dtypes, shapes with their dynamic dims' symbols and
/// ranges (thunder.dim_symbols, thunder.symbol_ranges).
void emitTensorDescs(llvm::raw_ostream &os, mlir::func::FuncOp func);

/// The exported thunder_model_entry_v1 returning the model's table, which
/// names kInputs, kOutputs and the create/destroy/output_shapes/
/// workspace_bytes/run functions of the source. `weightsFile` is the
/// external weights' file name, or "".
void emitEntryTable(llvm::raw_ostream &os, mlir::func::FuncOp func, llvm::StringRef modelName,
                    llvm::StringRef target, llvm::StringRef deviceEnum,
                    llvm::StringRef weightsFile);

} // namespace thunder::codegen

#endif // THUNDER_TARGET_COMMON_ARTIFACTSOURCE_H
