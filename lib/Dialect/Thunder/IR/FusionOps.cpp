//===- FusionOps.cpp - The fusion region and its terminator ---------------===//
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"

using namespace mlir;
using namespace mlir::thunder;

#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/FusionOps.cpp.inc"

void FusionOp::build(OpBuilder &builder, OperationState &state,
                     TypeRange resultTypes, FusionKind kind, StringRef name,
                     ValueRange inputs) {
  state.addTypes(resultTypes);
  state.addOperands(inputs);
  state.addAttribute(getKindAttrName(state.name),
                     FusionKindAttr::get(builder.getContext(), kind));
  state.addAttribute(getKernelNameAttrName(state.name),
                     builder.getStringAttr(name));
  Region *body = state.addRegion();
  // createBlock moves the insertion point into the new block; the fusion
  // itself must still be created where the caller asked.
  OpBuilder::InsertionGuard guard(builder);
  Block *block = builder.createBlock(body);
  for (Value input : inputs)
    block->addArgument(input.getType(), input.getLoc());
}

LogicalResult FusionOp::verifyRegions() {
  Block &body = getBody().front();
  // fusion_c1
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("expects one block argument per input (")
           << getInputs().size() << "), got " << body.getNumArguments();
  for (auto [i, arg, input] : llvm::enumerate(body.getArguments(), getInputs()))
    if (arg.getType() != input.getType())
      return emitOpError("expects block argument #")
             << i << " to have the type of input #" << i << " ("
             << input.getType() << "), got " << arg.getType();
  // fusion_c2
  for (Operation &op : body.without_terminator()) {
    // Unregistered ops have no dialect.
    if (!isa_and_nonnull<ThunderDialect>(op.getDialect()) || isa<FusionOp>(op))
      return op.emitOpError("is not allowed in a thunder.fusion region: only "
                            "thunder ops other than thunder.fusion are");
  }
  // fusion_c3
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("expects the region to end with thunder.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return yield.emitOpError("expects the fusion's result types (")
           << getResultTypes() << "), got (" << yield.getValues().getTypes()
           << ")";
  return success();
}
