//===- GpuDialectTest.cpp - Spelling host-program text for a GPU dialect --===//
#include "thunder/Target/GPU/GpuDialect.h"

#include <gtest/gtest.h>

using namespace thunder::gpu;

namespace {

/// A dialect with made-up names, to see each key land.
GpuDialect testDialect() {
  GpuDialect d{};
  d.runtime = GpuRuntime{"xStream_t", "xError_t", "xSuccess", "xMalloc", "xMemcpy",
                         "xMemcpyAsync", "xH2D", "xD2D", "xStreamCreate",
                         "xStreamCreateWithFlags", "xNonBlocking", "xStreamSynchronize",
                         "xStreamDestroy", "xDeviceSynchronize", "xGetLastError",
                         "xEventRecord", "xStreamWaitEvent", "X graph"};
  d.libraries.gemm = "xBLAS";
  d.libraries.conv = "xDNN";
  return d;
}

TEST(GpuDialect, SpellsRuntimeNames) {
  GpuDialect d = testDialect();
  EXPECT_EQ(d.spell("@error_t@ e = @malloc@(&p, n);"), "xError_t e = xMalloc(&p, n);");
  EXPECT_EQ(d.spell("@memcpyAsync@(a, b, n, @deviceToDevice@, s)"),
            "xMemcpyAsync(a, b, n, xD2D, s)");
  EXPECT_EQ(d.spell("/// @graph@s need @gemm_lib@ and @conv_lib@"),
            "/// X graphs need xBLAS and xDNN");
}

TEST(GpuDialect, LeavesOtherTextAlone) {
  GpuDialect d = testDialect();
  EXPECT_EQ(d.spell(""), "");
  EXPECT_EQ(d.spell("no keys here"), "no keys here");
  // A lone @ (no closing one) is text.
  EXPECT_EQ(d.spell("a @ b"), "a @ b");
}

} // namespace
