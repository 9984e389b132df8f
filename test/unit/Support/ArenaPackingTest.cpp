//===- ArenaPackingTest.cpp - The arena packer (thunder/Support/ArenaPacking.h) ===//
#include "thunder/Support/ArenaPacking.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

using thunder::arena::Interval;
using thunder::arena::Tensor;
using thunder::arena::alignUp;
using thunder::arena::lowerBound;
using thunder::arena::naiveSum;
using thunder::arena::pack;
using thunder::arena::packTensors;

namespace {

/// Checks every invariant of a packing and returns "" or what is wrong: every
/// offset aligned, no two intervals live at one step share a byte, every
/// interval inside the arena, the arena aligned and at least the lower bound.
std::string checkPacking(const std::vector<Interval> &intervals,
                         const std::vector<uint64_t> &offsets, uint64_t total,
                         uint64_t alignment) {
  if (offsets.size() != intervals.size())
    return "one offset per interval expected";
  for (size_t i = 0; i < intervals.size(); ++i) {
    if (alignment > 1 && offsets[i] % alignment)
      return "offset " + std::to_string(i) + " is not aligned";
    if (offsets[i] + alignUp(intervals[i].bytes, alignment) > total)
      return "interval " + std::to_string(i) + " ends past the arena";
  }
  for (size_t i = 0; i < intervals.size(); ++i)
    for (size_t j = i + 1; j < intervals.size(); ++j) {
      const Interval &a = intervals[i], &b = intervals[j];
      if (a.bytes == 0 || b.bytes == 0)
        continue;
      bool timeOverlap = a.first <= b.last && b.first <= a.last;
      bool byteOverlap = offsets[i] < offsets[j] + b.bytes &&
                         offsets[j] < offsets[i] + a.bytes;
      if (timeOverlap && byteOverlap)
        return "intervals " + std::to_string(i) + " and " + std::to_string(j) +
               " overlap in time and bytes";
    }
  if (alignment > 1 && total % alignment)
    return "arena size is not aligned";
  if (total < lowerBound(intervals, alignment))
    return "arena below the lower bound: the bound or the check is wrong";
  return "";
}

TEST(ArenaPacking, Empty) {
  uint64_t total = 123;
  EXPECT_TRUE(pack({}, 64, &total).empty());
  EXPECT_EQ(total, 0u);
  EXPECT_EQ(lowerBound({}, 64), 0u);
}

TEST(ArenaPacking, DisjointLifetimesShareBytes) {
  std::vector<Interval> intervals = {{256, 0, 1}, {256, 2, 3}, {256, 4, 5}};
  uint64_t total = 0;
  std::vector<uint64_t> offsets = pack(intervals, 64, &total);
  EXPECT_EQ(total, 256u);
  EXPECT_EQ(offsets, (std::vector<uint64_t>{0, 0, 0}));
}

TEST(ArenaPacking, OverlappingLifetimesGetDisjointBytes) {
  std::vector<Interval> intervals = {{128, 0, 5}, {64, 1, 3}, {192, 2, 4}};
  uint64_t total = 0;
  std::vector<uint64_t> offsets = pack(intervals, 64, &total);
  EXPECT_EQ(total, 384u);
  EXPECT_EQ(checkPacking(intervals, offsets, total, 64), "");
}

TEST(ArenaPacking, AdjacentStepsDoNotShare) {
  // The kernel at step 1 reads the first and writes the second: both are
  // live at step 1.
  std::vector<Interval> intervals = {{64, 0, 1}, {64, 1, 2}};
  uint64_t total = 0;
  std::vector<uint64_t> offsets = pack(intervals, 64, &total);
  EXPECT_EQ(total, 128u);
  EXPECT_NE(offsets[0], offsets[1]);
}

TEST(ArenaPacking, ChainIsOptimal) {
  // a -> b -> c -> d: a and c (and b and d) take turns; the optimum is the
  // largest adjacent pair.
  std::vector<Interval> intervals = {
      {1024, 0, 1}, {4096, 1, 2}, {1024, 2, 3}, {4096, 3, 4}};
  uint64_t total = 0;
  std::vector<uint64_t> offsets = pack(intervals, 64, &total);
  EXPECT_EQ(total, 5120u);
  EXPECT_EQ(total, lowerBound(intervals, 64));
  EXPECT_EQ(checkPacking(intervals, offsets, total, 64), "");
}

TEST(ArenaPacking, ResidualBlockIsOptimal) {
  // x lives across a block of three kernels and is added back at the end.
  std::vector<Interval> intervals = {
      {2048, 0, 4}, // x, read by the residual add at step 4
      {8192, 1, 2}, // up-projection
      {8192, 2, 3}, // activation
      {2048, 3, 4}, // down-projection
      {2048, 4, 5}, // x + down
  };
  uint64_t total = 0;
  std::vector<uint64_t> offsets = pack(intervals, 64, &total);
  EXPECT_EQ(total, lowerBound(intervals, 64));
  EXPECT_EQ(total, 2048u + 8192u + 8192u);
  EXPECT_EQ(checkPacking(intervals, offsets, total, 64), "");
}

TEST(ArenaPacking, GapIsReusedByBestFit) {
  // A long-lived tensor sits above a freed hole; a later small tensor takes
  // the hole rather than growing the arena.
  std::vector<Interval> intervals = {
      {1024, 0, 1},  // freed after step 1
      {1024, 0, 9},  // lives throughout
      {512, 2, 3},   // fits the freed hole
      {512, 2, 3},   // so does this one
  };
  uint64_t total = 0;
  std::vector<uint64_t> offsets = pack(intervals, 64, &total);
  EXPECT_EQ(total, 2048u);
  EXPECT_EQ(checkPacking(intervals, offsets, total, 64), "");
}

TEST(ArenaPacking, Alignment) {
  std::vector<Interval> intervals = {{1, 0, 2}, {65, 1, 3}, {100, 2, 4}, {7, 3, 3}};
  for (uint64_t alignment : {1u, 16u, 64u, 256u}) {
    uint64_t total = 0;
    std::vector<uint64_t> offsets = pack(intervals, alignment, &total);
    EXPECT_EQ(checkPacking(intervals, offsets, total, alignment), "")
        << "alignment " << alignment;
  }
  uint64_t total = 0;
  pack(intervals, 64, &total);
  // Live at step 2: 1, 65 and 100 bytes, each rounded up to 64.
  EXPECT_EQ(lowerBound(intervals, 64), 64u + 128u + 128u);
  EXPECT_EQ(total, lowerBound(intervals, 64));
  EXPECT_EQ(alignUp(0, 64), 0u);
  EXPECT_EQ(alignUp(64, 64), 64u);
  EXPECT_EQ(alignUp(65, 64), 128u);
  EXPECT_EQ(alignUp(10, 0), 10u);
  EXPECT_EQ(naiveSum(intervals, 64), 64u + 128u + 128u + 64u);
}

TEST(ArenaPacking, ZeroByteTensorsTakeNoSpace) {
  std::vector<Interval> intervals = {{0, 0, 5}, {128, 0, 5}, {0, 2, 3}};
  uint64_t total = 0;
  std::vector<uint64_t> offsets = pack(intervals, 64, &total);
  EXPECT_EQ(total, 128u);
  EXPECT_EQ(offsets[0], 0u);
  EXPECT_EQ(offsets[2], 0u);
}

TEST(ArenaPacking, ReversedIntervalIsNormalized) {
  std::vector<Interval> intervals = {{64, 3, 1}, {64, 2, 2}};
  uint64_t total = 0;
  std::vector<uint64_t> offsets = pack(intervals, 64, &total);
  EXPECT_EQ(total, 128u);
  EXPECT_NE(offsets[0], offsets[1]);
}

TEST(ArenaPacking, InPlaceChainsShareOneBuffer) {
  // b takes a's bytes, c takes b's: one buffer from step 0 to step 3. d lives
  // across it and needs a buffer of its own.
  std::vector<Tensor> tensors = {
      {256, 0, 1, -1}, {256, 1, 2, 0}, {256, 2, 3, 1}, {128, 0, 3, -1}};
  uint64_t total = 0, bound = 0;
  std::vector<uint64_t> offsets = packTensors(tensors, 64, &total, &bound);
  EXPECT_EQ(offsets[0], offsets[1]);
  EXPECT_EQ(offsets[1], offsets[2]);
  EXPECT_NE(offsets[0], offsets[3]);
  EXPECT_EQ(total, 384u);
  EXPECT_EQ(bound, 384u);
  // Without the reuse the chain needs two buffers at the hand-off steps.
  std::vector<Tensor> separate = tensors;
  for (Tensor &tensor : separate)
    tensor.reuses = -1;
  packTensors(separate, 64, &total, &bound);
  EXPECT_EQ(total, 640u);
}

TEST(ArenaPacking, InPlaceIgnoresLaterOrSelfReferences) {
  std::vector<Tensor> tensors = {{64, 0, 1, 1}, {64, 1, 2, 1}};
  uint64_t total = 0;
  std::vector<uint64_t> offsets = packTensors(tensors, 64, &total);
  EXPECT_EQ(total, 128u);
  EXPECT_NE(offsets[0], offsets[1]);
}

TEST(ArenaPacking, Deterministic) {
  std::mt19937_64 rng(7);
  std::vector<Interval> intervals;
  for (int i = 0; i < 200; ++i) {
    int64_t first = rng() % 100;
    intervals.push_back({(rng() % 5000) + 1, first, first + int64_t(rng() % 10)});
  }
  uint64_t totalA = 0, totalB = 0;
  EXPECT_EQ(pack(intervals, 64, &totalA), pack(intervals, 64, &totalB));
  EXPECT_EQ(totalA, totalB);
}

TEST(ArenaPacking, RandomSetsNeverOverlap) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    int n = 1 + rng() % 60;
    int steps = 1 + rng() % 40;
    uint64_t alignment = uint64_t(1) << (rng() % 8);
    std::vector<Interval> intervals;
    for (int i = 0; i < n; ++i) {
      int64_t first = rng() % steps;
      int64_t last = first + rng() % (steps - first);
      uint64_t bytes = rng() % 3 == 0 ? rng() % 100 : rng() % 100000;
      intervals.push_back({bytes, first, last});
    }
    uint64_t total = 0;
    std::vector<uint64_t> offsets = pack(intervals, alignment, &total);
    ASSERT_EQ(checkPacking(intervals, offsets, total, alignment), "")
        << "trial " << trial;
  }
}

/// A schedule shaped like a DNN's: a chain of kernels, each reading the
/// previous result, with residual connections that keep a tensor alive across
/// a block, wide intermediates (an MLP's 4x expansion, attention scores), and
/// occasional long-lived tensors (masks, positions) read all along.
std::vector<Interval> realisticSchedule(std::mt19937_64 &rng, int kernels) {
  std::vector<Interval> intervals;
  uint64_t hidden = uint64_t(64) << (rng() % 8); // 64 B .. 8 KiB rows
  uint64_t rows = 1 + rng() % 512;
  uint64_t base = hidden * rows;
  int64_t residualStart = 0;
  for (int step = 0; step < kernels; ++step) {
    uint64_t bytes = base;
    switch (rng() % 6) {
    case 0: bytes = base * 4; break;     // MLP expansion
    case 1: bytes = base * 3; break;     // fused QKV
    case 2: bytes = base / 4 + 1; break; // statistics, reductions
    default: break;
    }
    // Read by the next one to three kernels, mostly the next.
    int64_t last = step + 1 + (rng() % 4 == 0 ? rng() % 3 : 0);
    intervals.push_back({bytes, step, last});
    if (step - residualStart >= 6 + int64_t(rng() % 6)) {
      // The block's output, read by the next block's residual add.
      intervals.push_back({base, step, step + 6 + int64_t(rng() % 6)});
      residualStart = step;
    }
    if (rng() % 97 == 0) // a mask computed once and read all along
      intervals.push_back({base / 8 + 1, step, step + kernels / 2});
  }
  return intervals;
}

TEST(ArenaPacking, RealisticSchedulesCloseToTheLowerBound) {
  // Seen: mean 1.003, worst 1.11 over 100 schedules (the lower bound is not
  // always reachable; a random search over orders reaches it in the worst
  // case seen). The zoo's own schedules are measured by
  // tools/bench/memory_plan.py.
  std::mt19937_64 rng(2024);
  double worst = 1.0, sum = 0;
  int trials = 100, withinTenPercent = 0;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<Interval> intervals = realisticSchedule(rng, 50 + rng() % 500);
    uint64_t total = 0;
    std::vector<uint64_t> offsets = pack(intervals, 64, &total);
    ASSERT_EQ(checkPacking(intervals, offsets, total, 64), "") << "trial " << trial;
    double ratio = double(total) / double(lowerBound(intervals, 64));
    worst = std::max(worst, ratio);
    sum += ratio;
    withinTenPercent += ratio <= 1.10;
    EXPECT_LE(ratio, 1.15) << "trial " << trial << ": " << intervals.size()
                           << " tensors";
  }
  std::printf("realistic schedules: arena / lower bound mean %.4f, worst %.4f, "
              "%d of %d within 1.10\n",
              sum / trials, worst, withinTenPercent, trials);
  EXPECT_LE(sum / trials, 1.01);
  EXPECT_GE(withinTenPercent, trials - 2);
}

TEST(ArenaPacking, UnstructuredRandomSetsStayClose) {
  // Random lifetimes and sizes over five orders of magnitude: harder than a
  // DNN schedule (the optimum itself is often above the bound). Recorded,
  // with a loose ceiling.
  std::mt19937_64 rng(99);
  double worst = 1.0, sum = 0;
  int trials = 60;
  for (int trial = 0; trial < trials; ++trial) {
    int steps = 100 + rng() % 200;
    std::vector<Interval> intervals;
    for (int i = 0; i < 300; ++i) {
      int64_t first = rng() % steps;
      int64_t last = std::min<int64_t>(steps - 1, first + rng() % 20);
      uint64_t bytes = uint64_t(64) << (rng() % 12);
      intervals.push_back({bytes * (1 + rng() % 3), first, last});
    }
    uint64_t total = 0;
    std::vector<uint64_t> offsets = pack(intervals, 64, &total);
    ASSERT_EQ(checkPacking(intervals, offsets, total, 64), "") << "trial " << trial;
    double ratio = double(total) / double(lowerBound(intervals, 64));
    worst = std::max(worst, ratio);
    sum += ratio;
    EXPECT_LE(ratio, 1.5) << "trial " << trial;
  }
  std::printf("unstructured random sets: arena / lower bound mean %.4f, worst %.4f\n",
              sum / trials, worst);
}

TEST(ArenaPacking, ThousandsOfTensorsPackQuickly) {
  // A large model's plan (GPT-2 124M unfused is about 3,000 tensors) must not
  // make compiles, or the first run of a dynamic-shape model, slow; this
  // runs in well under a second.
  std::mt19937_64 rng(5);
  std::vector<Interval> intervals = realisticSchedule(rng, 4000);
  uint64_t total = 0;
  std::vector<uint64_t> offsets = pack(intervals, 64, &total);
  EXPECT_EQ(offsets.size(), intervals.size());
  EXPECT_LE(double(total), 1.10 * double(lowerBound(intervals, 64)));
}

} // namespace
