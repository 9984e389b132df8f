//===- KernelCode.h - A fused kernel's loops, statements and stores -*- C++ -*-===//
//
// The body of a fused kernel as a small ordered tree the backends build and
// print last: loops (with the kind of iteration the target spells: an
// OpenMP parallel or simd loop, a grid- or block-stride loop, an unrolled
// one), the per-element statements of FusedBody.h (each load with its
// index tree), stores (a pointer, an offset tree, the value and its storage
// type) and, between them, declarations written as text. Because nothing is
// spelled before the whole kernel is built, how a load is spelled can depend
// on every other load (the GPU row cache), and the questions a backend asks
// (which inputs are read where, where results are written) are asked of the
// structure, not of generated text.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_TARGET_COMMON_KERNELCODE_H
#define THUNDER_TARGET_COMMON_KERNELCODE_H

#include "thunder/Target/Common/FusedBody.h"

#include <memory>
#include <string>
#include <vector>

namespace thunder::codegen {

/// A write of a kernel's result: `<pointer>[<offset>] = st<<type>>(<value>);`
/// at `indent`, where `value` names a compute-typed temporary and `type` is
/// the storage type of the element written.
struct Store {
  std::string pointer;
  IndexExpr offset;
  std::string value, type;
  std::string indent = "      ";

  /// The store as a line of C.
  std::string str() const;
};

struct Loop;

/// Kernel source kept as structure until the whole kernel is written: text
/// (declarations, comments), statements, stores and loops, in the order they
/// run. Appended with `<<`.
class DeferredCode {
public:
  DeferredCode &operator<<(llvm::StringRef text);
  DeferredCode &operator<<(const char *text) { return *this << llvm::StringRef(text); }
  DeferredCode &operator<<(const std::string &text) { return *this << llvm::StringRef(text); }
  DeferredCode &operator<<(size_t n) { return *this << std::to_string(n); }
  DeferredCode &operator<<(Statements statements);
  DeferredCode &operator<<(Store store);
  DeferredCode &operator<<(Loop loop);
  /// Appends `code`'s pieces (code built apart, then placed here).
  DeferredCode &operator<<(DeferredCode code);

  /// Every load of the statements, loops included, in the order they are
  /// printed.
  llvm::SmallVector<const Load *> loads() const;
  /// Every store, loops included, in the order they are printed.
  llvm::SmallVector<const Store *> stores() const;
  /// The source, loads spelled as BodyEmitter::print spells them (by
  /// `spelling` where it gives a spelling).
  std::string print(const BodyEmitter &body, const LoadSpelling &spelling = nullptr) const;

private:
  /// One node: text, statements, a store or a loop (shared: the code is
  /// copied as a value, and nothing changes a loop once appended).
  struct Piece {
    std::string text;
    Statements statements;
    std::optional<Store> store;
    std::shared_ptr<const Loop> loop;
  };
  std::vector<Piece> pieces;

  /// The piece to append to: the last one when `text` is appended to a
  /// piece that holds only text, a new one otherwise (a piece's text comes
  /// before its structure).
  Piece &next(bool text);
};

/// A counted loop `for (<type> <var> = <begin>; <var> < <end>; <step>)`
/// around `body`, at `indent`; the kind says how the iterations are shared
/// out, and the printer spells it (a pragma line before the loop, or the
/// stride of the increment).
struct Loop {
  enum class Kind {
    Plain,        ///< one thread, in order: `++var`
    Parallel,     ///< OpenMP threads: `#pragma omp parallel for <clause>`
    ParallelSimd, ///< OpenMP threads and vector lanes: `#pragma omp parallel for simd <clause>`
    Simd,         ///< vector lanes: `#pragma omp simd <clause>`
    Unrolled,     ///< unrolled by the device compiler: `#pragma unroll`
    GridStride,   ///< each GPU thread (or block) from `begin`, by `step` (the grid)
    BlockStride,  ///< each thread of a GPU block from `begin`, by `step` (the block)
  };
  Loop() = default;
  /// A loop of `kind` over `var` from `begin` while below `end`; the rest
  /// is set with the builders below.
  Loop(Kind kind, std::string var, std::string begin, std::string end)
      : kind(kind), var(std::move(var)), begin(std::move(begin)), end(std::move(end)) {}
  Loop &by(std::string s) { step = std::move(s); return *this; }
  Loop &with(std::string c) { clause = std::move(c); return *this; }
  Loop &ofType(std::string t) { type = std::move(t); return *this; }
  Loop &at(std::string i) { indent = std::move(i); return *this; }
  Loop &around(DeferredCode code) { body = std::move(code); return *this; }

  Kind kind = Kind::Plain;
  std::string var;
  std::string begin, end;
  /// The increment of a strided loop (C); empty for `++var`.
  std::string step;
  /// The type of the loop variable.
  std::string type = "int64_t";
  /// What follows an OpenMP pragma: `if (n > 32768)`, `reduction(+:acc0)`.
  std::string clause;
  std::string indent = "    ";
  DeferredCode body;

  /// The loop's first line(s): the pragma, if any, and the `for` header.
  std::string header() const;
};

} // namespace thunder::codegen

#endif // THUNDER_TARGET_COMMON_KERNELCODE_H
