//===- CPUBackendTest.cpp - The CPU backend's compile steps ---------------===//
//
// The kernel cache's keys of CPU units (CPUBackend::compileUnits): a unit
// compiled for -march=native is keyed by the CPU it was compiled on, so a
// cache directory shared between machines never hands one another's code.
//
//===----------------------------------------------------------------------===//
#include "thunder/Target/CPU/CPUBackend.h"

#include "llvm/TargetParser/Host.h"

#include <gtest/gtest.h>

using namespace thunder;

namespace {

std::vector<UnitCompile> units(const std::string &cpu) {
  EmittedSources sources;
  sources.files.push_back({"thunder_cpu_base.h", "// a support header\n"});
  sources.files.push_back({"kernels/thunder_kernel_0.cpp", "int thunder_kernel_0;\n"});
  sources.compileUnits = {"kernels/thunder_kernel_0.cpp"};
  TargetOptions options;
  options.cpu = cpu;
  return CPUBackend().compileUnits(sources, "/nonexistent/build", options);
}

TEST(CPUBackendUnits, NativeKeysNameTheHostCpu) {
  std::vector<UnitCompile> native = units("native");
  ASSERT_EQ(native.size(), 1u);
  std::string host = "native=" + llvm::sys::getHostCPUName().str() + "/";
  EXPECT_NE(native[0].key.find(host), std::string::npos) << native[0].key;

  // A named instruction set means the same on every machine.
  std::vector<UnitCompile> v3 = units("x86-64-v3");
  ASSERT_EQ(v3.size(), 1u);
  EXPECT_EQ(v3[0].key.find("native="), std::string::npos) << v3[0].key;
  EXPECT_NE(v3[0].key, native[0].key);
}

} // namespace
