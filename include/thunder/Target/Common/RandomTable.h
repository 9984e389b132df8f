//===- RandomTable.h - The random table of a C-family artifact --*- C++ -*-===//
//
// A program that draws random numbers (thunder.random) exports
// thunder_model_random_v1 (thunder-c/artifact.h) beside its entry: the
// CPU and GPU emitters ask whether it does and write the table.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_TARGET_COMMON_RANDOMTABLE_H
#define THUNDER_TARGET_COMMON_RANDOMTABLE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace thunder::codegen {

/// Whether `func` draws random numbers (has a thunder.random).
bool usesRandom(mlir::func::FuncOp func);

/// The exported random table (thunder_model_random_v1, artifact.h) of a
/// program that draws random numbers, after emitEntryTable: its symbol is
/// the entry's name (as the compile line may rename it) with "_random", and
/// it names `run_seeded` of the source.
void emitRandomTable(llvm::raw_ostream &os);

} // namespace thunder::codegen

#endif // THUNDER_TARGET_COMMON_RANDOMTABLE_H
