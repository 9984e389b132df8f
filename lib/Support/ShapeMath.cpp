// Shape inference rules for Thunder's ops (see ShapeMath.h for the conventions).
#include "thunder/Support/ShapeMath.h"

#include <algorithm>
#include <utility>

namespace thunder {
namespace {

ShapeResult fail(std::string error) { return ShapeResult{Shape(), std::move(error)}; }

ShapeResult success(Shape shape) { return ShapeResult{std::move(shape), std::string()}; }

std::string str(int64_t value) { return std::to_string(value); }

/// "[1, 2, 3]" for an integer list that is not a shape (no "?").
std::string formatList(const std::vector<int64_t> &values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i)
      out += ", ";
    out += str(values[i]);
  }
  return out + "]";
}

/// "1 entry" / "2 entries": the count of a vector attribute in an error message.
std::string entries(size_t count) {
  return str(static_cast<int64_t>(count)) + (count == 1 ? " entry" : " entries");
}

/// The error for a dim index `dim` that is not valid for rank `rank`.
std::string dimOutOfRange(const std::string &what, int64_t dim, int64_t rank) {
  if (rank == 0)
    return what + " " + str(dim) + " is out of range: the input has rank 0 and no dims";
  return what + " " + str(dim) + " is out of range for an input of rank " + str(rank) +
         " (expected a dim in [" + str(-rank) + ", " + str(rank - 1) + "])";
}

/// Floor division for a positive divisor (C++ '/' truncates toward zero).
int64_t floorDiv(int64_t numerator, int64_t divisor) {
  int64_t quotient = numerator / divisor;
  if (numerator % divisor != 0 && numerator < 0)
    --quotient;
  return quotient;
}

/// Of two compatible dims, the more precise one (a static size beats dynamic).
int64_t refineDim(int64_t a, int64_t b) { return a == kDynamic ? b : a; }

/// Checks that stride, dilation and padding fit `numWindowDims` window dims: sizes, positive
/// stride and dilation, non-negative padding. `dimNoun` names the dims in messages.
std::string checkWindowAttrs(const std::vector<int64_t> &stride,
                             const std::vector<int64_t> &padding,
                             const std::vector<int64_t> &dilation, size_t numWindowDims,
                             const std::string &dimNoun) {
  std::string count = str(static_cast<int64_t>(numWindowDims)) + " " + dimNoun +
                      (numWindowDims == 1 ? "" : "s");
  if (stride.size() != numWindowDims)
    return "stride has " + entries(stride.size()) + ", but there " +
           (numWindowDims == 1 ? "is " : "are ") + count + " (one entry each)";
  if (dilation.size() != numWindowDims)
    return "dilation has " + entries(dilation.size()) + ", but there " +
           (numWindowDims == 1 ? "is " : "are ") + count + " (one entry each)";
  if (padding.size() != 2 * numWindowDims)
    return "padding has " + entries(padding.size()) + ", but " + count + " need " +
           str(static_cast<int64_t>(2 * numWindowDims)) + " ([lo, hi] for each)";
  for (size_t i = 0; i < numWindowDims; ++i) {
    std::string dimName = dimNoun + " " + str(static_cast<int64_t>(i));
    if (stride[i] < 1)
      return "stride is " + str(stride[i]) + " for " + dimName + ", but must be positive";
    if (dilation[i] < 1)
      return "dilation is " + str(dilation[i]) + " for " + dimName + ", but must be positive";
    if (padding[2 * i] < 0)
      return "padding is " + str(padding[2 * i]) + " on the low side of " + dimName +
             ", but must be non-negative";
    if (padding[2 * i + 1] < 0)
      return "padding is " + str(padding[2 * i + 1]) + " on the high side of " + dimName +
             ", but must be non-negative";
  }
  return "";
}

/// The error for a window that does not fit: "<dimName> (input dim d) of size ...".
std::string windowTooSmall(const std::string &dimName, size_t inputDim, int64_t in,
                           int64_t padLo, int64_t padHi, int64_t kernel, int64_t dilation,
                           int64_t out) {
  return dimName + " (input dim " + str(static_cast<int64_t>(inputDim)) + ") of size " +
         str(in) + " with padding " + str(padLo) + "+" + str(padHi) +
         " is smaller than the kernel size " + str(kernel) + " dilated by " + str(dilation) +
         ", which gives output size " + str(out);
}

} // namespace

std::string formatDim(int64_t dim) { return dim == kDynamic ? "?" : str(dim); }

std::string formatShape(const Shape &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += formatDim(shape[i]);
  }
  return out + "]";
}

bool isStatic(const Shape &shape) {
  return std::none_of(shape.begin(), shape.end(), [](int64_t d) { return d == kDynamic; });
}

int64_t numElements(const Shape &shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d == kDynamic)
      return kDynamic;
    count *= d;
  }
  return count;
}

bool areCompatibleDims(int64_t a, int64_t b) {
  return a == b || a == kDynamic || b == kDynamic;
}

bool areCompatibleShapes(const Shape &a, const Shape &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!areCompatibleDims(a[i], b[i]))
      return false;
  return true;
}

int64_t normalizeDim(int64_t dim, int64_t rank) {
  if (dim < 0)
    dim += rank;
  return dim >= 0 && dim < rank ? dim : -1;
}

ShapeResult broadcastShapes(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned: a dim missing from the shorter shape behaves as 1.
    size_t fromRight = rank - 1 - i;
    int64_t da = fromRight < a.size() ? a[a.size() - 1 - fromRight] : 1;
    int64_t db = fromRight < b.size() ? b[b.size() - 1 - fromRight] : 1;
    if (da == db || db == 1) {
      result[i] = da;
    } else if (da == 1) {
      result[i] = db;
    } else if (da == kDynamic || db == kDynamic) {
      // ? against n != 1: the only valid runtime size is n (? = 1 broadcasts to n too).
      result[i] = refineDim(da, db);
    } else {
      return fail("dim " + str(static_cast<int64_t>(i)) + " of the operands is " + str(da) +
                  " and " + str(db) + ", which do not broadcast (shapes " + formatShape(a) +
                  " and " + formatShape(b) + ", aligned on the right)");
    }
  }
  return success(std::move(result));
}

std::string checkBroadcastInDim(const Shape &operand, const Shape &result,
                                const std::vector<int64_t> &broadcastDims) {
  if (broadcastDims.size() != operand.size())
    return "broadcast dims have " + entries(broadcastDims.size()) +
           ", but the operand has rank " + str(static_cast<int64_t>(operand.size()));
  int64_t resultRank = static_cast<int64_t>(result.size());
  for (size_t i = 0; i < operand.size(); ++i) {
    int64_t target = broadcastDims[i];
    std::string operandDim = "operand dim " + str(static_cast<int64_t>(i));
    if (target < 0 || target >= resultRank)
      return operandDim + " maps to result dim " + str(target) +
             ", which is out of range for the result rank " + str(resultRank);
    if (i > 0 && target <= broadcastDims[i - 1])
      return "broadcast dims " + formatList(broadcastDims) +
             " are not strictly increasing: " + operandDim + " maps to result dim " +
             str(target) + " after operand dim " + str(static_cast<int64_t>(i - 1)) +
             " maps to result dim " + str(broadcastDims[i - 1]);
    int64_t size = operand[i];
    if (size != 1 && !areCompatibleDims(size, result[target]))
      return operandDim + " has size " + str(size) + " but maps to result dim " +
             str(target) + " of size " + formatDim(result[target]) +
             " (a mapped dim must be 1 or equal to its result dim)";
  }
  return "";
}

std::string checkExpand(const Shape &operand, const Shape &result) {
  if (result.size() < operand.size())
    return "the result rank " + str(static_cast<int64_t>(result.size())) +
           " is smaller than the operand rank " + str(static_cast<int64_t>(operand.size()));
  for (size_t j = 0; j < result.size(); ++j)
    if (result[j] < 0 && result[j] != kDynamic)
      return "result dim " + str(static_cast<int64_t>(j)) + " is " + str(result[j]) +
             ", but sizes must be non-negative or dynamic (-1 must be resolved first)";
  size_t offset = result.size() - operand.size();
  for (size_t i = 0; i < operand.size(); ++i) {
    int64_t from = operand[i], to = result[i + offset];
    if (from != 1 && !areCompatibleDims(from, to))
      return "operand dim " + str(static_cast<int64_t>(i)) + " of size " + str(from) +
             " cannot expand to size " + str(to) + " (result dim " +
             str(static_cast<int64_t>(i + offset)) + "); only size-1 dims expand";
  }
  return "";
}

ShapeResult reduceShape(const Shape &input, const std::vector<int64_t> &dims, bool keepdim) {
  int64_t rank = static_cast<int64_t>(input.size());
  // PyTorch lets a rank-0 tensor be reduced over "dim 0" (or -1): treat it as rank 1.
  int64_t dimRank = std::max<int64_t>(rank, 1);
  std::vector<int64_t> owner(dimRank, kDynamic); // which entry of `dims` named each dim
  for (int64_t requested : dims) {
    int64_t d = normalizeDim(requested, dimRank);
    if (d < 0) {
      if (rank == 0)
        return fail("reduction dim " + str(requested) +
                    " is out of range for a rank-0 input (expected 0 or -1)");
      return fail(dimOutOfRange("reduction dim", requested, rank));
    }
    if (owner[d] != kDynamic)
      return fail("reduction dims " + str(owner[d]) + " and " + str(requested) +
                  " both name dim " + str(d) + " of the input");
    owner[d] = requested;
  }
  if (rank == 0)
    return success(Shape());
  Shape result;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = dims.empty() || owner[d] != kDynamic;
    if (!reduced)
      result.push_back(input[d]);
    else if (keepdim)
      result.push_back(1);
  }
  return success(std::move(result));
}

ShapeResult matmulShape(const Shape &lhs, const Shape &rhs, bool transposeLhs,
                        bool transposeRhs) {
  size_t rank = lhs.size();
  if (rank < 2)
    return fail("lhs " + formatShape(lhs) + " has rank " + str(static_cast<int64_t>(rank)) +
                ", but matmul needs rank >= 2");
  if (rhs.size() != 2 && rhs.size() != rank)
    return fail("rhs " + formatShape(rhs) + " has rank " +
                str(static_cast<int64_t>(rhs.size())) +
                ", but must have rank 2 or the lhs rank " + str(static_cast<int64_t>(rank)));
  Shape result(lhs.begin(), lhs.end() - 2);
  if (rhs.size() == rank) {
    for (size_t i = 0; i + 2 < rank; ++i) {
      if (!areCompatibleDims(lhs[i], rhs[i]))
        return fail("batch dim " + str(static_cast<int64_t>(i)) + " is " + str(lhs[i]) +
                    " in lhs " + formatShape(lhs) + " and " + str(rhs[i]) + " in rhs " +
                    formatShape(rhs) + ", which differ");
      result[i] = refineDim(lhs[i], rhs[i]);
    }
  }
  int64_t m = lhs[rank - 2], lhsK = lhs[rank - 1];
  if (transposeLhs)
    std::swap(m, lhsK);
  int64_t rhsK = rhs[rhs.size() - 2], n = rhs[rhs.size() - 1];
  if (transposeRhs)
    std::swap(rhsK, n);
  if (!areCompatibleDims(lhsK, rhsK))
    return fail("the contraction size is " + str(lhsK) + " in lhs " + formatShape(lhs) +
                (transposeLhs ? " (transposed)" : "") + " and " + str(rhsK) + " in rhs " +
                formatShape(rhs) + (transposeRhs ? " (transposed)" : "") + ", which differ");
  result.push_back(m);
  result.push_back(n);
  return success(std::move(result));
}

int64_t windowOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t padLo,
                         int64_t padHi, int64_t dilation, bool ceilMode) {
  if (in == kDynamic || kernel == kDynamic)
    return kDynamic;
  if (stride < 1 || dilation < 1 || kernel < 1)
    return 0;
  // Mirrors ATen's pooling_output_shape_pad_lr, generalised to asymmetric padding. Computed in
  // 128 bits: attributes near the int64 limits must give an error, not a wrapped size.
  using Wide = __int128;
  Wide span = Wide(in) + padLo + padHi - Wide(dilation) * (kernel - 1) - 1;
  Wide shifted = span + (ceilMode ? stride - 1 : 0);
  Wide out = shifted / stride - ((shifted % stride != 0) && (shifted < 0)) + 1;
  // With ceil mode the last window may start past the input and the left padding; drop it.
  if (ceilMode && (out - 1) * stride >= Wide(in) + padLo)
    --out;
  // An empty window range is 0; an output that does not fit int64 is reported like an empty
  // one, since the window arithmetic is meaningless there.
  if (out < 1 || out > Wide(std::numeric_limits<int64_t>::max()))
    return 0;
  return static_cast<int64_t>(out);
}

ShapeResult convShape(const Shape &input, const Shape &weight,
                      const std::vector<int64_t> &stride,
                      const std::vector<int64_t> &padding,
                      const std::vector<int64_t> &dilation, int64_t groups) {
  size_t rank = input.size();
  if (rank < 3 || rank > 5)
    return fail("the input " + formatShape(input) + " has rank " +
                str(static_cast<int64_t>(rank)) +
                ", but convolution needs rank 3 to 5 ([N, C, spatial...] with 1-3 spatial dims)");
  if (weight.size() != rank)
    return fail("the weight " + formatShape(weight) + " has rank " +
                str(static_cast<int64_t>(weight.size())) + ", but must have the input rank " +
                str(static_cast<int64_t>(rank)) + " ([O, C/groups, kernel...])");
  size_t numSpatial = rank - 2;
  std::string attrError = checkWindowAttrs(stride, padding, dilation, numSpatial, "spatial dim");
  if (!attrError.empty())
    return fail(attrError);
  if (groups < 1)
    return fail("groups is " + str(groups) + ", but must be positive");
  int64_t channels = input[1], outChannels = weight[0];
  if (channels != kDynamic && channels % groups != 0)
    return fail("the input has " + str(channels) + " channels (dim 1), which is not divisible "
                "by groups = " + str(groups));
  if (outChannels != kDynamic && outChannels % groups != 0)
    return fail("the weight has " + str(outChannels) + " output channels (dim 0), which is not "
                "divisible by groups = " + str(groups));
  if (channels != kDynamic && weight[1] != kDynamic && weight[1] != channels / groups)
    return fail("weight dim 1 is " + str(weight[1]) + ", but must be input channels / groups = " +
                str(channels) + " / " + str(groups) + " = " + str(channels / groups));
  Shape result = {input[0], outChannels};
  for (size_t i = 0; i < numSpatial; ++i) {
    int64_t kernel = weight[i + 2];
    std::string dimName = "spatial dim " + str(static_cast<int64_t>(i));
    if (kernel != kDynamic && kernel < 1)
      return fail("the kernel size is " + str(kernel) + " in " + dimName + " (weight dim " +
                  str(static_cast<int64_t>(i + 2)) + "), but must be positive");
    int64_t out = windowOutputSize(input[i + 2], kernel, stride[i], padding[2 * i],
                                   padding[2 * i + 1], dilation[i], /*ceilMode=*/false);
    if (out != kDynamic && out < 1)
      return fail(windowTooSmall(dimName, i + 2, input[i + 2], padding[2 * i],
                                 padding[2 * i + 1], kernel, dilation[i], out));
    result.push_back(out);
  }
  return success(std::move(result));
}

ShapeResult poolShape(const Shape &input, const std::vector<int64_t> &kernel,
                      const std::vector<int64_t> &stride,
                      const std::vector<int64_t> &padding,
                      const std::vector<int64_t> &dilation, bool ceilMode) {
  size_t numWindow = kernel.size();
  if (numWindow == 0)
    return fail("the kernel is empty, but pooling needs at least one window dim");
  if (input.size() < numWindow + 1)
    return fail("the input " + formatShape(input) + " has rank " +
                str(static_cast<int64_t>(input.size())) + ", but a " +
                str(static_cast<int64_t>(numWindow)) + "-d pooling window needs rank >= " +
                str(static_cast<int64_t>(numWindow + 1)) + " (at least one leading dim)");
  std::string attrError = checkWindowAttrs(stride, padding, dilation, numWindow, "window dim");
  if (!attrError.empty())
    return fail(attrError);
  size_t first = input.size() - numWindow;
  Shape result(input.begin(), input.begin() + first);
  for (size_t i = 0; i < numWindow; ++i) {
    std::string dimName = "window dim " + str(static_cast<int64_t>(i));
    if (kernel[i] < 1)
      return fail("the kernel size is " + str(kernel[i]) + " in " + dimName +
                  ", but must be positive");
    // PyTorch's rule (pool2d_shape_check): "pad should be at most half of kernel size".
    for (int side = 0; side < 2; ++side)
      if (padding[2 * i + side] > kernel[i] / 2)
        return fail("padding " + str(padding[2 * i + side]) + " on the " +
                    (side ? "high" : "low") + " side of " + dimName +
                    " is more than half the kernel size " + str(kernel[i]));
    int64_t out = windowOutputSize(input[first + i], kernel[i], stride[i], padding[2 * i],
                                   padding[2 * i + 1], dilation[i], ceilMode);
    if (out != kDynamic && out < 1)
      return fail(windowTooSmall(dimName, first + i, input[first + i], padding[2 * i],
                                 padding[2 * i + 1], kernel[i], dilation[i], out));
    result.push_back(out);
  }
  return success(std::move(result));
}

ShapeResult reshapeShape(const Shape &input, const Shape &target) {
  int64_t inferred = -1; // index of the -1 in target, if any
  bool targetDynamic = false;
  int64_t knownCount = 1; // product of the static target dims other than the -1
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t t = target[i];
    if (t == -1) {
      if (inferred >= 0)
        return fail("target dims " + str(inferred) + " and " + str(static_cast<int64_t>(i)) +
                    " of " + formatShape(target) + " are both -1, but at most one can be "
                    "inferred");
      inferred = static_cast<int64_t>(i);
    } else if (t == kDynamic) {
      targetDynamic = true;
    } else if (t < 0) {
      return fail("target dim " + str(static_cast<int64_t>(i)) + " is " + str(t) +
                  ", but sizes must be non-negative, -1 (inferred) or dynamic");
    } else {
      knownCount *= t;
    }
  }
  Shape result = target;
  int64_t count = numElements(input);
  if (count == kDynamic || targetDynamic) {
    // Nothing to check at compile time; an inferred dim is known only at runtime.
    if (inferred >= 0)
      result[inferred] = kDynamic;
    return success(std::move(result));
  }
  if (inferred < 0) {
    if (count != knownCount)
      return fail("the input " + formatShape(input) + " has " + str(count) +
                  " elements, but the target " + formatShape(target) + " has " +
                  str(knownCount));
    return success(std::move(result));
  }
  if (knownCount == 0) {
    if (count == 0)
      return fail("the -1 in target " + formatShape(target) + " is ambiguous: the input " +
                  formatShape(input) + " has 0 elements, so any size would fit");
    return fail("the input " + formatShape(input) + " has " + str(count) +
                " elements, which cannot fill the target " + formatShape(target) +
                " with 0 elements");
  }
  if (count % knownCount != 0)
    return fail("the input " + formatShape(input) + " has " + str(count) +
                " elements, which is not a multiple of " + str(knownCount) +
                ", the product of the other dims of the target " + formatShape(target));
  result[inferred] = count / knownCount;
  return success(std::move(result));
}

ShapeResult permuteShape(const Shape &input, const std::vector<int64_t> &perm) {
  int64_t rank = static_cast<int64_t>(input.size());
  if (static_cast<int64_t>(perm.size()) != rank)
    return fail("the permutation " + formatList(perm) + " has " + entries(perm.size()) +
                ", but the input has rank " + str(rank));
  std::vector<bool> seen(rank, false);
  Shape result(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t p = perm[i];
    if (p < 0 || p >= rank)
      return fail("entry " + str(i) + " of the permutation " + formatList(perm) + " is " +
                  str(p) + ", which is out of range [0, " + str(rank) + ")");
    if (seen[p])
      return fail("entry " + str(i) + " of the permutation " + formatList(perm) +
                  " repeats dim " + str(p));
    seen[p] = true;
    result[i] = input[p];
  }
  return success(std::move(result));
}

ShapeResult sliceShape(const Shape &input, const std::vector<int64_t> &start,
                       const std::vector<int64_t> &end, const std::vector<int64_t> &step) {
  int64_t rank = static_cast<int64_t>(input.size());
  const std::pair<const char *, const std::vector<int64_t> *> vectors[] = {
      {"start", &start}, {"end", &end}, {"step", &step}};
  for (const auto &[name, values] : vectors)
    if (static_cast<int64_t>(values->size()) != rank)
      return fail(std::string(name) + " has " + entries(values->size()) +
                  ", but the input has rank " + str(rank) + " (one entry per dim)");
  Shape result(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (step[d] < 1)
      return fail("step is " + str(step[d]) + " for dim " + str(d) + ", but must be >= 1");
    int64_t size = input[d];
    if (size == kDynamic) {
      result[d] = kDynamic;
      continue;
    }
    // Python semantics: negative indices count from the end, then clamp to [0, size].
    auto clampIndex = [size](int64_t index) {
      if (index < 0)
        index += size;
      return std::min(std::max<int64_t>(index, 0), size);
    };
    int64_t lo = clampIndex(start[d]), hi = clampIndex(end[d]);
    int64_t span = std::max<int64_t>(hi - lo, 0);
    // ceil(span / step) without overflow for huge steps.
    result[d] = span / step[d] + (span % step[d] != 0 ? 1 : 0);
  }
  return success(std::move(result));
}

ShapeResult concatShape(const std::vector<Shape> &inputs, int64_t dim) {
  if (inputs.empty())
    return fail("there are no inputs to concatenate");
  int64_t rank = static_cast<int64_t>(inputs[0].size());
  if (rank == 0)
    return fail("input 0 has rank 0, but concatenation needs rank >= 1");
  int64_t axis = normalizeDim(dim, rank);
  if (axis < 0)
    return fail(dimOutOfRange("the concatenation dim", dim, rank));
  Shape result = inputs[0];
  std::vector<size_t> source(rank, 0); // which input each result dim's size came from
  int64_t axisSize = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Shape &in = inputs[k];
    if (static_cast<int64_t>(in.size()) != rank)
      return fail("input " + str(static_cast<int64_t>(k)) + " " + formatShape(in) +
                  " has rank " + str(static_cast<int64_t>(in.size())) + ", but input 0 " +
                  formatShape(inputs[0]) + " has rank " + str(rank));
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis)
        continue;
      if (!areCompatibleDims(result[d], in[d]))
        return fail("dim " + str(d) + " is " + str(result[d]) + " in input " +
                    str(static_cast<int64_t>(source[d])) + " and " + str(in[d]) + " in input " +
                    str(static_cast<int64_t>(k)) +
                    ", but all dims except the concatenation dim " + str(axis) +
                    " must match");
      if (result[d] == kDynamic && in[d] != kDynamic) {
        result[d] = in[d];
        source[d] = k;
      }
    }
    if (axisSize != kDynamic)
      axisSize = in[axis] == kDynamic ? kDynamic : axisSize + in[axis];
  }
  result[axis] = axisSize;
  return success(std::move(result));
}

ShapeResult padShape(const Shape &input, const std::vector<int64_t> &padding) {
  size_t rank = input.size();
  if (padding.size() != 2 * rank)
    return fail("padding has " + entries(padding.size()) + ", but an input of rank " +
                str(static_cast<int64_t>(rank)) + " needs " +
                str(static_cast<int64_t>(2 * rank)) + " ([lo, hi] for each dim)");
  Shape result(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (input[d] == kDynamic) {
      result[d] = kDynamic;
      continue;
    }
    int64_t lo = padding[2 * d], hi = padding[2 * d + 1];
    int64_t size;
    if (__builtin_add_overflow(lo, input[d], &size) || __builtin_add_overflow(size, hi, &size))
      return fail("dim " + str(static_cast<int64_t>(d)) + " of size " + str(input[d]) +
                  " padded by " + str(lo) + " low and " + str(hi) +
                  " high overflows a 64-bit size");
    if (size < 0)
      return fail("dim " + str(static_cast<int64_t>(d)) + " of size " + str(input[d]) +
                  " padded by " + str(lo) + " low and " + str(hi) + " high has size " +
                  str(size) + ", which is negative");
    result[d] = size;
  }
  return success(std::move(result));
}

ShapeResult indexSelectShape(const Shape &input, int64_t dim, const Shape &index) {
  int64_t rank = static_cast<int64_t>(input.size());
  int64_t d = normalizeDim(dim, rank);
  if (d < 0)
    return fail(dimOutOfRange("dim", dim, rank));
  if (index.size() > 1)
    return fail("the index " + formatShape(index) + " has rank " +
                str(static_cast<int64_t>(index.size())) + ", but must have rank 1 (or 0)");
  Shape result = input;
  result[d] = index.empty() ? 1 : index[0];
  return success(std::move(result));
}

ShapeResult embeddingShape(const Shape &weight, const Shape &indices) {
  if (weight.size() != 2)
    return fail("the weight " + formatShape(weight) + " has rank " +
                str(static_cast<int64_t>(weight.size())) +
                ", but must have rank 2 ([num_embeddings, embedding_dim])");
  Shape result = indices;
  result.push_back(weight[1]);
  return success(std::move(result));
}

} // namespace thunder
