//===- Elementwise.cpp - Elementwise thunder ops to StableHLO -------------===//
//
// Unary and binary arithmetic, comparisons, select, clamp and convert. Ops
// PyTorch computes in f32 for f16/bf16 (its "opmath" type: transcendental
// functions, division, pow) are computed in f32 here too and rounded once.
//
//===----------------------------------------------------------------------===//
#include "PopulatePatterns.h"

#include "thunder/Dialect/Thunder/IR/ThunderOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::stablehlo;

namespace {

/// Applies `fn` to `operands` in f32 when their element type is a narrow
/// float (PyTorch's opmath), then rounds the result back.
Value inOpmath(HloBuilder &h, ValueRange operands,
               llvm::function_ref<Value(ValueRange)> fn) {
  Type element = elementOf(operands.front());
  if (!isNarrowFloat(element))
    return fn(operands);
  SmallVector<Value> wide;
  for (Value v : operands)
    wide.push_back(h.convert(v, h.builder().getF32Type()));
  return h.convert(fn(wide), element);
}

/// `stablehlo.<name>` of the operands, computed in opmath.
Value mapOpmath(HloBuilder &h, StringRef name, ValueRange operands) {
  return inOpmath(h, operands, [&](ValueRange args) {
    return h.op(name, args, args.front().getType());
  });
}

/// Registers `ThunderOp` -> `stablehlo.<name>` with the same operands.
template <typename ThunderOp>
void addDirect(RewritePatternSet &patterns, StringRef name, bool opmath = false) {
  std::string op = name.str();
  addLowering<ThunderOp>(patterns, [op, opmath](ThunderOp thunderOp, auto adaptor,
                                                HloBuilder &h) -> FailureOr<Value> {
    if (opmath)
      return mapOpmath(h, op, adaptor.getOperands());
    return h.op(op, adaptor.getOperands(), thunderOp.getType());
  });
}

/// Registers `ThunderOp` -> `chlo.<name>` of its operand, in opmath (the
/// inverse and hyperbolic functions StableHLO lacks; XLA expands them).
template <typename ThunderOp>
void addChlo(RewritePatternSet &patterns, StringRef name) {
  std::string op = ("chlo." + name).str();
  addLowering<ThunderOp>(patterns, [op](ThunderOp, auto adaptor,
                                        HloBuilder &h) -> FailureOr<Value> {
    return inOpmath(h, adaptor.getOperands(), [&](ValueRange args) {
      OperationState state(h.location(), op);
      state.addOperands(args);
      state.addTypes(args.front().getType());
      return h.builder().create(state)->getResult(0);
    });
  });
}

/// `erf`: CHLO's erf, which XLA expands with its own polynomial (StableHLO
/// has no erf; jax emits the same op).
Value erf(HloBuilder &h, Value x) {
  return inOpmath(h, x, [&](ValueRange args) {
    OperationState state(h.location(), "chlo.erf");
    state.addOperands(args);
    state.addTypes(args.front().getType());
    return h.builder().create(state)->getResult(0);
  });
}

/// Python's remainder from the C remainder `r = a rem b` (sign of `a`): add
/// `b` when r is not zero and its sign differs from b's.
Value pythonRemainder(HloBuilder &h, Value a, Value b) {
  Value r = h.binary("remainder", a, b);
  Value zero = h.splatLike(r, 0);
  Value nonzero = h.compare("NE", r, zero);
  Value rNegative = h.compare("LT", r, zero);
  Value bNegative = h.compare("LT", b, zero);
  Value fix = h.binary("and", nonzero, h.compare("NE", rNegative, bNegative));
  return h.select(fix, h.add(r, b), r);
}

/// Floor division with c10::div_floor_floating's rounding for floats (the
/// quotient of the exact `a - fmod(a, b)`, so it agrees with remainder) and
/// a corrected truncating division for integers.
Value floorDivide(HloBuilder &h, Value a, Value b) {
  Value zero = h.splatLike(a, 0);
  Value one = h.splatLike(a, 1);
  Value mod = h.binary("remainder", a, b);
  Value nonzero = h.compare("NE", mod, zero);
  Value bNegative = h.compare("LT", b, zero);
  Value modNegative = h.compare("LT", mod, zero);
  Value fix = h.binary("and", nonzero, h.compare("NE", bNegative, modNegative));
  if (!isa<FloatType>(elementOf(a))) {
    Value q = h.div(a, b);
    return h.select(fix, h.sub(q, one), q);
  }
  Value div = h.div(h.sub(a, mod), b);
  div = h.select(fix, h.sub(div, one), div);
  Value floored = h.unary("floor", div);
  Value fraction = h.sub(div, floored);
  Value roundUp = h.compare("GT", fraction, h.splatLike(a, 0.5));
  floored = h.select(roundUp, h.add(floored, one), floored);
  // A zero quotient keeps the sign of the true quotient; b == 0 gives a / b.
  Value quotient = h.div(a, b);
  Value signedZero = h.mul(quotient, zero);
  Value result = h.select(h.compare("EQ", div, zero), signedZero, floored);
  return h.select(h.compare("EQ", b, zero), quotient, result);
}

FailureOr<Value> lowerDiv(DivOp op, DivOp::Adaptor adaptor, HloBuilder &h) {
  Value a = adaptor.getLhs(), b = adaptor.getRhs();
  bool isFloat = isa<FloatType>(elementOf(a));
  switch (op.getRoundingMode()) {
  case RoundingMode::None:
    return mapOpmath(h, "divide", {a, b});
  case RoundingMode::Trunc:
    if (!isFloat)
      return h.div(a, b); // StableHLO's integer division truncates.
    return inOpmath(h, {a, b}, [&](ValueRange args) {
      Value q = h.div(args[0], args[1]);
      Value negative = h.compare("LT", q, h.splatLike(q, 0));
      Value up = h.unary("ceil", q);
      Value down = h.unary("floor", q);
      return h.select(negative, up, down);
    });
  case RoundingMode::Floor:
    return inOpmath(h, {a, b}, [&](ValueRange args) {
      return floorDivide(h, args[0], args[1]);
    });
  }
  return failure();
}

FailureOr<Value> lowerGelu(GeluOp op, GeluOp::Adaptor adaptor, HloBuilder &h) {
  bool tanh = op.getApproximate() == GeluApproximation::Tanh;
  return inOpmath(h, adaptor.getOperand(), [&](ValueRange args) {
    Value x = args.front();
    Value half = h.splatLike(x, 0.5), one = h.splatLike(x, 1.0);
    Value inner;
    if (tanh) {
      // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      Value cube = h.mul(h.mul(x, x), x);
      Value poly = h.add(x, h.mul(h.splatLike(x, 0.044715), cube));
      Value scale = h.splatLike(x, std::sqrt(2.0 / M_PI));
      inner = h.unary("tanh", h.mul(scale, poly));
    } else {
      // 0.5 x (1 + erf(x / sqrt(2)))
      inner = erf(h, h.mul(x, h.splatLike(x, M_SQRT1_2)));
    }
    Value halfX = h.mul(half, x);
    return h.mul(halfX, h.add(one, inner));
  });
}

FailureOr<Value> lowerClamp(ClampOp op, ClampOp::Adaptor adaptor, HloBuilder &h) {
  // max then min, not stablehlo.clamp: both propagate NaN like torch.clamp.
  Value x = adaptor.getOperand();
  if (std::optional<APFloat> min = op.getMin())
    x = h.binary("maximum", x, h.splatLike(x, min->convertToDouble()));
  if (std::optional<APFloat> max = op.getMax())
    x = h.binary("minimum", x, h.splatLike(x, max->convertToDouble()));
  return x;
}

/// StableHLO's spelling of a comparison direction.
StringRef directionName(ComparisonDirection direction) {
  switch (direction) {
  case ComparisonDirection::EQ: return "EQ";
  case ComparisonDirection::NE: return "NE";
  case ComparisonDirection::LT: return "LT";
  case ComparisonDirection::LE: return "LE";
  case ComparisonDirection::GT: return "GT";
  case ComparisonDirection::GE: return "GE";
  }
  return "EQ";
}

} // namespace

void mlir::thunder::stablehlo::populateElementwisePatterns(
    RewritePatternSet &patterns) {
  // Exact in the operand type (IEEE or integer arithmetic).
  addDirect<NegOp>(patterns, "negate");
  addDirect<AbsOp>(patterns, "abs");
  addDirect<FloorOp>(patterns, "floor");
  addDirect<CeilOp>(patterns, "ceil");
  addDirect<AddOp>(patterns, "add");
  addDirect<SubOp>(patterns, "subtract");
  addDirect<MulOp>(patterns, "multiply");
  addDirect<MaximumOp>(patterns, "maximum");
  addDirect<MinimumOp>(patterns, "minimum");
  addDirect<LogicalNotOp>(patterns, "not");
  addDirect<LogicalAndOp>(patterns, "and");
  addDirect<LogicalOrOp>(patterns, "or");
  addDirect<LogicalXorOp>(patterns, "xor");
  // Computed in opmath.
  addDirect<ExpOp>(patterns, "exponential", /*opmath=*/true);
  addDirect<LogOp>(patterns, "log", true);
  addDirect<Log1pOp>(patterns, "log_plus_one", true);
  addDirect<SqrtOp>(patterns, "sqrt", true);
  addDirect<RsqrtOp>(patterns, "rsqrt", true);
  addDirect<TanhOp>(patterns, "tanh", true);
  addDirect<SigmoidOp>(patterns, "logistic", true);
  addDirect<SinOp>(patterns, "sine", true);
  addDirect<CosOp>(patterns, "cosine", true);
  addDirect<PowOp>(patterns, "power", true);
  addDirect<Atan2Op>(patterns, "atan2", true);
  addDirect<Expm1Op>(patterns, "exponential_minus_one", true);
  addDirect<RoundOp>(patterns, "round_nearest_even");
  // stablehlo.remainder has the dividend's sign: torch.fmod.
  addDirect<FmodOp>(patterns, "remainder");
  addDirect<BitwiseAndOp>(patterns, "and");
  addDirect<BitwiseOrOp>(patterns, "or");
  addDirect<BitwiseXorOp>(patterns, "xor");
  addDirect<BitwiseNotOp>(patterns, "not");
  addChlo<TanOp>(patterns, "tan");
  addChlo<AsinOp>(patterns, "asin");
  addChlo<AcosOp>(patterns, "acos");
  addChlo<AtanOp>(patterns, "atan");
  addChlo<SinhOp>(patterns, "sinh");
  addChlo<CoshOp>(patterns, "cosh");
  addChlo<AsinhOp>(patterns, "asinh");
  addChlo<AcoshOp>(patterns, "acosh");
  addChlo<AtanhOp>(patterns, "atanh");
  addLowering<Log2Op>(patterns, [](Log2Op, Log2Op::Adaptor adaptor,
                                   HloBuilder &h) -> FailureOr<Value> {
    return inOpmath(h, adaptor.getOperand(), [&](ValueRange args) {
      return h.mul(h.unary("log", args[0]), h.splatLike(args[0], 1.0 / M_LN2));
    });
  });
  addLowering<Log10Op>(patterns, [](Log10Op, Log10Op::Adaptor adaptor,
                                    HloBuilder &h) -> FailureOr<Value> {
    return inOpmath(h, adaptor.getOperand(), [&](ValueRange args) {
      return h.mul(h.unary("log", args[0]), h.splatLike(args[0], 1.0 / M_LN10));
    });
  });
  addLowering<TruncOp>(patterns, [](TruncOp, TruncOp::Adaptor adaptor,
                                    HloBuilder &h) -> FailureOr<Value> {
    Value x = adaptor.getOperand();
    return h.mul(h.unary("sign", x), h.unary("floor", h.unary("abs", x)));
  });

  addLowering<ReluOp>(patterns, [](ReluOp, ReluOp::Adaptor adaptor,
                                   HloBuilder &h) -> FailureOr<Value> {
    Value x = adaptor.getOperand();
    return h.binary("maximum", x, h.splatLike(x, 0));
  });
  addLowering<ReciprocalOp>(patterns, [](ReciprocalOp, ReciprocalOp::Adaptor adaptor,
                                         HloBuilder &h) -> FailureOr<Value> {
    return inOpmath(h, adaptor.getOperand(), [&](ValueRange args) {
      return h.div(h.splatLike(args[0], 1), args[0]);
    });
  });
  addLowering<SiluOp>(patterns, [](SiluOp, SiluOp::Adaptor adaptor,
                                   HloBuilder &h) -> FailureOr<Value> {
    return inOpmath(h, adaptor.getOperand(), [&](ValueRange args) {
      return h.mul(args[0], h.unary("logistic", args[0]));
    });
  });
  addLowering<ErfOp>(patterns, [](ErfOp, ErfOp::Adaptor adaptor,
                                  HloBuilder &h) -> FailureOr<Value> {
    return erf(h, adaptor.getOperand());
  });
  addLowering<GeluOp>(patterns, lowerGelu);
  addLowering<DivOp>(patterns, lowerDiv);
  addLowering<RemainderOp>(patterns, [](RemainderOp, RemainderOp::Adaptor adaptor,
                                        HloBuilder &h) -> FailureOr<Value> {
    return inOpmath(h, adaptor.getOperands(), [&](ValueRange args) {
      return pythonRemainder(h, args[0], args[1]);
    });
  });
  addLowering<ClampOp>(patterns, lowerClamp);
  addLowering<CompareOp>(patterns, [](CompareOp op, CompareOp::Adaptor adaptor,
                                      HloBuilder &h) -> FailureOr<Value> {
    return h.compare(directionName(op.getDirection()), adaptor.getLhs(),
                     adaptor.getRhs());
  });
  addLowering<WhereOp>(patterns, [](WhereOp, WhereOp::Adaptor adaptor,
                                    HloBuilder &h) -> FailureOr<Value> {
    return h.select(adaptor.getCondition(), adaptor.getOnTrue(),
                    adaptor.getOnFalse());
  });
  addLowering<ConvertOp>(patterns, [](ConvertOp op, ConvertOp::Adaptor adaptor,
                                      HloBuilder &h) -> FailureOr<Value> {
    return h.convert(adaptor.getOperand(), elementOf(op.getResult()));
  });
}
