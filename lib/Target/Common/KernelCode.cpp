//===- KernelCode.cpp - A fused kernel's loops, statements and stores -----===//
#include "thunder/Target/Common/KernelCode.h"

#include <iterator>

namespace thunder::codegen {

std::string Store::str() const {
  return indent + pointer + "[" + offset.str() + "] = st<" + type + ">(" + value + ");\n";
}

std::string Loop::header() const {
  std::string pragma;
  switch (kind) {
  case Kind::Parallel:
    pragma = "omp parallel for";
    break;
  case Kind::ParallelSimd:
    pragma = "omp parallel for simd";
    break;
  case Kind::Simd:
    pragma = "omp simd";
    break;
  case Kind::Unrolled:
    pragma = "unroll";
    break;
  case Kind::Plain:
  case Kind::GridStride:
  case Kind::BlockStride:
    break;
  }
  std::string text;
  // Pragmas start at the line's first column, as preprocessor lines do.
  if (!pragma.empty())
    text = "#pragma " + pragma + (clause.empty() ? "" : " " + clause) + "\n";
  std::string increment = step.empty() ? "++" + var : var + " += " + step;
  return text + indent + "for (" + type + " " + var + " = " + begin + "; " + var + " < " + end +
         "; " + increment + ") {\n";
}

DeferredCode::Piece &DeferredCode::next(bool text) {
  if (pieces.empty() || !text || !pieces.back().statements.empty() || pieces.back().store ||
      pieces.back().loop)
    pieces.emplace_back();
  return pieces.back();
}

DeferredCode &DeferredCode::operator<<(llvm::StringRef text) {
  next(true).text += text.str();
  return *this;
}

DeferredCode &DeferredCode::operator<<(Statements statements) {
  if (!statements.empty())
    next(false).statements = std::move(statements);
  return *this;
}

DeferredCode &DeferredCode::operator<<(Store store) {
  next(false).store = std::move(store);
  return *this;
}

DeferredCode &DeferredCode::operator<<(Loop loop) {
  next(false).loop = std::make_shared<const Loop>(std::move(loop));
  return *this;
}

DeferredCode &DeferredCode::operator<<(DeferredCode code) {
  std::move(code.pieces.begin(), code.pieces.end(), std::back_inserter(pieces));
  return *this;
}

llvm::SmallVector<const Load *> DeferredCode::loads() const {
  llvm::SmallVector<const Load *> result;
  for (const Piece &piece : pieces) {
    llvm::append_range(result, piece.statements.loads());
    if (piece.loop)
      llvm::append_range(result, piece.loop->body.loads());
  }
  return result;
}

llvm::SmallVector<const Store *> DeferredCode::stores() const {
  llvm::SmallVector<const Store *> result;
  for (const Piece &piece : pieces) {
    if (piece.store)
      result.push_back(&*piece.store);
    if (piece.loop)
      llvm::append_range(result, piece.loop->body.stores());
  }
  return result;
}

std::string DeferredCode::print(const BodyEmitter &body, const LoadSpelling &spelling) const {
  std::string text;
  for (const Piece &piece : pieces) {
    text += piece.text + body.print(piece.statements, spelling);
    if (piece.store)
      text += piece.store->str();
    if (piece.loop)
      text += piece.loop->header() + piece.loop->body.print(body, spelling) +
              piece.loop->indent + "}\n";
  }
  return text;
}

} // namespace thunder::codegen
