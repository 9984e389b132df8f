//===- ArenaPacking.h - Place tensors with lifetimes in one arena -*- C++ -*-===//
//
// Offsets for a set of tensors, each with a size and a live interval of
// schedule steps, in one buffer (the arena), such that no two tensors live at
// the same step share a byte. Header-only and dependency-free (C++17, no LLVM
// or MLIR): the compiler packs static shapes with it at compile time
// (thunder-plan-memory), and a model with dynamic shapes calls the same code
// at run time, once its sizes are known, so both get the same plan.
//
// The problem is dynamic storage allocation (NP-hard); the packer is greedy:
// tensors are taken in some order and each is put in the tightest gap between
// the tensors already placed that overlap it in time (best fit), or above
// them. Several orders are tried (largest first, largest area first, busiest
// step first), then the largest-first order is repaired a few rounds by
// moving up the tensors that ended above the lower bound (the most bytes live
// at any one step, which no packing can beat). The tightest packing wins; on
// DNN schedules it is within a few percent of the bound.
//
// In a generated library, packTensors is compiled once, in a unit of its own
// (kernels/thunder_arena_packing.cpp, which defines THUNDER_ARENA_ENTRY empty
// for an out-of-line definition) that is cached like a kernel; the host unit
// defines THUNDER_ARENA_APART and sees only its declaration. Compiling the
// packer in every dynamic-shape model's host unit took 1.3 s at -O1. The
// namespace is thunder_arena (thunder::arena names it), which a
// multi-architecture library renames per instruction set like the support
// headers' namespaces, so that no variant's code is merged into another's.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_SUPPORT_ARENAPACKING_H
#define THUNDER_SUPPORT_ARENAPACKING_H

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#ifndef THUNDER_ARENA_ENTRY
#define THUNDER_ARENA_ENTRY inline
#endif

namespace thunder_arena {

/// A tensor to place: `bytes` long, live from step `first` to step `last`
/// (both inclusive; the kernel at `first` writes it, the kernel at `last` is
/// its last reader). Two tensors whose intervals share a step never share a
/// byte.
struct Interval {
  uint64_t bytes = 0;
  int64_t first = 0, last = 0;
};

/// A tensor that may take the bytes of an earlier tensor (in-place reuse):
/// `reuses` is the index of that tensor in the same list, or -1. Tensors
/// chained this way form one buffer, live from the first member's `first` to
/// the last member's `last`, as long as the largest member.
struct Tensor {
  uint64_t bytes = 0;
  int64_t first = 0, last = 0;
  int64_t reuses = -1;
};

#ifdef THUNDER_ARENA_APART
/// Defined in the library's kernels/thunder_arena_packing.cpp (below when
/// not apart).
std::vector<uint64_t> packTensors(const std::vector<Tensor> &tensors, uint64_t alignment,
                                  uint64_t *total, uint64_t *bound = nullptr);
#else
/// `value` rounded up to a multiple of `alignment` (0 and 1: unchanged).
inline uint64_t alignUp(uint64_t value, uint64_t alignment) {
  if (alignment <= 1)
    return value;
  uint64_t rest = value % alignment;
  return rest ? value + (alignment - rest) : value;
}

namespace detail {

/// Intervals as packed: first <= last, bytes rounded up to the alignment.
inline std::vector<Interval> normalize(const std::vector<Interval> &intervals,
                                       uint64_t alignment) {
  std::vector<Interval> result(intervals);
  for (Interval &interval : result) {
    if (interval.first > interval.last)
      std::swap(interval.first, interval.last);
    interval.bytes = alignUp(interval.bytes, alignment);
  }
  return result;
}

/// For each interval, the intervals that share a step with it (both ways),
/// found with a sweep over the intervals sorted by first step.
inline std::vector<std::vector<size_t>>
overlapGraph(const std::vector<Interval> &intervals) {
  size_t n = intervals.size();
  std::vector<size_t> byFirst(n);
  std::iota(byFirst.begin(), byFirst.end(), size_t{0});
  std::stable_sort(byFirst.begin(), byFirst.end(), [&](size_t a, size_t b) {
    return intervals[a].first < intervals[b].first;
  });
  std::vector<std::vector<size_t>> neighbors(n);
  for (size_t p = 0; p < n; ++p) {
    size_t i = byFirst[p];
    if (intervals[i].bytes == 0)
      continue;
    for (size_t q = p + 1; q < n; ++q) {
      size_t j = byFirst[q];
      if (intervals[j].first > intervals[i].last)
        break;
      if (intervals[j].bytes == 0)
        continue;
      neighbors[i].push_back(j);
      neighbors[j].push_back(i);
    }
  }
  return neighbors;
}

/// Places `intervals` one by one in `order`: each goes into the smallest gap
/// (between the already placed intervals that overlap it in time) that holds
/// it, or above all of them. Returns the offsets; `*total` is the arena size.
inline std::vector<uint64_t>
packInOrder(const std::vector<Interval> &intervals,
            const std::vector<std::vector<size_t>> &neighbors,
            const std::vector<size_t> &order, uint64_t *total) {
  std::vector<uint64_t> offsets(intervals.size(), 0);
  std::vector<char> placed(intervals.size(), 0);
  std::vector<std::pair<uint64_t, uint64_t>> busy; // [offset, end) of neighbors
  uint64_t arena = 0;
  for (size_t i : order) {
    const Interval &interval = intervals[i];
    if (interval.bytes == 0)
      continue; // takes no bytes: offset 0, in nobody's way
    busy.clear();
    for (size_t j : neighbors[i])
      if (placed[j])
        busy.emplace_back(offsets[j], offsets[j] + intervals[j].bytes);
    std::sort(busy.begin(), busy.end());
    uint64_t bestOffset = 0, bestGap = UINT64_MAX, end = 0;
    bool found = false;
    for (const auto &[begin, stop] : busy) {
      if (begin > end) {
        uint64_t gap = begin - end;
        if (gap >= interval.bytes && gap < bestGap) {
          bestGap = gap;
          bestOffset = end;
          found = true;
        }
      }
      end = std::max(end, stop);
    }
    offsets[i] = found ? bestOffset : end;
    arena = std::max(arena, offsets[i] + interval.bytes);
    placed[i] = 1;
  }
  *total = arena;
  return offsets;
}

/// The bytes live at each step from `first` of the earliest interval on, as
/// (step, bytes) at every step where the sum changes.
inline std::vector<std::pair<int64_t, uint64_t>>
liveProfile(const std::vector<Interval> &intervals) {
  std::vector<std::pair<int64_t, int64_t>> events; // (step, +bytes / -bytes)
  events.reserve(intervals.size() * 2);
  for (const Interval &interval : intervals) {
    if (interval.bytes == 0)
      continue;
    events.emplace_back(interval.first, static_cast<int64_t>(interval.bytes));
    events.emplace_back(interval.last + 1, -static_cast<int64_t>(interval.bytes));
  }
  std::sort(events.begin(), events.end());
  std::vector<std::pair<int64_t, uint64_t>> profile;
  int64_t live = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    live += events[i].second;
    if (i + 1 == events.size() || events[i + 1].first != events[i].first)
      profile.emplace_back(events[i].first, static_cast<uint64_t>(live));
  }
  return profile;
}

/// Greedy by breadth: the busiest step's tensors first (largest first),
/// then the next busiest step's remaining ones, and so on.
inline std::vector<size_t> breadthOrder(const std::vector<Interval> &sized) {
  size_t n = sized.size();
  std::vector<std::pair<int64_t, uint64_t>> profile = liveProfile(sized);
  std::vector<size_t> steps(profile.size());
  std::iota(steps.begin(), steps.end(), size_t{0});
  std::stable_sort(steps.begin(), steps.end(), [&](size_t a, size_t b) {
    return profile[a].second > profile[b].second;
  });
  // Tensors sorted by first step, to find those live at a step quickly.
  std::vector<size_t> byFirst(n);
  std::iota(byFirst.begin(), byFirst.end(), size_t{0});
  std::stable_sort(byFirst.begin(), byFirst.end(), [&](size_t a, size_t b) {
    return sized[a].first < sized[b].first;
  });
  std::vector<char> taken(n, 0);
  std::vector<size_t> order, live;
  order.reserve(n);
  for (size_t s : steps) {
    // The profile lists the steps where the sum changes; the tensors live
    // there are live over the whole stretch up to the next change.
    int64_t step = profile[s].first;
    live.clear();
    for (size_t i : byFirst) {
      if (sized[i].first > step)
        break;
      if (!taken[i] && sized[i].last >= step)
        live.push_back(i);
    }
    std::stable_sort(live.begin(), live.end(), [&](size_t a, size_t b) {
      return sized[a].bytes > sized[b].bytes;
    });
    for (size_t i : live) {
      taken[i] = 1;
      order.push_back(i);
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (!taken[i])
      order.push_back(i); // zero-byte tensors
  return order;
}

} // namespace detail

/// The most bytes live at any one step, each interval's size rounded up to
/// `alignment`: no packing of these intervals can be smaller.
inline uint64_t lowerBound(const std::vector<Interval> &intervals,
                           uint64_t alignment) {
  uint64_t most = 0;
  for (const auto &[step, bytes] :
       detail::liveProfile(detail::normalize(intervals, alignment)))
    most = std::max(most, bytes);
  return most;
}

/// The sum of the sizes rounded up to `alignment`: every tensor its own
/// buffer.
inline uint64_t naiveSum(const std::vector<Interval> &intervals,
                         uint64_t alignment) {
  uint64_t sum = 0;
  for (const Interval &interval : intervals)
    sum += alignUp(interval.bytes, alignment);
  return sum;
}

/// Offsets (multiples of `alignment`) for `intervals` in one arena; `*total`
/// (when not null) is the arena's size in bytes, itself a multiple of
/// `alignment`. Deterministic: the same intervals give the same offsets.
/// Zero-byte intervals get offset 0.
///
/// Three greedy orders are tried (largest first, largest area first, busiest
/// step first); then, for up to `rounds` rounds, the tensors that ended above
/// the lower bound in the last packing move up the largest-first order and
/// it is packed again ("squeaky wheel"), and for up to `rounds` more, random
/// orders (seeded: the result is deterministic). The best packing wins; the
/// search stops as soon as one meets the lower bound. Each round costs about
/// O(n log n + overlapping pairs): fast for the thousands of tensors of a
/// large model; a caller in a hurry (a first run with new dynamic sizes)
/// may pass fewer rounds.
inline std::vector<uint64_t> pack(const std::vector<Interval> &intervals,
                                  uint64_t alignment, uint64_t *total,
                                  int rounds = 32) {
  std::vector<Interval> sized = detail::normalize(intervals, alignment);
  size_t n = sized.size();
  if (total)
    *total = 0;
  if (n == 0)
    return {};
  std::vector<std::vector<size_t>> neighbors = detail::overlapGraph(sized);
  uint64_t bound = lowerBound(sized, 1);
  auto length = [&](size_t i) { return sized[i].last - sized[i].first; };

  std::vector<uint64_t> best;
  uint64_t bestTotal = UINT64_MAX;
  auto attempt = [&](const std::vector<size_t> &order) {
    uint64_t arena = 0;
    std::vector<uint64_t> offsets =
        detail::packInOrder(sized, neighbors, order, &arena);
    if (arena < bestTotal) {
      bestTotal = arena;
      best = offsets;
    }
    return offsets;
  };

  std::vector<size_t> base(n);
  std::iota(base.begin(), base.end(), size_t{0});
  // Largest first, then longest-lived first (greedy by size).
  std::vector<size_t> bySize = base;
  std::stable_sort(bySize.begin(), bySize.end(), [&](size_t a, size_t b) {
    if (sized[a].bytes != sized[b].bytes)
      return sized[a].bytes > sized[b].bytes;
    if (length(a) != length(b))
      return length(a) > length(b);
    return sized[a].first < sized[b].first;
  });
  std::vector<uint64_t> sizeOffsets = attempt(bySize);
  if (bestTotal > bound) {
    // Largest area (bytes x steps) first: long-lived tensors settle at the
    // bottom, short ones fill the gaps above them.
    std::vector<size_t> byArea = base;
    std::stable_sort(byArea.begin(), byArea.end(), [&](size_t a, size_t b) {
      long double areaA = static_cast<long double>(sized[a].bytes) * (length(a) + 1);
      long double areaB = static_cast<long double>(sized[b].bytes) * (length(b) + 1);
      if (areaA != areaB)
        return areaA > areaB;
      return sized[a].bytes > sized[b].bytes;
    });
    attempt(byArea);
  }
  if (bestTotal > bound)
    attempt(detail::breadthOrder(sized));

  // Squeaky wheel: whoever ended above the bound gets placed earlier, with a
  // little (seeded, so deterministic) noise that lets the search leave a
  // cycle.
  std::vector<size_t> order = bySize;
  std::vector<uint64_t> offsets = sizeOffsets;
  std::vector<double> priority(n);
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  auto noise = [&seed] { // xorshift64*, in [0, 1)
    seed ^= seed >> 12;
    seed ^= seed << 25;
    seed ^= seed >> 27;
    return static_cast<double>((seed * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
  };
  for (int round = 0; round < rounds && bestTotal > bound; ++round) {
    for (size_t p = 0; p < n; ++p)
      priority[order[p]] = static_cast<double>(n - p) + 0.05 * noise() * n;
    for (size_t i = 0; i < n; ++i)
      if (offsets[i] + sized[i].bytes > bound)
        priority[i] += 0.05 * static_cast<double>(n);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return priority[a] > priority[b];
    });
    offsets = attempt(order);
  }
  // Still above the bound: random orders (seeded) for as many rounds again.
  for (int round = 0; round < rounds && bestTotal > bound; ++round) {
    for (size_t p = n - 1; p > 0; --p)
      std::swap(order[p], order[static_cast<size_t>(noise() * (p + 1))]);
    attempt(order);
  }
  if (total)
    *total = bestTotal;
  return best;
}

/// The buffers that `tensors` form when in-place chains are merged: for each
/// tensor the index of its buffer, and the buffers as intervals. A `reuses`
/// that does not name an earlier tensor is ignored.
inline std::vector<Interval> buffersOf(const std::vector<Tensor> &tensors,
                                       std::vector<size_t> *bufferOf) {
  std::vector<Interval> buffers;
  bufferOf->assign(tensors.size(), 0);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor &tensor = tensors[i];
    int64_t first = std::min(tensor.first, tensor.last);
    int64_t last = std::max(tensor.first, tensor.last);
    if (tensor.reuses >= 0 && static_cast<size_t>(tensor.reuses) < i) {
      size_t b = (*bufferOf)[tensor.reuses];
      (*bufferOf)[i] = b;
      Interval &buffer = buffers[b];
      buffer.bytes = std::max(buffer.bytes, tensor.bytes);
      buffer.first = std::min(buffer.first, first);
      buffer.last = std::max(buffer.last, last);
      continue;
    }
    (*bufferOf)[i] = buffers.size();
    buffers.push_back(Interval{tensor.bytes, first, last});
  }
  return buffers;
}

/// Offsets for tensors with in-place reuse: each chain of `reuses` shares one
/// buffer (and so one offset), the buffers are packed with pack(). `*total`
/// is the arena size and `*bound` (when not null) the lower bound of the
/// buffers.
THUNDER_ARENA_ENTRY std::vector<uint64_t> packTensors(const std::vector<Tensor> &tensors,
                                                      uint64_t alignment, uint64_t *total,
                                                      uint64_t *bound = nullptr) {
  std::vector<size_t> bufferOf;
  std::vector<Interval> buffers = buffersOf(tensors, &bufferOf);
  std::vector<uint64_t> bufferOffsets = pack(buffers, alignment, total);
  if (bound)
    *bound = lowerBound(buffers, alignment);
  std::vector<uint64_t> offsets(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i)
    offsets[i] = bufferOffsets[bufferOf[i]];
  return offsets;
}

#endif // THUNDER_ARENA_APART

} // namespace thunder_arena

namespace thunder {
namespace arena = ::thunder_arena;
} // namespace thunder

#endif // THUNDER_SUPPORT_ARENAPACKING_H
